# mk/seal.mk — sealed model images: build/host/seal end to end (tests/seal/seal.sh).
.PHONY: test-seal
test-seal: $(B)/host/seal $(B)/host/llmctl $(if $(wildcard tools/mkmodel.c),$(B)/host/mkmodel) ## build/host/seal end to end: keygen, seal, inspect, unseal, damaged images; shell unseal + disks
	@mkdir -p $(RESULTS)
	@tests/stage.sh seal tests/seal/seal.sh $(B)/host/seal $(B)/host/llmctl
TEST_STAGES += test-seal
