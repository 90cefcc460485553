#!/usr/bin/env python3
"""tests/host/serve_tls.py - attested TLS on the host (docs/tls.md).

build/host/llmctl serves stories260K with `serve --port 0` (TLS on
127.0.0.1) and a software TPM as its attestation (LLMK_VTPM, swtpm from
tools/tpm.sh; without swtpm the attestation checks skip, naming it). A
python3 `ssl` client, certificate checks off (the evidence vouches for the
key, not a CA), checks:

- TLS 1.2 with one of the three ECDHE-ECDSA AEAD suites; TLS 1.3 alone is
  refused; the certificate is CN=llmk with a P-256 key;
- GET /v1/models and a greedy chat completion, whole and streamed (SSE,
  chunked), equal to the shell's `chat`;
- POST /v1/attestation: vtpm evidence whose NONCE record is the client's
  nonce and whose PUBKEY record is K = SHA-256("llmk tls v1" || SPKI) of
  the certificate this connection saw; bad nonce or provider 400, an absent
  provider 503;
- /v1/attestation/activate without an attestation on the connection is
  409; a credential that does not open is 403 and spends the attestation;
- hostile TLS: garbage instead of a ClientHello, a handshake that stops
  half-way, a record with a flipped bit, 200 connections opened and
  dropped (half mid-ClientHello): each connection ends alone, no HTTP
  answer leaks, other clients are served, the shell answers `version`;
- llmk.cfg's `serve PORT` serves before the first prompt; `serve 0` errs.

Usage: serve_tls.py LLMCTL. Ends "N passed, N failed, N skipped".
"""
import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qemu"))
from results import check, skip, skip_data, summary  # noqa: E402
from serve import shell_output, start_serve  # noqa: E402
HOST = "127.0.0.1"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TPM_SH = os.path.join(ROOT, "tools", "tpm.sh")
SUITES = {"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
          "ECDHE-ECDSA-CHACHA20-POLY1305"}


def client_ctx():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def conn(port):
    return http.client.HTTPSConnection(HOST, port, context=client_ctx(), timeout=30)


def call(c, method, path, body=None):
    data = json.dumps(body) if isinstance(body, (dict, list)) else body
    c.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
    r = c.getresponse()
    return r.status, r.read().decode()


def spki_of(der):
    """The SubjectPublicKeyInfo bytes of a DER certificate (RFC 5280 §4.1):
    the seventh element of the TBSCertificate, counting the [0] version."""
    def tlv(b, i):
        n, h = b[i + 1], 2
        if n & 0x80:
            k = n & 0x7f
            n = int.from_bytes(b[i + 2:i + 2 + k], "big")
            h = 2 + k
        return i + h, i + h + n
    body, _ = tlv(der, 0)          # Certificate
    i, _ = tlv(der, body)          # TBSCertificate contents
    for _ in range(6):             # version, serial, signature, issuer, validity, subject
        _, i = tlv(der, i)
    _, end = tlv(der, i)
    return der[i:end]


def records(bundle):
    """LLMKEV01 records: {type: value} (shell/evidence.h)."""
    assert bundle[:8] == b"LLMKEV01"
    out, i = {}, 8
    while i + 8 <= len(bundle):
        t, _flags, n = struct.unpack_from("<HHI", bundle, i)
        out[t] = bundle[i + 8:i + 8 + n]
        i += 8 + n
    return out


def handshake_bytes(port):
    """A raw socket, and the first flight of a real client (its ClientHello)."""
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = client_ctx().wrap_bio(inc, out)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return socket.create_connection((HOST, port), timeout=15), out.read()


def until_closed(s, limit=15):
    """What the server sends until it closes (or limit seconds): bytes, closed?"""
    got, t0 = b"", time.time()
    s.settimeout(1)
    while time.time() - t0 < limit:
        try:
            k = s.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            return got, True
        if not k:
            return got, True
        got += k
    return got, False


