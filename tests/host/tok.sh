#!/bin/sh
# tests/host/tok.sh LLMCTL — the tokenize / detokenize shell commands end to
# end: every case of llama.cpp's vocabulary tests (../shared/testdata/vocab)
# typed as a \xHH-escaped `tokenize` line must print llama.cpp's ids, plus
# BOS/EOS handling, detokenize and one error line per bad input.
# Ends "N passed, N failed, N skipped" (tests/lib.sh).
LLMCTL=${1:-build/host/llmctl}
TD=${LLMK_TESTDATA:-../shared/testdata}
T=${TMPDIR:-/tmp}/tok-test.$$
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
run() { timeout 120 "$LLMCTL" "$@"; }

[ -d "$TD/vocab" ] || skip_data "tokenize: every vocabulary's cases" "no $TD/vocab"
for g in "$TD"/vocab/*.gguf; do
	[ -f "$g" ] || continue # no vocabulary at all: said above
	name=$(basename "$g" .gguf)
	if [ ! -f "$g.inp" ] || [ ! -f "$g.out" ]; then
		skip_data "tokenize: every case of $name" "no $g.inp or $g.out"
		continue
	fi
	rm -f "$T"/case*
	# one file per case: records separated by "\n__ggml_vocab_test__\n"
	awk -v RS='\n__ggml_vocab_test__\n' -v d="$T" \
		'{ f = sprintf("%s/case%04d", d, NR - 1); printf "%s", $0 > f; close(f) }' "$g.inp"
	echo "load --vocab-only 0" > "$T/cmds"
	for c in "$T"/case*; do
		esc=$(od -An -tx1 -v "$c" | tr -d ' \n' | sed 's/\(..\)/\\x\1/g')
		printf 'tokenize "%s" --no-special --no-parse-special\n' "$esc" >> "$T/cmds"
	done
	run --disk "$g" < "$T/cmds" | tail -n +2 > "$T/got"
	sed 's/^ *//' "$g.out" > "$T/want"
	if cmp -s "$T/got" "$T/want"; then
		ok "tokenize: every case of $name ($(wc -l < "$T/want") cases)"
	else
		bad "tokenize: every case of $name" "$(diff "$T/want" "$T/got" | head -10)"
	fi
done

spm="$TD/vocab/ggml-vocab-llama-spm.gguf"
if [ -f "$spm" ]; then
	out=$(printf '%s\n' 'load --vocab-only 0' 'tokenize "Hello world"' 'tokenize "Hello world" --no-special' \
		'tokenize "<s>Hi"' 'tokenize "<s>Hi" --no-parse-special' 'detokenize 1 15043 3186' \
		'detokenize 15043 13 3186' | run --disk "$spm" | tail -n +2)
	want=$(printf '%s\n' '1 15043 3186' '15043 3186' '1 1 6324' '1 529 29879 29958 18567' \
		'<s> Hello world' 'Hello' ' world')
	check "tokenize adds BOS as the vocabulary says; parses special text; detokenize" "$out" "$want"
	printf '%s\n' 'load --vocab-only 0' 'detokenize 32000' 'detokenize x' 'tokenize' 'tokenize "a" --bogus' \
		'tokenize a b' 'tokenize "ok"' | run --disk "$spm" > "$T/out" 2>&1
	check "bad inputs: one error line each, the shell goes on" \
		"$(grep -c '^error: ' "$T/out"):$(tail -1 "$T/out")" "5:1 3431"
else
	skip_data "tokenize adds BOS as the vocabulary says; parses special text; detokenize" "no $spm"
	skip_data "bad inputs: one error line each, the shell goes on" "no $spm"
fi
out=$(printf 'tokenize "x"\ndetokenize 1\n' | run 2>&1)
check "no vocabulary loaded: one error line per command" "$(echo "$out" | grep -c '^error: .*no vocabulary loaded')" 2

summary
