#!/bin/sh
# tests/host/infer.sh LLMCTL — the engine through the real build/host/llmctl
# binary: for every stories260K reference prompt (F32 and F16),
#   llmctl --disk FILE -c 'load 0' -c 'infer "PROMPT" -n 64 --temp 0 --ids'
# must end with the reference ids. Ends with "N passed, N failed, N skipped".
llmctl=${1:-build/host/llmctl}
td=${LLMK_TESTDATA:-../shared/testdata}/stories260K
pass=0 fail=0 skip=0
cases=$(mktemp) || exit 1
trap 'rm -f "$cases"' EXIT
if [ ! -f "$td/refs-F32.jsonl" ]; then
	echo "skip: no stories260K reference data in $td"
	[ "$LLMK_REQUIRE_TESTDATA" = 1 ] && fail=1 || skip=1
	echo "$pass passed, $fail failed, $skip skipped"
	[ $fail = 0 ]; exit
fi
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
		if [ "$got" = "$want" ]; then
			pass=$((pass + 1)); echo "ok   $gguf: $prompt"
		else
			fail=$((fail + 1)); echo "FAIL $gguf: $prompt"
			echo "     want $want"; echo "     got  $got"
		fi
	done < "$cases"
done
# bench --batch: sequences decoding together, a table row and the shared-pass
# line; too many sequences for the context is one error line, and the shell
# keeps serving
out=$("$llmctl" --disk "$td/stories260K.gguf" -c 'config ctx 64' -c 'load 0' \
	-c 'bench -p 0 -n 8 -r 1 --batch 4' </dev/null 2>&1)
case "$out" in
*"tg8 x4 seqs |"*"decode: 4 sequences share each pass"*)
	pass=$((pass + 1)); echo "ok   bench --batch 4" ;;
*) fail=$((fail + 1)); echo "FAIL bench --batch 4"; echo "$out" | sed 's/^/     /' ;;
esac
out=$(printf 'config ctx 64\nload 0\nbench -p 0 -n 32 --batch 4\nuptime\n' |
	"$llmctl" --disk "$td/stories260K.gguf" 2>&1)
if [ "$(echo "$out" | grep -c '^error: bench: --batch 4 -n 32: each sequence gets 16 of the 64')" = 1 ] &&
	echo "$out" | grep -q '^up '; then
	pass=$((pass + 1)); echo "ok   bench --batch past the context: one error, keeps serving"
else
	fail=$((fail + 1)); echo "FAIL bench --batch past the context"; echo "$out" | sed 's/^/     /'
fi
# Packed weights (config pack, on by default) change the layout, never the
# answer: small synthetic quantized models give the same greedy ids packed,
# unpacked and streamed; on a CPU with AVX-512 VNNI, info says what it packed.
mkmodel=$(dirname "$llmctl")/mkmodel
model=$(mktemp) || exit 1
trap 'rm -f "$cases" "$model"' EXIT
vnni=0
grep -q 'avx512_vnni' /proc/cpuinfo 2>/dev/null && vnni=1
# LLMK_CPU_MASK hides features /proc/cpuinfo still lists: then only Q8_0's
# count (packed with AVX-512 VNNI alone) is not known here
masked=${LLMK_CPU_MASK:+1}
for t in Q4_0 Q4_K_M Q8_0; do
	"$mkmodel" --layers 2 --dim 256 --ffn 512 --heads 4 --kv-heads 2 --vocab 512 \
		--type $t -o "$model" >/dev/null || exit 1
	ids() {
		"$llmctl" --disk "$model" -c "$1" -c "load $2 0" -c info \
			-c 'infer "Once upon a time" -n 24 --temp 0 --ids' </dev/null 2>&1
	}
	on=$(ids 'config pack on' --resident) off=$(ids 'config pack off' --resident)
	st=$(ids 'config pack on' --stream)
	a=$(echo "$on" | grep '^ids:') b=$(echo "$off" | grep '^ids:') c=$(echo "$st" | grep '^ids:')
	packed=$(echo "$on" | grep -c '^  packed ')
	if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] &&
		echo "$st" | grep -q 'streaming' && { [ "$packed" = "$vnni" ] || { [ "$masked" = 1 ] && [ $t = Q8_0 ]; }; } &&
		[ "$(echo "$off" | grep -c '^  packed ')" = 0 ]; then
		pass=$((pass + 1)); echo "ok   $t: packed = unpacked = streamed (packed: $packed)"
	else
		fail=$((fail + 1)); echo "FAIL $t: packed, unpacked and streamed differ"
		echo "$on" "$off" "$st" | sed 's/^/     /'
	fi
done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
