#!/usr/bin/env python3
"""tests/host/serve_batch.py - continuous batching gives each request what
it gets alone.

For stories260K (testdata) and a random-weight Q4_0 model from mkmodel,
each resident and streamed (load --stream): six different prompts sent at
once to `serve --plain` (three streamed as server-sent events, three
whole; they decode together in one batch) must each answer, greedy, the
text the shell's `infer` gives for that prompt alone (prompt lookup off,
so the shell's run is one token a pass too). /metrics must show passes
that carried more than one token, and a request that joins while others
run (a seventh, after the first tokens) must equal its own too.

Usage: serve_batch.py LLMCTL MKMODEL. Ends "N passed, N failed, N skipped".
"""
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time

HOST = "127.0.0.1"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qemu"))
from results import check, skip, skip_data, summary  # noqa: E402
from serve import shell_output, start_serve  # noqa: E402
N_PREDICT = 24
# long enough (about 60 tokens each) that the six together pass a pass's
# 128 tokens: prompts are split between passes, beside decode tokens
STORY = ("the sun was warm and the children played in the garden with a small red ball "
         "while their mother baked bread in the kitchen and the dog slept under the tree. ")
PROMPTS = [STORY + p for p in ["Once upon a time", "The cat sat", "Lily and Tom went to the park",
                               "One day a big dog", "She looked at the sky and", "The little bird"]]
LATE = "Ben had a red ball"


def alone(llmctl, model, load, prompt):
    """The shell's infer of prompt, by itself: its reply text."""
    return shell_output(llmctl, model, f'infer "{prompt}" --temp 0 -n {N_PREDICT}',
                        setup=("config lookup 0", "config ctx 2048", load), timeout=120)


def complete(port, prompt, stream, out, key):
    try:
        c = http.client.HTTPConnection(HOST, port, timeout=120)
        body = {"prompt": prompt, "temperature": 0, "max_tokens": N_PREDICT, "stream": stream}
        c.request("POST", "/v1/completions", body=json.dumps(body),
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        raw = r.read().decode("utf-8", errors="replace")
        c.close()
        if r.status != 200:
            out[key] = f"status {r.status}: {raw[:200]}"
            return
        if not stream:
            out[key] = json.loads(raw)["choices"][0]["text"]
            return
        text = ""
        for ev in raw.split("\n\n"):
            if ev.startswith("data: ") and ev[6:] != "[DONE]":
                text += json.loads(ev[6:])["choices"][0]["text"]
        out[key] = text
    except Exception as e:  # the check names it
        out[key] = f"exception {e!r}"


def metric(port, name):
    c = http.client.HTTPConnection(HOST, port, timeout=30)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    m = re.search(rf"^{name} (\d+)", text, re.M)
    return int(m.group(1)) if m else -1


def run(llmctl, model, label, load):
    want = {p: alone(llmctl, model, load, p) for p in PROMPTS + [LATE]}
    srv, port, _ = start_serve(llmctl, model, ["config lookup 0", "config ctx 2048", load,
                                               "serve --plain --port 0 --slots 8"], wait=60)
    check(f"{label}: serve prints its port", port)
    if not port:
        srv.kill()
        return
    got = {}
    threads = [threading.Thread(target=complete, args=(port, p, i % 2 == 0, got, p))
               for i, p in enumerate(PROMPTS)]
    for t in threads:
        t.start()
    late = threading.Thread(target=complete, args=(port, LATE, True, got, LATE))
    time.sleep(0.05)
    late.start()
    for t in threads + [late]:
        t.join(180)
    for p in PROMPTS + [LATE]:
        check(f"{label}: '{p[-24:]}' together equals alone", got.get(p) == want[p],
              f"together: {got.get(p)!r}\nalone:    {want[p]!r}")
    passes, toks = metric(port, "llmk_batch_passes_total"), metric(port, "llmk_batch_tokens_total")
    check(f"{label}: passes carried several requests ({toks} tokens in {passes} passes)",
          passes > 0 and toks > passes)
    srv.stdin.close()
    try:
        srv.wait(60)
    except subprocess.TimeoutExpired:
        srv.kill()


def main():
    llmctl, mkmodel = sys.argv[1], sys.argv[2]
    data = os.environ.get("LLMK_TESTDATA", "../shared/testdata")
    stories = os.path.join(data, "stories260K", "stories260K.gguf")
    work = os.path.join(os.path.dirname(os.path.abspath(llmctl)), "..", "serve_batch")
    os.makedirs(work, exist_ok=True)
    rnd = os.path.join(work, "q4_0.gguf")
    subprocess.run([mkmodel, "--type", "Q4_0", "--layers", "2", "--dim", "256", "--ffn", "512",
                    "--heads", "4", "--kv-heads", "2", "--vocab", "1024", "--ctx", "2048",
                    "-o", rnd], check=True, capture_output=True)
    models = [(rnd, "random Q4_0")]
    if os.path.exists(stories):
        models.insert(0, (stories, "stories260K"))
    else:
        skip_data("stories260K", "no testdata")
    for path, name in models:
        run(llmctl, path, f"{name} resident", "load 0 --resident")
        run(llmctl, path, f"{name} streamed", "load 0 --stream")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
