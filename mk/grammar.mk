# mk/grammar.mk — grammars and JSON schemas end to end (docs/grammars.md):
# 200 seeded runs of a JSON schema on stories260K and 200 on a random-weight
# model, every reply parsed by python3's json and validated; bad and
# hostile grammars and schemas, one error line each. About 20 s.
.PHONY: test-grammar
test-grammar: $(B)/host/llmctl $(B)/host/mkmodel ## infer -j: 400 seeded runs, every reply valid JSON of the schema; hostile grammars refused
	@mkdir -p $(RESULTS)
	@tests/stage.sh grammar python3 tests/host/grammar.py $(B)/host/llmctl $(B)/host/mkmodel
TEST_STAGES += test-grammar
