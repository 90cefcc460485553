#!/usr/bin/env python3
"""tests/host/grammar.py LLMCTL MKMODEL [TESTDATA] — a JSON schema end to end.

200 seeded runs of `infer ... --json-schema-file` on stories260K and 200
on a random-weight model (mkmodel): every output must parse with json and
validate against the schema (a validator of the keywords the schema uses,
written here). Then the refusals: a bad grammar, a bad schema and a
hostile grammar each give one error line, quickly. Ends with
"N passed, N failed, N skipped" (tests/lib.sh's summary).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 12},
        "age": {"type": "integer", "minimum": -5, "maximum": 150},
        "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"enum": ["red", "green", 7, None]},
                 "maxItems": 3},
        "where": {"$ref": "#/$defs/place"},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
    "$defs": {"place": {"type": "object",
                        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                        "required": ["x"]}},
}


def validate(v, s, root):
    """Whether v is valid against schema s (the keywords SCHEMA uses)."""
    if "$ref" in s:
        return validate(v, root["$defs"][s["$ref"].split("/")[-1]], root)
    if "enum" in s:
        return any(type(v) is type(e) and v == e for e in s["enum"])
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
        return (isinstance(v, str) and s.get("minLength", 0) <= len(v)
                <= s.get("maxLength", 1 << 30))
    if t == "integer":
        return (isinstance(v, int) and not isinstance(v, bool)
                and s.get("minimum", v) <= v <= s.get("maximum", v))
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t == "boolean":
        return isinstance(v, bool)
    if t == "array":
        return (isinstance(v, list) and len(v) <= s.get("maxItems", 1 << 30)
                and all(validate(x, s["items"], root) for x in v))
    return False


passed = failed = skipped = 0


def ok(what):
    global passed
    passed += 1
    print("ok   " + what)


def bad(what, why):
    global failed
    failed += 1
    print("FAIL " + what + ": " + why)


def run(llmctl, disk, cmds, timeout=60):
    args = [llmctl, "--disk", disk]
    for c in cmds:
        args += ["-c", c]
    return subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=timeout)


def seeded(llmctl, disk, name, schema_file, n):
    """n runs, seeds 1..n, one llmctl each: the reply is stdout after the load line."""
    bad_n = 0
    for seed in range(1, n + 1):
        p = run(llmctl, disk, ["load 0 -c 1024",
                               'infer "Once upon a time" -n 900 --seed %d --json-schema-file %s'
                               % (seed, schema_file)])
        text = p.stdout.decode("utf-8", "replace").split("\n", 1)[-1]
        if text.endswith("\n"):
            text = text[:-1]
        try:
            v = json.loads(text)
        except ValueError as e:
            bad_n += 1
            bad("%s seed %d parses" % (name, seed), "%s: %r" % (e, text[:200]))
            continue
        if not validate(v, SCHEMA, SCHEMA):
            bad_n += 1
            bad("%s seed %d validates" % (name, seed), repr(text[:200]))
    if not bad_n:
        ok("%s: %d seeded runs, every reply JSON valid against the schema" % (name, n))


def refusals(llmctl, disk, tmp):
    deep = os.path.join(tmp, "deep.gbnf")
    with open(deep, "w") as f:
        f.write("root ::= " + "(" * 5000 + '"a"' + ")" * 5000 + "\n")
    nested = os.path.join(tmp, "nested.json")
    with open(nested, "w") as f:
        f.write('{"items":' * 3000 + "{}" + "}" * 3000)
    cases = [
        ("a bad grammar", 'infer "x" --grammar "root ::= [a-"', "line 1, column"),
        ("left recursion", 'infer "x" --grammar "root ::= root \\"a\\" | \\"b\\""',
         "left recursion"),
        ("an empty language", 'infer "x" --grammar "root ::= \\"a\\" root"', "empty"),
        ("a huge repetition", 'infer "x" --grammar "root ::= \\"a\\"{9999999}"', "limit"),
        ("nested repetitions", 'infer "x" --grammar "root ::= ((((\\"a\\"{0,999}){0,999})'
         '{0,999}){0,999})"', "nested"),
        ("groups nested deep", 'infer "x" --grammar-file ' + deep, "nested deeper"),
        ("a schema nested deep", 'infer "x" --json-schema-file ' + nested, "deeper"),
        ("a schema with a bad $ref", 'infer "x" -j "{\\"$ref\\": \\"#/$defs/no\\"}"',
         "unresolved"),
    ]
    for what, cmd, want in cases:
        t0 = time.time()
        p = run(llmctl, disk, ["load 0", cmd])
        out = (p.stdout + p.stderr).decode("utf-8", "replace").splitlines()
        err = [l for l in out if l.startswith("error:")]
        dt = time.time() - t0
        if p.returncode != 0 and len(err) == 1 and want in err[0] and dt < 10:
            ok("%s: one error line (%s)" % (what, err[0]))
        else:
            bad(what, "rc %d, %.1f s, stderr %r" % (p.returncode, dt, err))


def main():
    llmctl, mkmodel = sys.argv[1], sys.argv[2]
    td = sys.argv[3] if len(sys.argv) > 3 else os.environ.get(
        "LLMK_TESTDATA", "../shared/testdata")
    global skipped
    with tempfile.TemporaryDirectory() as tmp:
        schema_file = os.path.join(tmp, "schema.json")
        with open(schema_file, "w") as f:
            json.dump(SCHEMA, f)
        rnd = os.path.join(tmp, "random.gguf")
        subprocess.run([mkmodel, "--layers", "2", "--dim", "64", "--ffn", "128", "--heads", "4",
                        "--kv-heads", "2", "--vocab", "512", "--type", "Q4_0", "-o", rnd],
                       check=True, capture_output=True)
        stories = os.path.join(td, "stories260K", "stories260K.gguf")
        if os.path.exists(stories):
            seeded(llmctl, stories, "stories260K", schema_file, 200)
        else:
            skipped += 1
            print("skip stories260K: no " + stories)
        seeded(llmctl, rnd, "random weights", schema_file, 200)
        refusals(llmctl, rnd, tmp)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
