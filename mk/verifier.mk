# mk/verifier.mk — build/host/verifier (tools/verifier.c dispatches to
# tools/verify/cmd_*.c) and its test stages. The tools/verify objects go
# into each host flavor's libllmk.a (host, host-asan), so they link into
# the verifier and into both unit test binaries (tests/unit/test_verify_*.c
# test the same code) while llmctl, which calls none of them, pulls nothing.
# (A separate archive after libllmk.a would leave its calls into shell/,
# the evidence bundle and the key wrap, unresolved.)
VERIFY_SRC := $(sort $(wildcard tools/verify/*.c))
$(B)/host/libllmk.a: $(patsubst %.c,$(B)/host/obj/%.o,$(VERIFY_SRC))
$(B)/host-asan/libllmk.a: $(patsubst %.c,$(B)/host-asan/obj/%.o,$(VERIFY_SRC))

# The PCR4 `verifier measure pcr4` predicts, against swtpm's PCR4 after OVMF
# booted the image in QEMU (tests/verify/pcr4_qemu.py; one boot).
.PHONY: test-verifier-pcr4
test-verifier-pcr4: $(B)/host/verifier ## QEMU+swtpm: PCR4 after OVMF boots llmk.efi equals `verifier measure pcr4`
	@$(MAKE) --no-print-directory ARCH=x86_64 $(B)/x86_64/esp.img
	@mkdir -p $(RESULTS)
	@$(B)/host/verifier measure pcr4 $(B)/x86_64/llmk.efi
	@tests/stage.sh verifier-pcr4 python3 tests/verify/pcr4_qemu.py --esp $(B)/x86_64/esp.img \
		--efi $(B)/x86_64/llmk.efi --verifier $(B)/host/verifier --workdir $(B)/verify-pcr4
