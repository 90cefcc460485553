# test-circles: no two files call each other (the kernel, its drivers, the
# shell and its HTTP server, the engine, the host tools)
# (issue 31; tools/check_circles.sh says how a call is found).
.PHONY: test-circles
test-circles: ## no two files call each other: kernel, drivers, shell, llm, tools (grep-based)
	@tests/stage.sh circles sh tools/check_circles.sh
