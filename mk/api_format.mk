# mk/api_format.mk — response_format and tools through the HTTP API
# (tests/host/api_json.py, docs/api.md): on stories260K and a random-weight
# model, 200 seeded json_schema replies each, every one parsed and
# validated; a tool call round trip in the chatml and llama3 formats; 400s
# naming the param. About 30 s.
.PHONY: test-api-json
test-api-json: $(B)/host/llmctl $(B)/host/mkmodel ## API response_format and tools: 400 seeded schema replies valid, tool call round trips
	@mkdir -p $(RESULTS)
	@tests/stage.sh api-json timeout 300 python3 tests/host/api_json.py $(B)/host/llmctl $(B)/host/mkmodel
TEST_STAGES += test-api-json
