# mk/attest.mk — key release against attestation on the host build, end to
# end through the real binaries, with the SEV-SNP firmware simulator
# and then the TDX simulator as the provider (tests/host/attest_release.py):
# attest, verifier snp|tdx / wrap,
# unseal --wrapped, the sealed model's greedy ids, and the refusals.
.PHONY: test-attest-release
test-attest-release: $(B)/host/llmctl $(B)/host/verifier $(B)/host/seal $(B)/host/mkevidence ## attest (snp, tdx simulators) -> verifier wrap -> unseal --wrapped -> same greedy ids; refusals
	@mkdir -p $(RESULTS)
	@tests/stage.sh attest-release python3 tests/host/attest_release.py $(B)/host/llmctl \
		$(B)/host/verifier $(B)/host/seal $(B)/host/mkevidence
