/*
 * llm/jinja_fn.c — the Jinja interpreter's built-ins: the filters, tests,
 * global functions (range, namespace, raise_exception, dict, strftime_now)
 * and the str/dict/list methods chat templates call, with Python's semantics
 * where the output depends on them (str.title and split as Python's;
 * tojson is in jinja_json.c).
 */
#include "jinja_int.h"

enum {
	F_RANGE, F_NAMESPACE, F_RAISE, F_DICT, F_STRFTIME, F_GLOBALS,
	M_ITEMS = F_GLOBALS, M_KEYS, M_VALUES, M_GET, M_STRIP, M_LSTRIP, M_RSTRIP, M_STARTSWITH,
	M_ENDSWITH, M_SPLIT, M_UPPER, M_LOWER, M_TITLE, M_CAPITALIZE, M_REPLACE, M_FIND, M_JOIN,
	M_APPEND, M_POP, M_FORMAT, M_N
};

static const char *const globals[F_GLOBALS] = {"range", "namespace", "raise_exception", "dict",
					       "strftime_now"};

/* name, the receiver's type it belongs to */
static const struct { const char *name; uint8_t on; } methods[M_N - F_GLOBALS] = {
	{"items", JV_DICT}, {"keys", JV_DICT}, {"values", JV_DICT}, {"get", JV_DICT},
	{"strip", JV_STR}, {"lstrip", JV_STR}, {"rstrip", JV_STR}, {"startswith", JV_STR},
	{"endswith", JV_STR}, {"split", JV_STR}, {"upper", JV_STR}, {"lower", JV_STR},
	{"title", JV_STR}, {"capitalize", JV_STR}, {"replace", JV_STR}, {"find", JV_STR},
	{"join", JV_STR}, {"append", JV_LIST}, {"pop", JV_LIST}, {"format", JV_STR},
};

/* o.name: a dict's member, else a method of a dict, string or list. */
struct jv jj_getattr(struct jj *j, const struct jv *o, const char *name, uint32_t n)
{
	if (o->t == JV_DICT) {
		struct jv *v = jj_dict_get(o->u.d, name, n);
		if (v)
			return *v;
	}
	if (o->t == JV_DICT || o->t == JV_STR || o->t == JV_LIST)
		return jj_method(j, o, name, n, 0);
	return (struct jv){.t = JV_UNDEF};
}

int jj_builtin_global(const char *name, uint32_t n)
{
	for (int i = 0; i < F_GLOBALS; i++)
		if (jj_name_is(name, n, globals[i]))
			return i;
	return -1;
}

struct jv jj_method(struct jj *j, const struct jv *self, const char *name, uint32_t n,
		    uint32_t pos)
{
	(void)pos;
	for (int i = 0; i < M_N - F_GLOBALS; i++)
		if (methods[i].on == self->t && jj_name_is(name, n, methods[i].name)) {
			struct jv *s = jj_alloc(j, sizeof *s);
			if (!s)
				return jj_none();
			*s = *self;
			return (struct jv){.t = JV_METHOD, .fn = (uint16_t)(F_GLOBALS + i), .u.self = s};
		}
	return (struct jv){.t = JV_UNDEF};
}

/* ---- helpers ---- */

static bool strchr_in(const char *set, char c)
{
	for (; *set; set++)
		if (*set == c)
			return true;
	return false;
}

static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool in_set(const struct jv *set, char c)
{
	if (!set)
		return is_space(c);
	for (uint32_t i = 0; i < set->n; i++)
		if (set->u.s[i] == c)
			return true;
	return false;
}

/* s stripped on the left (1), right (2) or both (3) of chars (NULL: whitespace) */
static struct jv strip(struct jj *j, const struct jv *s, int sides, const struct jv *chars)
{
	uint32_t a = 0, b = s->n;
	if (sides & 1)
		while (a < b && in_set(chars, s->u.s[a]))
			a++;
	if (sides & 2)
		while (b > a && in_set(chars, s->u.s[b - 1]))
			b--;
	return jj_str(j, s->u.s + a, b - a, s->tm ? s->tm + a : NULL);
}

/* a copy with each byte mapped: 1 upper, 2 lower, 3 title, 4 capitalize */
static struct jv recase(struct jj *j, const struct jv *s, int how)
{
	struct jj_buf b = {0};
	bool prev_alpha = false;

