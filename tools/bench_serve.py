#!/usr/bin/env python3
"""tools/bench_serve.py - many clients at once: K concurrent streaming chat
requests through the real HTTP path of `llmctl serve --plain`, against the
same K generations through llama.cpp (node-llama-cpp, K sequences on one
context). Never part of make test (make bench-serve).

For each K (1 2 4 8 by default), each of K clients posts its own message
to /v1/chat/completions with stream true, temperature 0 and max_tokens N,
and reads the server-sent events as they come. Reported:

  tok/s   the tokens the server generated in the round (its /metrics
          llmk_tokens_predicted_total, before and after) over the round's
          wall time, from the first request sent to the last stream ended
  ttft    time to first token: request sent to the first content event
          (median and worst of the K)

llama.cpp's side (tools/bench_llamacpp_serve.mjs) feeds the same chat
prompt text (the chatml rendering our server uses for a model without a
template), K sequences on one context, greedy, N tokens each; its tok/s is
every sequence's tokens over the wall time, its ttft from the start to each
sequence's first token. Then the ratios the issue asks for.

  bench_serve.py --llmctl build/host/llmctl --model build/models/tinyllama-Q4_0.gguf
                 [--prefix build/llamacpp] [--stream --budget 256M] [-k 1 2 4 8] [-n 32]
"""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_compare import install_llamacpp, prefix_with_builds  # noqa: E402

HOST = "127.0.0.1"
MESSAGES = ["Tell me a story about a dragon.", "What is the capital of France?",
            "Write a haiku about the sea.", "Explain how a bicycle works.",
            "List three colours of the rainbow.", "Why is the sky blue?",
            "Describe a walk in the forest.", "How do bees make honey?"]


def chatml(msg):
    return f"<|im_start|>user\n{msg}<|im_end|>\n<|im_start|>assistant\n"


def metric(port, name):
    c = http.client.HTTPConnection(HOST, port, timeout=60)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    m = re.search(rf"^{name} (\d+)", text, re.M)
    return int(m.group(1)) if m else 0


