# mk/fuzz_drivers.mk — libFuzzer over the drivers' parsers of host-supplied
# bytes (issue 28, tests/fuzz/fuzz_drivers.c): ACPI tables, PCI capability
# lists and virtio structures against tests/unit/hostile.h's device model,
# TPM responses, the CRB register page, the SNP certificate table and
# guest message responses, the hypervisor's answers to the #VC handler
# (tests/fuzz/fuzz_ghcb.c), a FIFO TPM's registers against tests/unit/
# tis_model.h (tests/fuzz/fuzz_tis.c), the DSDT's TPM device. Rules for
# $(B)/fuzz/obj in mk/fuzz.mk; seeds: each mode's selector over zeros
# (modes 1, 3, 6, 7 and 8 XOR onto well-formed answers, so zeros are the
# good ones).
FUZZ_DRIVERS_TIME ?= 10
FUZZ_DRIVERS_SRC := tests/fuzz/fuzz_drivers.c tests/fuzz/fuzz_ghcb.c tests/fuzz/fuzz_tis.c \
	kernel/x86_64/insn.c \
	tests/unit/hostile.c drivers/tpm2.c drivers/tpm2_rc.c drivers/tpm2_public.c \
	drivers/snp_guest_msg.c kernel/fmt.c $(PLAT_HOST_SRC) $(PLAT_COMMON_SRC)
$(B)/fuzz/fuzz_drivers: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_DRIVERS_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lbearssl -lpthread

FUZZ_DRIVERS_SEEDS := $(B)/fuzz/corpus/drivers/.seeded
$(FUZZ_DRIVERS_SEEDS): mk/fuzz_drivers.mk
	@mkdir -p $(@D)
	@for m in 0 1 2 3 4 5 6 7 8; do { printf "\\00$$m"; head -c 300 /dev/zero; } > $(@D)/seed-$$m; done
	@# mode 7: a 12-byte command, room for 64, a 40-byte response, 10 ms a read
	@{ printf '\007\014\000\100\000\050\002'; head -c 300 /dev/zero; } > $(@D)/seed-7
	@# ... at 263 ms a read, TPM_ACCESS never active (each read XOR 0x20, a space)
	@printf '\007\014\000\100\000\050\377\000\000\000\000\000            ' > $(@D)/seed-7-nogrant
	@{ printf '\000\000'; head -c 275 /dev/zero; } > $(@D)/seed-fadt
	@touch $@

.PHONY: test-fuzz-drivers
test-fuzz-drivers: $(B)/fuzz/fuzz_drivers $(FUZZ_DRIVERS_SEEDS) ## fuzz the drivers' parsers of host bytes (ACPI, PCI/virtio, TPM, CRB, TIS, SNP) for FUZZ_DRIVERS_TIME seconds (10)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-drivers tests/fuzz/run.sh $(B)/fuzz/fuzz_drivers $(B)/fuzz/corpus/drivers $(FUZZ_DRIVERS_TIME)
