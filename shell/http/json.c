/*
 * shell/http/json.c — the strict bounded JSON reader and the writer
 * (json.h). RFC 8259 §2 (values), §4 (objects), §6 (numbers), §7 (strings).
 * Recursive descent; the recursion is bounded by max_depth.
 */
#include "json.h"

struct json_p {
	struct json_doc *d;
	const char *s;
	size_t len, pos;
	char *err;
	size_t errlen;
};

static int fail(struct json_p *p, int code, const char *what)
{
	plat_snprintf(p->err, p->errlen, "%s at byte %zu", what, p->pos);
	return code;
}

static void skip_ws(struct json_p *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

static int new_node(struct json_p *p, enum json_type t, uint32_t *idx)
{
	struct json_node *n;

	if (p->d->n >= p->d->cap)
		return fail(p, -LLMK_ERANGE, "too many values");
	*idx = (uint32_t)p->d->n++;
	n = &p->d->nodes[*idx];
	memset(n, 0, sizeof *n);
	n->type = t;
	n->next = n->child = JSON_NONE;
	return 0;
}

static int put(struct json_p *p, uint32_t cp)
{
	struct json_doc *d = p->d;
	uint8_t b[4];
	size_t k;

	if (cp < 0x80) {
		b[0] = (uint8_t)cp, k = 1;
	} else if (cp < 0x800) {
		b[0] = (uint8_t)(0xc0 | cp >> 6), b[1] = (uint8_t)(0x80 | (cp & 0x3f)), k = 2;
	} else if (cp < 0x10000) {
		b[0] = (uint8_t)(0xe0 | cp >> 12), b[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (uint8_t)(0x80 | (cp & 0x3f)), k = 3;
	} else {
		b[0] = (uint8_t)(0xf0 | cp >> 18), b[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f)), b[3] = (uint8_t)(0x80 | (cp & 0x3f)), k = 4;
	}
	if (d->store_cap - d->store_len < k + 1)
		return fail(p, -LLMK_ERANGE, "strings too long");
	memcpy(d->store + d->store_len, b, k);
	d->store_len += k;
	return 0;
}

static int hex4(struct json_p *p, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p->pos < p->len ? p->s[p->pos] : 0;
		uint32_t x;
		if (c >= '0' && c <= '9')
			x = (uint32_t)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			x = (uint32_t)((c | 0x20) - 'a' + 10);
		else
			return fail(p, -LLMK_EFORMAT, "bad \\u escape");
		*v = *v << 4 | x;
		p->pos++;
	}
	return 0;
}

