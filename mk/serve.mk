# mk/serve.mk — the OpenAI-compatible API end to end on the host
# (tests/host/serve.py): build/host/llmctl serves stories260K on a free
# 127.0.0.1 port; endpoints, greedy parity with the shell, hostile input.
.PHONY: test-serve
test-serve: $(B)/host/llmctl ## the HTTP API on 127.0.0.1: endpoints, streaming, shell parity, hostile clients
	@mkdir -p $(RESULTS)
	@tests/stage.sh serve timeout 300 python3 tests/host/serve.py $(B)/host/llmctl
