#!/usr/bin/env python3
"""tests/qemu/qemu.py - boot llmk under QEMU and talk to it over the serial line.

One place builds the QEMU command line, for `make run` and for the tests:
  x86_64: -M q35 -cpu max, TCG (multi-threaded: a host thread per vCPU), OVMF (pflash code + a fresh copy of the vars),
          the FAT boot image on the q35 AHCI controller, each disk a
          virtio-blk-pci device (read-only, serial = the file's name).
Serial is the console (OVMF's and then the kernel's COM1).

`qemu.py run [--prompt TEXT] DISK...`: waits for the kernel's `llm> ` prompt
(the firmware reads the serial line while it boots and would eat, or act on,
anything sent before it). With a terminal on stdin: loads disk 0, answers
TEXT, then the terminal is raw and wired to the serial line (Ctrl-A x quits).
With stdin piped, commands are sent one line per prompt; at the end of the
input QEMU is stopped if the commands did not power it off. With nothing on
stdin at all, it loads disk 0, answers TEXT and powers off.

`--tpm DIR` attaches a vTPM: tools/tpm.sh manufactures a swtpm in DIR once
(EK certificates from its local CA) and starts it before each QEMU start;
QEMU reaches it through -tpmdev emulator (x86_64: -device tpm-crb, which the
kernel drives over CRB; aarch64: -device tpm-tis-device on virt's platform
bus, driven over the FIFO interface), and it ends with QEMU.

`--session LLMCTL --verifier VERIFIER` (with --tpm) makes `run` a
confidential session (docs/session.md): the serial line is a unix socket
QEMU serves, its raw output bytes logged to --serial-log; `verifier
measure pcr4` gives the image's PCR4 and `LLMCTL --connect` attaches with
it and the vTPM's EK CA, opens and verifies the session, and carries stdin
(or, with a terminal, the greeting and then the terminal; with nothing on
stdin, the greeting) and its exit status.

Python standard library only.
"""
import argparse
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402

PROMPT = b"llm> "
BANNER = rb"llmk \d+\.\d+\.\d+ \(git"  # the kernel's first line

FIRMWARE = {
    "x86_64": {
        "qemu": "qemu-system-x86_64",
        "code": ["/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_CODE.fd"],
        "vars": ["/usr/share/OVMF/OVMF_VARS_4M.fd", "/usr/share/OVMF/OVMF_VARS.fd"],
        "machine": ["-M", "q35", "-cpu", "max", "-accel", "tcg,thread=multi"],
        "esp": lambda img: ["-drive", f"file={img},format=raw,if=none,id=esp,snapshot=on",
                            "-device", "ide-hd,drive=esp,bus=ide.0,bootindex=0"],
    },
    # virt has no IDE: the boot image sits on virtio-scsi, which AAVMF boots
    # from and the kernel does not drive, so only the model disks are
    # virtio-blk (disk 0 is the first of them on both arches).
    "aarch64": {
        "qemu": "qemu-system-aarch64",
        "code": ["/usr/share/AAVMF/AAVMF_CODE.fd"],
        "vars": ["/usr/share/AAVMF/AAVMF_VARS.fd"],
        "machine": ["-M", "virt", "-cpu", "max", "-accel", "tcg,thread=multi"],
        "esp": lambda img: ["-drive", f"file={img},format=raw,if=none,id=esp,snapshot=on",
                            "-device", "virtio-scsi-pci,id=scsi0",
                            "-device", "scsi-hd,drive=esp,bus=scsi0.0,bootindex=0"],
    },
}


def first_existing(paths):
    for p in paths:
        if os.path.exists(p):
            return p
    raise FileNotFoundError("none of " + ", ".join(paths) + " (run `make deps`)")


TPM_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "tpm.sh")
TPM_DEVICE = {"x86_64": "tpm-crb", "aarch64": "tpm-tis-device"}


def start_tpm(tpm_dir):
    """swtpm for one QEMU run (tools/tpm.sh); returns its control socket."""
    subprocess.run([TPM_SH, "start", tpm_dir, "qemu"], check=True)
    return os.path.join(os.path.abspath(tpm_dir), "ctrl.sock")


def stop_tpm(tpm_dir):
    subprocess.run([TPM_SH, "stop", tpm_dir], check=False)


