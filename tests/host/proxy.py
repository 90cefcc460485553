#!/usr/bin/env python3
"""llmctl proxy and verifier tls against the host build's attested TLS
(docs/tls.md), all on 127.0.0.1: build/host/llmctl serves stories260K with
`serve --port 0` and the SEV-SNP simulator's evidence (LLMK_SNP_SIM=1; the
host's swtpm evidence has no firmware log, so vtpm runs in QEMU:
tests/qemu/test_proxy.py).

- verifier tls prints its checks and exits 0;
- the proxy attests, then a standard-library client makes a greedy chat
  request, whole and streamed, through it: both equal the shell's `chat`;
  keep-alive, a chunked request body, a 1.0 client, hostile heads;
- the proxy and verifier tls refuse, each with one `error:` line: another
  measurement (the image), another model, a replayed evidence (a relay
  that answers /v1/attestation with a bundle recorded earlier) and a TLS
  peer with a key of its own (a relay that terminates TLS with a
  certificate made as the guest makes its own, build/host/tlscert, and
  forwards honestly to the guest);
- a running proxy whose guest suddenly shows another key attests it once,
  refuses it (502, an OpenAI error object, one `error:` line) and serves
  again when the attested key is back;
- with npm, the `openai` npm package (installed under build/npm-openai on
  demand) chats whole and streamed through the proxy (proxy_openai.mjs).

usage: proxy.py LLMCTL VERIFIER MKEVIDENCE TLSCERT
"""
import http.client
import json
import os
import select
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qemu"))
from results import check, skip, skip_data, summary  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve import raw as serve_raw, shell_output  # noqa: E402


def raw(port, data):
    return serve_raw(port, data, timeout=30)


def sse_text(body):
    text, done = "", False
    for ev in body.split("\n\n"):
        if not ev.startswith("data: "):
            continue
        if ev[6:] == "[DONE]":
            done = True
            continue
        ch = json.loads(ev[6:])["choices"][0]
        text += ch.get("delta", {}).get("content", "")
    return text, done


class Relay:
    """Between the proxy and the guest on 127.0.0.1: "pass" copies TCP
    both ways (the guest's own TLS), "mitm" terminates TLS with its own
    certificate and forwards the plaintext over a TLS connection of its own
    to the guest, "replay" terminates TLS and answers /v1/attestation with
    the answer the guest gave it earlier for another nonce."""

    def __init__(self, guest_port, cert, key):
        self.guest = guest_port
        self.mode = "pass"
        self.recorded = None
        self.srv_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.srv_ctx.load_cert_chain(cert, key)
        self.cli_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.cli_ctx.check_hostname = False
        self.cli_ctx.verify_mode = ssl.CERT_NONE
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.loop, daemon=True).start()

    def record(self):
        """An attestation answer of the guest's for a nonce of ours."""
        c = http.client.HTTPSConnection("127.0.0.1", self.guest, context=self.cli_ctx, timeout=30)
        c.request("POST", "/v1/attestation", body=json.dumps({"nonce": "ab" * 32, "provider": "snp"}),
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        self.recorded = r.read()
        c.close()
        return r.status

    def loop(self):
        while True:
            c, _ = self.sock.accept()
            threading.Thread(target=self.serve, args=(c, self.mode), daemon=True).start()

    @staticmethod
    def pipe(a, b, delay=0):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                for i in range(0, len(d), 128 if delay else len(d)):
                    time.sleep(delay)
                    b.sendall(d[i:i + 128] if delay else d)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def serve(self, c, mode):
        try:
            if mode in ("pass", "slow"):
                g = socket.create_connection(("127.0.0.1", self.guest))
                if mode == "slow":  # the guest's bytes trickle: 128 bytes each 10 ms
                    threading.Thread(target=self.pipe, args=(g, c, 0.01), daemon=True).start()
                    return self.pipe(c, g)
            else:
                c = self.srv_ctx.wrap_socket(c, server_side=True)
                if mode == "replay":
                    return self.replay(c)
                g = self.cli_ctx.wrap_socket(socket.create_connection(("127.0.0.1", self.guest)))
            threading.Thread(target=self.pipe, args=(g, c), daemon=True).start()
            self.pipe(c, g)
        except (OSError, ssl.SSLError):
            c.close()

    def replay(self, c):
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = c.recv(4096)
            if not d:
                return c.close()
            buf += d
        head = buf.split(b"\r\n\r\n")[0].lower()
        n = int(head.split(b"content-length:")[1].split(b"\r\n")[0]) if b"content-length:" in head else 0
        while len(buf.split(b"\r\n\r\n", 1)[1]) < n:
            buf += c.recv(4096)
        body = self.recorded
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                  % len(body) + body)
        c.close()


