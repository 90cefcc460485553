#!/usr/bin/env python3
# tests/fuzz/jinja_seeds.py CASES.h OUTDIR [TEMPLATE_DIR] — fuzz_jinja's seed corpus:
# every template of tests/unit/jinja_llama_cases.h (llama.cpp's test cases) and,
# if given and present, the .jinja files of a directory (llama.cpp's
# models/templates), each behind the option byte fuzz_jinja reads.
import ast, os, re, sys

cases, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
text = open(cases, encoding="utf-8").read()
seeds = []
# each case's second literal is its template (the first its name)
for block in re.findall(r'^\{("(?:[^"\\]|\\.)*"),\n ("(?:[^"\\]|\\.)*"),', text, re.M):
    seeds.append(ast.literal_eval(block[1]).encode("utf-8"))
if len(sys.argv) > 3 and os.path.isdir(sys.argv[3]):
    for name in sorted(os.listdir(sys.argv[3])):
        if name.endswith(".jinja"):
            seeds.append(open(os.path.join(sys.argv[3], name), "rb").read())
for i, s in enumerate(seeds):
    with open(os.path.join(out, "seed-%03d" % i), "wb") as f:
        f.write(bytes([0xff if i % 2 else 0xfb]) + s[:65535])
print("%d seeds" % len(seeds))
