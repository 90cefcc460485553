#!/bin/sh
# tests/seal/seal.sh SEAL [LLMCTL] — build/host/seal end to end: keygen, seal,
# inspect (with and without the key), unseal back to the same bytes, and each
# damaged image or bad key refused with exit 1 and one "error:" line; then the
# shell's `unseal` and `disks` on a sealed image. Ends "N passed, N failed,
# N skipped" (tests/lib.sh).
SEAL=${1:-build/host/seal}
LLMCTL=${2:-build/host/llmctl}
T=${TMPDIR:-/tmp}/seal-test.$$
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
run() { timeout 60 "$SEAL" "$@"; }
# A failing command: exit 1, one stderr line starting "error:" that contains $2.
refuse() {
	name=$1 want=$2; shift 2
	run "$@" > /dev/null 2> "$T/err"; rc=$?
	if [ $rc = 1 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -q "^error: .*$want" "$T/err"; then
		ok "$name"
	else
		bad "$name" "exit $rc, stderr: $(cat "$T/err")"
	fi
}

REF=${LLMK_TESTDATA:-../shared/testdata}/stories260K/stories260K.gguf
G=$REF
MKMODEL=$(dirname "$SEAL")/mkmodel
real=1
if [ ! -f "$G" ] && [ -x "$MKMODEL" ]; then
	# Not the reference model, but a valid one (random weights).
	G=$T/plain.gguf
	"$MKMODEL" --type Q4_0 -o "$G" > /dev/null
elif [ ! -f "$G" ]; then
	real=0
	{ printf 'GGUF'; head -c 300001 /dev/urandom; } > "$T/plain.gguf"
	G=$T/plain.gguf
fi

run keygen "$T/k" > /dev/null
check "keygen: mode 0600" "$(stat -c %a "$T/k")" 600
check "keygen: 64 hex digits" "$(grep -cE '^[0-9a-f]{64}$' "$T/k")" 1
refuse "keygen never overwrites" "never overwritten" keygen "$T/k"
run keygen "$T/k2" > /dev/null

run seal --key-file "$T/k" "$G" "$T/s" > "$T/out"
check "seal exits 0" "$?" 0
want=$(sha256sum < "$G" | cut -c1-64)
check "seal prints the plaintext sha256" "$(grep -o 'sha256 [0-9a-f]*' "$T/out")" "sha256 $want"
check "image size is a multiple of 4096" "$(($(stat -c %s "$T/s") % 4096))" 0
run inspect "$T/s" > "$T/out"
check "inspect without key exits 0" "$?" 0
check "inspect shows the digest" "$(grep -c "$want" "$T/out")" 1
run inspect --key-file "$T/k" "$T/s" > "$T/out"
check "inspect --key-file verifies" "$?:$(grep -c 'all .* chunks authenticate' "$T/out")" "0:1"
run unseal --key-file "$T/k" "$T/s" "$T/p" > /dev/null
check "unseal gives back the same bytes" "$?:$(cmp "$T/p" "$G" && echo same)" "0:same"
run seal --chunk-size 4096 --key "$(cat "$T/k")" "$G" "$T/s4k" > /dev/null
run unseal --key "$(cat "$T/k")" "$T/s4k" "$T/p4k" > /dev/null
check "4 KiB chunks round trip" "$(cmp "$T/p4k" "$G" && echo same)" same
run seal --key-file "$T/k" "$G" "$T/s2" > /dev/null
check "two seals of one file differ (fresh salt, nonce, id)" "$(cmp -s "$T/s" "$T/s2" || echo differ)" differ

refuse "wrong key" "wrong key" unseal --key-file "$T/k2" "$T/s" "$T/p2"
check "wrong key leaves no output" "$(test -e "$T/p2" || echo none)" none
refuse "no key" "no key" unseal "$T/s" "$T/p2"
printf 'abc\n' > "$T/badkey"
refuse "bad key file" "64 hex digits" unseal --key-file "$T/badkey" "$T/s" "$T/p2"
refuse "seal refuses a non-GGUF" "not a GGUF" seal --key-file "$T/k" "$T/k" "$T/x"
refuse "bad chunk size" "chunk size" seal --chunk-size 5000 --key-file "$T/k" "$G" "$T/x"
refuse "inspect a GGUF" "not a sealed image" inspect "$G"
cp "$T/s" "$T/kept"
refuse "seal never overwrites an existing output" "exists: not overwriting" seal --key-file "$T/k" "$G" "$T/kept"
check "... which is left intact" "$(cmp "$T/kept" "$T/s" && echo same)" same
refuse "unseal never overwrites an existing output" "exists: not overwriting" unseal --key-file "$T/k" "$T/s" "$T/kept"
run seal --force --key-file "$T/k" "$G" "$T/kept" > /dev/null
check "seal --force replaces it" "$?:$(cmp -s "$T/kept" "$T/s" || echo replaced)" "0:replaced"
cp "$T/s" "$T/same"
refuse "unseal onto its own input" "input file too" unseal --key-file "$T/k" "$T/same" "$T/same"
check "... which is left intact" "$(cmp "$T/same" "$T/s" && echo same)" same

# Damage: flip one byte in the header, the tag table, a chunk.
flip() { cp "$T/s" "$T/d"; printf '\377' | dd of="$T/d" bs=1 seek="$1" conv=notrunc 2> /dev/null; }
flip 200; refuse "flipped header byte" "header tag" inspect --key-file "$T/k" "$T/d"
flip 520; refuse "flipped tag byte" "tag table" unseal --key-file "$T/k" "$T/d" "$T/p2"
flip 70000; refuse "flipped chunk byte" "chunk 1 " unseal --key-file "$T/k" "$T/d" "$T/p2"
check "failed unseal leaves no output" "$(test -e "$T/p2" || echo none)" none
cp "$T/s" "$T/d"; truncate -s -4096 "$T/d"
refuse "truncated image" "truncated" unseal --key-file "$T/k" "$T/d" "$T/p2"
cp "$T/s" "$T/d"; printf 'x' >> "$T/d"
refuse "appended byte" "appended" unseal --key-file "$T/k" "$T/d" "$T/p2"
cp "$T/s" "$T/d"; dd if="$T/s2" of="$T/d" bs=512 count=1 conv=notrunc 2> /dev/null
refuse "header from another image" "another image" unseal --key-file "$T/k" "$T/d" "$T/p2"
run inspect "$T/d" > /dev/null 2>&1
check "inspect without key cannot tell (exit 0)" "$?" 0
cp "$T/s" "$T/d"; truncate -s -4096 "$T/d"
run inspect "$T/d" > "$T/out" 2> "$T/err"
check "inspect without key flags truncation" "$?:$(grep -c TRUNCATED "$T/out"):$(grep -c '^error: .*truncated' "$T/err")" "1:1:1"

# The shell: `unseal KEYHEX`, and `disks` describing the sealed disk.
if [ -x "$LLMCTL" ]; then
	out=$(timeout 60 "$LLMCTL" --disk "$T/s" -c disks 2>&1)
	case "$out" in
	*"sealed model image v1"*"no key"*) ok "disks shows a sealed image (no key yet)" ;;
	*) bad "disks shows a sealed image (no key yet)" "$out" ;;
	esac
	out=$(timeout 60 "$LLMCTL" --disk "$T/s" -c "unseal $(cat "$T/k")" -c disks 2>&1)
	case "$out" in
	*"insecure development key"*"key matches: GGUF v3 inside"*) ok "unseal KEYHEX, then disks: key matches" ;;
	*) bad "unseal KEYHEX, then disks: key matches" "$out" ;;
	esac
	flip 70000
	out=$(timeout 60 "$LLMCTL" --disk "$T/s" --disk "$T/d" -c "unseal $(cat "$T/k")" \
		-c "unseal --verify 0" -c "unseal --verify 1" 2>&1)
	case "$out" in
	*"disk 0: all "*" chunks authenticate"*"error: disk 1: seal: chunk 1 "*)
		ok "unseal --verify: good disk passes, damaged disk refused" ;;
	*) bad "unseal --verify: good disk passes, damaged disk refused" "$out" ;;
	esac
	out=$(timeout 60 "$LLMCTL" --disk "$T/s" -c "unseal $(cat "$T/k2")" -c disks 2>&1)
	case "$out" in
	*"not the key this image wants"*) ok "disks with another key: says so" ;;
	*) bad "disks with another key: says so" "$out" ;;
	esac
	out=$(timeout 60 "$LLMCTL" -c "unseal $(cat "$T/k")" -c version 2>&1)
	case "$out" in
	*"model key insecure development key"*) ok "version flags the development key" ;;
	*) bad "version flags the development key" "$out" ;;
	esac
	printf 'seal-key-file %s\n' "$T/k" > "$T/cfg"
	out=$(timeout 60 "$LLMCTL" --config "$T/cfg" --disk "$T/s" -c disks 2>&1)
	case "$out" in
	*"key matches: GGUF v3 inside"*) ok "config seal-key-file loads the key" ;;
	*) bad "config seal-key-file loads the key" "$out" ;;
	esac
