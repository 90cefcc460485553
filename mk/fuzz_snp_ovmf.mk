# mk/fuzz_snp_ovmf.mk — libFuzzer over the host's OVMF reader and SEV-SNP
# launch digest (tools/verify/snp_ovmf.c, snp_measure.c): damage XORed onto
# the tables of tests/unit/snp_syn.h's synthetic image
# (tests/fuzz/fuzz_snp_ovmf.c). Rules for $(B)/fuzz/obj in mk/fuzz.mk; the
# seed is zeros (the undamaged image).
FUZZ_SNP_OVMF_TIME ?= 10
FUZZ_SNP_OVMF_SRC := tools/verify/snp_ovmf.c tools/verify/snp_measure.c \
	tests/fuzz/fuzz_snp_ovmf.c
$(B)/fuzz/fuzz_snp_ovmf: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_SNP_OVMF_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lbearssl

FUZZ_SNP_OVMF_SEEDS := $(B)/fuzz/corpus/snp_ovmf/.seeded
$(FUZZ_SNP_OVMF_SEEDS):
	@mkdir -p $(@D)
	@head -c 4096 /dev/zero > $(@D)/seed-zeros
	@touch $@

.PHONY: test-fuzz-snp-ovmf
test-fuzz-snp-ovmf: $(B)/fuzz/fuzz_snp_ovmf $(FUZZ_SNP_OVMF_SEEDS) ## fuzz the OVMF footer table, SEV metadata and SNP launch digest for FUZZ_SNP_OVMF_TIME seconds (10)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-snp-ovmf tests/fuzz/run.sh $(B)/fuzz/fuzz_snp_ovmf $(B)/fuzz/corpus/snp_ovmf $(FUZZ_SNP_OVMF_TIME)
