/*
 * tools/verify/io.c — reading evidence in the forms a user has it (the
 * guest's console line, bare base64, the binary bundle), hex, files.
 */
#include "verify.h"
#include "../../llm/codec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void verify_hex(const uint8_t *p, size_t n, char *out)
{
	hex_encode(p, n, out);
}

int verify_parse_hex(const char *s, uint8_t *out, size_t max, size_t *n)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	size_t len = 0;
	while (hex_digit(s[len]) >= 0)
		len++;
	for (const char *t = s + len; *t; t++)
		if (*t != ' ' && *t != '\t' && *t != '\n' && *t != '\r')
			return -LLMK_EFORMAT;
	long m = len ? hex_decode(s, len, out, max, NULL) : -LLMK_EFORMAT;
	if (m < 0)
		return -LLMK_EFORMAT;
	*n = (size_t)m;
	return 0;
}

int verify_read_file(const char *path, uint8_t **buf, size_t *len, size_t max)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -LLMK_ENOENT;
	size_t cap = 4096, n = 0;
	uint8_t *b = malloc(cap + 1);
	while (b) {
		size_t k = fread(b + n, 1, cap - n, f);
		n += k;
		if (n < cap)
			break;
		if (cap >= max) {
			free(b);
			fclose(f);
			return -LLMK_ERANGE;
		}
		cap *= 2;
		uint8_t *nb = realloc(b, cap + 1);
		if (!nb)
			free(b);
		b = nb;
	}
	bool bad = !b || ferror(f);
	fclose(f);
	if (bad) {
		free(b);
		return -LLMK_EIO;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

int verify_write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -LLMK_EIO;
	bool ok = fwrite(p, 1, n, f) == n;
	if (fclose(f) != 0)
		ok = false;
	return ok ? 0 : -LLMK_EIO;
}

static bool is_b64(int c)
{
	return b64_digit(c) >= 0 || c == '=';
}

int verify_read_evidence(const char *path, uint8_t **buf, size_t *len, const char **form,
			 char *err, size_t errn)
{
	uint8_t *raw;
	size_t n;
	int r = verify_read_file(path, &raw, &n, 4 * (size_t)EVIDENCE_MAX);
	if (r < 0) {
		snprintf(err, errn, "evidence file '%s': %s", path,
			 r == -LLMK_ERANGE ? "larger than any bundle" : strerror(errno));
		return r;
	}
	if (n >= EVIDENCE_MAGIC_LEN && memcmp(raw, EVIDENCE_MAGIC, EVIDENCE_MAGIC_LEN) == 0) {
		*buf = raw;
		*len = n;
		*form = "binary bundle";
		return 0;
	}
	/* the text forms: the last "evidence: " line of a transcript, else the
	 * whole file as one base64 word */
	const char *text = (const char *)raw, *start = NULL;
	for (const char *p = strstr(text, "evidence: "); p; p = strstr(p + 1, "evidence: "))
		if (p == text || p[-1] == '\n' || p[-1] == '\r')
			start = p + 10;
	bool bare = !start;
	*form = bare ? "base64" : "'evidence:' line";
	if (bare)
		start = text;
	while (*start == ' ' || *start == '\t' || *start == '\n' || *start == '\r')
		start++;
	size_t k = 0;
	while (is_b64((unsigned char)start[k]))
		k++;
	bool junk = false;
	for (const char *t = start + k; bare && *t && !junk; t++)
		junk = *t != ' ' && *t != '\t' && *t != '\n' && *t != '\r';
	if (k == 0 || junk) {
		snprintf(err, errn, "evidence file '%s': neither a binary bundle, an 'evidence: <base64>' "
			 "line nor base64", path);
		free(raw);
		return -LLMK_EFORMAT;
	}
	uint8_t *b = malloc(k / 4 * 3 + 3);
	long m = b ? b64_decode(start, k, b, k / 4 * 3 + 3) : -LLMK_ENOMEM;
	free(raw);
	if (m < 0) {
		free(b);
		snprintf(err, errn, "evidence file '%s': the %s is not valid base64 (RFC 4648, padded)",
			 path, *form);
		return -LLMK_EFORMAT;
	}
	*buf = b;
	*len = (size_t)m;
	return 0;
}
