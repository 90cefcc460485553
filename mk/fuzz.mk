# mk/fuzz.mk — the fuzz build: libFuzzer targets (clang, ASan + UBSan) for
# the GGUF parser, the line editor and the tokenizers, run bounded by
# `make test`.
#
#   make test-fuzz               build, seed and run every target for FUZZ_TIME seconds
#   make test-fuzz FUZZ_TIME=600 a longer run
#
# A target links the engine sources it exercises plus the Linux platform
# (PLAT_HOST_SRC), all built with the fuzzing instrumentation. The corpus
# lives in build/fuzz/corpus/<target>: seeds are small real GGUFs (prefixes of
# the test vocabularies, tiny mkmodel models of several types, tiny byte-level
# BPE vocabularies from tests/fuzz/bpe_seeds.py); libFuzzer adds
# what it finds there, so later runs start from a richer corpus.

FUZZ_CC ?= clang
FUZZ_TIME ?= 60
FUZZ_CFLAGS := -std=gnu11 -O1 -g -Wall -Wno-unused-parameter -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -MMD -MP
FUZZ_GGUF_SRC := llm/gguf.c llm/reader.c llm/mem.c $(wildcard llm/tok*.c llm/unicode*.c) kernel/fmt.c \
	$(PLAT_HOST_SRC) $(PLAT_COMMON_SRC)
FUZZ_GGUF_OBJ := $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_GGUF_SRC) tests/fuzz/fuzz_gguf.c)

$(B)/fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(B)/fuzz/fuzz_gguf: $(FUZZ_GGUF_OBJ)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lpthread

-include $(shell find $(B)/fuzz/obj -name '*.d' 2>/dev/null)

