#!/bin/sh
# tests/summary.sh DIR — add up every stage's counts and print the closing line.
p=0; f=0; s=0
for r in "$1"/*; do
	case "$r" in *.log) continue ;; esac
	[ -f "$r" ] || continue
	read a b c < "$r"
	# only stage result files: three counts
	case "$a$b$c" in *[!0-9]*|'') continue ;; esac
	echo "  $(basename "$r"): $a passed, $b failed, $c skipped"
	p=$((p + a)); f=$((f + b)); s=$((s + c))
done
echo "$p passed, $f failed, $s skipped"
[ $f = 0 ] && [ $p -gt 0 ]
