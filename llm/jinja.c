/*
 * llm/jinja.c — the Jinja interpreter's evaluator and entry points (jinja.h).
 *
 * Values (jinja_value.c) are Python's as Jinja sees them: undefined, None,
 * bool, int, a float kept as its text, str, list, dict (a namespace is a
 * dict whose attributes `set` may change), a macro and the built-in
 * functions. Lists and dicts are shared by reference, as in Python. Scopes are
 * frames: a for loop's body and a macro's call get one of their own (so
 * `set` inside them does not leak out, as in Jinja); if does not.
 */
#include "jinja_int.h"

/* ---- scopes ---- */

static struct jj_frame *frame_new(struct jj *j, struct jj_frame *up)
{
	struct jj_frame *f = jj_alloc(j, sizeof *f);
	if (f)
		*f = (struct jj_frame){.up = up};
	return f;
}

static void frame_set(struct jj *j, struct jj_frame *f, const char *name, uint32_t n, struct jv v)
{
	for (uint32_t i = 0; i < f->n; i++)
		if (f->v[i].n == n && memcmp(f->v[i].name, name, n) == 0) {
			f->v[i].v = v;
			return;
		}
	if (f->n == f->cap) {
		uint32_t cap = f->cap ? f->cap * 2 : 8;
		struct jj_var *nv = jj_alloc(j, cap * sizeof *nv);
		if (!nv)
			return;
		if (f->n)
			memcpy(nv, f->v, f->n * sizeof *nv);
		f->v = nv;
		f->cap = cap;
	}
	f->v[f->n++] = (struct jj_var){name, n, v};
}

static struct jv lookup(struct jj *j, const char *name, uint32_t n)
{
	for (struct jj_frame *f = j->cur; f; f = f->up)
		for (uint32_t i = f->n; i-- > 0;)
			if (f->v[i].n == n && memcmp(f->v[i].name, name, n) == 0)
				return f->v[i].v;
	int fn = jj_builtin_global(name, n);
	if (fn >= 0 && (j->today || !jj_name_is(name, n, "strftime_now")))
		return (struct jv){.t = JV_FN, .fn = (uint16_t)fn};
	return (struct jv){.t = JV_UNDEF};
}

/* ---- expressions ---- */

static struct jv eval(struct jj *j, const struct jj_node *n);

static int64_t norm_index(int64_t i, uint32_t len)
{
	return i < 0 ? i + len : i;
}

static struct jv index_of(struct jj *j, const struct jv *o, const struct jv *k, uint32_t pos)
{
	if (o->t == JV_DICT) {
		struct jv *v = jj_dict_find(o->u.d, k);
		return v ? *v : (struct jv){.t = JV_UNDEF};
	}
	if (k->t == JV_STR)
		return jj_getattr(j, o, k->u.s, k->n);
	if (k->t != JV_INT && k->t != JV_BOOL) {
		if (o->t != JV_UNDEF)
			jj_fail(j, -LLMK_EINVAL, pos, "an index is not a number");
		return (struct jv){.t = JV_UNDEF};
	}
	if (o->t == JV_LIST) {
		int64_t i = norm_index(k->u.i, o->u.l->n);
		return i >= 0 && i < o->u.l->n ? o->u.l->v[i] : (struct jv){.t = JV_UNDEF};
	}
	if (o->t == JV_STR) {
		int64_t i = norm_index(k->u.i, o->n);
		if (i < 0 || i >= o->n)
			return (struct jv){.t = JV_UNDEF};
		return jj_str(j, o->u.s + i, 1, o->tm ? o->tm + i : NULL);
	}
	return (struct jv){.t = JV_UNDEF};
}

static bool slice_part(struct jj *j, const struct jj_node *n, int64_t *out)
{
	if (!n)
		return false;
	struct jv v = eval(j, n);
	if (v.t == JV_NONE || v.t == JV_UNDEF)
		return false;
	if (v.t != JV_INT) {
		jj_fail(j, -LLMK_EINVAL, n->pos, "a slice bound is not a number");
		return false;
	}
	*out = v.u.i;
	return true;
}

/* Python's slice: o[a:b:c] */
static struct jv slice(struct jj *j, const struct jj_node *n)
{
	struct jv o = eval(j, n->a);
	int64_t a = 0, b = 0, c = 1, len;
	bool ha, hb;

