/*
 * llm/jinja_json.c — JSON out and in for the Jinja interpreter: the tojson
 * filter as HF's tojson calls Python's json.dumps (ensure_ascii off, ", " and
 * ": " separators; "," and a newline with indent), keeping each string's
 * taint; and the reader of the `tools` array the caller passes (RFC 8259,
 * nesting bounded at 64, every string the caller's text, so tainted).
 */
#include "jinja_int.h"

static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static struct jv list_v(struct jj_list *l)
{
	return l ? (struct jv){.t = JV_LIST, .u.l = l} : jj_none();
}

/* ---- tojson: Python's json.dumps(ensure_ascii=False) ---- */

static void put_indent(struct jj *j, struct jj_buf *b, int indent, int level)
{
	jj_buf_putc(j, b, '\n');
	for (int i = 0; i < indent * level && !j->err; i++)
		jj_buf_putc(j, b, ' ');
}

static void json_str(struct jj *j, struct jj_buf *b, const struct jv *s)
{
	jj_buf_putc(j, b, '"');
	for (uint32_t i = 0; i < s->n && !j->err; i++) {
		unsigned char c = (unsigned char)s->u.s[i];
		const uint8_t *t = s->tm ? s->tm + i : NULL;
		char e[8];
		int n = 0;
		if (c == '"' || c == '\\')
			e[0] = '\\', e[1] = (char)c, n = 2;
		else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f')
			e[0] = '\\', e[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c == '\b' ? 'b' : 'f', n = 2;
		else if (c < 0x20)
			n = plat_snprintf(e, sizeof e, "\\u%04x", c);
		if (!n) {
			jj_buf_put(j, b, s->u.s + i, 1, t);
			continue;
		}
		for (int k = 0; k < n; k++)
			jj_buf_put(j, b, &e[k], 1, t);
	}
	jj_buf_putc(j, b, '"');
}

void jj_tojson(struct jj *j, struct jj_buf *b, const struct jv *v, int indent, int level)
{
	if (!jj_step(j, 0))
		return;
	if (level > 64) {
		jj_fail(j, -LLMK_EBUDGET, 0, "tojson nests deeper than 64");
		return;
	}
	switch (v->t) {
	case JV_UNDEF:
	case JV_NONE: jj_buf_put(j, b, "null", 4, NULL); break;
	case JV_BOOL: jj_buf_put(j, b, v->u.i ? "true" : "false", v->u.i ? 4 : 5, NULL); break;
	case JV_INT:
	case JV_FLOAT: jj_to_str(j, b, v); break;
	case JV_STR: json_str(j, b, v); break;
	case JV_LIST:
	case JV_DICT: {
		bool dict = v->t == JV_DICT;
		uint32_t n = dict ? v->u.d->n : v->u.l->n;
		jj_buf_putc(j, b, dict ? '{' : '[');
		for (uint32_t i = 0; i < n && !j->err; i++) {
			if (i)
				jj_buf_put(j, b, indent >= 0 ? "," : ", ", indent >= 0 ? 1 : 2, NULL);
			if (indent >= 0)
				put_indent(j, b, indent, level + 1);
			if (dict) {
				struct jv k = v->u.d->k[i];
				if (k.t != JV_STR) {
					struct jj_buf kb = {0};
					jj_to_str(j, &kb, &k);
					k = jj_buf_str(&kb);
				}
				json_str(j, b, &k);
				jj_buf_put(j, b, ": ", 2, NULL);
				jj_tojson(j, b, &v->u.d->v[i], indent, level + 1);
			} else {
				jj_tojson(j, b, &v->u.l->v[i], indent, level + 1);
			}
		}
		if (indent >= 0 && n)
			put_indent(j, b, indent, level);
		jj_buf_putc(j, b, dict ? '}' : ']');
		break;
	}
	default: jj_fail(j, -LLMK_EINVAL, 0, "tojson of a function"); break;
	}
}

/* ---- JSON in (the tools array) ---- */

struct jp {
	const char *s;
	size_t n, i;
	int depth;
};

static void jp_ws(struct jp *p)
{
	while (p->i < p->n && is_space(p->s[p->i]))
		p->i++;
}

static int hex4(const char *s)
{
	int v = 0;
	for (int k = 0; k < 4; k++) {
		char c = s[k];
		v = v * 16 + (c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			      : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -100000);
	}
	return v < 0 ? -1 : v;
}

static void put_utf8(struct jj *j, struct jj_buf *b, uint32_t cp)
{
	uint8_t one = 1;
	char u[4];
	int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	if (n == 1)
		u[0] = (char)cp;
	else {
		for (int k = n - 1; k > 0; k--, cp >>= 6)
			u[k] = (char)(0x80 | (cp & 0x3f));
		u[0] = (char)((n == 2 ? 0xc0 : n == 3 ? 0xe0 : 0xf0) | cp);
	}
	for (int k = 0; k < n; k++)
		jj_buf_put(j, b, &u[k], 1, &one);
}

static struct jv jp_value(struct jj *j, struct jp *p);

static struct jv jp_string(struct jj *j, struct jp *p)
{
	struct jj_buf b = {0};
	uint8_t one = 1;

	for (p->i++; p->i < p->n && !j->err; p->i++) {
		char c = p->s[p->i];
		if (c == '"') {
			p->i++;
			struct jv v = jj_buf_str(&b);
			if (!b.n)
				v.tm = NULL;
			return v;
		}
		if (c != '\\') {
			jj_buf_put(j, &b, &c, 1, &one);
			continue;
		}
		if (++p->i >= p->n)
			break;
		c = p->s[p->i];
		if (c == 'u') {
			int cp = p->i + 4 < p->n ? hex4(p->s + p->i + 1) : -1;
			if (cp < 0)
				break;
			p->i += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && p->i + 6 < p->n && p->s[p->i + 1] == '\\' &&
			    p->s[p->i + 2] == 'u') {
				int lo = hex4(p->s + p->i + 3);
				if (lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					p->i += 6;
				}
			}
			put_utf8(j, &b, (uint32_t)cp);
			continue;
		}
		c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c == 'b' ? '\b' : c == 'f' ? '\f' : c;
		jj_buf_put(j, &b, &c, 1, &one);
	}
	jj_fail(j, -LLMK_EINVAL, 0, "tools: a bad JSON string");
	return jj_none();
}

