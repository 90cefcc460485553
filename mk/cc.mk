# mk/cc.mk — confidential guests (SEV-ES/SNP, TDX): tests/unit/test_trap_entry.c
# assembles kernel/x86_64/entry.S with `.include`, which the compiler's
# dependency files do not see; say it here so an edit to entry.S rebuilds it.
$(B)/host/obj/tests/unit/test_trap_entry.o $(B)/host-asan/obj/tests/unit/test_trap_entry.o: \
	kernel/x86_64/entry.S
