#!/usr/bin/env python3
"""tools/bench_stream7b.py — a model larger than its memory, ours against
llama.cpp: load + N tokens of a Llama-2-7B-shaped Q4_0 GGUF under a memory
cgroup, and our decode against the disk's own O_DIRECT read rate.

    tools/bench_stream7b.py [--model build/models/llama2-7b-Q4_0.gguf]
                            [--limit 512M] [--budget 480M] [-n 8] [-t 2]
                            [--rounds 3] [--class native|avx2]
                            [--llamacpp-variant NAME]

Needs root and a memory cgroup (v1 at /sys/fs/cgroup/memory, or v2): each
run goes into a fresh child group limited to --limit, the model's pages
dropped from the page cache first (posix_fadvise), so every run reads the
file from the disk. Each round, in turn:

  disk       the file read with O_DIRECT, 16 requests of 2 MiB in flight
             (our streamer's pattern), whole: the disk's rate this round
  ours       llmctl -c 'config mem-budget BUDGET' -c 'load 0' -c 'infer
             PROMPT -n N --temp 0' -c stats, out of the box, then with
             --direct and with --no-direct
  llama.cpp  node-llama-cpp (tools/stream_llamacpp.mjs; installed under
             build/llamacpp as make bench-compare does), default mmap

llama.cpp's build: node-llama-cpp ships one ggml CPU library per x86 level
and loads the best this CPU runs; the builds with AVX2 repack Q4_0 into
memory of their own at load (3.5 GB), which the cgroup's OOM killer stops.
Before the rounds, the script tries the builds from the best down (as
bench_compare.py restricts them: a copy of the package holding one) until
one survives the cap, and uses that one: llama.cpp's best build that runs
under the cap (--llamacpp-variant names one and skips the search). A build
still running after --search-limit seconds (300) in the search counts as not
running under the cap: some page the model through the cache for many
minutes instead of being OOM-killed.

The table gives medians over the rounds (ranges with more than one): wall
time from the process's start to its exit for load + N tokens, the load,
prompt and per-token decode times, and the decode against the weight bytes
a token reads (every tensor but token_embd, from the GGUF's tensor table)
over the disk rate of the same round. Python standard library only; never
part of make test.
"""
import argparse
import ctypes
import json
import mmap
import os
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_compare import install_llamacpp, prefix_with_builds  # noqa: E402

# ggml's x86 CPU builds in node-llama-cpp, the most capable first
X86_VARIANTS = ["sapphirerapids", "zen4", "icelake", "cooperlake", "cascadelake",
                "cannonlake", "skylakex", "alderlake", "haswell", "piledriver", "ivybridge",
                "sandybridge", "sse42", "x64"]
AVX2_CLASS = X86_VARIANTS[X86_VARIANTS.index("haswell"):]
CLASS_MASK = {"native": None, "avx2": "60F40F"}
PROMPT = "Once upon a time"
HUGE = 2 << 20


def die(msg):
    print("bench_stream7b: " + msg, file=sys.stderr)
    sys.exit(1)


def size_arg(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s.strip().upper())
    if not m:
        raise argparse.ArgumentTypeError(f"'{s}': expected bytes with K, M or G")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


# ---- the GGUF's tensor table (GGUF v2/v3: header, metadata, tensor infos) ----
# ggml type: (elements a block, bytes a block)
GGML_BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24),
               8: (32, 34), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176),
               14: (256, 210), 30: (1, 2)}


def token_bytes(path):
    """Bytes of every tensor but token_embd: what one token's pass reads."""
    with open(path, "rb") as f:
        def u(fmt):
            return struct.unpack("<" + fmt, f.read(struct.calcsize("<" + fmt)))[0]

        def s():
            return f.read(u("Q")).decode("utf-8", "replace")

        def skip(t):
            sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
            if t == 8:
                s()
            elif t == 9:
                et, n = u("I"), u("Q")
                for _ in range(n):
                    skip(et)
            else:
                f.read(sizes[t])

        if f.read(4) != b"GGUF":
            die(f"{path}: not a GGUF file")
        u("I")
        n_t, n_kv = u("Q"), u("Q")
        for _ in range(n_kv):
            s()
            skip(u("I"))
        total = 0
        for _ in range(n_t):
            name = s()
            dims = [u("Q") for _ in range(u("I"))]
            t = u("I")
            u("Q")
            if t not in GGML_BLOCKS:
                die(f"{path}: tensor {name}: ggml type {t} not in this script's table")
            blk, nb = GGML_BLOCKS[t]
            n = 1
            for d in dims:
                n *= d
            if name != "token_embd.weight":
                total += n // blk * nb
        return total


