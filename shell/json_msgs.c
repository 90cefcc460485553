/*
 * shell/json_msgs.c — the messages array of chat --messages (json_msgs.h).
 * A recursive-descent reader of RFC 8259: every read is bounded by the
 * NUL at the end, every write by the store's capacity, recursion by
 * JSON_MSGS_DEPTH.
 */
#include "json_msgs.h"

struct jr {
	const char *s, *p;
	char *store;
	size_t cap, len;
	char *err;
	size_t errlen;
	int r;
};

static int fail(struct jr *j, int r, const char *what)
{
	if (!j->r) {
		plat_snprintf(j->err, j->errlen, "%s at byte %zu", what, (size_t)(j->p - j->s));
		j->r = r;
	}
	return r;
}

static void ws(struct jr *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static bool eat(struct jr *j, char c)
{
	ws(j);
	if (*j->p != c)
		return false;
	j->p++;
	return true;
}

static int hex4(struct jr *j, uint32_t *u)
{
	*u = 0;
	for (int i = 0; i < 4; i++) {
		char c = j->p[i];
		uint32_t d = c >= '0' && c <= '9' ? (uint32_t)(c - '0')
			   : c >= 'a' && c <= 'f' ? (uint32_t)(c - 'a' + 10)
			   : c >= 'A' && c <= 'F' ? (uint32_t)(c - 'A' + 10) : 16;
		if (d == 16)
			return fail(j, -LLMK_EINVAL, "a \\u escape needs 4 hex digits");
		*u = *u << 4 | d;
	}
	j->p += 4;
	return 0;
}

static int out(struct jr *j, const char *b, size_t n, char *keep)
{
	if (!keep)
		return 0;
	if (j->len + n >= j->cap)
		return fail(j, -LLMK_ERANGE, "the messages' text is too long");
	memcpy(j->store + j->len, b, n);
	j->len += n;
	return 0;
}

/* \uXXXX (and its low surrogate) as UTF-8. */
static int uesc(struct jr *j, char *keep)
{
	uint32_t u, lo;
	char b[4];
	size_t n;

	if (hex4(j, &u))
		return j->r;
	if (u >= 0xdc00 && u <= 0xdfff)
		return fail(j, -LLMK_EINVAL, "a lone low surrogate");
	if (u >= 0xd800 && u <= 0xdbff) {
		if (j->p[0] != '\\' || j->p[1] != 'u')
			return fail(j, -LLMK_EINVAL, "a high surrogate without its low one");
		j->p += 2;
		if (hex4(j, &lo))
			return j->r;
		if (lo < 0xdc00 || lo > 0xdfff)
			return fail(j, -LLMK_EINVAL, "a high surrogate without its low one");
		u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (u == 0)
		return fail(j, -LLMK_EINVAL, "\\u0000 in a string");
	if (u < 0x80) {
		b[0] = (char)u, n = 1;
	} else if (u < 0x800) {
		b[0] = (char)(0xc0 | u >> 6), b[1] = (char)(0x80 | (u & 0x3f)), n = 2;
	} else if (u < 0x10000) {
		b[0] = (char)(0xe0 | u >> 12), b[1] = (char)(0x80 | ((u >> 6) & 0x3f));
		b[2] = (char)(0x80 | (u & 0x3f)), n = 3;
	} else {
		b[0] = (char)(0xf0 | u >> 18), b[1] = (char)(0x80 | ((u >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((u >> 6) & 0x3f)), b[3] = (char)(0x80 | (u & 0x3f)), n = 4;
	}
	return out(j, b, n, keep);
}

/* A string; kept (decoded, NUL-terminated) in the store if *kept is not
 * NULL, where *kept then points. */
static int string(struct jr *j, const char **kept)
{
	char *keep = kept ? j->store + j->len : NULL;
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";

	if (!eat(j, '"'))
		return fail(j, -LLMK_EINVAL, "expected a string");
	while (*j->p != '"') {
		unsigned char c = (unsigned char)*j->p;
		if (!c)
			return fail(j, -LLMK_EINVAL, "unterminated string");
		if (c < 0x20)
			return fail(j, -LLMK_EINVAL, "a control character in a string");
		j->p++;
		if (c != '\\') {
			if (out(j, (const char *)&c, 1, keep))
				return j->r;
			continue;
		}
		c = (unsigned char)*j->p++;
		if (c == 'u') {
			if (uesc(j, keep))
				return j->r;
			continue;
		}
		size_t e = 0;
		while (from[e] && from[e] != (char)c)
			e++;
		if (!c || !from[e]) {
			j->p--;
			return fail(j, -LLMK_EINVAL, "a bad escape in a string");
		}
		if (out(j, &to[e], 1, keep))
			return j->r;
	}
	j->p++;
	if (kept) {
		if (out(j, "", 1, keep))
			return j->r;
		*kept = keep;
	}
	return 0;
}

static int number(struct jr *j)
{
	const char *p = j->p;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return fail(j, -LLMK_EINVAL, "expected a value");
	if (*p == '.') {
		if (*++p < '0' || *p > '9')
			return fail(j, -LLMK_EINVAL, "a digit must follow '.'");
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (*p < '0' || *p > '9')
			return fail(j, -LLMK_EINVAL, "a digit must follow the exponent");
		while (*p >= '0' && *p <= '9')
			p++;
	}
	j->p = p;
	return 0;
}

/* Any value, read and left (a key the messages do not use). */
static int skip(struct jr *j, int depth)
{
	ws(j);
	if (depth >= JSON_MSGS_DEPTH)
		return fail(j, -LLMK_ERANGE, "nested too deep");
	switch (*j->p) {
	case '"':
		return string(j, NULL);
	case '{':
	case '[': {
		char close = *j->p == '{' ? '}' : ']';
		bool obj = close == '}';
		j->p++;
		if (eat(j, close))
			return 0;
		do {
			if (obj && (string(j, NULL) || (!eat(j, ':') &&
							fail(j, -LLMK_EINVAL, "expected ':'"))))
				return j->r;
			if (skip(j, depth + 1))
				return j->r;
		} while (eat(j, ','));
		return eat(j, close) ? 0 : fail(j, -LLMK_EINVAL, obj ? "expected ',' or '}'"
									: "expected ',' or ']'");
	}
	}
	static const char *const words[] = {"true", "false", "null"};
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(words[i]);
		if (strncmp(j->p, words[i], n) == 0) {
			j->p += n;
			return 0;
		}
	}
	return number(j);
}

static int message(struct jr *j, struct chat_msg *m)
{
	m->role = m->content = NULL;
	if (!eat(j, '{'))
		return fail(j, -LLMK_EINVAL, "expected '{' (a message)");
	if (eat(j, '}'))
		return fail(j, -LLMK_EINVAL, "a message needs \"role\" and \"content\"");
	do {
		const char *key = NULL, **to;
		size_t mark = j->len;
		if (string(j, &key))
			return j->r;
		to = !strcmp(key, "role") ? &m->role : !strcmp(key, "content") ? &m->content : NULL;
		j->len = mark; /* the key is not kept */
		if (!eat(j, ':'))
			return fail(j, -LLMK_EINVAL, "expected ':'");
		if (to && *to)
			return fail(j, -LLMK_EINVAL, "a key twice in one message");
		ws(j);
		if (to && *j->p != '"')
			return fail(j, -LLMK_EINVAL, "\"role\" and \"content\" must be strings");
		if (to ? string(j, to) : skip(j, 2))
			return j->r;
	} while (eat(j, ','));
	if (!eat(j, '}'))
		return fail(j, -LLMK_EINVAL, "expected ',' or '}'");
	if (!m->role || !m->content)
		return fail(j, -LLMK_EINVAL, "a message needs \"role\" and \"content\"");
	return 0;
}

int json_msgs_parse(const char *json, struct chat_msg *msgs, size_t max, size_t *n, char *store,
		    size_t cap, char *err, size_t errlen)
{
	struct jr j = {json, json, store, cap, 0, err, errlen, 0};

	*n = 0;
	if (!eat(&j, '['))
		return fail(&j, -LLMK_EINVAL, "expected '[' (an array of messages)");
	if (!eat(&j, ']')) {
		do {
			if (*n == max)
				return fail(&j, -LLMK_ERANGE, "too many messages");
			if (message(&j, &msgs[*n]))
				return j.r;
			(*n)++;
		} while (eat(&j, ','));
		if (!eat(&j, ']'))
			return fail(&j, -LLMK_EINVAL, "expected ',' or ']'");
	}
	ws(&j);
	if (*j.p)
		return fail(&j, -LLMK_EINVAL, "text after the array");
	return 0;
}
