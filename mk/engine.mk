# mk/engine.mk — the engine inside the kernel: stories260K reference
# continuations through `infer` in QEMU (tests/qemu/test_infer.py).
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
TEST_STAGES += test-qemu-infer-x86_64