	if (o.t != JV_LIST && o.t != JV_STR) {
		if (!j->err && o.t != JV_UNDEF)
			jj_fail(j, -LLMK_EINVAL, n->pos, "only a list or a string can be sliced");
		return (struct jv){.t = JV_UNDEF};
	}
	len = o.t == JV_LIST ? o.u.l->n : o.n;
	ha = slice_part(j, n->b, &a);
	hb = slice_part(j, n->c, &b);
	slice_part(j, n->d, &c);
	if (j->err)
		return o;
	if (c == 0) {
		jj_fail(j, -LLMK_EINVAL, n->pos, "a slice step is zero");
		return o;
	}
	if (!ha)
		a = c > 0 ? 0 : len - 1;
	else if ((a = norm_index(a, (uint32_t)len)) < 0)
		a = c > 0 ? 0 : -1;
	else if (a >= len)
		a = c > 0 ? len : len - 1;
	if (!hb)
		b = c > 0 ? len : -1;
	else if ((b = norm_index(b, (uint32_t)len)) < 0)
		b = c > 0 ? 0 : -1;
	else if (b >= len)
		b = c > 0 ? len : len - 1;
	if (o.t == JV_LIST) {
		struct jj_list *l = jj_list_new(j, 0);
		for (int64_t i = a; l && (c > 0 ? i < b : i > b) && jj_step(j, n->pos); i += c)
			jj_list_push(j, l, o.u.l->v[i]);
		return l ? (struct jv){.t = JV_LIST, .u.l = l} : o;
	}
	if (c == 1)
		return jj_str(j, o.u.s + a, (uint32_t)(b > a ? b - a : 0), o.tm ? o.tm + a : NULL);
	struct jj_buf buf = {0};
	for (int64_t i = a; (c > 0 ? i < b : i > b) && jj_step(j, n->pos); i += c)
		jj_buf_put(j, &buf, o.u.s + i, 1, o.tm ? o.tm + i : NULL);
	return jj_buf_str(&buf);
}

static bool is_num(const struct jv *v)
{
	return v->t == JV_INT || v->t == JV_BOOL;
}

static struct jv arith(struct jj *j, uint8_t op, struct jv a, struct jv b, uint32_t pos)
{
	if (op == OP_CAT || (op == OP_ADD && (a.t == JV_STR || b.t == JV_STR))) {
		struct jj_buf buf = {0};
		if (op == OP_ADD && !((a.t == JV_STR || a.t == JV_UNDEF) && (b.t == JV_STR || b.t == JV_UNDEF))) {
			jj_fail(j, -LLMK_EINVAL, pos, "'+' joins a string and a non-string (use '~')");
			return a;
		}
		jj_to_str(j, &buf, &a);
		jj_to_str(j, &buf, &b);
		return jj_buf_str(&buf);
	}
	if (op == OP_ADD && a.t == JV_LIST && b.t == JV_LIST) {
		struct jj_list *l = jj_list_new(j, a.u.l->n + b.u.l->n);
		for (uint32_t i = 0; l && i < a.u.l->n; i++)
			jj_list_push(j, l, a.u.l->v[i]);
		for (uint32_t i = 0; l && i < b.u.l->n; i++)
			jj_list_push(j, l, b.u.l->v[i]);
		return l ? (struct jv){.t = JV_LIST, .u.l = l} : a;
	}
	if (op == OP_MUL && a.t == JV_STR && is_num(&b)) {
		struct jj_buf buf = {0};
		for (int64_t i = 0; i < b.u.i && jj_step(j, pos); i++)
			jj_buf_put(j, &buf, a.u.s, a.n, a.tm);
		return jj_buf_str(&buf);
	}
	if (!is_num(&a) || !is_num(&b)) {
		jj_fail(j, -LLMK_EINVAL, pos, "arithmetic on a value that is not an integer");
		return a;
	}
	int64_t x = a.u.i, y = b.u.i, r = 0;
	bool bad = false;
	switch (op) {
	case OP_ADD: bad = __builtin_add_overflow(x, y, &r); break;
	case OP_SUB: bad = __builtin_sub_overflow(x, y, &r); break;
	case OP_MUL: bad = __builtin_mul_overflow(x, y, &r); break;
	case OP_DIV:
	case OP_FDIV:
	case OP_MOD:
		if (y == 0 || (x == INT64_MIN && y == -1)) {
			jj_fail(j, -LLMK_EINVAL, pos, "division by zero");
			return a;
		}
		if (op == OP_DIV && x % y) {
			jj_fail(j, -LLMK_ENOTSUP, pos, "a division with a fraction (no floats here)");
			return a;
		}
		r = op == OP_MOD ? x % y : x / y;
		/* Python floors */
		if (op != OP_DIV && (x % y) && ((x < 0) != (y < 0)))
			r = op == OP_MOD ? r + y : r - 1;
		break;
	case OP_POW:
		if (y < 0) {
			jj_fail(j, -LLMK_ENOTSUP, pos, "a negative power");
			return a;
		}
		r = 1;
		for (int64_t i = 0; i < y && !bad; i++)
			bad = __builtin_mul_overflow(r, x, &r) || !jj_step(j, pos);
		break;
	default: break;
	}
	if (bad && !j->err)
		jj_fail(j, -LLMK_EINVAL, pos, "an integer overflows");
	return jj_int(r);
}

