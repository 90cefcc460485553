#!/usr/bin/env python3
"""tests/host/api_json.py LLMCTL MKMODEL [TESTDATA] - response_format and
tools through the HTTP API (docs/api.md) end to end.

For stories260K and a random-weight model (mkmodel), each served by
`llmctl serve --plain --port 0`:
- 200 seeded requests with response_format json_schema (chat and
  completions alternating) and 20 with json_object: every reply finishes
  "stop", parses with python3's json and validates against the schema (a
  validator of the keywords the schema uses, written here);
- a tool call round trip, chatml (Hermes/Qwen), llama3 and mistral-v3 formats:
  tools + tool_choice required -> tool_calls (id, type, name, arguments a
  JSON string valid against the tool's parameters), finish_reason
  "tool_calls" -> the assistant's call and a role "tool" result sent back
  -> a final answer; a named tool_choice, streamed;
- tool_choice auto (a lazy grammar: free until a call starts, docs/api.md):
  on the random-weight model with one token's text rewritten to
  "<tool_call>", another's to '{"name"' and a third's to "[{" (the calls'
  starts: chatml, llama3, mistral-v3), a greedy
  reply forced by logit_bias to open with that token is a whole, valid
  call (before, it was "<tool_call><tool_call>..." as content); 20 seeded
  replies with the token only made likely: whichever hold it are valid
  calls, none leaves one in the content;
- the same round trip on a random model whose own Jinja template (none
  of the built-in formats) writes the tools and calls;
- bad and hostile response_format, grammar and tools: 400 naming the
  param, within 5 s.
Ends "N passed, N failed, N skipped".
"""
import http.client
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

HOST = "127.0.0.1"
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 6},
        "n": {"type": "integer", "minimum": 0, "maximum": 99},
        "code": {"type": "string", "pattern": "^[A-Z]{2}-(\\d{2,3}|x)$"},
        "ok": {"type": "boolean"},
        "color": {"enum": ["red", "green", None]},
        "at": {"$ref": "#/$defs/pt"},
    },
    "required": ["name", "n", "code"],
    "additionalProperties": False,
    "$defs": {"pt": {"type": "object", "properties": {"x": {"type": "integer"}},
                     "required": ["x"], "additionalProperties": False}},
}
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city",
        "parameters": {"type": "object",
                       "properties": {"city": {"type": "string", "maxLength": 8},
                                      "days": {"type": "integer", "minimum": 1, "maximum": 7}},
                       "required": ["city"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "add", "parameters": {"type": "object",
                                      "properties": {"a": {"type": "integer", "maximum": 999},
                                                     "b": {"type": "integer", "maximum": 999}},
                                      "required": ["a", "b"], "additionalProperties": False}}},
]


def validate(v, s, root):
    """Whether v is valid against schema s (the keywords used here)."""
    if "$ref" in s:
        return validate(v, root["$defs"][s["$ref"].split("/")[-1]], root)
    if "enum" in s:
        return any(type(v) is type(e) and v == e for e in s["enum"])
    if "const" in s:
        return type(v) is type(s["const"]) and v == s["const"]
    t = s.get("type")
    if t == "object":
        if not isinstance(v, dict):
            return False
        props = s.get("properties", {})
        if any(k not in v for k in s.get("required", [])):
            return False
        if s.get("additionalProperties") is False and any(k not in props for k in v):
            return False
        return all(validate(v[k], props[k], root) for k in v if k in props)
    if t == "string":
        return (isinstance(v, str) and len(v) <= s.get("maxLength", 1 << 30)
                and re.search(s.get("pattern", ""), v) is not None)
    if t == "integer":
        return (isinstance(v, int) and not isinstance(v, bool)
                and s.get("minimum", v) <= v <= s.get("maximum", v))
    if t == "boolean":
        return isinstance(v, bool)
    return False


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qemu"))
from results import check, skip_data, summary  # noqa: E402


# a chat template of its own that writes tools and calls as Hermes does
JINJA_TMPL = ("{% if tools %}<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools>"
              "{% endif %}{% for m in messages %}<{{ m.role }}>{{ m.content }}"
              "{% for c in m.tool_calls or [] %}<tool_call>{{ c.function | tojson }}</tool_call>"
              "{% endfor %}{% if m.tool_call_id %}({{ m.tool_call_id }}){% endif %}"
              "</{{ m.role }}>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}")


def post(port, path, body, timeout=60):
    c = http.client.HTTPConnection(HOST, port, timeout=timeout)
    c.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    text = r.read().decode()
    c.close()
    return r.status, text


