# mk/session.mk — the confidential session (docs/session.md): its test
# stages and `make run SESSION=1`.
#
# test-session-host: build/host/llmctl as the guest (the SEV-SNP simulator
# attests it) behind tests/qemu/relay.py, `llmctl --connect` as the client:
# output and exit status as the local llmctl's, no plaintext on the line,
# the refusals, require-session. About 40 s.
.PHONY: test-session-host
test-session-host: $(B)/host/llmctl $(B)/host/mkevidence $(B)/host/seal ## sessions on the host: same output as llmctl, nothing in clear, tampering refused
	@mkdir -p $(RESULTS)
	@tests/stage.sh session-host python3 tests/host/session.py $(B)/host/llmctl \
		$(B)/host/mkevidence $(B)/host/seal
TEST_STAGES += test-session-host
