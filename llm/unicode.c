/*
 * llm/unicode.c — UTF-8, code point classes, GPT-2 byte map.
 */
#include "unicode.h"

uint8_t uni_class(uint32_t cp)
{
	uint32_t lo = 0, hi = uni_n_ranges;

	if (cp > 0x10FFFF)
		return UNI_UNDEF;
	/* last run whose first code point is <= cp */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (uni_ranges[mid].first <= cp)
			lo = mid;
		else
			hi = mid;
	}
	return uni_ranges[lo].cls;
}

size_t uni_utf8_len(uint8_t lead)
{
	static const uint8_t len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
	return len[lead >> 4];
}

static bool cont(const char *s, size_t i)
{
	return ((uint8_t)s[i] & 0xc0) == 0x80;
}

/*
 * Same acceptance as llama.cpp's unicode_cpt_from_utf8 so that both split a
 * malformed string into the same code points: the lead byte picks the length,
 * every continuation byte must be 10xxxxxx and present, and nothing else is
 * checked. A bad sequence yields U+FFFD for its first byte only.
 */
uint32_t uni_utf8_decode(const char *s, size_t n, size_t *off)
{
	size_t i = *off;
	uint8_t b = (uint8_t)s[i];

	if (b < 0x80) {
		*off = i + 1;
		return b;
	}
	if ((b & 0xe0) == 0xc0 && i + 1 < n && cont(s, i + 1)) {
		*off = i + 2;
		return ((uint32_t)(b & 0x1f) << 6) | ((uint8_t)s[i + 1] & 0x3f);
	}
	if ((b & 0xf0) == 0xe0 && i + 2 < n && cont(s, i + 1) && cont(s, i + 2)) {
		*off = i + 3;
		return ((uint32_t)(b & 0x0f) << 12) | ((uint32_t)((uint8_t)s[i + 1] & 0x3f) << 6) |
		       ((uint8_t)s[i + 2] & 0x3f);
	}
	if ((b & 0xf8) == 0xf0 && i + 3 < n && cont(s, i + 1) && cont(s, i + 2) && cont(s, i + 3)) {
		*off = i + 4;
		return ((uint32_t)(b & 0x07) << 18) | ((uint32_t)((uint8_t)s[i + 1] & 0x3f) << 12) |
		       ((uint32_t)((uint8_t)s[i + 2] & 0x3f) << 6) | ((uint8_t)s[i + 3] & 0x3f);
	}
	*off = i + 1;
	return 0xFFFD;
}

size_t uni_utf8_encode(uint32_t cp, char *out)
{
	if (cp <= 0x7f) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp <= 0x7ff) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp <= 0xffff) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp <= 0x1fffff) {
		out[0] = (char)(0xf0 | (cp >> 18));
		out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[3] = (char)(0x80 | (cp & 0x3f));
		return 4;
	}
	return 0;
}

/*
 * bytes_to_unicode(): printable Latin-1 bytes ('!'..'~', 0xA1..0xAC,
 * 0xAE..0xFF) stand for themselves; the other 68 bytes, in order, map to
 * U+0100, U+0101, ...
 */
static bool gpt2_printable(uint32_t b)
{
	return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
}

uint32_t uni_byte_to_cp(uint8_t b)
{
	uint32_t n = 0;

	if (gpt2_printable(b))
		return b;
	for (uint32_t c = 0; c < b; c++)
		n += !gpt2_printable(c);
	return 256 + n;
}

int uni_cp_to_byte(uint32_t cp)
{
	uint32_t n = 0;

	if (cp < 256)
		return gpt2_printable(cp) ? (int)cp : -1;
	if (cp >= 256 + 68)
		return -1;
	for (uint32_t c = 0; c < 256; c++) {
		if (gpt2_printable(c))
			continue;
		if (n++ == cp - 256)
			return (int)c;
	}
	return -1;
}
