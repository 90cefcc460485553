# mk/shell.mk — the shell's command tables are weak references in shell.c
# (see shell/shell.h); a weak reference does not pull a member out of
# libllmk.a, so every table some shell/*.c defines is named undefined on the
# host link lines (a table nobody defines yet must not be: it stays weak).
SHELL_TABLES := $(sort $(shell sed -n 's/^const struct shell_\(cmd\|config_key\) \(shell_[a-z0-9_]*\)\[\] = {$$/\2/p' shell/*.c))
SHELL_UNDEF := $(foreach t,$(SHELL_TABLES),-Wl,--undefined=$(t))
host_LDFLAGS += $(SHELL_UNDEF)
host-asan_LDFLAGS += $(SHELL_UNDEF)

.PHONY: test-llmctl
test-llmctl: $(B)/host/llmctl ## build/host/llmctl end to end: pipes, -c, exit codes, bad inputs, disks hash vs sha256sum
	@mkdir -p $(RESULTS)
	@tests/stage.sh llmctl tests/host/llmctl.sh $(B)/host/llmctl
TEST_STAGES += test-llmctl
