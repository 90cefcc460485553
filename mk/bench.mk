# mk/bench.mk — our bench against llama.cpp's on the same files
# (tools/bench_compare.py; never part of make test).
#
#   make bench-compare                  the benchmark models, this CPU as it is
#   make bench-compare BENCH_CLASS=avx2 as an AVX2-only CPU (LLMK_CPU_MASK=60F40F,
#                                       llama.cpp's AVX2 variant)
#   make bench-compare BENCH_ARGS="-r 5 --rounds 3"
#   make bench-deps                     Debian's nodejs and npm, which it needs
#
# llama.cpp is node-llama-cpp from npm, installed under build/llamacpp on
# the first run.

BENCH_CLASS ?= native
BENCH_ARGS ?=

.PHONY: bench-compare bench-deps
bench-compare: $(B)/host/llmctl $(BENCH_MODELS) ## our bench and llama.cpp's (node-llama-cpp) on the benchmark models, in turn: the ratio table (BENCH_CLASS=avx2 for an AVX2-only CPU)
	python3 tools/bench_compare.py --class $(BENCH_CLASS) --llmctl $(B)/host/llmctl \
		--prefix $(B)/llamacpp $(BENCH_ARGS) $(BENCH_MODELS)

bench-deps: ## Debian's nodejs and npm for make bench-compare (apt-get: root or sudo)
	@if command -v node >/dev/null && command -v npm >/dev/null; then \
		echo "bench-deps: node $$(node --version) and npm $$(npm --version) are there"; \
	else \
		S=; [ "$$(id -u)" = 0 ] || S=sudo; \
		$$S apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$S apt-get install -y -qq nodejs npm; \
	fi
