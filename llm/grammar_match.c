/*
 * llm/grammar_match.c — the pushdown matcher over a parsed grammar
 * (grammar.h): a state is a set of stacks of element positions; a byte
 * either continues a UTF-8 sequence or completes a code point, which every
 * stack whose top set holds it consumes.
 *
 * Expansion: a stack whose top is a rule reference becomes one stack per
 * alternative of the rule (the reference replaced by the element after it,
 * the alternative's first element pushed), until every top is a character
 * set or the stack is empty. The parser refused left recursion, so each
 * chain of expansions ends; GRAM_MAX_DEPTH and a work budget bound its
 * length and count anyway (a refusal, not a hang).
 *
 * Memory: the stacks kept grow from the start of dst->w, the candidates
 * being expanded from its end downward, one per open expansion.
 */
#include "grammar.h"

#define GRAM_MAX_WORK 16384u /* expansions a byte may take */
#define GRAM_MAX_CHAIN 128u  /* expansions open at once */

struct xp {
	const struct gram *g;
	struct gram_state *d;
	uint32_t low;  /* the lowest word a candidate holds */
	uint32_t work;
	bool over;
	uint32_t n_path;
	uint32_t path[GRAM_MAX_CHAIN][2]; /* the open expansions' candidates: at, len */
};

/* Whether the candidate at w[at..at+len) is one an open expansion is
 * expanding: a cycle through rules that derive the empty string (`( [x]* )*`),
 * which would add nothing new. */
static bool on_path(const struct xp *x, uint32_t at, uint32_t len)
{
	const uint32_t *w = x->d->w;

	for (uint32_t i = 0; i < x->n_path; i++)
		if (x->path[i][1] == len && !memcmp(w + x->path[i][0], w + at, len * sizeof *w))
			return true;
	return false;
}

static bool ends(const struct gram *g, uint32_t pos)
{
	return g->el[pos].op <= GRAM_ALT;
}

/* Keep the candidate w[at..at+len) unless a stack already kept is the same. */
static void keep(struct xp *x, uint32_t at, uint32_t len)
{
	struct gram_state *d = x->d;
	uint32_t i = 0;

	for (uint32_t k = 0; k < d->n_stacks; k++) {
		uint32_t n = d->w[i];
		if (n == len && !memcmp(d->w + i + 1, d->w + at, len * sizeof *d->w))
			return;
		i += n + 1;
	}
	if (d->n_stacks >= GRAM_MAX_STACKS || d->used + len + 1 > x->low) {
		x->over = true;
		return;
	}
	d->w[d->used] = len;
	memmove(d->w + d->used + 1, d->w + at, len * sizeof *d->w);
	d->used += len + 1;
	d->n_stacks++;
}

static void expand(struct xp *x, uint32_t at, uint32_t len)
{
	const struct gram *g = x->g;
	uint32_t *w = x->d->w, top, base, c, r, a;

	if (x->over || ++x->work > GRAM_MAX_WORK) {
		x->over = true;
		return;
	}
	if (!len || g->el[w[at + len - 1]].op == GRAM_SET) {
		keep(x, at, len);
		return;
	}
	/* a reference: each alternative in a new candidate below this one */
	if (on_path(x, at, len))
		return;
	if (x->n_path >= GRAM_MAX_CHAIN) {
		x->over = true;
		return;
	}
	top = w[at + len - 1];
	r = g->el[top].a;
	base = ends(g, top + 1) ? len - 1 : len;
	if (base + 1 > GRAM_MAX_DEPTH || at < base + 1 || at - (base + 1) < x->d->used + 1) {
		x->over = true;
		return;
	}
	c = at - (base + 1);
	a = g->rule_at[r];
	x->path[x->n_path][0] = at;
	x->path[x->n_path][1] = len;
	x->n_path++;
	for (;;) {
		uint32_t save = x->low;
		memmove(w + c, w + at, (len - 1) * sizeof *w);
		if (base == len)
			w[c + len - 1] = top + 1;
		x->low = c;
		if (ends(g, a)) {
			expand(x, c, base);
		} else {
			w[c + base] = a;
			expand(x, c, base + 1);
		}
		x->low = save;
		while (!ends(g, a))
			a++;
		if (g->el[a].op == GRAM_END || x->over)
			break;
		a++;
	}
	x->n_path--;
}

/* Expand a candidate given as positions pos[0..len) into d. */
static void add(struct xp *x, const uint32_t *pos, uint32_t len)
{
	uint32_t at = GRAM_STATE_WORDS - len;

	if (len > GRAM_MAX_DEPTH || at < x->d->used + 1) {
		x->over = true;
		return;
	}
	memmove(x->d->w + at, pos, len * sizeof *pos);
	x->low = at;
	expand(x, at, len);
}

static void clear(struct gram_state *d)
{
	d->n_stacks = d->used = 0;
	d->part_val = 0;
	d->part_left = d->part_len = 0;
}

int gram_start(const struct gram *g, struct gram_state *st)
{
	struct xp x = {.g = g, .d = st};
	uint32_t ref = g->n_el; /* a reference to root, as if from outside */

	clear(st);
	/* the root's alternatives: as expand would for a one-element stack of
	 * a reference to it, without a table entry for that element */
	for (uint32_t a = g->rule_at[g->root];;) {
		if (ends(g, a))
			add(&x, &ref, 0);
		else
			add(&x, &a, 1);
		while (!ends(g, a))
			a++;
		if (g->el[a].op == GRAM_END || x.over)
			break;
		a++;
	}
	if (x.over) {
		clear(st);
		return -LLMK_ERANGE;
	}
	return 0;
}

