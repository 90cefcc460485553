#!/bin/sh
# tests/host/infer.sh LLMCTL — the engine through the real build/host/llmctl
# binary: for every stories260K reference prompt (F32 and F16),
#   llmctl --disk FILE -c 'load 0' -c 'infer "PROMPT" -n 64 --temp 0 --ids'
# must end with the reference ids; then packed = unpacked = streamed on
# synthetic models (no reference data needed). Ends with
# "N passed, N failed, N skipped" (tests/lib.sh).
. "$(dirname "$0")/../lib.sh"
llmctl=${1:-build/host/llmctl}
td=${LLMK_TESTDATA:-../shared/testdata}/stories260K
cases=$(mktemp) || exit 1
model=$(mktemp) || exit 1
trap 'rm -f "$cases" "$model"' EXIT
if [ ! -f "$td/refs-F32.jsonl" ]; then
	skip_data "stories260K references and bench --batch" "no stories260K reference data in $td"
else
	for pair in stories260K.gguf:refs-F32.jsonl stories260K-F16.gguf:refs-F16.jsonl; do
		gguf=${pair%%:*} refs=${pair#*:}
		# one "PROMPT<TAB>ids: ..." line per reference
		python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r["prompt"] + "\t" + "ids: " + " ".join(map(str, r["tokens"])))
' "$td/$refs" > "$cases" || exit 1
		while IFS="$(printf '\t')" read -r prompt want; do
			got=$(LLMK_CPUS=1 "$llmctl" --disk "$td/$gguf" -c 'load 0' \
				-c "infer \"$prompt\" -n 64 --temp 0 --ids" </dev/null | grep '^ids:')
			check "$gguf: $prompt" "$got" "$want"
		done < "$cases"
	done
	# bench --batch: sequences decoding together, a table row and the
	# shared-pass line; too many sequences for the context is one error
	# line, and the shell keeps serving
	out=$("$llmctl" --disk "$td/stories260K.gguf" -c 'config ctx 64' -c 'load 0' \
		-c 'bench -p 0 -n 8 -r 1 --batch 4' </dev/null 2>&1)
	case "$out" in
	*"tg8 x4 seqs |"*"decode: 4 sequences share each pass"*) ok "bench --batch 4" ;;
	*) bad "bench --batch 4" "$out" ;;
	esac
	out=$(printf 'config ctx 64\nload 0\nbench -p 0 -n 32 --batch 4\nuptime\n' |
		"$llmctl" --disk "$td/stories260K.gguf" 2>&1)
	if [ "$(echo "$out" | grep -c '^error: bench: --batch 4 -n 32: each sequence gets 16 of the 64')" = 1 ] &&
		echo "$out" | grep -q '^up '; then
		ok "bench --batch past the context: one error, keeps serving"
	else
		bad "bench --batch past the context" "$out"
	fi
fi
# Packed weights (config pack, on by default) change the layout, never the
# answer: small synthetic quantized models give the same greedy ids packed,
# unpacked and streamed. What gets packed is the engine's to say: `info`
# names the types it packed, which must be the model's types (its quant
# mix) that `version` says this CPU packs, and none with pack off.
mkmodel=$(dirname "$llmctl")/mkmodel
packs=$("$llmctl" -c version </dev/null | sed -n 's/^  packs  *//p')
[ -n "$packs" ] || bad "version names the packed types" "$("$llmctl" -c version </dev/null 2>&1)"
case "$packs" in none*) packs= ;; esac
# "  packed         753.00 KiB of the weights (Q4_0 Q6_K), ..." -> "Q4_0 Q6_K"
packed() { echo "$1" | sed -n 's/^  packed  *[^(]*(\([^)]*\)).*/\1/p'; }
for t in Q4_0 Q4_K_M Q8_0 IQ4_NL IQ4_XS; do
	"$mkmodel" --layers 2 --dim 256 --ffn 512 --heads 4 --kv-heads 2 --vocab 512 \
		--type $t -o "$model" >/dev/null || exit 1
	ids() {
		"$llmctl" --disk "$model" -c "$1" -c "load $2 0" -c info \
			-c 'infer "Once upon a time" -n 24 --temp 0 --ids' </dev/null 2>&1
	}
	on=$(ids 'config pack on' --resident) off=$(ids 'config pack off' --resident)
	st=$(ids 'config pack on' --stream)
	a=$(echo "$on" | grep '^ids:') b=$(echo "$off" | grep '^ids:') c=$(echo "$st" | grep '^ids:')
	# "  quant mix      F32 x5 (5.00 KiB) Q4_0 x15 (720.00 KiB) ..." -> its
	# types that this CPU packs
	want=
	for m in $(echo "$on" | sed -n 's/^  quant mix *//p' | grep -oE '[A-Za-z0-9_]+ x[0-9]+' | cut -d' ' -f1); do
		case " $packs " in *" $m "*) want="$want${want:+ }$m" ;; esac
	done
	got=$(packed "$on")
	if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] &&
		echo "$st" | grep -q 'streaming' && [ "$got" = "$want" ] && [ -z "$(packed "$off")" ]; then
		ok "$t: packed = unpacked = streamed (packed: ${got:-none}; this CPU packs: ${packs:-none})"
	else
		bad "$t: packed, unpacked and streamed give the same ids; packed: '$want' (got '$got')" \
			"$(printf '%s\n' "$on" "$off" "$st" | grep -E '^ids:|^  (packed|quant mix|plan) |^error')"
	fi
done
# A streamed model is read round the page cache by default (O_DIRECT, or
# the page cache where the filesystem refuses it, which `stats` names);
# --no-direct keeps the cache, and so does a resident model (no line).
reads() {
	"$llmctl" $1 --disk "$model" -c "load $2 0" -c 'infer "Once" -n 4 --temp 0' -c stats \
		</dev/null 2>&1 | sed -n 's/^  reads  *//p'
}
r=$(reads '' --stream)
case "$r" in
"direct (O_DIRECT, the default while streaming)"|"page cache (the filesystem refused O_DIRECT"*)
	ok "streaming reads by default: $r" ;;
*) bad "streaming reads round the page cache by default" "reads: '$r'" ;;
esac
check "streaming reads with --no-direct" "$(reads --no-direct --stream)" "page cache (--no-direct)"
check "a resident model has no reads line" "$(reads '' --resident)" ""
summary
