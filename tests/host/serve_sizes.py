#!/usr/bin/env python3
"""tests/host/serve_sizes.py - what the host sees of the TLS records (docs/tls.md,
"Threat model"): sizes that do not follow the text.

build/host/llmctl serves stories260K with `serve --port 0` (attested TLS,
the SEV-SNP simulator's evidence) behind a relay on 127.0.0.1 that plays
the host: it forwards the bytes both ways and writes down the length of
every TLS application-data record, as anyone on the path can. The attack
is the token-length side channel (one streamed event per token, its record
as long as the token's text); the checks:

- streamed chats of three prompts whose tokens' texts differ in length
  (checked, so the test can fail): every record between the first and the
  last has one length, in all three;
- two whole chats whose answers differ in length: their records are as
  long as each other (JSON bodies padded to 1 KiB);
- through `llmctl proxy`: two requests whose bodies differ by hundreds of
  bytes go up to the guest as records of one length (the proxy pads JSON
  bodies to 1 KiB) and in one record each (head and body together).

usage: serve_sizes.py LLMCTL MKEVIDENCE
"""
import http.client
import json
import os
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qemu"))
from results import check, skip_data, summary  # noqa: E402
from proxy import Proxy, end_all, sim_ark, sim_verify, sse_text, start_server  # noqa: E402


class Tap:
    """A relay that writes down the TLS records it forwards: for each
    connection, [(direction, content type, length)], "up" toward the guest."""

    def __init__(self, guest_port):
        self.guest = guest_port
        self.conns = []
        self.seen = {}
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        while True:
            c, _ = self.sock.accept()
            g = socket.create_connection(("127.0.0.1", self.guest))
            log = []
            with self.lock:
                self.conns.append(log)
            threading.Thread(target=self.pipe, args=(g, c, "down", log), daemon=True).start()
            threading.Thread(target=self.pipe, args=(c, g, "up", log), daemon=True).start()

    def pipe(self, a, b, way, log):
        buf = b""
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                buf += d
                while len(buf) >= 5:
                    t, _ver, n = struct.unpack(">BHH", buf[:5])
                    if len(buf) < 5 + n:
                        break
                    with self.lock:
                        log.append((way, t, n))
                    buf = buf[5 + n:]
                # written down before it goes on: what the client has read,
                # the log already holds
                b.sendall(d)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def take(self):
        """The records since the last take, of each connection that had any."""
        with self.lock:
            out = [log[self.seen.get(i, 0):] for i, log in enumerate(self.conns)
                   if len(log) > self.seen.get(i, 0)]
            self.seen = {i: len(log) for i, log in enumerate(self.conns)}
        return out


def app(log, way):
    return [n for w, t, n in log if w == way and t == 23]


def tls_chat(port, body):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=60)
    c.request("POST", "/v1/chat/completions", body=json.dumps(body),
              headers={"Content-Type": "application/json", "Connection": "close"})
    r = c.getresponse()
    text = r.read().decode()
    c.close()
    return r.status, text


def pieces(body):
    out = []
    for ev in body.split("\n\n"):
        if ev.startswith("data: {"):
            d = json.loads(ev[6:])["choices"][0].get("delta", {})
            if d.get("content"):
                out.append(d["content"])
    return out


def run(llmctl, port, ark, tap):
    prompts = ["hello", "Once upon a time there was a big red dog", "Tom and Lily went to the park"]
    lens, mids = set(), set()
    for p in prompts:
        chat = {"messages": [{"role": "user", "content": p}], "temperature": 0, "max_tokens": 40,
                "stream": True}
        tap.take()
        st, body = tls_chat(tap.port, chat)
        logs = tap.take()
        text, done = sse_text(body)
        lens |= {len(x.encode()) for x in pieces(body)}
        # this chat's connection is the newest (an earlier one may still
        # log its closing alerts)
        down = app(logs[-1], "down") if logs else []
        check(f"streamed {p[:12]!r}: answered with events and [DONE]",
              st == 200 and done and len(down) >= 5, f"{st} {body[-300:]} {logs}")
        mids |= set(down[1:-1])
    check("the attack is real: the streamed tokens' texts have different lengths",
          len(lens) >= 3, str(sorted(lens)))
    check("every record between a stream's first and last has one length, whatever the token",
          len(mids) == 1, str(sorted(mids)))

    sizes, texts = [], []
    for n in (2, 30):
        chat = {"messages": [{"role": "user", "content": "hello"}], "temperature": 0, "max_tokens": n}
        tap.take()
        st, body = tls_chat(tap.port, chat)
        logs = tap.take()
        texts.append(json.loads(body)["choices"][0]["message"]["content"] if st == 200 else "")
        sizes.append(sum(app(logs[-1], "down")) if logs else None)
    check("the attack is real: the two whole answers differ in length",
          len(texts[0]) + 20 < len(texts[1]), str(texts))
    check("two whole answers of different lengths: the host sees the same number of bytes",
          sizes[0] is not None and sizes[0] == sizes[1], str(sizes))

    px = Proxy(llmctl, f"127.0.0.1:{tap.port}", sim_verify(ark))
    check("the proxy attests through the tap", px.port is not None, px.line + "".join(px.err))
    if px.port is None:
        return
    ups, bodies = [], []
    # (the second body's length is in OpenAI's `user` member: the model's
    # context is short)
    for user in ("a", "a" * 600):
        chat = {"messages": [{"role": "user", "content": "hi"}], "temperature": 0, "max_tokens": 1,
                "user": user}
        data = json.dumps(chat).encode()
        bodies.append(len(data))
        tap.take()
        c = http.client.HTTPConnection("127.0.0.1", px.port, timeout=60)
        c.request("POST", "/v1/chat/completions", body=data,
                  headers={"Content-Type": "application/json", "Connection": "close"})
        r = c.getresponse()
        r.read()
        c.close()
        logs = tap.take()
        # the proxy's connection to the guest (kept alive between the two)
        ups.append(app(logs[-1], "up") if logs and r.status == 200 else (r.status, logs))
    check("the attack is real: the two request bodies differ by hundreds of bytes",
          bodies[1] - bodies[0] > 300, str(bodies))
    check("through the proxy: each request goes up as one record, both of one length",
          ups[0] is not None and ups[1] is not None and len(ups[0]) == 1 and ups[0] == ups[1],
          f"{ups} for bodies {bodies}")


def main():
    llmctl, mkevidence = sys.argv[1:3]
    data = os.environ.get("LLMK_TESTDATA", "../shared/testdata")
    model = os.path.join(data, "stories260K", "stories260K.gguf")
    if not os.path.exists(model):
        skip_data("record sizes on the host", "no testdata (stories260K)")
        return summary()
    w = tempfile.mkdtemp(prefix="llmk-sizes-")
    srv = None
    try:
        ark = sim_ark(mkevidence, w)
        srv, port, ln = start_server(llmctl, model)
        check("the host serves attested TLS", port is not None, ln)
        if port is not None:
            run(llmctl, port, ark, Tap(port))
    finally:
        end_all(srv, w)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
