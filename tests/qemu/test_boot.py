#!/usr/bin/env python3
"""tests/qemu/test_boot.py - boot llmk.efi in QEMU and check what it does.

Generated disks of awkward sizes are attached as virtio-blk devices and the
kernel's `disks hash` is compared with hashlib's SHA-256 of the same bytes:
sizes not a multiple of 4 KiB, one not a multiple of 512 (QEMU rounds such a
raw image up to whole sectors and reads the tail as zeros), one large enough
for many requests in flight, and a sparse disk over 4 GiB with data written
past the 4 GiB mark. Then every bad input gets its one error line and the
shell keeps serving; reboot comes back; poweroff ends QEMU with exit 0; a
second boot reads llmk.cfg from the boot volume.

Ends with "N passed, N failed, N skipped" (results.py). Python standard library
only.
"""
import argparse
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qemu import BANNER, Llmk  # noqa: E402
from results import check, fail, ok, skip_data, summary, testdata  # noqa: E402

GIB = 1 << 30
SMP_ARCHES = {"x86_64", "aarch64"}  # where kernel/<arch> starts the other CPUs


def sha(data):
    return hashlib.sha256(data).hexdigest()


def make_disks(d):
    """Deterministic contents; returns [(path, bytes or None, size)]."""
    rnd = random.Random(1234)
    os.makedirs(d, exist_ok=True)
    disks = []
    for name, size in [("s3584", 3584), ("s1m", (1 << 20) + 1536),
                       ("s9m", 9 * (1 << 20) + 5 * 512), ("s70001", 70001)]:
        data = rnd.randbytes(size)
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(data)
        disks.append((path, data, size))
    # Sparse, 4 GiB + 1 MiB: 70000 bytes straddling 4 GiB and 65536 bytes
    # at an unaligned offset well past it.
    big = os.path.join(d, "big")
    size = 4 * GIB + (1 << 20)
    straddle = rnd.randbytes(70000)
    past = rnd.randbytes(65536)
    with open(big, "wb") as f:
        f.truncate(size)
        f.seek(4 * GIB - 3000)
        f.write(straddle)
        f.seek(4 * GIB + (512 << 10) + 100)
        f.write(past)
    disks.append((big, None, size))
    return disks, {"straddle": (4 * GIB - 3000, straddle), "past": (4 * GIB + (512 << 10) + 100, past)}


def hash_of(vm, args, timeout=300):
    out = vm.command("disks hash " + args, timeout)
    m = re.search(r"\b([0-9a-f]{64})\b", out)
    return (m.group(1) if m else None), out


def test_disks(vm, disks, extents):
    out = vm.command("disks")
    for i, (path, data, size) in enumerate(disks):
        cap = (size + 511) // 512 * 512
        check(f"disks: disk {i} capacity {cap} (file {size} bytes)",
              re.search(rf"^disk {i}: {cap} bytes\b", out, re.M), out)
    for i, (path, data, size) in enumerate(disks):
        if data is None:
            continue
        padded = data + bytes((-size) % 512)
        got, out = hash_of(vm, str(i))
        check(f"disks hash {i} ({size} bytes) = sha256", got == sha(padded), out)
        if size % 512:
            got, out = hash_of(vm, f"{i} 0 {size}")
            check(f"disks hash {i} 0 {size} = sha256 of the file", got == sha(data), out)
    s9 = disks[2][1]
    got, out = hash_of(vm, f"2 1000 {8 * (1 << 20) + 5}")
    check("disks hash range, unaligned, 8 MiB", got == sha(s9[1000:1000 + 8 * (1 << 20) + 5]), out)
    big = len(disks) - 1
    for name, (off, data) in extents.items():
        got, out = hash_of(vm, f"{big} {off} {len(data)}")
        check(f"disks hash of the data {name} 4 GiB (offset {off})", got == sha(data), out)
    got, out = hash_of(vm, f"{big} {4 * GIB - 3000 + 100} 1000")
    check("disks hash of a sub-range crossing into it", got == sha(extents["straddle"][1][100:1100]),
          out)


def uptime_s(vm):
    out = vm.command("uptime")
    m = re.match(r"up (\d+\.\d+) s", out)
    return float(m.group(1)) if m else None


