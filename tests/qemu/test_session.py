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
import re
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qemu import qemu_command, start_tpm, stop_tpm  # noqa: E402
from relay import ProcessGuest, Relay, SocketGuest  # noqa: E402

passed = failed = skipped = 0
TPM_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "tpm.sh")


def check(name, cond, why=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok   {name}", flush=True)
    else:
        failed += 1
        print(f"FAIL {name}", flush=True)
        for line in str(why).splitlines()[:20]:
            print(f"     {line}")


def wait_for(pred, timeout):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return True
        time.sleep(0.2)
    return False


def socket_guest(path, timeout=30):
    """QEMU's serial socket, once QEMU has made it."""
    t0 = time.monotonic()
    while True:
        try:
            return SocketGuest(path)
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() - t0 > timeout:
                raise
            time.sleep(0.1)


def ids(out):
    return [ln for ln in out.splitlines() if ln.startswith(b"ids:")]


def main():
    global skipped
    ap = argparse.ArgumentParser()
    ap.add_argument("--esp", required=True)
    ap.add_argument("--llmctl", default="build/host/llmctl")
    ap.add_argument("--verifier", default="build/host/verifier")
    ap.add_argument("--seal", default="build/host/seal")
    ap.add_argument("--mkevidence", default="build/host/mkevidence")
    ap.add_argument("--workdir", default="build/qemu-session")
    args = ap.parse_args()
    data = os.environ.get("LLMK_TESTDATA", "../shared/testdata")
    model = os.path.join(data, "stories260K", "stories260K.gguf")
    need = os.environ.get("LLMK_REQUIRE_TESTDATA") == "1"
    for tool in ("swtpm", "swtpm_setup"):
        if not shutil.which(tool):
            print(f"{'FAIL' if need else 'skip'} a session in QEMU: {tool} not installed (make deps)")
            print(f"0 passed, {int(need)} failed, {int(not need)} skipped")
            return int(need)
    if not os.path.exists(model):
        print(f"{'FAIL' if need else 'skip'} a session in QEMU: no testdata (stories260K)")
        print(f"0 passed, {int(need)} failed, {int(not need)} skipped")
        return int(need)
    w = os.path.abspath(args.workdir)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    key_file, sealed = os.path.join(w, "model.key"), os.path.join(w, "model.sealed")
    subprocess.run([args.seal, "keygen", key_file], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([args.seal, "seal", "--key-file", key_file, model, sealed], check=True,
                   stdout=subprocess.DEVNULL)
    key = open(key_file).read().strip()
    with open(model, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    efi = os.path.join(os.path.dirname(os.path.abspath(args.esp)), "llmk.efi")
    p = subprocess.run([args.verifier, "measure", "pcr4", efi], capture_output=True, text=True)
    m = re.search(r"^pcr4: ([0-9a-f]{64})$", p.stdout, re.M)
    check("verifier measure pcr4 of the image", m is not None, p.stdout + p.stderr)
    if not m:
        print(f"{passed} passed, {failed} failed, {skipped} skipped")
        return 1
    pcr4 = m.group(1)

    tpm = os.path.join(w, "tpm")
    serial_sock, serial_log = os.path.join(w, "serial.sock"), os.path.join(w, "serial.log")
    cmd = qemu_command("x86_64", args.esp, [model, sealed], "512M", 2, w,
                       tpm_sock=start_tpm(tpm), serial_sock=serial_sock, serial_log=serial_log)
    qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    relays = []
    host_tpm = os.path.join(w, "other-tpm")
    try:
        relay = Relay(os.path.join(w, "client.sock"), socket_guest(serial_sock))
        relays.append(relay)
        booted = wait_for(lambda: b"llm> " in relay.g2c_log, 240)
        check("the kernel boots to its prompt on the serial socket", booted,
              bytes(relay.g2c_log[-600:]).decode("utf-8", "replace"))
        if not booted:
            return 1
        verify = ["--expect-pcr4", pcr4, "--ek-ca", os.path.join(tpm, "ek-ca.pem")]

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
        if qemu.poll() is None:
            qemu.kill()
        qemu.wait()
        stop_tpm(tpm)
        subprocess.run([TPM_SH, "stop", host_tpm], check=False)
    told_boot(args, w, model, pcr4)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


def told_boot(args, w, model, pcr4):
    """The host adds an llmk.cfg to the boot volume: the image and PCR4 are
    the same, but the guest measures and binds what it was told."""
    esp, cfg = os.path.join(w, "esp-told.img"), os.path.join(w, "told.cfg")
    shutil.copyfile(args.esp, esp)
    with open(cfg, "w") as f:
        f.write("seed 42\nn-predict 24\n")
    subprocess.run(["mcopy", "-i", esp, cfg, "::/llmk.cfg"], check=True,
                   env=dict(os.environ, MTOOLS_SKIP_CHECK="1"))
    tpm = os.path.join(w, "tpm-told")
    serial_sock = os.path.join(w, "serial-told.sock")
    cmd = qemu_command("x86_64", esp, [model], "512M", 2, w, tpm_sock=start_tpm(tpm),
                       serial_sock=serial_sock, serial_log=os.path.join(w, "serial-told.log"))
    qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    relay = None
    try:
        relay = Relay(os.path.join(w, "told.sock"), socket_guest(serial_sock))
        booted = wait_for(lambda: b"llm> " in relay.g2c_log, 240)
        check("a boot with the host's llmk.cfg reaches its prompt", booted,
              bytes(relay.g2c_log[-600:]).decode("utf-8", "replace"))
        if not booted:
            return
        verify = ["--expect-pcr4", pcr4, "--ek-ca", os.path.join(tpm, "ek-ca.pem")]
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
        if relay:
            relay.close()
        if qemu.poll() is None:
            qemu.kill()
        qemu.wait()
        stop_tpm(tpm)


if __name__ == "__main__":
    sys.exit(main())