def qemu_command(arch, esp, disks, mem="2G", smp=2, workdir=None, interactive=False, extra=(),
                 tpm_sock=None, serial_sock=None, serial_log=None):
    fw = FIRMWARE[arch]
    code = first_existing(fw["code"])
    vars_copy = os.path.join(workdir, "vars.fd")
    shutil.copyfile(first_existing(fw["vars"]), vars_copy)
    cmd = [fw["qemu"], *fw["machine"], "-m", str(mem), "-smp", str(smp),
           "-drive", f"if=pflash,format=raw,unit=0,readonly=on,file={code}",
           "-drive", f"if=pflash,format=raw,unit=1,file={vars_copy}",
           *fw["esp"](esp), "-nic", "none", "-vga", "none", "-nographic"]
    if serial_sock:
        # the serial line on a unix socket QEMU serves (a session's client
        # attaches there), its raw output bytes also logged to a file
        log = f",logfile={serial_log},logappend=off" if serial_log else ""
        cmd += ["-chardev", f"socket,id=ser0,path={serial_sock},server=on,wait=off{log}",
                "-serial", "chardev:ser0", "-monitor", "none"]
    elif not interactive:
        cmd += ["-serial", "stdio", "-monitor", "none"]
    for i, d in enumerate(disks):
        # virtio-blk GET_ID returns at most 20 bytes.
        serial = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(d))[:20]
        cmd += ["-drive", f"file={d},format=raw,if=none,id=disk{i},readonly=on",
                "-device", f"virtio-blk-pci,drive=disk{i},serial={serial}"]
    if tpm_sock:
        cmd += ["-chardev", f"socket,id=chrtpm,path={tpm_sock}",
                "-tpmdev", "emulator,id=tpm0,chardev=chrtpm",
                "-device", f"{TPM_DEVICE[arch]},tpmdev=tpm0"]
    return cmd + list(extra)


class Llmk:
    """A running llmk: output collected by a reader thread, commands sent on
    stdin. Every wait has a deadline."""

    def __init__(self, arch, esp, disks=(), mem="2G", smp=2, echo=None, extra=(), tpm=None):
        self.workdir = tempfile.mkdtemp(prefix="llmk-qemu-")
        self.tpm = tpm
        self.qemu_args = (arch, esp, list(disks), mem, smp, extra)
        self.cond = threading.Condition()
        self.echo = echo
        self.restarts = 0
        self._start()

    def _start(self):
        arch, esp, disks, mem, smp, extra = self.qemu_args
        sock = start_tpm(self.tpm) if self.tpm else None
        self.cmd = qemu_command(arch, esp, disks, mem, smp, self.workdir, extra=extra,
                                tpm_sock=sock)
        self.out = bytearray()
        self.eof = False
        self.mark = 0
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, bufsize=0)
        self.reader = threading.Thread(target=self._read, args=(self.proc,), daemon=True)
        self.reader.start()

    def boot(self, timeout=180, firmware_timeout=120):
        """Wait for the kernel's first prompt; returns what came before it.

        AAVMF under TCG once stopped inside the firmware, before it loaded any
        boot image (CI: its clear-screens and then nothing for 180 s, where
        it usually takes seconds). A boot that shows no llmk banner within
        `firmware_timeout` is therefore restarted, once, and that is said on
        stdout. Once the banner is out, a missing prompt is llmk's and fails."""
        try:
            self.expect(BANNER, min(timeout, firmware_timeout))
        except TimeoutError:
            if self.eof or self.restarts:
                raise
            tail = bytes(self.out[-300:]).decode("utf-8", "replace").strip()
            print(f"     note: the firmware did not start llmk within {firmware_timeout}s "
                  f"(output ends {tail[-120:]!r}); QEMU restarted once", flush=True)
            self.restarts += 1
            self._stop()
            self._start()
            self.expect(BANNER, min(timeout, firmware_timeout))
        self.mark = 0
        return self.wait_prompt(timeout)

    def _read(self, proc):
        while True:
            b = proc.stdout.read1(65536) if hasattr(proc.stdout, "read1") \
                else os.read(proc.stdout.fileno(), 65536)
            with self.cond:
                if not b:
                    self.eof = True
                    self.cond.notify_all()
                    return
                self.out += b
                self.cond.notify_all()
            if self.echo:
                self.echo.write(b)
                self.echo.flush()

    def expect(self, pattern, timeout):
        """Wait for `pattern` (bytes regex) in the output after the mark;
        returns (text before it, match) and moves the mark past it."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                m = rx.search(self.out, self.mark)
                if m:
                    before = bytes(self.out[self.mark:m.start()])
                    self.mark = m.end()
                    return before, m
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    tail = bytes(self.out[max(self.mark, len(self.out) - 2000):])
                    why = "QEMU exited" if self.eof else f"timeout after {timeout}s"
                    raise TimeoutError(f"{why} waiting for {pattern!r}; output tail:\n"
                                       + tail.decode("utf-8", "replace"))
                self.cond.wait(min(left, 1.0))

    def send(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait_prompt(self, timeout=120):
        return self.expect(re.escape(PROMPT), timeout)[0]

    def command(self, line, timeout=60):
        """Send one command line and return what it printed before the next
        prompt, with the echoed command line removed and CRs dropped."""
        raw = line.encode() if isinstance(line, str) else line
        self.send(raw + b"\n")
        text = self.wait_prompt(timeout).replace(b"\r", b"")
        first, _, rest = text.partition(b"\n")
        return rest.decode("utf-8", "replace")

    def output(self):
        with self.cond:
            return bytes(self.out).decode("utf-8", "replace")

    def wait_exit(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def _stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(5)
        if self.tpm:
            stop_tpm(self.tpm)

    def close(self):
        self._stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


# ---- what the QEMU tests share (tests/qemu/test_*.py, tests/seal) ----

def ids(out):
    """The `--ids` lines of a command's output (str or bytes)."""
    mark = b"ids:" if isinstance(out, bytes) else "ids:"
    return [ln for ln in out.splitlines() if ln.startswith(mark)]