	for (uint32_t i = 0; i < s->n && !j->err; i++) {
		char c = s->u.s[i];
		bool lo = c >= 'a' && c <= 'z', up = c >= 'A' && c <= 'Z';
		bool want_up = how == 1 || (how == 3 && !prev_alpha) || (how == 4 && i == 0);
		if (want_up && lo)
			c = (char)(c - 32);
		else if (!want_up && up)
			c = (char)(c + 32);
		/* Python's title: a word is a run of cased letters (non-ASCII counts) */
		prev_alpha = lo || up || ((unsigned char)c >= 0x80);
		jj_buf_put(j, &b, &c, 1, s->tm ? s->tm + i : NULL);
	}
	return jj_buf_str(&b);
}

static bool starts(const struct jv *s, const struct jv *p, uint32_t at)
{
	return p->t == JV_STR && at <= s->n && p->n <= s->n - at && memcmp(s->u.s + at, p->u.s, p->n) == 0;
}

static struct jv replace(struct jj *j, const struct jv *s, const struct jv *old,
			 const struct jv *new, int64_t count, uint32_t pos)
{
	struct jj_buf b = {0};
	if (old->t != JV_STR || new->t != JV_STR) {
		jj_fail(j, -LLMK_EINVAL, pos, "replace takes two strings");
		return *s;
	}
	for (uint32_t i = 0; i <= s->n && !j->err && jj_step(j, pos);) {
		if (count != 0 && (old->n ? starts(s, old, i) : true)) {
			jj_buf_put(j, &b, new->u.s, new->n, new->tm);
			if (count > 0)
				count--;
			if (old->n) {
				i += old->n;
				continue;
			}
		}
		if (i < s->n)
			jj_buf_put(j, &b, s->u.s + i, 1, s->tm ? s->tm + i : NULL);
		i++;
	}
	return jj_buf_str(&b);
}

static struct jv split(struct jj *j, const struct jv *s, const struct jv *sep, int64_t max,
		       uint32_t pos)
{
	struct jj_list *l = jj_list_new(j, 0);
	uint32_t i = 0, start;

	if (!l)
		return jj_none();
	if (sep && sep->t == JV_STR && sep->n == 0) {
		jj_fail(j, -LLMK_EINVAL, pos, "split with an empty separator");
		return jj_none();
	}
	if (!sep || sep->t != JV_STR) { /* runs of whitespace, none empty */
		for (;;) {
			while (i < s->n && is_space(s->u.s[i]))
				i++;
			if (i >= s->n || !jj_step(j, pos))
				break;
			start = i;
			if (max == 0)
				i = s->n;
			while (i < s->n && !is_space(s->u.s[i]))
				i++;
			if (max > 0)
				max--;
			uint32_t e = i;
			if (e == s->n)
				while (e > start && is_space(s->u.s[e - 1]))
					e--;
			jj_list_push(j, l, jj_str(j, s->u.s + start, e - start, s->tm ? s->tm + start : NULL));
		}
		return (struct jv){.t = JV_LIST, .u.l = l};
	}
	for (start = 0; jj_step(j, pos);) {
		uint32_t k = start;
		while (max != 0 && k < s->n && !starts(s, sep, k))
			k++;
		if (max == 0 || k >= s->n) {
			jj_list_push(j, l, jj_str(j, s->u.s + start, s->n - start, s->tm ? s->tm + start : NULL));
			break;
		}
		jj_list_push(j, l, jj_str(j, s->u.s + start, k - start, s->tm ? s->tm + start : NULL));
		start = k + sep->n;
		if (max > 0)
			max--;
	}
	return (struct jv){.t = JV_LIST, .u.l = l};
}

static struct jv *kwarg(const struct jj_node *const *kw, struct jv *kwv, uint32_t nkw,
			const char *name)
{
	for (uint32_t i = 0; i < nkw; i++)
		if (jj_name_is(kw[i]->s, kw[i]->sn, name))
			return &kwv[i];
	return NULL;
}

/* argument i, or the keyword name, or NULL */
static struct jv *arg(struct jv *a, uint32_t na, uint32_t i, const struct jj_node *const *kw,
		      struct jv *kwv, uint32_t nkw, const char *name)
{
	if (i < na)
		return &a[i];
	return name ? kwarg(kw, kwv, nkw, name) : NULL;
}

static struct jj_list *to_list(struct jj *j, const struct jv *v, uint32_t pos)
{
	struct jj_list *l;
	if (v->t == JV_LIST)
		return v->u.l;
	if (!(l = jj_list_new(j, 0)))
		return NULL;
	if (v->t == JV_DICT)
		for (uint32_t i = 0; i < v->u.d->n; i++)
			jj_list_push(j, l, v->u.d->k[i]);
	else if (v->t == JV_STR)
		for (uint32_t i = 0; i < v->n; i++)
			jj_list_push(j, l, jj_str(j, v->u.s + i, 1, v->tm ? v->tm + i : NULL));
	else if (v->t != JV_UNDEF && v->t != JV_NONE)
		jj_fail(j, -LLMK_EINVAL, pos, "a value that is not a sequence");
	return l;
}

