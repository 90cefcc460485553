#!/bin/sh
# tests/snp/guestkey.sh LLMCTL SEAL MKMODEL — `seal --to-guest` and `unseal
# --guest` end to end on the host build against the SEV-SNP firmware
# simulator (LLMK_SNP_SIM): a model key sealed to the guest in one run (one
# "boot") opens the sealed model in the next with no key given, by command
# and by llmk.cfg; another image (measurement), policy or chip, no
# simulator, a damaged blob and an injected firmware fault are each refused
# with one "error:" line. Ends "N passed, N failed, N skipped".
LLMCTL=${1:-build/host/llmctl}
SEAL=${2:-build/host/seal}
MKMODEL=${3:-build/host/mkmodel}
T=${TMPDIR:-/tmp}/snp-guestkey.$$
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skip=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "$2" ] && printf '%s\n' "$2" | sed 's/^/     /' | head -20; }
run() { timeout 60 "$LLMCTL" --disk "$T/m.sealed" "$@" > "$T/out" 2>&1; }
# refuse NAME WANT SIM ARGS...: exit non-zero, exactly one "error:" line containing WANT.
refuse() {
	name=$1 want=$2 sim=$3; shift 3
	LLMK_SNP_SIM=$sim run "$@"; rc=$?
	if [ $rc != 0 ] && [ "$(grep -c '^error: ' "$T/out")" = 1 ] && grep -q "^error: .*$want" "$T/out"; then
		ok "$name"
	else
		bad "$name" "exit $rc: $(cat "$T/out")"
	fi
}

"$MKMODEL" --name guestkey -o "$T/m.gguf" > /dev/null 2>&1 &&
	"$SEAL" keygen "$T/k.key" > /dev/null && "$SEAL" seal --key-file "$T/k.key" "$T/m.gguf" "$T/m.sealed" > /dev/null ||
	{ echo "cannot make a sealed model"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
KEY=$(cat "$T/k.key")

# first boot: the key from the console, sealed to the guest
LLMK_SNP_SIM=1 run -c "unseal $KEY" -c "seal --to-guest"
B=$(sed -n 's/^guest-sealed: //p' "$T/out")
if [ -n "$B" ] && grep -q "opens on this chip" "$T/out"; then ok "seal --to-guest prints a blob"; else bad "seal --to-guest prints a blob" "$(cat "$T/out")"; fi

# next boot: the blob alone opens the model
LLMK_SNP_SIM=1 run -c "unseal --guest $B" -c "load 0" -c info
if grep -q "sealed to this guest" "$T/out" && grep -q "^loaded disk 0" "$T/out"; then ok "the next boot opens the sealed model with the blob alone"; else bad "the next boot opens the sealed model with the blob alone" "$(cat "$T/out")"; fi

# ... and from llmk.cfg, with the blob in a file on the boot volume
printf 'guest-sealed: %s\n' "$B" > "$T/model.gsk"
printf 'seal-guest-file %s\n' "$T/model.gsk" > "$T/llmk.cfg"
LLMK_SNP_SIM=1 run --config "$T/llmk.cfg" -c "load 0"
if grep -q "^loaded disk 0" "$T/out"; then ok "seal-guest-file in llmk.cfg opens it at boot"; else bad "seal-guest-file in llmk.cfg opens it at boot" "$(cat "$T/out")"; fi

# the trust of the key is carried: a development key stays one
if grep -q "insecure development key id" "$T/out" || { LLMK_SNP_SIM=1 run -c "unseal --guest $B" && grep -q "insecure development" "$T/out"; }; then
	ok "a development key sealed to the guest is still called insecure"
else bad "a development key sealed to the guest is still called insecure" "$(cat "$T/out")"; fi

M0=$(printf '%096d' 0)
printf 'measurement %s\n' "$M0" > "$T/image.cfg"
refuse "another image (measurement) cannot open it" "does not open with this guest's key" "$T/image.cfg" -c "unseal --guest $B"
printf 'policy 0xb0000\n' > "$T/policy.cfg"
refuse "another policy cannot open it" "does not open with this guest's key" "$T/policy.cfg" -c "unseal --guest $B"
printf 'chip-seed %064d\n' 1 > "$T/chip.cfg"
refuse "another chip cannot open it" "does not open with this guest's key" "$T/chip.cfg" -c "unseal --guest $B"
refuse "without SEV-SNP there is no guest key" "no SEV-SNP" "" -c "unseal --guest $B"
D=$(printf '%s' "$B" | sed 's/^\(.\{100\}\)./\1A/')
[ "$D" = "$B" ] && D=$(printf '%s' "$B" | sed 's/^\(.\{100\}\)./\1B/')
refuse "a damaged blob is refused" "does not open" 1 -c "unseal --guest $D"
refuse "not a blob at all" "not a guest-sealed key" 1 -c "unseal --guest AAAA"
printf 'fault tag\n' > "$T/fault.cfg"
refuse "a firmware fault wipes the VMPCK and says so" "VMPCK0 wiped" "$T/fault.cfg" -c "unseal --guest $B"
refuse "the VMRK root without a VMRK is refused" "INVALID_KEY" 1 -c "unseal $KEY" -c "seal --to-guest --root vmrk"
refuse "seal --to-guest needs a loaded key" "no model key loaded" 1 -c "seal --to-guest"
refuse "an unknown --mix field is refused" "unknown field 'x'" 1 -c "unseal $KEY" -c "seal --to-guest --mix measurement,x"

# a blob that mixes nothing but the chip opens under another image too
LLMK_SNP_SIM=1 run -c "unseal $KEY" -c "seal --to-guest --mix policy"
P=$(sed -n 's/^guest-sealed: //p' "$T/out")
LLMK_SNP_SIM="$T/image.cfg" run -c "unseal --guest $P" -c "load 0"
if grep -q "^loaded disk 0" "$T/out"; then ok "--mix policy binds the chip and policy, not the image"; else bad "--mix policy binds the chip and policy, not the image" "$(cat "$T/out")"; fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
