#!/usr/bin/env python3
"""tools/bench_compare.py — our `llmctl bench` against llama.cpp on the same
GGUF files, in turn, and the ratio table of issue 17.

    tools/bench_compare.py [--class native|avx2] [-p 128] [-n 64] [-r 3]
                           [-t 2] [--rounds 1] [MODEL.gguf ...]

Default models: build/models/tinyllama-{Q4_0,Q4_K_M,Q6_K,Q8_0}.gguf
(`make models`). llama.cpp is node-llama-cpp's prebuilt CPU build
(tools/bench_llamacpp.mjs), installed with npm under build/llamacpp on
first use; it needs node and npm (`make bench-deps` installs Debian's).

--class avx2 plays an AVX2-only CPU (AMD Zen 2/3, most SEV-SNP hosts) on a
newer one: LLMK_CPU_MASK=60F40F for ours (mk/cpu.mk's avx2-vaes class),
and for llama.cpp a copy of its binaries without the CPU variants that
need AVX-512 or AVX-VNNI, so ggml loads its haswell (AVX2) one. The table
names the variant each llama.cpp run loaded.

Each model: ours, then llama.cpp (each with a warm-up run that is not
counted), --rounds times; the table gives the median of each engine's
per-round means, and with more than one round the ranges too. The last
column is our decode's share of the read probe `llmctl bench` measures in
the same run. Python standard library only; nothing here runs in make test.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

NLC_VERSION = "3.22.1"
# ggml CPU variants an AVX2-only x86 CPU without AVX-VNNI may load
AVX2_VARIANTS = {"haswell", "sandybridge", "ivybridge", "piledriver", "sse42", "x64"}
CLASS_MASK = {"native": None, "avx2": "60F40F"}


def die(msg):
    print("bench_compare: " + msg, file=sys.stderr)
    sys.exit(1)


def install_llamacpp(prefix):
    """node-llama-cpp and its linux-x64 prebuilt binaries under prefix."""
    entry = os.path.join(prefix, "node_modules", "node-llama-cpp", "package.json")
    if os.path.exists(entry):
        return
    if not shutil.which("node") or not shutil.which("npm"):
        die("node and npm are needed for llama.cpp's side (make bench-deps installs "
            "Debian's nodejs and npm)")
    os.makedirs(prefix, exist_ok=True)
    with open(os.path.join(prefix, "package.json"), "w") as f:
        json.dump({"name": "llmk-bench-llamacpp", "private": True}, f)
    print(f"bench_compare: installing node-llama-cpp {NLC_VERSION} under {prefix}",
          file=sys.stderr)
    # no install scripts (they would build llama.cpp from source) and no
    # optional packages (the CUDA and Vulkan builds): the CPU build by name
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts",
                    "--omit=optional", f"node-llama-cpp@{NLC_VERSION}",
                    f"@node-llama-cpp/linux-x64@{NLC_VERSION}"], cwd=prefix, check=True,
                   stdout=subprocess.DEVNULL)


def prefix_with_builds(prefix, dst, keep):
    """dst: a copy of prefix (hard links) holding only the ggml CPU builds
    named in keep; made once."""
    bins = os.path.join(dst, "node_modules", "@node-llama-cpp", "linux-x64", "bins",
                        "linux-x64")
    if not os.path.isdir(bins):
        shutil.rmtree(dst, ignore_errors=True)
        subprocess.run(["cp", "-al", prefix, dst], check=True)
        for name in os.listdir(bins):
            if name.startswith("libggml-cpu-") and name.endswith(".so") and \
                    name[len("libggml-cpu-"):-3] not in keep:
                os.unlink(os.path.join(bins, name))
    return dst


def avx2_prefix(prefix):
    """A copy of prefix whose ggml CPU variants are AVX2's at most."""
    return prefix_with_builds(prefix, prefix + "-avx2", AVX2_VARIANTS)


