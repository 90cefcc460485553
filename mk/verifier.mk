# mk/verifier.mk — the evidence verification library (tools/verify/*.c) as
# an archive per host flavor, linked into build/<flavor>/verifier (the
# tools/%.c rule of the Makefile builds tools/verifier.c) and into the unit
# test runner, so tests/unit/test_verify_*.c test the same objects.
VERIFY_SRC := $(sort $(wildcard tools/verify/*.c))

define verify_flavor
$(B)/$(1)/libverify.a: $$(patsubst %.c,$(B)/$(1)/obj/%.o,$(VERIFY_SRC))
	@rm -f $$@
	ar rcD $$@ $$^
$(B)/$(1)/verifier: $(B)/$(1)/libverify.a
$(B)/$(1)/unittest: $(B)/$(1)/libverify.a
endef
$(foreach f,host host-asan,$(eval $(call verify_flavor,$(f))))
