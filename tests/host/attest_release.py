#!/usr/bin/env python3
"""tests/host/attest_release.py LLMCTL VERIFIER SEAL MKEVIDENCE — key release
against attestation on the host build, end to end, with the SEV-SNP firmware
simulator (LLMK_SNP_SIM=1) and then the TDX simulator (LLMK_TDX_SIM=1) as the
provider:

  llmctl: attest --provider P --nonce N        (a sealed stories260K on disk 0)
  verifier P --evidence ... --allow-simulated  (its measurement or MRTD)
  verifier wrap ... --expect-measurement M (--expect-mrtd) --expect-model SHA256
  llmctl: unseal --wrapped B64; load 0; infer --ids
                                               == the plain model's greedy ids

and the refusals: a wrong nonce, another measurement, a replayed wrapped key,
a wrapped key made for another boot, evidence without --allow-simulated;
each one error, and the guest keeps serving. Ends with the counts line.
"""
import hashlib
import os
import re
import secrets
import subprocess
import sys
import tempfile

LLMCTL, VERIFIER, SEAL, MKEVIDENCE = sys.argv[1:5]
TD = os.environ.get("LLMK_TESTDATA", "../shared/testdata")
MODEL = os.path.join(TD, "stories260K", "stories260K.gguf")
PROMPT = "Once upon a time"
passed = failed = skipped = 0


def ok(name):
    global passed
    passed += 1
    print("ok   " + name)


def bad(name, why):
    global failed
    failed += 1
    print("FAIL " + name)
    for line in str(why).splitlines()[-12:]:
        print("     " + line)


def check(name, cond, why=""):
    ok(name) if cond else bad(name, why)


class Guest:
    """One llmctl process (a boot): commands in, each answer read up to a sentinel."""

    def __init__(self, disk, env):
        self.p = subprocess.Popen([LLMCTL, "--disk", disk], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  env=env, text=True, bufsize=1)

    def cmd(self, line):
        self.p.stdin.write(line + "\nuptime\n")
        self.p.stdin.flush()
        out = []
        while True:
            l = self.p.stdout.readline()
            if not l:
                raise RuntimeError("llmctl ended; output so far:\n" + "".join(out))
            if l.startswith("up "):
                return "".join(out)
            out.append(l)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def run(args):
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def errors(text):
    return [l for l in text.splitlines() if l.startswith("error:")]


def main():
    global skipped
    if not os.path.exists(MODEL):
        print("skip: no stories260K model in " + TD)
        if os.environ.get("LLMK_REQUIRE_TESTDATA") == "1":
            bad("stories260K present", "missing (LLMK_REQUIRE_TESTDATA=1)")
        else:
            skipped += 1
        return
    tmp = tempfile.mkdtemp(prefix="llmk-release-")
    key = os.path.join(tmp, "model.key")
    sealed = os.path.join(tmp, "model.sealed")
    with open(key, "w") as f:
        f.write(secrets.token_hex(32) + "\n")
    os.chmod(key, 0o600)
    rc, out, err = run([SEAL, "seal", "--key-file", key, MODEL, sealed])
    if rc != 0:
        bad("seal the model", out + err)
        return
    digest = hashlib.sha256(open(MODEL, "rb").read()).hexdigest()
    infer = 'infer "%s" -n 24 --temp 0 --ids' % PROMPT
    rc, out, _ = run([LLMCTL, "--disk", MODEL, "-c", "load 0", "-c", infer])
    want = [l for l in out.splitlines() if l.startswith("ids:")]
    if rc != 0 or len(want) != 1:
        bad("plain model ids", out)
        return

    for prov in ("snp", "tdx"):
        release(prov, tmp, sealed, key, digest, infer, want)


# provider: the simulator's switch, how its root is written out, the
# measurement the verifier prints and the option that expects it
PROVIDERS = {
    "snp": ("LLMK_SNP_SIM", ["snp", "--nonce", "00", "--priv", "%064x" % 7, "--out",
                             os.devnull, "--ark-out"], r"measurement\s+([0-9a-f]{96})",
            "--expect-measurement"),
    "tdx": ("LLMK_TDX_SIM", ["tdx-chain", "--out"], r"mrtd\s+([0-9a-f]{96})", "--expect-mrtd"),
}


