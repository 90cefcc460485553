# mk/tok.mk — the tokenizer's shell commands end to end (tests/host/tok.sh):
# every llama.cpp vocabulary case typed into build/host/llmctl's `tokenize`.
# (The tokenizers' fuzz target is mk/fuzz.mk's.)
.PHONY: test-tok-shell
test-tok-shell: $(B)/host/llmctl ## tokenize/detokenize commands: every vocab case through llmctl
	@mkdir -p $(RESULTS)
	@tests/stage.sh tok-shell tests/host/tok.sh $(B)/host/llmctl
TEST_STAGES += test-tok-shell
