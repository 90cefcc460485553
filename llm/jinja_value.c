/*
 * llm/jinja_value.c — the Jinja interpreter's values (jinja_int.h): the
 * arena, errors and the step budget; strings with their taint maps built in
 * growing buffers; lists and ordered dicts shared by reference; truth,
 * equality and str() as Python's (a value that holds itself is compared and
 * printed only to JJ_VALUE_DEPTH).
 */
#include "jinja_int.h"

void *jj_alloc(struct jj *j, size_t n)
{
	size_t at = (j->used + 7) & ~(size_t)7;

	if (j->err)
		return NULL;
	if (n > j->size || at > j->size - n) {
		jj_fail(j, -LLMK_ENOMEM, 0, "the template needs more than %zu bytes of memory",
			j->size);
		return NULL;
	}
	j->used = at + n;
	return j->arena + at;
}

void jj_fail(struct jj *j, int code, uint32_t pos, const char *fmt, ...)
{
	uint32_t line = 1, col = 1;
	char what[160];
	va_list ap;

	if (j->err)
		return;
	j->err = code;
	for (uint32_t i = 0; i < pos && i < j->srclen; i++, col++)
		if (j->src[i] == '\n')
			line++, col = 0;
	va_start(ap, fmt);
	plat_vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (pos)
		plat_snprintf(j->msg, j->msglen, "chat template (jinja) at %u:%u: %s", line, col, what);
	else
		plat_snprintf(j->msg, j->msglen, "chat template (jinja): %s", what);
	/* one line: a raise_exception's text from the template may hold newlines */
	for (size_t i = 0; j->msglen && j->msg[i]; i++)
		if ((unsigned char)j->msg[i] < 0x20 || j->msg[i] == 0x7f)
			j->msg[i] = ' ';
}

bool jj_step(struct jj *j, uint32_t pos)
{
	if (j->err)
		return false;
	if (j->steps == 0) {
		jj_fail(j, -LLMK_EBUDGET, pos, "the template ran out of its step budget");
		return false;
	}
	j->steps--;
	return true;
}

bool jj_name_is(const char *s, uint32_t n, const char *want)
{
	size_t w = strlen(want);
	return n == w && memcmp(s, want, n) == 0;
}

/* ---- values ---- */

struct jv jj_none(void)
{
	return (struct jv){.t = JV_NONE};
}

struct jv jj_int(int64_t i)
{
	return (struct jv){.t = JV_INT, .u.i = i};
}

struct jv jj_bool(bool b)
{
	return (struct jv){.t = JV_BOOL, .u.i = b};
}

struct jv jj_cstr(const char *s)
{
	return (struct jv){.t = JV_STR, .n = (uint32_t)strlen(s), .u.s = s};
}

struct jv jj_str(struct jj *j, const char *s, uint32_t n, const uint8_t *tm)
{
	(void)j;
	return (struct jv){.t = JV_STR, .n = n, .u.s = s, .tm = tm};
}

void jj_buf_put(struct jj *j, struct jj_buf *b, const char *s, uint32_t n, const uint8_t *tm)
{
	if (j->err || n == 0)
		return;
	if (n > UINT32_MAX / 2 - b->n) {
		jj_fail(j, -LLMK_ENOMEM, 0, "a string is too long");
		return;
	}
	if (b->n + n > b->cap) {
		uint32_t cap = b->cap ? b->cap : 32;
		while (cap < b->n + n)
			cap *= 2;
		char *p = jj_alloc(j, cap);
		uint8_t *t = NULL;
		if (!p)
			return;
		if (b->tm && !(t = jj_alloc(j, cap)))
			return;
		if (b->n)
			memcpy(p, b->p, b->n);
		if (t && b->n)
			memcpy(t, b->tm, b->n);
		b->p = p;
		b->tm = t;
		b->cap = cap;
	}
	if (tm && !b->tm) {
		if (!(b->tm = jj_alloc(j, b->cap)))
			return;
		memset(b->tm, 0, b->n);
	}
	memcpy(b->p + b->n, s, n);
	if (b->tm) {
		if (tm)
			memcpy(b->tm + b->n, tm, n);
		else
			memset(b->tm + b->n, 0, n);
	}
	b->n += n;
}

void jj_buf_putc(struct jj *j, struct jj_buf *b, char c)
{
	jj_buf_put(j, b, &c, 1, NULL);
}