def test_clock(vm):
    """The calibrated TSC keeps time with the host's clock (QEMU's virtual
    clock follows real time under TCG)."""
    a, t0 = uptime_s(vm), time.monotonic()
    time.sleep(3)
    b, t1 = uptime_s(vm), time.monotonic()
    # Loose enough for serial round trips on a loaded machine; a counter
    # calibrated 30% off still fails.
    ok_ = a is not None and b is not None and abs((b - a) - (t1 - t0)) < 1.0
    check("uptime advances with the wall clock", ok_, f"guest {a} -> {b}, host {t1 - t0:.2f} s")


def test_selftest(vm):
    """The engine's SIMD rows against its scalar rows, on this kernel: the
    vector state the arch set-up enabled really works."""
    out = vm.command("selftest", 600)
    check("selftest passes on bare metal", re.search(r"selftest: \d+ checks passed", out), out)


def test_bad_inputs(vm, ndisks):
    bad = [b"nosuch", b"disks hash", f"disks hash {ndisks + 3}".encode(), b"disks hash zero",
           b"disks hash 0 3000 1000", b"disks hash 0 4000", b"disks bench 99", b"version 1",
           b'infer "unterminated', b'x "bad \\q escape"', b"a" * 5000, b"lone\x1b escape",
           b"nul\x01byte", b"\xff"]
    for line in bad:
        shown = line[:40].decode("latin-1").encode("unicode_escape").decode()
        try:
            out = vm.command(line, 60)
            errs = [ln for ln in out.splitlines() if ln.startswith("error: ")]
            good = len(errs) == 1 and all(ln.startswith("error: ") for ln in out.splitlines() if ln)
            after = vm.command("uptime")
            check(f"bad input {shown!r}: one error line, then uptime works",
                  good and after.startswith("up "), out + after)
        except TimeoutError as e:
            fail(f"bad input {shown!r}", e)
            return
    vm.send(b"half a line\x03")
    try:
        vm.wait_prompt(30)
        out = vm.command("uptime")
        check("Ctrl-C cancels the line", out.startswith("up "), out)
    except TimeoutError as e:
        fail("Ctrl-C cancels the line", e)
    vm.send(b"garbage\x15uptime\n")
    try:
        out = vm.wait_prompt(30).decode("utf-8", "replace")
        check("Ctrl-U clears the line", "\nup " in out.replace("\r", ""), out)
    except TimeoutError as e:
        fail("Ctrl-U clears the line", e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="x86_64")
    ap.add_argument("--esp", required=True)
    ap.add_argument("--workdir", default="build/qemu-test")
    args = ap.parse_args()
    disks, extents = make_disks(args.workdir)
    # aarch64 (AAVMF under TCG) gets the disks session and the model boot
    # only: each further boot costs the firmware's start-up again, and
    # `make test` must fit in its hour.
    full = args.arch == "x86_64"
    t0 = time.monotonic()
    vm = Llmk(args.arch, args.esp, [d[0] for d in disks])
    try:
        banner = vm.boot(180).decode("utf-8", "replace")
        ok(f"boot to the llm> prompt ({time.monotonic() - t0:.1f} s wall)")
        bid = re.search(r"build ([0-9a-f]{16})", banner)
        out = vm.command("version")
        check("version names arch and build id",
              args.arch in out and bid and bid.group(1) in out, banner + out)
        if args.arch in SMP_ARCHES:
            check("version counts 2 CPUs under -smp 2 (APs started, kernel/smp.c)",
                  re.search(r"cpus\s+2\b", out) and "smp: 2 CPUs" in banner, banner + out)
        if args.arch == "x86_64":
            check("AVX2 and FMA usable (CR4.OSXSAVE, XCR0) under -cpu max",
                  re.search(r"features.*\bavx2\b.*\bfma\b", out), out)
        if args.arch == "aarch64":
            check("NEON and dotprod seen (ID_AA64PFR0/ISAR0) under -cpu max",
                  re.search(r"features.*\bneon\b.*\bdotprod\b", out), out)
        out = vm.command("uptime")
        print(f"     bench: {out.strip()}")
        test_clock(vm)
        test_selftest(vm)
        test_disks(vm, disks, extents)
        out = vm.command("disks bench 2", 300)
        print(f"     bench: {out.strip()}")
        test_bad_inputs(vm, len(disks))
        if full:
            vm.send("reboot\n")
            vm.expect(BANNER, 180)
            vm.wait_prompt(180)
            out = vm.command("disks")
            check("reboot comes back with the same disks", f"disk {len(disks) - 1}:" in out,
                  out)
        vm.send("poweroff\n")
        rc = vm.wait_exit(30)
        check("poweroff ends QEMU with exit 0", rc == 0, f"exit {rc}\n" + vm.output()[-500:])
    except TimeoutError as e:
        fail("session", e)
    finally:
        vm.close()
    if full:
        test_config(args)
        test_tpm(args)
        test_piped_run(args, disks[0][0])
        test_larger_than_memory(args)
    test_model(args)
    return summary()


