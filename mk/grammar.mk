# mk/grammar.mk — grammars and JSON schemas end to end (docs/grammars.md):
# 200 seeded runs of a JSON schema on stories260K and 200 on a random-weight
# model, every reply parsed by python3's json and validated; bad and
# hostile grammars and schemas, one error line each. About 20 s.
.PHONY: test-grammar
test-grammar: $(B)/host/llmctl $(B)/host/mkmodel ## infer -j: 400 seeded runs, every reply valid JSON of the schema; hostile grammars refused
	@mkdir -p $(RESULTS)
	@tests/stage.sh grammar python3 tests/host/grammar.py $(B)/host/llmctl $(B)/host/mkmodel

# The grammar parser, the schema converter and the matcher under libFuzzer
# (mk/fuzz.mk's build); seeds: the JSON grammar, schemas, hostile shapes.
FUZZ_GRAMMAR_TIME ?= 30
FUZZ_GRAMMAR_SRC := llm/grammar.c llm/grammar_match.c llm/grammar_schema.c llm/grammar_json.c \
	llm/grammar_trig.c \
	llm/mem.c kernel/fmt.c \
	$(PLAT_HOST_SRC) $(PLAT_COMMON_SRC) tests/fuzz/fuzz_grammar.c
$(B)/fuzz/fuzz_grammar: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_GRAMMAR_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lpthread

FUZZ_GRAMMAR_SEEDS := $(B)/fuzz/corpus/grammar/.seeded
$(FUZZ_GRAMMAR_SEEDS): grammars/json.gbnf mk/grammar.mk
	@mkdir -p $(@D)
	@{ cat grammars/json.gbnf; printf '\0{"a": [1, -2.5e3, "x\\u00e9"], "b": {}}'; } > $(@D)/seed-json
	@printf 'root ::= ( [x]* )*\0xxx' > $(@D)/seed-nullable
	@printf 'root ::= "(" root ")" | [^()]{1,3}\0((ab))' > $(@D)/seed-nest
	@printf 'J{"type":"object","properties":{"a":{"type":"array","items":{"enum":[1,"x",null]},"maxItems":3}},"required":["a"]}\0{"a": [1, "x"]}' > $(@D)/seed-schema
	@printf 'J{"type":"integer","minimum":-12,"exclusiveMaximum":207}\0-3' > $(@D)/seed-int
	@printf 'J{"$$defs":{"n":{"properties":{"n":{"$$ref":"#/$$defs/n"}}}},"$$ref":"#/$$defs/n"}\0{"n": {}}' > $(@D)/seed-ref
	@printf 'J{"type":"string","pattern":"^(\\\\([0-9]{1,3}\\\\))?[a-z\\\\-]+\\\\d{2,}|x.y*$$"}\0"(12)ab-99"' > $(@D)/seed-pattern
	@printf 'J{"allOf":[{"$$ref":"#/$$defs/a"},{"anyOf":[{"properties":{"b":{"type":"integer"}}}]}],"$$defs":{"a":{"properties":{"a":{"type":"string","pattern":"^x+$$"}}}}}\0{"a": "xx", "b": 1}' > $(@D)/seed-allof
	@printf 'L<tool_call>\n^{"name"\n<a>\0x<tool\001_ca\001ll>\n{' > $(@D)/seed-lazy
	@printf 'L^{"name"\nb>\n<b>\0{"na\001me"' > $(@D)/seed-lazy-start
	@touch $@

.PHONY: test-fuzz-grammar
test-fuzz-grammar: $(B)/fuzz/fuzz_grammar $(FUZZ_GRAMMAR_SEEDS) ## fuzz the GBNF parser, schema converter and matcher for FUZZ_GRAMMAR_TIME seconds (30)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-grammar tests/fuzz/run.sh $(B)/fuzz/fuzz_grammar $(B)/fuzz/corpus/grammar $(FUZZ_GRAMMAR_TIME)
