#!/usr/bin/env python3
"""tests/qemu/test_session.py - a confidential session with the kernel under QEMU.

One boot (x86_64, OVMF, a fresh swtpm as -device tpm-crb) with the
reference model on disk 0 and the same model sealed under a new key on
disk 1. The serial line is a unix socket QEMU serves and logs (its
chardev logfile: every byte the guest sends); tests/qemu/relay.py sits
between it and `build/host/llmctl --connect` and records what the client
sends. The client verifies the vTPM evidence (PCR4 from `verifier
measure pcr4`, the EK certificate against the TPM's CA, the model digest).

- in one session: `unseal KEYHEX` (released over the session), `load 1`,
  `infer` and `chat` on the sealed model, `infer` on the plain one (the same
  ids), all output as the client prints it;
- neither QEMU's log of the serial line nor the client's bytes hold the
  prompts, the answers or the key;
- a guest frame and a client frame changed on the way, a replayed client
  frame, a wrong expected PCR4 and a session to the wrong guest (a host
  process with a software TPM of its own posing as the guest) are each
  refused with one error line, and the kernel serves the next session;
- a second boot whose boot volume the host gave an llmk.cfg (`seed 42`,
  `n-predict 24`): PCR4 as expected, yet the session is refused with one
  error line unless `--expect-config` names that file (issue 27 item 2).

Python standard library only. Ends with "N passed, N failed, N skipped".
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qemu import SessionQemu, esp_with, ids, measure_pcr4, missing_tools, seal_model  # noqa: E402
from relay import ProcessGuest, Relay  # noqa: E402
from results import check, skip_data, summary, testdata  # noqa: E402

TPM_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "tpm.sh")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--esp", required=True)
    ap.add_argument("--llmctl", default="build/host/llmctl")
    ap.add_argument("--verifier", default="build/host/verifier")
    ap.add_argument("--seal", default="build/host/seal")
    ap.add_argument("--mkevidence", default="build/host/mkevidence")
    ap.add_argument("--workdir", default="build/qemu-session")
    args = ap.parse_args()
    model = os.path.join(testdata(), "stories260K", "stories260K.gguf")
    gone = missing_tools("swtpm", "swtpm_setup")
    if gone:
        skip_data("a session in QEMU", f"{gone[0]} not installed (make deps)")
        return summary()
    if not os.path.exists(model):
        skip_data("a session in QEMU", "no testdata (stories260K)")
        return summary()
    w = os.path.abspath(args.workdir)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    key_file, sealed = seal_model(args.seal, model, w)
    key = open(key_file).read().strip()
    with open(model, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    pcr4, said = measure_pcr4(args.verifier, args.esp)
    check("verifier measure pcr4 of the image", pcr4 is not None, said)
    if not pcr4:
        return summary()

    vm = SessionQemu(args.esp, [model, sealed], w)
    relay, tpm, serial_log = vm.relay, vm.tpm, vm.serial_log
    relays = []
    host_tpm = os.path.join(w, "other-tpm")
    try:
        booted = vm.booted(240)
        check("the kernel boots to its prompt on the serial socket", booted, vm.boot_tail())
        if not booted:
            return summary()
        verify = vm.verify_args(pcr4)

        def client(cmds, sock=None, extra=None):
            c = [args.llmctl, "--connect", sock or relay.path, *(extra or verify),
                 "--timeout", "300", *[a for x in cmds for a in ("-c", x)]]
            return subprocess.run(c, capture_output=True, timeout=600)

        def refused(name, p, why):
            err = p.stderr.decode("utf-8", "replace")
            lines = [ln for ln in err.splitlines() if ln.startswith("error: ")]
            check(f"{name}: refused with one error line", p.returncode == 1 and
                  len(lines) == 1 and why in lines[0], f"exit {p.returncode}\n{err}")
            q = client(["version"])
            check(f"{name}: the kernel serves the next session",
                  q.returncode == 0 and b"machine   QEMU" in q.stdout,
                  q.stdout[-300:] + q.stderr[-400:])

        infer = 'infer "Once upon a time" -n 24 --temp 0 --ids'
        t0 = time.monotonic()
        p = client([f"unseal {key}", "load 1", infer,
                    'chat "Tell me about the blue whale" -n 16 --temp 0', "load 0", infer],
                   extra=verify + ["--expect-model", digest])
        out, err = p.stdout, p.stderr.decode("utf-8", "replace")
        print(f"     (the session took {time.monotonic() - t0:.1f} s)")
        check("a session opens on verified vTPM evidence: PCR4, EK chain, model",
              p.returncode == 0 and "vtpm evidence verified (PCR4 as expected), model "
              f"{digest} (as expected)" in err and "SIMULATED" not in err, err)
        check("unseal inside the session: released over an attested session (vtpm)",
              b"released over an attested session (vtpm), key id" in out, out.decode())
        check("infer and chat on the sealed model, then the plain one: the same ids",
              b"loaded disk 1" in out and len(ids(out)) == 2 and ids(out)[0] == ids(out)[1] and
              out.count(b"\n") > 6, out.decode())
        lines = out.split(b"\n")
        at = [i for i, ln in enumerate(lines) if ln.startswith(b"loaded disk 1")]
        answer = lines[at[0] + 1] if at and at[0] + 1 < len(lines) else b""
        sent, logged = bytes(relay.c2g_log), open(serial_log, "rb").read()
        secrets = [b"Once upon a time", b"blue whale", key.encode(), key[:16].encode(),
                   key[-16:].encode(), b"released over", b"loaded disk", b"ids:"]
        if len(answer) > 24:
            secrets.append(answer[:24])
        check("QEMU's serial log and the client's bytes hold no prompt, answer or key",
              not [s for s in secrets if s in sent or s in logged] and
              logged.count(b"~S2 ") > 30 and sent.count(b"~S2 ") >= 7,
              f"in clear: {[s for s in secrets if s in sent or s in logged]}")

        relay.mode = ("flip-g2c", 1)
        refused("a guest frame changed on the way", client(["version"]),
                "frame 1 from the guest does not authenticate")
        relay.mode = ("flip-c2g", 0)
        refused("a client frame changed on the way", client(["version"]),
                "the guest closed the session: frame 0 from the client does not authenticate")
        relay.mode = ("replay-c2g", 0)
        refused("a client frame replayed", client(["version", "version"]),
                "frame 0 from the client was replayed")
        refused("a wrong expected PCR4",
                client(["version"], extra=["--expect-pcr4", "11" * 32, "--ek-ca",
                                           os.path.join(tpm, "ek-ca.pem")]), "PCR4")

        # the forged AK: the relay re-signs the guest's genuine evidence with a
        # software key of the AK's template over the client's nonce and its
        # own X25519 key; the client's checks of the quote pass, its
        # credential opens in no TPM, and the relay never gets a frame
        def forge(nonce, line):
            src, out = os.path.join(w, "relay-genuine.txt"), os.path.join(w, "relay-forged.bin")
            with open(src, "wb") as f:
                f.write(line.rstrip(b"\r\n").replace(b"session-evidence: ", b"evidence: ") +
                        b"\n")
            subprocess.run([args.mkevidence, "forge-vtpm", "--evidence", src, "--nonce", nonce,
                            "--priv", "17" * 32, "--out", out], check=True,
                           stdout=subprocess.DEVNULL)
            with open(out, "rb") as f:   # mkevidence writes an "evidence: <base64>" line
                return f.read().replace(b"evidence: ", b"session-evidence: ", 1)
        relay.mode = ("forge", forge)
        before = len(relay.c2g_log)
        p = client(["infer \"the vault code is 8812\" -n 4"])
        sent = bytes(relay.c2g_log[before:])
        refused("a relay that forged the AK's quote", p, "activation")
        check("the forged-AK relay carried no command from the client",
              b"8812" not in sent and b"~S" not in sent and b"session activate " in sent,
              sent[:400])

        # the wrong guest: a host process with its own software TPM poses as it
        subprocess.run([TPM_SH, "start", host_tpm, "host"], check=True)
        fake = Relay(os.path.join(w, "fake.sock"), ProcessGuest(
            [args.llmctl, "--disk", model],
            dict(os.environ, LLMK_VTPM=os.path.join(host_tpm, "swtpm.sock"))))
        relays.append(fake)
        refused("a session to the wrong guest", client(["version"], sock=fake.path),
                "simulated evidence")
        p = client(["load 0", infer])
        check("after all of it, the kernel answers in a new session",
              p.returncode == 0 and len(ids(p.stdout)) == 1, p.stdout + p.stderr)
    except (TimeoutError, subprocess.TimeoutExpired) as e:
        check("QEMU answered in time", False, e)
    finally:
        for r in relays:
            r.close()
        vm.close()
        subprocess.run([TPM_SH, "stop", host_tpm], check=False)
    told_boot(args, w, model, pcr4)
    return summary()


def told_boot(args, w, model, pcr4):
    """The host adds an llmk.cfg to the boot volume: the image and PCR4 are
    the same, but the guest measures and binds what it was told."""
    cfg = os.path.join(w, "told.cfg")
    with open(cfg, "w") as f:
        f.write("seed 42\nn-predict 24\n")
    esp = esp_with(args.esp, os.path.join(w, "esp-told.img"), {"llmk.cfg": cfg})
    vm = SessionQemu(esp, [model], w, name="told")
    relay = vm.relay
    try:
        booted = vm.booted(240)
        check("a boot with the host's llmk.cfg reaches its prompt", booted, vm.boot_tail())
        if not booted:
            return
        verify = vm.verify_args(pcr4)
        c = [args.llmctl, "--connect", relay.path, "--timeout", "300", "-c", "version"]
        p = subprocess.run(c + verify, capture_output=True, timeout=600)
        err = p.stderr.decode("utf-8", "replace")
        lines = [ln for ln in err.splitlines() if ln.startswith("error: ")]
        check("told 'seed 42': the session is refused with one error line (PCR4 unchanged)",
              p.returncode == 1 and len(lines) == 1 and
              "config: the guest was told configuration" in lines[0], err)
        p = subprocess.run(c + verify + ["--expect-config", cfg], capture_output=True,
                           timeout=600)
        err = p.stderr.decode("utf-8", "replace")
        check("--expect-config names it: the session opens and says what the guest was told",
              p.returncode == 0 and "PCR4 as expected" in err and
              f"(21 bytes of {cfg}: seed 42; n-predict 24)" in err, err)
    except (TimeoutError, subprocess.TimeoutExpired) as e:
        check("QEMU answered in time", False, e)
    finally:
        vm.close()


if __name__ == "__main__":
    sys.exit(main())
