# mk/cc.mk — confidential guests (SEV-ES/SNP, TDX): tests/unit/test_trap_entry.c
# assembles kernel/x86_64/entry.S with `.include`, which the compiler's
# dependency files do not see; say it here so an edit to entry.S rebuilds it.
$(B)/host/obj/tests/unit/test_trap_entry.o $(B)/host-asan/obj/tests/unit/test_trap_entry.o: \
	kernel/x86_64/entry.S

# test-qemu-bounce: a second x86_64 image built with LLMK_TEST_DMA_BOUNCE
# takes the confidential guests' virtio-blk bounce path on any machine
# (drivers/cc_pages.c), booted in QEMU and checked against the host
# (tests/qemu/test_bounce.py). Its own build tree, sharing build/deps.
BOUNCE_B := $(B)/bounce
.PHONY: test-qemu-bounce
test-qemu-bounce: ## QEMU x86_64: virtio-blk through the confidential guests' bounce buffers (forced)
	@mkdir -p $(BOUNCE_B) && ln -sfn ../deps $(BOUNCE_B)/deps
	@$(MAKE) --no-print-directory B=$(BOUNCE_B) ARCH=x86_64 \
		'EFI_ARCH_CFLAGS_x86_64=$(EFI_ARCH_CFLAGS_x86_64) -DLLMK_TEST_DMA_BOUNCE' \
		$(BOUNCE_B)/x86_64/esp.img
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-bounce python3 tests/qemu/test_bounce.py --esp $(BOUNCE_B)/x86_64/esp.img \
		--workdir $(BOUNCE_B)/qemu
