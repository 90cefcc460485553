# shellcheck shell=sh
# tests/lib.sh — sourced by the shell test scripts (POSIX sh): the counters,
# one line per result, and the two kinds of skip, kept apart as in
# tests/unit/test.h:
#   skip_data NAME WHY          the reference data NAME needs is missing: a
#                               skip, or a failure when LLMK_REQUIRE_TESTDATA=1
#   skip_cpu NAME FEATURE WHY   this CPU (or LLMK_CPU_MASK) lacks FEATURE:
#                               always a skip, the feature named
# A path the CPU has is never skipped. `summary` prints the closing line
# "N passed, N failed, N skipped" and returns 0 when nothing failed.
pass=0 fail=0 skip=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "$2" ] && printf '%s\n' "$2" | sed 's/^/     /' | head -20; return 0; }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "want '$3', got '$2'"; fi; }

skip_data() {
	if [ "$LLMK_REQUIRE_TESTDATA" = 1 ]; then
		fail=$((fail + 1)); echo "FAIL $1: skipped but LLMK_REQUIRE_TESTDATA=1: $2"
	else
		skip=$((skip + 1)); echo "skip $1: $2"
	fi
}
skip_cpu() { skip=$((skip + 1)); echo "skip $1: CPU lacks $2: $3"; }

summary() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" = 0 ]; }
