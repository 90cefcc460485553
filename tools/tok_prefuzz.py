#!/usr/bin/env python3
"""Differential check of llm/tok_pre.c against llama.cpp's pre-tokenizer regexes.

Development aid (needs Python's third-party `regex` module, not a test stage):
    make build/host/tok_split && python3 tools/tok_prefuzz.py [SEED] [N]

Random strings over an alphabet of the characters the regexes care about are
split by build/host/tok_split and by the regexes (src/llama-vocab.cpp,
applied one after another, gaps kept, as unicode_regex_split does). Regexes
without \\p{..} see non-ASCII whitespace as U+000B, as in llama.cpp.
Prints the mismatches per pre-tokenizer; exit 1 if any.
"""
import random
import subprocess
import sys

import regex

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
L3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
      r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
TEKKEN = (r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|"
          r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}|"
          r" ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# enum tok_pre number -> regexes (deepseek-llm's long literal classes are
# checked by the vocabulary tests instead)
PRES = {
    0: [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"],
    1: [GPT2],
    2: [L3],
    3: [L3.replace(r"\p{N}{1,3}", r"\p{N}")],
    4: [r"[\p{P}\$\+<=>\^~\|`]+", GPT2, r"[0-9][0-9][0-9]"],
    5: [r"\p{N}", GPT2],
    7: [r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+", r"\p{N}"],
    8: [TEKKEN],
}
ALPHA = list("aaaHHWoZxS'sTtrREvVlLmMdD09 \t\n\r.,!?$+<=>^~|`_-()[]{}\"#%&*/:;@\\") + [
    "\u00a0", "\u3000", "\u00e9", "\u00c0", "\u00c9", "\u0301", "\u4f60", "\uac00",
    "\U0001F600", "\u0663", "\u00bd", "\u2581", "\u2028", "\u0916", "\u00b5", "\uff01",
    "\u2019", "\u200b", "\ufffd"]


def split(regs, s):
    chunks = [s]
    for p in regs:
        out = []
        for c in chunks:
            if "\\p{" not in p:
                c2 = "".join("\x0b" if ord(ch) > 0x7f and regex.match(r"\s", ch) else ch for ch in c)
            else:
                c2 = c
            pos = 0
            for m in regex.finditer(p, c2):
                if m.end() == m.start():
                    continue
                if m.start() > pos:
                    out.append(c[pos:m.start()])
                out.append(c[m.start():m.end()])
                pos = m.end()
            if pos < len(c):
                out.append(c[pos:])
        chunks = out
    return [len(w) for w in chunks]


def main():
    rnd = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    failed = 0
    for pre, regs in PRES.items():
        strs = ["".join(rnd.choice(ALPHA) for _ in range(rnd.randint(0, 20))) for _ in range(count)]
        inp = "".join(s.encode().hex() + "\n" for s in strs)
        res = subprocess.run(["build/host/tok_split", str(pre)], input=inp.encode(),
                             capture_output=True, check=True).stdout.decode().split("\n")
        bad = 0
        for s, line in zip(strs, res):
            want, got = split(regs, s), [int(x) for x in line.split()]
            if want != got:
                bad += 1
                if bad <= 3:
                    print("pre %d: %r: regex %s, tok_pre %s" % (pre, s, want, got))
        print("pre %d: %d strings, %d mismatches" % (pre, count, bad))
        failed += bad
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
