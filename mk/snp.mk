# mk/snp.mk — SEV-SNP guest: the guest message layer in the kernel build,
# and the host stage that drives `seal --to-guest` / `unseal --guest`
# against the firmware simulator (tests/snp/guestkey.sh).

# drivers/snp_guest_msg.c is portable and uses BearSSL (its AES-GCM); the
# kernel's driver flags have no BearSSL include path, so it gets one here.
$(EFI_OBJ_DIR)/drivers/snp_guest_msg.o: EFI_KERNEL_CFLAGS += -I$(BEARSSL_DIR)/inc

.PHONY: test-snp
test-snp: $(B)/host/llmctl $(B)/host/seal $(B)/host/mkmodel ## SEV-SNP simulator: seal --to-guest, unseal --guest across "reboots", refusals
	@mkdir -p $(RESULTS)
	@tests/stage.sh snp tests/snp/guestkey.sh $(B)/host/llmctl $(B)/host/seal $(B)/host/mkmodel
$(EFI_OBJ_DIR)/drivers/sev_snp.o: EFI_KERNEL_CFLAGS += -I$(BEARSSL_DIR)/inc
