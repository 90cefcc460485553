# mk/a64.mk — the aarch64 Linux build: the engine, shell, host platform and
# tools cross-compiled with aarch64-linux-gnu-gcc (static) into one unit
# test binary, run under qemu-aarch64 (user mode) without booting anything.
#
#   test-a64-engine  its unit tests on the kernel's other architecture: GGUF,
#                    math.h's bits, the scalar rows against ggml, tokenizers,
#                    the forward pass, sealed images, the shell
#   test-a64-simd    the NEON rows, matmul and selftest against the scalar
#                    rows, twice: with SDOT and with the plain NEON rows
#                    (tests/simd/a64.sh masks DOTPROD)
#
# armv8.2-a+dotprod: the host platform reports DOTPROD from the compiler's
# target, so this build selects the SDOT rows; the mask tests the plain ones.
# -ffp-contract=off: GCC fuses a * b + c into FMA on AArch64 by default,
# which changes the scalar quantizers' rounding (q_round(x * id)) against x86
# and against the SIMD rows; the reference must round every product.
# BearSSL is Debian's source (build/deps/bearssl) built for aarch64 Linux.

A64_CC ?= aarch64-linux-gnu-gcc
A64_DIR := $(B)/a64
A64_BEARSSL := $(B)/deps/bearssl
A64_CFLAGS := -std=gnu11 -O2 -g $(WARN) -fno-strict-aliasing -march=armv8.2-a+dotprod \
	-ffp-contract=off -I$(A64_BEARSSL)/inc -DLLMK_VERSION='"$(VERSION)"' -DLLMK_GIT='"$(GIT)"' \
	-DLLMK_BUILD_ID='"a64-test"' -MMD -MP
# Tests that run host programs (llmctl, tpm2-tools) as children: those are
# x86_64 binaries, checked by the host stages; the x86 trap entry
# (kernel/x86_64/entry.S assembled into the test); and the host tools'
# tests (the verifier, the offline SNP measurement, the SNP and TDX firmware
# simulators: portable C that runs on the client's machine, not in the
# guest, whose RSA chains and corpus sweeps take many minutes under
# qemu-aarch64; the host stages run them).
A64_TEST_EXCLUDE := tests/unit/test_stream.c tests/unit/test_trap_entry.c \
	$(wildcard tests/unit/test_verify_*.c tests/unit/test_snp_sim.c tests/unit/test_snp_ovmf.c \
	tests/unit/test_snp_measure.c tests/unit/test_tdx_sim.c)
A64_LIB_SRC := $(ENGINE_SRC) $(SIMD_SRC_aarch64) $(HOST_PLAT_SRC) $(HOST_DRIVER_SRC) $(TOOL_LIB_SRC) \
	$(sort $(wildcard tools/verify/*.c))
A64_LIB_OBJ := $(patsubst %.c,$(A64_DIR)/obj/%.o,$(A64_LIB_SRC))
A64_TEST_OBJ := $(patsubst %.c,$(A64_DIR)/obj/%.o,$(filter-out $(A64_TEST_EXCLUDE),$(TEST_SRC)))
A64_BEARSSL_SRC := $(sort $(shell find $(A64_BEARSSL)/src -name '*.c' 2>/dev/null))
A64_BEARSSL_OBJ := $(patsubst $(A64_BEARSSL)/src/%.c,$(A64_DIR)/bearssl/%.o,$(A64_BEARSSL_SRC))

$(A64_DIR)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(A64_CC) $(A64_CFLAGS) -c $< -o $@

$(A64_DIR)/bearssl/%.o: $(A64_BEARSSL)/src/%.c
	@mkdir -p $(@D)
	@$(A64_CC) -O2 -w -march=armv8.2-a -I$(A64_BEARSSL)/inc -I$(A64_BEARSSL)/src -c $< -o $@

$(A64_DIR)/libbearssl.a: $(A64_BEARSSL_OBJ)
	@[ -n "$(A64_BEARSSL_OBJ)" ] || { echo "no BearSSL source in $(A64_BEARSSL): run make deps"; exit 1; }
	@rm -f $@
	ar rcD $@ $^

$(A64_DIR)/libllmk.a: $(A64_LIB_OBJ)
	@rm -f $@
	ar rcD $@ $^

$(A64_DIR)/unittest: $(A64_TEST_OBJ) $(A64_DIR)/libllmk.a $(A64_DIR)/libbearssl.a
	$(A64_CC) -static -o $@ $^ -lm -lpthread

-include $(shell find $(A64_DIR)/obj -name '*.d' 2>/dev/null)

.PHONY: test-a64-engine test-a64-simd
test-a64-engine: $(A64_DIR)/unittest ## unit tests cross-built for aarch64 Linux under qemu-aarch64
	@mkdir -p $(RESULTS)
	@LLMK_CPUS=2 tests/stage.sh a64-engine qemu-aarch64 -cpu max $(A64_DIR)/unittest

test-a64-simd: $(A64_DIR)/unittest ## NEON rows vs scalar under qemu-aarch64 (SDOT and plain NEON)
	@mkdir -p $(RESULTS)
	@tests/stage.sh a64-simd tests/simd/a64.sh $(A64_DIR)/unittest simd matmul quant
