# mk/tpm.mk — the vTPM: the kernel's TPM objects that need BearSSL's headers,
# swtpm for `make run TPM=1`, and the QEMU attestation test stage.
#
# tools/tpm.sh manufactures a software TPM (swtpm_setup, EK certificates from
# its own local CA) in a directory and runs swtpm for QEMU (-tpmdev emulator
# on its control socket, -device tpm-crb) or for the host build (LLMK_VTPM).

# drivers/ is compiled with the kernel's flags; these two hash (SHA-256).
$(EFI_OBJ_DIR)/drivers/tpm2_attest.o $(EFI_OBJ_DIR)/drivers/tcg_log.o: \
	EFI_KERNEL_CFLAGS += -I$(BEARSSL_DIR)/inc

# `make run TPM=1`: the same boot with a vTPM whose state lives in build/tpm
# (manufactured on first use; tests/qemu/qemu.py starts swtpm before QEMU and
# stops it after).
TPM ?=
ifeq ($(TPM),1)
QEMU_PY += --tpm $(B)/tpm
endif

# The kernel's attestation under QEMU (x86_64 + swtpm over CRB): evidence checked in
# Python and by tpm2_checkquote, load's PCR 23, credential activation, bad
# inputs; with the verifier (tools/verifier.c) also its checks, the key
# release to the guest and the refusals.
.PHONY: test-qemu-attest
test-qemu-attest: ## QEMU with a vTPM: attest evidence replays and passes tpm2_checkquote, load extends PCR 23, activation, bad inputs
	@$(MAKE) --no-print-directory ARCH=x86_64 $(B)/x86_64/esp.img $(B)/host/seal \
		$(if $(wildcard tools/verifier.c),$(B)/host/verifier $(B)/host/mkevidence)
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-attest python3 tests/qemu/test_attest.py --arch x86_64 \
		--esp $(B)/x86_64/esp.img --workdir $(B)/qemu-attest

# The same on aarch64 (AAVMF, TCG): swtpm as tpm-tis-device, which the
# kernel finds through the DSDT and drives over FIFO (drivers/tpm_tis.c);
# every check as on x86_64, the boot line naming FIFO (TIS) at 0xc000000.
.PHONY: test-qemu-attest-aarch64
test-qemu-attest-aarch64: ## QEMU aarch64 with a vTPM (TIS): the same attestation checks as test-qemu-attest
	@$(MAKE) --no-print-directory ARCH=aarch64 $(B)/aarch64/esp.img $(B)/host/seal \
		$(if $(wildcard tools/verifier.c),$(B)/host/verifier $(B)/host/mkevidence)
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-attest-aarch64 timeout 900 python3 tests/qemu/test_attest.py \
		--arch aarch64 --esp $(B)/aarch64/esp.img --workdir $(B)/qemu-attest-aarch64