static int cmp(struct jj *j, const struct jv *a, const struct jv *b, uint32_t pos)
{
	if (is_num(a) && is_num(b))
		return a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
	if (a->t == JV_STR && b->t == JV_STR) {
		uint32_t n = a->n < b->n ? a->n : b->n;
		int c = memcmp(a->u.s, b->u.s, n);
		return c ? c : a->n < b->n ? -1 : a->n > b->n;
	}
	jj_fail(j, -LLMK_EINVAL, pos, "values that cannot be ordered are compared");
	return 0;
}

static bool contains(struct jj *j, const struct jv *hay, const struct jv *x, uint32_t pos)
{
	if (hay->t == JV_STR) {
		if (x->t != JV_STR) {
			jj_fail(j, -LLMK_EINVAL, pos, "'in' a string needs a string");
			return false;
		}
		if (x->n == 0)
			return true;
		for (uint32_t i = 0; i + x->n <= hay->n; i++)
			if (memcmp(hay->u.s + i, x->u.s, x->n) == 0)
				return true;
		return false;
	}
	if (hay->t == JV_LIST) {
		for (uint32_t i = 0; i < hay->u.l->n; i++)
			if (jj_equal(&hay->u.l->v[i], x))
				return true;
		return false;
	}
	if (hay->t == JV_DICT)
		return jj_dict_find(hay->u.d, x) != NULL;
	if (hay->t != JV_UNDEF)
		jj_fail(j, -LLMK_EINVAL, pos, "'in' needs a string, a list or a dict");
	return false;
}

static struct jv binary(struct jj *j, const struct jj_node *n)
{
	struct jv a = eval(j, n->a), b;

	if (n->op == OP_AND)
		return jj_truthy(&a) ? eval(j, n->b) : a;
	if (n->op == OP_OR)
		return jj_truthy(&a) ? a : eval(j, n->b);
	b = eval(j, n->b);
	if (j->err)
		return a;
	switch (n->op) {
	case OP_EQ: return jj_bool(jj_equal(&a, &b));
	case OP_NE: return jj_bool(!jj_equal(&a, &b));
	case OP_LT: return jj_bool(cmp(j, &a, &b, n->pos) < 0);
	case OP_LE: return jj_bool(cmp(j, &a, &b, n->pos) <= 0);
	case OP_GT: return jj_bool(cmp(j, &a, &b, n->pos) > 0);
	case OP_GE: return jj_bool(cmp(j, &a, &b, n->pos) >= 0);
	case OP_IN: return jj_bool(contains(j, &b, &a, n->pos));
	case OP_NOTIN: return jj_bool(!contains(j, &b, &a, n->pos));
	default: return arith(j, n->op, a, b, n->pos);
	}
}

/* Arguments: positional values first, then keyword names and values. */
struct args {
	struct jv *v, *kwv;
	const struct jj_node **kw;
	uint32_t n, nkw;
};

static bool eval_args(struct jj *j, struct jj_node *const *kid, uint32_t nk, struct args *a)
{
	a->v = nk ? jj_alloc(j, nk * sizeof *a->v) : NULL;
	a->kwv = nk ? jj_alloc(j, nk * sizeof *a->kwv) : NULL;
	a->kw = nk ? jj_alloc(j, nk * sizeof *a->kw) : NULL;
	a->n = a->nkw = 0;
	if (nk && (!a->v || !a->kwv || !a->kw))
		return false;
	for (uint32_t i = 0; i < nk && !j->err; i++) {
		if (kid[i]->k == N_KWARG) {
			a->kw[a->nkw] = kid[i];
			a->kwv[a->nkw++] = eval(j, kid[i]->a);
		} else {
			a->v[a->n++] = eval(j, kid[i]);
		}
	}
	return !j->err;
}

static void exec(struct jj *j, const struct jj_node *n);

static struct jv call_macro(struct jj *j, const struct jj_node *m, struct args *a, uint32_t pos)
{
	struct jj_frame *saved = j->cur, *f;
	struct jj_buf *out = j->out, buf = {0};

