/*
 * shell/args.c — split a command line into words.
 *
 * A word is a run of non-blank bytes and double-quoted strings, joined when
 * adjacent (a"b c" is the one word `ab c`, "" is an empty word). Inside
 * quotes the escapes \n \t \r \\ \" and \xHH (two hex digits, not 00) stand
 * for their byte, so any prompt fits on one line; outside quotes a backslash
 * is an ordinary byte (Windows-style paths and regexes stay as typed).
 *
 * Numbers in words: shell_parse_u64/i64/f64 (no printing; shell.c's
 * shell_arg_* print the message).
 */
#include "shell.h"

/* The value of digit c in base (up to 16), or -1. */
static int digit_val(char c, unsigned base)
{
	unsigned v;
	if (c >= '0' && c <= '9')
		v = (unsigned)(c - '0');
	else if (c >= 'a' && c <= 'f')
		v = (unsigned)(c - 'a' + 10);
	else if (c >= 'A' && c <= 'F')
		v = (unsigned)(c - 'A' + 10);
	else
		return -1;
	return v < base ? (int)v : -1;
}

/* One escape at s (just after the backslash) into *out; returns bytes
 * consumed or -1 with err set. col is the backslash's column. */
static int escape(const char *s, char *out, size_t col, char *err, size_t errlen)
{
	switch (*s) {
	case 'n': *out = '\n'; return 1;
	case 't': *out = '\t'; return 1;
	case 'r': *out = '\r'; return 1;
	case '\\': *out = '\\'; return 1;
	case '"': *out = '"'; return 1;
	case 'x': {
		int hi = digit_val(s[1], 16), lo = hi < 0 ? -1 : digit_val(s[2], 16);
		if (hi < 0 || lo < 0) {
			plat_snprintf(err, errlen, "bad escape at column %zu: \\x needs two hex digits",
				      col);
			return -1;
		}
		if (hi == 0 && lo == 0) {
			plat_snprintf(err, errlen, "bad escape at column %zu: \\x00 (NUL) is not allowed",
				      col);
			return -1;
		}
		*out = (char)(hi << 4 | lo);
		return 3;
	}
	case 0:
		plat_snprintf(err, errlen, "bad escape at column %zu: backslash at end of line", col);
		return -1;
	default:
		if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f)
			plat_snprintf(err, errlen,
				      "bad escape '\\%c' at column %zu (use \\n \\t \\r \\\\ \\\" \\xHH)",
				      *s, col);
		else
			plat_snprintf(err, errlen, "bad escape at column %zu (use \\n \\t \\r \\\\ \\\" \\xHH)",
				      col);
		return -1;
	}
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

int shell_split(const char *line, char *out, size_t cap, char **argv, int max, char *err,
		size_t errlen)
{
	const char *p = line;
	size_t o = 0;
	int argc = 0;

	err[0] = 0;
	for (;;) {
		while (blank(*p))
			p++;
		if (!*p)
			break;
		if (argc == max) {
			plat_snprintf(err, errlen, "too many words (at most %d)", max);
			return -LLMK_EINVAL;
		}
		argv[argc++] = out + o;
		while (*p && !blank(*p)) {
			char c = *p;
			if (c == '"') {
				size_t open = (size_t)(p - line) + 1;
				for (p++; *p != '"'; ) {
					if (!*p) {
						plat_snprintf(err, errlen,
							      "unterminated quote (opened at column %zu)", open);
						return -LLMK_EINVAL;
					}
					c = *p;
					if (c == '\\') {
						int k = escape(p + 1, &c, (size_t)(p - line) + 1, err, errlen);
						if (k < 0)
							return -LLMK_EINVAL;
						p += k;
					}
					p++;
					if (o + 1 >= cap)
						goto full;
					out[o++] = c;
				}
				p++;
				continue;
			}
			if (o + 1 >= cap)
				goto full;
			out[o++] = c;
			p++;
		}
		if (o + 1 > cap)
			goto full;
		out[o++] = 0;
	}
	argv[argc] = NULL;
	return argc;
full:
	plat_snprintf(err, errlen, "line too long for the argument buffer (%zu bytes)", cap);
	return -LLMK_EINVAL;
}

/* ---- numbers ---- */
int shell_parse_u64(const char *s, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	int shift = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (digit_val(*s, base) < 0)
		return -LLMK_EINVAL;
	for (int d; (d = digit_val(*s, base)) >= 0; s++) {
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -LLMK_ERANGE;
		v = v * base + (uint64_t)d;
	}
	switch (*s) {
	case 'k': case 'K': shift = 10; s++; break;
	case 'm': case 'M': shift = 20; s++; break;
	case 'g': case 'G': shift = 30; s++; break;
	case 't': case 'T': shift = 40; s++; break;
	}
	if (shift && (*s == 'i' && s[1] == 'B'))
		s += 2;
	if (*s)
		return -LLMK_EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -LLMK_ERANGE;
	*out = v << shift;
	return 0;
}

int shell_parse_i64(const char *s, int64_t *out)
{
	bool neg = *s == '-';
	uint64_t u;
	int r = shell_parse_u64(s + (neg || *s == '+'), &u);
	if (r)
		return r;
	if (u > (uint64_t)INT64_MAX + neg)
		return -LLMK_ERANGE;
	*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return 0;
}

/* Decimal floats as typed for sampling flags; exact enough for 0.95 or 1e-5
 * (the last digit may differ from strtod; nothing here needs more). */
int shell_parse_f64(const char *s, double *out)
{
	bool neg = false, any = false;
	double v = 0, scale = 1;
	int e = 0;

	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	for (; *s >= '0' && *s <= '9'; s++, any = true)
		v = v * 10 + (*s - '0');
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, any = true)
			v += (*s - '0') * (scale /= 10);
	if (!any)
		return -LLMK_EINVAL;
	if (*s == 'e' || *s == 'E') {
		bool eneg = false;
		s++;
		if (*s == '-' || *s == '+')
			eneg = *s++ == '-';
		if (*s < '0' || *s > '9')
			return -LLMK_EINVAL;
		for (; *s >= '0' && *s <= '9'; s++)
			if ((e = e * 10 + (*s - '0')) > 400)
				return -LLMK_ERANGE;
		if (eneg)
			e = -e;
	}
	if (*s)
		return -LLMK_EINVAL;
	for (; e > 0; e--)
		v *= 10;
	for (; e < 0; e++)
		v /= 10;
	if (v > 1.7976931348623157e308)
		return -LLMK_ERANGE;
	*out = neg ? -v : v;
	return 0;
}