def test_config(args):
    """A second boot: llmk.cfg on the boot volume, and one disk whose reads
    past 2 MiB fail in the host (QEMU blkdebug injects EIO): the device's
    error status must reach the shell as an error line, not as data."""
    esp = os.path.join(args.workdir, "esp-cfg.img")
    cfg = os.path.join(args.workdir, "llmk.cfg")
    shutil.copyfile(args.esp, esp)
    with open(cfg, "w") as f:
        f.write("# written by tests/qemu/test_boot.py\n")
    env = dict(os.environ, MTOOLS_SKIP_CHECK="1")
    subprocess.run(["mcopy", "-i", esp, cfg, "::/llmk.cfg"], check=True, env=env)
    disk = os.path.abspath(os.path.join(args.workdir, "eio.bin"))
    data = random.Random(99).randbytes(4 << 20)
    with open(disk, "wb") as f:
        f.write(data)
    rules = os.path.abspath(os.path.join(args.workdir, "eio.cfg"))
    with open(rules, "w") as f:
        f.write('[inject-error]\nevent = "read_aio"\nerrno = "5"\nsector = "4096"\nonce = "off"\n')
    vm = Llmk(args.arch, esp, [], extra=[
        "-drive", f"file=blkdebug:{rules}:{disk},format=raw,if=none,id=eio,readonly=on",
        "-device", "virtio-blk-pci,drive=eio,serial=eio"])
    try:
        banner = vm.boot(180).decode("utf-8", "replace")
        check("llmk.cfg is read from the boot volume", "llmk.cfg read" in banner, banner)
        got, out = hash_of(vm, "0 0 1048576")
        check("disk with failing sectors: good range hashes right", got == sha(data[:1 << 20]), out)
        out = vm.command("disks hash 0 2097152 4096")
        check("a device I/O error is one error line",
              out.startswith("error: ") and len(out.strip().splitlines()) == 1, out)
        out = vm.command("uptime")
        check("the shell keeps serving after a device error", out.startswith("up "), out)
        vm.send("poweroff\n")
        check("poweroff exits 0 (second boot)", vm.wait_exit(30) == 0, vm.output()[-300:])
    except TimeoutError as e:
        fail("boot with llmk.cfg and a failing disk", e)
    finally:
        vm.close()


def bench_tg(vm, threads):
    out = vm.command(f"bench -p 16 -n 16 -r 2 -t {threads}", 300)
    m = re.search(rf"\| {threads} \| tg16 \| ([0-9.]+) ", out)
    p = re.search(rf"\| {threads} \| pp16 \| ([0-9.]+) ", out)
    return (float(p.group(1)) if p else None), (float(m.group(1)) if m else None), out


def test_threads(vm, arch):
    """In the model boot (-smp 2): the application processors run the
    engine's kernels (SIMD included) as plat_parallel workers, and greedy
    tokens with 2 threads equal those with 1. The bench speedup is printed,
    not checked (TCG on a shared host: indicative only)."""
    if arch not in SMP_ARCHES:
        fail("threads", f"no application processor start-up on {arch}")
        return
    vm.command("load 0", 120)
    got = {}
    for t in (1, 2):
        vm.command(f"config threads {t}")
        out = vm.command('infer "Once upon a time" -n 40 --temp 0 --ids', 300)
        m = re.search(r"^ids:(.*)$", out, re.M)
        got[t] = (m.group(1).strip() if m else None, out)
    check("2 threads (BSP + AP) give the 1-thread tokens",
          got[1][0] and got[1][0] == got[2][0], f"{got[1][1]}\n{got[2][1]}")
    pp1, tg1, out1 = bench_tg(vm, 1)
    pp2, tg2, out2 = bench_tg(vm, 2)
    if check("bench runs with 1 and 2 threads", tg1 and tg2 and pp1 and pp2, out1 + out2):
        print(f"     bench: stories260K emulated, 2 vs 1 threads: pp16 {pp2:.2f} vs "
              f"{pp1:.2f} t/s ({pp2 / pp1:.2f}x), tg16 {tg2:.2f} vs {tg1:.2f} t/s "
              f"({tg2 / tg1:.2f}x)")
    vm.command("config threads 0")


