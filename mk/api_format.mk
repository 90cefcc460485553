# mk/api_format.mk — response_format and tools through the HTTP API
# (tests/host/api_json.py, docs/api.md): on stories260K and a random-weight
# model, 200 seeded json_schema replies each, every one parsed and
# validated; a tool call round trip in the chatml and llama3 formats; 400s
# naming the param. About 30 s.
.PHONY: test-api-json
test-api-json: $(B)/host/llmctl $(B)/host/mkmodel ## API response_format and tools: 400 seeded schema replies valid, tool call round trips
	@mkdir -p $(RESULTS)
	@tests/stage.sh api-json timeout 300 python3 tests/host/api_json.py $(B)/host/llmctl $(B)/host/mkmodel

# response_format, tools and tool_choice under libFuzzer (mk/fuzz.mk's
# build); seeds: a tools request with calls and results, a json_schema one.
FUZZ_API_FORMAT_TIME ?= 10
FUZZ_API_FORMAT_SRC := shell/http/api_format.c shell/http/json.c llm/chat.c llm/grammar.c \
	llm/grammar_match.c llm/grammar_schema.c llm/grammar_json.c llm/mem.c kernel/fmt.c \
	$(PLAT_HOST_SRC) $(PLAT_COMMON_SRC) tests/fuzz/fuzz_api_format.c
$(B)/fuzz/fuzz_api_format: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_API_FORMAT_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lpthread

FUZZ_API_FORMAT_SEEDS := $(B)/fuzz/corpus/api_format/.seeded
$(FUZZ_API_FORMAT_SEEDS):
	@mkdir -p $(@D)
	@printf '\0{"messages":[{"role":"system","content":"s"},{"role":"user","content":"<tool_call>\\n{\\"name\\": \\"f\\", \\"arguments\\": {\\"a\\": [1]}}\\n</tool_call>"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\\"a\\":[1.5e3]}"}}]},{"role":"tool","tool_call_id":"c","content":"r"},{"role":"tool","content":"q"}],"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object","properties":{"a":{"type":"array","items":{"type":"number"}}},"required":["a"]}}}],"tool_choice":"required"}' > $(@D)/seed-tools
	@printf '\1{"messages":[{"role":"user","content":"{\\"name\\": \\"g\\", \\"parameters\\": {}}"}],"tools":[{"type":"function","function":{"name":"g"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}' > $(@D)/seed-llama3
	@printf '\4{"prompt":"x","response_format":{"type":"json_schema","json_schema":{"name":"n","strict":true,"schema":{"type":"object","properties":{"s":{"type":"string","pattern":"^[a-z]{2,4}(-\\\\d)?$$"}}}}}}' > $(@D)/seed-schema
	@printf '\3{"messages":[{"role":"system","content":"s"},{"role":"user","content":"[TOOL_CALLS][{\\"name\\": \\"f\\", \\"arguments\\": {\\"a\\": [1]}, \\"id\\": \\"abcdefghi\\"}]"},{"role":"assistant","content":null,"tool_calls":[{"id":"abcdefghi","type":"function","function":{"name":"f","arguments":"{\\"a\\":[2]}"}}]},{"role":"tool","tool_call_id":"abcdefghi","content":"r"},{"role":"user","content":"u"}],"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object","properties":{"a":{"type":"array"}}}}}]}' > $(@D)/seed-mistral
	@printf '\12{"messages":[{"role":"user","content":"[{\\"name\\": \\"f\\", \\"arguments\\": {}}]"},{"role":"assistant","tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"x","name":"f","content":"r"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"}' > $(@D)/seed-jinja
	@touch $@

.PHONY: test-fuzz-api-format
test-fuzz-api-format: $(B)/fuzz/fuzz_api_format $(FUZZ_API_FORMAT_SEEDS) ## fuzz response_format/tools parsing, prompts and reply parsing for FUZZ_API_FORMAT_TIME seconds (10)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-api-format tests/fuzz/run.sh $(B)/fuzz/fuzz_api_format $(B)/fuzz/corpus/api_format $(FUZZ_API_FORMAT_TIME)
