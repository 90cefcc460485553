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