def release(prov, tmp, sealed, key, digest, infer, want):
    var, mkroot, meas_re, expect = PROVIDERS[prov]
    env = dict(os.environ, **{var: "1"})
    ark = os.path.join(tmp, prov + "-root.pem")
    # the simulator's default launch is the same in every process: its root
    rc, out, err = run([MKEVIDENCE] + mkroot + [ark])
    if rc != 0:
        bad(prov + ": the simulator's root", out + err)
        return

    g = Guest(sealed, env)
    g2 = Guest(sealed, env)  # another boot
    try:
        nonce = secrets.token_hex(16)
        a = g.cmd("attest --provider %s --nonce %s" % (prov, nonce))
        ev = [l for l in a.splitlines() if l.startswith("evidence: ")]
        check(prov + ": attest: one evidence line, labelled SIMULATED, the sealed "
              "disk's digest", len(ev) == 1 and "SIMULATED" in a and digest in a, a)
        if len(ev) != 1:
            return
        evf = os.path.join(tmp, prov + "-evidence.txt")
        open(evf, "w").write(ev[0] + "\n")
        base = ["--evidence", evf, "--chain", ark]

        rc, out, err = run([VERIFIER, prov, "--nonce", nonce, "--allow-simulated"] + base)
        m = re.search(meas_re, out)
        check(prov + ": verifier accepts the simulated bundle (SIMULATED, test root)",
              rc == 0 and m and "SIMULATED" in out, out + err)
        if not m:
            return
        meas = m.group(1)
        rc, out, err = run([VERIFIER, prov, "--nonce", nonce] + base)
        check(prov + ": verifier refuses simulated evidence without --allow-simulated",
              rc == 1 and len(errors(err)) == 1 and "simulated" in err, out + err)
        rc, out, err = run([VERIFIER, prov, "--nonce", "00" + nonce, "--allow-simulated"] + base)
        check(prov + ": verifier refuses another nonce", rc == 1 and len(errors(err)) == 1,
              out + err)

        wrap = [VERIFIER, "wrap", "--nonce", nonce, "--allow-simulated", "--key-file", key,
                "--expect-model", digest] + base
        other = ("%096x" % (int(meas, 16) ^ 1))
        rc, out, err = run(wrap + [expect, other])
        check(prov + ": verifier wrap refuses another image's measurement",
              rc == 1 and len(errors(err)) == 1 and "wrapped" not in out, out + err)
        rc, out, err = run(wrap + [expect, meas])
        w = re.search(r"wrapped: ([A-Za-z0-9+/=]+)", out)
        check(prov + ": verifier wrap releases the key to the attested guest", rc == 0 and w,
              out + err)
        if not w:
            return
        blob = w.group(1)

        a2 = g2.cmd("attest --provider %s --nonce %s" % (prov, nonce))
        r = g2.cmd("unseal --wrapped " + blob)
        check(prov + ": " + "another boot refuses the wrapped key (one error, keeps serving)",
              len(errors(r)) == 1, r)

        r = g.cmd("unseal --wrapped " + blob)
        check(prov + ": " + "unseal --wrapped accepts it", not errors(r), r)
        v = g.cmd("version")
        check(prov + ": version says the key was released against attestation (simulated)",
              "released against attestation (%s, simulated)" % prov in v, v)
        r = g.cmd("load 0")
        got = [l for l in g.cmd(infer).splitlines() if l.startswith("ids:")]
        check(prov + ": " + "the sealed model, released by attestation, gives the plain model's greedy ids",
              not errors(r) and got == want, r + "\nwant %s\ngot  %s" % (want, got))
        r = g.cmd("unseal --wrapped " + blob)
        check(prov + ": " + "a replayed wrapped key is refused (one error, keeps serving)",
              len(errors(r)) == 1, r)
        r = g.cmd("unseal --wrapped AAAA")
        check(prov + ": " + "garbage for --wrapped: one error", len(errors(r)) == 1, r)
        del a2
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        bad(prov + ": the guest kept serving", e)
    finally:
        for p in (g, g2):
            try:
                p.close()
            except Exception:
                p.p.kill()


main()
print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed else 0)
