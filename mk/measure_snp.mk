# mk/measure_snp.mk — the offline SEV-SNP launch digest (tools/verify/
# snp_measure.c, linked as mk/verifier.mk says): the test-measure-snp stage
# (tests/verify/measure_snp.py drives `verifier measure snp` over
# ../shared/testdata/attest/snp-measure).
.PHONY: test-measure-snp
test-measure-snp: $(B)/host/verifier ## verifier measure snp: every case of attest/snp-measure/expected.json, changed inputs, bad input
	@mkdir -p $(RESULTS)
	@tests/stage.sh measure-snp python3 tests/verify/measure_snp.py $(B)/host/verifier
