# mk/tok.mk — the tokenizer's shell commands end to end (tests/host/tok.sh):
# every llama.cpp vocabulary case typed into build/host/llmctl's `tokenize`.
.PHONY: test-tok-shell
test-tok-shell: $(B)/host/llmctl ## tokenize/detokenize commands: every vocab case through llmctl
	@mkdir -p $(RESULTS)
	@tests/stage.sh tok-shell tests/host/tok.sh $(B)/host/llmctl
TEST_STAGES += test-tok-shell

# libFuzzer target for the tokenizers (rules for $(B)/fuzz/obj in mk/fuzz.mk);
# seeds: each vocabulary's test strings, once per selector byte.
FUZZ_TOK_TIME ?= 30
FUZZ_TOK_SRC := $(sort $(wildcard llm/tok*.c llm/unicode*.c)) llm/gguf.c llm/reader.c llm/mem.c kernel/fmt.c \
	tools/host/plat.c $(PLAT_COMMON_SRC) tests/fuzz/fuzz_tok.c
$(B)/fuzz/fuzz_tok: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_TOK_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lpthread

FUZZ_TOK_SEEDS := $(B)/fuzz/corpus/tok/.seeded
$(FUZZ_TOK_SEEDS):
	@mkdir -p $(@D)
	@if [ -d "$(LLMK_TESTDATA)/vocab" ]; then i=0; for f in $(LLMK_TESTDATA)/vocab/*.inp; do \
		for s in 00 41 82 c3; do printf "\\x$$s" | cat - $$f | head -c 4096 > $(@D)/seed-$$i-$$s; done; \
		i=$$((i + 1)); done; fi
	@touch $@

.PHONY: test-fuzz-tok
test-fuzz-tok: $(B)/fuzz/fuzz_tok $(FUZZ_TOK_SEEDS) ## fuzz the tokenizers for FUZZ_TOK_TIME seconds (30)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-tok tests/fuzz/run.sh $(B)/fuzz/fuzz_tok $(B)/fuzz/corpus/tok $(FUZZ_TOK_TIME)
TEST_STAGES += test-fuzz-tok
