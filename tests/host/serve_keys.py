#!/usr/bin/env python3
"""tests/host/serve_keys.py - a sealed model's key released over attested
TLS (docs/tls.md, "Releasing a sealed model's key"), on the host build.

build/host/llmctl boots with a sealed stories260K as its only disk and no
model loaded, serves with `serve --port 0`, the SEV-SNP simulator as the
attestation the client verifies (LLMK_SNP_SIM=1) and, when swtpm is
installed, a software TPM beside it (LLMK_VTPM) whose PCR 23 takes every
measurement: its evidence's kernel event log shows what was extended
(without swtpm those checks skip, naming it). The attacks, each answered
with an OpenAI error object while the server keeps serving:

- POST /v1/keys on plain HTTP (`serve --plain`): 404, like any unknown path;
- on a TLS connection that did not attest: 409;
- after attesting with nonce A, then again with nonce B, a release naming
  A: 409 (only the latest counts), and the attempt is spent: 409 for B too;
- vtpm evidence whose credential was not activated: 409;
- a key that does not open the sealed disk: 403, nothing loaded, nothing
  measured;
- truncated, oversized and non-base64 bodies, an unknown member: 400 each;
- verifier tls --release-key-file without --expect-model, or with another
  model: refused before any key is sent.

And the release itself: `verifier tls ... --expect-model D
--release-key-file model.key --load` passes every check, releases, the
guest loads the disk; the event `llmk key-release snp-tls key-id ID
release HEX` is in the measurements; `version` says the key was released
over attested TLS; a greedy chat over a new TLS connection (the key
outlives the one that brought it) equals the shell's `chat` on the plain
model. A second release of the same key is "already in place" and
measured no second time; another key is 409.

usage: serve_keys.py LLMCTL VERIFIER SEAL MKEVIDENCE
"""
import base64
import hashlib
import http.client
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qemu"))
from results import check, skip, skip_data, summary  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_tls import client_ctx, records  # noqa: E402

HOST = "127.0.0.1"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TPM_SH = os.path.join(ROOT, "tools", "tpm.sh")
REC_TPM_LOG_KERNEL = 0x0109
PROMPT = "hello"


def tls(port):
    return http.client.HTTPSConnection(HOST, port, context=client_ctx(), timeout=30)


def call(c, method, path, body=None):
    data = json.dumps(body) if isinstance(body, (dict, list)) else body
    c.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
    r = c.getresponse()
    text = r.read().decode()
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    return r.status, obj, text


def err_type(obj):
    return obj.get("error", {}).get("type") if isinstance(obj, dict) else None


def attest(c, provider="snp"):
    nonce = secrets.token_hex(32)
    st, obj, text = call(c, "POST", "/v1/attestation", {"nonce": nonce, "provider": provider})
    return nonce if st == 200 else None, text


def key_b64(hexkey):
    return base64.b64encode(bytes.fromhex(hexkey)).decode()


def releases(port):
    """The `llmk key-release` events of PCR 23 (the vtpm evidence's kernel log)."""
    c = tls(port)
    st, obj, text = call(c, "POST", "/v1/attestation", {"nonce": "00" * 32, "provider": "vtpm"})
    c.close()
    if st != 200:
        return None
    log = records(base64.b64decode(obj["evidence"])).get(REC_TPM_LOG_KERNEL, b"")
    return re.findall(rb"llmk key-release [ -~]*? release [0-9a-f]{64}", log)


def start_tpm(w):
    if not shutil.which("swtpm") or not shutil.which("swtpm_setup"):
        return None, "swtpm not installed (Debian swtpm, swtpm-tools; make deps)"
    d = os.path.join(w, "tpm")
    r = subprocess.run([TPM_SH, "start", d, "host"], capture_output=True, timeout=120)
    if r.returncode:
        return None, r.stderr.decode()[-300:]
    return d, None


class Server:
    """llmctl serving (TLS unless plain) with its output collected."""

    def __init__(self, llmctl, disk, env, plain=False):
        args = [llmctl, "--disk", disk, "-c", "serve --plain --port 0" if plain else "serve --port 0", "-i"]
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, env=env)
        self.out, self.port = "", None
        deadline = time.time() + 30
        while time.time() < deadline:
            ln = self.p.stdout.readline().decode()
            self.out += ln
            m = re.search(r"serving on 127\.0\.0\.1:(\d+)", ln)
            if m:
                self.port = int(m.group(1))
                break
            if not ln:
                break
        self.lock = threading.Lock()
        threading.Thread(target=self.drain, daemon=True).start()

    def drain(self):
        for ln in self.p.stdout:
            with self.lock:
                self.out += ln.decode("utf-8", "replace")

    def text(self):
        with self.lock:
            return self.out

    def stop(self):
        try:
            self.p.stdin.write(b"version\n")
            self.p.stdin.close()
            rc = self.p.wait(timeout=30)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            self.p.kill()
            rc = -1
        time.sleep(0.1)
        return rc, self.text()


