# mk/a64.mk — the engine's unit tests cross-built for aarch64 Linux and run
# under qemu-aarch64 (user mode): the scalar rows' bit-exactness, math.h's
# bits, NEON rows against scalar, GGUF, tokenizers and the forward pass on
# the other architecture the kernel ships for, without booting anything.
#
# Static link against an archive of the engine, so tests that need only the
# engine pull only the engine; the tests of shell/ and the sealed-model
# reader (which need BearSSL, built for aarch64 only freestanding) stay in
# the host stages.

A64_CC ?= aarch64-linux-gnu-gcc
A64_DIR := $(B)/a64
A64_CFLAGS := -std=gnu11 -O2 -g $(WARN) -fno-strict-aliasing -DLLMK_VERSION='"$(VERSION)"' \
	-DLLMK_GIT='"$(GIT)"' -MMD -MP
A64_TEST_EXCLUDE := tests/unit/test_seal.c tests/unit/test_shell.c tests/unit/test_args.c \
	tests/unit/test_cmd_model.c
A64_LIB_SRC := $(filter-out llm/seal.c,$(sort $(wildcard llm/*.c llm/kernels/scalar/*.c))) \
	$(SIMD_SRC_aarch64) kernel/fmt.c $(HOST_PLAT_SRC)
A64_LIB_OBJ := $(patsubst %.c,$(A64_DIR)/obj/%.o,$(A64_LIB_SRC))
A64_TEST_OBJ := $(patsubst %.c,$(A64_DIR)/obj/%.o,$(filter-out $(A64_TEST_EXCLUDE),$(TEST_SRC)))

$(A64_DIR)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(A64_CC) $(A64_CFLAGS) -c $< -o $@

$(A64_DIR)/libengine.a: $(A64_LIB_OBJ)
	@rm -f $@
	ar rcD $@ $^

$(A64_DIR)/unittest: $(A64_TEST_OBJ) $(A64_DIR)/libengine.a
	$(A64_CC) -static -o $@ $^ -lm -lpthread

-include $(shell find $(A64_DIR)/obj -name '*.d' 2>/dev/null)

.PHONY: test-a64
test-a64: $(A64_DIR)/unittest ## engine unit tests built for aarch64, run under qemu-aarch64
	@mkdir -p $(RESULTS)
	@LLMK_CPUS=2 tests/stage.sh a64 qemu-aarch64 $(A64_DIR)/unittest

TEST_STAGES += test-a64
