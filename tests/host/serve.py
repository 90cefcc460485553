#!/usr/bin/env python3
"""tests/host/serve.py - the OpenAI-compatible API end to end on the host.

Starts build/host/llmctl with stories260K and `serve --plain --port 0`
(127.0.0.1, the port it prints), then checks:

- /health, /v1/models, /tokenize, /detokenize and /metrics answer;
- greedy (temperature 0) chat and completion answers, whole and streamed
  as server-sent events, equal the shell's `chat` and `infer` output;
- errors are OpenAI error objects with their status (404, 405, 400 for
  malformed or truncated JSON and bad parameters);
- hostile input: a malformed request line, an oversized header, a huge
  Content-Length, a slow client holding a connection while another request
  succeeds, 200 connections opened and dropped, a request not whole in
  10 s: each gets one error or a closed connection, and the server keeps
  answering;
- commands typed while it serves run (a second serve is refused); at the
  end of its input the server stops and llmctl exits 0.

Usage: serve.py LLMCTL. Ends "N passed, N failed, N skipped".
"""
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qemu"))
from results import check, skip_data, summary, testdata  # noqa: E402

HOST = "127.0.0.1"


def llmctl_args(llmctl, model, cmds):
    """llmctl over the disk model, running cmds in turn."""
    args = [llmctl, "--disk", model]
    for c in cmds:
        args += ["-c", c]
    return args


def shell_output(llmctl, model, cmd, setup=("load 0",), timeout=60):
    """What the shell prints for one generation command after the setup
    commands (configuration, then a load), without the lines before the
    reply and the closing newline."""
    out = subprocess.run(llmctl_args(llmctl, model, (*setup, cmd)), stdin=subprocess.DEVNULL,
                         capture_output=True, timeout=timeout).stdout
    skip = 1 + (1 if cmd.startswith("chat") else 0)  # "loaded disk", "chat: template"
    return b"\n".join(out.split(b"\n")[skip:])[:-1].decode("utf-8", errors="replace")


