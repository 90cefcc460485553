# mk/fuzz_load.mk — the load fuzzer (tests/fuzz/fuzz_load.c): edit scripts
# over small valid models, loaded resident and streamed, 8 greedy tokens
# each, under ASan + UBSan (mk/fuzz.mk's compiler and flags).
#
#   make test-fuzz-load                    build, seed and run for FUZZ_LOAD_TIME seconds (60)
#   make test-fuzz-load FUZZ_LOAD_TIME=600 a longer run
#
# It links the whole engine (with this CPU's SIMD rows, built with their
# instruction sets as in the host build), the Linux platform and the model
# writer, in its own object tree: no comparison tracing (-fsanitize-coverage
# trace-cmp), which helps little when every input byte is an op or a value
# class and costs much of the time (tokenizer set-up loops). plat_alloc,
# plat_free and plat_mem_stats are wrapped by the target: it simulates the
# machine the memory plan sees. The seed corpus is written by the target
# itself (FUZZ_LOAD_SEEDS=DIR), one input per class of edit.

FUZZ_LOAD_TIME ?= 60
FUZZ_LOAD_SRC := $(sort $(wildcard llm/*.c llm/kernels/scalar/*.c)) $(SIMD_SRC_$(HOST_ARCH)) \
	kernel/fmt.c $(PLAT_HOST_SRC) $(PLAT_COMMON_SRC) tools/writer/mkmodel_write.c \
	tests/fuzz/fuzz_load.c tests/fuzz/fuzz_load_model.c
FUZZ_LOAD_OBJ := $(patsubst %.c,$(B)/fuzz-load/obj/%.o,$(FUZZ_LOAD_SRC))
FUZZ_LOAD_CFLAGS := $(FUZZ_CFLAGS) -ffp-contract=off -fno-sanitize-coverage=trace-cmp
FUZZ_LOAD_WRAP := -Wl,--wrap=plat_alloc,--wrap=plat_alloc_sparse,--wrap=plat_free,--wrap=plat_mem_stats
# clang ignores the files' own #pragma GCC target lines: their features here
FUZZ_LOAD_PRAGMA_avx2/gcm.c := -maes -mpclmul -mvaes -mvpclmulqdq -Wno-unknown-pragmas
FUZZ_LOAD_PRAGMA_avx512/gcm.c := $(FUZZ_LOAD_PRAGMA_avx2/gcm.c)
FUZZ_LOAD_PRAGMA_avx2/sha256_ni.c := -msha -msse4.1 -mssse3 -Wno-unknown-pragmas

$(B)/fuzz-load/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_LOAD_CFLAGS) $(if $(filter llm/kernels/%,$<),$(call simd_flags,$<) \
		$(FUZZ_LOAD_PRAGMA_$(subst llm/kernels/,,$<))) -c $< -o $@

$(B)/fuzz/fuzz_load: $(FUZZ_LOAD_OBJ)
	@mkdir -p $(@D)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined $(FUZZ_LOAD_WRAP) -o $@ $^ -lbearssl -lpthread -lm

-include $(shell find $(B)/fuzz-load/obj -name '*.d' 2>/dev/null)
fuzz-build: $(B)/fuzz/fuzz_load

FUZZ_LOAD_SEEDS := $(B)/fuzz/corpus/load/.seeded
$(FUZZ_LOAD_SEEDS): $(B)/fuzz/fuzz_load
	@mkdir -p $(@D)
	@FUZZ_LOAD_SEEDS=$(@D) $(B)/fuzz/fuzz_load
	@touch $@

.PHONY: test-fuzz-load
test-fuzz-load: $(B)/fuzz/fuzz_load $(FUZZ_LOAD_SEEDS) ## fuzz load (resident + streamed) and 8 greedy tokens over edited models for FUZZ_LOAD_TIME seconds (60)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-load tests/fuzz/run.sh $(B)/fuzz/fuzz_load $(B)/fuzz/corpus/load $(FUZZ_LOAD_TIME)
