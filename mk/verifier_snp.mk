# mk/verifier_snp.mk — `verifier snp` and `verifier tdx` end to end on the
# real evidence in $(LLMK_TESTDATA)/attest (tests/host/verifier_snp_tdx.sh):
# every report and the quote verify, tampered copies are refused.
.PHONY: test-verifier-snp
test-verifier-snp: $(B)/host/verifier ## verifier snp/tdx: real SEV-SNP reports and TDX quote verify, tampered copies refused
	@mkdir -p $(RESULTS)
	@tests/stage.sh verifier-snp tests/host/verifier_snp_tdx.sh $(B)/host/verifier
TEST_STAGES += test-verifier-snp