def seal_model(seal, model, workdir, name="model.sealed", chunk_size=None):
    """A new key (workdir/model.key) and model sealed with it (workdir/NAME)
    by the host's seal tool: returns (key file, sealed image)."""
    os.makedirs(workdir, exist_ok=True)
    key, sealed = os.path.join(workdir, "model.key"), os.path.join(workdir, name)
    if os.path.exists(key):
        os.remove(key)
    subprocess.run([seal, "keygen", key], check=True, stdout=subprocess.DEVNULL)
    chunk = ["--chunk-size", str(chunk_size)] if chunk_size else []
    subprocess.run([seal, "seal", *chunk, "--force", "--key-file", key, model, sealed],
                   check=True, stdout=subprocess.DEVNULL)
    return key, sealed


def esp_with(esp, out, files):
    """A copy of the boot image at `out` with files added to its root
    (files: {name on the ESP: host path}); returns out."""
    shutil.copyfile(esp, out)
    env = dict(os.environ, MTOOLS_SKIP_CHECK="1")
    for name, src in files.items():
        subprocess.run(["mcopy", "-o", "-i", out, src, "::/" + name], check=True, env=env)
    return out


def measure_pcr4(verifier, esp):
    """`verifier measure pcr4` of the llmk.efi beside esp: (hex or None,
    what the verifier printed)."""
    efi = os.path.join(os.path.dirname(os.path.abspath(esp)), "llmk.efi")
    p = subprocess.run([verifier, "measure", "pcr4", efi], capture_output=True, text=True)
    m = re.search(r"^pcr4: ([0-9a-f]{64})$", p.stdout, re.M)
    return (m.group(1) if m else None), p.stdout + p.stderr


def missing_tools(*tools):
    """The names in tools that are not on PATH."""
    return [t for t in tools if not shutil.which(t)]


@contextlib.contextmanager
def running(vm, what="QEMU answered in time"):
    """The body of a test against a booted Llmk: a TimeoutError in it fails
    the check `what` (results.py) with the output's tail; at the end the
    guest is powered off (if the body got through) and QEMU stopped."""
    try:
        yield vm
        vm.send(b"poweroff\n")
        vm.wait_exit(30)
    except TimeoutError as e:
        results.check(what, False, f"{e}\n{vm.output()[-2000:]}")
    finally:
        vm.close()


