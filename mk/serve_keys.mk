# mk/serve_keys.mk — a sealed model's key released over attested TLS
# (docs/tls.md, "Releasing a sealed model's key"; tests/host/serve_keys.py):
# the host's `serve --port 0` with a sealed stories260K, the SEV-SNP
# simulator's evidence and swtpm's PCR 23 (skipped, named, without swtpm);
# releases refused on plain HTTP, without or with a stale attestation, a
# wrong key, malformed bodies; `verifier tls --release-key-file --load`, the
# release measured, then a chat equal to the shell's. About 5 s.
.PHONY: test-serve-keys
test-serve-keys: $(B)/host/llmctl $(B)/host/verifier $(B)/host/seal $(B)/host/mkevidence ## sealed-model key released over attested TLS: refusals, measurement, chat parity
	@mkdir -p $(RESULTS)
	@tests/stage.sh serve-keys timeout 300 python3 tests/host/serve_keys.py $(B)/host/llmctl \
		$(B)/host/verifier $(B)/host/seal $(B)/host/mkevidence
