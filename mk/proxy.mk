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

# What the host sees of the records (tests/host/serve_sizes.py, ~10 s): a
# relay on the path writes down every TLS record's length; streamed tokens,
# whole answers and the proxy's requests must not show their text's length.
.PHONY: test-serve-sizes
test-serve-sizes: $(B)/host/llmctl $(B)/host/mkevidence ## TLS record lengths a host sees do not follow the tokens' or the prompt's text
	@mkdir -p $(RESULTS)
	@tests/stage.sh serve-sizes timeout 300 python3 tests/host/serve_sizes.py $(B)/host/llmctl \
		$(B)/host/mkevidence

# One QEMU boot (x86_64: the kernel's vTPM over CRB) with NET=1's network: the guest
# serves attested TLS, verifier tls and llmctl proxy attest it (vtpm, the
# credential activated), a chat through the proxy (tests/qemu/test_proxy.py).
.PHONY: test-qemu-proxy
test-qemu-proxy: $(B)/host/llmctl $(B)/host/verifier ## QEMU+swtpm+net: the guest's attested TLS through verifier tls and llmctl proxy, one chat
	@$(MAKE) --no-print-directory ARCH=x86_64 $(B)/x86_64/esp.img
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-proxy timeout 600 python3 tests/qemu/test_proxy.py --esp $(B)/x86_64/esp.img \
		--llmctl $(B)/host/llmctl --verifier $(B)/host/verifier --workdir $(B)/qemu-proxy

# The same on aarch64 (AAVMF, TCG): the vTPM is swtpm as tpm-tis-device,
# which the kernel drives over the FIFO interface (drivers/tpm_tis.c).
.PHONY: test-qemu-proxy-aarch64
test-qemu-proxy-aarch64: $(B)/host/llmctl $(B)/host/verifier ## QEMU aarch64+swtpm (TIS)+net: the same attested TLS through verifier tls and llmctl proxy
	@$(MAKE) --no-print-directory ARCH=aarch64 $(B)/aarch64/esp.img
	@mkdir -p $(RESULTS)
	@tests/stage.sh qemu-proxy-aarch64 timeout 900 python3 tests/qemu/test_proxy.py --arch aarch64 \
		--esp $(B)/aarch64/esp.img --llmctl $(B)/host/llmctl --verifier $(B)/host/verifier \
		--workdir $(B)/qemu-proxy-aarch64

# The proxy's HTTP reading (tools/host/http_msg.c) under libFuzzer: request
# and response heads, chunked bodies decoded in pieces of every size.
FUZZ_HTTP_MSG_TIME ?= 10
$(B)/fuzz/fuzz_http_msg: $(patsubst %.c,$(B)/fuzz/obj/%.o,tools/host/http_msg.c shell/http/http.c tests/fuzz/fuzz_http_msg.c)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^
FUZZ_HTTP_MSG_SEEDS := $(B)/fuzz/corpus/http_msg/.seeded
$(FUZZ_HTTP_MSG_SEEDS):
	@mkdir -p $(@D)
	@printf '\000POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n' > $(@D)/seed-1
	@printf '\001HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n' > $(@D)/seed-2
	@printf '\003a\r\ndata: {}\n\n\r\n1;x=y\r\nz\r\n0\r\nT: 1\r\n\r\n' > $(@D)/seed-3
	@touch $@
.PHONY: test-fuzz-http-msg
test-fuzz-http-msg: $(B)/fuzz/fuzz_http_msg $(FUZZ_HTTP_MSG_SEEDS) ## fuzz the proxy's HTTP heads and chunked decoding for FUZZ_HTTP_MSG_TIME seconds (10)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-http-msg tests/fuzz/run.sh $(B)/fuzz/fuzz_http_msg $(B)/fuzz/corpus/http_msg \
		$(FUZZ_HTTP_MSG_TIME)
