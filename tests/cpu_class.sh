#!/bin/sh
# tests/cpu_class.sh CLASS MASK "FEATURES" LLMCTL CMD... — run a test stage's
# command as CPU class CLASS (mk/cpu.mk): with LLMK_CPU_MASK=MASK, ANDed with
# a LLMK_CPU_MASK already set (that one stands for the machine). First prints
# what the engine sees under the mask (`llmctl version`: its features and the
# types it packs). FEATURES are the class's own, as `version` names them: if
# the machine lacks one, the class cannot be played here, and the stage is
# one skip naming what is missing (tests/lib.sh skip_cpu); CMD does not run.
. "$(dirname "$0")/lib.sh"
class=$1 mask=$2 needs=$3 llmctl=$4
shift 4
[ -n "$LLMK_CPU_MASK" ] && mask=$(printf '%X' $((0x$LLMK_CPU_MASK & 0x$mask)))
export LLMK_CPU_MASK=$mask
echo "cpu class $class: LLMK_CPU_MASK=$mask"
v=$("$llmctl" -c version </dev/null 2>&1)
feats=$(echo "$v" | sed -n 's/^  features *//p')
if [ -z "$feats" ]; then
	bad "llmctl version under LLMK_CPU_MASK=$mask" "$v"
	summary
	exit
fi
echo "$v" | grep -E '^  (features|packs) '
lack=
for f in $needs; do
	case " $feats " in *" $f "*) ;; *) lack="$lack${lack:+ }$f" ;; esac
done
if [ -n "$lack" ]; then
	skip_cpu "cpu class $class" "$lack" "this machine cannot play it (its own class runs unmasked)"
	summary
	exit
fi
exec "$@"
