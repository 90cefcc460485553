#!/usr/bin/env python3
"""tests/fuzz/bpe_seeds.py DIR — tiny vocabulary-only GGUFs with a byte-level
BPE tokenizer (GPT-2 byte map, a few merges), one per pre-tokenizer, as fuzz
seeds: mkmodel writes only SentencePiece vocabularies."""
import struct
import sys


def gstr(x):
    b = x.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv_str(k, v):
    return gstr(k) + struct.pack("<I", 8) + gstr(v)


def kv_u32(k, v):
    return gstr(k) + struct.pack("<II", 4, v)


def kv_strs(k, arr):
    return gstr(k) + struct.pack("<IIQ", 9, 8, len(arr)) + b"".join(gstr(a) for a in arr)


def kv_i32s(k, arr):
    return gstr(k) + struct.pack("<IIQ", 9, 5, len(arr)) + b"".join(struct.pack("<i", a) for a in arr)


def byte_map():
    """GPT-2 bytes_to_unicode: printable bytes map to themselves, others above 255."""
    bs = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def main():
    out = sys.argv[1]
    merges = ["Ġ t", "h e", "Ġt he", "i n", "e r", "Ġ a", "o n", "r e", "Ġ w", "l l"]
    toks = byte_map() + [m.replace(" ", "") for m in merges] + ["<|endoftext|>"]
    types = [1] * (len(toks) - 1) + [3]
    eot = len(toks) - 1
    # the last: a pre-tokenizer name with control bytes, which an error
    # message must not copy (one line per error: fuzz_gguf's invariant)
    for pre in ["gpt2", "llama-bpe", "qwen2", "falcon", "starcoder", "deepseek-llm",
                "deepseek-coder", "default", "def\nault\x1b[2J"]:
        kvs = [kv_str("general.architecture", "llama"), kv_str("tokenizer.ggml.model", "gpt2"),
               kv_str("tokenizer.ggml.pre", pre), kv_strs("tokenizer.ggml.tokens", toks),
               kv_i32s("tokenizer.ggml.token_type", types),
               kv_strs("tokenizer.ggml.merges", merges),
               kv_u32("tokenizer.ggml.bos_token_id", eot), kv_u32("tokenizer.ggml.eos_token_id", eot)]
        data = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs)
        name = "".join(c if c.isalnum() or c == "-" else "_" for c in pre)
        with open("%s/seed-bpe-%s.gguf" % (out, name), "wb") as f:
            f.write(data)


main()
