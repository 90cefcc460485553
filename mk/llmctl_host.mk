# mk/llmctl_host.mk — what tools/host/main.c and plat.c do with the files
# they are given (tests/host/llmctl_files.sh), and the ASan/UBSan llmctl's
# exit status (tests/host/llmctl_exit.sh): both take a few seconds.
.PHONY: test-llmctl-files
test-llmctl-files: $(B)/host/llmctl ## llmctl --disk/--config of a FIFO, directory, device or socket: one error line at once; block devices are disks
	@mkdir -p $(RESULTS)
	@tests/stage.sh llmctl-files tests/host/llmctl_files.sh $(B)/host/llmctl

.PHONY: test-llmctl-asan
test-llmctl-asan: $(B)/host-asan/llmctl $(B)/host/mkmodel ## the ASan/UBSan llmctl: sessions exit 0 with no report, a failing -c command 1, bad arguments 2
	@mkdir -p $(RESULTS)
	@ASAN_OPTIONS=detect_leaks=1 tests/stage.sh llmctl-asan tests/host/llmctl_exit.sh \
		$(B)/host-asan/llmctl $(B)/host/mkmodel