fi
if [ -x "$LLMCTL" ] && [ $real = 0 ]; then
	# neither the reference model nor mkmodel to write one
	for n in "sealed model: greedy ids equal the plain model's" \
		"damaged sealed model refused, the next load answers"; do
		skip_data "$n" "no model: no $REF and no $MKMODEL"
	done
elif [ -x "$LLMCTL" ]; then
	# A sealed model answers exactly like the plain one; a damaged one is
	# refused with one error line and the next load still works.
	inf='infer "Once upon a time" -n 40 --temp 0 --ids'
	plain=$(timeout 60 "$LLMCTL" --disk "$G" -c "load 0" -c "$inf" 2>&1 | grep '^ids:')
	sealed=$(timeout 60 "$LLMCTL" --disk "$T/s" -c "unseal $(cat "$T/k")" -c "load 0" -c "$inf" 2>&1 | grep '^ids:')
	if [ -n "$plain" ] && [ "$plain" = "$sealed" ]; then ok "sealed model: greedy ids equal the plain model's"
	else bad "sealed model: greedy ids equal the plain model's" "plain '$plain', sealed '$sealed'"; fi
	printf 'unseal %s\nload 0\nload 1\n%s\n' "$(cat "$T/k")" "$inf" |
		timeout 60 "$LLMCTL" --disk "$T/d" --disk "$T/s" > "$T/out" 2>&1
	if [ "$(grep -c '^error: load: disk 0: seal: chunk 1 ' "$T/out")" = 1 ] &&
	   [ "$(grep -c '^error' "$T/out")" = 1 ] && [ "$(grep '^ids:' "$T/out")" = "$plain" ]; then
		ok "damaged sealed model refused, the next load answers"
	else
		bad "damaged sealed model refused, the next load answers" "$(cat "$T/out")"
	fi
fi
if [ -x "$LLMCTL" ]; then
	out=$(timeout 60 "$LLMCTL" --disk "$T/s" -c "load 0" 2>&1)
	case "$out" in
	*"error: load: disk 0: seal: no key loaded"*) ok "sealed model without a key: clear error" ;;
	*) bad "sealed model without a key: clear error" "$out" ;;
	esac
	timeout 60 "$LLMCTL" -c "unseal 1234" > "$T/out" 2>&1
	check "unseal with a short key: exit 1, one error line" "$?:$(grep -c '^error: ' "$T/out")" "1:1"
	check "the bad key is not echoed" "$(grep -c 1234 "$T/out")" 0
fi

summary
