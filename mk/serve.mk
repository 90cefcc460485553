# mk/serve.mk — the OpenAI-compatible API end to end on the host
# (tests/host/serve.py): build/host/llmctl serves stories260K on a free
# 127.0.0.1 port; endpoints, greedy parity with the shell, hostile input.
.PHONY: test-serve
test-serve: $(B)/host/llmctl ## the HTTP API on 127.0.0.1: endpoints, streaming, shell parity, hostile clients
	@mkdir -p $(RESULTS)
	@tests/stage.sh serve timeout 300 python3 tests/host/serve.py $(B)/host/llmctl

# test-serve-tls: `serve --port 0` (attested TLS on 127.0.0.1) with swtpm as
# its attestation (tests/host/serve_tls.py): the TLS profile, the evidence
# binding the certificate's key, activate's refusals, hostile TLS. ~20 s.
.PHONY: test-serve-tls
test-serve-tls: $(B)/host/llmctl ## attested TLS on 127.0.0.1: profile, /v1/attestation binds the key, hostile TLS
	@mkdir -p $(RESULTS)
	@tests/stage.sh serve-tls timeout 300 python3 tests/host/serve_tls.py $(B)/host/llmctl
# Continuous batching (tests/host/serve_batch.py): six prompts at once, and
# one joining late, each equal to the shell's infer alone; stories260K and a
# random Q4_0 from mkmodel, resident and streamed.
.PHONY: test-serve-batch
test-serve-batch: $(B)/host/llmctl $(B)/host/mkmodel ## batched requests equal each alone (greedy): stories260K and random Q4_0, resident and streamed
	@mkdir -p $(RESULTS)
	@tests/stage.sh serve-batch timeout 600 python3 tests/host/serve_batch.py $(B)/host/llmctl $(B)/host/mkmodel

# The server under load (tests/host/serve_load.py, 127.0.0.1 only): 16
# clients for 60 s, every answer right, with hostile connections beside them
# (1,000 dropped, slowloris, oversized, truncated, a stream never read), RSS
# bounded, the console answering. make test's one long stage (~75 s).
.PHONY: test-serve-load
test-serve-load: $(B)/host/llmctl ## 16 clients for 60 s beside hostile connections: none lost, each answer right, RSS bounded, the console answers
	@mkdir -p $(RESULTS)
	@tests/stage.sh serve-load timeout 300 python3 tests/host/serve_load.py $(B)/host/llmctl 60
