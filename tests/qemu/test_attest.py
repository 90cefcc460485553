#!/usr/bin/env python3
"""tests/qemu/test_attest.py - the kernel's attestation under QEMU with a vTPM.

One boot (--arch x86_64: OVMF, the swtpm attached as -device tpm-crb, driven
over CRB; --arch aarch64: AAVMF, -device tpm-tis-device, driven over FIFO
(TIS) at the DSDT's address; a fresh swtpm manufactured by tools/tpm.sh)
with the reference model on disk 0:

- `attest --nonce N` gives evidence whose report data is the documented
  SHA-512 of its inputs, whose quote carries SHA-256(report data) and the
  digest of the PCR values it lists, whose PCR values are the ones the kernel
  printed, and whose event logs (the firmware's, copied by the kernel, and
  the kernel's own) replay every quoted PCR (replayed here in Python);
  Debian's tpm2_checkquote accepts the quote with the event log, and refuses
  it with one bit of the quote or of the log changed;
- the configuration (no llmk.cfg: the empty one) is PCR 23's first event;
- `load 0` extends PCR 23 by SHA-256 of the model file;
- a credential tpm2_makecredential made for the evidence's EK and AK opens
  in the guest (`attest --activate`), one made for another key does not;
- bad inputs (nonce hex, provider, wrapped keys) get one error line each and
  the kernel keeps serving;
- a second boot without a TPM attests with provider none, says so, and says
  why each other provider is absent.

When build/host/verifier exists (the verifier branch), the same boot also
has the model sealed with a new key on disk 1, and: PCR 4 equals `verifier
measure pcr4` of the image, `verifier vtpm` accepts the evidence (and
tpm2_checkquote its export) and refuses a wrong nonce, a tampered quote and
another image's PCR 4; `verifier wrap` releases the key, `unseal --wrapped`
takes it once, the sealed model's greedy ids equal the plain one's, and a
key wrapped for an earlier key pair is refused. Python standard library
only. Ends with "N passed, N failed, N skipped".
"""
import argparse
import base64
import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__)))
from qemu import Llmk, ids, measure_pcr4, missing_tools, seal_model  # noqa: E402
from results import check, skip_data, summary, testdata  # noqa: E402

QUOTED = [0, 1, 2, 3, 4, 5, 6, 7, 23]


# ---- the evidence bundle (docs/attestation.md) ----
def records(bundle):
    assert bundle[:8] == b"LLMKEV01", "no LLMKEV01 magic"
    recs, off = {}, 8
    while off < len(bundle):
        t, flags, n = struct.unpack_from("<HHI", bundle, off)
        assert flags == 0 and off + 8 + n <= len(bundle), f"record at {off}"
        assert t not in recs, f"record type {t:#x} twice"
        recs[t] = bundle[off + 8:off + 8 + n]
        off += 8 + n
    return recs


def evidence_of(out):
    m = re.search(r"^evidence: (\S+)$", out, re.M)
    return records(base64.b64decode(m.group(1), validate=True)) if m else None


def evidence_file(out, path, tamper_quote=False):
    """The guest's evidence line in a file, as `verifier --evidence` reads it."""
    line = re.search(r"^evidence: (\S+)$", out, re.M).group(0)
    if tamper_quote:
        b = bytearray(base64.b64decode(line[10:]))
        q = b.find(b"\xff\x54\x43\x47\x80\x18")  # TPMS_ATTEST of the quote
        b[q + 40] ^= 1
        line = "evidence: " + base64.b64encode(bytes(b)).decode()
    with open(path, "w") as f:
        f.write(line + "\n")
    return path


def report_data(r):
    nonce, bid = r[0x0003], r[0x0006]
    lay = b"LLMK-REPORT-V2\0\0" + bytes([len(nonce)]) + nonce.ljust(64, b"\0") + \
        r[0x0004] + r[0x0005] + bid[:16].ljust(16, b"\0") + r[0x0009]
    return hashlib.sha512(lay).digest()