def serve(llmctl, disk, cmds):
    args = [llmctl, "--disk", disk]
    # one slot of the whole context: a prompt with the tools listed is ~1000
    # tokens, and its reply follows it
    for c in cmds + ["serve --plain --port 0 --slots 1"]:
        args += ["-c", c]
    srv = subprocess.Popen(args + ["-i"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    deadline = time.time() + 30
    while time.time() < deadline:
        line = srv.stdout.readline().decode()
        m = re.search(r"serving on 127\.0\.0\.1:(\d+)", line)
        if m:
            return srv, int(m.group(1))
        if not line:
            break
    srv.kill()
    return None, None


def reply_of(status, text, chat):
    """(the reply's text, finish_reason) of a 200, else (None, why)."""
    if status != 200:
        return None, "status %d %s" % (status, text[:300])
    ch = json.loads(text)["choices"][0]
    return (ch["message"]["content"] if chat else ch["text"]), ch["finish_reason"]


def seeded(port, name):
    bad_n = 0
    fmt = {"type": "json_schema", "json_schema": {"name": "item", "strict": True, "schema": SCHEMA}}
    t0 = time.time()
    for seed in range(1, 201):
        chat = seed % 2 == 0
        body = {"max_tokens": 200, "seed": seed, "response_format": fmt}
        if chat:
            body["messages"] = [{"role": "user", "content": "Describe an item."}]
        else:
            body["prompt"] = "Once upon a time"
        st, text = post(port, "/v1/chat/completions" if chat else "/v1/completions", body)
        out, fin = reply_of(st, text, chat)
        try:
            ok = out is not None and fin == "stop" and validate(json.loads(out), SCHEMA, SCHEMA)
        except ValueError:
            ok = False
        if not ok:
            bad_n += 1
            if bad_n <= 3:
                check("%s seed %d: valid JSON of the schema" % (name, seed), False,
                      "finish %r: %r" % (fin, out))
    check("%s: 200 seeded json_schema replies (%.1f s), each parses and validates" %
          (name, time.time() - t0), bad_n == 0, "%d bad" % bad_n)
    # any object: it may go on past max_tokens (a random model rarely closes
    # one), so what ended is an object and what was cut starts as one
    bad_n = ended = 0
    for seed in range(1, 21):
        st, text = post(port, "/v1/chat/completions", {
            "max_tokens": 100, "seed": seed, "response_format": {"type": "json_object"},
            "messages": [{"role": "user", "content": "hi"}]})
        out, fin = reply_of(st, text, True)
        try:
            ok = out is not None and out.startswith("{") and (
                fin == "length" or (fin == "stop" and isinstance(json.loads(out), dict)))
        except ValueError:
            ok = False
        bad_n += not ok
        ended += fin == "stop"
    check("%s: 20 json_object replies: %d ended, each a JSON object; the rest cut short "
          "inside one" % (name, ended), bad_n == 0, "%d bad" % bad_n)


def tool_ok(call, names):
    try:
        fn = call["function"]
        params = next(t["function"]["parameters"] for t in TOOLS if t["function"]["name"] == fn["name"])
        # ids are ours, or Mistral's 9 letters and digits as the model wrote them
        return (call["type"] == "function" and fn["name"] in names
                and (call["id"].startswith("call_") or re.fullmatch("[A-Za-z0-9]{9}", call["id"]))
                and isinstance(fn["arguments"], str)
                and validate(json.loads(fn["arguments"]), params, params))
    except (KeyError, StopIteration, ValueError, TypeError):
        return False


def round_trip(port, name):
    msgs = [{"role": "system", "content": "You call tools."},
            {"role": "user", "content": "What is the weather in Paris?"}]
    st, text = post(port, "/v1/chat/completions", {
        "messages": msgs, "tools": TOOLS, "tool_choice": "required", "max_tokens": 300, "seed": 3})
    ch = json.loads(text)["choices"][0] if st == 200 else {}
    calls = ch.get("message", {}).get("tool_calls") or []
    if not check("%s: tool_choice required -> tool_calls, finish_reason tool_calls" % name,
                 st == 200 and ch.get("finish_reason") == "tool_calls" and len(calls) == 1
                 and tool_ok(calls[0], ["get_weather", "add"]), text):
        return
    msgs += [{"role": "assistant", "content": None, "tool_calls": calls},
             {"role": "tool", "tool_call_id": calls[0]["id"], "content": "22 C, sunny"}]
    st, text = post(port, "/v1/chat/completions", {
        "messages": msgs, "tools": TOOLS, "tool_choice": "none", "max_tokens": 24, "seed": 4})
    out, fin = reply_of(st, text, True)
    check("%s: the call and its result sent back -> a final answer" % name,
          isinstance(out, str) and fin in ("stop", "length"), text)
    # a named function, streamed: the call arrives whole in one delta
    st, text = post(port, "/v1/chat/completions", {
        "messages": msgs[:2], "tools": TOOLS, "max_tokens": 300, "seed": 5, "stream": True,
        "tool_choice": {"type": "function", "function": {"name": "add"}}})
    calls, finish, done = [], None, False
    for ev in text.split("\n\n"):
        if ev == "data: [DONE]":
            done = True
        elif ev.startswith("data: "):
            c = json.loads(ev[6:])["choices"][0]
            calls += c.get("delta", {}).get("tool_calls", [])
            finish = c.get("finish_reason") or finish
    check("%s: a named tool_choice, streamed: one call of that function" % name,
          st == 200 and done and finish == "tool_calls" and len(calls) == 1
          and tool_ok(calls[0], ["add"]), text)


def gguf_retoken(src, dst, pieces):
    """src's GGUF to dst with tokenizer.ggml.tokens[id] = text for each
    (id, text) of pieces (gguf.md: the header rewritten, the tensor data
    after it as it was, at the next general.alignment)."""
    b = open(src, "rb").read()
    pos = 24
    sizes = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "B", 10: "Q", 11: "q",
             12: "d"}

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, b, pos)[0]
        pos += struct.calcsize("<" + fmt)
        return v

    def skip_value(t):
        nonlocal pos
        if t == 8:
            n = take("Q")
            pos += n
        elif t == 9:
            et, n = take("I"), take("Q")
            for _ in range(n):
                skip_value(et)
        else:
            pos += struct.calcsize("<" + sizes[t])

    n_tensors, n_kv = struct.unpack_from("<QQ", b, 8)
    out, align = [b[:24]], 32
    for _ in range(n_kv):
        start = pos
        n = take("Q")
        key = b[pos:pos + n]
        pos += n
        t = take("I")
        if key == b"tokenizer.ggml.tokens":
            et, n = take("I"), take("Q")
            toks = []
            for _ in range(n):
                k = take("Q")
                toks.append(b[pos:pos + k])
                pos += k
            for i, text in pieces:
                toks[i] = text.encode()
            out.append(b[start:start + 8 + len(key)] + struct.pack("<IIQ", t, et, n) +
                       b"".join(struct.pack("<Q", len(x)) + x for x in toks))
            continue
        if key == b"general.alignment":
            align = struct.unpack_from("<I", b, pos)[0]
        skip_value(t)
        out.append(b[start:pos])
    for _ in range(n_tensors):
        start = pos
        n = take("Q")
        pos += n
        n = take("I")
        pos += 8 * n + 12
        out.append(b[start:pos])
    head = b"".join(out)
    data = b[(pos + align - 1) // align * align:]
    with open(dst, "wb") as f:
        f.write(head + b"\0" * (-len(head) % align) + data)


def call_starts(port, name, tok, start):
    """tool_choice auto, the call's first token tok forced, then made likely."""
    msgs = [{"role": "user", "content": "What is the weather in Paris?"}]
    st, text = post(port, "/v1/chat/completions", {
        "messages": msgs, "tools": TOOLS, "max_tokens": 300, "temperature": 0,
        "logit_bias": {str(tok): 100}})
    ch = json.loads(text)["choices"][0] if st == 200 else {}
    calls = ch.get("message", {}).get("tool_calls") or []
    check("%s: auto, a reply forced to open a call (%r) -> a whole valid call" % (name, start),
          st == 200 and ch.get("finish_reason") == "tool_calls" and len(calls) >= 1
          and all(tool_ok(c, ["get_weather", "add"]) for c in calls)
          and not ch["message"].get("content"), text)
    bad_n, with_call, after_text, cut, n_calls = 0, 0, 0, 0, 0
    for seed in range(1, 21):
        st, text = post(port, "/v1/chat/completions", {
            "messages": msgs, "tools": TOOLS, "max_tokens": 200, "seed": seed,
            "temperature": 1.0, "logit_bias": {str(tok): 2}})
        try:
            ch = json.loads(text)["choices"][0]
            calls = ch["message"].get("tool_calls") or []
            content = ch["message"].get("content") or ""
            # a llama3 or mistral call is the whole reply: the same text later on is text
            broken = content.startswith(start) if start[0] in "{[" else start in content
            # (cut by max_tokens inside a call: what there is of it stays text)
            cut += broken and ch["finish_reason"] == "length"
            broken = broken and ch["finish_reason"] != "length"
            ok = (st == 200 and not broken and all(tool_ok(c, ["get_weather", "add"])
                                                   for c in calls)
                  and (not calls or ch["finish_reason"] == "tool_calls"))
            after_text += bool(calls) and bool(content)
        except (ValueError, KeyError, IndexError):
            ok, calls = False, []
        with_call += bool(calls)
        n_calls += len(calls)
        if not ok:
            bad_n += 1
            if bad_n <= 3:
                check("%s seed %d: auto, a started call is whole" % (name, seed), False, text)
    check("%s: auto, 20 seeded replies: %d opened a call (%d after text, %d calls), each "
          "whole and valid, no broken call left as content (%d cut by max_tokens)" %
          (name, with_call, after_text, n_calls, cut),
          bad_n == 0 and with_call > 0, "%d bad" % bad_n)


def refusals(port):
    base = {"messages": [{"role": "user", "content": "x"}], "max_tokens": 4}
    cases = [
        ({"response_format": {"type": "xml"}}, "response_format.type"),
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": {
            "type": "object", "properties": {"s": {"type": "string", "uniqueItems": True}}}}}},
         "response_format.json_schema.schema"),
        ({"tools": [{"type": "function", "function": {"name": "bad name"}}]},
         "tools[0].function.name"),
        ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "nope"}}},
         "tool_choice.function.name"),
        # hostile: a lookahead, repetitions that would unroll past the bound
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": {
            "type": "string", "pattern": "^(?=a)a$"}}}}, "response_format.json_schema.schema"),
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": {
            "type": "string", "pattern": "^((((a{0,999}){0,999}){0,999}){0,999})$"}}}},
         "response_format.json_schema.schema"),
        ({"grammar": "root ::= root \"a\" | \"b\""}, "grammar"),
    ]
    for extra, param in cases:
        t0 = time.time()
        st, text = post(port, "/v1/chat/completions", dict(base, **extra))
        if time.time() - t0 > 5:
            text += " (took %.1f s)" % (time.time() - t0)
            st = -1
        try:
            e = json.loads(text)["error"]
            good = st == 400 and e["param"] == param and e["type"] == "invalid_request_error"
        except (ValueError, KeyError):
            good = False
        check("400 naming %s" % param, good, "%d %s" % (st, text))