	if (j->calls >= JJ_CALL_DEPTH) {
		jj_fail(j, -LLMK_EBUDGET, pos, "macro calls nest deeper than %d", JJ_CALL_DEPTH);
		return jj_none();
	}
	if (a->n > m->nk) {
		jj_fail(j, -LLMK_EINVAL, pos, "the macro takes %u arguments", m->nk);
		return jj_none();
	}
	if (!(f = frame_new(j, j->globals)))
		return jj_none();
	for (uint32_t i = 0; i < m->nk; i++) {
		const struct jj_node *p = m->kid[i];
		struct jv v = {.t = JV_UNDEF};
		if (i < a->n)
			v = a->v[i];
		else {
			bool got = false;
			for (uint32_t k = 0; k < a->nkw; k++)
				if (a->kw[k]->sn == p->sn && memcmp(a->kw[k]->s, p->s, p->sn) == 0)
					v = a->kwv[k], got = true;
			if (!got && p->a) {
				j->cur = f;
				v = eval(j, p->a);
			}
		}
		frame_set(j, f, p->s, p->sn, v);
	}
	j->cur = f;
	j->out = &buf;
	j->calls++;
	exec(j, m->b);
	j->calls--;
	j->out = out;
	j->cur = saved;
	j->brk = 0;
	return jj_buf_str(&buf);
}

struct jv jj_call_value(struct jj *j, const struct jv *f, struct jv *args, uint32_t na,
			const struct jj_node *const *kw, struct jv *kwv, uint32_t nkw, uint32_t pos)
{
	if (f->t == JV_MACRO) {
		struct args a = {args, kwv, (const struct jj_node **)kw, na, nkw};
		return call_macro(j, f->u.m, &a, pos);
	}
	if (f->t == JV_FN || f->t == JV_METHOD)
		return jj_builtin_call(j, f, args, na, kw, kwv, nkw, pos);
	jj_fail(j, -LLMK_EINVAL, pos, "a call of something that is not a function");
	return jj_none();
}

static struct jv eval_inner(struct jj *j, const struct jj_node *n)
{
	struct jv v;
	struct args a;

	switch (n->k) {
	case N_LIT: return n->lit;
	case N_NAME: return lookup(j, n->s, n->sn);
	case N_ATTR:
		v = eval(j, n->a);
		if (n->s[0] >= '0' && n->s[0] <= '9') { /* x.0: an index */
			struct jv k = jj_int(0);
			for (uint32_t i = 0; i < n->sn && k.u.i < 100000000; i++)
				k.u.i = k.u.i * 10 + (n->s[i] - '0');
			return index_of(j, &v, &k, n->pos);
		}
		return jj_getattr(j, &v, n->s, n->sn);
	case N_INDEX: {
		struct jv k;
		v = eval(j, n->a);
		k = eval(j, n->b);
		return j->err ? v : index_of(j, &v, &k, n->pos);
	}
	case N_SLICE: return slice(j, n);
	case N_CALL:
		v = eval(j, n->a);
		if (j->err || !eval_args(j, n->kid, n->nk, &a))
			return v;
		if (v.t == JV_UNDEF) {
			jj_fail(j, -LLMK_EINVAL, n->pos, "a call of an undefined name");
			return v;
		}
		return jj_call_value(j, &v, a.v, a.n, a.kw, a.kwv, a.nkw, n->pos);
	case N_FILTER:
		if (!eval_args(j, n->kid, n->nk, &a))
			return jj_none();
		return jj_filter(j, n->s, n->sn, a.v, a.n, a.kw, a.kwv, a.nkw, n->pos);
	case N_TEST:
		v = eval(j, n->a);
		if (j->err || !eval_args(j, n->kid, n->nk, &a))
			return v;
		return jj_bool(jj_test(j, n->s, n->sn, &v, a.v, a.n, n->pos) != n->neg);
	case N_BIN: return binary(j, n);
	case N_NOT: v = eval(j, n->a); return jj_bool(!jj_truthy(&v));
	case N_NEG:
		v = eval(j, n->a);
		return arith(j, OP_SUB, jj_int(0), v, n->pos);
	case N_COND:
		v = eval(j, n->b);
		if (jj_truthy(&v))
			return eval(j, n->a);
		return n->c ? eval(j, n->c) : (struct jv){.t = JV_UNDEF};
	case N_LIST: {
		struct jj_list *l = jj_list_new(j, n->nk);
		for (uint32_t i = 0; l && i < n->nk; i++)
			jj_list_push(j, l, eval(j, n->kid[i]));
		return l ? (struct jv){.t = JV_LIST, .u.l = l} : jj_none();
	}
	case N_DICT: {
		struct jj_dict *d = jj_dict_new(j, n->nk / 2);
		for (uint32_t i = 0; d && i + 1 < n->nk; i += 2) {
			struct jv k = eval(j, n->kid[i]);
			jj_dict_set(j, d, k, eval(j, n->kid[i + 1]));
		}
		return d ? (struct jv){.t = JV_DICT, .u.d = d} : jj_none();
	}
	default:
		jj_fail(j, -LLMK_EINVAL, n->pos, "not an expression");
		return jj_none();
	}
}