PROXIES = []  # every proxy started, ended in main's finally whatever happened


class Proxy:
    def __init__(self, llmctl, target, verify, extra=()):
        PROXIES.append(self)
        self.p = subprocess.Popen([llmctl, "proxy", "--connect", target, "--listen", "127.0.0.1:0",
                                   "--timeout", "60", *verify, *extra],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.line = self.p.stdout.readline().decode()
        self.port = int(self.line.rsplit(":", 1)[1]) if "serving http://" in self.line else None
        self.err = []
        threading.Thread(target=self.drain, daemon=True).start()

    def drain(self):
        for ln in self.p.stderr:
            self.err.append(ln.decode("utf-8", "replace"))

    def errors(self):
        return [e for e in self.err if e.startswith("error: ")]

    def stop(self):
        self.p.terminate()
        try:
            return self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return -9


def request(port, method, path, body=None, headers=None, conn=None, chunked=False):
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    h = {"Content-Type": "application/json"} if data else {}
    h.update(headers or {})
    if chunked:
        c.request(method, path, body=iter([data[:7], data[7:]]), headers=h, encode_chunked=True)
    else:
        c.request(method, path, body=data, headers=h)
    r = c.getresponse()
    out = r.status, r.getheader("Content-Type") or "", r.read().decode("utf-8", "replace")
    if not conn:
        c.close()
    return out


def refused(name, p, why):
    err = p.stderr.decode("utf-8", "replace")
    lines = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    check(name, p.returncode == 1 and len(lines) == 1 and why in lines[0],
          f"exit {p.returncode}\n{err[-1500:]}")


def start_server(llmctl, model, sim=True):
    """llmctl serving attested TLS (a key of its own) with the SNP simulator
    (sim), or with no attestation provider at all."""
    env = {k: v for k, v in os.environ.items() if k not in ("LLMK_SNP_SIM", "LLMK_TDX_SIM", "LLMK_VTPM")}
    if sim:
        env["LLMK_SNP_SIM"] = "1"
    srv = subprocess.Popen([llmctl, "--disk", model, "-c", "load 0", "-c", "serve --port 0", "-i"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           env=env)
    port, ln = None, ""
    for _ in range(10):
        ln = srv.stdout.readline().decode()
        if ln.startswith("serving on 127.0.0.1:"):
            port = int(ln.split(":")[1].split()[0])
            break
    threading.Thread(target=lambda: [None for _ in srv.stdout], daemon=True).start()
    return srv, port, ln


def stop_server(srv):
    if srv:
        srv.stdin.close()
        try:
            srv.wait(20)
        except subprocess.TimeoutExpired:
            srv.kill()


def end_all(srv, w):
    """Every proxy still running, the server, the scratch folder w."""
    for q in PROXIES:
        if q.p.poll() is None:
            q.p.kill()
            q.p.wait()
    stop_server(srv)
    shutil.rmtree(w, ignore_errors=True)


def sim_ark(mkevidence, w):
    """The SEV-SNP simulator's root (ARK) written under w: its path."""
    ark = os.path.join(w, "ark.pem")
    subprocess.run([mkevidence, "snp", "--nonce", "00", "--priv", "01" * 32, "--out",
                    os.path.join(w, "ev.txt"), "--ark-out", ark], check=True,
                   stdout=subprocess.DEVNULL)
    return ark


def sim_verify(ark):
    """The verifier's options for the simulator's evidence of its default launch."""
    meas = "".join(f"{0xc0 ^ i:02x}" for i in range(48))
    return ["--provider", "snp", "--expect-measurement", meas, "--chain", ark, "--allow-simulated"]


def main():
    llmctl, verifier, mkevidence, tlscert = sys.argv[1:5]
    data = os.environ.get("LLMK_TESTDATA", "../shared/testdata")
    model = os.path.join(data, "stories260K", "stories260K.gguf")
    if not os.path.exists(model):
        skip_data("the proxy on the host", "no testdata (stories260K)")
        return summary()
    w = tempfile.mkdtemp(prefix="llmk-proxy-")
    srv = None
    try:
        ark = sim_ark(mkevidence, w)
        cert, key = os.path.join(w, "stranger.crt"), os.path.join(w, "stranger.key")
        subprocess.run([tlscert, cert, key], check=True, stdout=subprocess.DEVNULL)
        srv, port, ln = start_server(llmctl, model)
        check("the host serves attested TLS", port is not None, ln)
        if port is None:
            return 1
        run(llmctl, verifier, model, port, ark, cert, key, w)
    finally:
        end_all(srv, w)
    return summary()


def run(llmctl, verifier, model, port, ark, cert, key, w):
    verify = sim_verify(ark)
    target = f"127.0.0.1:{port}"

    def vtls(args, to=None):
        return subprocess.run([verifier, "tls", "--connect", to or target, "--timeout", "30", *args],
                              capture_output=True, timeout=120)

    p = vtls(verify)
    out = p.stdout.decode()
    check("verifier tls: every check passes, one line each", p.returncode == 0 and
          all(ln.startswith("ok: ") for ln in out.splitlines()) and
          "ok: binding: the evidence's PUBKEY is K" in out and out.endswith("is the attested guest\n"),
          out + p.stderr.decode())

    relay = Relay(port, cert, key)
    check("the relay recorded an attestation answer", relay.record() == 200)
    px = Proxy(llmctl, f"127.0.0.1:{relay.port}", verify)
    check("the proxy attests and serves on loopback", px.port is not None and
          "SIMULATED snp evidence verified (MEASUREMENT as expected)" in px.line, px.line + "".join(px.err))
    if px.port is None:
        return
    want = shell_output(llmctl, model, 'chat "hello" --temp 0 -n 20')
    chat = {"messages": [{"role": "user", "content": "hello"}], "temperature": 0, "max_tokens": 20}
    st, ct, body = request(px.port, "POST", "/v1/chat/completions", chat)
    text = json.loads(body)["choices"][0]["message"]["content"] if st == 200 else None
    check("through the proxy: a greedy chat equals the shell's chat", text == want,
          f"{st} {body}\nshell: {want!r}")
    st, ct, body = request(px.port, "POST", "/v1/chat/completions", dict(chat, stream=True))
    text, done = sse_text(body)
    check("through the proxy: the streamed chat is the same text as events, then [DONE]",
          st == 200 and ct.startswith("text/event-stream") and text == want and done, body[-400:])

    c = http.client.HTTPConnection("127.0.0.1", px.port, timeout=60)
    a = request(px.port, "GET", "/v1/models", conn=c)
    b = request(px.port, "POST", "/v1/chat/completions", chat, conn=c, chunked=True)
    c.close()
    check("keep-alive: two requests on one connection, the second's body chunked",
          a[0] == 200 and '"object":"list"' in a[2] and b[0] == 200 and
          json.loads(b[2])["choices"][0]["message"]["content"] == want, f"{a}\n{b}")
    r = raw(px.port, b"GET /health HTTP/1.0\r\n\r\n")
    check("an HTTP/1.0 client gets its answer and the close", r.startswith(b"HTTP/1.1 200") and
          b"Connection: close" in r, r[:300])
    r = raw(px.port, b"GET /health HTTP/1.1\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n")
    check("an oversized head: 431 with an OpenAI error object", r.startswith(b"HTTP/1.1 431") and
          b'"error":{"message"' in r, r[:300])
    r = raw(px.port, b"POST /v1/completions HTTP/1.1\r\nContent-Length: 5\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    check("a length beside a transfer coding: 400", r.startswith(b"HTTP/1.1 400"), r[:300])
    r = raw(px.port, b"GET /v1/models HTTP/1.1\r\nHost: rebound.example:8080\r\n\r\n")
    check("a Host that is no loopback name (DNS rebinding): 403", r.startswith(b"HTTP/1.1 403"), r[:300])
    r = raw(px.port, b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://a.example\r\n"
            b"Content-Length: 2\r\n\r\n{}")
    check("a web page of another origin: 403", r.startswith(b"HTTP/1.1 403"), r[:300])
    r = raw(px.port, b"GET /v1/models HTTP/1.1\r\nHost: localhost:1\r\nOrigin: http://127.0.0.1:3000\r\n"
            b"Connection: close\r\n\r\n")
    check("loopback Host and Origin: served", r.startswith(b"HTTP/1.1 200"), r[:300])
    r = raw(px.port, b"GET http://example.com/ HTTP/1.1\r\n\r\n")
    check("an absolute target (a forward proxy's): 400", r.startswith(b"HTTP/1.1 400"), r[:300])

    res = [None] * 6

    def one(i):
        try:
            st, ct, body = request(px.port, "POST", "/v1/chat/completions", dict(chat, stream=bool(i % 2)))
            res[i] = sse_text(body)[0] if i % 2 else json.loads(body)["choices"][0]["message"]["content"]
        except (OSError, ValueError, KeyError) as e:
            res[i] = repr(e)
    ts = [threading.Thread(target=one, args=(i,)) for i in range(len(res))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    check("six clients at once, whole and streamed: every answer equals the shell's",
          res == [want] * len(res), res)
    # 40 clients at once: the proxy takes 32, the rest get a 503 and the
    # close at once (more of them while earlier clients' threads still end)
    held = [socket.create_connection(("127.0.0.1", px.port)) for _ in range(40)]
    refusals, pending, deadline = [], list(held), time.time() + 10
    while pending and time.time() < deadline:
        ready, _, _ = select.select(pending, [], [], 0.5)
        if not ready and len(refusals) >= 8:
            break
        for s in ready:
            pending.remove(s)
            s.settimeout(5)
            got = b""
            try:
                while (d := s.recv(4096)):
                    got += d
            except OSError:
                pass
            refusals.append(got)
    for s in held:
        s.close()
    r = refusals[0] if refusals else b""
    check("past 32 clients at once: the rest get 503 with an OpenAI error object",
          len(refusals) >= 8 and all(x.startswith(b"HTTP/1.1 503") and b'"code":503' in x
                                     for x in refusals), f"{len(refusals)} refused: {r[:300]}")
    time.sleep(0.3)
    r = raw(px.port, b"POST /v1/completions HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n")
    check("a body past 1 MiB: 413", r.startswith(b"HTTP/1.1 413"), r[:300])
    r = raw(px.port, b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n")
    check("served again once the 32 left", r.startswith(b"HTTP/1.1 200"), r[:300])

    relay.mode = "slow"
    s = socket.create_connection(("127.0.0.1", px.port), timeout=60)
    body = json.dumps(dict(chat, stream=True)).encode()
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    t0, first, got = time.monotonic(), None, b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += d
        if first is None and b'"content":"' in got.split(b"\r\n\r\n", 1)[-1]:
            first = time.monotonic() - t0
    end = time.monotonic() - t0
    s.close()
    relay.mode = "pass"
    check("a stream passes through as it comes: the first token well before the end",
          first is not None and b"[DONE]" in got and end - first > 0.2,
          f"first token at {first} s, end at {end:.2f} s")

    # the guest shows another key while the proxy runs
    n_err = len(px.errors())
    relay.mode = "mitm"
    st, ct, body = request(px.port, "GET", "/v1/models")
    time.sleep(0.3)
    errs = px.errors()[n_err:]
    check("another key mid-run: attested once, refused with 502 and an OpenAI error object",
          st == 502 and json.loads(body)["error"]["code"] == 502, f"{st} {body}")
    check("... and one error line naming the unattested key", len(errs) == 1 and
          "not the attested guest" in errs[0], "".join(px.err))
    relay.mode = "pass"
    st, ct, body = request(px.port, "GET", "/v1/models")
    check("the attested key back: served again", st == 200, body)
    srv2, port2, ln = start_server(llmctl, model)
    try:
        relay.guest = port2  # the guest "rebooted": a new key, which attests
        n_err, n_all = len(px.errors()), len(px.err)
        st, ct, body = request(px.port, "POST", "/v1/chat/completions", chat)
        time.sleep(0.3)
        again = [e for e in px.err[n_all:] if "attested again" in e]
        check("a new key that attests: pinned once, and served", st == 200 and len(again) == 1 and
              len(px.errors()) == n_err and json.loads(body)["choices"][0]["message"]["content"] == want,
              f"{st} {body[:300]}\n{''.join(px.err[n_all:])}")
        relay.guest = port  # the old key again: attested again as well
        st, ct, body = request(px.port, "GET", "/v1/models")
        check("the first key again: attested again, served", st == 200, body)
    finally:
        relay.guest = port
        stop_server(srv2)
    check("the proxy ends on SIGTERM", px.stop() == 0)

    openai_client(px, llmctl, model, relay, verify, want, w)

    bad_meas = "00" * 48
    meas = verify[verify.index("--expect-measurement") + 1]
    other = [a if a != meas else bad_meas for a in verify]
    refused("verifier tls: another measurement refused", vtls(other), "measurement")
    refused("verifier tls: another model refused", vtls(verify + ["--expect-model", "11" * 32]), "model")
    relay.mode = "replay"
    refused("verifier tls: a replayed evidence refused", vtls(verify, f"127.0.0.1:{relay.port}"), "nonce")
    relay.mode = "mitm"
    refused("verifier tls: a TLS peer with a key of its own refused", vtls(verify, f"127.0.0.1:{relay.port}"),
            "not the attested guest")

    def proxy_refused(name, to, args, why):
        q = Proxy(llmctl, to, args)
        code = q.p.wait(60) if q.port is None else q.stop()
        time.sleep(0.1)
        errs = q.errors()
        check(name, q.port is None and code == 1 and len(errs) == 1 and why in errs[0],
              f"exit {code}: {q.line}{''.join(q.err)[-1500:]}")

    relay.mode = "pass"
    proxy_refused("proxy: another measurement refused", target, other, "measurement")
    proxy_refused("proxy: another model refused", target, verify + ["--expect-model", "11" * 32], "model")
    relay.mode = "replay"
    proxy_refused("proxy: a replayed evidence refused", f"127.0.0.1:{relay.port}", verify, "nonce")
    relay.mode = "mitm"
    proxy_refused("proxy: a TLS peer with a key of its own refused", f"127.0.0.1:{relay.port}", verify,
                  "not the attested guest")
    srv3, port3, ln = start_server(llmctl, model, sim=False)
    try:
        proxy_refused("proxy: a guest with no attestation provider refused", f"127.0.0.1:{port3}",
                      verify[2:], "answered 503: no attestation provider")
    finally:
        stop_server(srv3)
    p = subprocess.run([llmctl, "proxy", "--connect", target, "--listen", "0.0.0.0:0", *verify],
                       capture_output=True, timeout=30)
    refused("proxy: a listen address off loopback refused", p, "not a loopback address")
    p = vtls(verify)
    check("the guest still serves attested TLS", p.returncode == 0, p.stderr.decode())


def openai_client(px, llmctl, model, relay, verify, want, w):
    """The official openai npm package through the proxy (npm on demand)."""
    npm = shutil.which("npm")
    node = shutil.which("node")
    name = "the openai npm package through the proxy"
    if not npm or not node:
        return skip(name, "npm or node not found (the test needs npm to install `openai`)")
    prefix = os.path.abspath(os.path.join("build", "npm-openai"))
    if not os.path.isdir(os.path.join(prefix, "node_modules", "openai")):
        r = subprocess.run([npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "openai@4"],
                           capture_output=True, timeout=300)
        if r.returncode != 0:
            return skip(name, "npm install openai failed: " + r.stderr.decode()[-200:])
    q = Proxy(llmctl, f"127.0.0.1:{relay.port}", verify)
    if q.port is None:
        return check(name, False, q.line + "".join(q.err))
    prompts = ["Lily", "Tom had a ball", "the sun", "a big dog"]
    wants = [shell_output(llmctl, model, f'chat "{x}" --temp 0 -n 20') for x in prompts]
    p = subprocess.run([node, os.path.join(os.path.dirname(__file__), "proxy_openai.mjs"), prefix,
                        f"http://127.0.0.1:{q.port}/v1", "20", json.dumps(prompts)],
                       capture_output=True, timeout=120)
    q.stop()
    out = p.stdout.decode()
    res = json.loads(out) if p.returncode == 0 and out.startswith("{") else {}
    check("the openai npm package: a whole chat equals the shell's", res.get("whole") == want,
          out + p.stderr.decode()[-800:])
    check("the openai npm package: a streamed chat equals the shell's", res.get("streamed") == want,
          out)
    check("the openai npm package: four streamed chats at once, each equal to the shell's",
          res.get("at_once") == wants and len(set(wants)) > 1, f"{out}\nshell: {wants}")


if __name__ == "__main__":
    sys.exit(main())
