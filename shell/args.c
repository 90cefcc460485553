/*
 * shell/args.c — split a command line into words.
 *
 * A word is a run of non-blank bytes and double-quoted strings, joined when
 * adjacent (a"b c" is the one word `ab c`, "" is an empty word). Inside
 * quotes the escapes \n \t \r \\ \" and \xHH (two hex digits, not 00) stand
 * for their byte, so any prompt fits on one line; outside quotes a backslash
 * is an ordinary byte (Windows-style paths and regexes stay as typed).
 */
#include "shell.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
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
		int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);
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