static struct jv list_v(struct jj_list *l)
{
	return l ? (struct jv){.t = JV_LIST, .u.l = l} : jj_none();
}

static uint32_t utf8_len(const struct jv *s)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->n; i++)
		n += ((unsigned char)s->u.s[i] & 0xc0) != 0x80;
	return n;
}

static struct jv items(struct jj *j, const struct jv *d, uint32_t pos)
{
	struct jj_list *l;
	if (d->t != JV_DICT) {
		if (d->t != JV_UNDEF)
			jj_fail(j, -LLMK_EINVAL, pos, "items() of a value that is not a dict");
		return list_v(jj_list_new(j, 0));
	}
	if (!(l = jj_list_new(j, d->u.d->n)))
		return jj_none();
	for (uint32_t i = 0; i < d->u.d->n; i++) {
		struct jj_list *p = jj_list_new(j, 2);
		if (!p)
			return jj_none();
		jj_list_push(j, p, d->u.d->k[i]);
		jj_list_push(j, p, d->u.d->v[i]);
		jj_list_push(j, l, list_v(p));
	}
	return list_v(l);
}

/* ---- calls of global functions and methods ---- */

static struct jv range(struct jj *j, struct jv *a, uint32_t na, uint32_t pos)
{
	int64_t lo = 0, hi, step = 1;
	struct jj_list *l;

	for (uint32_t i = 0; i < na; i++)
		if (a[i].t != JV_INT && a[i].t != JV_BOOL) {
			jj_fail(j, -LLMK_EINVAL, pos, "range takes integers");
			return jj_none();
		}
	if (na == 1)
		hi = a[0].u.i;
	else if (na == 2 || na == 3)
		lo = a[0].u.i, hi = a[1].u.i, step = na == 3 ? a[2].u.i : 1;
	else {
		jj_fail(j, -LLMK_EINVAL, pos, "range takes 1 to 3 arguments");
		return jj_none();
	}
	if (step == 0) {
		jj_fail(j, -LLMK_EINVAL, pos, "range step is zero");
		return jj_none();
	}
	/* the count, bounded before any allocation */
	uint64_t cnt = step > 0 ? (hi > lo ? ((uint64_t)hi - (uint64_t)lo + (uint64_t)step - 1) / (uint64_t)step : 0)
			       : (lo > hi ? ((uint64_t)lo - (uint64_t)hi + (uint64_t)(-step) - 1) / (uint64_t)(-step) : 0);
	if (cnt > j->steps || cnt > (1u << 24)) {
		jj_fail(j, -LLMK_EBUDGET, pos, "range of %llu items is over the step budget",
			(unsigned long long)cnt);
		return jj_none();
	}
	if (!(l = jj_list_new(j, (uint32_t)cnt)))
		return jj_none();
	for (uint64_t i = 0; i < cnt; i++)
		jj_list_push(j, l, jj_int(lo + (int64_t)i * step));
	return list_v(l);
}

static struct jv kw_dict(struct jj *j, const struct jj_node *const *kw, struct jv *kwv,
			 uint32_t nkw, bool ns)
{
	struct jj_dict *d = jj_dict_new(j, nkw);
	if (!d)
		return jj_none();
	for (uint32_t i = 0; i < nkw; i++)
		jj_dict_set(j, d, jj_str(j, kw[i]->s, kw[i]->sn, NULL), kwv[i]);
	return (struct jv){.t = JV_DICT, .ns = ns, .u.d = d};
}

static bool str_arg(struct jj *j, const struct jv *v, uint32_t pos, const char *what)
{
	if (v && v->t == JV_STR)
		return true;
	jj_fail(j, -LLMK_EINVAL, pos, "%s takes a string", what);
	return false;
}

static struct jv starts_ends(struct jj *j, const struct jv *s, const struct jv *p, bool end,
			     uint32_t pos)
{
	if (p && p->t == JV_LIST) {
		for (uint32_t i = 0; i < p->u.l->n; i++) {
			struct jv r = starts_ends(j, s, &p->u.l->v[i], end, pos);
			if (r.u.i || j->err)
				return r;
		}
		return jj_bool(false);
	}
	if (!str_arg(j, p, pos, end ? "endswith" : "startswith"))
		return jj_bool(false);
	return jj_bool(p->n <= s->n && starts(s, p, end ? s->n - p->n : 0));
}

