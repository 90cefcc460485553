# mk/shell.mk — build/host/llmctl end to end (tests/host/llmctl.sh); the
# line editor's fuzz target is mk/fuzz.mk's.

.PHONY: test-llmctl
test-llmctl: $(B)/host/llmctl ## build/host/llmctl end to end: pipes, -c, exit codes, bad inputs, disks hash vs sha256sum
	@mkdir -p $(RESULTS)
	@tests/stage.sh llmctl tests/host/llmctl.sh $(B)/host/llmctl