struct jv jj_buf_str(struct jj_buf *b)
{
	return (struct jv){.t = JV_STR, .n = b->n, .u.s = b->n ? b->p : "", .tm = b->tm};
}

struct jj_list *jj_list_new(struct jj *j, uint32_t cap)
{
	struct jj_list *l = jj_alloc(j, sizeof *l);
	if (!l)
		return NULL;
	l->n = 0;
	l->cap = cap;
	l->v = cap ? jj_alloc(j, (size_t)cap * sizeof *l->v) : NULL;
	return cap && !l->v ? NULL : l;
}

void jj_list_push(struct jj *j, struct jj_list *l, struct jv v)
{
	if (j->err)
		return;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 4;
		struct jv *nv = jj_alloc(j, (size_t)cap * sizeof *nv);
		if (!nv)
			return;
		if (l->n)
			memcpy(nv, l->v, l->n * sizeof *nv);
		l->v = nv;
		l->cap = cap;
	}
	l->v[l->n++] = v;
}

struct jj_dict *jj_dict_new(struct jj *j, uint32_t cap)
{
	struct jj_dict *d = jj_alloc(j, sizeof *d);
	if (!d)
		return NULL;
	memset(d, 0, sizeof *d);
	if (cap) {
		d->k = jj_alloc(j, (size_t)cap * sizeof *d->k);
		d->v = jj_alloc(j, (size_t)cap * sizeof *d->v);
		if (!d->k || !d->v)
			return NULL;
		d->cap = cap;
	}
	return d;
}

struct jv *jj_dict_find(struct jj_dict *d, const struct jv *k)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (jj_equal(&d->k[i], k))
			return &d->v[i];
	return NULL;
}

struct jv *jj_dict_get(struct jj_dict *d, const char *k, uint32_t n)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (d->k[i].t == JV_STR && d->k[i].n == n && memcmp(d->k[i].u.s, k, n) == 0)
			return &d->v[i];
	return NULL;
}

void jj_dict_set(struct jj *j, struct jj_dict *d, struct jv k, struct jv v)
{
	struct jv *at;

	if (j->err)
		return;
	if (k.t == JV_LIST || k.t == JV_DICT) { /* unhashable, as in Python */
		jj_fail(j, -LLMK_EINVAL, 0, "a dict's key is a list or a dict");
		return;
	}
	at = jj_dict_find(d, &k);
	if (at) {
		*at = v;
		return;
	}
	if (d->n == d->cap) {
		uint32_t cap = d->cap ? d->cap * 2 : 4;
		struct jv *nk = jj_alloc(j, (size_t)cap * sizeof *nk);
		struct jv *nv = jj_alloc(j, (size_t)cap * sizeof *nv);
		if (!nk || !nv)
			return;
		if (d->n) {
			memcpy(nk, d->k, d->n * sizeof *nk);
			memcpy(nv, d->v, d->n * sizeof *nv);
		}
		d->k = nk;
		d->v = nv;
		d->cap = cap;
	}
	d->k[d->n] = k;
	d->v[d->n++] = v;
}

bool jj_truthy(const struct jv *v)
{
	switch (v->t) {
	case JV_BOOL:
	case JV_INT: return v->u.i != 0;
	case JV_FLOAT: /* zero is "0", "0.0", "0.00"... */
		for (uint32_t i = 0; i < v->n; i++)
			if (v->u.s[i] >= '1' && v->u.s[i] <= '9')
				return true;
		return false;
	case JV_STR: return v->n != 0;
	case JV_LIST: return v->u.l->n != 0;
	case JV_DICT: return v->u.d->n != 0;
	case JV_MACRO:
	case JV_FN:
	case JV_METHOD: return true;
	default: return false;
	}
}

/* A list may hold itself (l.append(l)): comparing, like printing, stops at
 * this depth (unequal there) rather than recursing without end. */
#define JJ_VALUE_DEPTH 32

