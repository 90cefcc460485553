#!/usr/bin/env python3
"""tests/qemu/test_proxy.py - attested TLS from a QEMU guest to `llmctl
proxy` (docs/tls.md), x86_64 or (--arch aarch64) aarch64.

One boot (OVMF or AAVMF, a fresh swtpm as tpm-crb on x86_64 or
tpm-tis-device on aarch64, a virtio-net device on QEMU's
user network with a hostfwd on 127.0.0.1, stories260K on a disk): the
guest runs `serve --port 8443`; `verifier tls` checks its evidence (PCR4
as `verifier measure pcr4` predicts, the EK certificate against the TPM's
CA, the model's digest, the key K of the TLS certificate) and the vTPM's
proof of the activated credential; `llmctl proxy` does the same and a
standard-library client chats through it, whole and streamed, and four
at once: greedy answers equal the host llmctl's `chat`, and so do the `openai` npm
package's (installed under build/npm-openai on demand; skipped, named,
without npm); another PCR4 is refused with one
error line. Every wait is bounded. Ends with "N passed, N failed, N skipped".
"""
import argparse
import hashlib
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qemu import Llmk  # noqa: E402
from results import check, counts, fail, skip_data, summary  # noqa: E402

GUEST_PORT = 8443


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def shell_chat(llmctl, model, prompt, n):
    out = subprocess.run([llmctl, "--disk", model, "-c", "load 0", "-c",
                          f'chat "{prompt}" --temp 0 -n {n}'], stdin=subprocess.DEVNULL,
                         capture_output=True, timeout=60).stdout.decode()
    return "\n".join(out.split("\n")[2:])[:-1]  # after "loaded disk", "chat: template"


