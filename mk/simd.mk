# mk/simd.mk — the SIMD rows' aarch64 check: the quant/matmul/selftest unit
# tests cross-built with aarch64-linux-gnu-gcc (static) and run under
# qemu-aarch64 user mode, once with SDOT (-cpu max) and once with the plain
# NEON rows (LLMK_CPU_MASK without DOTPROD), each against the scalar rows.
A64_CC ?= aarch64-linux-gnu-gcc
A64_DIR := $(B)/a64
A64_SRC := $(sort tests/unit/runner.c tests/unit/test_simd.c tests/unit/test_matmul.c \
	tests/unit/test_quant.c llm/quant.c llm/quant_fill.c llm/selftest.c llm/matmul.c \
	llm/vmath.c llm/math.c \
	llm/mem.c llm/gguf.c llm/reader.c kernel/fmt.c tools/host/plat.c $(PLAT_COMMON_SRC) \
	$(wildcard llm/kernels/scalar/*.c llm/kernels/neon/*.c))
A64_OBJ := $(patsubst %.c,$(A64_DIR)/obj/%.o,$(A64_SRC))
# armv8.2-a+dotprod: the host platform reports DOTPROD from the compiler's
# target, so this build selects the SDOT rows; the mask tests the plain ones.
# -ffp-contract=off: GCC fuses a * b + c into FMA on AArch64 by default, which
# changes the scalar quantizers' rounding (q_round(x * id)) against x86 and
# against the SIMD rows; the reference must round every product.
A64_CFLAGS := -std=gnu11 -O2 $(WARN) -fno-strict-aliasing -march=armv8.2-a+dotprod -ffp-contract=off \
	-DLLMK_VERSION='"$(VERSION)"' -DLLMK_GIT='"$(GIT)"' -DLLMK_BUILD_ID='"a64-test"' -MMD -MP

$(A64_DIR)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(A64_CC) $(A64_CFLAGS) -c $< -o $@
$(A64_DIR)/unittest: $(A64_OBJ)
	$(A64_CC) -static -o $@ $^ -lpthread -lm
-include $(shell find $(A64_DIR)/obj -name '*.d' 2>/dev/null)

.PHONY: test-a64-simd
test-a64-simd: $(A64_DIR)/unittest ## NEON rows vs scalar: aarch64 unit tests under qemu-aarch64 (SDOT and plain NEON)
	@mkdir -p $(RESULTS)
	@tests/stage.sh a64-simd tests/simd/a64.sh $(A64_DIR)/unittest
TEST_STAGES += test-a64-simd

# The kernels in the kernel: selftest, bench (labelled emulated) and 1 vs 2
# threads under QEMU TCG with -smp 2 (tests/qemu/test_simd.py): AVX2 rows on
# x86_64, NEON (SDOT) rows on aarch64.
define qemu_simd
.PHONY: test-qemu-simd-$(1)
test-qemu-simd-$(1):
	@$$(MAKE) --no-print-directory ARCH=$(1) $(B)/$(1)/esp.img
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-simd-$(1) python3 tests/qemu/test_simd.py --arch $(1) --esp $(B)/$(1)/esp.img
TEST_STAGES += test-qemu-simd-$(1)
endef
$(foreach a,x86_64 aarch64,$(eval $(call qemu_simd,$(a))))
test-qemu-simd-x86_64: ## kernels in QEMU x86_64 -smp 2: selftest (AVX2 rows), bench (emulated), 2 threads = 1 thread
test-qemu-simd-aarch64: ## kernels in QEMU aarch64 -smp 2: selftest (NEON rows), bench (emulated), 2 threads = 1 thread