static bool set_has(const struct gram *g, const struct gram_elem *e, uint32_t cp)
{
	const uint32_t *r = g->rng + 2 * (size_t)e->a;

	for (uint32_t i = 0; i < e->n; i++)
		if (cp >= r[2 * i] && cp <= r[2 * i + 1])
			return !e->neg;
	return e->neg;
}

/* Whether the set may hold some code point in [lo, hi] (a UTF-8 sequence
 * begun): exact for a plain set, for a negated one unless one range covers
 * [lo, hi] whole. */
static bool set_meets(const struct gram *g, const struct gram_elem *e, uint32_t lo, uint32_t hi)
{
	const uint32_t *r = g->rng + 2 * (size_t)e->a;

	for (uint32_t i = 0; i < e->n; i++) {
		if (e->neg && r[2 * i] <= lo && r[2 * i + 1] >= hi)
			return false;
		if (!e->neg && r[2 * i] <= hi && r[2 * i + 1] >= lo)
			return true;
	}
	return e->neg;
}

static void copy(struct gram_state *d, const struct gram_state *s)
{
	d->n_stacks = s->n_stacks;
	d->used = s->used;
	memcpy(d->w, s->w, s->used * sizeof *d->w);
}

/* The least code point a UTF-8 sequence of n bytes may encode (shorter
 * forms of the same value are overlong: RFC 3629 §3 forbids them, and a
 * grammar's '{' must not be matched by C1 BB). */
static uint32_t least(uint32_t n)
{
	return n == 1 ? 0x80 : n == 2 ? 0x800 : 0x10000;
}

static bool valid(uint32_t cp, uint32_t n)
{
	return cp >= least(n) && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
}

/* dst = src with a sequence still open: kept if some stack could take it. */
static bool partial(const struct gram *g, const struct gram_state *src, struct gram_state *dst)
{
	uint32_t sh = 6u * dst->part_left;
	uint32_t lo = dst->part_val << sh, hi = lo | ((1u << sh) - 1);
	uint32_t i = 0;

	if (lo < least(dst->part_len))
		lo = least(dst->part_len);
	if (hi > 0x10ffff)
		hi = 0x10ffff;
	if (lo > hi || (lo >= 0xd800 && hi <= 0xdfff)) { /* nothing, or only surrogates */
		clear(dst);
		return false;
	}

	copy(dst, src);
	for (uint32_t k = 0; k < src->n_stacks; k++) {
		uint32_t n = src->w[i];
		if (n && set_meets(g, &g->el[src->w[i + n]], lo, hi))
			return true;
		i += n + 1;
	}
	clear(dst);
	return false;
}

bool gram_byte(const struct gram *g, const struct gram_state *src, uint8_t c,
	       struct gram_state *dst)
{
	struct xp x = {.g = g, .d = dst};
	uint32_t cp, i = 0;

	clear(dst);
	if (src->part_left) {
		if ((c & 0xc0) != 0x80)
			return false;
		dst->part_val = src->part_val << 6 | (c & 0x3fu);
		dst->part_left = (uint8_t)(src->part_left - 1);
		dst->part_len = src->part_len;
		if (dst->part_left)
			return partial(g, src, dst);
		cp = dst->part_val;
		if (!valid(cp, dst->part_len)) {
			clear(dst);
			return false;
		}
		dst->part_val = dst->part_len = 0;
	} else if (c < 0x80) {
		cp = c;
	} else {
		uint8_t left = (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 0;
		if (!left)
			return false;
		dst->part_val = c & (0x3fu >> left);
		dst->part_left = dst->part_len = left;
		return partial(g, src, dst);
	}
	for (uint32_t k = 0; k < src->n_stacks && !x.over; k++) {
		uint32_t n = src->w[i], top;
		const uint32_t *s = src->w + i + 1;
		i += n + 1;
		if (!n || !set_has(g, &g->el[top = s[n - 1]], cp))
			continue;
		/* s without its top, and the element after the top if the sequence goes on */
		uint32_t at = GRAM_STATE_WORDS - n;
		if (at < dst->used + 1 + n) {
			x.over = true;
			break;
		}
		memmove(dst->w + at, s, (n - 1) * sizeof *s);
		x.low = at;
		if (ends(g, top + 1)) {
			expand(&x, at, n - 1);
			continue;
		}
		dst->w[at + n - 1] = top + 1;
		expand(&x, at, n);
	}
	if (x.over)
		clear(dst);
	return dst->n_stacks > 0;
}

bool gram_complete(const struct gram_state *st)
{
	uint32_t i = 0;

	if (st->part_left)
		return false;
	for (uint32_t k = 0; k < st->n_stacks; k++) {
		if (!st->w[i])
			return true;
		i += st->w[i] + 1;
	}
	return false;
}

bool gram_done(const struct gram_state *st)
{
	uint32_t i = 0;

	if (st->part_left || !st->n_stacks)
		return false;
	for (uint32_t k = 0; k < st->n_stacks; k++) {
		if (st->w[i])
			return false;
		i += 1;
	}
	return true;
}

bool gram_accepts(const struct gram *g, const char *s, size_t n, struct gram_state tmp[2])
{
	uint32_t k = 0;

	if (gram_start(g, &tmp[0]))
		return false;
	for (size_t i = 0; i < n; i++, k ^= 1)
		if (!gram_byte(g, &tmp[k], (uint8_t)s[i], &tmp[k ^ 1]))
			return false;
	return gram_complete(&tmp[k]);
}