static struct jv eval(struct jj *j, const struct jj_node *n)
{
	struct jv v = {.t = JV_UNDEF};

	if (!jj_step(j, n->pos))
		return v;
	if (j->depth >= JJ_EVAL_DEPTH) {
		jj_fail(j, -LLMK_EBUDGET, n->pos, "evaluation nests deeper than %d", JJ_EVAL_DEPTH);
		return v;
	}
	j->depth++;
	v = eval_inner(j, n);
	j->depth--;
	return j->err ? (struct jv){.t = JV_UNDEF} : v;
}

/* ---- statements ---- */

static void set_names(struct jj *j, struct jj_frame *f, const struct jj_node *n, struct jv v)
{
	if (n->nk == 0) {
		frame_set(j, f, n->s, n->sn, v);
		return;
	}
	if (v.t != JV_LIST || v.u.l->n != n->nk) {
		jj_fail(j, -LLMK_EINVAL, n->pos, "cannot unpack into %u names", n->nk);
		return;
	}
	for (uint32_t i = 0; i < n->nk; i++)
		frame_set(j, f, n->kid[i]->s, n->kid[i]->sn, v.u.l->v[i]);
}

static void exec_set(struct jj *j, const struct jj_node *n)
{
	struct jv v;

	if (n->k == N_SETBLOCK) {
		struct jj_buf *out = j->out, buf = {0};
		j->out = &buf;
		exec(j, n->b);
		j->out = out;
		frame_set(j, j->cur, n->s, n->sn, jj_buf_str(&buf));
		return;
	}
	v = eval(j, n->a);
	if (j->err)
		return;
	if (n->c) { /* ns.attr = v */
		struct jv o = lookup(j, n->s, n->sn);
		if (o.t != JV_DICT || !o.ns) {
			jj_fail(j, -LLMK_EINVAL, n->pos, "only a namespace() takes attributes");
			return;
		}
		jj_dict_set(j, o.u.d, jj_str(j, n->c->s, n->c->sn, NULL), v);
		return;
	}
	set_names(j, j->cur, n, v);
}

/* the values a for loop walks: a list's items, a dict's keys, a string's
 * characters; undefined and none walk nothing */
static struct jj_list *iter_list(struct jj *j, const struct jv *v, uint32_t pos)
{
	struct jj_list *l;

	if (v->t == JV_LIST)
		return v->u.l;
	if (v->t == JV_UNDEF || v->t == JV_NONE)
		return jj_list_new(j, 0);
	if (v->t == JV_DICT) {
		if ((l = jj_list_new(j, v->u.d->n)))
			for (uint32_t i = 0; i < v->u.d->n; i++)
				jj_list_push(j, l, v->u.d->k[i]);
		return l;
	}
	if (v->t == JV_STR) {
		if ((l = jj_list_new(j, v->n)))
			for (uint32_t i = 0; i < v->n; i++)
				jj_list_push(j, l, jj_str(j, v->u.s + i, 1, v->tm ? v->tm + i : NULL));
		return l;
	}
	jj_fail(j, -LLMK_EINVAL, pos, "a for loop over a value that is not iterable");
	return NULL;
}

enum { L_INDEX, L_INDEX0, L_REVINDEX, L_REVINDEX0, L_FIRST, L_LAST, L_LENGTH, L_PREV, L_NEXT,
       L_N };
static const char *const loop_keys[L_N] = {"index", "index0", "revindex", "revindex0", "first",
					   "last", "length", "previtem", "nextitem"};

