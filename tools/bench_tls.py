#!/usr/bin/env python3
"""tools/bench_tls.py - what attested TLS costs the API on the host build.

Starts build/host/llmctl twice on MODEL (`serve --plain --port 0` and
`serve --port 0`, 127.0.0.1) and measures with python3's http.client:
the TLS handshake (new connections, median and p90 of N), a keep-alive
GET /health round trip, greedy chat throughput, whole and streamed
(completion tokens / wall time, best of R), and a short greedy chat's
latency on one keep-alive connection (median of K; http.client sends the
head and the body of a POST apart, two TLS records), plain against TLS.
One-off: figures go to docs/perf.md with the command line.

Usage: tools/bench_tls.py [--model GGUF] [--tokens N] [--runs R] [--keepalive K]
       [--llmctl PATH]
"""
import argparse
import http.client
import json
import os
import re
import socket
import ssl
import statistics
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def start(llmctl, model, args):
    p = subprocess.Popen([llmctl, "--disk", model, "-c", "load 0", "-c", args, "-i"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    while True:
        line = p.stdout.readline().decode()
        m = re.search(r"serving on 127\.0\.0\.1:(\d+)", line)
        if m:
            return p, int(m.group(1))
        if not line:
            sys.exit(f"server did not start: {args}")


def ctx():
    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    c.check_hostname = False
    c.verify_mode = ssl.CERT_NONE
    return c


def connect(port, tls):
    return (http.client.HTTPSConnection("127.0.0.1", port, context=ctx(), timeout=120) if tls
            else http.client.HTTPConnection("127.0.0.1", port, timeout=120))


def handshakes(port, n):
    t = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        t0 = time.perf_counter()
        w = ctx().wrap_socket(s)
        t.append(time.perf_counter() - t0)
        w.close()
    t.sort()
    return statistics.median(t) * 1e3, t[int(0.9 * (n - 1))] * 1e3


def rtt(port, tls, n):
    c = connect(port, tls)
    c.request("GET", "/health")
    c.getresponse().read()
    t0 = time.perf_counter()
    for _ in range(n):
        c.request("GET", "/health")
        c.getresponse().read()
    c.close()
    return (time.perf_counter() - t0) / n * 1e6


def chat(port, tls, tokens, stream):
    body = {"messages": [{"role": "user", "content": "Tell me a story"}], "temperature": 0,
            "max_tokens": tokens, "stream": stream}
    c = connect(port, tls)
    t0 = time.perf_counter()
    c.request("POST", "/v1/chat/completions", body=json.dumps(body))
    r = c.getresponse()
    data = r.read().decode()
    dt = time.perf_counter() - t0
    c.close()
    if stream:
        n = sum(1 for ev in data.split("\n\n") if ev.startswith("data: {") and '"content":"' in ev
                and '"role"' not in ev)
    else:
        n = json.loads(data)["usage"]["completion_tokens"]
    return n / dt, n


def keepalive(port, tls, stream, n, tokens=20):
    body = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "temperature": 0,
                       "max_tokens": tokens, "stream": stream})
    c = connect(port, tls)
    t = []
    for i in range(n + 2):  # the first two warm the connection
        t0 = time.perf_counter()
        c.request("POST", "/v1/chat/completions", body=body)
        c.getresponse().read()
        if i >= 2:
            t.append(time.perf_counter() - t0)
    c.close()
    return statistics.median(t) * 1e3


def main():
    ap = argparse.ArgumentParser()
    td = os.environ.get("LLMK_TESTDATA", os.path.join(ROOT, "..", "shared", "testdata"))
    ap.add_argument("--model", default=os.path.join(td, "stories260K", "stories260K.gguf"))
    ap.add_argument("--tokens", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--handshakes", type=int, default=100)
    ap.add_argument("--keepalive", type=int, default=50)
    ap.add_argument("--llmctl", default=os.path.join(ROOT, "build", "host", "llmctl"))
    a = ap.parse_args()
    llmctl = a.llmctl
    plain, pport = start(llmctl, a.model, "serve --plain --port 0")
    tls, tport = start(llmctl, a.model, "serve --port 0")
    try:
        med, p90 = handshakes(tport, a.handshakes)
        print(f"TLS handshake (ECDHE-ECDSA P-256, TLS 1.2), {a.handshakes} connections: "
              f"median {med:.2f} ms, p90 {p90:.2f} ms")
        print(f"keep-alive GET /health round trip: plain {rtt(pport, False, 200):.0f} us, "
              f"TLS {rtt(tport, True, 200):.0f} us")
        for stream in (False, True):
            print(f"keep-alive 20-token chat {'streamed' if stream else 'whole'}, median of "
                  f"{a.keepalive}: plain {keepalive(pport, False, stream, a.keepalive):.2f} ms, "
                  f"TLS {keepalive(tport, True, stream, a.keepalive):.2f} ms")
        for stream in (False, True):
            for name, port, t in (("plain", pport, False), ("TLS", tport, True)):
                best = max(chat(port, t, a.tokens, stream) for _ in range(a.runs))
                print(f"chat {'streamed' if stream else 'whole'} {name:5}: {best[0]:8.1f} tok/s "
                      f"({best[1]} tokens, best of {a.runs})")
    finally:
        for p in (plain, tls):
            p.stdin.close()
            p.wait(timeout=30)


if __name__ == "__main__":
    main()
