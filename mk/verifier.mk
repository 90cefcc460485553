# mk/verifier.mk — build/host/verifier (tools/verifier.c dispatches to
# tools/verify/cmd_*.c) and its test stages. The tools/verify objects go
# into each host flavor's libllmk.a (host, host-asan), so they link into
# the verifier and into both unit test binaries (tests/unit/test_verify_*.c
# test the same code) while llmctl, which calls none of them, pulls nothing.
VERIFY_SRC := $(sort $(wildcard tools/verify/*.c))
$(B)/host/libllmk.a: $(patsubst %.c,$(B)/host/obj/%.o,$(VERIFY_SRC))
$(B)/host-asan/libllmk.a: $(patsubst %.c,$(B)/host-asan/obj/%.o,$(VERIFY_SRC))