static void exec_for(struct jj *j, const struct jj_node *n)
{
	struct jv it = eval(j, n->a);
	struct jj_list *src = iter_list(j, &it, n->pos), *items;
	struct jj_frame *saved = j->cur, *f;
	struct jj_dict *loop;
	struct jj_node names = *n;

	if (j->err || !src || !(f = frame_new(j, saved)))
		return;
	names.k = N_SET;
	if (n->nk == 1) {
		names.nk = 0;
		names.s = n->kid[0]->s;
		names.sn = n->kid[0]->sn;
	}
	items = src;
	j->cur = f;
	if (n->d) { /* {% for x in xs if cond %}: loop.* counts what passes */
		if (!(items = jj_list_new(j, 0)))
			goto out;
		for (uint32_t i = 0; i < src->n && !j->err; i++) {
			set_names(j, f, &names, src->v[i]);
			struct jv c = eval(j, n->d);
			if (jj_truthy(&c))
				jj_list_push(j, items, src->v[i]);
		}
	}
	if (!(loop = jj_dict_new(j, L_N)))
		goto out;
	for (int k = 0; k < L_N; k++)
		jj_dict_set(j, loop, jj_cstr(loop_keys[k]), jj_none());
	frame_set(j, f, "loop", 4, (struct jv){.t = JV_DICT, .u.d = loop});
	uint32_t len = items->n;
	for (uint32_t i = 0; i < len && !j->err; i++) {
		if (!jj_step(j, n->pos))
			break;
		loop->v[L_INDEX] = jj_int(i + 1);
		loop->v[L_INDEX0] = jj_int(i);
		loop->v[L_REVINDEX] = jj_int(len - i);
		loop->v[L_REVINDEX0] = jj_int(len - i - 1);
		loop->v[L_FIRST] = jj_bool(i == 0);
		loop->v[L_LAST] = jj_bool(i + 1 == len);
		loop->v[L_LENGTH] = jj_int(len);
		loop->v[L_PREV] = i ? items->v[i - 1] : (struct jv){.t = JV_UNDEF};
		loop->v[L_NEXT] = i + 1 < len ? items->v[i + 1] : (struct jv){.t = JV_UNDEF};
		set_names(j, f, &names, items->v[i]);
		exec(j, n->b);
		if (j->brk == 1) {
			j->brk = 0;
			break;
		}
		j->brk = 0;
	}
	if (len == 0 && n->c)
		exec(j, n->c);
out:
	j->cur = saved;
}

static void exec_filter(struct jj *j, const struct jj_node *n)
{
	struct jj_buf *out = j->out, buf = {0};
	struct args a;
	struct jv *all, v;

	j->out = &buf;
	exec(j, n->b);
	j->out = out;
	if (j->err || !eval_args(j, n->kid, n->nk, &a) || !(all = jj_alloc(j, (a.n + 1) * sizeof *all)))
		return;
	all[0] = jj_buf_str(&buf);
	if (a.n)
		memcpy(all + 1, a.v, a.n * sizeof *all);
	v = jj_filter(j, n->s, n->sn, all, a.n + 1, a.kw, a.kwv, a.nkw, n->pos);
	if (!j->err)
		jj_to_str(j, j->out, &v);
}

static void out_value(struct jj *j, const struct jv *v)
{
	jj_to_str(j, j->out, v);
}

static void exec(struct jj *j, const struct jj_node *n)
{
	struct jv v;

	if (!jj_step(j, n->pos))
		return;
	if (j->depth >= JJ_EVAL_DEPTH) {
		jj_fail(j, -LLMK_EBUDGET, n->pos, "statements nest deeper than %d", JJ_EVAL_DEPTH);
		return;
	}
	j->depth++;
	switch (n->k) {
	case N_SEQ:
		for (uint32_t i = 0; i < n->nk && !j->err && !j->brk; i++)
			exec(j, n->kid[i]);
		break;
	case N_TEXT: jj_buf_put(j, j->out, n->s, n->sn, NULL); break;
	case N_OUT:
		v = eval(j, n->a);
		if (!j->err)
			out_value(j, &v);
		break;
	case N_IF:
		v = eval(j, n->a);
		if (j->err)
			break;
		if (jj_truthy(&v))
			exec(j, n->b);
		else if (n->c)
			exec(j, n->c);
		break;
	case N_FOR: exec_for(j, n); break;
	case N_FILTERBLOCK: exec_filter(j, n); break;
	case N_SET:
	case N_SETBLOCK: exec_set(j, n); break;
	case N_MACRO:
		frame_set(j, j->cur, n->s, n->sn, (struct jv){.t = JV_MACRO, .u.m = n});
		break;
	case N_BREAK: j->brk = 1; break;
	case N_CONTINUE: j->brk = 2; break;
	default: jj_fail(j, -LLMK_EINVAL, n->pos, "not a statement"); break;
	}
	j->depth--;
}

/* ---- the context and the entry points ---- */

static struct jv taint_all(struct jj *j, const char *s)
{
	uint32_t n = (uint32_t)strlen(s);
	uint8_t *tm = n ? jj_alloc(j, n) : NULL;
	if (tm)
		memset(tm, 1, n);
	return jj_str(j, s, n, tm);
}

/* The message's extra members (its JSON, strings tainted: they are the
 * client's) into d; with object_args each tool call's string arguments
 * become the object they hold. */
