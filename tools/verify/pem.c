/* tools/verify/pem.c — strict PEM certificate blocks (pem.h). */
#include "pem.h"
#include "../../llm/codec.h"

#include <string.h>

static const char begin_line[] = "-----BEGIN CERTIFICATE-----";
static const char end_line[] = "-----END CERTIFICATE-----";

/* The next line: [*s, *e) without its LF or CRLF; returns the offset after it. */
static size_t next_line(const uint8_t *t, size_t n, size_t at, size_t *e)
{
	size_t i = at;
	while (i < n && t[i] != '\n')
		i++;
	*e = (i > at && t[i - 1] == '\r') ? i - 1 : i;
	return i < n ? i + 1 : n;
}

static int line_is(const uint8_t *t, size_t s, size_t e, const char *want)
{
	size_t n = strlen(want);
	return e - s == n && memcmp(t + s, want, n) == 0;
}

/* Decode the base64 body [s, e) of lines; out gets the bytes. */
static int decode_body(const uint8_t *t, size_t s, size_t e, const char *what, size_t line_no,
		       uint8_t *out, size_t cap, size_t *len, struct vfy_log *log)
{
	uint32_t acc = 0;
	size_t nchar = 0, npad = 0, o = 0;

	for (size_t i = s; i < e; i++) {
		uint8_t c = t[i];
		/* Line ends (LF or CRLF) were placed by the caller's line checks. */
		if (c == '\n' || (c == '\r' && i + 1 < e && t[i + 1] == '\n'))
			continue;
		if (c == '=') {
			npad++;
			if (npad > 2)
				return vfy_fail(log, LLMK_EFORMAT, "%s: block ending on line %zu: more than "
						"two '=' of padding", what, line_no);
			acc <<= 6;
		} else {
			int v = b64_digit(c);
			if (v < 0 || npad)
				return vfy_fail(log, LLMK_EFORMAT, "%s: block ending on line %zu: byte "
						"0x%02x is not base64%s", what, line_no, c,
						npad ? " (data after '=')" : "");
			acc = acc << 6 | (uint32_t)v;
		}
		nchar++;
		if (nchar % 4 == 0) {
			if (o + 3 > cap)
				return vfy_fail(log, LLMK_EFORMAT, "%s: certificates larger than %zu bytes",
						what, cap);
			out[o++] = (uint8_t)(acc >> 16);
			out[o++] = (uint8_t)(acc >> 8);
			out[o++] = (uint8_t)acc;
			acc = 0;
		}
	}
	if (nchar == 0 || nchar % 4)
		return vfy_fail(log, LLMK_EFORMAT, "%s: block ending on line %zu: %zu base64 "
				"characters, not a multiple of 4", what, line_no, nchar);
	/* Canonical: the bits a padded group does not carry must be zero. */
	if (npad) {
		uint32_t last = (uint32_t)out[o - 3] << 16 | (uint32_t)out[o - 2] << 8 | out[o - 1];
		uint32_t unused = npad == 1 ? (last & 0xff) : (last & 0xffff);
		if (unused)
			return vfy_fail(log, LLMK_EFORMAT, "%s: block ending on line %zu: padding "
					"bits not zero (non-canonical base64)", what, line_no);
		o -= npad;
	}
	*len = o;
	return 0;
}

int pem_certs(const uint8_t *text, size_t n, const char *what, uint8_t *out, size_t cap,
	      struct pem_cert *certs, int max, int *count, struct vfy_log *log)
{
	size_t at = 0, line_no = 0, used = 0;

	*count = 0;
	if (n && text[n - 1] == 0)
		n--; /* one terminating NUL */
	while (at < n) {
		size_t e, s = at;
		at = next_line(text, n, at, &e);
		line_no++;
		if (e == s)
			continue; /* empty line between blocks */
		if (!line_is(text, s, e, begin_line))
			return vfy_fail(log, LLMK_EFORMAT, "%s: line %zu: text outside a "
					"\"%s\" block", what, line_no, begin_line);
		/* The body: full 64-character lines, then one of 4..64, then END. */
		size_t body = at, body_end, last_len = 64;
		int ended = 0;
		while (at < n) {
			size_t ls = at;
			at = next_line(text, n, at, &e);
			line_no++;
			if (line_is(text, ls, e, end_line)) {
				body_end = ls;
				ended = 1;
				break;
			}
			if (last_len != 64)
				return vfy_fail(log, LLMK_EFORMAT, "%s: line %zu: base64 line after a "
						"short one (lines must be 64 characters, the last "
						"4 to 64)", what, line_no - 1);
			last_len = e - ls;
			if (last_len < 4 || last_len > 64 || last_len % 4)
				return vfy_fail(log, LLMK_EFORMAT, "%s: line %zu: %zu characters (base64 "
						"lines are 64, the last a multiple of 4)", what,
						line_no, last_len);
		}
		if (!ended)
			return vfy_fail(log, LLMK_EFORMAT, "%s: certificate from line %zu has no "
					"\"%s\" line", what, line_no, end_line);
		if (*count == max)
			return vfy_fail(log, LLMK_EFORMAT, "%s: more than %d certificates", what, max);
		size_t len = 0;
		int err = decode_body(text, body, body_end, what, line_no, out + used, cap - used,
				      &len, log);
		if (err)
			return err;
		certs[*count].der = out + used;
		certs[*count].len = len;
		(*count)++;
		used += len;
	}
	if (*count == 0)
		return vfy_fail(log, LLMK_EFORMAT, "%s: no \"%s\" block", what, begin_line);
	return 0;
}
