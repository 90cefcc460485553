# mk/cpu.mk — the CPU-class matrix. test-unit and test-llmctl-infer run the
# host build as the machine is; these stages run them again as the older x86
# classes, by hiding features: LLMK_CPU_MASK is a hex mask of the
# PLAT_CPU_* bits (kernel/platform.h) that tools/host/plat_pool.c keeps, so
# quant_init(), vmath and the AES-GCM selection pick what that class would.
#
# The classes: one mask each, and the features each needs on the machine,
# named as `llmctl version` names them: where one is missing the stage is
# one skip naming it (tests/cpu_class.sh). A LLMK_CPU_MASK already set
# stands for the machine: the class's mask is ANDed with it. The AMD flag
# (not a feature: it picks decode's read pattern) is kept where the machine
# has it; test_matmul runs both patterns anyway. The aarch64 classes (NEON
# with and without dotprod) run under qemu-aarch64 in test-a64-simd
# (mk/simd.mk). Unit tests under ASan are not repeated per class.
CPU_CLASSES_x86_64 := avx2-vaes avx2 sse42
# like AMD Zen 3 (Milan): AVX2 FMA F16C, AES-NI PCLMULQDQ VAES VPCLMULQDQ
# SHA, RDRAND, AMD; no AVX-512, no GFNI
CPU_MASK_avx2-vaes := 60F40F
CPU_NEEDS_avx2-vaes := avx2 fma f16c aes pclmulqdq vaes vpclmulqdq sha
# like AMD Zen 2 or Intel Haswell: AVX2 FMA F16C, AES-NI PCLMULQDQ, RDRAND,
# AMD; no VAES, VPCLMULQDQ, GFNI or SHA
CPU_MASK_avx2 := 40340F
CPU_NEEDS_avx2 := avx2 fma f16c aes pclmulqdq
# any x86-64-v2 CPU: SSE4.2 alone, the scalar rows
CPU_MASK_sse42 := 1
CPU_NEEDS_sse42 := sse4.2

cpu_class = tests/cpu_class.sh $(1) $(CPU_MASK_$(1)) '$(CPU_NEEDS_$(1))' $(B)/host/llmctl

# $(call cpu_stages,CLASS): test-unit-CLASS and test-llmctl-infer-CLASS
define cpu_stages
.PHONY: test-unit-$(1) test-llmctl-infer-$(1)
test-unit-$(1): $(B)/host/unittest $(B)/host/llmctl
	@mkdir -p $(RESULTS)
	@tests/stage.sh unit-$(1) $$(call cpu_class,$(1)) $(B)/host/unittest
test-llmctl-infer-$(1): $(B)/host/llmctl $(B)/host/mkmodel
	@mkdir -p $(RESULTS)
	@tests/stage.sh llmctl-infer-$(1) $$(call cpu_class,$(1)) tests/host/infer.sh $(B)/host/llmctl
endef
$(foreach c,$(CPU_CLASSES_$(HOST_ARCH)),$(eval $(call cpu_stages,$(c))))
ifeq ($(HOST_ARCH),x86_64)
test-unit-avx2-vaes: ## host unit tests as CPU class avx2-vaes (mk/cpu.mk)
test-unit-avx2: ## host unit tests as CPU class avx2 (mk/cpu.mk)
test-unit-sse42: ## host unit tests as CPU class sse42 (mk/cpu.mk)
test-llmctl-infer-avx2-vaes: ## tests/host/infer.sh as CPU class avx2-vaes (mk/cpu.mk)
test-llmctl-infer-avx2: ## tests/host/infer.sh as CPU class avx2 (mk/cpu.mk)
test-llmctl-infer-sse42: ## tests/host/infer.sh as CPU class sse42 (mk/cpu.mk)
endif

.PHONY: test-cpu-classes
test-cpu-classes: $(foreach c,$(CPU_CLASSES_$(HOST_ARCH)),test-unit-$(c) test-llmctl-infer-$(c)) ## every CPU-class stage (mk/cpu.mk)