def shell_chat(llmctl, model):
    out = subprocess.run([llmctl, "--disk", model, "-c", "load 0", "-c",
                          'chat "%s" --temp 0 -n 20' % PROMPT],
                         stdin=subprocess.DEVNULL, capture_output=True, timeout=60).stdout.decode()
    return "\n".join(out.split("\n")[2:])[:-1]  # after "loaded disk", "chat: template"


def main():
    llmctl, verifier, seal, mkevidence = sys.argv[1:5]
    data = os.environ.get("LLMK_TESTDATA", "../shared/testdata")
    model = os.path.join(data, "stories260K", "stories260K.gguf")
    if not os.path.exists(model):
        skip_data("key release over TLS", "no testdata (stories260K)")
        return summary()
    w = tempfile.mkdtemp(prefix="llmk-keys-")
    tpm = None
    try:
        key, other = secrets.token_hex(32), secrets.token_hex(32)
        kf = os.path.join(w, "model.key")
        with open(kf, "w") as f:
            f.write(key + "\n")
        sealed = os.path.join(w, "model.sealed")
        subprocess.run([seal, "seal", "--key-file", kf, model, sealed], check=True,
                       stdout=subprocess.DEVNULL)
        ark = os.path.join(w, "ark.pem")
        subprocess.run([mkevidence, "snp", "--nonce", "00", "--priv", "01" * 32, "--out",
                        os.devnull, "--ark-out", ark], check=True, stdout=subprocess.DEVNULL)
        digest = hashlib.sha256(open(model, "rb").read()).hexdigest()
        want_chat = shell_chat(llmctl, model)

        env = {k: v for k, v in os.environ.items() if k not in ("LLMK_SNP_SIM", "LLMK_TDX_SIM", "LLMK_VTPM")}
        env["LLMK_SNP_SIM"] = "1"
        plain = Server(llmctl, sealed, env, plain=True)
        if plain.port:
            c = http.client.HTTPConnection(HOST, plain.port, timeout=30)
            st, obj, text = call(c, "POST", "/v1/keys", {"nonce": "00", "key": key_b64(key), "load": True})
            check("plain HTTP (serve --plain): POST /v1/keys is an unknown path (404)",
                  st == 404 and err_type(obj) == "invalid_request_error", text)
            st, _, text = call(c, "GET", "/health")
            check("plain HTTP: no model loaded after it (/health 503)", st == 503, text)
            c.close()
        rc, out = plain.stop()
        check("plain HTTP: the key never reached the shell", "released" not in out and rc == 0, out[-800:])

        tpm, why = start_tpm(w)
        if tpm:
            env["LLMK_VTPM"] = os.path.join(tpm, "swtpm.sock")
        srv = Server(llmctl, sealed, env)
        check("serve --port 0 serves attested TLS with the sealed disk and no model", srv.port, srv.text())
        key_id = None
        if srv.port:
            key_id = run(srv, verifier, kf, key, other, digest, ark, want_chat, tpm, why)
        rc, out = srv.stop()
        check("after all of it the shell answers version and serve stops at the input's end",
              rc == 0 and "serve: stopped" in out and "llmk " in out, out[-1500:])
        check("version says the key was released over attested TLS (snp, simulated), by its id",
              key_id and "model key released over attested TLS (snp, simulated), key id %s" % key_id
              in out, out[-1200:])
        check("the console never shows the key, only its id",
              key not in out and key_b64(key) not in out and other not in out, out[-1500:])
    finally:
        if tpm:
            subprocess.run([TPM_SH, "stop", tpm], check=False)
        shutil.rmtree(w, ignore_errors=True)
    return summary()