def run_ours(llmctl, model, args, mask):
    env = dict(os.environ)
    if mask:
        env["LLMK_CPU_MASK"] = mask
    cmd = [llmctl, "--disk", model, "-c", "load 0",
           "-c", f"bench -p {args.p} -n {args.n} -r {args.r} -t {args.t} --json"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    die(f"{' '.join(cmd)}: no JSON line\n{out.stdout}{out.stderr}")


def run_llamacpp(prefix, model, args):
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = ["node", os.path.join(here, "bench_llamacpp.mjs"), prefix, model,
           str(args.t), str(args.p), str(args.n), str(args.r)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    die(f"{' '.join(cmd)}: no JSON line\n{out.stdout}{out.stderr}")


def span(v, fmt):
    """median, and the range where there is more than one value"""
    m, lo, hi = fmt % statistics.median(v), fmt % min(v), fmt % max(v)
    return m if lo == hi else f"{m} ({lo}-{hi})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--class", dest="cls", choices=sorted(CLASS_MASK), default="native")
    ap.add_argument("-p", type=int, default=128, help="prompt tokens (pp)")
    ap.add_argument("-n", type=int, default=64, help="generated tokens (tg)")
    ap.add_argument("-r", type=int, default=3, help="repetitions in each run")
    ap.add_argument("-t", type=int, default=2, help="threads")
    ap.add_argument("--rounds", type=int, default=1, help="runs of each engine, in turn")
    ap.add_argument("--llmctl", default="build/host/llmctl")
    ap.add_argument("--prefix", default="build/llamacpp", help="npm prefix for node-llama-cpp")
    args = ap.parse_args()
    models = args.models or [f"build/models/tinyllama-{q}.gguf"
                             for q in ("Q4_0", "Q4_K_M", "Q6_K", "Q8_0")]
    for m in models:
        if not os.path.exists(m):
            die(f"{m}: no such file (make models writes the default ones)")
    if not os.access(args.llmctl, os.X_OK):
        die(f"{args.llmctl}: not built (make {args.llmctl})")
    install_llamacpp(args.prefix)
    prefix = avx2_prefix(args.prefix) if args.cls == "avx2" else args.prefix
    mask = CLASS_MASK[args.cls]

    load0 = os.getloadavg()
    t0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rows, info = [], {}
    for m in models:
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(run_ours(args.llmctl, m, args, mask))
            theirs.append(run_llamacpp(prefix, m, args))
        info = theirs[-1]
        rows.append((m, ours, theirs))
    load1 = os.getloadavg()

    pp, tg = f"pp{args.p}", f"tg{args.n}"
    print(f"{t0}, class {args.cls}" + (f" (LLMK_CPU_MASK={mask})" if mask else "") +
          f", {args.t} threads, {args.r} repetitions a run, {args.rounds} round(s); "
          f"load average {load0[0]:.2f} before, {load1[0]:.2f} after")
    print(f"llama.cpp: node-llama-cpp {info.get('version')} "
          f"({info.get('llama_cpp', {}).get('release', '?')}), ggml CPU variant "
          f"{', '.join(sorted({t['cpu_variant'] for _, _, th in rows for t in th}))}")
    print()
    print(f"| model | ours {pp} | llama.cpp {pp} | ratio | ours {tg} | llama.cpp {tg} | ratio "
          "| our decode, share of the read probe |")
    print("|---|---|---|---|---|---|---|---|")
    for m, ours, theirs in rows:
        name = os.path.basename(m).removesuffix(".gguf").removeprefix("tinyllama-")
        opp = [o["pp_ts"] for o in ours]
        otg = [o["tg_ts"] for o in ours]
        tpp = [statistics.mean(t["pp_tps"]) for t in theirs if t["pp_tps"]]
        ttg = [statistics.mean(t["tg_tps"]) for t in theirs if t["tg_tps"]]
        share = [100 * o["bw_fraction"] for o in ours]
        rpp = statistics.median(opp) / statistics.median(tpp) if tpp else float("nan")
        rtg = statistics.median(otg) / statistics.median(ttg) if ttg else float("nan")
        print(f"| {name} | {span(opp, '%.1f')} | {span(tpp, '%.1f')} | {rpp:.2f} "
              f"| {span(otg, '%.1f')} | {span(ttg, '%.1f')} | {rtg:.2f} "
              f"| {span(share, '%.0f')}% of {span([o['mem_read_gbs'] for o in ours], '%.1f')} GB/s |")


if __name__ == "__main__":
    main()
