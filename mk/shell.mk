# mk/shell.mk — the shell's test stages: build/host/llmctl end to end, and
# the line editor's fuzz target.

.PHONY: test-llmctl
test-llmctl: $(B)/host/llmctl ## build/host/llmctl end to end: pipes, -c, exit codes, bad inputs, disks hash vs sha256sum
	@mkdir -p $(RESULTS)
	@tests/stage.sh llmctl tests/host/llmctl.sh $(B)/host/llmctl
TEST_STAGES += test-llmctl

# libFuzzer target for the line editor and word splitter (rules for
# $(B)/fuzz/obj in mk/fuzz.mk); seeds: lines with quotes, escapes, keys.
FUZZ_SHELL_TIME ?= 20
FUZZ_SHELL_SRC := shell/line.c shell/args.c kernel/fmt.c tools/host/plat.c $(PLAT_COMMON_SRC) \
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
TEST_STAGES += test-fuzz-shell