static bool equal(const struct jv *a, const struct jv *b, int depth)
{
	bool na = a->t == JV_INT || a->t == JV_BOOL, nb = b->t == JV_INT || b->t == JV_BOOL;

	if (na && nb)
		return a->u.i == b->u.i;
	if (a->t != b->t || depth > JJ_VALUE_DEPTH)
		return false;
	switch (a->t) {
	case JV_UNDEF:
	case JV_NONE: return true;
	case JV_FLOAT:
	case JV_STR: return a->n == b->n && memcmp(a->u.s, b->u.s, a->n) == 0;
	case JV_LIST:
		if (a->u.l->n != b->u.l->n)
			return false;
		for (uint32_t i = 0; i < a->u.l->n; i++)
			if (!equal(&a->u.l->v[i], &b->u.l->v[i], depth + 1))
				return false;
		return true;
	case JV_DICT:
		if (a->u.d->n != b->u.d->n)
			return false;
		for (uint32_t i = 0; i < a->u.d->n; i++) {
			struct jv *o = jj_dict_find(b->u.d, &a->u.d->k[i]);
			if (!o || !equal(&a->u.d->v[i], o, depth + 1))
				return false;
		}
		return true;
	default: return a->u.m == b->u.m && a->fn == b->fn;
	}
}

bool jj_equal(const struct jv *a, const struct jv *b)
{
	return equal(a, b, 0);
}

static void put_int(struct jj *j, struct jj_buf *b, int64_t v)
{
	char t[24];
	int n = 0;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	do
		t[n++] = (char)('0' + u % 10);
	while ((u /= 10) && n < 22);
	if (v < 0)
		t[n++] = '-';
	while (n)
		jj_buf_putc(j, b, t[--n]);
}

static bool memchr_n(const char *s, char c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (s[i] == c)
			return true;
	return false;
}

/* Python's repr of a str: single quotes unless it has one and no double */
static void put_repr(struct jj *j, struct jj_buf *b, const struct jv *v)
{
	char q = '\'';
	if (memchr_n(v->u.s, '\'', v->n) && !memchr_n(v->u.s, '"', v->n))
		q = '"';
	jj_buf_putc(j, b, q);
	for (uint32_t i = 0; i < v->n; i++) {
		char c = v->u.s[i];
		const char *e = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r"
			      : c == '\\' ? "\\\\" : c == q ? (q == '\'' ? "\\'" : "\\\"") : NULL;
		if (e)
			jj_buf_put(j, b, e, 2, NULL);
		else
			jj_buf_put(j, b, &v->u.s[i], 1, v->tm ? v->tm + i : NULL);
	}
	jj_buf_putc(j, b, q);
}

static void put_value(struct jj *j, struct jj_buf *b, const struct jv *v, bool repr, int depth)
{
	if (!jj_step(j, 0))
		return;
	if (depth > JJ_VALUE_DEPTH) {
		jj_fail(j, -LLMK_EBUDGET, 0, "a value nests deeper than %d", JJ_VALUE_DEPTH);
		return;
	}
	switch (v->t) {
	case JV_UNDEF: break;
	case JV_NONE: jj_buf_put(j, b, "None", 4, NULL); break;
	case JV_BOOL: jj_buf_put(j, b, v->u.i ? "True" : "False", v->u.i ? 4 : 5, NULL); break;
	case JV_INT: put_int(j, b, v->u.i); break;
	case JV_FLOAT: jj_buf_put(j, b, v->u.s, v->n, NULL); break;
	case JV_STR:
		if (repr)
			put_repr(j, b, v);
		else
			jj_buf_put(j, b, v->u.s, v->n, v->tm);
		break;
	case JV_LIST:
		jj_buf_putc(j, b, '[');
		for (uint32_t i = 0; i < v->u.l->n && !j->err; i++) {
			if (i)
				jj_buf_put(j, b, ", ", 2, NULL);
			put_value(j, b, &v->u.l->v[i], true, depth + 1);
		}
		jj_buf_putc(j, b, ']');
		break;
	case JV_DICT:
		jj_buf_putc(j, b, '{');
		for (uint32_t i = 0; i < v->u.d->n && !j->err; i++) {
			if (i)
				jj_buf_put(j, b, ", ", 2, NULL);
			put_value(j, b, &v->u.d->k[i], true, depth + 1);
			jj_buf_put(j, b, ": ", 2, NULL);
			put_value(j, b, &v->u.d->v[i], true, depth + 1);
		}
		jj_buf_putc(j, b, '}');
		break;
	default: jj_buf_put(j, b, "<function>", 10, NULL); break;
	}
}

void jj_to_str(struct jj *j, struct jj_buf *b, const struct jv *v)
{
	put_value(j, b, v, false, 0);
}

