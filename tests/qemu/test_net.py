#!/usr/bin/env python3
"""tests/qemu/test_net.py - the network door's device half (issue 30).

One boot with a virtio-net device on QEMU's user network (slirp), its
hostfwd listening on 127.0.0.1 only: the kernel must report the device,
take slirp's DHCP lease (10.0.2.15), and its echo service (RFC 862, tcp
port 7 in the guest) must send back what a client on the host writes:
a short line, then 256 KiB of random bytes (many segments, windows
reopening as the guest reads), on two connections one after the other.
The shell keeps answering afterwards. Every wait is bounded. Ends with
"N passed, N failed, N skipped" (results.py). Python standard library only.
"""
import argparse
import os
import random
import re
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qemu import Llmk  # noqa: E402
from results import check, fail, summary  # noqa: E402

GUEST_PORT = 7


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def connect(port, deadline):
    """Connect through the hostfwd until the guest accepts (slirp accepts on
    the host side at once and resets when the guest does not answer)."""
    last = None
    while time.monotonic() < deadline:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        try:
            s.sendall(b"ping\n")
            got = b""
            while len(got) < 5:
                b = s.recv(64)
                if not b:
                    break
                got += b
            if got == b"ping\n":
                return s
            last = f"got {got!r}"
        except OSError as e:
            last = str(e)
        s.close()
        time.sleep(1)
    raise TimeoutError(f"no echo through 127.0.0.1:{port}: {last}")


def echo(s, data, timeout=60):
    s.settimeout(timeout)
    got = bytearray()
    sent = 0
    while len(got) < len(data):
        if sent < len(data):
            n = s.send(data[sent:sent + 16384])
            sent += n
        s.setblocking(False)
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    return bytes(got)
                got += b
        except BlockingIOError:
            pass
        s.settimeout(timeout)
        if sent >= len(data) and len(got) < len(data):
            b = s.recv(65536)
            if not b:
                break
            got += b
    return bytes(got)


def test_config(vm, port):
    """config net: a static address (slirp's hostfwd goes to 10.0.2.15, so
    the same one) serves the echo; a bad value is one error line; dhcp
    takes the lease again."""
    out = vm.command('config net "static 10.0.2.15/24 10.0.2.2"')
    check("config net static: the interface takes the address",
          "net: 10.0.2.15 netmask 255.255.255.0 gateway 10.0.2.2 (static)" in out, out)
    out = vm.command("config net")
    check("config net shows the static setting",
          "static 10.0.2.15/255.255.255.0 10.0.2.2" in out, out)
    try:
        with connect(port, time.monotonic() + 60) as s:
            data = b"static\n" * 1000
            check("config net static: the echo still answers", echo(s, data) == data)
    except (TimeoutError, OSError) as e:
        fail("config net static: the echo still answers", e)
    for bad in ("static 10.0.2.15 10.0.2.2", "static 10.0.2.256/24 10.0.2.2",
                "static 10.0.2.15/33 10.0.2.2", "dhcpx"):
        out = vm.command(f'config net "{bad}"')
        check(f"config net {bad!r}: one error line",
              out.count("error: config net: expected") == 1, out)
    vm.command("config net dhcp")
    try:
        vm.expect(rb"net: 10\.0\.2\.15 netmask 255\.255\.255\.0 gateway 10\.0\.2\.2 \(dhcp\)",
                  60)
        check("config net dhcp: the lease comes back", True)
    except TimeoutError as e:
        fail("config net dhcp: the lease comes back", e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="x86_64")
    ap.add_argument("--esp", required=True)
    args = ap.parse_args()
    port = free_port()
    extra = ["-netdev", f"user,id=n0,hostfwd=tcp:127.0.0.1:{port}-:{GUEST_PORT}",
             "-device", "virtio-net-pci,netdev=n0"]
    vm = Llmk(args.arch, args.esp, extra=extra)
    try:
        boot = vm.boot(timeout=300).decode("utf-8", "replace")
        check("net: the kernel starts the virtio-net device",
              re.search(r"net: virtio-net pci \S+, mac 52:54:00:", boot), boot)
        try:
            vm.expect(rb"net: 10\.0\.2\.15 netmask 255\.255\.255\.0 gateway 10\.0\.2\.2 \(dhcp\)",
                      60)
            check("net: DHCP gives slirp's lease 10.0.2.15/24 via 10.0.2.2", True)
        except TimeoutError as e:
            fail("net: DHCP gives slirp's lease 10.0.2.15/24 via 10.0.2.2", e)
        rnd = random.Random(30)
        big = rnd.randbytes(256 << 10)
        for i in range(2):
            try:
                s = connect(port, time.monotonic() + 60)
            except (TimeoutError, OSError) as e:
                fail(f"net: connection {i} echoes through hostfwd 127.0.0.1", e)
                continue
            with s:
                got = echo(s, big)
                check(f"net: connection {i} echoes 256 KiB back byte for byte",
                      got == big, f"got {len(got)} of {len(big)} bytes, "
                      f"equal prefix {len(os.path.commonprefix([got, big]))}")
        test_config(vm, port)
    except TimeoutError as e:
        fail("net: boot", e)
    finally:
        vm.close()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