def tampered_record(port):
    """Handshake over memory BIOs, then one application record with a
    flipped bit: the server's answer (bytes until it closes), closed?"""
    s = socket.create_connection((HOST, port), timeout=15)
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = client_ctx().wrap_bio(inc, out)
    while True:
        try:
            obj.do_handshake()
            break
        except ssl.SSLWantReadError:
            s.sendall(out.read())
            k = s.recv(65536)
            if not k:
                return b"", True, False
            inc.write(k)
    s.sendall(out.read())
    obj.write(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    rec = bytearray(out.read())
    rec[-1] ^= 1  # the GCM tag (or Poly1305's)
    s.sendall(bytes(rec))
    got, closed = until_closed(s)
    inc.write(got)
    leaked = False
    try:
        leaked = b"HTTP/1.1" in obj.read(65536)
    except (ssl.SSLError, ssl.SSLEOFError):
        pass
    s.close()
    return got, closed, leaked


def start_tpm(w):
    if not shutil.which("swtpm") or not shutil.which("swtpm_setup"):
        return None, "swtpm not installed (Debian swtpm, swtpm-tools; make deps)"
    d = os.path.join(w, "tpm")
    r = subprocess.run([TPM_SH, "start", d, "host"], capture_output=True, timeout=120)
    if r.returncode:
        return None, r.stderr.decode()[-300:]
    return d, None


def main():
    llmctl = sys.argv[1]
    data = os.environ.get("LLMK_TESTDATA", "../shared/testdata")
    model = os.path.join(data, "stories260K", "stories260K.gguf")
    if not os.path.exists(model):
        skip_data("TLS on the host", "no testdata (stories260K)")
        return summary()
    w = os.path.join(os.path.dirname(os.path.abspath(llmctl)), "serve-tls")
    os.makedirs(w, exist_ok=True)
    tpm, why = start_tpm(w)
    env = dict(os.environ)
    env.pop("LLMK_SNP_SIM", None)
    env.pop("LLMK_TDX_SIM", None)
    if tpm:
        env["LLMK_VTPM"] = os.path.join(tpm, "swtpm.sock")
    else:
        env.pop("LLMK_VTPM", None)
    want_chat = shell_output(llmctl, model, 'chat "hello" --temp 0 -n 20')
    srv, port, seen = start_serve(llmctl, model, ["load 0", "serve --port 0"], env=env, tls=True)
    check("serve --port 0 serves attested TLS on 127.0.0.1 and says its K", port and
          re.search(r"tls: a new ECDSA P-256 key for this boot; K [0-9a-f]{64}", seen), seen)
    try:
        if port:
            run(port, want_chat, tpm, why)
            srv.stdin.write(b"version\n")
            srv.stdin.flush()
    finally:
        try:
            srv.stdin.close()
            rest = srv.stdout.read().decode()
            rc = srv.wait(timeout=30)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            srv.kill()
            rest, rc = "(killed)", -1
        if tpm:
            subprocess.run([TPM_SH, "stop", tpm], check=False)
    check("after all of it the shell answers version, and serve stops at the input's end",
          "llmk " in rest and "serve: stopped" in rest and rc == 0, f"exit {rc}\n{rest[-1500:]}")
    at_boot(llmctl, w)
    return summary()


def at_boot(llmctl, w):
    """llmk.cfg's `serve PORT` serves before the first prompt."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        port = s.getsockname()[1]
    cfg = os.path.join(w, "serve.cfg")
    with open(cfg, "w") as f:
        f.write(f"serve {port}\n")
    p = subprocess.Popen([llmctl, "--config", cfg, "-i"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen = ""
    deadline = time.time() + 30
    while time.time() < deadline and f"serving on 127.0.0.1:{port} (https" not in seen:
        line = p.stdout.readline().decode()
        if not line:
            break
        seen += line
    st = None
    try:
        c = conn(port)
        st, _ = call(c, "GET", "/v1/models")
        c.close()
    except OSError as e:
        seen += str(e)
    p.stdin.close()
    rest = p.stdout.read().decode()
    p.wait(timeout=30)
    check("llmk.cfg's serve PORT serves attested TLS before the first prompt",
          f"serving on 127.0.0.1:{port} (https" in seen and st == 200, seen + rest)
    with open(cfg, "w") as f:
        f.write("serve 0\n")
    r = subprocess.run([llmctl, "--config", cfg, "-c", "config"], capture_output=True, timeout=30)
    out = r.stdout.decode()
    check("llmk.cfg's serve 0 is one error line and serves nothing",
          out.count("error: config serve:") == 1 and "serving" not in out, out)


def run(port, want_chat, tpm, tpm_why):
    # started first, checked last: a handshake that stops half-way
    half, hello = handshake_bytes(port)
    half.sendall(hello[:len(hello) // 2])
    half_t0 = time.time()

    c = conn(port)
    st, body = call(c, "GET", "/v1/models")
    check("GET /v1/models over TLS", st == 200 and json.loads(body)["object"] == "list", body)
    check("TLS 1.2 with an ECDHE-ECDSA AEAD suite", c.sock.version() == "TLSv1.2" and
          c.sock.cipher()[0] in SUITES, f"{c.sock.version()} {c.sock.cipher()}")
    der = c.sock.getpeercert(binary_form=True)
    spki = spki_of(der)
    k = hashlib.sha256(b"llmk tls v1" + spki).digest()
    check("the certificate holds a P-256 key (RFC 5480 SPKI, 91 bytes)",
          len(spki) == 91 and bytes.fromhex("06082a8648ce3d030107") in spki, der.hex())
    chat = {"messages": [{"role": "user", "content": "hello"}], "temperature": 0, "max_tokens": 20}
    st, body = call(c, "POST", "/v1/chat/completions", chat)
    text = json.loads(body)["choices"][0]["message"]["content"] if st == 200 else None
    check("a greedy chat completion over TLS equals the shell's chat", text == want_chat,
          f"{body}\nshell: {want_chat!r}")
    st, body = call(c, "POST", "/v1/chat/completions", dict(chat, stream=True))
    text = "".join(json.loads(ev[6:])["choices"][0]["delta"].get("content", "")
                   for ev in body.split("\n\n") if ev.startswith("data: {")) if st == 200 else None
    check("a streamed chat completion over TLS sends the same text, then [DONE]",
          text == want_chat and "data: [DONE]" in body, body[:1000])
    st, body = call(c, "POST", "/v1/attestation", {"nonce": "zz"})
    check("/v1/attestation: a nonce that is not hex is 400", st == 400 and
          json.loads(body)["error"]["code"] == 400, body)
    st, body = call(c, "POST", "/v1/attestation", {"nonce": "00" * 65})
    check("/v1/attestation: a nonce over 64 bytes is 400", st == 400, body)
    st, body = call(c, "POST", "/v1/attestation", {"nonce": "00", "provider": "bogus"})
    check("/v1/attestation: an unknown provider is 400", st == 400, body)
    st, body = call(c, "POST", "/v1/attestation", {"nonce": "00", "provider": "snp"})
    check("/v1/attestation: an absent provider is 503", st == 503 and
          json.loads(body)["error"]["code"] == 503, body)
    st, body = call(c, "POST", "/v1/attestation/activate", {"credential": "AAAA"})
    check("activate without an attestation on the connection is 409", st == 409, body)

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    try:
        with socket.create_connection((HOST, port), timeout=15) as s, ctx.wrap_socket(s):
            ok = False
    except (ssl.SSLError, OSError):
        ok = True
    check("a TLS 1.3-only client is refused", ok)

    if not tpm:
        skip("the attestation over TLS binds the certificate's key", tpm_why)
    else:
        nonce = os.urandom(32)
        st, body = call(c, "POST", "/v1/attestation", {"nonce": nonce.hex()})
        ok = st == 200
        got = json.loads(body) if ok else {}
        rec = records(base64.b64decode(got.get("evidence", ""))) if ok else {}
        check("/v1/attestation answers vtpm evidence that can be activated",
              ok and got.get("provider") == "vtpm" and got.get("activate") is True and
              rec.get(1) == b"vtpm", body[:500])
        check("the evidence's NONCE is the client's and its PUBKEY is K of the certificate seen",
              rec.get(3) == nonce and rec.get(5) == k, f"{rec.get(5, b'').hex()} != {k.hex()}")
        st, body = call(c, "POST", "/v1/attestation/activate",
                        {"credential": base64.b64encode(os.urandom(300)).decode()})
        check("a credential that does not open in the TPM is 403", st == 403 and
              json.loads(body)["error"]["code"] == 403, body)
        st, body = call(c, "POST", "/v1/attestation/activate", {"credential": "AAAA"})
        check("the attestation is spent after one activation attempt (409)", st == 409, body)
        c2 = conn(port)
        call(c2, "GET", "/health")
        k2 = hashlib.sha256(b"llmk tls v1" + spki_of(c2.sock.getpeercert(True))).digest()
        check("another connection sees the same key (one per boot)", k2 == k)
        c2.close()
    c.close()

    # hostile TLS
    with socket.create_connection((HOST, port), timeout=15) as s:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        got, closed = until_closed(s)
    check("plain HTTP on the TLS port: closed, no HTTP answer", closed and b"HTTP/1.1" not in got,
          got[:200])
    with socket.create_connection((HOST, port), timeout=15) as s:
        s.sendall(os.urandom(4096))
        got, closed = until_closed(s)
    check("random bytes instead of a ClientHello: closed", closed, got[:200])
    got, closed, leaked = tampered_record(port)
    check("a record with a flipped bit: the connection ends, nothing answered", closed and
          not leaked, got[:200])
    t0 = time.time()
    for i in range(200):
        if i % 2:
            s, hello = handshake_bytes(port)
            s.sendall(hello[:40])
            s.close()
        else:
            with socket.create_connection((HOST, port), timeout=15) as s:
                client_ctx().wrap_socket(s).close()
    c = conn(port)
    st, body = call(c, "POST", "/v1/chat/completions", chat)
    text = json.loads(body)["choices"][0]["message"]["content"] if st == 200 else None
    check("meanwhile, and after 200 TLS connections opened and dropped, another client is served",
          text == want_chat and time.time() - t0 < 60, body)
    st, body = call(c, "GET", "/metrics")
    m = re.search(r"^llmk_connections_total (\d+)$", body, re.M)
    check("/metrics over TLS counts the connections", st == 200 and m and int(m.group(1)) >= 200,
          body)
    c.close()
    time.sleep(max(0, half_t0 + 11 - time.time()))
    got, closed = until_closed(half, 5)
    half.close()
    check("a handshake that stops half-way is dropped after 10 s, without an answer",
          closed and b"HTTP/1.1" not in got, got[:200])


if __name__ == "__main__":
    sys.exit(main())
