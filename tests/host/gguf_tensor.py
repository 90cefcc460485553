#!/usr/bin/env python3
"""tests/host/gguf_tensor.py FILE NAME — print the absolute byte offset and
the first dimension of tensor NAME in a GGUF file (gguf.md: header, metadata,
tensor infos, data aligned to general.alignment, default 32). For tests that
damage one tensor's bytes on purpose. Standard library only."""
import struct
import sys


def main(path, want):
    b = open(path, 'rb').read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from('<' + fmt, b, pos)
        pos += struct.calcsize('<' + fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take('Q')
        s = b[pos:pos + n]
        pos += n
        return s

    sizes = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: 'B', 10: 'Q', 11: 'q', 12: 'd'}

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take('I'), take('Q')
            return [value(et) for _ in range(n)]
        return take(sizes[t])

    if b[:4] != b'GGUF':
        sys.exit('not a GGUF file')
    pos = 4
    take('I')
    n_tensors, n_kv = take('Q'), take('Q')
    align = 32
    for _ in range(n_kv):
        key = string()
        v = value(take('I'))
        if key == b'general.alignment':
            align = v
    found = None
    for _ in range(n_tensors):
        name = string()
        dims = [take('Q') for _ in range(take('I'))]
        take('I')
        off = take('Q')
        if name == want.encode():
            found = (off, dims[0])
    if found is None:
        sys.exit('no tensor ' + want)
    data = (pos + align - 1) // align * align
    print(data + found[0], found[1])


main(sys.argv[1], sys.argv[2])
