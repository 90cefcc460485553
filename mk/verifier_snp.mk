# mk/verifier_snp.mk — `verifier snp` and `verifier tdx` end to end on the
# real evidence in $(LLMK_TESTDATA)/attest (tests/host/verifier_snp_tdx.sh):
# every report and the quote verify, tampered copies are refused.
.PHONY: test-verifier-snp
test-verifier-snp: $(B)/host/verifier ## verifier snp/tdx: real SEV-SNP reports and TDX quote verify, tampered copies refused
	@mkdir -p $(RESULTS)
	@tests/stage.sh verifier-snp tests/host/verifier_snp_tdx.sh $(B)/host/verifier

# libFuzzer target for the verification library (rules for $(B)/fuzz/obj in
# mk/fuzz.mk); seeds: the real certificates, reports and quote, each behind
# the selector byte of its mode (0 PEM, 1 DER certificate, 2 SNP report,
# 3 TDX quote).
FUZZ_VERIFY_TIME ?= 30
FUZZ_VERIFY_SRC := $(addprefix tools/verify/,der.c pem.c roots.c sig.c snp_chain.c snp_report.c \
	tdx_quote.c vfy.c x509.c x509_chain.c) llm/codec.c tests/fuzz/fuzz_verify.c
$(B)/fuzz/fuzz_verify: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_VERIFY_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lbearssl

FUZZ_VERIFY_SEEDS := $(B)/fuzz/corpus/verify/.seeded
$(FUZZ_VERIFY_SEEDS):
	@mkdir -p $(@D)
	@A=$(LLMK_TESTDATA)/attest; if [ -d "$$A" ]; then \
		for f in $$A/snp/roots/*.pem $$A/tdx/pck_chain.pem; do \
			{ printf '\000'; cat $$f; } > $(@D)/seed-pem-$$(basename $$f); done; \
		for d in $$A/snp/*/; do n=$$(basename $$d); [ -f $$d/report.bin ] || continue; \
			{ printf '\001'; cat $$d/vcek.der; } > $(@D)/seed-der-$$n; \
			{ printf '\002'; cat $$d/report.bin; } > $(@D)/seed-snp-$$n; done; \
		{ printf '\003'; head -c 4935 $$A/tdx/quote_v4.bin; } > $(@D)/seed-tdx; fi
	@touch $@

.PHONY: test-fuzz-verify
test-fuzz-verify: $(B)/fuzz/fuzz_verify $(FUZZ_VERIFY_SEEDS) ## fuzz the SNP/TDX/X.509/PEM verifiers for FUZZ_VERIFY_TIME seconds (30)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-verify tests/fuzz/run.sh $(B)/fuzz/fuzz_verify $(B)/fuzz/corpus/verify $(FUZZ_VERIFY_TIME)
