# mk/session.mk — the confidential session (docs/session.md): its test
# stages and `make run SESSION=1`.
#
# test-session-host: build/host/llmctl as the guest (the SEV-SNP simulator
# attests it) behind tests/qemu/relay.py, `llmctl --connect` as the client:
# output and exit status as the local llmctl's, no plaintext on the line,
# the refusals, require-session. About 40 s.
.PHONY: test-session-host
test-session-host: $(B)/host/llmctl $(B)/host/mkevidence $(B)/host/seal ## sessions on the host: same output as llmctl, nothing in clear, tampering refused
	@mkdir -p $(RESULTS)
	@tests/stage.sh session-host python3 tests/host/session.py $(B)/host/llmctl \
		$(B)/host/mkevidence $(B)/host/seal

# `make run SESSION=1`: the same boot with a vTPM (TPM=1 implied), the
# serial line on a unix socket whose raw output bytes QEMU logs to
# build/serial.log (what the host sees), and build/host/llmctl --connect
# on it with the PCR4 `verifier measure pcr4` computes for the image
# (tests/qemu/qemu.py --session); stdin and the exit status pass through.
SESSION ?=
ifeq ($(SESSION),1)
ifneq ($(TPM),1)
QEMU_PY += --tpm $(B)/tpm
endif
QEMU_PY += --session $(B)/host/llmctl --verifier $(B)/host/verifier --serial-log $(B)/serial.log
run: $(B)/host/llmctl $(B)/host/verifier
endif

# test-qemu-session: the kernel under QEMU with a vTPM, its serial line on a
# logged socket behind tests/qemu/relay.py: a session verified, a key
# unsealed in it, infer and chat, nothing in clear, each attack refused and
# the kernel serving on. One boot, about a minute.
.PHONY: test-qemu-session
test-qemu-session: $(B)/host/llmctl $(B)/host/verifier $(B)/host/seal $(B)/host/mkevidence ## QEMU+swtpm: a confidential session end to end, nothing in clear on the serial line, attacks refused
	@$(MAKE) --no-print-directory ARCH=x86_64 $(B)/x86_64/esp.img
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-session python3 tests/qemu/test_session.py --esp $(B)/x86_64/esp.img \
		--llmctl $(B)/host/llmctl --verifier $(B)/host/verifier --seal $(B)/host/seal \
		--mkevidence $(B)/host/mkevidence \
		--workdir $(B)/qemu-session
