# mk/net.mk — the network door's QEMU stages (docs/network.md, docs/tls.md),
# x86_64 and aarch64: a virtio-net device on QEMU's user network, hostfwd on
# 127.0.0.1 only; DHCP, `serve` over attested TLS answering a python3 ssl
# client (shell parity, /v1/attestation with swtpm: PUBKEY = K, garbage
# TLS), `config net` (tests/qemu/test_net.py).
# Bounded: every wait
# in the test has a deadline and the whole stage a timeout. `make run
# NET=1` is in mk/efi.mk, beside QEMU_ARGS.
.PHONY: test-qemu-net
test-qemu-net: ## QEMU x86_64: virtio-net, DHCP, the HTTPS API through hostfwd (TLS, shell parity)
	@$(MAKE) --no-print-directory ARCH=x86_64 $(B)/x86_64/esp.img
	@tests/stage.sh qemu-net timeout 600 python3 tests/qemu/test_net.py --arch x86_64 \
		--esp $(B)/x86_64/esp.img

.PHONY: test-qemu-net-aarch64
test-qemu-net-aarch64: ## QEMU aarch64: the same network test (AAVMF, TCG)
	@$(MAKE) --no-print-directory ARCH=aarch64 $(B)/aarch64/esp.img
	@tests/stage.sh qemu-net-aarch64 timeout 900 python3 tests/qemu/test_net.py --arch aarch64 \
		--esp $(B)/aarch64/esp.img
