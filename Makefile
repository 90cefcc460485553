# llmk — one Makefile; per-area rules live in mk/*.mk. `make help` lists targets.
#
#   make run            boot build/x86_64/llmk.efi in QEMU with the default model
#   make test           every test CI runs (host unit, sanitizers, fuzz, QEMU x86_64 + aarch64)
#   make ARCH=aarch64 run
#
# Reproducible: no timestamps or absolute paths end up in outputs.

ARCH ?= x86_64
B := build
HOST_ARCH := $(shell uname -m)
export SOURCE_DATE_EPOCH ?= 1700000000
LLMK_TESTDATA ?= $(abspath ../shared/testdata)
export LLMK_TESTDATA

VERSION := 0.1.0
GIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)

# ---- host build: the engine + shell on Linux (tools/host implements platform.h) ----
HOST_CC ?= gcc
WARN := -Wall -Wextra -Wno-unused-parameter
# -ffp-contract=off (here, mk/efi.mk, mk/a64.mk): no implicit a * b + c -> FMA
# (GCC's default on AArch64), so the scalar reference rows round every product
# the same way on every target and the SIMD rows can match them bit for bit.
HOST_CFLAGS := -std=gnu11 -O2 -g $(WARN) -ffp-contract=off -ffile-prefix-map=$(CURDIR)/= -fno-strict-aliasing \
	-DLLMK_VERSION='"$(VERSION)"' -DLLMK_GIT='"$(GIT)"' -MMD -MP
HOST_LDLIBS := -lbearssl -lpthread -lm