static struct jv join(struct jj *j, const struct jv *seq, const struct jv *sep,
		      const struct jv *attr, uint32_t pos)
{
	struct jj_list *l = to_list(j, seq, pos);
	struct jj_buf b = {0};

	for (uint32_t i = 0; l && i < l->n && !j->err; i++) {
		struct jv v = l->v[i];
		if (i && sep)
			jj_buf_put(j, &b, sep->u.s, sep->n, sep->tm);
		if (attr && attr->t == JV_STR)
			v = jj_getattr(j, &v, attr->u.s, attr->n);
		jj_to_str(j, &b, &v);
	}
	return jj_buf_str(&b);
}

/* strftime_now(fmt) on j->today ("YYYY-MM-DD"), the time 00:00:00: the
 * directives chat templates use (%Y %m %d %-d %b %B %y %H %M %S %%) */
static struct jv strftime_now(struct jj *j, const struct jv *f, uint32_t pos)
{
	static const char *const mon[12] = {"January", "February", "March", "April", "May", "June",
		"July", "August", "September", "October", "November", "December"};
	const char *t = j->today;
	struct jj_buf b = {0};
	int y, m, d;

	if (!str_arg(j, f, pos, "strftime_now"))
		return jj_none();
	if (strlen(t) != 10)
		goto bad;
	y = (t[0] - '0') * 1000 + (t[1] - '0') * 100 + (t[2] - '0') * 10 + (t[3] - '0');
	m = (t[5] - '0') * 10 + (t[6] - '0');
	d = (t[8] - '0') * 10 + (t[9] - '0');
	if (m < 1 || m > 12 || d < 1 || d > 31 || y < 1000 || y > 9999)
		goto bad;
	for (uint32_t i = 0; i < f->n && !j->err; i++) {
		char c = f->u.s[i], num[8];
		if (c != '%' || i + 1 >= f->n) {
			jj_buf_putc(j, &b, c);
			continue;
		}
		c = f->u.s[++i];
		bool nopad = c == '-' && i + 1 < f->n;
		if (nopad)
			c = f->u.s[++i];
		int v = c == 'Y' ? y : c == 'y' ? y % 100 : c == 'm' ? m : c == 'd' ? d : 0;
		if (c == 'b' || c == 'B')
			jj_buf_put(j, &b, mon[m - 1], c == 'b' ? 3 : (uint32_t)strlen(mon[m - 1]), NULL);
		else if (c == '%')
			jj_buf_putc(j, &b, '%');
		else if (strchr_in("YymdHMS", c)) {
			int n = plat_snprintf(num, sizeof num, nopad || c == 'Y' ? "%d" : "%02d", v);
			jj_buf_put(j, &b, num, (uint32_t)n, NULL);
		} else {
			jj_fail(j, -LLMK_ENOTSUP, pos, "strftime_now: %%%c is not supported", c);
		}
	}
	return jj_buf_str(&b);
bad:
	jj_fail(j, -LLMK_EINVAL, pos, "strftime_now: the date '%.16s' is not YYYY-MM-DD", t);
	return jj_none();
}

/* str.format: "{}" and "{0}" take the positional arguments, "{{" "}}" are braces */
static struct jv format(struct jj *j, const struct jv *s, struct jv *a, uint32_t na, uint32_t pos)
{
	struct jj_buf b = {0};
	uint32_t next = 0;

	for (uint32_t i = 0; i < s->n && !j->err; i++) {
		char c = s->u.s[i];
		if ((c == '{' || c == '}') && i + 1 < s->n && s->u.s[i + 1] == c) {
			jj_buf_putc(j, &b, c);
			i++;
			continue;
		}
		if (c != '{') {
			jj_buf_put(j, &b, s->u.s + i, 1, s->tm ? s->tm + i : NULL);
			continue;
		}
		uint32_t k = i + 1, idx = next++;
		if (k < s->n && s->u.s[k] >= '0' && s->u.s[k] <= '9')
			idx = (uint32_t)(s->u.s[k++] - '0');
		if (k >= s->n || s->u.s[k] != '}' || idx >= na) {
			jj_fail(j, -LLMK_ENOTSUP, pos, "format: only {} and {N} with as many arguments");
			break;
		}
		jj_to_str(j, &b, &a[idx]);
		i = k;
	}
	return jj_buf_str(&b);
}

