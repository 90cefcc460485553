# mk/net.mk — the network door's QEMU stage (docs/network.md): a
# virtio-net device on QEMU's user network, hostfwd on 127.0.0.1 only;
# DHCP and the echo service (tests/qemu/test_net.py). Bounded: every wait
# in the test has a deadline and the whole stage a timeout. `make run
# NET=1` is in mk/efi.mk, beside QEMU_ARGS.
.PHONY: test-qemu-net
test-qemu-net: ## QEMU x86_64: virtio-net, lwIP's DHCP lease and a TCP echo through hostfwd
	@$(MAKE) --no-print-directory ARCH=x86_64 $(B)/x86_64/esp.img
	@tests/stage.sh qemu-net timeout 600 python3 tests/qemu/test_net.py --arch x86_64 \
		--esp $(B)/x86_64/esp.img
TEST_STAGES += test-qemu-net
