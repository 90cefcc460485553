# mk/models.mk — the synthetic benchmark models, written by build/host/mkmodel.
#
#   make models           TinyLlama-1.1B-shaped at Q4_0, Q4_K_M, Q6_K, Q8_0 (~0.6-1.2 GB each)
#   make models-7b        Llama-2-7B-shaped at Q4_0 (~3.8 GB)
#   make build/models/tinyllama-Q5_K_M.gguf   any shape preset and type, by name
#
# Deterministic (seed 1): the same mkmodel writes the same bytes, so benchmark
# numbers from different machines use the same file. mkmodel is an order-only
# prerequisite: a file once written stays (its bytes do not change when
# mkmodel is relinked); remove it to write it again after changing the
# generator.

MODELS_DIR := $(B)/models
BENCH_MODELS := $(patsubst %,$(MODELS_DIR)/tinyllama-%.gguf,Q4_0 Q4_K_M Q6_K Q8_0)

$(MODELS_DIR)/tinyllama-%.gguf: | $(B)/host/mkmodel
	@mkdir -p $(@D)
	$(B)/host/mkmodel --shape tinyllama --type $* -o $@.tmp && mv $@.tmp $@

$(MODELS_DIR)/llama2-7b-%.gguf: | $(B)/host/mkmodel
	@mkdir -p $(@D)
	$(B)/host/mkmodel --shape llama2-7b --type $* -o $@.tmp && mv $@.tmp $@

.PHONY: models models-7b
models: $(BENCH_MODELS) ## synthetic TinyLlama-shaped benchmark models (Q4_0 Q4_K_M Q6_K Q8_0)
models-7b: $(MODELS_DIR)/llama2-7b-Q4_0.gguf ## synthetic Llama-2-7B-shaped Q4_0 model (~3.8 GB)