struct jv jj_builtin_call(struct jj *j, const struct jv *f, struct jv *a, uint32_t na,
			  const struct jj_node *const *kw, struct jv *kwv, uint32_t nkw, uint32_t pos)
{
	const struct jv *self = f->t == JV_METHOD ? f->u.self : NULL;
	struct jv *x = arg(a, na, 0, kw, kwv, nkw, NULL), *y = arg(a, na, 1, kw, kwv, nkw, NULL);

	switch (f->fn) {
	case F_RANGE: return range(j, a, na, pos);
	case F_NAMESPACE: return kw_dict(j, kw, kwv, nkw, true);
	case F_DICT: return kw_dict(j, kw, kwv, nkw, false);
	case F_RAISE: {
		struct jj_buf b = {0};
		if (x)
			jj_to_str(j, &b, x);
		jj_buf_putc(j, &b, 0);
		if (!j->err)
			jj_fail(j, -LLMK_EINVAL, pos, "raise_exception: %.100s", b.p);
		return jj_none();
	}
	case F_STRFTIME: return strftime_now(j, x, pos);
	case M_FORMAT: return format(j, self, a, na, pos);
	case M_ITEMS: return items(j, self, pos);
	case M_KEYS:
	case M_VALUES: {
		struct jj_list *l = jj_list_new(j, self->u.d->n);
		for (uint32_t i = 0; l && i < self->u.d->n; i++)
			jj_list_push(j, l, f->fn == M_KEYS ? self->u.d->k[i] : self->u.d->v[i]);
		return list_v(l);
	}
	case M_GET: {
		if (!x)
			return jj_none();
		for (uint32_t i = 0; i < self->u.d->n; i++)
			if (jj_equal(&self->u.d->k[i], x))
				return self->u.d->v[i];
		return y ? *y : jj_none();
	}
	case M_STRIP:
	case M_LSTRIP:
	case M_RSTRIP:
		if (x && x->t != JV_STR && x->t != JV_NONE && !str_arg(j, x, pos, "strip"))
			return jj_none();
		return strip(j, self, f->fn == M_STRIP ? 3 : f->fn == M_LSTRIP ? 1 : 2,
			     x && x->t == JV_STR ? x : NULL);
	case M_STARTSWITH:
	case M_ENDSWITH: return starts_ends(j, self, x, f->fn == M_ENDSWITH, pos);
	case M_SPLIT: {
		struct jv *mx = arg(a, na, 1, kw, kwv, nkw, "maxsplit");
		struct jv *sp = arg(a, na, 0, kw, kwv, nkw, "sep");
		return split(j, self, sp && sp->t == JV_STR ? sp : NULL,
			     mx && mx->t == JV_INT ? mx->u.i : -1, pos);
	}
	case M_UPPER: return recase(j, self, 1);
	case M_LOWER: return recase(j, self, 2);
	case M_TITLE: return recase(j, self, 3);
	case M_CAPITALIZE: return recase(j, self, 4);
	case M_REPLACE: {
		struct jv *c = arg(a, na, 2, kw, kwv, nkw, "count");
		if (!x || !y) {
			jj_fail(j, -LLMK_EINVAL, pos, "replace takes two strings");
			return jj_none();
		}
		return replace(j, self, x, y, c && c->t == JV_INT ? c->u.i : -1, pos);
	}
	case M_FIND:
		if (!str_arg(j, x, pos, "find"))
			return jj_none();
		for (uint32_t i = 0; i + x->n <= self->n; i++)
			if (starts(self, x, i))
				return jj_int(i);
		return jj_int(-1);
	case M_JOIN: return x ? join(j, x, self, NULL, pos) : jj_none();
	case M_APPEND:
		if (x)
			jj_list_push(j, self->u.l, *x);
		return jj_none();
	case M_POP: {
		struct jj_list *l = self->u.l;
		int64_t i = x && x->t == JV_INT ? x->u.i : -1;
		if (i < 0)
			i += l->n;
		if (i < 0 || i >= l->n) {
			jj_fail(j, -LLMK_EINVAL, pos, "pop from an empty list or past its end");
			return jj_none();
		}
		struct jv v = l->v[i];
		memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof v);
		l->n--;
		return v;
	}
	default:
		jj_fail(j, -LLMK_EINVAL, pos, "not a function");
		return jj_none();
	}
}

/* ---- tests ---- */

