#!/usr/bin/env python3
"""tests/seal/test_qemu_seal.py - sealed models in the kernel, under QEMU.

One boot with three disks: the reference model sealed, the same model plain,
and the sealed image with one flipped byte in chunk 10. In the guest:
`unseal KEYHEX`, `disks` shows the seal, the sealed model's greedy ids equal
the plain model's, the damaged image is refused with one error line and the
kernel keeps serving, `unseal --verify` passes on the good image. A second
boot has the key file and `seal-key-file` in llmk.cfg on the boot volume
instead of `unseal`. Ends with
"N passed, N failed, N skipped" (tests/qemu/results.py). Python standard
library only.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "qemu"))
from qemu import Llmk, esp_with, ids, running, seal_model  # noqa: E402
from results import check, skip_data, summary, testdata  # noqa: E402

INFER = 'infer "Once upon a time" -n 30 --temp 0 --ids'


def make_images(seal, model, d):
    key, good = seal_model(seal, model, d)
    bad = os.path.join(d, "damaged.sealed")
    data = bytearray(open(good, "rb").read())
    data[4096 + 10 * 65536 + 1234] ^= 0x40  # chunk 10 (docs/sealed-format.md Layout)
    open(bad, "wb").write(data)
    return open(key).read().strip(), good, bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="x86_64")
    ap.add_argument("--esp", required=True)
    ap.add_argument("--seal", default="build/host/seal")
    ap.add_argument("--workdir", default="build/qemu-seal")
    args = ap.parse_args()
    model = os.path.join(testdata(), "stories260K", "stories260K.gguf")
    if not os.path.exists(model):
        skip_data("sealed model in QEMU", f"no {model}")
        return summary()
    key, good, bad = make_images(args.seal, model, args.workdir)
    vm = Llmk(args.arch, args.esp, [good, model, bad], mem="512M")
    with running(vm, "guest answered in time"):
        vm.boot(180)
        out = vm.command(f"unseal {key}")
        check("unseal KEYHEX", "insecure development key" in out, out)
        out = vm.command("disks", 120)
        check("disks shows the sealed image and the key matching",
              "sealed model image v1" in out and "key matches: GGUF v3 inside" in out, out)
        out = vm.command("load 0", 120) + vm.command("info") + vm.command(INFER, 300)
        sealed = ids(out)
        check("sealed model loads, info says sealed", "sealed         AES-256-GCM" in out, out)
        out = vm.command("load 1", 120) + vm.command(INFER, 300)
        plain = ids(out)
        check("sealed greedy ids equal the plain model's", sealed and sealed == plain,
              f"sealed {sealed}\nplain {plain}")
        out = vm.command("load 2", 120)
        errs = [ln for ln in out.splitlines() if ln.startswith("error: ")]
        check("damaged image: one error naming chunk 10",
              len(errs) == 1 and "chunk 10 " in errs[0], out)
        out = vm.command("uptime")
        check("the kernel keeps serving", out.startswith("up "), out)
        out = vm.command("unseal --verify 0", 300)
        check("unseal --verify on the good image", "chunks authenticate" in out, out)
    boot_with_key_file(args, good, model)
    return summary()


def boot_with_key_file(args, good, model):
    """The key from llmk.cfg's seal-key-file, read off the ESP at boot."""
    cfg = os.path.join(args.workdir, "llmk.cfg")
    with open(cfg, "w") as f:
        f.write("# written by tests/seal/test_qemu_seal.py\nseal-key-file model.key\n")
    esp = esp_with(args.esp, os.path.join(args.workdir, "esp-key.img"),
                   {"llmk.cfg": cfg, "model.key": os.path.join(args.workdir, "model.key")})
    vm = Llmk(args.arch, esp, [good], mem="512M")
    with running(vm, "guest answered in time (key file boot)"):
        vm.boot(180)
        out = vm.command("version")
        check("key file from llmk.cfg: version flags the development key",
              "model key insecure development key" in out and "model.key" in out, out)
        out = vm.command("load 0", 120) + vm.command(INFER, 300)
        check("key file from llmk.cfg: the sealed model answers", len(ids(out)) == 1, out)


if __name__ == "__main__":
    sys.exit(main())