def test_tpm(args):
    """With a vTPM (swtpm, TPM CRB) OVMF keeps a TCG2 event log; boot/ must
    find it before ExitBootServices and hand it over."""
    name = "TCG2 event log handed over with a vTPM"
    if not shutil.which("swtpm"):
        fail(name, "swtpm not installed (make deps installs it)")
        return
    state = os.path.abspath(os.path.join(args.workdir, "tpm"))
    shutil.rmtree(state, ignore_errors=True)
    os.makedirs(state)
    sock = os.path.join(state, "sock")
    tpm = subprocess.Popen(["swtpm", "socket", "--tpm2", "--tpmstate", f"dir={state}",
                            "--ctrl", f"type=unixio,path={sock}", "--terminate"])
    vm = None
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        else:
            fail(name, "swtpm did not start")
            return
        vm = Llmk(args.arch, args.esp, [], extra=[
            "-chardev", f"socket,id=chrtpm,path={sock}",
            "-tpmdev", "emulator,id=tpm0,chardev=chrtpm", "-device", "tpm-crb,tpmdev=tpm0"])
        banner = vm.boot(180).decode("utf-8", "replace")
        m = re.search(r"TCG2 event log (0x[0-9a-f]+)", banner)
        check(name, m and int(m.group(1), 16) != 0, banner)
        vm.send("poweroff\n")
        vm.wait_exit(30)
    except TimeoutError as e:
        fail(name, e)
    finally:
        if vm:
            vm.close()
        if tpm.poll() is None:
            tpm.kill()
        tpm.wait()


def test_model(args):
    """The tiny reference model, streamed off a virtio-blk disk through the
    async reads, writes the same text on bare metal as build/host/llmctl."""
    name = "streamed inference on bare metal = host llmctl"
    model = os.path.join(testdata(), "stories260K", "stories260K.gguf")
    llmctl = os.path.join("build", "host", "llmctl")
    if not os.path.isfile(model):
        skip_data(name, f"needs {model}")
        return
    if not os.path.isfile(llmctl):
        fail(name, f"needs {llmctl} (make {llmctl})")
        return
    cmds = ["load 0 --stream", 'infer "Once upon a time" -n 40 --seed 1']
    host = subprocess.run([llmctl, "--disk", model] + [a for c in cmds for a in ("-c", c)],
                          capture_output=True, timeout=120)
    want = host.stdout.decode("utf-8", "replace").strip().splitlines()[-1:]
    vm = Llmk(args.arch, args.esp, [model])
    try:
        vm.boot(180)
        vm.command(cmds[0], 120)
        got = vm.command(cmds[1], 300).strip().splitlines()[-1:]
        check(name, host.returncode == 0 and got == want and want, f"kernel {got}\nhost   {want}")
        test_stream_budget(vm)
        test_threads(vm, args.arch)
        vm.send("poweroff\n")
        vm.wait_exit(30)
    except TimeoutError as e:
        fail(name, e)
    finally:
        vm.close()


def test_stream_budget(vm):
    """Under a small mem-budget, `load --stream` gives the greedy ids of the
    resident weights, and the allocator's high-water mark stays in budget;
    every read is checked against the load's measurement (info, stats)."""
    name = "mem-budget 6M + load --stream: greedy ids = resident, peak within budget"
    infer = 'infer "Once upon a time" -n 24 --temp 0 --ids'
    vm.command("config mem-budget 6M", 30)
    load_s = vm.command("load --stream 0", 120)
    info = vm.command("info", 30)
    got = re.search(r"^ids:(.*)$", vm.command(infer, 300), re.M)
    stats = vm.command("stats", 30)
    check("streamed plain model: info and stats name the checks of every read",
          re.search(r"measured +SHA-256 as loaded; every read checked against it: \d+ blocks "
                    r"of 4 KiB, (ghash_\w+|sha256, no hardware entropy)", info) is not None and
          re.search(r"checking blocks [0-9.]+ ms", stats) is not None, f"{info}\n{stats}")
    vm.command("config mem-budget 0", 30)
    load_r = vm.command("load --resident 0", 120)
    want = re.search(r"^ids:(.*)$", vm.command(infer, 300), re.M)
    peak = re.search(r"memory +peak ([0-9.]+) (KiB|MiB) of 6.00 MiB", stats)
    peak_b = float(peak.group(1)) * (1024 if peak.group(2) == "KiB" else 1 << 20) if peak else 1e12
    check(name, "streaming" in load_s and "resident" in load_r and got and want and
          got.group(1) == want.group(1) and peak_b <= 6 << 20,
          f"{load_s}\n{load_r}\nstream {got and got.group(1)}\nresident {want and want.group(1)}\n{stats}")