bool jj_test(struct jj *j, const char *name, uint32_t n, const struct jv *v, struct jv *args,
	     uint32_t na, uint32_t pos)
{
	const struct jv *x = na ? &args[0] : NULL;
#define IS(s) jj_name_is(name, n, s)
	if (IS("defined"))
		return v->t != JV_UNDEF;
	if (IS("undefined"))
		return v->t == JV_UNDEF;
	if (IS("none"))
		return v->t == JV_NONE;
	if (IS("string"))
		return v->t == JV_STR;
	if (IS("number"))
		return v->t == JV_INT || v->t == JV_FLOAT;
	if (IS("integer"))
		return v->t == JV_INT;
	if (IS("float"))
		return v->t == JV_FLOAT;
	if (IS("boolean"))
		return v->t == JV_BOOL;
	if (IS("true"))
		return v->t == JV_BOOL && v->u.i;
	if (IS("false"))
		return v->t == JV_BOOL && !v->u.i;
	if (IS("mapping"))
		return v->t == JV_DICT;
	if (IS("iterable"))
		return v->t == JV_LIST || v->t == JV_DICT || v->t == JV_STR;
	if (IS("sequence"))
		return v->t == JV_LIST || v->t == JV_STR || v->t == JV_DICT;
	if (IS("callable"))
		return v->t == JV_MACRO || v->t == JV_FN || v->t == JV_METHOD;
	if (IS("lower") || IS("upper")) {
		if (v->t != JV_STR)
			return false;
		for (uint32_t i = 0; i < v->n; i++)
			if (IS("lower") ? (v->u.s[i] >= 'A' && v->u.s[i] <= 'Z')
					: (v->u.s[i] >= 'a' && v->u.s[i] <= 'z'))
				return false;
		return true;
	}
	if (IS("even") || IS("odd") || IS("divisibleby")) {
		int64_t d = IS("divisibleby") ? (x && x->t == JV_INT ? x->u.i : 0) : 2;
		if (v->t != JV_INT || d == 0) {
			jj_fail(j, -LLMK_EINVAL, pos, "'%.*s' tests an integer", (int)n, name);
			return false;
		}
		return IS("odd") ? v->u.i % 2 != 0 : v->u.i % d == 0;
	}
	if (IS("eq") || IS("equalto") || IS("==") || IS("sameas"))
		return x && jj_equal(v, x);
	if (IS("ne") || IS("!="))
		return x && !jj_equal(v, x);
	if (IS("in")) {
		if (x && x->t == JV_LIST)
			for (uint32_t i = 0; i < x->u.l->n; i++)
				if (jj_equal(&x->u.l->v[i], v))
					return true;
		return false;
	}
#undef IS
	jj_fail(j, -LLMK_ENOTSUP, pos, "the test '%.*s' is not supported", (int)(n > 32 ? 32 : n), name);
	return false;
}

/* ---- filters ---- */

/* select/reject(test, args), selectattr/rejectattr(attr, test, args) */
static struct jv select_(struct jj *j, struct jv *a, uint32_t na, bool attr, bool keep,
			 uint32_t pos)
{
	struct jj_list *l = to_list(j, &a[0], pos), *o = jj_list_new(j, 0);
	uint32_t t = attr ? 2 : 1;

	if (attr && (na < 2 || a[1].t != JV_STR)) {
		jj_fail(j, -LLMK_EINVAL, pos, "selectattr takes an attribute name");
		return jj_none();
	}
	if (na > t && a[t].t != JV_STR) {
		jj_fail(j, -LLMK_EINVAL, pos, "a test's name is a string");
		return jj_none();
	}
	for (uint32_t i = 0; l && o && i < l->n && !j->err; i++) {
		struct jv v = attr ? jj_getattr(j, &l->v[i], a[1].u.s, a[1].n) : l->v[i];
		bool ok = na > t ? jj_test(j, a[t].u.s, a[t].n, &v, a + t + 1, na - t - 1, pos)
				 : jj_truthy(&v);
		if (ok == keep)
			jj_list_push(j, o, l->v[i]);
	}
	return list_v(o);
}