/* One UTF-8 sequence at p->pos (RFC 3629 §4: shortest form, no surrogates). */
static int utf8_seq(struct json_p *p, uint32_t *cp)
{
	const uint8_t *u = (const uint8_t *)p->s + p->pos;
	size_t left = p->len - p->pos, k;
	uint32_t c = u[0], min;

	if (c < 0x80)
		k = 1, min = 0;
	else if ((c & 0xe0) == 0xc0)
		k = 2, c &= 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		k = 3, c &= 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		k = 4, c &= 0x07, min = 0x10000;
	else
		return fail(p, -LLMK_EFORMAT, "invalid UTF-8");
	if (left < k)
		return fail(p, -LLMK_EFORMAT, "invalid UTF-8");
	for (size_t i = 1; i < k; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return fail(p, -LLMK_EFORMAT, "invalid UTF-8");
		c = c << 6 | (u[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
		return fail(p, -LLMK_EFORMAT, "invalid UTF-8");
	p->pos += k;
	*cp = c;
	return 0;
}

/* A string at p->pos (its opening quote) decoded into the store. */
static int parse_str(struct json_p *p, const char **out, size_t *outlen)
{
	size_t start = p->d->store_len;
	int r;

	p->pos++;
	for (;;) {
		uint32_t cp;
		if (p->pos >= p->len)
			return fail(p, -LLMK_EFORMAT, "unterminated string");
		char c = p->s[p->pos];
		if (c == '"') {
			p->pos++;
			break;
		}
		if ((uint8_t)c < 0x20)
			return fail(p, -LLMK_EFORMAT, "control character in string");
		if (c != '\\') {
			if ((r = utf8_seq(p, &cp)) || (r = put(p, cp)))
				return r;
			continue;
		}
		p->pos++;
		c = p->pos < p->len ? p->s[p->pos++] : 0;
		switch (c) {
		case '"': cp = '"'; break;
		case '\\': cp = '\\'; break;
		case '/': cp = '/'; break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			if ((r = hex4(p, &cp)))
				return r;
			if (cp >= 0xd800 && cp < 0xdc00) {
				uint32_t lo;
				if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
					return fail(p, -LLMK_EFORMAT, "lone surrogate");
				p->pos += 2;
				if ((r = hex4(p, &lo)))
					return r;
				if (lo < 0xdc00 || lo >= 0xe000)
					return fail(p, -LLMK_EFORMAT, "lone surrogate");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				return fail(p, -LLMK_EFORMAT, "lone surrogate");
			}
			if (cp == 0)
				return fail(p, -LLMK_EFORMAT, "NUL in string");
			break;
		default:
			return fail(p, -LLMK_EFORMAT, "bad escape");
		}
		if ((r = put(p, cp)))
			return r;
	}
	if (p->d->store_len >= p->d->store_cap)
		return fail(p, -LLMK_ERANGE, "strings too long"); /* "" with the store full */
	p->d->store[p->d->store_len++] = 0;
	*out = p->d->store + start;
	*outlen = p->d->store_len - start - 1;
	return 0;
}

static bool digit(struct json_p *p)
{
	return p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9';
}

/* RFC 8259 §6: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static int parse_num(struct json_p *p, struct json_node *n)
{
	bool neg = false, exact = true, frac = false;
	uint64_t mant = 0;
	int exp10 = 0, e = 0, esign = 1, digits = 0;

	if (p->s[p->pos] == '-')
		neg = true, p->pos++;
	if (!digit(p))
		return fail(p, -LLMK_EFORMAT, "bad number");
	if (p->s[p->pos] == '0') {
		p->pos++;
		if (digit(p))
			return fail(p, -LLMK_EFORMAT, "leading zero in number");
	}
	while (digit(p)) {
		int v = p->s[p->pos++] - '0';
		if (digits < 19)
			mant = mant * 10 + (uint64_t)v, digits += mant != 0;
		else
			exp10++, exact = false;
	}
	if (p->pos < p->len && p->s[p->pos] == '.') {
		p->pos++, frac = true;
		if (!digit(p))
			return fail(p, -LLMK_EFORMAT, "bad number");
		while (digit(p)) {
			int v = p->s[p->pos++] - '0';
			if (digits < 19)
				mant = mant * 10 + (uint64_t)v, digits += mant != 0, exp10--;
		}
	}
	if (p->pos < p->len && (p->s[p->pos] | 0x20) == 'e') {
		p->pos++, frac = true;
		if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			esign = p->s[p->pos++] == '-' ? -1 : 1;
		if (!digit(p))
			return fail(p, -LLMK_EFORMAT, "bad number");
		while (digit(p)) {
			if (e < 100000)
				e = e * 10 + (p->s[p->pos] - '0');
			p->pos++;
		}
	}
	exp10 += esign * e;
	if (mant != 0 && (exp10 + digits > 309 || exp10 + digits < -307))
		return fail(p, -LLMK_ERANGE, "number out of range");
	double v = (double)mant;
	for (int k = exp10; k > 0; k--)
		v *= 10.0;
	for (int k = exp10; k < 0; k++)
		v /= 10.0;
	if (v > 1.7976931348623157e308)
		return fail(p, -LLMK_ERANGE, "number out of range");
	n->num = neg ? -v : v;
	n->is_int = !frac && exact && mant <= (uint64_t)INT64_MAX;
	n->i = n->is_int ? (neg ? -(int64_t)mant : (int64_t)mant) : 0;
	return 0;
}

static int parse_value(struct json_p *p, uint32_t depth, uint32_t *idx);

static int parse_container(struct json_p *p, uint32_t depth, uint32_t idx, bool obj)
{
	char close = obj ? '}' : ']';
	uint32_t last = JSON_NONE;
	int r;

	if (depth >= p->d->max_depth)
		return fail(p, -LLMK_ERANGE, "nested too deep");
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return 0;
	}
	for (;;) {
		const char *key = NULL;
		size_t klen, at;
		uint32_t v;
		skip_ws(p);
		if (obj) {
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return fail(p, -LLMK_EFORMAT, "expected a key");
			at = p->pos;
			if ((r = parse_str(p, &key, &klen)))
				return r;
			for (uint32_t c = p->d->nodes[idx].child; c != JSON_NONE; c = p->d->nodes[c].next)
				if (strcmp(p->d->nodes[c].key, key) == 0) {
					p->pos = at;
					return fail(p, -LLMK_EFORMAT, "duplicate key");
				}
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
				return fail(p, -LLMK_EFORMAT, "expected ':'");
			p->pos++;
		}
		if ((r = parse_value(p, depth + 1, &v)))
			return r;
		p->d->nodes[v].key = key;
		if (last == JSON_NONE)
			p->d->nodes[idx].child = v;
		else
			p->d->nodes[last].next = v;
		last = v;
		p->d->nodes[idx].count++;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close) {
			p->pos++;
			return 0;
		}
		return fail(p, -LLMK_EFORMAT, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int literal(struct json_p *p, const char *w, enum json_type t, uint32_t *idx)
{
	size_t n = strlen(w);

	if (p->len - p->pos < n || memcmp(p->s + p->pos, w, n) != 0)
		return fail(p, -LLMK_EFORMAT, "unexpected character");
	p->pos += n;
	return new_node(p, t, idx);
}

static int parse_value(struct json_p *p, uint32_t depth, uint32_t *idx)
{
	int r;

	skip_ws(p);
	if (p->pos >= p->len)
		return fail(p, -LLMK_EFORMAT, "unexpected end");
	switch (p->s[p->pos]) {
	case '{':
	case '[':
		if ((r = new_node(p, p->s[p->pos] == '{' ? JSON_OBJECT : JSON_ARRAY, idx)))
			return r;
		return parse_container(p, depth, *idx, p->s[p->pos] == '{');
	case '"': {
		if ((r = new_node(p, JSON_STRING, idx)))
			return r;
		struct json_node *n = &p->d->nodes[*idx];
		return parse_str(p, &n->str, &n->len);
	}
	case 't':
		return literal(p, "true", JSON_TRUE, idx);
	case 'f':
		return literal(p, "false", JSON_FALSE, idx);
	case 'n':
		return literal(p, "null", JSON_NULL, idx);
	default:
		if (p->s[p->pos] != '-' && !digit(p))
			return fail(p, -LLMK_EFORMAT, "unexpected character");
		if ((r = new_node(p, JSON_NUMBER, idx)))
			return r;
		return parse_num(p, &p->d->nodes[*idx]);
	}
}

int json_parse(struct json_doc *d, const char *text, size_t len, char *err, size_t errlen)
{
	struct json_p p = {d, text, len, 0, err, errlen};
	uint32_t root;
	int r;

	d->n = 0;
	d->store_len = 0;
	if (len > d->max_size)
		return fail(&p, -LLMK_ERANGE, "document too large");
	if ((r = parse_value(&p, 0, &root)))
		return r;
	skip_ws(&p);
	if (p.pos != len)
		return fail(&p, -LLMK_EFORMAT, "trailing bytes");
	return 0;
}

const struct json_node *json_get(const struct json_doc *d, const struct json_node *obj,
				 const char *key)
{
	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (uint32_t c = obj->child; c != JSON_NONE; c = d->nodes[c].next)
		if (strcmp(d->nodes[c].key, key) == 0)
			return &d->nodes[c];
	return NULL;
}

const struct json_node *json_first(const struct json_doc *d, const struct json_node *c)
{
	if (!c || (c->type != JSON_ARRAY && c->type != JSON_OBJECT) || c->child == JSON_NONE)
		return NULL;
	return &d->nodes[c->child];
}

const struct json_node *json_next(const struct json_doc *d, const struct json_node *n)
{
	return n->next == JSON_NONE ? NULL : &d->nodes[n->next];
}

/* ---- writer ---- */

void json_out_init(struct json_out *o, char *buf, size_t cap)
{
	o->buf = buf, o->cap = cap, o->len = 0, o->overflow = false;
	if (cap)
		buf[0] = 0;
}

void json_out_raw(struct json_out *o, const char *s, size_t n)
{
	if (o->overflow || o->cap - o->len <= n) {
		o->overflow = true;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = 0;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if none. */
static size_t utf8_len(const uint8_t *s, size_t n)
{
	struct json_doc d = {0};
	struct json_p p = {&d, (const char *)s, n, 0, NULL, 0};
	uint32_t cp;
	char e[1];

	p.err = e, p.errlen = sizeof e;
	return utf8_seq(&p, &cp) ? 0 : p.pos;
}

void json_out_str(struct json_out *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	json_out_raw(o, "\"", 1);
	for (size_t i = 0; i < n;) {
		uint8_t c = (uint8_t)s[i];
		char esc[7] = {'\\', 0};
		size_t k;
		if (c == '"' || c == '\\') {
			esc[1] = (char)c;
			json_out_raw(o, esc, 2), i++;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
			json_out_raw(o, esc, 2), i++;
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4], esc[5] = hex[c & 15];
			json_out_raw(o, esc, 6), i++;
		} else if ((k = utf8_len((const uint8_t *)s + i, n - i))) {
			json_out_raw(o, s + i, k), i += k;
		} else {
			json_out_raw(o, "\xef\xbf\xbd", 3), i++;
		}
	}
	json_out_raw(o, "\"", 1);
}

void json_out_cstr(struct json_out *o, const char *s)
{
	json_out_str(o, s, strlen(s));
}

void json_out_i64(struct json_out *o, int64_t v)
{
	char b[24];
	int n = plat_snprintf(b, sizeof b, "%lld", (long long)v);
	json_out_raw(o, b, (size_t)n);
}

void json_out_f64(struct json_out *o, double v)
{
	char b[40];
	int n;

	if (v != v || v > 1.7976931348623157e308 || v < -1.7976931348623157e308)
		n = plat_snprintf(b, sizeof b, "null");
	else
		n = plat_snprintf(b, sizeof b, "%.9g", v);
	json_out_raw(o, b, (size_t)n);
}

size_t json_utf8_whole(const char *s, size_t n)
{
	size_t i = n, back = 0;

	/* at most 3 trailing bytes may be an unfinished sequence */
	while (i > 0 && back < 3 && ((uint8_t)s[i - 1] & 0xc0) == 0x80)
		i--, back++;
	if (i == 0)
		return n;
	uint8_t c = (uint8_t)s[i - 1];
	size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
	if (need > 1 && back + 1 < need)
		return i - 1;
	return n;
}