# Portable sources shared by host and kernel (freestanding C11, platform.h only).
ENGINE_SRC := $(sort $(wildcard llm/*.c llm/kernels/scalar/*.c shell/*.c shell/http/*.c)) kernel/fmt.c
SIMD_SRC_x86_64 := $(sort $(wildcard llm/kernels/avx2/*.c llm/kernels/avx512/*.c))
SIMD_SRC_aarch64 := $(sort $(wildcard llm/kernels/neon/*.c))
# Portable drivers (platform.h and BearSSL only) the host build runs too: the
# TPM 2.0 command layer under tools/host/attest.c, the SNP guest messages
# under the SNP simulator's provider, the x86 instruction decoder of the
# #VC/#VE handlers (plain C, host-tested), and the attestation providers'
# dispatch (kernel/attest.h) over tools/host/attest.c's providers.
HOST_DRIVER_SRC := drivers/tpm2.c drivers/tpm2_rc.c drivers/tpm2_public.c drivers/tpm2_attest.c \
	drivers/tcg_log.c drivers/snp_guest_msg.c kernel/x86_64/insn.c kernel/attest_dispatch.c
# The platform's portable part, shared with the kernel: CPU feature names and
# the CPUID decoder. Whatever links the host platform (PLAT_HOST_SRC: the
# console, memory and the rest; the disks; the CPUs and the pool) links this too.
PLAT_COMMON_SRC := kernel/cpu_features.c
PLAT_HOST_SRC := tools/host/plat.c tools/host/plat_disk.c tools/host/plat_pool.c
HOST_PLAT_SRC := $(sort $(filter-out tools/host/main.c,$(wildcard tools/host/*.c))) $(PLAT_COMMON_SRC)
TOOL_SRC := $(sort $(wildcard tools/*.c))
# What host programs and tests share besides the engine: the writers of
# synthetic models and sealed images (the verifier's checks: mk/verifier.mk).
TOOL_LIB_SRC := $(sort $(wildcard tools/writer/*.c))
TEST_SRC := $(sort $(wildcard tests/unit/*.c))

# Per-directory instruction sets: only the SIMD rows are built with them, and
# they run only where their quant_<isa>_get() saw the feature at run time.
SIMD_FLAGS_avx2 := -mavx2 -mfma -mf16c
SIMD_FLAGS_avx512 := -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni -mavx512bf16
SIMD_FLAGS_neon :=
simd_flags = $(SIMD_FLAGS_$(word 3,$(subst /, ,$(1))))

# $(call host_flavor,NAME,EXTRA_CFLAGS,EXTRA_LDFLAGS): objects under $(B)/NAME/obj.
define host_flavor
$(1)_ENGINE_OBJ := $$(patsubst %.c,$(B)/$(1)/obj/%.o,$(ENGINE_SRC) $(SIMD_SRC_$(HOST_ARCH)))
$(1)_PLAT_OBJ := $$(patsubst %.c,$(B)/$(1)/obj/%.o,$(HOST_PLAT_SRC) $(HOST_DRIVER_SRC) $(TOOL_LIB_SRC))
$(1)_TEST_OBJ := $$(patsubst %.c,$(B)/$(1)/obj/%.o,$(TEST_SRC))
$(1)_CFLAGS := $(HOST_CFLAGS) $(2)
$(1)_LDFLAGS := $(3)
$(B)/$(1)/obj/%.o: %.c
	@mkdir -p $$(@D)
	$$(HOST_CC) $$($(1)_CFLAGS) $$(if $$(filter llm/kernels/%,$$<),$$(call simd_flags,$$<)) -c $$< -o $$@
$(B)/$(1)/libllmk.a: $$($(1)_ENGINE_OBJ) $$($(1)_PLAT_OBJ)
	@rm -f $$@
	ar rcD $$@ $$^
$(B)/$(1)/llmctl: $(B)/$(1)/obj/tools/host/main.o $(B)/$(1)/libllmk.a
	$$(HOST_CC) $$($(1)_LDFLAGS) -o $$@ $$^ $(HOST_LDLIBS)
$(B)/$(1)/unittest: $$($(1)_TEST_OBJ) $(B)/$(1)/libllmk.a
	$$(HOST_CC) $$($(1)_LDFLAGS) -o $$@ $$^ $(HOST_LDLIBS)
$(B)/$(1)/%: $(B)/$(1)/obj/tools/%.o $(B)/$(1)/libllmk.a
	$$(HOST_CC) $$($(1)_LDFLAGS) -o $$@ $$^ $(HOST_LDLIBS) $$(TOOL_LDLIBS_$$*)
-include $$(shell find $(B)/$(1)/obj -name '*.d' 2>/dev/null)
endef

$(eval $(call host_flavor,host,-march=x86-64-v2,))
# (a literal comma would split $(call)'s arguments, hence SAN)
SAN := -fsanitize=address,undefined
$(eval $(call host_flavor,host-asan,-O1 $(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=undefined,$(SAN)))

HOST_TOOLS := $(patsubst tools/%.c,$(B)/host/%,$(TOOL_SRC))

.PHONY: all host tools deps help test test-unit test-asan test-summary clean
.DEFAULT_GOAL := all
all: host

host: $(B)/host/llmctl $(B)/host/unittest $(HOST_TOOLS)
tools: $(HOST_TOOLS)

deps: ## install build/test dependencies (Debian packages by name; idempotent)
	@tools/deps.sh

# Each test stage writes "PASSED FAILED SKIPPED" to $(B)/results/<stage>;
# test-summary adds them up and prints the closing line.
RESULTS := $(B)/results
test-unit: $(B)/host/unittest $(B)/host/llmctl ## host unit and parity tests
	@mkdir -p $(RESULTS)
	@tests/stage.sh unit $(B)/host/unittest

test-asan: $(B)/host-asan/unittest $(B)/host-asan/llmctl ## host unit tests under ASan+UBSan
	@mkdir -p $(RESULTS)
	@ASAN_OPTIONS=detect_leaks=1 tests/stage.sh asan $(B)/host-asan/unittest

# mk/*.mk define the stages' rules; TEST_STAGES below is the one list `make
# test` runs, in this order. A mk file that still says `TEST_STAGES += X`
# (older habit, or a branch merged since) only adds X to TEST_STRAYS, and
# `make test` refuses to start until X has its place in the list.
TEST_STAGES :=
-include $(sort $(wildcard mk/*.mk))
TEST_STRAYS := $(TEST_STAGES)

# cheap first: host unit tests, then the host tools' end-to-end scripts,
# the CPU classes, the fuzzers (a fixed time each), qemu-aarch64 user mode,
# and the QEMU boots last (TCG: minutes each)
TEST_STAGES := \
	test-unit test-asan \
	test-grammar test-llmctl test-llmctl-files test-llmctl-hostile test-llmctl-infer \
	test-tok-shell test-seal test-serve test-serve-batch test-serve-tls test-api-json test-proxy-host \
	test-serve-sizes test-serve-keys \
	test-session-host test-attest-release test-circles test-jinja-ref \
	test-verifier-bundle test-verifier-snp test-snp test-measure-snp test-llmctl-asan \
	$(foreach c,$(CPU_CLASSES_$(HOST_ARCH)),test-unit-$(c) test-llmctl-infer-$(c)) \
	test-fuzz test-fuzz-shell test-fuzz-tok test-fuzz-chat test-fuzz-json test-fuzz-http \
	test-fuzz-drivers test-fuzz-load test-fuzz-grammar test-fuzz-verify test-fuzz-snp-ovmf \
	test-fuzz-jinja test-fuzz-tls test-fuzz-http-msg test-fuzz-api-format \
	test-serve-load \
	test-a64-engine test-a64-simd \
	test-qemu-x86_64 test-qemu-infer-x86_64 test-qemu-simd-x86_64 test-qemu-reads \
	test-qemu-seal test-qemu-bounce test-qemu-net test-qemu-proxy test-qemu-proxy-aarch64 test-qemu-tls-keys \
	test-qemu-tls-keys-aarch64 test-qemu-attest test-qemu-attest-aarch64 test-qemu-session \
	test-verifier-pcr4 \
	test-qemu-aarch64 test-qemu-infer-aarch64 test-qemu-simd-aarch64 test-qemu-net-aarch64
TEST_STRAYS := $(filter-out $(TEST_STAGES),$(TEST_STRAYS))

test: ## every test: host unit, ASan/UBSan, fuzz, QEMU boot tests (x86_64, aarch64)
	@$(if $(TEST_STRAYS),echo "make test: $(TEST_STRAYS): added with TEST_STAGES += in mk/*.mk but not in the Makefile's ordered TEST_STAGES; give each its place there" >&2; exit 1)
	@rm -rf $(RESULTS)
	@tools/deps.sh
	@# a stage that fails before it records counts (a build error) counts as one failure
	@status=0; for t in $(TEST_STAGES); do \
		n=$$(ls $(RESULTS) 2>/dev/null | wc -l); \
		$(MAKE) --no-print-directory $$t && continue; status=1; \
		[ "$$(ls $(RESULTS) 2>/dev/null | wc -l)" != "$$n" ] || \
			{ mkdir -p $(RESULTS); echo "0 1 0" > $(RESULTS)/$$t.did-not-run; }; \
	done; \
	tests/summary.sh $(RESULTS); s2=$$?; [ $$status = 0 ] && [ $$s2 = 0 ]

help: ## list targets
	@grep -hE '^[a-zA-Z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | sort | \
		awk -F'\t' '{printf "  %-18s %s\n", $$1, $$2}'

clean: ## remove build/ (keeps build/deps)
	@find $(B) -mindepth 1 -maxdepth 1 ! -name deps -exec rm -rf {} +
