# mk/verifier_bundle.mk — `verifier snp|tdx --evidence` and `verifier wrap`
# on llmk evidence bundles from the command line (tests/host/
# verifier_bundle.sh): SEV-SNP bundles from the firmware simulator through
# build/host/mkevidence (a test tool), the real TDX quote in a bundle.
.PHONY: test-verifier-bundle
test-verifier-bundle: $(B)/host/verifier $(B)/host/mkevidence ## verifier snp/tdx --evidence and wrap on simulated SNP bundles (SIMULATED), refusals
	@mkdir -p $(RESULTS)
	@tests/stage.sh verifier-bundle tests/host/verifier_bundle.sh $(B)/host/verifier $(B)/host/mkevidence