# ---- the page cache, the disk, the cgroup ----
def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def huge_buffer(n):
    """n bytes of anonymous memory on 2 MiB pages where the kernel gives them
    (our host build's buffers are: docs/perf.md), as a memoryview."""
    m = mmap.mmap(-1, n + HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        m.madvise(mmap.MADV_HUGEPAGE)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    off = -addr % HUGE
    view = memoryview(m)[off:off + n]
    view[:] = bytes(n)  # fault it in now
    return m, view


def disk_rate(path, depth=16, req=2 << 20):
    """GB/s reading the whole file round the page cache, depth requests of
    req bytes in flight (threads: each blocks in the kernel, GIL released),
    into buffers on 2 MiB pages: into 4 KiB pages each page is one segment
    of a virtio request, and the reads were much slower (docs/perf.md)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    size = os.fstat(fd).st_size // req * req
    nxt, lock = [0], threading.Lock()

    def worker():
        keep, buf = huge_buffer(req)
        while True:
            with lock:
                off = nxt[0]
                nxt[0] += req
            if off >= size:
                return
            os.preadv(fd, [buf], off)

    th = [threading.Thread(target=worker) for _ in range(depth)]
    t0 = time.monotonic()
    for t in th:
        t.start()
    for t in th:
        t.join()
    dt = time.monotonic() - t0
    os.close(fd)
    return size / dt / 1e9


class Cgroup:
    """A child memory cgroup (v1 or v2) limited to limit bytes."""

    def __init__(self, limit):
        name = f"llmk-stream7b-{os.getpid()}"
        v1 = "/sys/fs/cgroup/memory"
        v2 = "/sys/fs/cgroup"
        if os.path.isfile(os.path.join(v1, "memory.limit_in_bytes")):
            self.v1, self.path = True, os.path.join(v1, name)
        elif os.path.isfile(os.path.join(v2, "cgroup.controllers")) and \
                "memory" in open(os.path.join(v2, "cgroup.controllers")).read().split():
            self.v1, self.path = False, os.path.join(v2, name)
        else:
            die("no memory cgroup controller mounted (v1 /sys/fs/cgroup/memory or v2)")
        try:
            os.mkdir(self.path)
        except PermissionError:
            die(f"{self.path}: cannot create the cgroup (run as root)")
        self._write("memory.limit_in_bytes" if self.v1 else "memory.max", str(limit))
        if not self.v1:
            try:
                self._write("memory.swap.max", "0")
            except OSError:
                pass

    def _write(self, f, v):
        with open(os.path.join(self.path, f), "w") as fh:
            fh.write(v)

    def _read(self, f):
        with open(os.path.join(self.path, f)) as fh:
            return fh.read()

    def oom_kills(self):
        text = self._read("memory.oom_control" if self.v1 else "memory.events")
        m = re.search(r"^oom_kill (\d+)", text, re.M)
        return int(m.group(1)) if m else 0

    def reset_peak(self):
        if self.v1:
            self._write("memory.max_usage_in_bytes", "0")

    def peak(self):
        try:
            return int(self._read("memory.max_usage_in_bytes" if self.v1 else "memory.peak"))
        except OSError:
            return 0

    def run(self, cmd, env=None, limit_s=None):
        """cmd in the group: (wall seconds to its exit, [(seconds, stdout
        line)], stderr, return code, killed by the OOM killer). Past
        limit_s seconds it is killed, and self.timed_out says so."""
        procs = os.path.join(self.path, "cgroup.procs")
        kills = self.oom_kills()
        self.reset_peak()

        def enter():
            with open(procs, "w") as fh:
                fh.write(str(os.getpid()))

        t0 = time.monotonic()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, preexec_fn=enter)
        err = []
        te = threading.Thread(target=lambda: err.append(p.stderr.read()))
        te.start()
        self.timed_out = False

        def too_long():
            self.timed_out = True
            p.kill()
        timer = threading.Timer(limit_s, too_long) if limit_s else None
        if timer:
            timer.start()
        lines = [(time.monotonic() - t0, line.rstrip("\n")) for line in p.stdout]
        rc = p.wait()
        dt = time.monotonic() - t0
        if timer:
            timer.cancel()
        te.join()
        oom = not self.timed_out and (self.oom_kills() > kills or rc == -signal.SIGKILL)
        return dt, lines, err[0] if err else "", rc, oom

    def remove(self):
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)


# ---- the two engines ----
def run_ours(cg, args, flag, mask):
    env = dict(os.environ)
    if mask:
        env["LLMK_CPU_MASK"] = mask
    cmd = [args.llmctl] + ([flag] if flag else []) + [
        "--disk", args.model, "-c", f"config threads {args.t}",
        "-c", f"config mem-budget {args.budget}", "-c", "load 0",
        "-c", f'infer "{PROMPT}" -n {args.n} --temp 0', "-c", "stats"]
    drop_cache(args.model)
    wall, lines, err, rc, oom = cg.run(cmd, env)
    r = {"wall": wall, "oom": oom, "peak": cg.peak()}
    if rc != 0:
        r["error"] = ["killed by the cgroup's OOM killer" if oom else
                      ([x for _, x in lines] + err.splitlines() or ["exit %d" % rc])[-1]]
        return r
    out = "\n".join(x for _, x in lines)
    # load: from the start to the "loaded" line (the engine's load and the
    # model's SHA-256 for attestation; the line's own figure is the first)
    r["load_s"] = next((t for t, x in lines if x.startswith("loaded disk")), None)
    pats = {"engine_load_ms": r"streaming, ([\d.]+) ms", "prompt_tokens": r"prompt\s+(\d+) tokens",
            "prompt_ms": r"prompt\s+\d+ tokens in ([\d.]+) ms",
            "tokens": r"generation\s+(\d+) tokens", "gen_ms": r"generation\s+\d+ tokens in ([\d.]+) ms",
            "reads": r"reads\s+(.*)", "wait_ms": r"waiting on the disk ([\d.]+) ms"}
    for k, pat in pats.items():
        m = re.search(pat, out)
        if not m:
            r["error"] = [f"no '{k}' in the output (not streaming?)"]
            return r
        r[k] = m.group(1) if k == "reads" else float(m.group(1))
    # the first token comes from the prompt's pass, each later one from its own
    r["decode_s"] = r["gen_ms"] / 1e3 / max(r["tokens"] - 1, 1)
    return r


def variant_prefix(prefix, variant):
    """A copy of prefix (hard links) holding only one ggml CPU build."""
    dst = prefix_with_builds(prefix, f"{prefix}-only-{variant}", {variant})
    bins = os.path.join(dst, "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64")
    if not os.path.exists(os.path.join(bins, f"libggml-cpu-{variant}.so")):
        die(f"node-llama-cpp has no ggml CPU build '{variant}'")
    return dst


def run_llamacpp(cg, args, prefix, limit_s=None):
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = ["node", os.path.join(here, "stream_llamacpp.mjs"), prefix, args.model, str(args.t),
           str(args.n), PROMPT]
    drop_cache(args.model)
    wall, lines, err, rc, oom = cg.run(cmd, limit_s=limit_s)
    if cg.timed_out:
        return {"wall": wall, "oom": False, "peak": cg.peak(),
                "error": [f"still running after {limit_s:.0f} s under the cap (thrashing); "
                          "stopped"]}
    r = {"wall": wall, "oom": oom, "peak": cg.peak()}
    for _, line in lines:
        if line.startswith("{") and rc == 0:
            r.update(json.loads(line))
            r["load_s"] = (r["start_ms"] + r["load_ms"]) / 1e3
            r["decode_s"] = r["gen_ms"] / 1e3 / max(r["tokens"] - 1, 1)
            return r
    r["error"] = ["killed by the cgroup's OOM killer" if oom else
                  ([x for _, x in lines] + err.splitlines() or ["exit %d" % rc])[-1]]
    return r


def loaded_variant(prefix):
    """The ggml CPU build node-llama-cpp under prefix loads on this CPU."""
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run(["node", os.path.join(here, "stream_llamacpp.mjs"), prefix, "-", "1",
                        "0", ""], capture_output=True, text=True, timeout=600)
    m = re.search(r'"cpu_variant":"([a-z0-9_]+)"', p.stdout)
    if not m:
        die(f"node-llama-cpp under {prefix} did not start: {(p.stdout + p.stderr).strip()}")
    return m.group(1)


def class_prefix(base, order):
    """A copy of base (hard links) holding only the builds in order."""
    return prefix_with_builds(base, base + "-avx2", set(order))


def pick_llamacpp(cg, args, base):
    """The build ggml picks for this CPU, then its plain AVX2 build, then
    those below AVX2 from the best down, until one survives the cap: (its
    name, [(each build tried, its result)]). (Every build with AVX2
    repacks Q4_0, so one of them stands for the rest.)"""
    if args.llamacpp_variant:
        return args.llamacpp_variant, []
    order = AVX2_CLASS if args.cls == "avx2" else X86_VARIANTS
    best = loaded_variant(class_prefix(base, order) if args.cls == "avx2" else base)
    below = X86_VARIANTS[X86_VARIANTS.index("haswell") + 1:]
    tries = [best] + [v for v in ["haswell"] + below
                      if v != best and X86_VARIANTS.index(v) > X86_VARIANTS.index(best)]
    tried = []
    for v in tries:
        r = run_llamacpp(cg, args, variant_prefix(base, v), args.search_limit)
        tried.append((v, r))
        print(f"bench_stream7b: llama.cpp build {v}: "
              f"{'survives' if 'error' not in r else r['error'][0]}", file=sys.stderr)
        if "error" not in r:
            return v, tried
    die("no llama.cpp build survives the cap")


def span(v, fmt):
    v = [x for x in v if x is not None]
    if not v:
        return "-"
    m, lo, hi = fmt % statistics.median(v), fmt % min(v), fmt % max(v)
    return m if lo == hi else f"{m} ({lo}-{hi})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="build/models/llama2-7b-Q4_0.gguf")
    ap.add_argument("--limit", type=size_arg, default=512 << 20, help="the cgroup's memory limit")
    ap.add_argument("--budget", default="480M", help="our config mem-budget")
    ap.add_argument("-n", type=int, default=8, help="tokens to generate")
    ap.add_argument("-t", type=int, default=2, help="threads")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--class", dest="cls", choices=sorted(CLASS_MASK), default="native")
    ap.add_argument("--llmctl", default="build/host/llmctl")
    ap.add_argument("--prefix", default="build/llamacpp", help="npm prefix for node-llama-cpp")
    ap.add_argument("--llamacpp-variant", help="llama.cpp's ggml CPU build to use (no search)")
    ap.add_argument("--search-limit", type=float, default=300,
                    help="seconds a build may take in the search before it counts as not "
                         "running under the cap")
    ap.add_argument("--no-llamacpp", action="store_true", help="ours only")
    args = ap.parse_args()
    if not os.path.exists(args.model):
        die(f"{args.model}: no such file (make models-7b writes it)")
    if not os.access(args.llmctl, os.X_OK):
        die(f"{args.llmctl}: not built (make {args.llmctl})")
    if os.geteuid() != 0:
        die("needs root (a memory cgroup of its own)")
    tb = token_bytes(args.model)
    mask = CLASS_MASK[args.cls]
    if not args.no_llamacpp:
        install_llamacpp(args.prefix)

    cg = Cgroup(args.limit)
    try:
        load0 = os.getloadavg()
        t0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        variant, tried = (None, [])
        if not args.no_llamacpp:
            variant, tried = pick_llamacpp(cg, args, args.prefix)
            lprefix = variant_prefix(args.prefix, variant)
        rows = {k: [] for k in ("disk", "default", "direct", "no-direct", "llama.cpp")}
        for rnd in range(args.rounds):
            # the disk's rate on either side of our default run (it drifts
            # with the host's other work): their mean is the round's
            before = disk_rate(args.model)
            rows["default"].append(run_ours(cg, args, None, mask))
            rows["disk"].append((before + disk_rate(args.model)) / 2)
            if not args.no_llamacpp:
                rows["llama.cpp"].append(run_llamacpp(cg, args, lprefix))
            rows["direct"].append(run_ours(cg, args, "--direct", mask))
            rows["no-direct"].append(run_ours(cg, args, "--no-direct", mask))
            print(f"bench_stream7b: round {rnd + 1} of {args.rounds} done, load average "
                  f"{os.getloadavg()[0]:.2f}", file=sys.stderr)
        load1 = os.getloadavg()
    finally:
        cg.remove()

    disk = rows["disk"]
    print(f"{t0}, {os.path.basename(args.model)}, {tb / 1e9:.2f} GB of weights a token, "
          f"cgroup memory limit {args.limit >> 20} MiB, mem-budget {args.budget}, "
          f"{args.t} threads, class {args.cls}"
          + (f" (LLMK_CPU_MASK={mask})" if mask else "")
          + f", {args.rounds} round(s); load average {load0[0]:.2f} before, {load1[0]:.2f} after")
    print(f"disk: O_DIRECT, 16 x 2 MiB in flight, the mean of a pass before and one after "
          f"our default run: {span(disk, '%.2f')} GB/s, so "
          f"{span([tb / d / 1e9 for d in disk], '%.2f')} s a token at the disk's rate")
    for v, r in tried:
        if "error" in r:
            print(f"llama.cpp build {v}: {r['error'][0]}")
    if variant:
        print(f"llama.cpp: node-llama-cpp, ggml CPU build {variant}, the best that runs under the cap")
    print()
    ll = [r for r in rows["llama.cpp"] if "error" not in r]
    ref = statistics.median([r["wall"] for r in ll]) if ll else None
    print(f"| run | load + {args.n} tokens, s | vs llama.cpp | load, s | prompt, s "
          f"| decode, s a token | decode / (bytes / disk rate) | reads | peak MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in ("default", "direct", "no-direct", "llama.cpp"):
        rs = rows[name]
        if not rs:
            continue
        ok = [(r, d) for r, d in zip(rs, disk) if "error" not in r]
        bad = [r["error"][0] for r in rs if "error" in r]
        label = {"default": "ours, out of the box", "direct": "ours, --direct",
                 "no-direct": "ours, --no-direct", "llama.cpp": f"llama.cpp ({variant})"}[name]
        if not ok:
            print(f"| {label} | {bad[0]} | | | | | | | |")
            continue
        walls = [r["wall"] for r, _ in ok]
        ratio = f"{ref / statistics.median(walls):.2f}x" if ref and name != "llama.cpp" else ""
        load = [r["load_s"] for r, _ in ok]
        prompt = [r["prompt_ms"] / 1e3 for r, _ in ok]
        dec = [r["decode_s"] for r, _ in ok]
        vs = [r["decode_s"] / (tb / d / 1e9) for r, d in ok]
        reads = ok[0][0].get("reads", ok[0][0].get("cpu_variant", ""))
        print(f"| {label} | {span(walls, '%.1f')} | {ratio} | {span(load, '%.2f')} "
              f"| {span(prompt, '%.2f')} | {span(dec, '%.2f')} | {span(vs, '%.2f')} "
              f"| {reads.split(' (')[0]} | {span([r['peak'] / 2**20 for r, _ in ok], '%.0f')} |"
              + (f" ({len(bad)} failed: {bad[0]})" if bad else ""))


if __name__ == "__main__":
    main()
