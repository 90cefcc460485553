#!/usr/bin/env python3
"""tests/host/session.py - confidential sessions end to end on the host.

The guest is build/host/llmctl on a pipe with the SEV-SNP simulator as its
attestation (LLMK_SNP_SIM=1: evidence labelled simulated, verified with
--allow-simulated and the simulator's ARK); tests/qemu/relay.py carries
its serial line to `llmctl --connect`, records what the host sees and
misbehaves on request. Checks:

- -c commands and stdin lines give the output the local llmctl gives for
  the same commands (load, infer, chat with lines read from stdin), and its
  exit status (1 at the first failing -c command, the rest not run);
- `unseal KEYHEX` inside the session takes a model key labelled as
  released over the session, and the sealed model answers as the plain one;
- the bytes the host carried hold none of the prompts, answers or the key;
- a changed character either way, a replayed frame, a swapped client key,
  another session's evidence, a wrong expected measurement, a guest of
  another image and one with no attestation are each refused with one
  "error:" line, and the guest keeps serving the next session; a client
  killed inside its session leaves the guest to the next one;
- a guest told `seed 42` by the host's llmk.cfg is refused unless
  --expect-config names that file;
- with require-session on, a command in clear is refused, sessions work;
  with session-clients, only the listed client key opens one.

Usage: session.py LLMCTL MKEVIDENCE SEAL. Ends "N passed, N failed, N skipped".
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qemu"))
from relay import ProcessGuest, Relay  # noqa: E402
from results import check, skip_data, summary, testdata  # noqa: E402


def main():
    llmctl, mkevidence, seal = sys.argv[1:4]
    model = os.path.join(testdata(), "stories260K", "stories260K.gguf")
    if not os.path.exists(model):
        skip_data("sessions on the host", "no testdata (stories260K)")
        return summary()
    w = tempfile.mkdtemp(prefix="llmk-session-")
    try:
        return run(llmctl, mkevidence, seal, model, w)
    finally:
        shutil.rmtree(w, ignore_errors=True)


def run(llmctl, mkevidence, seal, model, w):
    key_file, sealed, ark = (os.path.join(w, n) for n in ("model.key", "model.sealed", "ark.pem"))
    subprocess.run([seal, "keygen", key_file], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([seal, "seal", "--key-file", key_file, model, sealed], check=True,
                   stdout=subprocess.DEVNULL)
    key = open(key_file).read().strip()
    subprocess.run([mkevidence, "snp", "--nonce", "00", "--priv", "01" * 32, "--out",
                    os.path.join(w, "ev.txt"), "--ark-out", ark], check=True,
                   stdout=subprocess.DEVNULL)
    meas = "".join(f"{0xc0 ^ i:02x}" for i in range(48))   # the simulator's default launch
    env = dict(os.environ, LLMK_SNP_SIM="1")
    disks = ["--disk", model, "--disk", sealed]
    relay = Relay(os.path.join(w, "a.sock"), ProcessGuest([llmctl, *disks], env))
    verify = ["--expect-measurement", meas, "--chain", ark, "--allow-simulated"]

    def client(args, stdin=b"", sock=None, extra=None):
        cmd = [llmctl, "--connect", sock or relay.path, *(extra if extra is not None else verify),
               "--timeout", "60", *args]
        return subprocess.run(cmd, input=stdin, capture_output=True, timeout=180)

    def local(args, stdin=b""):
        return subprocess.run([llmctl, *disks, *args], input=stdin, capture_output=True,
                              timeout=120)

    def same(a):
        return re.sub(rb", [0-9.]+ ms", b"", a)

    def refused(name, p, why):
        err = p.stderr.decode("utf-8", "replace")
        lines = [ln for ln in err.splitlines() if ln.startswith("error: ")]
        check(f"{name}: refused with one error line", p.returncode == 1 and len(lines) == 1 and
              why in lines[0], f"exit {p.returncode}\n{err}")
        q = client(["-c", "version"])
        check(f"{name}: the guest serves the next session", q.returncode == 0 and
              b"build id" in q.stdout, q.stdout[-300:] + q.stderr[-300:])

    infer = 'infer "Once upon a time" -n 24 --temp 0 --ids'
    cmds = ["load 0", infer, 'chat "Tell me a story about a red fox" -n 16 --temp 0']
    args = [a for c in cmds for a in ("-c", c)]
    p, q = client(args), local(args)
    check("-c: a session opens, with a verified simulated SNP report",
          p.returncode == 0 and b"SIMULATED snp evidence verified (MEASUREMENT as expected)"
          in p.stderr, p.stderr.decode("utf-8", "replace"))
    check("-c: the same output as the local llmctl", same(p.stdout) == same(q.stdout) and
          b"ids:" in p.stdout, p.stdout.decode() + "\n---\n" + q.stdout.decode())
    ids = [ln for ln in p.stdout.splitlines() if ln.startswith(b"ids:")]
    answer = p.stdout.split(b"\n")[1] if p.stdout.count(b"\n") > 2 else b""

    lines = (b"load 0\nchat -n 8 --temp 0\nHello there, my secret is marmalade\nAnd again\n\n"
             b"infer \"The little dog\" -n 6 --temp 0\n")
    p, q = client([], stdin=lines), local([], stdin=lines)
    check("stdin: lines as they come, chat reading its own, as the local llmctl",
          p.returncode == 0 and same(p.stdout) == same(q.stdout) and b"you>" not in p.stdout,
          p.stdout.decode() + "\n---\n" + q.stdout.decode() + p.stderr.decode())

    fail = ["-c", "load 0", "-c", "infer", "-c", "version"]
    p, q = client(fail), local(fail)
    check("-c: exit 1 at the first failing command, the rest not run, as the local llmctl",
          p.returncode == 1 == q.returncode and same(p.stdout) == same(q.stdout) and
          b"build id" not in p.stdout, p.stdout.decode() + p.stderr.decode())

    p = client(["-c", f"unseal {key}", "-c", "load 1", "-c", infer])
    out = p.stdout.decode("utf-8", "replace")
    check("unseal inside the session: a key released over an attested session",
          p.returncode == 0 and "released over an attested session (snp, simulated)" in out and
          "insecure" not in out, out + p.stderr.decode())
    check("the sealed model answers as the plain one",
          [ln for ln in p.stdout.splitlines() if ln.startswith(b"ids:")] == ids and ids, out)
    p = client(["-c", "unseal", "-c", "info"])
    check("the key and the sealed model went with the session that brought them",
          p.stdout.startswith(b"no key loaded\nerror: info: no model loaded"),
          p.stdout.decode())

    log = bytes(relay.log)
    secrets = [b"Once upon a time", b"red fox", b"marmalade", b"Hello there", key.encode(),
               key[:16].encode(), b"released over", b"loaded disk", b"little dog"]
    if len(answer) > 24:
        secrets.append(answer[4:28])
    seen = [s for s in secrets if s in log]
    check("the host carried none of the prompts, answers or the key",
          not seen and log.count(b"~S2 ") > 50, f"in clear: {seen}")

    # ---- a hostile host ----
    relay.mode = ("flip-g2c", 1)
    refused("a guest frame changed on the way", client(["-c", "version"]),
            "frame 1 from the guest does not authenticate")
    relay.mode = ("flip-c2g", 0)
    refused("a client frame changed on the way", client(["-c", "version"]),
            "the guest closed the session: frame 0 from the client does not authenticate")
    relay.mode = ("replay-c2g", 0)
    refused("a client frame replayed", client(["-c", "version", "-c", "version"]),
            "frame 0 from the client was replayed")
    relay.mode = ("swap-key", "09" + "00" * 31)
    refused("the client key swapped in session open", client(["-c", "version"]),
            "frame 0 from the guest does not authenticate")
    relay.mode = ("evidence", relay.last_evidence)
    refused("another session's evidence", client(["-c", "version"]), "nonce")
    bad = "".join(f"{0xc0 ^ i ^ (i == 0):02x}" for i in range(48))
    refused("a wrong expected measurement",
            client(["-c", "version"], extra=["--expect-measurement", bad, "--chain", ark,
                                             "--allow-simulated"]), "measurement: the report has")
    p = client(["-c", "version"], extra=["--expect-pcr4", "00" * 32])
    refused("options for another provider's evidence", p, "not an option for snp evidence")

    # a client that connects while the guest (the kernel: this one prints no
    # prompt on a pipe) prints its prompt gets only the prompt's tail, then
    # nothing: it must still open its session
    relay.mode = ("inject-g2c", b"m> ")
    p = client(["--boot-timeout", "20", "-c", "version"])
    check("a client that hears only the prompt's tail still opens its session",
          p.returncode == 0 and b"build id" in p.stdout, p.stdout + p.stderr)

    # a client that dies inside its session: the next one takes over
    dead = subprocess.Popen([llmctl, "--connect", relay.path, *verify], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    while relay.count["g2c"] < 1 and time.monotonic() - t0 < 60:
        time.sleep(0.1)
    dead.kill()
    dead.wait()
    p = client(["-c", "version"])
    check("a client killed inside its session: the next one takes the guest over",
          p.returncode == 0 and b"build id" in p.stdout, p.stdout + p.stderr)

    # ---- other guests ----
    other = os.path.join(w, "other.cfg")
    with open(other, "w") as f:
        f.write("measurement " + "ab" * 48 + "\n")
    relay_b = Relay(os.path.join(w, "b.sock"),
                    ProcessGuest([llmctl, *disks], dict(os.environ, LLMK_SNP_SIM=other)))
    p = client(["-c", "version"], sock=relay_b.path)
    err = p.stderr.decode("utf-8", "replace")
    check("a guest of another image is refused with one error line",
          p.returncode == 1 and err.count("error: ") == 1 and "measurement: the report has" in err, err)
    relay_b.close()
    relay_c = Relay(os.path.join(w, "c.sock"),
                    ProcessGuest([llmctl, *disks], dict(os.environ, LLMK_SNP_SIM="0")))
    p = client(["-c", "version"], sock=relay_c.path)
    err = p.stderr.decode("utf-8", "replace")
    check("a guest without attestation is refused with one error line",
          p.returncode == 1 and err.count("error: ") == 1 and "provider none" in err, err)
    relay_c.close()

    # ---- what the guest was told: a host's llmk.cfg (issue 27 item 2) ----
    told = os.path.join(w, "told.cfg")
    with open(told, "w") as f:
        f.write("seed 42\nn-predict 24\n")
    relay_e = Relay(os.path.join(w, "e.sock"),
                    ProcessGuest([llmctl, *disks, "--config", told], env))
    p = client(["-c", "version"], sock=relay_e.path)
    err = p.stderr.decode("utf-8", "replace")
    check("a guest told 'seed 42' by the host's llmk.cfg is refused with one error line",
          p.returncode == 1 and err.count("error: ") == 1 and
          "config: the guest was told configuration" in err, err)
    p = client(["-c", "version"], sock=relay_e.path, extra=verify + ["--expect-config", told])
    err = p.stderr.decode("utf-8", "replace")
    check("--expect-config names it: the session opens and says what the guest was told",
          p.returncode == 0 and "(21 bytes of " + told + ": seed 42; n-predict 24)" in err, err)
    relay_e.close()

    # ---- require-session, and the clients it admits (issue 27 item 3) ----
    ck = os.path.join(w, "client.key")
    subprocess.run([seal, "keygen", ck], check=True, stdout=subprocess.DEVNULL)
    pub = subprocess.run([llmctl, "--print-client-key", "--client-key-file", ck],
                         capture_output=True, check=True).stdout.decode().split()[-1]
    cfg = os.path.join(w, "require.cfg")
    with open(cfg, "w") as f:
        f.write(f"require-session on\nsession-clients {pub}\n")
    relay_d = Relay(os.path.join(w, "d.sock"),
                    ProcessGuest([llmctl, *disks, "--config", cfg], env))
    owner = verify + ["--expect-config", cfg, "--client-key-file", ck]
    p = client(["-c", "load 0", "-c", "info"], sock=relay_d.path, extra=owner)
    check("require-session on: commands run inside a session", p.returncode == 0 and
          b"architecture" in p.stdout, p.stdout.decode() + p.stderr.decode())
    p = client(["-c", "version"], sock=relay_d.path, extra=verify + ["--expect-config", cfg])
    err = p.stderr.decode("utf-8", "replace")
    check("session-clients: another client key is refused with one error line",
          p.returncode == 1 and err.count("error: ") == 1 and
          "session open: refused: client key" in err, err)
    p = client(["-c", "version"], sock=relay_d.path, extra=owner)
    check("session-clients: the listed client still opens its session after it",
          p.returncode == 0 and b"build id" in p.stdout, p.stdout + p.stderr)
    import socket
    s = socket.socket(socket.AF_UNIX)
    s.connect(relay_d.path)
    s.sendall(b"load 0\r")
    # The guest may still be printing the last client's "session closed"
    # line when this one connects (the relay hands it over): the answer to
    # this command is the first error line.
    got, t0 = b"", time.monotonic()
    while not re.search(rb"(^|\n)error:[^\n]*\n", got) and time.monotonic() - t0 < 30:
        s.settimeout(30)
        more = s.recv(4096)
        if not more:
            break
        got += more
    s.close()
    first_error = next((ln for ln in got.split(b"\n") if ln.startswith(b"error:")), b"")
    check("require-session on: a command in clear is refused",
          first_error.startswith(b"error: load: refused: require-session is on"), got)
    relay_d.close()
    relay.close()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