def parse_quote(q):
    """TPMS_ATTEST of a quote (TPM 2.0 Part 2 §10.12.8): extraData, the
    PCR selection's mask and pcrDigest."""
    magic, typ = struct.unpack_from(">IH", q, 0)
    assert magic == 0xFF544347 and typ == 0x8018, "not a TPM quote"
    off = 6
    n, = struct.unpack_from(">H", q, off)
    off += 2 + n                                   # qualifiedSigner
    n, = struct.unpack_from(">H", q, off)
    extra = q[off + 2:off + 2 + n]
    off += 2 + n + 17 + 8                          # clockInfo, firmwareVersion
    count, = struct.unpack_from(">I", q, off)
    off += 4
    mask = 0
    for _ in range(count):
        alg, sz = struct.unpack_from(">HB", q, off)
        sel = int.from_bytes(q[off + 3:off + 3 + sz], "little")
        if alg == 0x000B:
            mask |= sel
        off += 3 + sz
    n, = struct.unpack_from(">H", q, off)
    digest = q[off + 2:off + 2 + n]
    assert off + 2 + n == len(q), "bytes after pcrDigest"
    return extra, mask, digest


def replay(fw, kernel):
    """Replay the SHA-256 digests of a crypto-agile firmware log and the
    kernel's bare TCG_PCR_EVENT2 records (PC Client PFP §10.2)."""
    pcrs = [bytes(32)] * 24
    sizes = {0x000B: 32}
    off = 0
    if fw:
        pcr, typ = struct.unpack_from("<II", fw, 0)
        esz, = struct.unpack_from("<I", fw, 28)
        spec = fw[32:32 + esz]
        assert typ == 3 and spec[:16] == b"Spec ID Event03\0", "no Spec ID event"
        nalg, = struct.unpack_from("<I", spec, 24)
        for i in range(nalg):
            a, s = struct.unpack_from("<HH", spec, 28 + 4 * i)
            sizes[a] = s
        off = 32 + esz
    for log, start in ((fw, off), (kernel, 0)):
        off = start
        while off < len(log):
            pcr, typ, cnt = struct.unpack_from("<III", log, off)
            off += 12
            d256 = None
            for _ in range(cnt):
                a, = struct.unpack_from("<H", log, off)
                if a == 0x000B:
                    d256 = log[off + 2:off + 34]
                off += 2 + sizes[a]
            esz, = struct.unpack_from("<I", log, off)
            data = log[off + 4:off + 4 + esz]
            off += 4 + esz
            if typ == 3:  # EV_NO_ACTION
                if pcr == 0 and data[:16] == b"StartupLocality\0":
                    pcrs[0] = bytes(31) + data[16:17]
                continue
            pcrs[pcr] = hashlib.sha256(pcrs[pcr] + d256).digest()
    return pcrs


def p256_pem(pub):
    """SubjectPublicKeyInfo PEM of an ECC P-256 TPMT_PUBLIC (Part 2 §12.2.4)."""
    off = 2 + 2 + 4
    n, = struct.unpack_from(">H", pub, off)
    off += 2 + n + 2 + 2 + 2 + 2 + 2               # policy, sym, scheme+hash, curve, kdf
    xl, = struct.unpack_from(">H", pub, off)
    x = pub[off + 2:off + 2 + xl]
    off += 2 + xl
    yl, = struct.unpack_from(">H", pub, off)
    y = pub[off + 2:off + 2 + yl]
    der = bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d030107034200") + b"\4" + x + y
    b64 = base64.b64encode(der).decode()
    return "-----BEGIN PUBLIC KEY-----\n" + "\n".join(
        b64[i:i + 64] for i in range(0, len(b64), 64)) + "\n-----END PUBLIC KEY-----\n"


