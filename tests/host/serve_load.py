#!/usr/bin/env python3
"""tests/host/serve_load.py - the API server under load and hostile
connections, on 127.0.0.1 only, bounded in count and time.

`llmctl serve --plain --slots 8` with stories260K (context 2048: 8 slots of
256 positions). For 60 s, 16 clients each send greedy completions one
after another on keep-alive connections (streamed and whole in turn, four
prompts); every answer must be the shell's `infer` of that prompt alone,
and none may fail or be lost. Meanwhile, against the same server:

- 1,000 connections opened and dropped (half after a partial request);
- slowloris: 8 connections trickling a request's head a byte at a time:
  each gets one 408 and a close;
- an oversized header (431), a huge Content-Length (413), a body larger
  than the server takes (413), truncated JSON (400): one error each;
- a client that asks for a long stream and never reads it;
- the console: `version` typed while the load runs is answered.

The server's RSS (/proc/PID/status) is sampled through the run and must
stay under its value after the warm-up plus 64 MiB. At the end the server
stops at the end of its input.

Usage: serve_load.py LLMCTL [SECONDS]. Ends "N passed, N failed, N skipped".
"""
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

HOST = "127.0.0.1"
CLIENTS = 16
N_PREDICT = 16
PROMPTS = ["Once upon a time", "The cat sat", "One day a big dog", "The little bird"]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qemu"))
from results import check, skip, skip_data, summary  # noqa: E402
from serve import raw, shell_output, start_serve  # noqa: E402


def alone(llmctl, model, prompt):
    return shell_output(llmctl, model, f'infer "{prompt}" --temp 0 -n {N_PREDICT}',
                        setup=("config ctx 2048", "load 0"))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        m = re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M)
    return int(m.group(1)) if m else 0


