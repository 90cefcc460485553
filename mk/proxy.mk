# mk/proxy.mk — the client of attested TLS (docs/tls.md): `llmctl proxy` and
# `verifier tls` against the host build's `serve --port 0` (the SEV-SNP
# simulator's evidence), refusals of another image, another model, replayed
# evidence and a stranger's key; the openai npm package when npm is there
# (tests/host/proxy.py, about 10 s once build/npm-openai is installed).
.PHONY: test-proxy-host
test-proxy-host: $(B)/host/llmctl $(B)/host/verifier $(B)/host/mkevidence $(B)/host/tlscert ## llmctl proxy + verifier tls vs the host's attested TLS: chat parity, refusals, openai npm
	@mkdir -p $(RESULTS)
	@tests/stage.sh proxy-host timeout 600 python3 tests/host/proxy.py $(B)/host/llmctl \
		$(B)/host/verifier $(B)/host/mkevidence $(B)/host/tlscert
TEST_STAGES += test-proxy-host
