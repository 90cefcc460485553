#!/bin/sh
# tools/bench_grammar.sh [MODEL] [ROUNDS] — decode speed under a JSON
# grammar against the same run without it (docs/perf.md, docs/grammars.md).
#
# Each round, alternating: `infer -n N --ignore-eos --seed R` plain, then
# the same under JSON Lines (grammars/json.gbnf with root ::= object+, so the
# grammar never ends the run early), once sampled and once greedy (--temp 0:
# the model's argmax, the token a random-weight model's grammar refuses
# most). Prints each run's generation tok/s and, under the grammar, its
# share of the generation time (stats' grammar line: its own clock).
# Environment: N tokens (128), T threads (every CPU). llama.cpp's side, the
# same runs: node tools/bench_llamacpp_grammar.mjs build/llamacpp MODEL G T R.
model=${1:-build/models/tinyllama-Q4_0.gguf}
rounds=${2:-3}
llmctl=${LLMCTL:-build/host/llmctl}
n=${N:-128}        # tokens a run
threads=${T:-0}    # matmul threads (-t); 0: every CPU
tflag=; [ "$threads" = 0 ] || tflag="-t $threads"
g=$(mktemp) || exit 1
trap 'rm -f "$g"' EXIT
sed 's/^root   ::= object$/root   ::= object+/' grammars/json.gbnf > "$g"
run() { # seed, extra flags
	"$llmctl" --disk "$model" -c 'load 0' \
		-c "infer \"The answer:\" -n $n --ignore-eos --seed $1 $tflag $2" -c stats </dev/null 2>&1 |
		sed -n 's/^  generation .* \([0-9.]*\) tok\/s.*/\1/p; s/^  grammar  *\([0-9.]* ms\) (\([0-9.]*%\) of generation); \(.*\)/\2 of it (\1); \3/p' |
		tr '\n' ' '
}
for r in $(seq 1 "$rounds"); do
	for t in "" "--temp 0"; do
		echo "round $r ${t:-sampled}: plain $(run "$r" "$t")tok/s; json $(run "$r" "$t --grammar-file $g")"
	done
done
