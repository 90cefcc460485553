# mk/bench.mk — our bench against llama.cpp's on the same files
# (tools/bench_compare.py; never part of make test).
#
#   make bench-compare                  the benchmark models, this CPU as it is
#   make bench-compare BENCH_CLASS=avx2 as an AVX2-only CPU (LLMK_CPU_MASK=60F40F,
#                                       llama.cpp's AVX2 variant)
#   make bench-compare BENCH_ARGS="-r 5 --rounds 3"
#   make bench-deps                     Debian's nodejs and npm, which it needs
#   make bench-stream7b                 a Llama-2-7B-shaped Q4_0 streamed under a
#                                       512 MiB memory cgroup (root), load + 8
#                                       tokens against llama.cpp and the disk
#   make bench-stream7b STREAM7B_ARGS="--rounds 5 --class avx2"
#   make bench-serve                    K = 1 2 4 8 concurrent streaming chat requests
#                                       through `llmctl serve --plain` against
#                                       node-llama-cpp's K sequences: TinyLlama-shaped
#                                       Q4_0, resident, then streamed under 256M
#   make bench-serve SERVE_ARGS="-n 64 -k 1 8"
#
# llama.cpp is node-llama-cpp from npm, installed under build/llamacpp on
# the first run.

BENCH_CLASS ?= native
BENCH_ARGS ?=
STREAM7B_ARGS ?=
SERVE_ARGS ?=

.PHONY: bench-compare bench-deps bench-stream7b bench-serve record-arch-refs
# The models are order-only: written when missing, not again for every newer
# mkmodel (they are the same bytes); second expansion, as their list comes
# from mk/models.mk, read after this file.
.SECONDEXPANSION:
bench-compare: $(B)/host/llmctl | $$(BENCH_MODELS) ## our bench and llama.cpp's (node-llama-cpp) on the benchmark models, in turn: the ratio table (BENCH_CLASS=avx2 for an AVX2-only CPU)
	python3 tools/bench_compare.py --class $(BENCH_CLASS) --llmctl $(B)/host/llmctl \
		--prefix $(B)/llamacpp $(BENCH_ARGS) $(BENCH_MODELS)

bench-deps: ## Debian's nodejs and npm for make bench-compare (apt-get: root or sudo)
	@if command -v node >/dev/null && command -v npm >/dev/null; then \
		echo "bench-deps: node $$(node --version) and npm $$(npm --version) are there"; \
	else \
		S=; [ "$$(id -u)" = 0 ] || S=sudo; \
		$$S apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$S apt-get install -y -qq nodejs npm; \
	fi

bench-stream7b: $(B)/host/llmctl | $(B)/models/llama2-7b-Q4_0.gguf ## a 7B Q4_0 (3.8 GB) streamed under a 512 MiB cgroup: load + 8 tokens, ours (default, --direct, --no-direct) and llama.cpp's best build that survives, against the disk's O_DIRECT rate (root; tools/bench_stream7b.py)
	python3 tools/bench_stream7b.py --llmctl $(B)/host/llmctl --prefix $(B)/llamacpp \
		--model $(B)/models/llama2-7b-Q4_0.gguf $(STREAM7B_ARGS)

bench-serve: $(B)/host/llmctl | $(MODELS_DIR)/tinyllama-Q4_0.gguf ## K=1,2,4,8 concurrent streaming chats through llmctl serve against node-llama-cpp's K sequences (tools/bench_serve.py): resident, then streamed under 256M
	python3 tools/bench_serve.py --llmctl $(B)/host/llmctl --prefix $(LLAMACPP_PREFIX) \
		--model $(MODELS_DIR)/tinyllama-Q4_0.gguf $(SERVE_ARGS)
	python3 tools/bench_serve.py --llmctl $(B)/host/llmctl --prefix $(LLAMACPP_PREFIX) \
		--model $(MODELS_DIR)/tinyllama-Q4_0.gguf --stream --budget 256M $(SERVE_ARGS)

# make test compares against the committed ids and never needs npm.
LLAMACPP_PREFIX ?= $(B)/llamacpp
record-arch-refs: $(B)/host/mkmodel ## llama.cpp's greedy ids on each architecture's reference model (mkmodel --ref) into tests/refs/arch (ARCHS="qwen3 ..." for some; LLAMACPP_PREFIX=DIR reuses an install)
	node tools/record_arch_refs.mjs --prefix $(LLAMACPP_PREFIX) --mkmodel $(B)/host/mkmodel \
		--out tests/refs/arch --work $(B)/archrefs $(ARCHS)