static struct jv jp_value(struct jj *j, struct jp *p)
{
	jp_ws(p);
	if (j->err || p->i >= p->n || ++p->depth > 64) {
		jj_fail(j, -LLMK_EINVAL, 0, "tools: bad JSON (or nested deeper than 64)");
		return jj_none();
	}
	char c = p->s[p->i];
	struct jv v = jj_none();
	if (c == '{' || c == '[') {
		struct jj_dict *d = c == '{' ? jj_dict_new(j, 0) : NULL;
		struct jj_list *l = c == '[' ? jj_list_new(j, 0) : NULL;
		char close = c == '{' ? '}' : ']';
		p->i++;
		jp_ws(p);
		if (p->i < p->n && p->s[p->i] == close)
			p->i++;
		else
			for (; !j->err;) {
				struct jv k;
				if (d) {
					jp_ws(p);
					if (p->i >= p->n || p->s[p->i] != '"')
						break;
					k = jp_string(j, p);
					jp_ws(p);
					if (p->i >= p->n || p->s[p->i++] != ':')
						break;
					jj_dict_set(j, d, k, jp_value(j, p));
				} else {
					jj_list_push(j, l, jp_value(j, p));
				}
				jp_ws(p);
				if (p->i < p->n && p->s[p->i] == ',') {
					p->i++;
					continue;
				}
				if (p->i < p->n && p->s[p->i] == close) {
					p->i++;
					p->depth--;
					return d ? (struct jv){.t = JV_DICT, .u.d = d} : list_v(l);
				}
				break;
			}
		if (p->s[p->i - 1] != close || (d ? d->n : l ? l->n : 1))
			jj_fail(j, -LLMK_EINVAL, 0, "tools: bad JSON at byte %zu", p->i);
		v = d ? (struct jv){.t = JV_DICT, .u.d = d} : list_v(l);
	} else if (c == '"') {
		v = jp_string(j, p);
	} else if (p->n - p->i >= 4 && memcmp(p->s + p->i, "true", 4) == 0) {
		v = jj_bool(true), p->i += 4;
	} else if (p->n - p->i >= 5 && memcmp(p->s + p->i, "false", 5) == 0) {
		v = jj_bool(false), p->i += 5;
	} else if (p->n - p->i >= 4 && memcmp(p->s + p->i, "null", 4) == 0) {
		p->i += 4;
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		size_t a = p->i;
		bool frac = false;
		int64_t x = 0;
		if (c == '-')
			p->i++;
		while (p->i < p->n && ((p->s[p->i] >= '0' && p->s[p->i] <= '9') || p->s[p->i] == '.' ||
				       p->s[p->i] == 'e' || p->s[p->i] == 'E' || p->s[p->i] == '+' ||
				       (p->s[p->i] == '-' && p->i > a))) {
			char d = p->s[p->i++];
			if (d < '0' || d > '9')
				frac = true;
			else if (!frac && x < INT64_MAX / 10 - 10)
				x = x * 10 + (d - '0');
			else if (!frac)
				frac = true; /* too long for an int: keep the text */
		}
		if (frac || p->i - a > 18)
			v = (struct jv){.t = JV_FLOAT, .u.s = p->s + a, .n = (uint32_t)(p->i - a)};
		else
			v = jj_int(c == '-' ? -x : x);
	} else {
		jj_fail(j, -LLMK_EINVAL, 0, "tools: bad JSON at byte %zu", p->i);
	}
	p->depth--;
	return v;
}

struct jv jj_json_parse(struct jj *j, const char *s, size_t n)
{
	struct jp p = {s, n, 0, 0};
	struct jv v = jp_value(j, &p);
	jp_ws(&p);
	if (!j->err && p.i != n)
		jj_fail(j, -LLMK_EINVAL, 0, "tools: bytes after the JSON value");
	return v;
}

