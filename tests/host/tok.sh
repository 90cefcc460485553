#!/bin/sh
# tests/host/tok.sh LLMCTL — the tokenize / detokenize shell commands end to
# end: every case of llama.cpp's vocabulary tests (../shared/testdata/vocab)
# and of the vocabularies tools/tok_vocabs.sh generates (tests/refs/tok)
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

# every case of the strings in $2 through vocabulary $1 against the ids in $3
vocab_cases() {
	rm -f "$T"/case*
	# one file per case: records separated by "\n__ggml_vocab_test__\n"
	awk -v RS='\n__ggml_vocab_test__\n' -v d="$T" \
		'{ f = sprintf("%s/case%04d", d, NR - 1); printf "%s", $0 > f; close(f) }' "$2"
	echo "load --vocab-only 0" > "$T/cmds"
	for c in "$T"/case*; do
		esc=$(od -An -tx1 -v "$c" | tr -d ' \n' | sed 's/\(..\)/\\x\1/g')
		printf 'tokenize "%s" --no-special --no-parse-special\n' "$esc" >> "$T/cmds"
	done
	run --disk "$1" < "$T/cmds" | tail -n +2 > "$T/got"
	sed 's/^ *//' "$3" > "$T/want"
	if cmp -s "$T/got" "$T/want"; then
		ok "tokenize: every case of $4 ($(wc -l < "$T/want") cases)"
	else
		bad "tokenize: every case of $4" "$(diff "$T/want" "$T/got" | head -10)"
	fi
}

[ -d "$TD/vocab" ] || skip_data "tokenize: every vocabulary's cases" "no $TD/vocab"
for g in "$TD"/vocab/*.gguf; do
	[ -f "$g" ] || continue # no vocabulary at all: said above
	name=$(basename "$g" .gguf)
	if [ ! -f "$g.inp" ] || [ ! -f "$g.out" ]; then
		skip_data "tokenize: every case of $name" "no $g.inp or $g.out"
		continue
	fi
	vocab_cases "$g" "$g.inp" "$g.out" "$name"
done

# the vocabularies tools/tok_vocabs.sh generates, against tests/refs/tok's ids
GEN=${LLMK_TOKVOCAB:-build/tokvocab}
for r in tests/refs/tok/*.gguf.out; do
	name=$(basename "$r" .gguf.out)
	if [ ! -f "$GEN/$name.gguf" ]; then
		skip_data "tokenize: every case of $name" "no $GEN/$name.gguf (make tok-vocabs; needs npm)"
	elif [ ! -f "$TD/vocab/ggml-vocab-gpt-2.gguf.inp" ]; then
		skip_data "tokenize: every case of $name" "no $TD/vocab/ggml-vocab-gpt-2.gguf.inp"
	elif [ -f "$GEN/$name.gguf.inp" ]; then # its own strings (special-texts)
		vocab_cases "$GEN/$name.gguf" "$GEN/$name.gguf.inp" "$r" "$name"
	else
		vocab_cases "$GEN/$name.gguf" "$TD/vocab/ggml-vocab-gpt-2.gguf.inp" "$r" "$name"
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
