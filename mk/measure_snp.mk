# mk/measure_snp.mk — the offline SEV-SNP launch digest: tools/verify/*.c
# linked into build/<flavor>/verifier and into the unit tests, and the
# test-measure-snp stage (tests/verify/measure_snp.py drives
# `verifier measure snp` over ../shared/testdata/attest/snp-measure).
#
# The flavors' link rules ($(B)/<flavor>/% and unittest) take these objects
# through $^; they come after libllmk.a there, so tools/verify/ code calls
# libc and BearSSL only, nothing of libllmk.a's.
VERIFY_SRC := $(sort $(wildcard tools/verify/*.c))
$(foreach f,host host-asan,$(eval $(B)/$(f)/verifier $(B)/$(f)/unittest: \
	$(patsubst %.c,$(B)/$(f)/obj/%.o,$(VERIFY_SRC))))

.PHONY: test-measure-snp
test-measure-snp: $(B)/host/verifier ## verifier measure snp: every case of attest/snp-measure/expected.json, changed inputs, bad input
	@mkdir -p $(RESULTS)
	@tests/stage.sh measure-snp python3 tests/verify/measure_snp.py $(B)/host/verifier
TEST_STAGES += test-measure-snp