static void message_extra(struct jj *j, struct jj_dict *d, const char *extra, bool object_args)
{
	struct jv x = jj_json_parse(j, extra, strlen(extra)), *tc;

	if (j->err || x.t != JV_DICT) {
		jj_fail(j, -LLMK_EINVAL, 0, "a message's extra members are not a JSON object");
		return;
	}
	for (uint32_t i = 0; i < x.u.d->n; i++)
		jj_dict_set(j, d, x.u.d->k[i], x.u.d->v[i]);
	if (!object_args || !(tc = jj_dict_get(d, "tool_calls", 10)) || tc->t != JV_LIST)
		return;
	for (uint32_t i = 0; i < tc->u.l->n && !j->err; i++) {
		struct jv *c = &tc->u.l->v[i], *fn, *args;
		if (c->t != JV_DICT || !(fn = jj_dict_get(c->u.d, "function", 8)) || fn->t != JV_DICT ||
		    !(args = jj_dict_get(fn->u.d, "arguments", 9)) || args->t != JV_STR)
			continue;
		*args = jj_json_parse(j, args->u.s, args->n);
	}
}

static struct jv message(struct jj *j, const struct chat_msg *m, const char *prefix,
			 const char *extra, bool object_args)
{
	struct jj_dict *d = jj_dict_new(j, 2);
	struct jv c = taint_all(j, m->content);

	if (!d)
		return jj_none();
	if (prefix) { /* the system text merged in: "system\ncontent" */
		struct jj_buf b = {0};
		struct jv p = taint_all(j, prefix);
		jj_buf_put(j, &b, p.u.s, p.n, p.tm);
		jj_buf_putc(j, &b, '\n');
		jj_buf_put(j, &b, c.u.s, c.n, c.tm);
		c = jj_buf_str(&b);
	}
	jj_dict_set(j, d, jj_cstr("role"), jj_cstr(m->role));
	jj_dict_set(j, d, jj_cstr("content"), c);
	if (extra)
		message_extra(j, d, extra, object_args);
	return (struct jv){.t = JV_DICT, .u.d = d};
}

static void set_global(struct jj *j, const char *name, struct jv v)
{
	frame_set(j, j->globals, name, (uint32_t)strlen(name), v);
}

static void context(struct jj *j, const struct jinja_input *in)
{
	struct jj_list *msgs = jj_list_new(j, (uint32_t)in->n);
	size_t i = 0;

	if (!msgs)
		return;
	if (in->merge_system && in->n && strcmp(in->msgs[0].role, "system") == 0) {
		if (in->n > 1)
			jj_list_push(j, msgs, message(j, &in->msgs[1], in->msgs[0].content,
						      in->extra ? in->extra[1] : NULL, in->object_args));
		i = 2;
	}
	for (; i < in->n && !j->err; i++)
		jj_list_push(j, msgs, message(j, &in->msgs[i], NULL, in->extra ? in->extra[i] : NULL,
					      in->object_args));
	set_global(j, "messages", (struct jv){.t = JV_LIST, .u.l = msgs});
	set_global(j, "bos_token", jj_cstr(in->bos_token ? in->bos_token : ""));
	set_global(j, "eos_token", jj_cstr(in->eos_token ? in->eos_token : ""));
	if (in->add_generation_prompt)
		set_global(j, "add_generation_prompt", jj_bool(true));
	if (in->tools_json) {
		struct jv t = jj_json_parse(j, in->tools_json, strlen(in->tools_json));
		if (!j->err)
			set_global(j, "tools", t);
	}
}

/* The output's tainted runs are the spans of the messages' text. */
static int spans(struct jj_buf *b, struct jinja_out *out)
{
	out->n_spans = 0;
	if (!out->spans || !b->tm)
		return 0;
	for (uint32_t i = 0; i < b->n;) {
		if (!b->tm[i]) {
			i++;
			continue;
		}
		uint32_t e = i;
		while (e < b->n && b->tm[e])
			e++;
		if (out->n_spans == out->max_spans)
			return -LLMK_ERANGE;
		out->spans[out->n_spans++] = (struct tok_span){i, e - i};
		i = e;
	}
	return 0;
}

