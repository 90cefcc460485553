#!/usr/bin/env python3
"""tests/qemu/test_bounce.py - virtio-blk through the bounce buffers of a
confidential guest, on a machine that is not one.

In an SEV or TDX guest the device may only write shared pages, so
drivers/virtio_blk.c reads each request into a slot of a shared bounce
buffer and copies it out when it completes (docs/confidential-guest.md).
QEMU's TCG has no SEV or TDX, so mk/cc.mk builds a second image with
LLMK_TEST_DMA_BOUNCE, which takes that path everywhere (the pages are then
ordinary ones). This boots it with test_boot.py's disks of awkward sizes
and checks every `disks hash` against hashlib, then stories260K's first
reference continuation token for token.

Ends with "N passed, N failed, N skipped". Python standard library only.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_boot  # noqa: E402
from qemu import Llmk  # noqa: E402
from results import check, skip_data, summary  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--esp", required=True)
    ap.add_argument("--workdir", default="build/qemu-bounce")
    args = ap.parse_args()
    disks, extents = test_boot.make_disks(args.workdir)
    td = os.environ.get("LLMK_TESTDATA", "../shared/testdata")
    model = os.path.join(td, "stories260K", "stories260K.gguf")
    refs = os.path.join(td, "stories260K", "refs-F32.jsonl")
    have_model = os.path.exists(model) and os.path.exists(refs)
    paths = [d[0] for d in disks] + ([model] if have_model else [])
    vm = Llmk("x86_64", args.esp, paths)
    try:
        banner = vm.boot(180).decode("utf-8", "replace")
        check("the test build bounces DMA (cc: line)", "DMA is bounced on any machine" in banner,
              banner)
        check("each disk takes 16 requests in flight (the bounce slots)",
              len(re.findall(r"^disk \d+: .* 16 requests in flight", banner, re.M)) == len(paths),
              banner)
        test_boot.test_disks(vm, disks, extents)
        out = vm.command("disks bench 2", 300)
        print(f"     bench: {out.strip()}")
        if have_model:
            ref = json.loads(open(refs).readline())
            n = len(disks)
            out = vm.command(f"load {n}", 120)
            check("load stories260K through bounced reads", "loaded disk" in out, out)
            want = " ".join(str(t) for t in ref["tokens"])
            prompt = ref["prompt"].replace("\\", "\\\\").replace('"', '\\"')
            out = vm.command(f'infer "{prompt}" -n 64 --temp 0 --ids', 600)
            m = re.search(r"^ids:(.*)$", out, re.M)
            got = m.group(1).strip() if m else None
            check(f"\"{ref['prompt']}\" continues as the reference", got == want,
                  f"want {want}\ngot  {got}\n{out}")
        else:
            skip_data("the model through bounced reads", f"no stories260K in {td}")
        vm.send("poweroff\n")
        check("poweroff", vm.wait_exit(30) == 0, vm.output()[-300:])
    except TimeoutError as e:
        check("session", False, e)
    finally:
        vm.close()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