class SessionQemu:
    """llmk under QEMU with a vTPM and its serial line on a unix socket in
    workdir, reached through a Relay (relay.py) that `llmctl --connect`
    attaches to: .relay, .tpm (the swtpm's directory, its ek-ca.pem),
    .serial_log. close() stops the relay, QEMU and the swtpm."""

    def __init__(self, esp, disks, workdir, name="", arch="x86_64", mem="512M"):
        from relay import Relay, SocketGuest
        self.tpm = os.path.join(workdir, "tpm" + (f"-{name}" if name else ""))
        sfx = f"-{name}" if name else ""
        sock = os.path.join(workdir, f"serial{sfx}.sock")
        self.serial_log = os.path.join(workdir, f"serial{sfx}.log")
        cmd = qemu_command(arch, esp, disks, mem, 2, workdir, tpm_sock=start_tpm(self.tpm),
                           serial_sock=sock, serial_log=self.serial_log)
        self.relay = None
        self.qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        t0 = time.monotonic()
        while self.relay is None:   # QEMU's serial socket, once QEMU has made it
            try:
                self.relay = Relay(os.path.join(workdir, f"client{sfx}.sock"), SocketGuest(sock))
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() - t0 > 30 or self.qemu.poll() is not None:
                    self.close()
                    raise
                time.sleep(0.1)

    def booted(self, timeout=240):
        """Whether the kernel's prompt came out within timeout seconds."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if PROMPT in self.relay.g2c_log:
                return True
            time.sleep(0.2)
        return False

    def boot_tail(self):
        return bytes(self.relay.g2c_log[-600:]).decode("utf-8", "replace")

    def verify_args(self, pcr4):
        """llmctl --connect's checks for this guest: its image's PCR4 and the
        vTPM's EK CA."""
        return ["--expect-pcr4", pcr4, "--ek-ca", os.path.join(self.tpm, "ek-ca.pem")]

    def close(self):
        if self.relay:
            self.relay.close()
        if self.qemu.poll() is None:
            self.qemu.kill()
        self.qemu.wait()
        stop_tpm(self.tpm)



def greet(vm, prompt, timeout):
    """Load disk 0 and answer PROMPT on it (greedy, so a first run shows the
    model's own best continuation), as a first look at the model."""
    if not prompt:
        return
    out = vm.command("load 0", timeout)
    if "loaded disk" in out:
        quoted = prompt.replace("\\", "\\\\").replace('"', '\\"')
        vm.command(f'infer "{quoted}" -n 64 --temp 0', timeout)


def relay_terminal(vm):
    """The user's terminal, raw, wired to the serial line until QEMU exits
    or the user types Ctrl-A x (as QEMU's own -nographic console)."""
    import select
    import termios
    import tty
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    ctrl_a = False
    try:
        while vm.proc.poll() is None:
            r, _, _ = select.select([fd], [], [], 0.2)
            if not r:
                continue
            data = os.read(fd, 1024)
            if not data:
                break
            out = bytearray()
            for c in data:
                if ctrl_a:
                    ctrl_a = False
                    if c in (ord("x"), ord("X")):
                        return 0
                    if c != 1:
                        out.append(1)
                elif c == 1:
                    ctrl_a = True
                    continue
                out.append(c)
            vm.send(bytes(out))
        return vm.wait_exit(3) or 0
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        print(file=sys.stderr)


