#!/bin/sh
# tests/fuzz/run.sh FUZZER CORPUS SECONDS — run one libFuzzer target, bounded,
# and end with the stage line "N passed, N failed, N skipped" (1 passed: no
# crash). It needs neither reference data nor a CPU feature: it never skips.
fuzzer=$1 corpus=$2 secs=$3
log=build/fuzz/$(basename "$fuzzer").log
mkdir -p build/fuzz/crashes
"$fuzzer" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix=build/fuzz/crashes/ "$corpus" >"$log" 2>&1
rc=$?
grep -E '^stat::number_of_executed_units|^#[0-9]+ *DONE' "$log" | tail -2
if [ $rc = 0 ]; then
	echo "$(basename "$fuzzer"): no crash in ${secs}s"
	echo "1 passed, 0 failed, 0 skipped"
else
	tail -40 "$log"
	echo "$(basename "$fuzzer"): crash (exit $rc), input in build/fuzz/crashes/"
	echo "0 passed, 1 failed, 0 skipped"
fi
