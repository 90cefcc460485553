# mk/a64.mk — the rest of the engine's unit tests cross-built for aarch64
# Linux and run under qemu-aarch64 (user mode): GGUF, math.h's bits, the
# scalar rows' bit-exactness against ggml, tokenizers, mkmodel and the forward
# pass on the kernel's other architecture, without booting anything.
# (mk/simd.mk's test-a64-simd covers the NEON rows, matmul and selftest.)
#
# Baseline armv8-a, static link against an archive of the engine, so tests
# that need only the engine pull only the engine; the tests of shell/ and the
# sealed-model reader (which need BearSSL, built for aarch64 only
# freestanding) stay in the host stages.

A64E_CC ?= aarch64-linux-gnu-gcc
A64E_DIR := $(B)/a64-engine
A64E_CFLAGS := -std=gnu11 -O2 -g $(WARN) -ffp-contract=off -fno-strict-aliasing -DLLMK_VERSION='"$(VERSION)"' \
	-DLLMK_GIT='"$(GIT)"' -MMD -MP
A64E_TEST_EXCLUDE := tests/unit/test_seal.c tests/unit/test_aesgcm.c tests/unit/test_sha256.c tests/unit/test_shell.c tests/unit/test_args.c \
	tests/unit/test_cmd_model.c tests/unit/test_simd.c tests/unit/test_matmul.c \
	tests/unit/test_stream.c tests/unit/test_cmd_bench.c tests/unit/test_bench.c
A64E_LIB_SRC := $(filter-out llm/seal.c llm/sha256.c,$(sort $(wildcard llm/*.c llm/kernels/scalar/*.c))) \
	$(SIMD_SRC_aarch64) kernel/fmt.c $(HOST_PLAT_SRC) $(TOOL_LIB_SRC)
A64E_LIB_OBJ := $(patsubst %.c,$(A64E_DIR)/obj/%.o,$(A64E_LIB_SRC))
A64E_TEST_OBJ := $(patsubst %.c,$(A64E_DIR)/obj/%.o,$(filter-out $(A64E_TEST_EXCLUDE),$(TEST_SRC)))

$(A64E_DIR)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(A64E_CC) $(A64E_CFLAGS) -c $< -o $@

$(A64E_DIR)/libengine.a: $(A64E_LIB_OBJ)
	@rm -f $@
	ar rcD $@ $^

$(A64E_DIR)/unittest: $(A64E_TEST_OBJ) $(A64E_DIR)/libengine.a
	$(A64E_CC) -static -o $@ $^ -lm -lpthread

-include $(shell find $(A64E_DIR)/obj -name '*.d' 2>/dev/null)

.PHONY: test-a64-engine
test-a64-engine: $(A64E_DIR)/unittest ## engine unit tests (gguf, math, quant, tok, model) for aarch64 under qemu-aarch64
	@mkdir -p $(RESULTS)
	@LLMK_CPUS=2 tests/stage.sh a64-engine qemu-aarch64 $(A64E_DIR)/unittest

TEST_STAGES += test-a64-engine
