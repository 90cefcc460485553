# mk/engine.mk — the engine inside the kernel: stories260K reference
# continuations through `infer` in QEMU (tests/qemu/test_infer.py), on both
# arches.
.PHONY: test-qemu-infer-$(ARCH)
test-qemu-infer-$(ARCH):
	@$(MAKE) --no-print-directory $(ESP_IMG)
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-infer-$(ARCH) python3 tests/qemu/test_infer.py --arch $(ARCH) --esp $(ESP_IMG)

ifneq ($(ARCH),x86_64)
.PHONY: test-qemu-infer-x86_64
test-qemu-infer-x86_64:
	@$(MAKE) --no-print-directory ARCH=x86_64 test-qemu-infer-x86_64
endif
test-qemu-infer-x86_64: ## infer in the kernel (QEMU x86_64): stories260K reference continuations

ifneq ($(ARCH),aarch64)
.PHONY: test-qemu-infer-aarch64
test-qemu-infer-aarch64:
	@$(MAKE) --no-print-directory ARCH=aarch64 test-qemu-infer-aarch64
endif
test-qemu-infer-aarch64: ## infer in the kernel (QEMU aarch64): stories260K reference continuations

# The same references through the real llmctl binary (main.c, the linked tables).
.PHONY: test-llmctl-infer
test-llmctl-infer: $(B)/host/llmctl $(B)/host/mkmodel ## llmctl -c 'load 0' -c 'infer ... --temp 0 --ids': stories260K references, packed = plain = streamed
	@mkdir -p $(RESULTS)
	@tests/stage.sh llmctl-infer tests/host/infer.sh $(B)/host/llmctl

# What the host sees of the disk (issue 27): QEMU's own trace of the
# virtio-blk reads of two prompts, streamed plain and sealed (x86_64).
.PHONY: test-qemu-reads
test-qemu-reads: $(B)/host/seal ## QEMU: the disk's read requests (QEMU's trace) are the same for two prompts, streamed plain and sealed
	@$(MAKE) --no-print-directory ARCH=x86_64 $(B)/x86_64/esp.img
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-reads python3 tests/qemu/test_reads.py --arch x86_64 \
		--esp $(B)/x86_64/esp.img --seal $(B)/host/seal --workdir $(B)/qemu-reads
