#!/bin/sh
# tests/host/llmctl_exit.sh LLMCTL MKMODEL — llmctl's exit status means what
# it says in every build, the ASan/UBSan one included (where a leak report at
# exit used to turn every status into 1): whole sessions that succeed exit 0
# with nothing from a sanitizer on stderr; a failing -c command exits 1; bad
# arguments exit 2. Ends "N passed, N failed, N skipped" (tests/lib.sh).
LLMCTL=${1:-build/host-asan/llmctl}
MKMODEL=${2:-build/host/mkmodel}
T=$(mktemp -d "${TMPDIR:-/tmp}/llmctl-exit.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
run() { LLMK_CPUS=2 timeout 120 "$LLMCTL" "$@"; }

"$MKMODEL" --layers 2 --dim 64 --ffn 172 --vocab 512 --type Q8_0 -o "$T/m.gguf" > /dev/null ||
	{ bad "mkmodel writes a model" "$MKMODEL failed"; summary; exit 1; }
printf 'temp 0\n' > "$T/cfg"

# status NAME WANT [STDIN] -- ARGS...: the exit status, and no sanitizer
# report (ASan, LeakSanitizer, UBSan's "runtime error") on stderr.
status() {
	name=$1 want=$2 input=$3
	shift 4
	printf '%b' "$input" | run "$@" > "$T/out" 2> "$T/err"
	rc=$?
	check "$name: exit $want" "$rc" "$want"
	if grep -qE 'Sanitizer|runtime error:' "$T/err"; then
		bad "$name: no sanitizer report" "$(grep -E -m3 'Sanitizer|runtime error:|#[0-9] ' "$T/err")"
	else
		ok "$name: no sanitizer report"
	fi
}

status "-c: a model loaded, run, streamed, unloaded" 0 "" -- --disk "$T/m.gguf" --config "$T/cfg" \
	-c 'load --resident 0' -c 'infer "Once upon a time" -n 8' -c 'tokenize "hello"' \
	-c 'chat "hi" -n 4' -c stats -c unload -c 'load --stream 0' -c 'infer "Once" -n 4' -c info
status "piped session to the end of input" 0 'load 0\ninfer "Once" -n 4 --temp 0\nversion\n' -- \
	--disk "$T/m.gguf"
status "piped session ended by poweroff" 0 'load 0\ninfer "Once" -n 4 --temp 0\npoweroff\nversion\n' -- \
	--disk "$T/m.gguf"
status "poweroff from -c" 0 "" -- --disk "$T/m.gguf" -c 'load 0' -c poweroff
status "-c: a model left loaded at exit" 0 "" -- --disk "$T/m.gguf" -c 'load 0' -c 'infer "Once" -n 2'
status "--help" 0 "" -- --help
status "-c: an unknown command" 1 "" -- -c version -c nosuch -c version
check "-c stops at the failing command" "$(grep -c '^error: ' "$T/out"):$(grep -c '^llmk ' "$T/out")" 1:1
status "-c: a failing load" 1 "" -- -c 'load 0'
status "-c: an error after a model ran" 1 "" -- --disk "$T/m.gguf" -c 'load 0' \
	-c 'infer "Once" -n 2' -c 'infer "Once" --top-k nope'
status "an unknown argument" 2 "" -- --bogus
status "a missing disk" 2 "" -- --disk "$T/nonexistent" -c version
summary