struct jv jj_filter(struct jj *j, const char *name, uint32_t n, struct jv *a, uint32_t na,
		    const struct jj_node *const *kw, struct jv *kwv, uint32_t nkw, uint32_t pos)
{
	struct jv *v = &a[0], *x = arg(a, na, 1, kw, kwv, nkw, NULL);
#define IS(s) jj_name_is(name, n, s)
	if (IS("safe") || IS("e") || IS("escape"))
		return *v;
	if (IS("trim")) {
		struct jv *c = arg(a, na, 1, kw, kwv, nkw, "chars");
		if (v->t != JV_STR) {
			struct jj_buf b = {0};
			jj_to_str(j, &b, v);
			struct jv s = jj_buf_str(&b);
			return strip(j, &s, 3, NULL);
		}
		return strip(j, v, 3, c && c->t == JV_STR ? c : NULL);
	}
	if (IS("length") || IS("count")) {
		if (v->t == JV_STR)
			return jj_int(utf8_len(v));
		if (v->t == JV_LIST)
			return jj_int(v->u.l->n);
		if (v->t == JV_DICT)
			return jj_int(v->u.d->n);
		if (v->t == JV_UNDEF)
			return jj_int(0);
		jj_fail(j, -LLMK_EINVAL, pos, "length of a value that has none");
		return jj_none();
	}
	if (IS("tojson")) {
		struct jv *ind = arg(a, na, 1, kw, kwv, nkw, "indent");
		struct jj_buf b = {0};
		int indent = ind && ind->t == JV_INT ? (int)(ind->u.i > 16 ? 16 : ind->u.i < 0 ? 0 : ind->u.i) : -1;
		jj_tojson(j, &b, v, indent, 0);
		return jj_buf_str(&b);
	}
	if (IS("string")) {
		struct jj_buf b = {0};
		if (v->t == JV_STR)
			return *v;
		jj_to_str(j, &b, v);
		return jj_buf_str(&b);
	}
	if (IS("upper") || IS("lower") || IS("title") || IS("capitalize")) {
		if (v->t != JV_STR) {
			jj_fail(j, -LLMK_EINVAL, pos, "'%.*s' takes a string", (int)n, name);
			return jj_none();
		}
		return recase(j, v, IS("upper") ? 1 : IS("lower") ? 2 : IS("title") ? 3 : 4);
	}
	if (IS("default") || IS("d")) {
		struct jv *b = arg(a, na, 2, kw, kwv, nkw, "boolean");
		struct jv *dv = arg(a, na, 1, kw, kwv, nkw, "default_value");
		bool use = v->t == JV_UNDEF || (b && jj_truthy(b) && !jj_truthy(v));
		return use ? (dv ? *dv : jj_cstr("")) : *v;
	}
	if (IS("first") || IS("last")) {
		if (v->t == JV_STR && v->n)
			return jj_str(j, v->u.s + (IS("first") ? 0 : v->n - 1), 1,
				      v->tm ? v->tm + (IS("first") ? 0 : v->n - 1) : NULL);
		struct jj_list *l = to_list(j, v, pos);
		if (!l || !l->n)
			return (struct jv){.t = JV_UNDEF};
		return l->v[IS("first") ? 0 : l->n - 1];
	}
	if (IS("join")) {
		struct jv *sep = arg(a, na, 1, kw, kwv, nkw, "d");
		return join(j, v, sep && sep->t == JV_STR ? sep : NULL,
			    arg(a, na, 2, kw, kwv, nkw, "attribute"), pos);
	}
	if (IS("replace")) {
		struct jv *y = arg(a, na, 2, kw, kwv, nkw, NULL), *c = arg(a, na, 3, kw, kwv, nkw, "count");
		if (v->t != JV_STR || !x || !y) {
			jj_fail(j, -LLMK_EINVAL, pos, "replace takes a string and two more");
			return jj_none();
		}
		return replace(j, v, x, y, c && c->t == JV_INT ? c->u.i : -1, pos);
	}
	if (IS("items"))
		return items(j, v, pos);
	if (IS("list"))
		return list_v(to_list(j, v, pos));
	if (IS("reverse")) {
		if (v->t == JV_STR) {
			struct jj_buf b = {0};
			for (uint32_t i = v->n; i-- > 0;)
				jj_buf_put(j, &b, v->u.s + i, 1, v->tm ? v->tm + i : NULL);
			return jj_buf_str(&b);
		}
		struct jj_list *l = to_list(j, v, pos), *o = l ? jj_list_new(j, l->n) : NULL;
		for (uint32_t i = o ? l->n : 0; i-- > 0;)
			jj_list_push(j, o, l->v[i]);
		return list_v(o);
	}
	if (IS("selectattr") || IS("rejectattr"))
		return select_(j, a, na, true, IS("selectattr"), pos);
	if (IS("select") || IS("reject"))
		return select_(j, a, na, false, IS("select"), pos);
	if (IS("map")) {
		struct jv *at = kwarg(kw, kwv, nkw, "attribute");
		struct jj_list *l = to_list(j, v, pos), *o = l ? jj_list_new(j, l->n) : NULL;
		if (!at && (!x || x->t != JV_STR)) {
			jj_fail(j, -LLMK_EINVAL, pos, "map takes attribute= or a filter's name");
			return jj_none();
		}
		for (uint32_t i = 0; o && i < l->n && !j->err; i++) {
			struct jv r;
			if (at)
				r = at->t == JV_STR ? jj_getattr(j, &l->v[i], at->u.s, at->n)
						    : (struct jv){.t = JV_UNDEF};
			else {
				struct jv fa[1] = {l->v[i]};
				r = jj_filter(j, x->u.s, x->n, fa, 1, NULL, NULL, 0, pos);
			}
			jj_list_push(j, o, r);
		}
		return list_v(o);
	}
	if (IS("int")) {
		if (v->t == JV_INT || v->t == JV_BOOL)
			return jj_int(v->u.i);
		int64_t r = 0, sg = 1;
		uint32_t i = 0;
		if (v->t == JV_STR || v->t == JV_FLOAT) {
			if (i < v->n && v->u.s[i] == '-')
				sg = -1, i++;
			for (; i < v->n && v->u.s[i] >= '0' && v->u.s[i] <= '9' && r < INT64_MAX / 10 - 10; i++)
				r = r * 10 + (v->u.s[i] - '0');
		}
		return jj_int(sg * r);
	}
	if (IS("abs")) {
		if (v->t != JV_INT || v->u.i == INT64_MIN) {
			jj_fail(j, -LLMK_EINVAL, pos, "abs takes an integer");
			return jj_none();
		}
		return jj_int(v->u.i < 0 ? -v->u.i : v->u.i);
	}
	if (IS("indent")) {
		struct jv *w = arg(a, na, 1, kw, kwv, nkw, "width");
		struct jv *first = arg(a, na, 2, kw, kwv, nkw, "first");
		int64_t wd = w && w->t == JV_INT ? w->u.i : 4;
		struct jj_buf b = {0};
		if (v->t != JV_STR || wd < 0 || wd > 64) {
			jj_fail(j, -LLMK_EINVAL, pos, "indent takes a string and a width 0..64");
			return jj_none();
		}
		for (uint32_t i = 0; i < v->n && !j->err; i++) {
			if ((i == 0 && first && jj_truthy(first)) || (i > 0 && v->u.s[i - 1] == '\n' && v->u.s[i] != '\n'))
				for (int64_t k = 0; k < wd; k++)
					jj_buf_putc(j, &b, ' ');
			jj_buf_put(j, &b, v->u.s + i, 1, v->tm ? v->tm + i : NULL);
		}
		return jj_buf_str(&b);
	}
	if (IS("dictsort")) { /* a dict's (key, value) pairs by key */
		struct jv l = items(j, v, pos);
		if (j->err || l.t != JV_LIST)
			return jj_none();
		struct jj_list *p = l.u.l;
		for (uint32_t i = 1; i < p->n && jj_step(j, pos); i++)
			for (uint32_t k = i; k > 0 && !j->err; k--) {
				struct jv *x0 = &p->v[k - 1].u.l->v[0], *x1 = &p->v[k].u.l->v[0];
				int c;
				if (x0->t == JV_INT && x1->t == JV_INT)
					c = x0->u.i < x1->u.i ? -1 : x0->u.i > x1->u.i;
				else if (x0->t == JV_STR && x1->t == JV_STR) {
					uint32_t m = x0->n < x1->n ? x0->n : x1->n;
					c = memcmp(x0->u.s, x1->u.s, m);
					c = c ? c : x0->n < x1->n ? -1 : x0->n > x1->n;
				} else {
					jj_fail(j, -LLMK_ENOTSUP, pos, "dictsort of keys not all strings or all integers");
					break;
				}
				if (c <= 0 || !jj_step(j, pos))
					break;
				struct jv t = p->v[k];
				p->v[k] = p->v[k - 1];
				p->v[k - 1] = t;
			}
		return l;
	}
	if (IS("unique")) {
		struct jj_list *l = to_list(j, v, pos), *o = l ? jj_list_new(j, 0) : NULL;
		for (uint32_t i = 0; o && i < l->n && jj_step(j, pos); i++) {
			bool seen = false;
			for (uint32_t k = 0; k < o->n && !seen; k++)
				seen = jj_equal(&o->v[k], &l->v[i]);
			if (!seen)
				jj_list_push(j, o, l->v[i]);
		}
		return list_v(o);
	}
#undef IS
	jj_fail(j, -LLMK_ENOTSUP, pos, "the filter '%.*s' is not supported", (int)(n > 32 ? 32 : n), name);
	return jj_none();
}
