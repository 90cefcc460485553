# mk/simd.mk — the kernels in the kernel (the aarch64 Linux check of the
# NEON rows is mk/a64.mk's test-a64-simd).

# The kernels in the kernel: selftest, bench (labelled emulated) and 1 vs 2
# threads under QEMU TCG with -smp 2 (tests/qemu/test_simd.py): AVX2 rows on
# x86_64, NEON (SDOT) rows on aarch64.
define qemu_simd
.PHONY: test-qemu-simd-$(1)
test-qemu-simd-$(1):
	@$$(MAKE) --no-print-directory ARCH=$(1) $(B)/$(1)/esp.img
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-simd-$(1) python3 tests/qemu/test_simd.py --arch $(1) --esp $(B)/$(1)/esp.img
endef
$(foreach a,x86_64 aarch64,$(eval $(call qemu_simd,$(a))))
test-qemu-simd-x86_64: ## kernels in QEMU x86_64 -smp 2: selftest (AVX2 rows), bench (emulated), 2 threads = 1 thread
test-qemu-simd-aarch64: ## kernels in QEMU aarch64 -smp 2: selftest (NEON rows), bench (emulated), 2 threads = 1 thread