def run_session(args):
    """`run` over a confidential session: QEMU's serial line on a unix
    socket, llmctl --connect on it; the client's exit status."""
    if not args.tpm:
        sys.exit("qemu.py: --session needs --tpm (the session's evidence comes from the vTPM)")
    pcr4, said = measure_pcr4(args.verifier, args.esp)
    if not pcr4:
        sys.exit(f"qemu.py: {args.verifier} measure pcr4 (the llmk.efi beside {args.esp}): {said}")
    workdir = tempfile.mkdtemp(prefix="llmk-session-")
    sock = os.path.join(workdir, "serial.sock")
    tpm_sock = start_tpm(args.tpm)
    cmd = qemu_command(args.arch, args.esp, args.disks, args.mem, args.smp, workdir,
                       extra=shlex.split(args.qemu_args), tpm_sock=tpm_sock, serial_sock=sock,
                       serial_log=os.path.abspath(args.serial_log))
    qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    client = [args.session, "--connect", sock, "--expect-pcr4", pcr4, "--ek-ca",
              os.path.join(args.tpm, "ek-ca.pem"), "--boot-timeout", str(args.boot_timeout)]
    quoted = args.prompt.replace("\\", "\\\\").replace('"', '\\"')
    greeting = ["-c", "load 0", "-c", f'infer "{quoted}" -n 64 --temp 0'] \
        if args.prompt and args.disks else []
    print(f"llmk: QEMU with its serial line on {sock} (the guest's bytes logged to "
          f"{args.serial_log}); a confidential session to the image with PCR4 "
          f"{pcr4[:16]}...", file=sys.stderr)
    try:
        if sys.stdin.isatty():
            rc = subprocess.run(client + greeting + (["-i"] if greeting else [])).returncode
        else:
            data = sys.stdin.buffer.read()
            rc = subprocess.run(client + (greeting if not data.strip() else []),
                                input=data).returncode
        return rc
    finally:
        if qemu.poll() is None:
            qemu.kill()
        qemu.wait()
        stop_tpm(args.tpm)
        shutil.rmtree(workdir, ignore_errors=True)


def run(args):
    if args.session:
        return run_session(args)
    for d in args.disks:
        if not os.path.isfile(d):
            sys.exit(f"qemu.py: disk {d}: no such file")
    greeting = args.prompt if args.disks else ""
    if sys.stdin.isatty():
        print("llmk: QEMU with serial on this terminal; Ctrl-A x quits", file=sys.stderr)
    vm = Llmk(args.arch, args.esp, args.disks, args.mem, args.smp, echo=sys.stdout.buffer,
              extra=shlex.split(args.qemu_args), tpm=args.tpm)
    try:
        vm.boot(args.boot_timeout)
        if sys.stdin.isatty():
            # Answer the greeting first, then hand the console to the user.
            greet(vm, greeting, args.command_timeout)
            return relay_terminal(vm)
        sent = 0
        for line in sys.stdin.buffer:
            vm.send(line.rstrip(b"\r\n") + b"\n")
            sent += 1
            try:
                vm.wait_prompt(args.command_timeout)
            except TimeoutError:
                if vm.eof:
                    return vm.wait_exit(10) or 0
                raise
        if sent == 0:
            # Nothing on stdin (make run </dev/null, or from a script): answer
            # the greeting so a first run shows the model working.
            greet(vm, greeting, args.command_timeout)
            vm.send(b"poweroff\n")
        rc = vm.wait_exit(10 if sent == 0 else 3)
        if rc is None:
            print("\nllmk: end of input; stopping QEMU", file=sys.stderr)
            return 0
        return rc
    except TimeoutError as e:
        print(f"\nqemu.py: {e}", file=sys.stderr)
        return 1
    finally:
        vm.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="x86_64", choices=sorted(FIRMWARE))
    ap.add_argument("--esp", required=True, help="FAT boot image (make image)")
    ap.add_argument("--mem", default="2G")
    ap.add_argument("--smp", type=int, default=2)
    ap.add_argument("--qemu-args", default="", help="more QEMU arguments (one shell-quoted string)")
    ap.add_argument("--tpm", default=None, metavar="DIR",
                    help="attach a swtpm vTPM whose state lives in DIR (tools/tpm.sh)")
    ap.add_argument("--session", default=None, metavar="LLMCTL",
                    help="run over a confidential session: this llmctl --connects (needs --tpm)")
    ap.add_argument("--verifier", default="build/host/verifier",
                    help="with --session: computes the image's PCR4")
    ap.add_argument("--serial-log", default="build/serial.log",
                    help="with --session: the guest's raw serial bytes")
    ap.add_argument("--boot-timeout", type=float, default=300)
    ap.add_argument("--command-timeout", type=float, default=3600)
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run", help="boot and attach the console")
    r.add_argument("--prompt", default="",
                   help="with a terminal, or nothing on stdin: load disk 0 and answer this first")
    r.add_argument("disks", nargs="*")
    args = ap.parse_args()
    sys.exit(run(args))


if __name__ == "__main__":
    main()
