# mk/fuzz_load.mk — the load fuzzer (tests/fuzz/fuzz_load.c): edit scripts
# over small valid models, loaded resident and streamed, one decode step
# each, under ASan + UBSan (mk/fuzz.mk's compiler and flags).
#
#   make test-fuzz-load                    build, seed and run for FUZZ_LOAD_TIME seconds (60)
#   make test-fuzz-load FUZZ_LOAD_TIME=600 a longer run
#
# It links the whole engine (with this CPU's SIMD rows, built with their
# instruction sets as in the host build), the Linux platform and the model
# writer. plat_alloc, plat_free and plat_mem_stats are wrapped by the target:
# it simulates the machine the memory plan sees. The seed corpus is written
# by the target itself (FUZZ_LOAD_SEEDS=DIR), one input per class of edit.

FUZZ_LOAD_TIME ?= 60
FUZZ_LOAD_SRC := $(sort $(wildcard llm/*.c llm/kernels/scalar/*.c)) $(SIMD_SRC_$(HOST_ARCH)) \
	kernel/fmt.c tools/host/plat.c $(PLAT_COMMON_SRC) tools/writer/mkmodel_write.c \
	tests/fuzz/fuzz_load.c tests/fuzz/fuzz_load_model.c
FUZZ_LOAD_OBJ := $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_LOAD_SRC))
FUZZ_LOAD_WRAP := -Wl,--wrap=plat_alloc,--wrap=plat_free,--wrap=plat_mem_stats

# the SIMD rows need their instruction sets (the Makefile's simd_flags)
$(B)/fuzz/obj/llm/kernels/avx2/%.o: FUZZ_CFLAGS += $(SIMD_FLAGS_avx2)
$(B)/fuzz/obj/llm/kernels/avx512/%.o: FUZZ_CFLAGS += $(SIMD_FLAGS_avx512)
# clang ignores the files' own #pragma GCC target lines
$(B)/fuzz/obj/llm/kernels/avx2/gcm.o $(B)/fuzz/obj/llm/kernels/avx512/gcm.o: \
	FUZZ_CFLAGS += -maes -mpclmul -mvaes -mvpclmulqdq -Wno-unknown-pragmas
$(B)/fuzz/obj/llm/kernels/avx2/sha256_ni.o: FUZZ_CFLAGS += -msha -msse4.1 -mssse3 -Wno-unknown-pragmas

$(B)/fuzz/fuzz_load: $(FUZZ_LOAD_OBJ)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined $(FUZZ_LOAD_WRAP) -o $@ $^ -lbearssl -lpthread -lm

FUZZ_LOAD_SEEDS := $(B)/fuzz/corpus/load/.seeded
$(FUZZ_LOAD_SEEDS): $(B)/fuzz/fuzz_load
	@mkdir -p $(@D)
	@FUZZ_LOAD_SEEDS=$(@D) $(B)/fuzz/fuzz_load
	@touch $@

.PHONY: test-fuzz-load
test-fuzz-load: $(B)/fuzz/fuzz_load $(FUZZ_LOAD_SEEDS) ## fuzz load (resident + streamed) and a decode step over edited models for FUZZ_LOAD_TIME seconds (60)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-load tests/fuzz/run.sh $(B)/fuzz/fuzz_load $(B)/fuzz/corpus/load $(FUZZ_LOAD_TIME)
TEST_STAGES += test-fuzz-load