int jinja_render(const char *src, size_t len, const struct jinja_input *in,
		 const struct jinja_limits *lim, struct jinja_out *out, char *err, size_t errlen)
{
	struct jj j = {
		.arena = lim->arena, .size = lim->arena_size, .steps = lim->steps,
		.msg = err, .msglen = errlen, .src = src, .srclen = len, .today = in->today,
	};
	struct jj_buf buf = {0};
	struct jj_node *prog;
	int r;

	out->len = 0;
	out->n_spans = 0;
	if (out->cap)
		out->buf[0] = 0;
	if (len > UINT32_MAX / 2) {
		jj_fail(&j, -LLMK_EFORMAT, 0, "the template is too long");
		return j.err;
	}
	for (size_t i = 0; i < in->n; i++)
		if (!in->msgs[i].role || !in->msgs[i].content) {
			jj_fail(&j, -LLMK_EINVAL, 0, "message %zu has no role or no content", i);
			return j.err;
		}
	if (!(j.globals = frame_new(&j, NULL)))
		return j.err;
	j.cur = j.globals;
	j.out = &buf;
	context(&j, in);
	if (!j.err && (prog = jj_parse(&j)))
		exec(&j, prog);
	if (j.err)
		return j.err;
	if (buf.n >= out->cap) {
		plat_snprintf(err, errlen, "the formatted conversation is over %zu bytes", out->cap);
		return -LLMK_ERANGE;
	}
	memcpy(out->buf, buf.p, buf.n);
	out->buf[buf.n] = 0;
	out->len = buf.n;
	if ((r = spans(&buf, out)))
		plat_snprintf(err, errlen, "the messages' text lands in more than %zu places",
			      out->max_spans);
	return r;
}

#define SYS_NEEDLE "<llmk system needle>"
#define ARG_NEEDLE "llmk-argument-needle"

static bool has_text(const struct jinja_out *o, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= o->len; i++)
		if (memcmp(o->buf + i, needle, k) == 0)
			return true;
	return false;
}

/* Does the template read a tool call's arguments as an object? llama.cpp
 * (common/jinja/caps.cpp) renders a call whose arguments are one and asks
 * whether their member was used; here: whether it came out as JSON. */
static bool reads_object_args(const char *src, size_t len, const struct jinja_input *in,
			      const struct jinja_limits *lim, struct jinja_out *out)
{
	static const struct chat_msg probe[] = {
		{"user", "User message"}, {"assistant", ""}, {"tool", "Tool response"},
		{"assistant", "The tool response was 'tool response'"}, {"user", "User message"},
	};
	static const char *const extra[] = {
		NULL,
		"{\"tool_calls\": [{\"type\": \"function\", \"function\": {\"name\": \"tool1\", "
		"\"arguments\": {\"arg\": \"" ARG_NEEDLE "\"}}, \"id\": \"call00001\"}]}",
		"{\"tool_call_id\": \"call00001\"}", NULL, NULL,
	};
	static const char tools[] = "[{\"name\": \"tool\", \"type\": \"function\", \"function\": "
		"{\"name\": \"tool1\", \"description\": \"Tool description\", \"parameters\": "
		"{\"type\": \"object\", \"properties\": {\"arg\": {\"type\": \"string\", "
		"\"description\": \"Arg description\"}}, \"required\": [\"arg\"]}}}]";
	struct jinja_input p = *in;
	struct jinja_out o = *out;
	char err[8];

	p.msgs = probe;
	p.n = sizeof probe / sizeof probe[0];
	p.extra = extra;
	p.merge_system = p.object_args = false;
	p.add_generation_prompt = true;
	p.tools_json = tools;
	o.spans = NULL;
	return jinja_render(src, len, &p, lim, &o, err, sizeof err) == 0 &&
	       has_text(&o, "\"" ARG_NEEDLE "\"");
}

int jinja_chat(const char *src, size_t len, const struct jinja_input *in,
	       const struct jinja_limits *lim, struct jinja_out *out, char *err, size_t errlen)
{
	struct jinja_input run = *in;

	if (in->n && strcmp(in->msgs[0].role, "system") == 0) {
		/* does the template render a system message? (llama.cpp's
		 * supports_system_role probe) */
		static const struct chat_msg probe[] = {{"system", SYS_NEEDLE}, {"user", "User message"}};
		struct jinja_input p = *in;
		struct jinja_out o = *out;
		p.msgs = probe;
		p.n = 2;
		p.extra = NULL;
		p.merge_system = false;
		p.add_generation_prompt = true;
		o.spans = NULL;
		int r = jinja_render(src, len, &p, lim, &o, err, errlen);
		if (r == -LLMK_EBUDGET || r == -LLMK_ENOMEM || r == -LLMK_EFORMAT || r == -LLMK_ENOTSUP)
			return r;
		run.merge_system = !(r == 0 && has_text(&o, SYS_NEEDLE));
	}
	bool calls = false;
	for (size_t i = 0; in->extra && i < in->n && !calls; i++)
		calls = in->extra[i] && strncmp(in->extra[i], "{\"tool_calls\"", 13) == 0;
	if (calls)
		run.object_args = reads_object_args(src, len, in, lim, out);
	return jinja_render(src, len, &run, lim, out, err, errlen);
}
