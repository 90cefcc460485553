/*
 * llm/codec.h — the text forms of bytes: hex and base64 (RFC 4648 §4,
 * padded, canonical). One codec for the kernel, the engine, the shell and
 * the host tools; llm/codec.c calls nothing but memory, so any program links
 * it alone.
 *
 * The digit readers are inline and constant time (no branch or table index
 * on the character), so key material parses through them too.
 */
#ifndef LLM_CODEC_H
#define LLM_CODEC_H

#include "../kernel/platform.h"

/* All ones when lo <= c <= hi (c any 32-bit value), else 0; from sign bits. */
static inline uint32_t codec_in_range(uint32_t c, uint32_t lo, uint32_t hi)
{
	return 0u - ((((c - lo) | (hi - c)) >> 31) ^ 1u);
}

/* 0..15 for a hex digit of either case, else -1. */
static inline int hex_digit(int ch)
{
	uint32_t c = (uint32_t)ch;
	uint32_t d = codec_in_range(c, '0', '9'), u = codec_in_range(c, 'A', 'F'),
		 l = codec_in_range(c, 'a', 'f');
	uint32_t v = (d & (c - '0')) | (u & (c - 'A' + 10)) | (l & (c - 'a' + 10));

	return (int)(v | ~(d | u | l));
}

/* 0..63 for a base64 digit (A-Z a-z 0-9 + /), else -1 ('=' too). */
static inline int b64_digit(int ch)
{
	uint32_t c = (uint32_t)ch;
	uint32_t u = codec_in_range(c, 'A', 'Z'), l = codec_in_range(c, 'a', 'z'),
		 d = codec_in_range(c, '0', '9'), p = codec_in_range(c, '+', '+'),
		 s = codec_in_range(c, '/', '/');
	uint32_t v = (u & (c - 'A')) | (l & (c - 'a' + 26)) | (d & (c - '0' + 52)) | (p & 62) |
		     (s & 63);

	return (int)(v | ~(u | l | d | p | s));
}

/* Lower-case hex of src[0..n) and a NUL into dst (2n + 1 bytes); returns dst. */
char *hex_encode(const void *src, size_t n, char *dst);
/* Exactly n hex digits (n even) into dst[0..n/2): returns n/2; -LLMK_EFORMAT
 * for an odd n or a character that is not a hex digit (its index in *bad
 * when bad is not NULL), -LLMK_ERANGE when n/2 > cap. */
long hex_decode(const char *src, size_t n, uint8_t *dst, size_t cap, size_t *bad);

/* Base64 with padding and a NUL: returns the length written (without the
 * NUL), or -LLMK_ERANGE when cap < (n + 2) / 3 * 4 + 1. */
long b64_encode(const void *src, size_t n, char *dst, size_t cap);
/* Padded, canonical base64 src[0..n) (no white space): the bytes written, or
 * -LLMK_EFORMAT (length not a multiple of 4, a stray character or '=',
 * nonzero padding bits), -LLMK_ERANGE when the bytes do not fit cap. */
long b64_decode(const char *src, size_t n, uint8_t *dst, size_t cap);

#endif
