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

# One QEMU boot (x86_64, swtpm, NET) whose llmk.cfg says `serve 8443` and
# whose only disk is a sealed stories260K: `verifier tls --release-key-file
# --load` (vtpm, the credential activated), a chat over TLS equal to the
# host's, the release event replayed by a second verifier tls
# (tests/qemu/test_tls_keys.py, about 15 s).
.PHONY: test-qemu-tls-keys
test-qemu-tls-keys: $(B)/host/llmctl $(B)/host/verifier $(B)/host/seal ## QEMU+swtpm+net: a sealed model's key released over attested TLS (vtpm), then a chat
	@$(MAKE) --no-print-directory ARCH=x86_64 $(B)/x86_64/esp.img
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-tls-keys timeout 600 python3 tests/qemu/test_tls_keys.py --esp $(B)/x86_64/esp.img \
		--llmctl $(B)/host/llmctl --verifier $(B)/host/verifier --seal $(B)/host/seal \
		--workdir $(B)/qemu-tls-keys

# The same boot on aarch64 (AAVMF, TCG; swtpm as tpm-tis-device, the kernel
# driving it over FIFO): about 15 s.
.PHONY: test-qemu-tls-keys-aarch64
test-qemu-tls-keys-aarch64: $(B)/host/llmctl $(B)/host/verifier $(B)/host/seal ## QEMU aarch64+swtpm (TIS)+net: the same key release over attested TLS, then a chat
	@$(MAKE) --no-print-directory ARCH=aarch64 $(B)/aarch64/esp.img
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-tls-keys-aarch64 timeout 900 python3 tests/qemu/test_tls_keys.py \
		--arch aarch64 --esp $(B)/aarch64/esp.img --llmctl $(B)/host/llmctl \
		--verifier $(B)/host/verifier --seal $(B)/host/seal --workdir $(B)/qemu-tls-keys-aarch64
