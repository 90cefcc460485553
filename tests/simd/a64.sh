#!/bin/sh
# tests/simd/a64.sh UNITTEST [NAME...] — run the aarch64 unit test build
# (the tests whose name holds a NAME; all without) under qemu-aarch64 twice:
# with SDOT (the build's target reports DOTPROD) and with the plain NEON rows
# (LLMK_CPU_MASK clears DOTPROD, bit 17). Prints both runs and one total
# line "N passed, N failed, N skipped".
bin=$1
shift
command -v qemu-aarch64 >/dev/null || { echo "a64: qemu-aarch64 missing (tools/deps.sh installs qemu-user)"; exit 1; }
tmp=${bin%/*}
p=0 f=0 s=0
for run in dotprod plain; do
	mask=ffffffff
	[ $run = plain ] && mask=fffdffff
	LLMK_CPU_MASK=$mask timeout 300 qemu-aarch64 -cpu max "$bin" "$@" > "$tmp/$run.log" 2>&1
	echo "-- $run: LLMK_CPU_MASK=$mask (exit $?)"
	grep -Ev '^[0-9]+ passed' "$tmp/$run.log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/$run.log" | tail -1)
	[ -n "$line" ] || { f=$((f + 1)); continue; }
	# (read, not set --: "$@" still holds the test names for the next run)
	read -r lp _ lf _ ls _ <<EOF
$line
EOF
	p=$((p + lp)) f=$((f + lf)) s=$((s + ${ls:-0}))
done
echo "$p passed, $f failed, $s skipped"
