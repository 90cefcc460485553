# mk/seal.mk — sealed model images: build/host/seal end to end (tests/seal/seal.sh).
.PHONY: test-seal
test-seal: $(B)/host/seal $(B)/host/llmctl $(B)/host/mkmodel ## build/host/seal end to end: keygen, seal, inspect, unseal, damaged images; shell unseal + disks
	@mkdir -p $(RESULTS)
	@tests/stage.sh seal tests/seal/seal.sh $(B)/host/seal $(B)/host/llmctl

# The kernel reading sealed models (one QEMU boot, x86_64).
.PHONY: test-qemu-seal
test-qemu-seal: $(B)/host/seal ## QEMU: sealed model in the kernel equals plain; damaged image refused, kernel keeps serving
	@$(MAKE) --no-print-directory ARCH=x86_64 $(B)/x86_64/esp.img
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-seal python3 tests/seal/test_qemu_seal.py --arch x86_64 \
		--esp $(B)/x86_64/esp.img --seal $(B)/host/seal --workdir $(B)/qemu-seal