def test_piped_run(args, disk):
    """`printf 'disks\\npoweroff\\n' | make run`: qemu.py's piped mode sends a
    line per prompt and returns QEMU's exit code; input that ends without
    poweroff stops QEMU and still exits 0."""
    runner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "qemu.py")
    base = [sys.executable, runner, "--arch", args.arch, "--esp", args.esp,
            "--boot-timeout", "180", "--command-timeout", "120", "run", disk]
    for name, text, want in [("piped run: disks, poweroff -> exit 0", b"disks\npoweroff\n", "disk 0:"),
                             ("piped run: end of input -> exit 0", b"uptime\n", "up ")]:
        try:
            p = subprocess.run(base, input=text, capture_output=True, timeout=300)
            out = p.stdout.decode("utf-8", "replace")
            check(name, p.returncode == 0 and want in out,
                  f"exit {p.returncode}\n{out[-800:]}\n{p.stderr.decode()[-400:]}")
        except subprocess.TimeoutExpired:
            fail(name, "timeout")
    # `make run </dev/null` on the default model: loads disk 0, answers the
    # prompt greedily (the reference continuation) and powers off with 0.
    name = "run with nothing on stdin: loads disk 0 and answers --prompt"
    model = os.path.join(testdata(), "stories260K", "stories260K.gguf")
    if not os.path.isfile(model):
        skip_data(name, f"needs {model}")
        return
    cmd = base[:-2] + ["run", "--prompt", "Once upon a time", model]
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
        out = p.stdout.decode("utf-8", "replace")
        check(name, p.returncode == 0 and "loaded disk 0" in out and
              ", there was a little girl named Lily" in out,
              f"exit {p.returncode}\n{out[-800:]}\n{p.stderr.decode()[-400:]}")
    except subprocess.TimeoutExpired:
        fail(name, "timeout")


def test_larger_than_memory(args):
    """No mem-budget set: a model larger than the guest's memory (a 268 MB F32
    model in a 256M guest) is planned against the free memory and streams,
    and gives the host's greedy ids."""
    name = "model larger than the guest, no mem-budget: streams, ids = host"
    mkmodel = os.path.join("build", "host", "mkmodel")
    llmctl = os.path.join("build", "host", "llmctl")
    model = os.path.join(args.workdir, "big-f32.gguf")
    if not os.path.exists(model):
        subprocess.run([mkmodel, "--type", "F32", "--layers", "4", "--dim", "1024", "--ffn", "4096",
                        "--heads", "8", "--kv-heads", "4", "-o", model + ".tmp"], check=True,
                       stdout=subprocess.DEVNULL)
        os.replace(model + ".tmp", model)
    infer = 'infer "Once upon" -n 2 --temp 0 --ids'
    host = subprocess.run([llmctl, "--disk", model, "-c", "load --resident 0", "-c", infer],
                          capture_output=True, timeout=300).stdout.decode("utf-8", "replace")
    want = re.search(r"^ids:(.*)$", host, re.M)
    with open(model, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    vm = Llmk(args.arch, args.esp, [model], mem="256M")
    try:
        vm.boot(180)
        load = vm.command("load 0", 120)
        info = vm.command("info", 30)
        out = vm.command(infer, 600)
        got = re.search(r"^ids:(.*)$", out, re.M)
        check(name, "streaming" in load and want and got and got.group(1) == want.group(1),
              f"{load}\n{out}\nhost: {host}")
        att = vm.command("attest --nonce 00", 120)
        check("the first pass measures the rest of a streamed model (beside the pass): "
              "attest's digest = the file's SHA-256",
              "bytes so far, the first pass the rest" in info and
              f"model        {digest} (loaded model, disk 0: SHA-256" in att, f"{info}\n{att}")
        vm.send("poweroff\n")
        vm.wait_exit(30)
    except TimeoutError as e:
        fail(name, e)
    finally:
        vm.close()
    os.remove(model)


if __name__ == "__main__":
    sys.exit(main())
