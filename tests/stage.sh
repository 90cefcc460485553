#!/bin/sh
# tests/stage.sh NAME CMD... — run one test stage whose output ends with
# "N passed, N failed[, N skipped]"; record the counts in build/results/NAME.
# A stage that crashes or prints no such line counts as one failure.
name=$1; shift
out=build/results/$name.log
mkdir -p build/results
# (a LLMK_CPU_MASK in the environment hides CPU features: the log says so)
echo "== $name: $*${LLMK_CPU_MASK:+ (LLMK_CPU_MASK=$LLMK_CPU_MASK)}"
"$@" 2>&1 | tee "$out"
rc=$?
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
s=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
[ -n "$p" ] || { p=0; f=1; echo "$name: no result line (exit $rc)"; }
[ -n "$s" ] || s=0
echo "$p $f $s" > "build/results/$name"
[ "$f" = 0 ]
