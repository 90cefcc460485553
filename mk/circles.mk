# test-circles: no two files of the kernel and its drivers call each other
# (issue 31; tools/check_circles.sh says how a call is found).
.PHONY: test-circles
test-circles: ## no two kernel/driver files call each other (grep-based)
	@tests/stage.sh circles sh tools/check_circles.sh
