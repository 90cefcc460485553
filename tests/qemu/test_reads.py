#!/usr/bin/env python3
"""tests/qemu/test_reads.py - what the host sees of the disk (issue 27).

The host's own view: QEMU traces every virtio-blk read request the guest
makes (`-trace virtio_blk_handle_read`: the device, first sector, sector
count, in the order QEMU takes them off the queue). One boot with
stories260K plain and sealed; for each disk, streamed (`load --stream`),
two prompts of the same token count (8) and different tokens run 4
greedy tokens each from a fresh load, and the requests from the load to
the unload after must be the same, sector for sector. Ends with
"N passed, N failed, N skipped" (tests/qemu/results.py). Python standard
library only.
"""
import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from qemu import Llmk, running, seal_model  # noqa: E402
from results import check, skip_data, summary, testdata  # noqa: E402

PROMPTS = ("Tom saw a bird", "A big red ball")  # 8 tokens each (BOS included)
READ = re.compile(r"virtio_blk_handle_read .*?vdev (0x[0-9a-f]+).*?sector (\d+) nsectors (\d+)")


def requests(path, start):
    """The read requests traced in path from byte start: (device, sector, count)."""
    with open(path, "rb") as f:
        f.seek(start)
        text = f.read().decode("ascii", "replace")
    return [m.groups() for m in READ.finditer(text)]


def traced_run(vm, trace, disk, prompt):
    """load --stream disk, infer prompt, unload: the requests in between."""
    time.sleep(1)  # what an earlier command had in flight is taken off the queue
    mark = os.path.getsize(trace)
    out = vm.command(f"load --stream {disk}", 120)
    out += vm.command(f'infer "{prompt}" -n 4 --temp 0 --lookup 0', 300)
    out += vm.command("stats")
    out += vm.command("unload")
    time.sleep(1)
    return requests(trace, mark), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="x86_64")
    ap.add_argument("--esp", required=True)
    ap.add_argument("--seal", default="build/host/seal")
    ap.add_argument("--workdir", default="build/qemu-reads")
    args = ap.parse_args()
    model = os.path.join(testdata(), "stories260K", "stories260K.gguf")
    if not os.path.exists(model):
        skip_data("disk reads in QEMU", f"no {model}")
        return summary()
    # chunks of 4 KiB: the embedding rows (256 bytes) of different tokens
    # lie in different chunks
    key, sealed = seal_model(args.seal, model, args.workdir, "m.sealed", chunk_size=4096)
    trace = os.path.abspath(os.path.join(args.workdir, "trace.log"))
    if os.path.exists(trace):
        os.remove(trace)
    vm = Llmk(args.arch, args.esp, [model, sealed], mem="512M",
              extra=["-trace", f"enable=virtio_blk_handle_read,file={trace}"])
    with running(vm, "guest answered in time"):
        vm.boot(180)
        out = vm.command("unseal " + open(key).read().strip())
        check("unseal KEYHEX", "insecure development key" in out, out)
        for disk, what in ((0, "plain"), (1, "sealed")):
            (a, oa), (b, ob) = (traced_run(vm, trace, disk, p) for p in PROMPTS)
            tokens = [re.findall(r"prompt +(\d+) tokens", o) for o in (oa, ob)]
            check(f"streamed {what}: both prompts of 8 tokens, 4 generated",
                  tokens[0] == tokens[1] == ["8"] and oa.count("4 tokens in") == 1
                  and ob.count("4 tokens in") == 1, oa + ob)
            diff = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
            check(f"streamed {what}: the same read requests for either prompt "
                  f"({len(a)} and {len(b)})",
                  a and a == b, f"first difference at request {diff}: "
                  f"{a[diff] if diff is not None else ''} against "
                  f"{b[diff] if diff is not None else ''}")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
