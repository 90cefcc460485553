/*
 * llm/codec.c — hex and base64 (see codec.h).
 */
#include "codec.h"

char *hex_encode(const void *src, size_t n, char *dst)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *s = src;

	for (size_t i = 0; i < n; i++) {
		dst[2 * i] = digits[s[i] >> 4];
		dst[2 * i + 1] = digits[s[i] & 15];
	}
	dst[2 * n] = 0;
	return dst;
}

long hex_decode(const char *src, size_t n, uint8_t *dst, size_t cap, size_t *bad)
{
	for (size_t i = 0; i < n; i++) {
		if (hex_digit(src[i]) < 0) {
			if (bad)
				*bad = i;
			return -LLMK_EFORMAT;
		}
	}
	if (n % 2) {
		if (bad)
			*bad = n;
		return -LLMK_EFORMAT;
	}
	if (n / 2 > cap)
		return -LLMK_ERANGE;
	for (size_t i = 0; i < n / 2; i++)
		dst[i] = (uint8_t)(hex_digit(src[2 * i]) << 4 |
				   hex_digit(src[2 * i + 1]));
	return (long)(n / 2);
}

static const char b64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

long b64_encode(const void *src, size_t n, char *dst, size_t cap)
{
	const uint8_t *s = src;
	size_t o = 0;

	if (n > ((size_t)-1 - 3) / 4 * 3 || cap < (n + 2) / 3 * 4 + 1)
		return -LLMK_ERANGE;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		dst[o++] = b64_digits[v >> 18 & 63];
		dst[o++] = b64_digits[v >> 12 & 63];
		dst[o++] = i + 1 < n ? b64_digits[v >> 6 & 63] : '=';
		dst[o++] = i + 2 < n ? b64_digits[v & 63] : '=';
	}
	dst[o] = 0;
	return (long)o;
}

long b64_decode(const char *src, size_t n, uint8_t *dst, size_t cap)
{
	size_t o = 0;

	if (n % 4)
		return -LLMK_EFORMAT;
	for (size_t i = 0; i < n; i += 4) {
		int v[4], pad = 0;
		for (int j = 0; j < 4; j++) {
			char c = src[i + j];
			if (c == '=' && i + 4 == n && j >= 2) {
				v[j] = 0;
				pad++;
				continue;
			}
			if (pad) /* a character after '=' */
				return -LLMK_EFORMAT;
			if ((v[j] = b64_digit(c)) < 0)
				return -LLMK_EFORMAT;
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
			     (uint32_t)v[3];
		/* canonical: the bits padding drops are zero (RFC 4648 §3.5) */
		if ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff)))
			return -LLMK_EFORMAT;
		size_t k = 3 - (size_t)pad;
		if (cap - o < k)
			return -LLMK_ERANGE;
		for (size_t j = 0; j < k; j++)
			dst[o++] = (uint8_t)(w >> (16 - 8 * j));
	}
	return (long)o;
}