def start_serve(llmctl, model, cmds, wait=30, env=None, tls=False):
    """llmctl over model running cmds (the last a serve on port 0), then
    its console (-i) on a pipe: the process, the port it says it serves on (attested
    TLS with tls; None if it said none in wait seconds) and what it printed
    until then."""
    srv = subprocess.Popen(llmctl_args(llmctl, model, cmds) + ["-i"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    want = r"serving on 127\.0\.0\.1:(\d+)" + (r" \(https" if tls else "")
    port, seen = None, ""
    deadline = time.time() + wait
    while time.time() < deadline:
        line = srv.stdout.readline().decode()
        seen += line
        m = re.search(want, line)
        if m:
            port = int(m.group(1))
            break
        if not line:
            break
    return srv, port, seen


def request(port, method, path, body=None, timeout=30):
    c = http.client.HTTPConnection(HOST, port, timeout=timeout)
    data = json.dumps(body) if isinstance(body, (dict, list)) else body
    c.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
    r = c.getresponse()
    text = r.read().decode()
    c.close()
    return r.status, r.getheader("Content-Type", ""), text


def raw(port, data, timeout=10):
    """Send bytes, read until the server closes (or timeout): the reply."""
    s = socket.create_connection((HOST, port), timeout=timeout)
    try:
        s.sendall(data)
        got = b""
        while True:
            try:
                k = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not k:
                break
            got += k
        return got
    finally:
        s.close()


def is_error(text, status):
    try:
        e = json.loads(text)["error"]
        return isinstance(e["message"], str) and e["code"] == status and "type" in e
    except Exception:
        return False


def sse_text(body):
    """The text of a streamed completion, whether it ended with [DONE],
    and the last finish_reason."""
    text, done, finish = "", False, None
    for ev in body.split("\n\n"):
        if not ev.startswith("data: "):
            continue
        d = ev[6:]
        if d == "[DONE]":
            done = True
            continue
        ch = json.loads(d)["choices"][0]
        text += ch.get("delta", {}).get("content", "") if "delta" in ch else ch.get("text", "")
        finish = ch.get("finish_reason") or finish
    return text, done, finish


def main():
    llmctl = sys.argv[1]
    model = os.path.join(testdata(), "stories260K", "stories260K.gguf")
    if not os.path.exists(model):
        skip_data("the API on the host", "no testdata (stories260K)")
        return summary()

    want_chat = shell_output(llmctl, model, 'chat "hello" --temp 0 -n 20')
    want_infer = shell_output(llmctl, model, 'infer "Once upon a time" --temp 0 -n 20')

    srv, port, seen = start_serve(llmctl, model, ["load 0", "serve --plain --port 0"])
    check("serve --plain --port 0 prints the port it listens on", port, seen)
    if not port:
        srv.kill()
        return summary()
    # the shell stays usable: lines typed while serving run between requests
    srv.stdin.write(b"version\nserve --plain --port 0\n")
    srv.stdin.flush()
    try:
        run(port, want_chat, want_infer)
    finally:
        srv.stdin.close()
        try:
            rest = srv.stdout.read().decode()
            rc = srv.wait(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
            rest, rc = "(killed)", -1
    check("a command typed while serving runs, a second serve is refused",
          "llmk " in rest and "error: serve: already serving" in rest, rest)
    check("the server stops at the end of its input and llmctl exits 0",
          rc == 0 and "serve: stopped" in rest, f"exit {rc}\n{rest}")
    # stdin that poll(2) calls readable forever and FIONREAD does not know
    # (/dev/null): its end stops the server too (it spun at 100% CPU before)
    try:
        r = subprocess.run([llmctl, "--disk", model, "-c", "serve --plain --port 0", "-i"],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        rc, rest = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        rc, rest = -1, "(still serving after 60 s)"
    check("with stdin /dev/null the server stops at once and llmctl exits 0",
          rc == 0 and "serve: stopped" in rest, f"exit {rc}\n{rest}")
    return summary()


def run(port, want_chat, want_infer):
    # a client that never finishes its request: answered 408 after 10 s
    lazy = socket.create_connection((HOST, port), timeout=30)
    lazy.sendall(b"GET /health HTTP/1.1\r\nX-Slow: ")
    lazy_t0 = time.time()
    st, ct, body = request(port, "GET", "/health")
    check("/health says ok", st == 200 and json.loads(body) == {"status": "ok"}, body)
    st, ct, body = request(port, "GET", "/v1/models")
    ok = st == 200 and json.loads(body)["object"] == "list" and json.loads(body)["data"][0]["object"] == "model"
    check("/v1/models lists the loaded model", ok, body)

    chat = {"messages": [{"role": "user", "content": "hello"}], "temperature": 0, "max_tokens": 20}
    st, ct, body = request(port, "POST", "/v1/chat/completions", chat)
    got = json.loads(body) if st == 200 else {}
    text = got.get("choices", [{}])[0].get("message", {}).get("content")
    check("a greedy chat completion equals the shell's chat reply", text == want_chat,
          f"{body}\nshell: {want_chat!r}")
    u = got.get("usage", {})
    check("the chat completion has usage and a finish reason",
          u.get("completion_tokens") == 20 and u.get("total_tokens") == u.get("prompt_tokens", 0) + 20
          and got["choices"][0]["finish_reason"] == "length" and got["object"] == "chat.completion", body)
    st, ct, body = request(port, "POST", "/v1/chat/completions", dict(chat, stream=True))
    text, done, finish = sse_text(body)
    check("a streamed chat completion sends the same text as events, then [DONE]",
          st == 200 and ct.startswith("text/event-stream") and text == want_chat and done and finish == "length",
          f"{st} {ct}\n{body[:2000]}")
    comp = {"prompt": "Once upon a time", "temperature": 0, "max_tokens": 20}
    st, ct, body = request(port, "POST", "/v1/completions", comp)
    text = json.loads(body)["choices"][0]["text"] if st == 200 else None
    check("a greedy completion equals the shell's infer output", text == want_infer,
          f"{body}\nshell: {want_infer!r}")
    st, ct, body = request(port, "POST", "/v1/completions", dict(comp, stream=True))
    text, done, _ = sse_text(body)
    check("a streamed completion sends the same text", text == want_infer and done, body[:2000])
    st, ct, body = request(port, "POST", "/v1/completions", dict(comp, stop=["little"]))
    text = json.loads(body)["choices"][0]["text"] if st == 200 else ""
    check("a stop string ends the completion before it", "little" not in text and
          want_infer.startswith(text) and json.loads(body)["choices"][0]["finish_reason"] == "stop", body)

    st, ct, body = request(port, "POST", "/tokenize", {"content": "Once upon a time"})
    toks = json.loads(body).get("tokens") if st == 200 else None
    check("/tokenize returns token ids", isinstance(toks, list) and len(toks) > 0, body)
    st, ct, body = request(port, "POST", "/detokenize", {"tokens": toks or []})
    check("/detokenize returns the text /tokenize read",
          st == 200 and json.loads(body)["content"].strip() == "Once upon a time", body)
    st, ct, body = request(port, "GET", "/metrics")
    m = re.search(r"^llmk_tokens_predicted_total (\d+)$", body, re.M)
    check("/metrics is Prometheus text counting the tokens generated",
          st == 200 and ct.startswith("text/plain") and m and int(m.group(1)) >= 80, body)

    # errors: OpenAI error objects with their status
    st, ct, body = request(port, "GET", "/nope")
    check("an unknown path is 404 with an error object", st == 404 and is_error(body, 404), body)
    st, ct, body = request(port, "GET", "/v1/chat/completions")
    check("a wrong method is 405", st == 405 and is_error(body, 405), body)
    st, ct, body = request(port, "POST", "/v1/attestation", {"nonce": "00"})
    st2, ct, body2 = request(port, "GET", "/v1/attestation/activate")
    check("attestation on plain HTTP is an unknown path (404; TLS only, docs/tls.md)",
          st == 404 and st2 == 404 and is_error(body, 404), body + body2)
    st, ct, body = request(port, "POST", "/v1/chat/completions", '{"messages": [{"role": "us')
    check("truncated JSON is 400 invalid_request_error",
          st == 400 and is_error(body, 400) and json.loads(body)["error"]["type"] == "invalid_request_error", body)
    st, ct, body = request(port, "POST", "/v1/chat/completions", dict(chat, n=2))
    check("n other than 1 is 400", st == 400 and is_error(body, 400), body)
    st, ct, body = request(port, "POST", "/v1/chat/completions", dict(chat, temperature="hot"))
    check("a bad parameter is 400", st == 400 and is_error(body, 400), body)
    st, ct, body = request(port, "POST", "/v1/chat/completions", {"messages": []})
    check("no messages is 400", st == 400 and is_error(body, 400), body)

    # keep-alive: several requests on one connection
    c = http.client.HTTPConnection(HOST, port, timeout=30)
    ok = True
    for _ in range(3):
        c.request("GET", "/health")
        r = c.getresponse()
        body = r.read()
        ok = ok and r.status == 200 and body.rstrip(b" ") == b'{"status":"ok"}'
    c.request("POST", "/v1/completions", body=json.dumps(comp))
    r = c.getresponse()
    ok = ok and r.status == 200 and json.loads(r.read())["choices"][0]["text"] == want_infer
    c.close()
    check("keep-alive carries several requests on one connection", ok)

    # hostile input
    got = raw(port, b"GARBAGE\r\n\r\n")
    check("a malformed request line gets one 400 and a close",
          got.startswith(b"HTTP/1.1 400 ") and got.count(b"HTTP/1.1") == 1, got[:300])
    got = raw(port, b"GET /health HTTP/1.1\r\nX-Big: " + b"a" * 10000 + b"\r\n\r\n")
    check("an oversized header gets 431", got.startswith(b"HTTP/1.1 431 "), got[:300])
    got = raw(port, b"POST /v1/completions HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n")
    check("a huge Content-Length gets 413", got.startswith(b"HTTP/1.1 413 "), got[:300])
    got = raw(port, b"POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    check("a chunked request body gets 501", got.startswith(b"HTTP/1.1 501 "), got[:300])
    slow = socket.create_connection((HOST, port), timeout=10)
    slow.sendall(b"POST /v1/completions HTTP/1.1\r\nContent-Le")
    time.sleep(0.3)
    st, ct, body = request(port, "POST", "/v1/completions", comp)
    slow.sendall(b"ngth: 100\r\n\r\n{\"pro")
    st2, ct2, body2 = request(port, "GET", "/health")
    check("a slow client holding a connection does not stop another request",
          st == 200 and json.loads(body)["choices"][0]["text"] == want_infer and st2 == 200, body)
    slow.close()
    t0 = time.time()
    socks = []
    for i in range(200):
        s = socket.create_connection((HOST, port), timeout=10)
        if i % 2:
            s.sendall(b"GET /hea")
        socks.append(s)
        if len(socks) >= 50:
            for x in socks:
                x.close()
            socks = []
    for x in socks:
        x.close()
    st, ct, body = request(port, "POST", "/v1/completions", comp)
    check("after 200 connections opened and dropped the server still answers",
          st == 200 and json.loads(body)["choices"][0]["text"] == want_infer and time.time() - t0 < 30, body)
    st, ct, body = request(port, "GET", "/metrics")
    m = re.search(r"^llmk_connections_total (\d+)$", body, re.M)
    check("/metrics counts the connections", m and int(m.group(1)) >= 200, body)
    time.sleep(max(0, lazy_t0 + 11 - time.time()))
    got = b""
    try:
        while True:
            k = lazy.recv(4096)
            if not k:
                break
            got += k
    except OSError:
        pass
    lazy.close()
    check("a request not whole in 10 s gets 408 and a close", got.startswith(b"HTTP/1.1 408 "), got[:300])


if __name__ == "__main__":
    sys.exit(main())