def pcrs_serialized(values):
    """The PCR file tpm2_checkquote reads without -l: tpm2-tools'
    TPML_PCR_SELECTION, a u32 count of lists, then TPML_DIGEST lists of at
    most 8 digests, each as the C structure in memory (little-endian,
    TPMS_PCR_SELECTION padded to 8 bytes, TPM2B_DIGEST to 66). Debian's
    tpm2-tools 5.4 loses the 8th digest of a list when the values come bare
    with -l, so that form cannot check 9 PCRs there."""
    sel = struct.pack("<IHB4sx", 1, 0x000B, 3, sum(1 << i for i in QUOTED).to_bytes(4, "little"))
    sel += bytes(8 * 15)
    digests = [values[32 * k:32 * k + 32] for k in range(len(values) // 32)]
    lists = [digests[i:i + 8] for i in range(0, len(digests), 8)]
    out = sel + struct.pack("<I", len(lists))
    for lst in lists:
        out += struct.pack("<I", len(lst))
        for dg in lst + [b""] * (8 - len(lst)):
            out += struct.pack("<H", len(dg)) + dg.ljust(64, b"\0")
    return out


def checkquote(d, r, tamper=None):
    """Debian's tpm2_checkquote on the evidence (with the event log);
    tamper: "quote" flips a bit of the quote, "log" one of the digest of the
    firmware log's last event (ExitBootServices', 72 bytes before the end)."""
    quote, log = bytearray(r[0x0101]), bytearray(r.get(0x0108, b""))
    if tamper == "quote":
        quote[-1] ^= 1
    if tamper == "log":
        log[-76] ^= 1
    files = {"ak.pem": p256_pem(r[0x0103]).encode(), "quote.msg": bytes(quote),
             "quote.sig": r[0x0102], "pcrs.bin": pcrs_serialized(r[0x0105]),
             "eventlog.bin": bytes(log) + r[0x0109]}
    for k, v in files.items():
        with open(os.path.join(d, k), "wb") as f:
            f.write(v)
    qual = hashlib.sha256(r[0x0002]).hexdigest()
    cmd = ["tpm2_checkquote", "-u", "ak.pem", "-m", "quote.msg", "-s", "quote.sig", "-f",
           "pcrs.bin", "-g", "sha256", "-q", qual, "-e", "eventlog.bin"]
    return subprocess.run(cmd, cwd=d, capture_output=True, text=True)


def one_error(out):
    lines = [ln for ln in out.splitlines() if ln.strip()]
    return len(lines) == 1 and lines[0].startswith("error: ")


def check_evidence(name, out, nonce, workdir):
    r = evidence_of(out)
    check(f"{name}: one evidence line that decodes", r is not None, out[-600:])
    if r is None:
        return None
    check(f"{name}: provider vtpm, real TPM records, not labelled simulated",
          r.get(0x0001) == b"vtpm" and 0x0007 not in r and all(
              t in r for t in (0x0101, 0x0102, 0x0103, 0x0104, 0x0105, 0x0106, 0x0107, 0x0108,
                               0x0109)), sorted(hex(t) for t in r))
    check(f"{name}: report data = SHA-512 of the documented layout, nonce as given",
          r[0x0003] == bytes.fromhex(nonce) and report_data(r) == r[0x0002])
    extra, mask, digest = parse_quote(r[0x0101])
    check(f"{name}: quote over SHA-256(report data) and the digest of the listed PCR values",
          extra == hashlib.sha256(r[0x0002]).digest() and
          mask == sum(1 << i for i in QUOTED) and digest == hashlib.sha256(r[0x0105]).digest(),
          f"extra {extra.hex()} mask {mask:#x}")
    vals = {i: r[0x0105][32 * k:32 * k + 32].hex() for k, i in enumerate(QUOTED)}
    shown = dict((int(a), b) for a, b in re.findall(r"^  pcr (\d+) +([0-9a-f]{64})$", out, re.M))
    check(f"{name}: the PCR values the kernel printed are the quoted ones", shown == vals,
          f"{shown}\n{vals}")
    rep = replay(r.get(0x0108, b""), r[0x0109])
    bad = [i for i in QUOTED if rep[i].hex() != vals[i]]
    check(f"{name}: firmware + kernel event logs replay every quoted PCR", not bad,
          f"PCRs differing: {bad}")
    if shutil.which("tpm2_checkquote"):
        d = os.path.join(workdir, "quote")
        os.makedirs(d, exist_ok=True)
        p = checkquote(d, r)
        check(f"{name}: tpm2_checkquote accepts the quote, the PCRs and the event log",
              p.returncode == 0, p.stdout[-800:] + p.stderr[-800:])
        for what in ("quote", "log"):
            d = os.path.join(workdir, f"{what}-tampered")
            os.makedirs(d, exist_ok=True)
            p = checkquote(d, r, tamper=what)
            check(f"{name}: tpm2_checkquote refuses it with one bit of the {what} changed",
                  p.returncode != 0, p.stdout[-400:])
    else:
        skip_data(f"{name}: tpm2_checkquote", "not installed (Debian tpm2-tools; make deps)")
    return r


def credential(r, workdir, name_override=None, secret=b"the verifier's secret"):
    """tpm2_makecredential (offline) for the evidence's EK and AK."""
    d = os.path.join(workdir, "cred")
    os.makedirs(d, exist_ok=True)
    ek = r[0x0107]
    with open(os.path.join(d, "ek.pub"), "wb") as f:
        f.write(struct.pack(">H", len(ek)) + ek)   # a TPM2B_PUBLIC file
    with open(os.path.join(d, "secret"), "wb") as f:
        f.write(secret)
    name = name_override or (b"\0\x0b" + hashlib.sha256(r[0x0103]).digest())
    p = subprocess.run(["tpm2_makecredential", "-T", "none", "-u", "ek.pub", "-s", "secret",
                        "-n", name.hex(), "-o", "cred"], cwd=d, capture_output=True, text=True)
    if p.returncode:
        return None, p.stderr
    with open(os.path.join(d, "cred"), "rb") as f:
        return base64.b64encode(f.read()).decode(), ""


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def refused(p):
    return p.returncode != 0 and re.search(r"^error: ", p.stdout + p.stderr, re.M) is not None


def end_to_end(vm, args, r_old, plain_ids):
    """With the verifier (build/host/verifier): PCR 4 against the image, the
    verifier's checks and export, a model key wrapped to the evidence and
    released in the guest, and the refusals the issue lists."""
    v, w = args.verifier, args.workdir
    pcr4, said = measure_pcr4(v, args.esp)  # the image on the ESP
    check("verifier measure pcr4 of the image", pcr4 is not None, said)
    if not pcr4:
        return
    nonce = os.urandom(16).hex()
    out = vm.command(f"attest --nonce {nonce}", 300)
    r = evidence_of(out)
    check("PCR 4 in the guest is the one the verifier computes offline",
          r is not None and r[0x0105][4 * 32:5 * 32].hex() == pcr4, pcr4)
    ev = evidence_file(out, os.path.join(w, "evidence.txt"))
    ca = os.path.join(w, "tpm", "ek-ca.pem")
    exp = os.path.join(w, "export")
    p = run([v, "vtpm", "--evidence", ev, "--nonce", nonce, "--expect-pcr4", pcr4,
             "--ek-ca", ca, "--export", exp])
    check("verifier vtpm accepts the guest's evidence (quote, logs, PCR 4, EK chain)",
          p.returncode == 0, p.stdout[-800:] + p.stderr[-400:])
    if p.returncode == 0 and shutil.which("tpm2_checkquote"):
        with open(os.path.join(exp, "pcrs.bin"), "rb") as f:
            vals = f.read()
        with open(os.path.join(exp, "pcrs.ser"), "wb") as f:
            f.write(pcrs_serialized(vals))
        q = run(["tpm2_checkquote", "-u", os.path.join(exp, "ak.pem"), "-m",
                 os.path.join(exp, "quote.msg"), "-s", os.path.join(exp, "quote.sig"), "-f",
                 os.path.join(exp, "pcrs.ser"), "-g", "sha256", "-q",
                 os.path.join(exp, "qualification.bin"), "-e", os.path.join(exp, "eventlog.bin")])
        check("tpm2_checkquote accepts the verifier's export", q.returncode == 0,
              q.stdout[-400:] + q.stderr[-400:])
    check("verifier vtpm refuses a wrong nonce",
          refused(run([v, "vtpm", "--evidence", ev, "--nonce", "00" + nonce])))
    check("verifier vtpm refuses a tampered quote",
          refused(run([v, "vtpm", "--evidence", evidence_file(out, os.path.join(
              w, "tampered.txt"), tamper_quote=True), "--nonce", nonce])))
    check("verifier vtpm refuses the PCR 4 of another image",
          refused(run([v, "vtpm", "--evidence", ev, "--nonce", nonce, "--expect-pcr4",
                       "11" * 32])))
    with open(args.model, "rb") as f:
        md = hashlib.sha256(f.read()).hexdigest()
    p = run([v, "wrap", "--evidence", ev, "--nonce", nonce, "--expect-pcr4", pcr4,
             "--key-file", args.key, "--expect-model", md, "--ek-ca", ca])
    m = re.search(r"^wrapped: (\S+)$", p.stdout, re.M)
    check("verifier wrap releases the model key to the evidence", m is not None,
          p.stdout[-400:] + p.stderr[-400:])
    if not m:
        return
    wrapped = m.group(1)
    out = vm.command(f"unseal --wrapped {wrapped}", 120)
    if "no key-wrap module" in out:
        skip_data("unseal --wrapped in the guest", "this build has no shell/keywrap.c (the "
                  "verifier branch)")
        return
    check("unseal --wrapped takes it, released against attestation",
          "released against attestation (vtpm)" in out and "error" not in out, out)
    out = vm.command(f"unseal --wrapped {wrapped}", 120)
    check("the same wrapped key is refused the second time", one_error(out), out)
    out = vm.command("version", 60)
    check("version says the key was released against attestation",
          "model key released against attestation (vtpm)" in out, out)
    out = vm.command("load 1", 120)
    check("load 1 (the sealed model) with the released key", "loaded disk 1" in out, out)
    out = vm.command(INFER, 300)
    check("the sealed model's greedy ids equal the plain model's",
          plain_ids and ids(out) == plain_ids, f"{ids(out)}\n{plain_ids}")
    forged_ak(vm, args, pcr4, ca)
    # a key wrapped to evidence of an earlier key pair (as another boot's)
    ev_old = os.path.join(w, "evidence-old.txt")
    with open(ev_old, "w") as f:
        f.write("evidence: " + base64.b64encode(b"LLMKEV01" + b"".join(
            struct.pack("<HHI", t, 0, len(x)) + x for t, x in r_old.items())).decode() + "\n")
    p = run([v, "wrap", "--evidence", ev_old, "--nonce", r_old[0x0003].hex(), "--expect-pcr4",
             pcr4, "--key-file", args.key, "--ek-ca", ca, "--expect-model", r_old[0x0004].hex()])
    m = re.search(r"^wrapped: (\S+)$", p.stdout, re.M)
    if m:
        out = vm.command(f"unseal --wrapped {m.group(1)}", 120)
        check("a key wrapped for an earlier key pair is refused", one_error(out), out)
    else:
        check("verifier wrap on the earlier evidence", False, p.stdout + p.stderr)


def forged_ak(vm, args, pcr4, ca):
    """The forged AK: the host keeps a genuine bundle's PCRs, logs and EK
    certificate (it crosses the serial line in clear) and quotes its own
    nonce and X25519 key with a software key made from the AK's template
    (mkevidence forge-vtpm). The quote's own checks pass; what the owner's
    verifier releases to it carries a TPM credential for the forged AK, so
    the attacker's X25519 key alone opens nothing, and the guest refuses it."""
    v, w, mk = args.verifier, args.workdir, args.mkevidence
    if not os.path.exists(mk):
        skip_data("the forged-AK attack", f"no {mk}")
        return
    out = vm.command(f"attest --nonce {os.urandom(8).hex()}", 300)
    r = evidence_of(out)
    ev = evidence_file(out, os.path.join(w, "evidence-genuine.txt"))
    apriv, fnonce = os.urandom(32).hex(), os.urandom(16).hex()
    forged = os.path.join(w, "forged.txt")
    p = run([mk, "forge-vtpm", "--evidence", ev, "--nonce", fnonce, "--priv", apriv,
             "--out", forged])
    check("mkevidence forge-vtpm re-signs the genuine bundle with a software AK",
          p.returncode == 0, p.stdout + p.stderr)
    md = r[0x0004].hex() if r else "00" * 32
    p = run([v, "vtpm", "--evidence", forged, "--nonce", fnonce, "--expect-pcr4", pcr4,
             "--ek-ca", ca, "--expect-model", md])
    check("the forged quote passes every check a quote alone allows (signature, PCRs, logs, "
          "EK certificate)", p.returncode == 0, p.stdout[-600:] + p.stderr[-400:])
    p = run([v, "wrap", "--evidence", forged, "--nonce", fnonce, "--expect-pcr4", pcr4,
             "--key-file", args.key, "--expect-model", md, "--ek-ca", ca])
    m = re.search(r"^wrapped: (\S+)$", p.stdout, re.M)
    check("verifier wrap releases to it only with a TPM credential", m is not None,
          p.stdout[-400:] + p.stderr[-400:])
    if not m:
        return
    wf = os.path.join(w, "forged-wrapped.txt")
    with open(wf, "w") as f:
        f.write(m.group(0) + "\n")
    p = run([mk, "unwrap", "--priv", apriv, "--wrapped", wf])
    check("the attacker's X25519 key alone does not open what was released to the forgery",
          p.returncode != 0 and "key:" not in p.stdout and "TPM credential" in p.stderr,
          p.stdout + p.stderr)
    out = vm.command(f"unseal --wrapped {m.group(1)}", 120)
    check("the guest refuses the forgery's release with one error line", one_error(out), out)


INFER = 'infer "Once upon a time" -n 30 --temp 0 --ids'

# The interface each machine's vTPM device speaks and where the kernel finds
# it (kernel/attest.c prints both): x86_64's tpm-crb at the CRB address the
# TPM2 table gives; aarch64 virt's tpm-tis-device, FIFO, at the DSDT's
# Memory32Fixed for MSFT0101, the first platform-bus slot (0x0c000000).
INTERFACE = {"x86_64": ("CRB", "0xfed40000"), "aarch64": ("FIFO (TIS)", "0xc000000")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="x86_64")
    ap.add_argument("--esp", required=True)
    ap.add_argument("--workdir", default="build/qemu-attest")
    ap.add_argument("--verifier", default="build/host/verifier")
    ap.add_argument("--seal", default="build/host/seal")
    ap.add_argument("--mkevidence", default="build/host/mkevidence")
    args = ap.parse_args()
    model = os.path.join(testdata(), "stories260K", "stories260K.gguf")
    gone = missing_tools("swtpm", "swtpm_setup")
    if gone:
        skip_data("attestation in QEMU", f"{gone[0]} not installed (make deps)")
        return summary()
    if not os.path.exists(model):
        skip_data("attestation in QEMU", "no testdata (stories260K)")
        return summary()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    tpm = os.path.join(args.workdir, "tpm")   # a TPM manufactured for this run
    args.model, disks = model, [model]
    verifier = os.path.exists(args.verifier) and os.path.exists(args.seal)
    if verifier:   # disk 1: the same model sealed with a new key, for the key release
        args.key, sealed = seal_model(args.seal, model, args.workdir)
        disks.append(sealed)
    vm = Llmk(args.arch, args.esp, disks, mem="512M", tpm=tpm)
    try:
        boot = vm.boot(240).decode("utf-8", "replace")
        iface, where = INTERFACE[args.arch]
        check(f"boot finds the vTPM over {iface} and copies the firmware's event log",
              re.search(r"attest: vtpm: TPM 2.0 over " + re.escape(f"{iface} at {where}:") +
                        r" .*firmware event log \d+ bytes", boot) is not None, boot[-800:])
        nonce = os.urandom(16).hex()
        t0 = time.monotonic()
        out = vm.command(f"attest --nonce {nonce}", 300)
        print(f"     (attest took {time.monotonic() - t0:.1f} s)")
        r = check_evidence("attest before load", out, nonce, args.workdir)
        # no llmk.cfg: the empty configuration, measured before anything else
        empty = hashlib.sha256(b"").digest()
        pcr_cfg = hashlib.sha256(bytes(32) + empty).digest()
        if r:
            check("PCR 23 holds only the configuration's measurement (none: the empty one)",
                  r[0x0105][8 * 32:] == pcr_cfg and r[0x0009] == empty and
                  r[0x0109].count(b"llmk ") == 1 and
                  f"llmk config {empty.hex()}\0".encode() in r[0x0109],
                  f"pcr23 {r[0x0105][8 * 32:].hex()} log {r[0x0109]!r}")

        out = vm.command("load 0", 120)
        check("load 0", "loaded disk 0" in out, out)
        nonce2 = os.urandom(8).hex()
        out = vm.command(f"attest --nonce {nonce2}", 300)
        r2 = check_evidence("attest after load", out, nonce2, args.workdir)
        if r2:
            with open(model, "rb") as f:
                md = hashlib.sha256(f.read()).digest()
            want = hashlib.sha256(pcr_cfg + md).digest()
            check("load extended PCR 23 by the model file's SHA-256, and logged it",
                  r2[0x0105][8 * 32:] == want and r2[0x0004] == md and
                  f"llmk model {md.hex()}".encode() in r2[0x0109],
                  f"pcr23 {r2[0x0105][8 * 32:].hex()} want {want.hex()}")
            if shutil.which("tpm2_makecredential"):
                cred, err = credential(r2, args.workdir)
                out = vm.command(f"attest --activate {cred}", 300) if cred else err
                check("a credential tpm2_makecredential made for the EK and AK opens in the guest",
                      re.search(r"^secret: " + b"the verifier's secret".hex() + "$", out, re.M)
                      is not None, out)
                cred, err = credential(r2, args.workdir, name_override=b"\0\x0b" + bytes(32))
                out = vm.command(f"attest --activate {cred}", 300) if cred else err
                check("a credential made for another key is refused with one error line",
                      one_error(out) and "TPM_RC_INTEGRITY" in out, out)
            else:
                skip_data("credential activation",
                          "tpm2_makecredential not installed (tpm2-tools)")
            if verifier:
                plain_ids = ids(vm.command(INFER, 300))
                end_to_end(vm, args, r, plain_ids)
            else:
                skip_data("the verifier's checks, key release and unseal --wrapped",
                          f"{args.verifier} not built (the verifier branch)")

        for bad in ("attest --nonce xyz", "attest --nonce 123", "attest --provider nope",
                    "attest --provider snp", "attest --activate %%%", "unseal --wrapped garbage",
                    "unseal --wrapped AAAA", "attest --disk 9"):
            out = vm.command(bad, 120)
            check(f"'{bad}': one error line", one_error(out), out)
        out = vm.command("attest --nonce 01", 300)
        check("still serving after the bad inputs", evidence_of(out) is not None, out[-300:])
        out = vm.command("info", 60)
        check("info still shows the model", "model" in out and "error" not in out, out)
    except TimeoutError as e:
        check("QEMU answered in time", False, e)
    finally:
        vm.close()

    # the same image without a TPM: provider none, and why the others are absent
    vm = Llmk(args.arch, args.esp, [model], mem="512M")
    try:
        boot = vm.boot(240).decode("utf-8", "replace")
        check("without a TPM the boot says there is no vtpm and why",
              "attest: no vtpm (no TPM2 ACPI table" in boot, boot[-600:])
        out = vm.command("attest --nonce 01", 120)
        r = evidence_of(out)
        check("attest without a TPM: provider none, labelled not evidence, absent ones listed",
              r is not None and r.get(0x0001) == b"none" and 0x0101 not in r and
              "NOT HARDWARE EVIDENCE" in out and
              re.search(r"^  vtpm +absent: no TPM2 ACPI table", out, re.M) is not None and
              re.search(r"^  snp +absent: ", out, re.M) is not None, out[-800:])
        out = vm.command("attest --provider vtpm", 120)
        check("attest --provider vtpm without a TPM: one error line saying why",
              one_error(out) and "no TPM2 ACPI table" in out, out)
    except TimeoutError as e:
        check("QEMU without a TPM answered in time", False, e)
    finally:
        vm.close()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
