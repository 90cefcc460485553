# mk/jinja.mk — the Jinja chat-template interpreter (llm/jinja*.c) against a
# reference: @huggingface/jinja on llama.cpp's models/templates (tools/jinja_ref.sh;
# skips, naming why, without node-llama-cpp under LLAMACPP_PREFIX). Its own unit
# tests (tests/unit/test_jinja.c) run in test-unit, its fuzzer in test-fuzz-jinja.

.PHONY: test-jinja-ref
test-jinja-ref: $(B)/host/jinja_render $(B)/host/llmctl ## the Jinja interpreter against @huggingface/jinja on llama.cpp's real-world templates (needs node-llama-cpp in LLAMACPP_PREFIX, else skips)
	@mkdir -p $(RESULTS)
	@tests/stage.sh jinja-ref tools/jinja_ref.sh $(LLAMACPP_PREFIX)