def run(srv, verifier, kf, key, other, digest, ark, want_chat, tpm, tpm_why):
    port = srv.port
    meas = "".join(f"{0xc0 ^ i:02x}" for i in range(48))  # the simulator's default launch
    verify = ["--provider", "snp", "--expect-measurement", meas, "--chain", ark, "--allow-simulated"]
    key_id = None

    def vtls(args):
        return subprocess.run([verifier, "tls", "--connect", f"{HOST}:{port}", "--timeout", "30", *verify, *args],
                              capture_output=True, timeout=120)

    def one_error(p, why):
        err = p.stderr.decode("utf-8", "replace")
        lines = [ln for ln in err.splitlines() if ln.startswith("error: ")]
        return p.returncode == 1 and len(lines) == 1 and why in lines[0]

    def serving(c):
        st, _, _ = call(c, "GET", "/v1/models")
        return st == 200

    c = tls(port)
    body = {"nonce": "00" * 32, "key": key_b64(key), "load": True}
    c.request("POST", "/v1/keys", body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    text = r.read().decode()
    check("a release on a connection that did not attest: 409", r.status == 409 and
          "no completed attestation" in text, text)
    check("an answer to /v1/keys ends its connection (the engine that decrypted the key is "
          "wiped at close)", r.getheader("Connection") == "close" and r.will_close,
          str(r.getheaders()))
    st, obj, text = call(c, "POST", "/v1/chat/completions",
                         {"messages": [{"role": "user", "content": PROMPT}], "max_tokens": 4})
    check("before any release the API's own error stands: no model (503)",
          st == 503 and "no model" in text, text)

    a, t1 = attest(c)
    b, t2 = attest(c)
    check("two attestations on one connection", a and b, t1 + t2)
    st, obj, text = call(c, "POST", "/v1/keys", dict(body, nonce=a))
    check("a release naming the earlier attestation's nonce: 409 (only the latest counts)",
          st == 409 and "latest attestation" in text, text)
    st, obj, text = call(c, "POST", "/v1/keys", dict(body, nonce=b))
    check("... and that attempt spent the latest: 409 for its own nonce too",
          st == 409 and "no completed attestation" in text, text)

    if tpm:
        v, t = attest(c, "vtpm")
        st, obj, text = call(c, "POST", "/v1/keys", dict(body, nonce=v))
        check("vtpm evidence whose credential was not activated: 409", st == 409 and
              "no completed attestation" in text, t + text)
    else:
        skip("vtpm: a release before the credential's activation", tpm_why)

    n, _ = attest(c)
    st, obj, text = call(c, "POST", "/v1/keys", {"nonce": n, "key": key_b64(other), "load": True})
    check("a key that does not open the sealed disk: 403 (permission_error)",
          st == 403 and err_type(obj) == "permission_error" and "opens no sealed disk" in text, text)
    st, _, text = call(c, "GET", "/health")
    check("... no model loaded after it (/health 503)", st == 503, text)
    if tpm:
        ev = releases(port)
        check("... and nothing measured (no llmk key-release event in PCR 23's log)", ev == [], ev)

    k44 = key_b64(key)
    hostile = [
        ("truncated JSON", lambda n: '{"nonce":"%s","key":"%s' % (n, k44[:20])),
        ("a key of 33 bytes", lambda n: json.dumps({"nonce": n, "key": base64.b64encode(b"\x01" * 33).decode()})),
        ("a 40 KB key", lambda n: json.dumps({"nonce": n, "key": "A" * 40000})),
        ("a key that is not base64", lambda n: json.dumps({"nonce": n, "key": "!" * 44})),
        ("an unknown member", lambda n: json.dumps({"nonce": n, "key": k44, "disk": 0})),
        ("a nonce that is not hex", lambda n: json.dumps({"nonce": "x" + n[1:], "key": k44})),
    ]
    for name, make in hostile:
        n, _ = attest(c)
        st, obj, text = call(c, "POST", "/v1/keys", make(n))
        check(f"{name}: 400, and the server keeps serving", st == 400 and
              err_type(obj) == "invalid_request_error" and serving(c), text)
    c.close()

    p = vtls(["--release-key-file", kf, "--load"])
    check("verifier tls --release-key-file without --expect-model: refused, nothing sent",
          one_error(p, "needs --expect-model"), p.stderr.decode())
    p = vtls(["--expect-model", "ab" * 32, "--release-key-file", kf, "--load"])
    check("verifier tls --release-key-file with another model: refused before the key is sent",
          one_error(p, "model") and "release" not in p.stdout.decode(), p.stdout.decode() + p.stderr.decode())
    check("... the guest saw no release", "released over attested TLS" not in srv.text(), srv.text()[-800:])

    p = vtls(["--expect-model", digest, "--release-key-file", kf, "--load"])
    out = p.stdout.decode()
    m = re.search(r"ok: release: key id ([0-9a-f]{32}) released for disk 0; the model is loaded", out)
    check("verifier tls --release-key-file --load: every check, then the key, then the load",
          p.returncode == 0 and m and "ok: 127.0.0.1:%d is the attested guest" % port in out,
          out + p.stderr.decode())
    if m:
        key_id = m.group(1)
    if tpm and key_id:
        ev = releases(port)
        check("the release is measured: one `llmk key-release snp-tls key-id ID release HEX` in PCR 23",
              ev is not None and len(ev) == 1 and ev[0].startswith(b"llmk key-release snp-tls key-id " +
                                                                   key_id.encode()), ev)
    elif not tpm:
        skip("the release's measurement in PCR 23", tpm_why)

    c = tls(port)
    st, obj, text = call(c, "POST", "/v1/chat/completions",
                         {"messages": [{"role": "user", "content": PROMPT}], "temperature": 0,
                          "max_tokens": 20})
    got = obj["choices"][0]["message"]["content"] if st == 200 else text
    check("a greedy chat over a new TLS connection equals the shell's chat on the plain model",
          st == 200 and got == want_chat, f"want {want_chat!r}\ngot  {got!r}")

    n, _ = attest(c)
    st, obj, text = call(c, "POST", "/v1/keys", {"nonce": n, "key": key_b64(key), "load": True})
    check("the same key again: 200, already in place, the model still loaded",
          st == 200 and obj.get("released") == "already in place" and obj.get("loaded") is True, text)
    n, _ = attest(c)
    st, obj, text = call(c, "POST", "/v1/keys", {"nonce": n, "key": key_b64(other)})
    check("another key while one is in place: 409, nothing replaced", st == 409 and
          "already in place" in text and serving(c), text)
    c.close()
    if tpm and key_id:
        ev = releases(port)
        check("... neither measured again (still one release event)", ev is not None and len(ev) == 1, ev)

    return key_id

if __name__ == "__main__":
    sys.exit(main())
