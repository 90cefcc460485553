#!/usr/bin/env python3
"""tests/qemu/test_infer.py - the engine inside the kernel: boot llmk.efi
with stories260K (F32 and F16) on virtio disks, `load` each and check that
`infer PROMPT -n 64 --temp 0 --ids` reproduces every reference continuation
of ../shared/testdata/stories260K/refs-*.jsonl token for token, as the host
build does (tests/unit/test_cmd_model.c).

Ends with "N passed, N failed, N skipped" (results.py). Python standard library
only.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qemu import Llmk  # noqa: E402
from results import check, skip_data, summary, testdata  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="x86_64")
    ap.add_argument("--esp", required=True)
    args = ap.parse_args()
    td = testdata()
    st = os.path.join(td, "stories260K")
    files = [("stories260K.gguf", "refs-F32.jsonl"), ("stories260K-F16.gguf", "refs-F16.jsonl")]
    if not all(os.path.exists(os.path.join(st, f)) for pair in files for f in pair):
        skip_data("infer in QEMU", f"no stories260K reference data in {td}")
        return summary()
    vm = Llmk(args.arch, args.esp, [os.path.join(st, g) for g, _ in files])
    try:
        vm.boot(300)
        vm.command("config threads 1")
        for disk, (gguf, refs) in enumerate(files):
            out = vm.command(f"load {disk}", 120)
            check(f"load {gguf}", "loaded disk" in out and "error" not in out, out)
            for line in open(os.path.join(st, refs)):
                ref = json.loads(line)
                want = " ".join(str(t) for t in ref["tokens"])
                prompt = ref["prompt"].replace("\\", "\\\\").replace('"', '\\"')
                out = vm.command(f'infer "{prompt}" -n 64 --temp 0 --ids', 600)
                m = re.search(r"^ids:(.*)$", out, re.M)
                got = m.group(1).strip() if m else None
                check(f"{gguf}: \"{ref['prompt']}\" continues as the reference", got == want,
                      f"want {want}\ngot  {got}\n{out}")
            print("     bench: " + " / ".join(s.strip() for s in vm.command("stats").splitlines()[:2]))
        vm.send("poweroff\n")
        check("poweroff", vm.wait_exit(30) == 0, vm.output()[-300:])
    except TimeoutError as e:
        check("session", False, e)
    finally:
        vm.close()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
