#!/usr/bin/env python3
"""tests/qemu/test_tls_keys.py - a sealed model's key released over
attested TLS to a QEMU guest with a vTPM (docs/tls.md, "Releasing a sealed
model's key"), x86_64 or (--arch aarch64) aarch64.

One boot (OVMF with a fresh swtpm as tpm-crb, or AAVMF with it as
tpm-tis-device; virtio-net on QEMU's user network
with a hostfwd on 127.0.0.1, a sealed stories260K as the only disk) whose
llmk.cfg says `serve 8443`: the guest serves before its first prompt and
nobody types a command. Then, from the host:

- `verifier tls ... --expect-config llmk.cfg --expect-model D
  --release-key-file model.key --load`: the vtpm evidence (PCR4 as
  predicted, the EK certificate, the sealed disk's digest, the config), K,
  the credential activated, then the key sent and the disk loaded;
- a greedy chat over TLS equals the host llmctl's `chat` on the plain model;
- a second `verifier tls` still passes (the kernel log with the new
  `llmk key-release vtpm-tls ...` event replays PCR 23), and the evidence's
  kernel log holds that event once;
- `version` at the console says the key was released over attested TLS (vtpm).

Every wait is bounded. Ends with "N passed, N failed, N skipped".
"""
import argparse
import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import ssl
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qemu import BANNER, Llmk, esp_with, measure_pcr4, missing_tools, seal_model  # noqa: E402
from results import check, counts, fail, skip_data, summary  # noqa: E402
from test_proxy import free_port, shell_chat  # noqa: E402

GUEST_PORT = 8443
REC_TPM_LOG_KERNEL = 0x0109


def tls_call(port, path, body):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the content is checked here, not the peer
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=300)
    c.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    text = r.read().decode("utf-8", "replace")
    c.close()
    return r.status, text


def kernel_log(bundle):
    i = 8
    while i + 8 <= len(bundle):
        t, _flags, n = struct.unpack_from("<HHI", bundle, i)
        if t == REC_TPM_LOG_KERNEL:
            return bundle[i + 8:i + 8 + n]
        i += 8 + n
    return b""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="x86_64", choices=["x86_64", "aarch64"])
    ap.add_argument("--esp", required=True)
    ap.add_argument("--llmctl", required=True)
    ap.add_argument("--verifier", required=True)
    ap.add_argument("--seal", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    data = os.environ.get("LLMK_TESTDATA", "../shared/testdata")
    model = os.path.join(data, "stories260K", "stories260K.gguf")
    if not os.path.exists(model):
        skip_data("key release over attested TLS in QEMU", "no testdata (stories260K)")
        return summary()
    miss = missing_tools("swtpm", "swtpm_setup", "mcopy")
    if miss:
        counts["skipped"] += 1
        print(f"skip key release over attested TLS in QEMU: {', '.join(miss)} not found "
              "(Debian packages swtpm-tools, mtools)")
        return summary()
    w = os.path.abspath(args.workdir)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    pcr4, why = measure_pcr4(args.verifier, args.esp)
    if not pcr4:
        fail("verifier measure pcr4 of the image", why)
        return summary()
    key, sealed = seal_model(args.seal, model, w)
    cfg = os.path.join(w, "llmk.cfg")
    with open(cfg, "w") as f:
        f.write(f"serve {GUEST_PORT}\n")
    esp = esp_with(args.esp, os.path.join(w, "esp.img"), {"llmk.cfg": cfg})
    tpm = os.path.join(w, "tpm")
    digest = hashlib.sha256(open(model, "rb").read()).hexdigest()
    verify = ["--expect-pcr4", pcr4, "--ek-ca", os.path.join(tpm, "ek-ca.pem"),
              "--expect-model", digest, "--expect-config", cfg]
    want = shell_chat(args.llmctl, model, "hello", 16)
    port = free_port()
    target = f"127.0.0.1:{port}"
    extra = ["-netdev", f"user,id=n0,hostfwd=tcp:127.0.0.1:{port}-:{GUEST_PORT}",
             "-device", "virtio-net-pci,netdev=n0"]
    vm = Llmk(args.arch, esp, disks=[sealed], mem="512M", extra=extra, tpm=tpm)
    try:
        vm.expect(BANNER, 180)
        vm.expect(rb"serving on (\S+:)?(port )?%d" % GUEST_PORT, 120)
        check("llmk.cfg's serve 8443: the guest serves with no command typed", True)

        def vtls(*more):
            return subprocess.run([args.verifier, "tls", "--connect", target, "--timeout", "300",
                                   *verify, *more], capture_output=True, text=True, timeout=600)

        p = vtls("--release-key-file", key, "--load")
        check("verifier tls --release-key-file --load: vtpm evidence, the credential activated, "
              "then the key released and the disk loaded",
              p.returncode == 0 and "ok: activation: the guest opened the credential" in p.stdout
              and re.search(r"ok: release: key id [0-9a-f]{32} released for disk 0; the model is "
                            r"loaded", p.stdout), p.stdout + p.stderr)
        st, text = tls_call(port, "/v1/chat/completions",
                            {"messages": [{"role": "user", "content": "hello"}], "temperature": 0,
                             "max_tokens": 16})
        got = json.loads(text)["choices"][0]["message"]["content"] if st == 200 else None
        check("a greedy chat over TLS equals the host's chat on the plain model", got == want,
              f"{text[-400:]}\nshell: {want!r}")
        p = vtls("-v")
        check("a second verifier tls passes: the log with the release replays PCR 23",
              p.returncode == 0, p.stdout + p.stderr)
        st, text = tls_call(port, "/v1/attestation", {"nonce": "00" * 32})
        log = kernel_log(base64.b64decode(json.loads(text)["evidence"])) if st == 200 else b""
        ev = re.findall(rb"llmk key-release vtpm-tls key-id [0-9a-f]{32} release [0-9a-f]{64}", log)
        check("the kernel log holds the release once (llmk key-release vtpm-tls ...)",
              len(ev) == 1, log[-600:])
        vm.send(b"\x03")
        vm.wait_prompt(60)
        out = vm.command("version")
        check("version: the key was released over attested TLS (vtpm)",
              "released over attested TLS (vtpm), key id" in out, out)
    except TimeoutError as e:
        fail("key release over attested TLS in QEMU", e)
    finally:
        vm.close()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
