#!/usr/bin/env python3
"""tests/qemu/test_simd.py - the SIMD kernels inside the kernel: boot llmk.efi
with -smp 2 and stories260K on a virtio disk, then check that

  - `selftest` passes (every selected row against the scalar rows, on the
    emulated CPU: AVX2 under QEMU TCG x86_64, NEON with SDOT on aarch64),
  - `bench --kernels Q4_0` and the model `bench` run and say "(emulated)",
  - greedy output with `config threads 2` equals `config threads 1`.

Ends with "N passed, N failed, N skipped" (results.py). Python standard library
only.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qemu import Llmk  # noqa: E402
from results import check, skip_data, summary, testdata  # noqa: E402


def ids(vm, prompt):
    out = vm.command(f'infer "{prompt}" -n 48 --temp 0 --ids', 600)
    m = re.search(r"^ids:(.*)$", out, re.M)
    return (m.group(1).strip() if m else None), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="x86_64")
    ap.add_argument("--esp", required=True)
    args = ap.parse_args()
    td = testdata()
    model = os.path.join(td, "stories260K", "stories260K.gguf")
    disks = [model] if os.path.exists(model) else []
    vm = Llmk(args.arch, args.esp, disks, smp=2)
    try:
        vm.boot(300)
        out = vm.command("selftest", 600)
        print("     " + "\n     ".join(out.strip().splitlines()[-3:]))
        check("selftest passes on the emulated CPU",
              re.search(r"selftest: \d+ checks passed", out) and "error:" not in out, out)
        out = vm.command("bench --kernels Q4_0", 600)
        print("     " + "\n     ".join(out.strip().splitlines()))
        check("bench --kernels labelled emulated",
              "(emulated)" in out and re.search(r"\| Q4_0 ", out) and "error:" not in out, out)
        m = re.search(r"(\d+) threads;", out)
        cpus = int(m.group(1)) if m else 0
        if not disks:
            skip_data("model bench and threads", f"no stories260K in {td}")
        else:
            out = vm.command("load 0", 120)
            check("load stories260K", "loaded disk" in out, out)
            out = vm.command("bench -p 16 -n 16 -r 2", 600)
            print("     " + "\n     ".join(out.strip().splitlines()))
            check("model bench labelled emulated",
                  "(emulated)" in out and re.search(r"\| tg16 \| [0-9.]+ ± ", out), out)
            # QEMU has -smp 2: fewer CPUs means the other one did not start
            # (kernel/smp.c), a failure and no reason to skip
            if check("the kernel runs on the 2 CPUs of -smp 2", cpus == 2,
                     f"bench --kernels ran {cpus} threads"):
                vm.command("config threads 1")
                one, out1 = ids(vm, "Once upon a time")
                vm.command("config threads 2")
                two, out2 = ids(vm, "Once upon a time")
                check("2 threads give the 1-thread tokens", one is not None and one == two,
                      f"1: {one}\n2: {two}\n{out1}\n{out2}")
        vm.send("poweroff\n")
        check("poweroff", vm.wait_exit(30) == 0, vm.output()[-300:])
    except TimeoutError as e:
        check("session", False, e)
    finally:
        vm.close()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