def main():
    llmctl, mkmodel = sys.argv[1], sys.argv[2]
    td = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("LLMK_TESTDATA", "../shared/testdata")
    with tempfile.TemporaryDirectory() as tmp:
        rnd = os.path.join(tmp, "random.gguf")
        subprocess.run([mkmodel, "--layers", "2", "--dim", "64", "--ffn", "128", "--heads", "4",
                        "--kv-heads", "2", "--vocab", "512", "--type", "Q4_0", "-o", rnd],
                       check=True, capture_output=True)
        # the random model's last two pieces become the calls' first tokens
        starts = os.path.join(tmp, "starts.gguf")
        gguf_retoken(rnd, starts, [(509, "[{"), (510, "<tool_call>"), (511, '{"name"')])
        models = [("random weights", rnd)]
        stories = os.path.join(td, "stories260K", "stories260K.gguf")
        if os.path.exists(stories):
            models.insert(0, ("stories260K", stories))
        else:
            skip_data("stories260K", "no " + stories)
        for name, disk in models:
            for tmpl in ("chatml", "llama3", "mistral-v3"):
                srv, port = serve(llmctl, disk, ["config chat-template " + tmpl, "load 0 -c 2048"])
                if not check("%s (%s): serving" % (name, tmpl), port):
                    continue
                try:
                    if tmpl == "chatml":
                        seeded(port, name)
                        refusals(port)
                    round_trip(port, "%s, %s" % (name, tmpl))
                finally:
                    srv.stdin.close()
                    try:
                        srv.wait(timeout=20)
                    except subprocess.TimeoutExpired:
                        srv.kill()
        for tmpl, tok, start in (("chatml", 510, "<tool_call>"), ("llama3", 511, '{"name"'),
                                 ("mistral-v3", 509, "[{")):
            srv, port = serve(llmctl, starts, ["config chat-template " + tmpl, "load 0 -c 2048"])
            if not check("call starts (%s): serving" % tmpl, port):
                continue
            try:
                call_starts(port, "random weights, %s" % tmpl, tok, start)
            finally:
                srv.stdin.close()
                try:
                    srv.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    srv.kill()
        # a template none of the built-in formats knows: run as itself, it
        # is given the tools, the calls and the results (Hermes' form)
        jin = os.path.join(tmp, "jinja.gguf")
        subprocess.run([mkmodel, "--layers", "2", "--dim", "64", "--ffn", "128", "--heads", "4",
                        "--kv-heads", "2", "--vocab", "512", "--type", "Q4_0",
                        "--chat-template", JINJA_TMPL, "-o", jin], check=True, capture_output=True)
        srv, port = serve(llmctl, jin, ["load 0 -c 2048"])
        if check("random weights (its own jinja template): serving", port):
            try:
                round_trip(port, "random weights, its own jinja template")
            finally:
                srv.stdin.close()
                try:
                    srv.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    srv.kill()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
