#!/usr/bin/env python3
"""tests/qemu/relay.py - the host in the middle of a confidential session.

A Relay listens on a unix socket for `llmctl --connect`, carries its bytes
to the guest's serial line and back (QEMU's chardev socket, or a host
llmctl's stdin and stdout), records every byte in both directions (what
the host sees), and can misbehave the way a hostile host would, one frame
at a time: change a character of the Nth frame either way, send the Nth
client frame twice, drop it, swap the `session open` client key for its
own, or answer with another guest's evidence. Frame lines (docs/session.md:
"~S2 " + base64) are held until their newline so they can be altered whole;
everything else passes as it comes.

Python standard library only.
"""
import os
import socket
import subprocess
import threading

PREFIX = b"~S2 "
B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def flip_char(line):
    """The frame line with one base64 character of its body changed."""
    b = bytearray(line)
    i = len(PREFIX) + 12          # inside the counter's bytes or just past
    b[i] = B64[(B64.index(b[i]) + 1) % 64]
    return bytes(b)


class Guest:
    """The guest's serial line: send(bytes), and a reader calling back."""

    def send(self, data):
        raise NotImplementedError

    def close(self):
        pass


class ProcessGuest(Guest):
    """A host llmctl playing the guest on its stdin and stdout."""

    def __init__(self, cmd, env=None):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, bufsize=0, env=env)

    def start(self, on_data):
        def run():
            while True:
                b = os.read(self.proc.stdout.fileno(), 65536)
                if not b:
                    on_data(None)
                    return
                on_data(b)
        threading.Thread(target=run, daemon=True).start()

    def send(self, data):
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def alive(self):
        return self.proc.poll() is None

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class SocketGuest(Guest):
    """QEMU's serial chardev, a unix socket QEMU serves."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)

    def start(self, on_data):
        def run():
            while True:
                try:
                    b = self.sock.recv(65536)
                except OSError:
                    b = b""
                if not b:
                    on_data(None)
                    return
                on_data(b)
        threading.Thread(target=run, daemon=True).start()

    def send(self, data):
        self.sock.sendall(data)

    def close(self):
        self.sock.close()


class Relay:
    """Listens on path; one client at a time, each bridged to the guest.

    Set `mode` before a client connects (it applies to that connection):
      None                   carry the bytes unchanged
      ("flip-g2c", n)        change a character of the guest's frame n (0-based)
      ("flip-c2g", n)        ... of the client's frame n
      ("replay-c2g", n)      send the client's frame n twice
      ("drop-c2g", n)        never deliver the client's frame n
      ("swap-key", keyhex)   replace the client key in `session open` with keyhex
      ("evidence", line)     answer with this session-evidence line instead of the guest's
      ("forge", fn)          answer with fn(nonce_hex, evidence_line) -> line: the guest's
                             evidence forged for the client's nonce (the relay's own key)
      ("inject-g2c", data)   first give the client these bytes as the guest's (the end
                             of a prompt: as if it connected while the guest printed it)
    `log` holds every byte the host carried, both ways."""

    def __init__(self, path, guest):
        self.path, self.guest = path, guest
        # the tampering the next client gets: taken (and cleared) when it
        # connects, so the end of one client's connection cannot race the
        # test setting up the next one
        self.mode = None
        self.active = None
        self.log = bytearray()
        self.g2c_log = bytearray()
        self.c2g_log = bytearray()
        self.lock = threading.Lock()
        self.client = None
        self.pend = {"g2c": b"", "c2g": b""}
        self.count = {"g2c": 0, "c2g": 0}
        self.guest_eof = False
        self.last_evidence = None
        self.client_nonce = None
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(4)
        guest.start(self._from_guest)
        threading.Thread(target=self._accept, daemon=True).start()

    # ---- the two directions ----
    def _lines(self, way, data):
        """Complete lines (and any bytes that cannot start a frame) ready to
        forward; an unfinished line that may be a frame is held."""
        buf = self.pend[way] + data
        out = []
        while buf:
            # the client ends `session open` with CR alone, as a terminal would
            ends = [i for i in (buf.find(b"\n"), buf.find(b"\r") if way == "c2g" else -1) if i >= 0]
            nl = min(ends) if ends else -1
            if nl < 0:
                # a frame, a command, or the evidence line: only ever whole
                if buf[:1] in (b"~", b"s"):
                    self.pend[way] = buf
                    return out
                out.append(buf)
                buf = b""
                break
            out.append(buf[:nl + 1])
            buf = buf[nl + 1:]
        self.pend[way] = b""
        return out

    def _alter(self, way, line):
        """What the host sends on for one line (a list: nothing, it, twice)."""
        m = self.active
        if way == "c2g" and line.startswith(b"session open ") and m and m[0] == "forge":
            parts = line.rstrip(b"\r\n").split(b" ")
            self.client_nonce = parts[parts.index(b"--nonce") + 1].decode()
        if way == "g2c" and line.startswith(b"session-evidence: ") and m and m[0] == "forge":
            self.last_evidence = line
            return [m[1](self.client_nonce, line)]
        if way == "c2g" and line.startswith(b"session open ") and m and m[0] == "swap-key":
            body = line.rstrip(b"\r\n")
            parts = body.split(b" ")
            i = parts.index(b"--client-key")
            parts[i + 1] = m[1].encode()
            return [b" ".join(parts) + line[len(body):]]
        if way == "g2c" and line.startswith(b"session-evidence: "):
            self.last_evidence = line
            if m and m[0] == "evidence":
                return [m[1]]
        if not line.startswith(PREFIX):
            return [line]
        n = self.count[way]
        self.count[way] += 1
        if not m or m[1] != n or not m[0].endswith(way):
            return [line]
        if m[0].startswith("flip"):
            return [flip_char(line.rstrip(b"\r\n")) + b"\n"]
        if m[0].startswith("replay"):
            return [line, line]
        if m[0].startswith("drop"):
            return []
        return [line]

    def _from_guest(self, data):
        if data is None:
            self.guest_eof = True
            with self.lock:
                if self.client:
                    try:
                        self.client.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
            return
        with self.lock:
            self.log += data
            self.g2c_log += data
            for line in self._lines("g2c", data):
                for piece in self._alter("g2c", line):
                    if self.client:
                        try:
                            self.client.sendall(piece)
                        except OSError:
                            pass

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            with self.lock:
                self.client = c
                self.active, self.mode = self.mode, None
                self.count = {"g2c": 0, "c2g": 0}
                self.pend = {"g2c": b"", "c2g": b""}
                if self.active and self.active[0] == "inject-g2c":
                    try:
                        c.sendall(self.active[1])
                    except OSError:
                        pass
            self._serve(c)
            with self.lock:
                self.client = None
                self.active = None
            c.close()

    def _serve(self, c):
        while True:
            try:
                data = c.recv(65536)
            except OSError:
                data = b""
            if not data:
                return
            with self.lock:
                self.log += data
                self.c2g_log += data
                pieces = [p for line in self._lines("c2g", data) for p in self._alter("c2g", line)]
            for p in pieces:
                self.guest.send(p)

    def close(self):
        self.srv.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        self.guest.close()
