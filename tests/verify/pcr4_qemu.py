#!/usr/bin/env python3
"""tests/verify/pcr4_qemu.py - the PCR4 `verifier measure pcr4` predicts, against
the PCR4 a real TPM holds after OVMF booted the image.

  pcr4_qemu.py --esp build/x86_64/esp.img --efi build/x86_64/llmk.efi \
               --verifier build/host/verifier --workdir build/verify-pcr4

How: a fresh swtpm (no state: the TPM is manufactured on first start) serves
its control channel on a unix socket; QEMU (q35, OVMF, tpm-crb) boots the ESP
to llmk's `llm> ` prompt, so OVMF has measured the boot. QEMU is then killed
(SIGKILL: no shutdown message reaches swtpm, whose PCRs stay as they were).
This script then takes QEMU's place on the control socket (CMD_SET_DATAFD
hands swtpm one end of a socketpair, as QEMU does) and sends TPM2_PCR_Read
for PCR 4 of the SHA-256 bank. The image's kernel does not touch PCR 4.

Python standard library only. Ends with "N passed, N failed, N skipped".
"""
import argparse
import os
import shutil
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qemu"))
import qemu  # noqa: E402

CMD_SET_DATAFD = 16  # swtpm ioctl/control channel (swtpm's man page, ptm commands)


def pcr_read(ctrl_path, pcr):
    """TPM2_PCR_Read (Part 3 §22.4) of one SHA-256 PCR over swtpm's control socket."""
    ctrl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ctrl.settimeout(10)
    ctrl.connect(ctrl_path)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.settimeout(10)
    socket.send_fds(ctrl, [struct.pack(">I", CMD_SET_DATAFD)], [theirs.fileno()])
    res = ctrl.recv(4)
    if len(res) != 4 or struct.unpack(">I", res)[0] != 0:
        raise RuntimeError(f"swtpm CMD_SET_DATAFD answered {res.hex()}")
    theirs.close()
    sel = struct.pack(">IHB3s", 1, 0x000B, 3, bytes([1 << (pcr % 8) if i == pcr // 8 else 0
                                                     for i in range(3)]))
    body = struct.pack(">I", 0x0000017E) + sel
    ours.sendall(struct.pack(">HI", 0x8001, 6 + len(body)) + body)
    rsp = b""
    while len(rsp) < 10 or len(rsp) < struct.unpack(">I", rsp[2:6])[0]:
        chunk = ours.recv(4096)
        if not chunk:
            break
        rsp += chunk
    tag, size, rc = struct.unpack(">HII", rsp[:10])
    if rc != 0:
        raise RuntimeError(f"TPM2_PCR_Read: response code 0x{rc:x}")
    # pcrUpdateCounter, TPML_PCR_SELECTION (count, hash, sizeofSelect, bits), TPML_DIGEST
    off = 10 + 4
    count = struct.unpack(">I", rsp[off:off + 4])[0]
    off += 4
    for _ in range(count):
        off += 2
        off += 1 + rsp[off]
    ndig = struct.unpack(">I", rsp[off:off + 4])[0]
    off += 4
    if ndig != 1:
        raise RuntimeError(f"TPM2_PCR_Read: {ndig} digests (is the SHA-256 bank active?)")
    dlen = struct.unpack(">H", rsp[off:off + 2])[0]
    ours.close()
    ctrl.close()
    return rsp[off + 2:off + 2 + dlen]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--esp", required=True)
    ap.add_argument("--efi", required=True)
    ap.add_argument("--verifier", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--boot-timeout", type=int, default=240)
    a = ap.parse_args()

    passed = failed = skipped = 0
    for tool in ("swtpm", qemu.FIRMWARE["x86_64"]["qemu"]):
        if not shutil.which(tool):
            print(f"skip pcr4_in_qemu: {tool} is not installed (make deps)")
            print("0 passed, 0 failed, 1 skipped")
            return 0
    out = subprocess.run([a.verifier, "measure", "pcr4", a.efi], capture_output=True, text=True)
    lines = dict(l.split(": ", 1) for l in out.stdout.splitlines() if ": " in l)
    if out.returncode != 0 or "pcr4" not in lines:
        print(f"FAIL verifier measure pcr4: {out.stdout}{out.stderr}")
        print("0 passed, 1 failed, 0 skipped")
        return 1
    predicted = lines["pcr4"].strip()
    print(f"     verifier measure pcr4: authenticode {lines['authenticode-sha256'].strip()}")
    print(f"     predicted PCR4 {predicted}")

    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(os.path.join(a.workdir, "state"))
    ctrl_path = os.path.abspath(os.path.join(a.workdir, "ctrl.sock"))
    swtpm = subprocess.Popen(["swtpm", "socket", "--tpm2", "--tpmstate",
                              f"dir={os.path.abspath(os.path.join(a.workdir, 'state'))}",
                              "--ctrl", f"type=unixio,path={ctrl_path}",
                              "--log", f"file={os.path.abspath(os.path.join(a.workdir, 'swtpm.log'))}"])
    vm = None
    try:
        for _ in range(100):
            if os.path.exists(ctrl_path):
                break
            time.sleep(0.05)
        extra = ["-chardev", f"socket,id=chrtpm,path={ctrl_path}",
                 "-tpmdev", "emulator,id=tpm0,chardev=chrtpm", "-device", "tpm-crb,tpmdev=tpm0"]
        t0 = time.time()
        vm = qemu.Llmk("x86_64", a.esp, (), mem="1G", smp=1, extra=extra)
        vm.boot(a.boot_timeout)
        print(f"     booted to the prompt in {time.time() - t0:.1f} s")
        vm.close()  # SIGKILL: swtpm keeps its PCRs
        vm = None
        actual = pcr_read(ctrl_path, 4).hex()
        print(f"     swtpm PCR4     {actual}")
        if actual == predicted:
            print("ok   pcr4_in_qemu_equals_verifier_measure_pcr4")
            passed += 1
        else:
            print("FAIL pcr4_in_qemu_equals_verifier_measure_pcr4: the TPM's PCR4 differs")
            failed += 1
    except Exception as e:  # a boot or TPM failure is this test's failure, said in one line
        print(f"FAIL pcr4_in_qemu_equals_verifier_measure_pcr4: {type(e).__name__}: {e}")
        failed += 1
    finally:
        if vm:
            vm.close()
        swtpm.terminate()
        try:
            swtpm.wait(10)
        except subprocess.TimeoutExpired:
            swtpm.kill()
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