def chat(port, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", "/v1/chat/completions", body=json.dumps(body),
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    text = r.read().decode("utf-8", "replace")
    c.close()
    if r.status != 200:
        return None, text
    if not body.get("stream"):
        return json.loads(text)["choices"][0]["message"]["content"], text
    out = ""
    for ev in text.split("\n\n"):
        if ev.startswith("data: ") and ev[6:] != "[DONE]":
            out += json.loads(ev[6:])["choices"][0].get("delta", {}).get("content", "")
    return (out if "data: [DONE]" in text else None), text


PROMPTS = ["Lily", "Tom had a ball", "the sun", "a big dog"]


def at_once(port, wants):
    """The python client: a streamed chat for each of PROMPTS, all at once
    (one thread each), through the proxy into the guest's batch."""
    res = [None] * len(PROMPTS)

    def one(i):
        body = {"messages": [{"role": "user", "content": PROMPTS[i]}], "temperature": 0,
                "max_tokens": 16, "stream": True}
        try:
            res[i] = chat(port, body)[0]
        except (OSError, ValueError) as e:
            res[i] = repr(e)
    ts = [threading.Thread(target=one, args=(i,)) for i in range(len(PROMPTS))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(300)
    check("four python clients at once, streamed: each equals the host's chat",
          res == wants and len(set(wants)) > 1, f"{res}\nshell: {wants}")


def openai_chat(port, want, wants):
    """The official openai npm package through the proxy, whole and streamed
    (tests/host/proxy_openai.mjs; installed under build/npm-openai on demand)."""
    name = "the openai npm package through the proxy"
    npm, node = shutil.which("npm"), shutil.which("node")
    if not npm or not node:
        counts["skipped"] += 1
        print(f"skip {name}: npm or node not found (the test needs npm to install `openai`)")
        return
    prefix = os.path.abspath(os.path.join("build", "npm-openai"))
    if not os.path.isdir(os.path.join(prefix, "node_modules", "openai")):
        r = subprocess.run([npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "openai@4"],
                           capture_output=True, timeout=300)
        if r.returncode != 0:
            counts["skipped"] += 1
            print(f"skip {name}: npm install openai failed: {r.stderr.decode()[-200:]}")
            return
    mjs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host", "proxy_openai.mjs")
    p = subprocess.run([node, mjs, prefix, f"http://127.0.0.1:{port}/v1", "16", json.dumps(PROMPTS)],
                       capture_output=True, timeout=300)
    out = p.stdout.decode()
    res = json.loads(out) if p.returncode == 0 and out.startswith("{") else {}
    check(f"{name}: whole and streamed, equal to the host's chat",
          res.get("whole") == want and res.get("streamed") == want, out + p.stderr.decode()[-800:])
    check(f"{name}: four streamed chats at once, each equal to the host's chat",
          res.get("at_once") == wants, f"{out}\nshell: {wants}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="x86_64", choices=["x86_64", "aarch64"])
    ap.add_argument("--esp", required=True)
    ap.add_argument("--llmctl", required=True)
    ap.add_argument("--verifier", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    data = os.environ.get("LLMK_TESTDATA", "../shared/testdata")
    model = os.path.join(data, "stories260K", "stories260K.gguf")
    if not os.path.exists(model):
        skip_data("attested TLS in QEMU", "no testdata (stories260K)")
        return summary()
    for tool in ("swtpm", "swtpm_setup"):
        if not shutil.which(tool):
            counts["skipped"] += 1
            print(f"skip attested TLS in QEMU: {tool} not found (Debian package swtpm-tools)")
            return summary()
    w = os.path.abspath(args.workdir)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    efi = os.path.join(os.path.dirname(args.esp), "llmk.efi")
    p = subprocess.run([args.verifier, "measure", "pcr4", efi], capture_output=True, text=True)
    m = re.search(r"^pcr4: ([0-9a-f]{64})$", p.stdout, re.M)
    if not m:
        fail("verifier measure pcr4 of the image", p.stdout + p.stderr)
        return summary()
    tpm = os.path.join(w, "tpm")
    digest = hashlib.sha256(open(model, "rb").read()).hexdigest()
    verify = ["--expect-pcr4", m.group(1), "--ek-ca", os.path.join(tpm, "ek-ca.pem"),
              "--expect-model", digest]
    want = shell_chat(args.llmctl, model, "hello", 16)
    wants = [shell_chat(args.llmctl, model, x, 16) for x in PROMPTS]
    port = free_port()
    extra = ["-netdev", f"user,id=n0,hostfwd=tcp:127.0.0.1:{port}-:{GUEST_PORT}",
             "-device", "virtio-net-pci,netdev=n0"]
    vm = Llmk(args.arch, args.esp, disks=[model], mem="512M", extra=extra, tpm=tpm)
    proxy = None
    try:
        vm.boot(timeout=300)
        vm.expect(rb"net: 10\.0\.2\.15 ", 60)
        out = vm.command("load 0", 120)
        check("the guest loads the model", "loaded disk 0" in out, out)
        vm.send(f"serve --port {GUEST_PORT}\n")
        vm.expect(rb"serving on (\S+:)?(port )?%d" % GUEST_PORT, 60)
        target = f"127.0.0.1:{port}"
        t0 = time.monotonic()
        p = subprocess.run([args.verifier, "tls", "--connect", target, "--timeout", "120", *verify],
                           capture_output=True, text=True, timeout=300)
        print(f"     note: verifier tls took {time.monotonic() - t0:.2f} s (TCG)", flush=True)
        check("verifier tls: the guest's vtpm evidence, its key and the activation proof",
              p.returncode == 0 and "vtpm evidence verified (PCR4 as expected), model" in p.stdout
              and "ok: activation: the guest opened the credential" in p.stdout,
              p.stdout + p.stderr)
        p = subprocess.run([args.verifier, "tls", "--connect", target, "--timeout", "120",
                            "--expect-pcr4", "11" * 32, *verify[2:]],
                           capture_output=True, text=True, timeout=300)
        errs = [ln for ln in p.stderr.splitlines() if ln.startswith("error: ")]
        check("verifier tls: another image's PCR4 refused with one error line",
              p.returncode == 1 and len(errs) == 1 and "PCR4" in errs[0], p.stderr)
        proxy = subprocess.Popen([args.llmctl, "proxy", "--connect", target, "--listen", "127.0.0.1:0",
                                  "--timeout", "120", *verify], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        line = proxy.stdout.readline()
        errlog = []
        threading.Thread(target=lambda: errlog.extend(proxy.stderr), daemon=True).start()
        m = re.search(r"serving http://127\.0\.0\.1:(\d+)", line)
        check("llmctl proxy attests the guest (vtpm, credential activated)", m is not None and
              "vtpm evidence verified" in line, line + "".join(errlog))
        if m:
            lp = int(m.group(1))
            body = {"messages": [{"role": "user", "content": "hello"}], "temperature": 0,
                    "max_tokens": 16}
            text, raw = chat(lp, body)
            check("through the proxy: a greedy chat equals the host's chat", text == want,
                  f"{raw[-400:]}\nshell: {want!r}")
            text, raw = chat(lp, dict(body, stream=True))
            check("through the proxy: the same chat streamed as events", text == want, raw[-400:])
            at_once(lp, wants)
            openai_chat(lp, want, wants)
            check("the proxy wrote no error", not [e for e in errlog if e.startswith("error:")],
                  "".join(errlog))
        vm.send(b"\x03")
        vm.wait_prompt(60)
        out = vm.command("version")
        check("the shell answers after serve", "llmk" in out, out)
    except TimeoutError as e:
        fail("attested TLS in QEMU", e)
    finally:
        if proxy:
            proxy.terminate()
            proxy.wait(10)
        vm.close()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
