#!/bin/sh
# tests/host/verifier_snp_tdx.sh [VERIFIER] — build/host/verifier snp and tdx
# end to end on the real evidence in $LLMK_TESTDATA/attest: every SEV-SNP
# report verifies with its product's ASK and ARK (two files, one file, the
# VCEK as DER or PEM), the TDX quote with Intel's root; tampered copies
# (report, VCEK, ARK, quote), another product's chain, wrong expected values
# and bad arguments exit 1 with one "error:" line naming the reason.
# Ends "N passed, N failed, N skipped".
V=${1:-build/host/verifier}
A=${LLMK_TESTDATA:-../shared/testdata}/attest
T=${TMPDIR:-/tmp}/verifier-test.$$
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skip=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "$2" ] && printf '%s\n' "$2" | sed 's/^/     /' | head -20; }
run() { timeout 60 "$V" "$@"; }
# Exit 0 and a last line equal to $2.
accept() {
	name=$1 want=$2; shift 2
	run "$@" > "$T/out" 2> "$T/err"; rc=$?
	if [ $rc = 0 ] && [ ! -s "$T/err" ] && [ "$(tail -1 "$T/out")" = "$want" ]; then
		ok "$name"
	else
		bad "$name" "exit $rc, last line '$(tail -1 "$T/out")', stderr: $(cat "$T/err")"
	fi
}
# Exit 1, exactly one stderr line, "error: ..." containing $2.
refuse() {
	name=$1 want=$2; shift 2
	run "$@" > /dev/null 2> "$T/err"; rc=$?
	if [ $rc = 1 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -q "^error: .*$want" "$T/err"; then
		ok "$name"
	else
		bad "$name" "exit $rc, stderr: $(cat "$T/err")"
	fi
}
# flip IN OFFSET MASK OUT: a copy of IN with byte OFFSET XORed with MASK.
flip() {
	python3 -c 'import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[int(sys.argv[2], 0)] ^= int(sys.argv[3], 0)
open(sys.argv[4], "wb").write(b)' "$@"
}

if [ ! -d "$A/snp" ] || [ ! -d "$A/tdx" ]; then
	if [ "${LLMK_REQUIRE_TESTDATA:-0}" = 1 ]; then
		bad "attestation test data at $A" "missing"
	else
		skip=1
		echo "skip verifier: no attestation test data at $A"
	fi
	echo "$pass passed, $fail failed, $skip skipped"
	[ $fail = 0 ]
	exit
fi

S=$A/snp
# ---- SEV-SNP: every real report with its product's chain ----
for d in milan-v2 milan-v2-b milan-v3 genoa-v5 turin-v5; do
	p=${d%%-*}
	P=$(echo "$p" | sed 's/^./\U&/')
	ver=${d#*-v}; ver=${ver%%-*}
	dbg=; [ "$d" = milan-v2 ] && dbg=--allow-debug
	accept "snp $d verifies (ASK and ARK files)" "verified: SEV-SNP report version $ver from a $P chip" \
		snp --report "$S/$d/report.bin" --vcek "$S/$d/vcek.der" \
		--chain "$S/roots/ask_$p.pem" --chain "$S/roots/ark_$p.pem" $dbg
done
cat "$S/roots/ask_turin.pem" "$S/roots/ark_turin.pem" > "$T/ask_ark_turin.pem"
accept "snp turin verifies with one ask_ark.pem (CRLF)" "verified: SEV-SNP report version 5 from a Turin chip" \
	snp --report "$S/turin-v5/report.bin" --vcek "$S/turin-v5/vcek.der" --chain "$T/ask_ark_turin.pem"
{ echo "-----BEGIN CERTIFICATE-----"; base64 -w 64 < "$S/genoa-v5/vcek.der"; echo "-----END CERTIFICATE-----"; } > "$T/vcek.pem"
G="--chain $S/roots/ask_genoa.pem --chain $S/roots/ark_genoa.pem"
accept "snp genoa verifies with the VCEK in PEM" "verified: SEV-SNP report version 5 from a Genoa chip" \
	snp --report "$S/genoa-v5/report.bin" --vcek "$T/vcek.pem" $G
refuse "snp milan-v2 without --allow-debug: DEBUG refused" "DEBUG is allowed" \
	snp --report "$S/milan-v2/report.bin" --vcek "$S/milan-v2/vcek.der" \
	--chain "$S/roots/ask_milan.pem" --chain "$S/roots/ark_milan.pem"
run snp --report "$S/genoa-v5/report.bin" --vcek "$S/genoa-v5/vcek.der" $G > "$T/out" 2>&1
n_ok=$(grep -c '^ok   ' "$T/out")
if [ "$n_ok" -ge 10 ] && grep -q '^  measurement  *c57729018b0a' "$T/out" &&
   grep -q '^  reported_tcb  *bl 10 tee 0 snp 25 ucode 84' "$T/out"; then
	ok "snp prints each check and the report's fields"
else
	bad "snp prints each check and the report's fields" "$(cat "$T/out")"
fi

# ---- SEV-SNP: tampering, other chains, expectations ----
R=$S/genoa-v5/report.bin
VK=$S/genoa-v5/vcek.der
flip "$R" 0x90 0x01 "$T/r1"
refuse "snp: flipped MEASUREMENT bit refused" "signature does not verify" snp --report "$T/r1" --vcek "$VK" $G
flip "$R" 0x1a0 0x40 "$T/r2"
refuse "snp: flipped CHIP_ID bit refused" "hwID" snp --report "$T/r2" --vcek "$VK" $G
flip "$R" 0x180 0x01 "$T/r3"
refuse "snp: flipped REPORTED_TCB bit refused" "REPORTED_TCB" snp --report "$T/r3" --vcek "$VK" $G
flip "$R" 0x49f 0x80 "$T/r4"
refuse "snp: bit in the unsigned signature padding refused" "must be zero" snp --report "$T/r4" --vcek "$VK" $G
flip "$R" 0x2a0 0x04 "$T/r5"
refuse "snp: flipped signature R bit refused" "signature does not verify" snp --report "$T/r5" --vcek "$VK" $G
head -c 1183 "$R" > "$T/r6"
refuse "snp: truncated report refused" "1183 bytes" snp --report "$T/r6" --vcek "$VK" $G
flip "$VK" 600 0x10 "$T/v1"
refuse "snp: flipped VCEK bit refused" "VCEK certificate" snp --report "$R" --vcek "$T/v1" $G
flip "$S/roots/ark_genoa.pem" 900 0x01 "$T/ark1.pem"
refuse "snp: changed ARK character refused" "ARK" snp --report "$R" --vcek "$VK" \
	--chain "$S/roots/ask_genoa.pem" --chain "$T/ark1.pem"
refuse "snp: Genoa report under Milan's chain refused" "issuer 'SEV-Genoa'" snp --report "$R" --vcek "$VK" \
	--chain "$S/roots/ask_milan.pem" --chain "$S/roots/ark_milan.pem"
refuse "snp: Milan VCEK for another chip refused" "hwID" snp --report "$S/milan-v2-b/report.bin" \
	--vcek "$S/milan-v3/vcek.der" --chain "$S/roots/ask_milan.pem" --chain "$S/roots/ark_milan.pem"
RD=$(python3 -c 'import sys; print(open(sys.argv[1], "rb").read()[0x50:0x90].hex())' "$R")
MS=$(python3 -c 'import sys; print(open(sys.argv[1], "rb").read()[0x90:0xc0].hex())' "$R")
accept "snp: right --expect-report-data and --expect-measurement pass" \
	"verified: SEV-SNP report version 5 from a Genoa chip" snp --report "$R" --vcek "$VK" $G \
	--expect-report-data "$RD" --expect-measurement "$MS" --expect-policy 30000
WRONG=$(echo "$RD" | sed 's/^./f/')
refuse "snp: wrong --expect-report-data refused" "report_data: the report has" \
	snp --report "$R" --vcek "$VK" $G --expect-report-data "$WRONG"
refuse "snp: wrong --expect-policy refused" "expected 0x0000000000070000" \
	snp --report "$R" --vcek "$VK" $G --expect-policy 70000
refuse "snp: short --expect-measurement refused" "want 96 hex digits" \
	snp --report "$R" --vcek "$VK" $G --expect-measurement abcd
refuse "snp: missing report file refused" "No such file" snp --report "$T/nothing" --vcek "$VK" $G
refuse "snp: --chain required" "required" snp --report "$R" --vcek "$VK"

# ---- TDX ----
Q=$A/tdx/quote_v4.bin
C=$A/tdx/pck_chain.pem
accept "tdx: the real quote verifies against Intel's root" "verified: TDX quote version 4" tdx --quote "$Q" --chain "$C"
run tdx --quote "$Q" --chain "$C" > "$T/out" 2>&1
if grep -q "^ok   root: 'Intel SGX Root CA' from $C" "$T/out" && grep -q '^  mrtd  *7b5ee9a304d0' "$T/out"; then
	ok "tdx names the trusted root's file and prints the TD's fields"
else
	bad "tdx names the trusted root's file and prints the TD's fields" "$(cat "$T/out")"
fi
for spec in "0x000 0x01 quote: version" "0x0b8 0x01 signature over header" "0x27c 0x01 signature over header" \
	"0x302 0x02 QE report: its signature" "0x4c4 0x01 REPORT_DATA" "0x600 0x01 PCK certificate" \
	"0x1400 0x01 padding must be zero"; do
	set -- $spec
	off=$1 mask=$2; shift 2
	flip "$Q" "$off" "$mask" "$T/q"
	refuse "tdx: flipped bit at $off refused" "$*" tdx --quote "$T/q" --chain "$C"
done
head -n 45 "$C" > "$T/no_root.pem"
refuse "tdx: a chain file without the root refused" "no self-issued" tdx --quote "$Q" --chain "$T/no_root.pem"
refuse "tdx: AMD's ARK as the root refused" "is not Intel's" tdx --quote "$Q" --chain "$S/roots/ark_milan.pem"
MRTD=$(python3 -c 'import sys; print(open(sys.argv[1], "rb").read()[0xb8:0xe8].hex())' "$Q")
accept "tdx: right --expect-mrtd passes" "verified: TDX quote version 4" tdx --quote "$Q" --chain "$C" --expect-mrtd "$MRTD"
refuse "tdx: wrong --expect-mrtd refused" "MRTD: the quote has" tdx --quote "$Q" --chain "$C" \
	--expect-mrtd "$(echo "$MRTD" | sed 's/^./0/')"
refuse "unknown subcommand refused" "unknown command" frobnicate
refuse "no subcommand refused" "no command" 

echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