class Load:
    def __init__(self, port, want, seconds):
        self.port, self.want, self.seconds = port, want, seconds
        self.ok = 0
        self.bad = []
        self.lock = threading.Lock()

    def one(self, conn, i, k):
        prompt = PROMPTS[(i + k) % len(PROMPTS)]
        stream = (i + k) % 2 == 0
        body = {"prompt": prompt, "temperature": 0, "max_tokens": N_PREDICT, "stream": stream}
        conn.request("POST", "/v1/completions", body=json.dumps(body),
                     headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        text = r.read().decode("utf-8", errors="replace")
        if r.status != 200:
            return f"status {r.status}: {text[:200]}"
        if stream:
            got = "".join(json.loads(ev[6:])["choices"][0]["text"] for ev in text.split("\n\n")
                          if ev.startswith("data: ") and ev[6:] != "[DONE]")
            if not text.rstrip().endswith("data: [DONE]"):
                return "the stream has no [DONE]"
        else:
            got = json.loads(text)["choices"][0]["text"]
        return None if got == self.want[prompt] else f"{prompt!r}: {got!r} != {self.want[prompt]!r}"

    def client(self, i):
        end = time.time() + self.seconds
        conn = http.client.HTTPConnection(HOST, self.port, timeout=120)
        k = 0
        while time.time() < end:
            try:
                why = self.one(conn, i, k)
            except Exception as e:
                why = f"exception {e!r}"
                conn.close()
                conn = http.client.HTTPConnection(HOST, self.port, timeout=120)
            with self.lock:
                if why:
                    self.bad.append(f"client {i} request {k}: {why}")
                else:
                    self.ok += 1
            k += 1
        conn.close()


def hostile(port, res):
    # 1,000 connections opened and dropped; every other one after a partial request
    errs = 0
    for i in range(1000):
        try:
            s = socket.create_connection((HOST, port), timeout=5)
            if i % 2:
                s.sendall(b"POST /v1/completions HTTP/1.1\r\nContent-Len")
            s.close()
        except OSError:
            errs += 1
    res["dropped"] = errs
    # slowloris: heads trickled a byte at a time, each to be cut off at 10 s
    def loris(out, j):
        s = socket.create_connection((HOST, port), timeout=20)
        head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 64
        got = b""
        try:
            for ch in head:
                s.sendall(bytes([ch]))
                time.sleep(0.5)
                s.setblocking(False)
                try:
                    got += s.recv(4096)
                except BlockingIOError:
                    pass
                s.setblocking(True)
                if got:
                    break
            s.settimeout(15)
            while True:
                k = s.recv(4096)
                if not k:
                    break
                got += k
        except OSError:
            pass
        s.close()
        out[j] = got
    lor = [None] * 8
    ts = [threading.Thread(target=loris, args=(lor, j)) for j in range(8)]
    for t in ts:
        t.start()
    # (each under load: 15 s for the answer)
    res["oversized_header"] = raw(port, b"GET /health HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n",
                                  15)
    res["huge_length"] = raw(port, b"POST /v1/completions HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n{",
                             15)
    # a body over what the server takes (64 KiB with the head): its first
    # kilobyte sent, the answer read before the rest would be
    res["big_body"] = raw(port, b"POST /v1/completions HTTP/1.1\r\nContent-Length: 70000\r\n\r\n"
                          b"{\"prompt\": \"" + b"a" * 1000, 15)
    trunc = b"{\"prompt\": \"Once upon"
    res["truncated"] = raw(port, b"POST /v1/completions HTTP/1.1\r\nContent-Length: %d\r\n"
                           b"Connection: close\r\n\r\n" % len(trunc) + trunc, 15)
    # a stream asked for and never read (the socket's buffers small)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((HOST, port))
    body = json.dumps({"prompt": "Once upon a time", "max_tokens": 200, "stream": True,
                       "temperature": 0}).encode()
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    res["never_reads"] = s
    for t in ts:
        t.join(60)
    res["loris"] = lor


def main():
    llmctl = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60
    data = os.environ.get("LLMK_TESTDATA", "../shared/testdata")
    model = os.path.join(data, "stories260K", "stories260K.gguf")
    if not os.path.exists(model):
        skip_data("the API under load", "no testdata (stories260K)")
        return summary()
    want = {p: alone(llmctl, model, p) for p in PROMPTS}

    srv, port, _ = start_serve(llmctl, model, ["config ctx 2048", "load 0",
                                               "serve --plain --port 0 --slots 8"])
    lines = []
    check("serve prints its port", port)
    if not port:
        srv.kill()
        return 1

    def reader():
        for line in srv.stdout:
            lines.append((time.time(), line.decode(errors="replace")))
    threading.Thread(target=reader, daemon=True).start()

    # warm-up: a round of the 16 clients' first requests
    warm = Load(port, want, 0.1)
    ts = [threading.Thread(target=warm.client, args=(i,)) for i in range(CLIENTS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check("warm-up: 16 clients' first answers right", not warm.bad and warm.ok >= CLIENTS,
          "\n".join(warm.bad))
    base = rss_kib(srv.pid)
    peak = [base]
    stop = threading.Event()

    def sampler():
        while not stop.is_set():
            try:
                peak[0] = max(peak[0], rss_kib(srv.pid))
            except OSError:
                break
            time.sleep(0.2)
    threading.Thread(target=sampler, daemon=True).start()

    load = Load(port, want, seconds)
    ts = [threading.Thread(target=load.client, args=(i,)) for i in range(CLIENTS)]
    t0 = time.time()
    for t in ts:
        t.start()
    res = {}
    h = threading.Thread(target=hostile, args=(port, res))
    h.start()
    time.sleep(min(5, seconds / 4))
    asked = time.time()
    srv.stdin.write(b"version\n")
    srv.stdin.flush()
    h.join(120)
    for t in ts:
        t.join(seconds + 120)
    took = time.time() - t0
    stop.set()

    check(f"16 clients for {seconds:.0f} s: {load.ok} answers, every one right, none lost",
          not load.bad and load.ok >= CLIENTS, "\n".join(load.bad[:20]))
    check(f"the load ended in bounded time ({took:.0f} s)", took < seconds + 60)
    answered = [t for t, l in lines if re.search(r"llmk \d+\.\d+", l) and t >= asked]
    check("the console answers `version` under load",
          answered and answered[0] - asked < 10, f"{len(lines)} lines; first answer at "
          f"{answered[0] - asked if answered else None}")
    check("1,000 connections opened and dropped", res.get("dropped") == 0, res.get("dropped"))
    lor = res.get("loris") or []
    check("slowloris: each trickled head gets one 408 and a close",
          len(lor) == 8 and all(g and g.startswith(b"HTTP/1.1 408 ") and g.count(b"HTTP/1.1") == 1
                                for g in lor), [g[:80] if g else g for g in lor])
    for key, code in [("oversized_header", b"431"), ("huge_length", b"413"), ("big_body", b"413"),
                      ("truncated", b"400")]:
        got = res.get(key, b"")
        check(f"{key.replace('_', ' ')}: one {code.decode()}",
              got.startswith(b"HTTP/1.1 " + code + b" ") and got.count(b"HTTP/1.1 ") == 1, got[:200])
    check(f"RSS stayed bounded ({base >> 10} MiB after the warm-up, at most {peak[0] >> 10} MiB)",
          peak[0] <= base + 64 * 1024)
    # the server still answers
    c = http.client.HTTPConnection(HOST, port, timeout=10)
    c.request("GET", "/health")
    check("the server still answers /health", c.getresponse().status == 200)
    c.close()
    nr = res.get("never_reads")
    if nr:
        nr.close()
    srv.stdin.close()
    try:
        rc = srv.wait(60)
    except subprocess.TimeoutExpired:
        srv.kill()
        rc = None
    check("the server stops at the end of its input, exit 0", rc == 0, rc)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