def client(port, msg, n, t0, out, i):
    """One streaming chat request: (ttft, content events, ok)."""
    try:
        c = http.client.HTTPConnection(HOST, port, timeout=600)
        body = {"messages": [{"role": "user", "content": msg}], "temperature": 0,
                "max_tokens": n, "stream": True}
        c.request("POST", "/v1/chat/completions", body=json.dumps(body),
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        first, events, done = None, 0, False
        while True:
            line = r.fp.readline()
            if not line:
                break
            line = line.decode("utf-8", errors="replace").strip()
            if not line.startswith("data: "):
                continue
            if line == "data: [DONE]":
                done = True
                break
            ch = json.loads(line[6:])["choices"][0]
            if ch.get("delta", {}).get("content"):
                events += 1
                if first is None:
                    first = time.monotonic() - t0
        c.close()
        out[i] = (first, events, r.status == 200 and done)
    except Exception as e:
        out[i] = (None, 0, False)
        print(f"bench_serve: client {i}: {e!r}", file=sys.stderr)


def ours_round(port, k, n):
    before = metric(port, "llmk_tokens_predicted_total")
    out = [None] * k
    t0 = time.monotonic()
    ts = [threading.Thread(target=client, args=(port, MESSAGES[i % len(MESSAGES)], n, t0, out, i))
          for i in range(k)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.monotonic() - t0
    tokens = metric(port, "llmk_tokens_predicted_total") - before
    ttft = [o[0] for o in out if o and o[0] is not None]
    return {"K": k, "tokens": tokens, "wall_s": wall, "tps": tokens / wall,
            "ttft_med": statistics.median(ttft) if ttft else None,
            "ttft_max": max(ttft) if ttft else None, "ok": all(o and o[2] for o in out)}


def start_server(args):
    cmds = [args.llmctl, "--cpus", str(args.threads), "--disk", args.model,
            "-c", f"config threads {args.threads}", "-c", f"config ctx {args.ctx}"]
    if args.stream:
        cmds += ["-c", f"config mem-budget {args.budget}", "-c", "load 0 --stream"]
    else:
        cmds += ["-c", "load 0 --resident"]
    cmds += ["-c", f"serve --plain --port 0 --slots {max(args.k)}", "-i"]
    srv = subprocess.Popen(cmds, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    seen = ""
    deadline = time.time() + 600
    while time.time() < deadline:
        line = srv.stdout.readline().decode()
        seen += line
        m = re.search(r"serving on 127\.0\.0\.1:(\d+)", line)
        if m:
            # the rest of its output is not read: keep the pipe drained
            threading.Thread(target=lambda: [None for _ in srv.stdout], daemon=True).start()
            return srv, int(m.group(1)), seen
        if not line:
            break
    srv.kill()
    sys.exit(f"bench_serve: the server did not start:\n{seen}")


def size_arg(text):
    m = re.fullmatch(r"(\d+)([KMG]?)", text)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def llamacpp_round(args, k):
    """K sequences through node-llama-cpp. Streamed: in a memory cgroup of
    the budget (tools/bench_stream7b.py's), with its piledriver CPU build
    (its AVX2 and newer builds repack Q4_0 into memory of their own, which
    such a cgroup kills), so the weights are paged through the cache."""
    texts = [chatml(MESSAGES[i % len(MESSAGES)]) for i in range(k)]
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_llamacpp_serve.mjs")
    prefix = args.prefix
    if args.stream:
        prefix = prefix_with_builds(args.prefix, os.path.join("build", "llamacpp-piledriver"),
                                    ["piledriver"])
    cmd = ["node", script, prefix, args.model, str(args.threads), str(k), str(args.n)] + texts
    if args.stream:
        from bench_stream7b import Cgroup
        cg = Cgroup(size_arg(args.budget))
        try:
            _, lines, err, rc, oom = cg.run(cmd, limit_s=3600)
        finally:
            cg.remove()
        out = "\n".join(line for _, line in lines)
        if oom:
            print(f"bench_serve: llama.cpp K={k}: killed by the cgroup's OOM killer", file=sys.stderr)
            return None
    else:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        out, err, rc = r.stdout, r.stderr, r.returncode
    if rc != 0 or not out.strip():
        print(f"bench_serve: llama.cpp K={k} failed:\n{err[-2000:]}", file=sys.stderr)
        return None
    d = json.loads(out.strip().splitlines()[-1])
    return {"K": k, "tokens": d["tokens"], "wall_s": d["wall_s"], "tps": d["tps"],
            "ttft_med": statistics.median(d["ttft_s"]), "ttft_max": max(d["ttft_s"]),
            "llama_cpp": d["llama_cpp"]}


def fmt(x, spec):
    return format(x, spec) if x is not None else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--llmctl", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--prefix", default="build/llamacpp", help="node-llama-cpp's npm prefix")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--stream", action="store_true", help="our weights streamed from disk")
    ap.add_argument("--budget", default="256M", help="our mem-budget when streaming")
    ap.add_argument("--ctx", type=int, default=2048, help="config ctx: the slots' positions")
    ap.add_argument("-k", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("-n", type=int, default=128, help="tokens each client asks for")
    ap.add_argument("--no-llamacpp", action="store_true")
    ap.add_argument("--no-ours", action="store_true", help="llama.cpp's rounds only")
    ap.add_argument("--llamacpp-k", type=int, nargs="+", help="llama.cpp's K (default: -k's)")
    args = ap.parse_args()

    with open("/proc/loadavg") as f:
        load0 = f.read().split()[:3]
    ours = []
    if not args.no_ours:
        srv, port, seen = start_server(args)
        print(seen.strip().splitlines()[0] if seen.strip() else "", flush=True)
        # a warm-up (pages the weights in, starts the workers), not counted
        ours_round(port, 1, 4)
        for k in args.k:
            ours.append(ours_round(port, k, args.n))
            print("ours " + json.dumps(ours[-1]), flush=True)
        srv.stdin.close()
        try:
            srv.wait(120)
        except subprocess.TimeoutExpired:
            srv.kill()
    theirs = []
    if not args.no_llamacpp:
        install_llamacpp(args.prefix)
        for k in args.llamacpp_k or args.k:
            theirs.append(llamacpp_round(args, k))
            print("llama.cpp " + json.dumps(theirs[-1]), flush=True)
    with open("/proc/loadavg") as f:
        load1 = f.read().split()[:3]

    mode = f"streamed, mem-budget {args.budget}" if args.stream else "resident"
    print(f"\n{os.path.basename(args.model)}, {mode}, {args.threads} threads, {args.n} tokens a client; "
          f"load average {' '.join(load0)} before, {' '.join(load1)} after")
    print(f"{'K':>3} {'ours tok/s':>11} {'ttft med/max s':>15} {'llama.cpp tok/s':>16} "
          f"{'ttft med/max s':>15} {'ours/llama':>10} ok")
    by_k = {t["K"]: t for t in theirs if t}
    for o in ours:
        t = by_k.get(o["K"])
        print(f"{o['K']:>3} {o['tps']:>11.2f} {fmt(o['ttft_med'], '.2f'):>7}/{fmt(o['ttft_max'], '.2f'):<7} "
              f"{fmt(t and t['tps'], '.2f'):>16} "
              f"{fmt(t and t['ttft_med'], '.2f'):>7}/{fmt(t and t['ttft_max'], '.2f'):<7} "
              f"{fmt(t and o['tps'] / t['tps'], '.2f'):>10} {'yes' if o['ok'] else 'NO'}")
    one = next((o for o in ours if o["K"] == 1), None)
    for o in ours:
        if one and o["K"] > 1:
            print(f"ours K={o['K']} / K=1: {o['tps'] / one['tps']:.2f}x")
    for o in ours:
        if o["K"] > 1 and o["K"] in by_k:
            print(f"llama.cpp K={o['K']} / K=1: {by_k[o['K']]['tps'] / by_k[1]['tps']:.2f}x"
                  if 1 in by_k else "")
    print("json " + json.dumps({"ours": ours, "llamacpp": theirs, "load": [load0, load1],
                                "mode": mode, "threads": args.threads, "n": args.n}))
    return 0 if all(o["ok"] for o in ours) else 1


if __name__ == "__main__":
    sys.exit(main())