FUZZ_SEEDS := $(B)/fuzz/corpus/gguf/.seeded
MKM := $(B)/host/mkmodel
$(FUZZ_SEEDS): $(MKM) tests/fuzz/bpe_seeds.py
	@mkdir -p $(@D)
	@python3 tests/fuzz/bpe_seeds.py $(@D)
	@for t in F32 F16 Q8_0 Q4_0 Q4_K Q6_K; do \
		$(MKM) --layers 1 --dim 32 --ffn 64 --heads 2 --kv-heads 1 --vocab 300 \
			--type $$t -o $(@D)/seed-mkm-$$t.gguf || exit 1; done
	@$(MKM) --arch qwen2 --layers 1 --dim 32 --ffn 64 --heads 4 --kv-heads 2 --vocab 300 \
		--type Q5_1 --tied -o $(@D)/seed-mkm-qwen2.gguf
	@if [ -d "$(LLMK_TESTDATA)/vocab" ]; then for f in $(LLMK_TESTDATA)/vocab/*.gguf; do \
		head -c 16384 $$f > $(@D)/seed-$$(basename $$f .gguf).prefix; done; fi
	@touch $@

.PHONY: test-fuzz fuzz-build
fuzz-build: $(B)/fuzz/fuzz_gguf $(B)/fuzz/fuzz_shell $(B)/fuzz/fuzz_tok $(B)/fuzz/fuzz_chat $(B)/fuzz/fuzz_jinja $(B)/fuzz/fuzz_json $(B)/fuzz/fuzz_http $(B)/fuzz/fuzz_tls ## build the libFuzzer targets (clang)

test-fuzz: $(B)/fuzz/fuzz_gguf $(FUZZ_SEEDS) ## fuzz the GGUF parser + tokenizer setup for FUZZ_TIME seconds (60)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz tests/fuzz/run.sh $(B)/fuzz/fuzz_gguf $(B)/fuzz/corpus/gguf $(FUZZ_TIME)


# The line editor and word splitter; seeds: lines with quotes, escapes, keys.
FUZZ_SHELL_TIME ?= 20
FUZZ_SHELL_SRC := shell/line.c shell/args.c kernel/fmt.c $(PLAT_HOST_SRC) $(PLAT_COMMON_SRC) \
	tests/fuzz/fuzz_shell.c
$(B)/fuzz/fuzz_shell: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_SHELL_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lpthread

FUZZ_SHELL_SEEDS := $(B)/fuzz/corpus/shell/.seeded
$(FUZZ_SHELL_SEEDS):
	@mkdir -p $(@D)
	@printf 'disks hash 0 0x10 4K\r\nhelp\n' > $(@D)/seed-1
	@printf 'infer "a\\"b\\\\c\\x41\\n" -n 5 --temp 0.7e-1\n' > $(@D)/seed-2
	@printf 'ab\033[A\033OB\177\025x\003y\tz\r\n\303\251\n\377\n' > $(@D)/seed-3
	@touch $@

.PHONY: test-fuzz-shell
test-fuzz-shell: $(B)/fuzz/fuzz_shell $(FUZZ_SHELL_SEEDS) ## fuzz the line editor and argument splitter for FUZZ_SHELL_TIME seconds (20)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-shell tests/fuzz/run.sh $(B)/fuzz/fuzz_shell $(B)/fuzz/corpus/shell $(FUZZ_SHELL_TIME)

# The tokenizers; seeds: each vocabulary's test strings, once per selector byte.
FUZZ_TOK_TIME ?= 30
FUZZ_TOK_SRC := $(sort $(wildcard llm/tok*.c llm/unicode*.c)) llm/gguf.c llm/reader.c llm/mem.c kernel/fmt.c \
	$(PLAT_HOST_SRC) $(PLAT_COMMON_SRC) tests/fuzz/fuzz_tok.c
$(B)/fuzz/fuzz_tok: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_TOK_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lpthread

FUZZ_TOK_SEEDS := $(B)/fuzz/corpus/tok/.seeded
$(FUZZ_TOK_SEEDS):
	@mkdir -p $(@D)
	@if [ -d "$(LLMK_TESTDATA)/vocab" ]; then i=0; for f in $(LLMK_TESTDATA)/vocab/*.inp; do \
		for s in 00 41 82 c3; do printf "\\x$$s" | cat - $$f | head -c 4096 > $(@D)/seed-$$i-$$s; done; \
		i=$$((i + 1)); done; fi
	@touch $@

.PHONY: test-fuzz-tok
test-fuzz-tok: $(B)/fuzz/fuzz_tok $(FUZZ_TOK_SEEDS) ## fuzz the tokenizers for FUZZ_TOK_TIME seconds (30)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-tok tests/fuzz/run.sh $(B)/fuzz/fuzz_tok $(B)/fuzz/corpus/tok $(FUZZ_TOK_TIME)

# chat --messages: the JSON reader and every chat template on what it reads.
FUZZ_CHAT_TIME ?= 20
FUZZ_CHAT_SRC := shell/json_msgs.c llm/chat.c kernel/fmt.c $(PLAT_HOST_SRC) $(PLAT_COMMON_SRC) \
	tests/fuzz/fuzz_chat.c
$(B)/fuzz/fuzz_chat: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_CHAT_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lpthread

FUZZ_CHAT_SEEDS := $(B)/fuzz/corpus/chat/.seeded
$(FUZZ_CHAT_SEEDS):
	@mkdir -p $(@D)
	@printf '\377[{"role":"system","content":"be brief"},{"role":"user","content":"caf\\u00e9 \\ud83d\\ude00"}]' > $(@D)/seed-1
	@printf '\004[{"role":"user","content":"  hi  ","name":{"a":[1,-2.5e3,true,null]}},{"role":"assistant","content":"x"},{"role":"tool","content":"y"}]' > $(@D)/seed-2
	@printf '\000[{"role":"assistant_tool_call","content":"<tool_call>"},{"role":"user","content":""}]' > $(@D)/seed-3
	@touch $@

.PHONY: test-fuzz-chat
test-fuzz-chat: $(B)/fuzz/fuzz_chat $(FUZZ_CHAT_SEEDS) ## fuzz chat --messages' JSON reader and the chat templates for FUZZ_CHAT_TIME seconds (20)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-chat tests/fuzz/run.sh $(B)/fuzz/fuzz_chat $(B)/fuzz/corpus/chat $(FUZZ_CHAT_TIME)

# The Jinja interpreter (llm/jinja*.c) on any template; seeds: llama.cpp's test
# cases' templates and, when the node-llama-cpp bundle was unpacked
# (tools/jinja_ref.sh), its models/templates.
FUZZ_JINJA_TIME ?= 20
FUZZ_JINJA_SRC := $(sort $(wildcard llm/jinja*.c)) kernel/fmt.c $(PLAT_HOST_SRC) $(PLAT_COMMON_SRC) \
	tests/fuzz/fuzz_jinja.c
$(B)/fuzz/fuzz_jinja: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_JINJA_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lpthread

FUZZ_JINJA_SEEDS := $(B)/fuzz/corpus/jinja/.seeded
$(FUZZ_JINJA_SEEDS): tests/unit/jinja_llama_cases.h tests/fuzz/jinja_seeds.py
	@python3 tests/fuzz/jinja_seeds.py tests/unit/jinja_llama_cases.h $(@D) $(B)/llamacpp-src/models/templates
	@touch $@

.PHONY: test-fuzz-jinja
test-fuzz-jinja: $(B)/fuzz/fuzz_jinja $(FUZZ_JINJA_SEEDS) ## fuzz the Jinja chat-template interpreter for FUZZ_JINJA_TIME seconds (20)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-jinja tests/fuzz/run.sh $(B)/fuzz/fuzz_jinja $(B)/fuzz/corpus/jinja $(FUZZ_JINJA_TIME)

# The API's JSON reader and HTTP request parser (shell/http/); seeds:
# requests and bodies as clients send them.
FUZZ_HTTP_TIME ?= 10
FUZZ_JSON_SRC := shell/http/json.c kernel/fmt.c $(PLAT_HOST_SRC) $(PLAT_COMMON_SRC) tests/fuzz/fuzz_json.c
FUZZ_HTTP_SRC := shell/http/http.c kernel/fmt.c $(PLAT_HOST_SRC) $(PLAT_COMMON_SRC) tests/fuzz/fuzz_http.c
$(B)/fuzz/fuzz_json: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_JSON_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lpthread
$(B)/fuzz/fuzz_http: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_HTTP_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lpthread

FUZZ_JSON_SEEDS := $(B)/fuzz/corpus/json/.seeded
$(FUZZ_JSON_SEEDS):
	@mkdir -p $(@D)
	@printf '{"messages":[{"role":"user","content":"caf\\u00e9 \\ud83d\\ude00"}],"temperature":0.7,"max_tokens":16,"stream":true,"stop":["\\n"],"logit_bias":{"42":-100},"seed":12345678901234567890}' > $(@D)/seed-1
	@printf '[1,-2.5e-3,0,true,false,null,{"a":{"b":[[]]}},"\\"\\\\\\/\\b\\f\\n\\r\\t"]' > $(@D)/seed-2
	@touch $@
FUZZ_HTTP_SEEDS := $(B)/fuzz/corpus/http/.seeded
$(FUZZ_HTTP_SEEDS):
	@mkdir -p $(@D)
	@printf 'POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}GET /health HTTP/1.1\r\n\r\n' > $(@D)/seed-1
	@printf 'GET /v1/models HTTP/1.0\nConnection: close\n\n' > $(@D)/seed-2
	@touch $@

.PHONY: test-fuzz-http test-fuzz-json
test-fuzz-json: $(B)/fuzz/fuzz_json $(FUZZ_JSON_SEEDS) ## fuzz the API's JSON reader and writer for FUZZ_HTTP_TIME seconds (10)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-json tests/fuzz/run.sh $(B)/fuzz/fuzz_json $(B)/fuzz/corpus/json $(FUZZ_HTTP_TIME)
test-fuzz-http: $(B)/fuzz/fuzz_http $(FUZZ_HTTP_SEEDS) ## fuzz the HTTP/1.1 request parser for FUZZ_HTTP_TIME seconds (10)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-http tests/fuzz/run.sh $(B)/fuzz/fuzz_http $(B)/fuzz/corpus/http $(FUZZ_HTTP_TIME)

# The API server's TLS transport (shell/http/tls.c) over a fake net whose
# reads are the fuzzer's bytes; seeds: a real client's first flight
# (python3 ssl), whole and cut. BearSSL is Debian's (not instrumented: the
# fuzzer steers by our pump, ASan watches both).
FUZZ_TLS_TIME ?= 10
FUZZ_TLS_SRC := shell/http/tls.c shell/http/tls_cert.c shell/http/der.c kernel/fmt.c \
	$(PLAT_HOST_SRC) $(PLAT_COMMON_SRC) tests/fuzz/fuzz_tls.c
$(B)/fuzz/fuzz_tls: $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_TLS_SRC))
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lbearssl -lpthread -lm
FUZZ_TLS_SEEDS := $(B)/fuzz/corpus/tls/.seeded
$(FUZZ_TLS_SEEDS):
	@mkdir -p $(@D)
	@python3 -c 'import ssl,sys; c=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT); c.check_hostname=False; \
		c.verify_mode=ssl.CERT_NONE; i,o=ssl.MemoryBIO(),ssl.MemoryBIO(); b=c.wrap_bio(i,o); \
		exec("try: b.do_handshake()\nexcept ssl.SSLWantReadError: pass"); h=o.read(); d=sys.argv[1]; \
		open(d+"/seed-1","wb").write(bytes([255])+h); open(d+"/seed-2","wb").write(bytes([0])+h); \
		open(d+"/seed-3","wb").write(bytes([7])+h[:len(h)//2])' $(@D)
	@touch $@
.PHONY: test-fuzz-tls
test-fuzz-tls: $(B)/fuzz/fuzz_tls $(FUZZ_TLS_SEEDS) ## fuzz the TLS transport under serve for FUZZ_TLS_TIME seconds (10)
	@mkdir -p $(RESULTS)
	@tests/stage.sh fuzz-tls tests/fuzz/run.sh $(B)/fuzz/fuzz_tls $(B)/fuzz/corpus/tls $(FUZZ_TLS_TIME)
