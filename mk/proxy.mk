# mk/proxy.mk — the client of attested TLS (docs/tls.md): `llmctl proxy` and
# `verifier tls` against the host build's `serve --port 0` (the SEV-SNP
# simulator's evidence), refusals of another image, another model, replayed
# evidence and a stranger's key; the openai npm package when npm is there
# (tests/host/proxy.py, about 10 s once build/npm-openai is installed).
.PHONY: test-proxy-host
test-proxy-host: $(B)/host/llmctl $(B)/host/verifier $(B)/host/mkevidence $(B)/host/tlscert ## llmctl proxy + verifier tls vs the host's attested TLS: chat parity, refusals, openai npm
	@mkdir -p $(RESULTS)
	@tests/stage.sh proxy-host timeout 600 python3 tests/host/proxy.py $(B)/host/llmctl \
		$(B)/host/verifier $(B)/host/mkevidence $(B)/host/tlscert
TEST_STAGES += test-proxy-host

# One QEMU boot (x86_64: the kernel's vTPM) with NET=1's network: the guest
# serves attested TLS, verifier tls and llmctl proxy attest it (vtpm, the
# credential activated), a chat through the proxy (tests/qemu/test_proxy.py).
.PHONY: test-qemu-proxy
test-qemu-proxy: $(B)/host/llmctl $(B)/host/verifier ## QEMU+swtpm+net: the guest's attested TLS through verifier tls and llmctl proxy, one chat
	@$(MAKE) --no-print-directory ARCH=x86_64 $(B)/x86_64/esp.img
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-proxy timeout 600 python3 tests/qemu/test_proxy.py --esp $(B)/x86_64/esp.img \
		--llmctl $(B)/host/llmctl --verifier $(B)/host/verifier --workdir $(B)/qemu-proxy
TEST_STAGES += test-qemu-proxy
