#!/bin/sh
# tests/host/llmctl_files.sh LLMCTL — what llmctl opens by name (--disk,
# --config, `unseal --file`) is checked for its type without waiting on it:
# a FIFO (with or without a writer), a directory, a character device or a
# socket gets one line naming the path and what it is, promptly (under
# `timeout`: a hang fails, not stalls); regular files and block devices
# (a loop device, where this user may attach one) are disks. Ends
# "N passed, N failed, N skipped" (tests/lib.sh).
LLMCTL=${1:-build/host/llmctl}
T=$(mktemp -d "${TMPDIR:-/tmp}/llmctl-files.XXXXXX") || exit 1
loopdev=
cleanup() {
	exec 3>&- 2>/dev/null
	[ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
. "$(dirname "$0")/../lib.sh"
run() { timeout 10 "$LLMCTL" "$@"; }

mkfifo "$T/fifo"
mkdir "$T/dir"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/sock"
printf 'GGUF and then some\n' > "$T/file"
printf 'echo off\n' > "$T/cfg"

# refused OPTION PATH KIND TAIL: exit 2 at once, exactly one line on
# stderr, "llmctl: OPTION PATH: KIND, not a regular file TAIL".
refused() {
	run "$1" "$2" -c version > "$T/out" 2> "$T/err"
	rc=$?
	name="$1 of $3"
	[ "$rc" = 124 ] && { bad "$name: exits at once" "still waiting after 10 s"; return; }
	check "$name: exit 2" "$rc" 2
	check "$name: one line on stderr" "$(wc -l < "$T/err")" 1
	check "$name: the line names the path and what it is" "$(cat "$T/err")" \
		"llmctl: $1 $2: $3, not a regular file$4"
	check "$name: nothing runs" "$(wc -c < "$T/out")" 0
}

for opt in --disk --config; do
	[ "$opt" = --disk ] && tail=" or a block device" || tail=
	refused "$opt" "$T/fifo" "a FIFO" "$tail"
	refused "$opt" "$T/dir" "a directory" "$tail"
	refused "$opt" /dev/null "a character device" "$tail"
	refused "$opt" "$T/sock" "a socket" "$tail"
done

# A FIFO that has a writer opens at once: refused all the same, not read.
exec 3<> "$T/fifo"
refused --disk "$T/fifo" "a FIFO" " or a block device"
refused --config "$T/fifo" "a FIFO" ""
exec 3>&-

run --disk "$T/nonexistent" -c version > /dev/null 2> "$T/err"
check "--disk of a missing file: exit 2" "$?" 2
check "--disk of a missing file: why" "$(cat "$T/err")" \
	"llmctl: --disk $T/nonexistent: cannot open it: No such file or directory"

# Regular files still attach and configure.
# (not a GGUF header: one that does not parse is disks' error line, issue 28)
printf 'a file and then some\n' > "$T/plain"
out=$(run --disk "$T/plain" --config "$T/cfg" -c disks 2>&1)
check "a regular file is a disk and a regular file a config: exit 0" "$?" 0
case "$out" in
*"disk 0: 21 bytes (21 B), id 'plain', file plain"*) ok "disks names the file" ;;
*) bad "disks names the file" "$out" ;;
esac

# llmk.cfg's limit (1 MiB in the kernel) holds for --config too.
head -c 1048577 /dev/zero | tr '\0' '#' > "$T/bigcfg"
run --config "$T/bigcfg" -c version > /dev/null 2> "$T/err"
check "--config past 1 MiB: exit 2" "$?" 2
check "--config past 1 MiB: why" "$(cat "$T/err")" \
	"llmctl: --config $T/bigcfg: more than 1048576 bytes (llmk.cfg's limit)"

# A file read by name from the shell (the host's boot volume) is checked the same way.
exec 3<> "$T/fifo"
run -c "unseal --file $T/fifo" > "$T/out" 2>&1
rc=$?
[ "$rc" = 124 ] && bad "unseal --file FIFO: exits at once" "still waiting after 10 s" ||
	check "unseal --file FIFO: one error line, exit 1" "$rc:$(grep -c '^error: ' "$T/out")" "1:1"
exec 3>&-

# A block device is a disk: a loop device over a file of whole sectors.
head -c 70144 /dev/urandom > "$T/blk"
if ! command -v losetup > /dev/null; then
	skip=$((skip + 1)); echo "skip a block device as a disk: no losetup"
elif ! loopdev=$(losetup --find --show --read-only "$T/blk" 2> "$T/err"); then
	loopdev=
	skip=$((skip + 1)); echo "skip a block device as a disk: losetup refused: $(cat "$T/err")"
else
	out=$(run --disk "$loopdev" -c disks -c 'disks hash 0' 2>&1)
	check "a block device is a disk: exit 0" "$?" 0
	case "$out" in
	*"disk 0: 70144 bytes (68.50 KiB), id '${loopdev##*/}', block device ${loopdev##*/}"*)
		ok "disks gives the block device's size" ;;
	*) bad "disks gives the block device's size" "$out" ;;
	esac
	check "disks hash of the block device = sha256sum of its file" \
		"$(echo "$out" | tail -1 | cut -c1-64)" "$(sha256sum < "$T/blk" | cut -c1-64)"
	out=$(run --direct --disk "$loopdev" -c 'disks hash 0' 2>&1)
	check "disks hash of the block device --direct" "$(echo "$out" | cut -c1-64)" \
		"$(sha256sum < "$T/blk" | cut -c1-64)"
fi

summary
