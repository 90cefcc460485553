#!/bin/sh
# tests/host/verifier_bundle.sh [VERIFIER] [MKEVIDENCE] — `verifier snp
# --evidence`, `verifier tdx --evidence` and `verifier wrap` on llmk
# evidence bundles, from the command line. The SEV-SNP bundles come from
# the firmware simulator through build/host/mkevidence (a test tool standing
# in for the guest's `attest --provider snp`): they verify only with
# --allow-simulated and the simulator's ARK as --chain, every output line
# then says SIMULATED, and `verifier wrap` releases a key that the guest's
# private key opens (mkevidence unwrap, as `unseal --wrapped` would). Wrong
# nonces, measurements and models, tampered and substituted records, the
# pinned-root check on the test chain, provider none and a real TDX quote
# made for other evidence are each refused with one "error:" line.
# Ends "N passed, N failed, N skipped".
# shellcheck disable=SC2086 # $S and $W are option lists, split on purpose
V=${1:-build/host/verifier}
MK=${2:-build/host/mkevidence}
A=${LLMK_TESTDATA:-../shared/testdata}/attest
T=${TMPDIR:-/tmp}/verifier-bundle.$$
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

run() { timeout 60 "$V" "$@"; }
# Exit 0, nothing on stderr, every stdout line "SIMULATED ...", the last
# one starting with $2.
accept_sim() {
	name=$1 want=$2; shift 2
	run "$@" > "$T/out" 2> "$T/err"; rc=$?
	if [ $rc = 0 ] && [ ! -s "$T/err" ] && ! grep -qv '^SIMULATED ' "$T/out" &&
	   tail -1 "$T/out" | grep -q "^$want"; then
		ok "$name"
	else
		bad "$name" "exit $rc, last line '$(tail -1 "$T/out")', unlabelled: $(grep -v '^SIMULATED ' "$T/out" | head -2), stderr: $(cat "$T/err")"
	fi
}
# Exit 1, exactly one stderr line "error: ..." containing $2, no key on stdout.
refuse() {
	name=$1 want=$2; shift 2
	run "$@" > "$T/out" 2> "$T/err"; rc=$?
	if [ $rc = 1 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -q "^error: .*$want" "$T/err" &&
	   ! grep -q 'wrapped:' "$T/out"; then
		ok "$name"
	else
		bad "$name" "exit $rc, stderr: $(cat "$T/err")"
	fi
}

# bundle.py MODE IN OUT [ARGS]: the bundle's records edited (docs/attestation.md
# layout, written here independently of the C code): `flip TYPE OFFSET`
# XORs one byte of a record; `swap-key HEX` puts another public key in and
# recomputes REPORT_DATA (the report data layout of shell/evidence.h) so the
# bundle is consistent but the hardware report was made for other inputs;
# `provider NAME` renames the provider; `check` exits 0 when REPORT_DATA is
# SHA-512 of the layout. IN is an 'evidence:' line file; OUT is binary.
cat > "$T/bundle.py" <<'EOF'
import base64, hashlib, struct, sys
mode, src, dst = sys.argv[1:4]
text = open(src).read()
raw = base64.b64decode(text.split("evidence: ")[-1].split()[0], validate=True)
assert raw[:8] == b"LLMKEV01"
recs, off = [], 8
while off < len(raw):
    t, f, n = struct.unpack_from("<HHI", raw, off)
    recs.append([t, raw[off + 8:off + 8 + n]])
    off += 8 + n
def get(t):
    return [r for r in recs if r[0] == t][0][1]
def layout():
    nonce, model, pub, bid, cfg = get(3), get(4), get(5), get(6), get(9)
    lay = b"LLMK-REPORT-V2\0\0" + bytes([len(nonce)]) + nonce.ljust(64, b"\0") + model + pub + bid.ljust(16, b"\0") + cfg
    return hashlib.sha512(lay).digest()
if mode == "check":
    sys.exit(0 if layout() == get(2) else 1)
for r in recs:
    if mode == "flip" and r[0] == int(sys.argv[4], 0):
        b = bytearray(r[1]); b[int(sys.argv[5], 0)] ^= 0x01; r[1] = bytes(b)
    if mode == "swap-key" and r[0] == 5:
        r[1] = bytes.fromhex(sys.argv[4])
    if mode == "provider" and r[0] == 1:
        r[1] = sys.argv[4].encode()
if mode == "swap-key":
    for r in recs:
        if r[0] == 2:
            r[1] = layout()
out = b"LLMKEV01" + b"".join(struct.pack("<HHI", t, 0, len(v)) + v for t, v in recs)
open(dst, "wb").write(out)
EOF
bundle() { python3 "$T/bundle.py" "$@"; }

NONCE=00112233445566778899aabbccddeeff
PRIV=7d0c0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a6978879600000040
PRIV2=1111111111111111111111111111111111111111111111111111111111111111
MODEL=$(printf 'model weights' | sha256sum | cut -c1-64)
if ! "$MK" snp --nonce $NONCE --priv $PRIV --model "$MODEL" --out "$T/ev.txt" \
	--chain-out "$T/ask_ark.pem" --ark-out "$T/ark.pem" --vcek-out "$T/vcek.der" \
	--report-out "$T/report.bin" > "$T/mk" 2>&1 || [ ! -s "$T/ev.txt" ]; then
	bad "mkevidence snp writes a simulated bundle" "$(cat "$T/mk")"
	summary
	exit
fi
ok "mkevidence snp writes a simulated bundle and the simulator's chain"
MEAS=$(sed -n 's/^measurement: //p' "$T/mk")
RD=$(sed -n 's/^report_data: //p' "$T/mk")
if bundle check "$T/ev.txt" /dev/null; then
	ok "REPORT_DATA is SHA-512 of the layout (an independent python recomputation)"
else
	bad "REPORT_DATA is SHA-512 of the layout (an independent python recomputation)"
fi
S="--nonce $NONCE --allow-simulated"

# ---- verifier snp --evidence ----
accept_sim "snp --evidence verifies with --allow-simulated and the sim's ARK, every line SIMULATED" \
	"SIMULATED verified: SIMULATED SEV-SNP report version 3 from a Milan chip under a TEST root" \
	snp --evidence "$T/ev.txt" $S --chain "$T/ark.pem" --expect-measurement "$MEAS" --expect-model "$MODEL"
accept_sim "snp --evidence with the ASK and ARK from --chain and the VCEK from --vcek" \
	"SIMULATED verified: SIMULATED SEV-SNP" \
	snp --evidence "$T/ev.txt" $S --chain "$T/ask_ark.pem" --vcek "$T/vcek.der"
if grep -q "VCEK from --vcek, ASK from --chain, ARK from --chain" "$T/out"; then
	ok "the output names where each certificate came from"
else
	bad "the output names where each certificate came from" "$(grep certificates "$T/out")"
fi
sed 's/^evidence: //' "$T/ev.txt" > "$T/ev.b64"
bundle provider "$T/ev.txt" "$T/ev.bin" snp
accept_sim "snp --evidence reads bare base64" "SIMULATED verified:" \
	snp --evidence "$T/ev.b64" $S --chain "$T/ark.pem"
accept_sim "snp --evidence reads the binary bundle" "SIMULATED verified:" \
	snp --evidence "$T/ev.bin" $S --chain "$T/ark.pem"
refuse "snp --evidence without --allow-simulated: refused as simulated" \
	"simulated evidence (snp-sim.*): not hardware" \
	snp --evidence "$T/ev.txt" --nonce $NONCE --chain "$T/ark.pem"
refuse "the pinned root refuses the simulator's test chain (snp --report)" \
	"is not one of AMD's ARK keys" \
	snp --report "$T/report.bin" --vcek "$T/vcek.der" --chain "$T/ask_ark.pem"
refuse "snp --evidence with another nonce: stale or replayed" \
	"nonce: the evidence was made for nonce $NONCE, not --nonce ${NONCE%??}00" \
	snp --evidence "$T/ev.txt" --nonce "${NONCE%??}00" --allow-simulated --chain "$T/ark.pem"
refuse "snp --evidence with another measurement" "measurement: the report has $MEAS" \
	snp --evidence "$T/ev.txt" $S --chain "$T/ark.pem" --expect-measurement "$(printf '%096d' 0)"
refuse "snp --evidence with another model" "model: the guest has model $MODEL" \
	snp --evidence "$T/ev.txt" $S --chain "$T/ark.pem" --expect-model "$(printf '%064d' 0)"
sed '/-----END CERTIFICATE-----/q' "$T/ask_ark.pem" > "$T/ask.pem" # the first block: the ASK
refuse "snp --evidence without an ARK in --chain: trust never starts in the evidence" \
	"chain holds no ARK" snp --evidence "$T/ev.txt" $S --chain "$T/ask.pem"
for t in "0x0005 31 the public key" "0x0004 0 the model digest" "0x0006 0 the build id" \
	 "0x0003 0 the nonce" "0x0009 31 the config digest" "0x0002 63 REPORT_DATA"; do
	set -- $t
	bundle flip "$T/ev.txt" "$T/bad.bin" "$1" "$2"
	shift 2
	refuse "snp --evidence with $* changed" "report data: the REPORT_DATA record is not SHA-512" \
		snp --evidence "$T/bad.bin" --nonce $NONCE --allow-simulated --chain "$T/ark.pem"
done
bundle flip "$T/ev.txt" "$T/bad.bin" 0x0201 0x90
refuse "snp --evidence with a flipped report byte" "signature does not verify" \
	snp --evidence "$T/bad.bin" $S --chain "$T/ark.pem"
# the table's entries: ARK, ASK, VCEK (the simulator's order); an unknown GUID is skipped
bundle flip "$T/ev.txt" "$T/bad.bin" 0x0202 48
refuse "snp --evidence with the VCEK's GUID changed in the cert table" "no VCEK" \
	snp --evidence "$T/bad.bin" $S --chain "$T/ark.pem"
OTHER=$(python3 -c 'print("e0" * 32)')
bundle swap-key "$T/ev.txt" "$T/swap.bin" "$OTHER"
refuse "snp --evidence for a substituted key with consistent report data: the report binds the original" \
	"report data: the report's REPORT_DATA is not the bundle's report data" \
	snp --evidence "$T/swap.bin" $S --chain "$T/ark.pem"
refuse "vtpm refuses an snp bundle" "provider 'snp': this verifier checks vtpm evidence" \
	vtpm --evidence "$T/ev.txt" $S

# ---- what the guest was told (issue 27 item 2): a host's llmk.cfg ----
printf 'seed 42\nn-predict 24\n' > "$T/told.cfg"
CFG=$(sha256sum < "$T/told.cfg" | cut -c1-64)
printf '%064d\n' 7 > "$T/told.key"
"$MK" snp --nonce $NONCE --priv $PRIV --config "$T/told.cfg" --out "$T/told.txt" > /dev/null 2>&1
refuse "snp --evidence of a guest told 'seed 42' by its llmk.cfg: refused by default" \
	"config: the guest was told configuration $CFG, expected e3b0c442" \
	snp --evidence "$T/told.txt" $S --chain "$T/ark.pem"
accept_sim "snp --evidence with --expect-config FILE: verified" "SIMULATED verified:" \
	snp --evidence "$T/told.txt" $S --chain "$T/ark.pem" --expect-config "$T/told.cfg"
if grep -q "config: sha256 $CFG (21 bytes of $T/told.cfg: seed 42; n-predict 24)" "$T/out"; then
	ok "the verifier says in one line what the guest was told"
else
	bad "the verifier says in one line what the guest was told" "$(grep config "$T/out")"
fi
accept_sim "snp --evidence with --expect-config SHA256: verified" "SIMULATED verified:" \
	snp --evidence "$T/told.txt" $S --chain "$T/ark.pem" --expect-config "$CFG"
run snp --evidence "$T/ev.txt" $S --chain "$T/ark.pem" > "$T/out.default" 2>&1
if grep -q "config: sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 (the empty configuration: the guest was told nothing)" "$T/out.default"; then
	ok "a guest told nothing: the default, said so"
else
	bad "a guest told nothing: the default, said so" "$(grep config "$T/out.default")"
fi
refuse "snp --evidence of a guest told nothing, --expect-config FILE: refused" \
	"config: the guest was told configuration e3b0c442" \
	snp --evidence "$T/ev.txt" $S --chain "$T/ark.pem" --expect-config "$T/told.cfg"
refuse "wrap for a guest told 'seed 42' releases nothing by default" "config: the guest was told" \
	wrap --expect-model $MODEL --evidence "$T/told.txt" $S --chain "$T/ark.pem" --expect-measurement "$MEAS" \
	--key-file "$T/told.key"
refuse "--expect-config neither a digest nor a file" "--expect-config: '$T/nope' is neither" \
	snp --evidence "$T/ev.txt" $S --chain "$T/ark.pem" --expect-config "$T/nope"

# ---- verifier wrap ----
printf '%s\n' "$(printf 'model key' | sha256sum | cut -c1-64)" > "$T/model.key"
W="wrap --expect-model $MODEL --evidence $T/ev.txt $S --chain $T/ark.pem --expect-measurement $MEAS --key-file $T/model.key"
accept_sim "wrap on snp simulator evidence releases a key, every line SIMULATED" "SIMULATED wrapped: " $W
cp "$T/out" "$T/wrapped"
"$MK" unwrap --priv $PRIV --wrapped "$T/wrapped" > "$T/unwrap" 2>&1
if [ "$(sed -n 's/^key: //p' "$T/unwrap")" = "$(cat "$T/model.key")" ] &&
   [ "$(sed -n 's/^report_data: //p' "$T/unwrap")" = "$RD" ]; then
	ok "the guest's private key opens the wrapped key: the model key, for this bundle's report data"
else
	bad "the guest's private key opens the wrapped key" "$(cat "$T/unwrap")"
fi
if "$MK" unwrap --priv $PRIV2 --wrapped "$T/wrapped" > /dev/null 2>&1; then
	bad "another guest key does not open it"
else
	ok "another guest key does not open it"
fi
refuse "wrap without --allow-simulated releases nothing" "simulated evidence" \
	wrap --expect-model $MODEL --evidence "$T/ev.txt" --nonce $NONCE --chain "$T/ark.pem" --expect-measurement "$MEAS" \
	--key-file "$T/model.key"
refuse "wrap with another measurement releases nothing" "measurement: the report has" \
	wrap --expect-model $MODEL --evidence "$T/ev.txt" $S --chain "$T/ark.pem" --expect-measurement "$(printf '%096d' 0)" \
	--key-file "$T/model.key"
refuse "wrap needs the measurement for snp evidence" "snp evidence needs --nonce, --expect-measurement and --chain" \
	wrap --expect-model $MODEL --evidence "$T/ev.txt" $S --chain "$T/ark.pem" --key-file "$T/model.key"
refuse "wrap refuses vtpm's options for snp evidence" "'--expect-pcr4' is not an option for snp evidence" \
	wrap --expect-model $MODEL --evidence "$T/ev.txt" $S --chain "$T/ark.pem" --expect-pcr4 "$(printf '%064d' 0)" \
	--key-file "$T/model.key"
refuse "wrap without --expect-model releases nothing" "--expect-model SHA256 is required" \
	wrap --evidence "$T/ev.txt" $S --chain "$T/ark.pem" --expect-measurement "$MEAS" \
	--key-file "$T/model.key"
refuse "wrap refuses --allow-debug" "never released to a guest the host can debug" $W --allow-debug
refuse "wrap on a substituted key releases nothing" "report data: the report's REPORT_DATA" \
	wrap --expect-model $MODEL --evidence "$T/swap.bin" $S --chain "$T/ark.pem" --expect-measurement "$MEAS" \
	--key-file "$T/model.key"
bundle provider "$T/ev.txt" "$T/none.bin" none
refuse "wrap on provider none releases nothing" "provider none" \
	wrap --expect-model $MODEL --evidence "$T/none.bin" $S --chain "$T/ark.pem" --expect-measurement "$MEAS" \
	--key-file "$T/model.key"

# ---- TDX: the real quote in a bundle, made for other evidence ----
if [ -f "$A/tdx/quote_v4.bin" ]; then
	"$MK" tdx-quote --quote "$A/tdx/quote_v4.bin" --nonce $NONCE --priv $PRIV --out "$T/tdx.txt" > /dev/null
	refuse "tdx --evidence: the real quote passes its checks but was made for other evidence" \
		"report data: the quote's REPORTDATA is not the bundle's report data" \
		tdx --evidence "$T/tdx.txt" --nonce $NONCE --chain "$A/tdx/pck_chain.pem"
	if grep -q "^ok   signature: ECDSA P-256 over header and TD quote body" "$T/out"; then
		ok "tdx --evidence: every quote check before the binding passed"
	else
		bad "tdx --evidence: every quote check before the binding passed" "$(cat "$T/out")"
	fi
	MRTD=$(od -An -tx1 -j184 -N48 "$A/tdx/quote_v4.bin" | tr -d ' \n') # TD quote body MRTD, 0x0b8
	refuse "wrap on that tdx bundle, its MRTD expected, releases nothing" \
		"report data: the quote's REPORTDATA" \
		wrap --expect-model "$(printf '%064d' 0)" --evidence "$T/tdx.txt" --nonce $NONCE --chain "$A/tdx/pck_chain.pem" \
		--expect-mrtd "$MRTD" --key-file "$T/model.key"
	refuse "wrap with another MRTD releases nothing" "MRTD: the quote has $MRTD" \
		wrap --expect-model "$(printf '%064d' 0)" --evidence "$T/tdx.txt" --nonce $NONCE --chain "$A/tdx/pck_chain.pem" \
		--expect-mrtd "$(printf '%096d' 0)" --key-file "$T/model.key"
	refuse "wrap needs the MRTD for tdx evidence" "tdx evidence needs --nonce, --expect-mrtd and --chain" \
		wrap --expect-model "$(printf '%064d' 0)" --evidence "$T/tdx.txt" --nonce $NONCE --chain "$A/tdx/pck_chain.pem" --key-file "$T/model.key"
	refuse "tdx --evidence with the simulator's SNP ARK as the root: not Intel's" \
		"is not Intel's SGX Root CA key" \
		tdx --evidence "$T/tdx.txt" --nonce $NONCE --chain "$T/ark.pem"
else
	skip_data "tdx bundles" "no $A/tdx/quote_v4.bin"
fi
summary
