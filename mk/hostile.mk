# mk/hostile.mk — build/host/llmctl against hostile files and llama-cli
# habits (tests/host/hostile.sh, issue 18): file strings cleaned before
# printing, errors mid-reply, NUL in the config, unseal --forget and a key
# replacing another, models and load by id. Seconds.
.PHONY: test-llmctl-hostile
test-llmctl-hostile: $(B)/host/llmctl $(B)/host/mkmodel $(B)/host/seal ## llmctl vs hostile model files, configs and habits: one clean error line each
	@mkdir -p $(RESULTS)
	@tests/stage.sh llmctl-hostile tests/host/hostile.sh $(B)/host/llmctl
