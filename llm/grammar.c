/*
 * llm/grammar.c — GBNF text to rules (the format: llama.cpp's
 * grammars/README.md; the compiled form: grammar.h).
 *
 * One pass, recursive descent: grammar = rule*, rule = name "::=" alternates
 * (ended by a newline outside parentheses), alternates = sequence ("|"
 * sequence)*, sequence = (term repetition?)*. A rule's body is built on a
 * scratch stack of elements (a group's body above its parent's, popped when
 * the group closes) and then copied to the element table, so every rule is
 * contiguous. Then the checks the matcher relies on: every rule defined, a
 * root, no left recursion (the matcher's expansion of a rule at a stack's
 * top terminates), and a root that derives some finite string.
 */
#include "grammar.h"
#include "codec.h"

struct gp {
	const char *s0, *s, *end;
	char *err;
	size_t errlen;
	int r;                      /* the first error */
	struct gram_elem *el, *tmp; /* the table; the scratch stack of bodies */
	uint32_t n_el, n_tmp, n_rng, n_rules, depth;
	uint32_t *rng, *rule_at;
	const char **name;          /* into the text; NULL: a generated rule */
	uint32_t *name_len, *ref_at, *def_at; /* offsets of first use, of definition */
	uint64_t *wt;               /* per rule: elements it would unroll to */
	uint8_t *flag;              /* per rule: DEFINED, NULLABLE, PRODUCTIVE, and DFS colour */
};

enum { F_DEF = 1, F_NULL = 2, F_PROD = 4, F_GREY = 8, F_BLACK = 16, F_EMPTY = 32 };

static void where(const struct gp *p, size_t off, uint32_t *line, uint32_t *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && p->s0 + i < p->end; i++) {
		if (p->s0[i] == '\n')
			++*line, *col = 1;
		else
			++*col;
	}
}

static int fail_at(struct gp *p, size_t off, int r, const char *what, const char *a, size_t an)
{
	uint32_t line, col;
	char name[48];

	if (p->r)
		return p->r;
	if (an >= sizeof name)
		an = sizeof name - 1;
	memcpy(name, a ? a : "", a ? an : 0);
	name[a ? an : 0] = 0;
	where(p, off, &line, &col);
	plat_snprintf(p->err, p->errlen, "line %u, column %u: %s%s%s%s", line, col, what,
		      a ? " '" : "", name, a ? "'" : "");
	return p->r = r;
}

static int fail(struct gp *p, const char *what)
{
	return fail_at(p, (size_t)(p->s - p->s0), -LLMK_EFORMAT, what, NULL, 0);
}

static bool is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

static void space(struct gp *p, bool newline_ok)
{
	while (p->s < p->end) {
		char c = *p->s;
		if (c == '#') {
			while (p->s < p->end && *p->s != '\n' && *p->s != '\r')
				p->s++;
		} else if (c == ' ' || c == '\t' || (newline_ok && (c == '\n' || c == '\r'))) {
			p->s++;
		} else {
			break;
		}
	}
}

static char peek(const struct gp *p)
{
	return p->s < p->end ? *p->s : 0;
}

/* The rule named s[0..n), created at its first mention. */
static int symbol(struct gp *p, const char *s, uint32_t n, uint32_t *id)
{
	for (uint32_t i = 0; i < p->n_rules; i++)
		if (p->name[i] && p->name_len[i] == n && !memcmp(p->name[i], s, n)) {
			*id = i;
			return 0;
		}
	if (p->n_rules >= GRAM_MAX_RULES)
		return fail_at(p, (size_t)(s - p->s0), -LLMK_ERANGE, "more rules than the limit", 0, 0);
	*id = p->n_rules++;
	p->name[*id] = s;
	p->name_len[*id] = n;
	p->ref_at[*id] = p->def_at[*id] = (uint32_t)(s - p->s0);
	p->rule_at[*id] = UINT32_MAX;
	return 0;
}

static int gen_rule(struct gp *p, uint32_t *id)
{
	if (p->n_rules >= GRAM_MAX_RULES)
		return fail_at(p, (size_t)(p->s - p->s0), -LLMK_ERANGE,
			       "more rules than the limit (a repetition count too large?)", 0, 0);
	*id = p->n_rules++;
	p->name[*id] = NULL;
	p->ref_at[*id] = p->def_at[*id] = (uint32_t)(p->s - p->s0);
	p->flag[*id] = F_DEF;
	return 0;
}

static int put(struct gp *p, struct gram_elem e)
{
	if (p->n_el >= GRAM_MAX_ELEMS)
		return fail_at(p, (size_t)(p->s - p->s0), -LLMK_ERANGE,
			       "more elements than the limit (a repetition count too large?)", 0, 0);
	p->el[p->n_el++] = e;
	return 0;
}

static int push(struct gp *p, struct gram_elem e)
{
	if (p->n_tmp >= GRAM_MAX_ELEMS)
		return fail_at(p, (size_t)(p->s - p->s0), -LLMK_ERANGE,
			       "more elements than the limit (a repetition count too large?)", 0, 0);
	p->tmp[p->n_tmp++] = e;
	return 0;
}

static struct gram_elem ref(uint32_t rule)
{
	return (struct gram_elem){.op = GRAM_RULE, .a = rule};
}

static uint64_t weight(const struct gp *p, struct gram_elem e)
{
	return e.op == GRAM_RULE ? p->wt[e.a] : 1;
}

/* A rule's weight, refused past GRAM_MAX_WEIGHT: `((x{0,99}){0,99}){0,99}`
 * is small as text and huge unrolled (llama.cpp refuses it too). */
static int weigh(struct gp *p, uint32_t id, uint64_t w)
{
	p->wt[id] = w;
	if (w > GRAM_MAX_WEIGHT)
		return fail_at(p, (size_t)(p->s - p->s0), -LLMK_ERANGE,
			       "repetitions nested too deep (over 2^20 elements unrolled)", 0, 0);
	return 0;
}

/* Rule id's body: the scratch elements from..n_tmp, then popped. */
static int close_rule(struct gp *p, uint32_t id, uint32_t from)
{
	uint32_t n = p->n_tmp - from;
	uint64_t w = 0;

	for (uint32_t i = from; i < p->n_tmp; i++)
		w += weight(p, p->tmp[i]);
	if (weigh(p, id, w))
		return p->r;

	if (p->n_el + n + 1 > GRAM_MAX_ELEMS)
		return fail_at(p, (size_t)(p->s - p->s0), -LLMK_ERANGE,
			       "more elements than the limit", 0, 0);
	p->rule_at[id] = p->n_el;
	memcpy(p->el + p->n_el, p->tmp + from, n * sizeof *p->el);
	p->n_el += n;
	p->n_tmp = from;
	return put(p, (struct gram_elem){.op = GRAM_END});
}

/* One character of a literal or a class: an escape or a UTF-8 sequence
 * (a byte that starts none stands for itself). */
static int one_char(struct gp *p, uint32_t *cp)
{
	const uint8_t *u = (const uint8_t *)p->s;
	size_t left = (size_t)(p->end - p->s);

	if (!left)
		return fail(p, "unexpected end of input");
	if (*u == '\\') {
		int nd = 0;
		if (left < 2)
			return fail(p, "unexpected end of input after '\\'");
		switch (u[1]) {
		case 'x': nd = 2; break;
		case 'u': nd = 4; break;
		case 'U': nd = 8; break;
		case 't': *cp = '\t'; break;
		case 'n': *cp = '\n'; break;
		case 'r': *cp = '\r'; break;
		case '\\': case '"': case '[': case ']': case '-': case '^': *cp = u[1]; break;
		default:
			p->s++;
			return fail(p, "unknown escape");
		}
		p->s += 2;
		if (nd) {
			*cp = 0;
			for (int i = 0; i < nd; i++, p->s++) {
				int h = p->s < p->end ? hex_digit(*p->s) : -1;
				if (h < 0)
					return fail(p, "expecting a hex digit");
				*cp = *cp << 4 | (uint32_t)h;
			}
		}
		return 0;
	}
	uint32_t n = *u < 0x80 ? 1 : (*u & 0xe0) == 0xc0 ? 2 : (*u & 0xf0) == 0xe0 ? 3
		     : (*u & 0xf8) == 0xf0 ? 4 : 1;
	if (n > left)
		n = 1;
	*cp = n == 1 ? *u : (uint32_t)(*u & (0x7f >> n));
	for (uint32_t i = 1; i < n; i++)
		*cp = *cp << 6 | (u[i] & 0x3f);
	p->s += n;
	return 0;
}

static int set1(struct gp *p, uint32_t lo, uint32_t hi)
{
	if (p->n_rng >= GRAM_MAX_RANGES)
		return fail_at(p, (size_t)(p->s - p->s0), -LLMK_ERANGE,
			       "more character ranges than the limit", 0, 0);
	p->rng[2 * p->n_rng] = lo;
	p->rng[2 * p->n_rng + 1] = hi;
	p->n_rng++;
	return 0;
}

static int literal(struct gp *p)
{
	uint32_t cp;

	p->s++; /* '"' */
	while (peek(p) != '"') {
		if (p->s >= p->end || *p->s == '\n' || *p->s == '\r')
			return fail(p, "unexpected end of input in a string");
		if (one_char(p, &cp) || set1(p, cp, cp) ||
		    push(p, (struct gram_elem){.op = GRAM_SET, .n = 1, .a = p->n_rng - 1}))
			return p->r;
	}
	p->s++;
	return 0;
}

static int char_class(struct gp *p)
{
	struct gram_elem e = {.op = GRAM_SET, .a = p->n_rng};
	uint32_t lo, hi;

	p->s++; /* '[' */
	if (peek(p) == '^')
		e.neg = 1, p->s++;
	while (peek(p) != ']') {
		if (p->s >= p->end)
			return fail(p, "unexpected end of input in a character class");
		if (one_char(p, &lo))
			return p->r;
		hi = lo;
		if (peek(p) == '-' && p->s + 1 < p->end && p->s[1] != ']') {
			p->s++;
			if (one_char(p, &hi))
				return p->r;
			if (hi < lo)
				return fail(p, "a character range that runs backwards");
		}
		if (set1(p, lo, hi))
			return p->r;
		if (++e.n == 0xffff)
			return fail(p, "too many ranges in one character class");
	}
	p->s++;
	return push(p, e);
}

static int alternates(struct gp *p, bool nested);

static int group(struct gp *p)
{
	uint32_t from = p->n_tmp, id;

	if (++p->depth > GRAM_MAX_NESTING)
		return fail_at(p, (size_t)(p->s - p->s0), -LLMK_ERANGE,
			       "groups nested deeper than the limit", 0, 0);
	p->s++; /* '(' */
	space(p, true);
	if (alternates(p, true))
		return p->r;
	if (peek(p) != ')')
		return fail(p, "expecting ')'");
	p->s++;
	p->depth--;
	if (gen_rule(p, &id) || close_rule(p, id, from))
		return p->r;
	return push(p, ref(id));
}

static int number(struct gp *p, uint32_t *v)
{
	const char *at = p->s;

	*v = 0;
	while (p->s < p->end && *p->s >= '0' && *p->s <= '9') {
		*v = *v * 10 + (uint32_t)(*p->s++ - '0');
		if (*v > 100000000)
			return fail_at(p, (size_t)(at - p->s0), -LLMK_ERANGE,
				       "a repetition count over the limit", 0, 0);
	}
	if (p->s == at)
		return fail(p, "expecting a number");
	return 0;
}

/* {m}, {m,}, {m,n}; max UINT32_MAX: no bound. */
static int braces(struct gp *p, uint32_t *min, uint32_t *max)
{
	p->s++;
	space(p, true);
	if (number(p, min))
		return p->r;
	space(p, true);
	*max = *min;
	if (peek(p) == ',') {
		p->s++;
		space(p, true);
		*max = UINT32_MAX;
		if (peek(p) >= '0' && peek(p) <= '9') {
			if (number(p, max))
				return p->r;
			if (*max < *min)
				return fail(p, "a repetition whose maximum is below its minimum");
		}
		space(p, true);
	}
	if (peek(p) != '}')
		return fail(p, "expecting '}'");
	p->s++;
	if (*min > GRAM_MAX_REPEAT)
		return fail_at(p, (size_t)(p->s - p->s0), -LLMK_ERANGE,
			       "a repetition's minimum over the limit (2000)", 0, 0);
	if (*max != UINT32_MAX && *max > GRAM_MAX_REPEAT)
		*max = UINT32_MAX;
	return 0;
}

/* The term at tmp[last..n_tmp) repeated min..max times. */
static int repeat(struct gp *p, uint32_t last, uint32_t min, uint32_t max)
{
	struct gram_elem e;
	uint32_t id, prev;

	if (p->n_tmp - last > 1) { /* a literal: one rule, so one element */
		if (gen_rule(p, &id) || close_rule(p, id, last) || push(p, ref(id)))
			return p->r;
	}
	e = p->tmp[--p->n_tmp];
	for (uint32_t i = 0; i < min; i++)
		if (push(p, e))
			return p->r;
	if (max == min)
		return 0;
	if (max == UINT32_MAX) { /* R ::= e R | */
		if (gen_rule(p, &id))
			return p->r;
		p->rule_at[id] = p->n_el;
		if (weigh(p, id, weight(p, e) + 1) || put(p, e) || put(p, ref(id)) ||
		    put(p, (struct gram_elem){.op = GRAM_ALT}) ||
		    put(p, (struct gram_elem){.op = GRAM_END}))
			return p->r;
		return push(p, ref(id));
	}
	/* R1 ::= e | ; Rk ::= e R(k-1) | */
	prev = UINT32_MAX;
	for (uint32_t k = 0; k < max - min; k++) {
		if (gen_rule(p, &id))
			return p->r;
		p->rule_at[id] = p->n_el;
		if (weigh(p, id, weight(p, e) + (prev != UINT32_MAX ? p->wt[prev] : 0)) ||
		    put(p, e) || (prev != UINT32_MAX && put(p, ref(prev))) ||
		    put(p, (struct gram_elem){.op = GRAM_ALT}) ||
		    put(p, (struct gram_elem){.op = GRAM_END}))
			return p->r;
		prev = id;
	}
	return push(p, ref(prev));
}

static int sequence(struct gp *p, bool nested)
{
	uint32_t last = UINT32_MAX, id, min, max;

	for (;;) {
		char c = peek(p);
		uint32_t at = p->n_tmp;
		if (c == '"') {
			if (literal(p))
				return p->r;
			last = p->n_tmp > at ? at : UINT32_MAX;
		} else if (c == '[') {
			if (char_class(p))
				return p->r;
			last = at;
		} else if (c == '(') {
			if (group(p))
				return p->r;
			last = at;
		} else if (c == '.') {
			p->s++;
			if (push(p, (struct gram_elem){.op = GRAM_SET, .neg = 1, .a = p->n_rng}))
				return p->r;
			last = at;
		} else if (is_word(c)) {
			const char *w = p->s;
			while (p->s < p->end && is_word(*p->s))
				p->s++;
			if (symbol(p, w, (uint32_t)(p->s - w), &id) || push(p, ref(id)))
				return p->r;
			last = at;
		} else if (c == '*' || c == '+' || c == '?' || c == '{') {
			if (last == UINT32_MAX)
				return fail(p, "expecting an item before the repetition");
			if (c == '{') {
				if (braces(p, &min, &max))
					return p->r;
			} else {
				p->s++;
				min = c == '+';
				max = c == '?' ? 1 : UINT32_MAX;
			}
			if (repeat(p, last, min, max))
				return p->r;
			last = UINT32_MAX;
		} else {
			return 0;
		}
		space(p, nested);
	}
}

static int alternates(struct gp *p, bool nested)
{
	if (sequence(p, nested))
		return p->r;
	while (peek(p) == '|') {
		if (push(p, (struct gram_elem){.op = GRAM_ALT}))
			return p->r;
		p->s++;
		space(p, true);
		if (sequence(p, nested))
			return p->r;
	}
	return 0;
}

static int rule(struct gp *p)
{
	const char *w = p->s;
	uint32_t id;

	while (p->s < p->end && is_word(*p->s))
		p->s++;
	if (p->s == w)
		return fail(p, "expecting a rule name");
	if (symbol(p, w, (uint32_t)(p->s - w), &id))
		return p->r;
	p->def_at[id] = (uint32_t)(w - p->s0);
	space(p, false);
	if (p->end - p->s < 3 || memcmp(p->s, "::=", 3))
		return fail(p, "expecting '::='");
	p->s += 3;
	space(p, true);
	if (alternates(p, false) || close_rule(p, id, 0))
		return p->r;
	p->flag[id] |= F_DEF;
	if (p->s < p->end && *p->s != '\n' && *p->s != '\r')
		return fail(p, "expecting a newline or the end");
	space(p, true);
	return 0;
}

/* ---- the checks ---- */

/* Which rules derive the empty string, and which some finite string. */
static void fixpoints(struct gp *p)
{
	bool more = true;

	while (more) {
		more = false;
		for (uint32_t r = 0; r < p->n_rules; r++) {
			uint32_t i = p->rule_at[r];
			for (;;) {
				bool nul = true, prod = true;
				for (; p->el[i].op > GRAM_ALT; i++) {
					const struct gram_elem *e = &p->el[i];
					if (e->op == GRAM_SET) {
						nul = false;
					} else {
						nul = nul && (p->flag[e->a] & F_NULL);
						prod = prod && (p->flag[e->a] & F_PROD);
					}
				}
				uint8_t f = (uint8_t)((nul ? F_NULL : 0) | (prod ? F_PROD : 0));
				if (i == p->rule_at[r] || p->el[i - 1].op == GRAM_ALT)
					f |= F_EMPTY;
				if ((p->flag[r] | f) != p->flag[r])
					p->flag[r] |= f, more = true;
				if (p->el[i++].op == GRAM_END)
					break;
			}
		}
	}
}

/* Left recursion: a rule reachable from itself through references each at
 * the start of an alternative or after rules with an empty alternative
 * only (llama.cpp's test: `( [x]* )*` passes it, nullable through a group;
 * the matcher's cycle check covers that kind). Depth-first,
 * an explicit stack of (rule, element) in tmp's room. */
static int left_recursion(struct gp *p)
{
	uint32_t *st = (uint32_t *)p->tmp; /* pairs: rule, next element */

	for (uint32_t r0 = 0; r0 < p->n_rules; r0++) {
		uint32_t n = 0;
		if (p->flag[r0] & F_BLACK)
			continue;
		st[n++] = r0, st[n++] = p->rule_at[r0];
		p->flag[r0] |= F_GREY;
		while (n) {
			uint32_t r = st[n - 2], i = st[n - 1], next = UINT32_MAX;
			/* the next leftmost reference from element i on */
			for (; p->el[i].op != GRAM_END; i++) {
				const struct gram_elem *e = &p->el[i];
				if (e->op == GRAM_RULE) {
					next = e->a;
					/* after a nullable rule, the next element is leftmost too;
					 * else skip to the next alternative */
					if (p->flag[e->a] & F_EMPTY)
						i++;
					else
						while (p->el[i].op > GRAM_ALT)
							i++;
					break;
				}
				if (e->op == GRAM_SET)
					while (p->el[i + 1].op > GRAM_ALT)
						i++;
			}
			st[n - 1] = i;
			if (next == UINT32_MAX) {
				p->flag[r] = (uint8_t)((p->flag[r] & ~F_GREY) | F_BLACK);
				n -= 2;
				continue;
			}
			if (p->flag[next] & F_GREY)
				return fail_at(p, p->def_at[next], -LLMK_EFORMAT, "left recursion in rule",
					       p->name[next], p->name[next] ? p->name_len[next] : 0);
			if (p->flag[next] & F_BLACK)
				continue;
			p->flag[next] |= F_GREY;
			st[n++] = next, st[n++] = p->rule_at[next];
		}
	}
	return 0;
}

static int check(struct gp *p)
{
	uint32_t root = UINT32_MAX;

	for (uint32_t r = 0; r < p->n_rules; r++) {
		if (!(p->flag[r] & F_DEF))
			return fail_at(p, p->ref_at[r], -LLMK_EFORMAT, "undefined rule", p->name[r],
				       p->name_len[r]);
		if (p->name[r] && p->name_len[r] == 4 && !memcmp(p->name[r], "root", 4))
			root = r;
	}
	if (root == UINT32_MAX)
		return fail_at(p, (size_t)(p->end - p->s0), -LLMK_EFORMAT, "no rule named 'root'", 0,
			       0);
	fixpoints(p);
	if (left_recursion(p))
		return p->r;
	if (!(p->flag[root] & F_PROD))
		return fail_at(p, p->def_at[root], -LLMK_EFORMAT,
			       "the language is empty (no finite string derives from 'root')", 0, 0);
	return (int)root;
}

/* Scratch sizes: the tables at their bounds, and the parse's bookkeeping. */
static size_t scratch_bytes(void)
{
	return 2 * GRAM_MAX_ELEMS * sizeof(struct gram_elem) + 2 * GRAM_MAX_RANGES * sizeof(uint32_t) +
	       GRAM_MAX_RULES * (sizeof(const char *) + 4 * sizeof(uint32_t) + sizeof(uint64_t) + 1);
}

int gram_parse(struct gram *g, struct llm_mem *mem, const char *text, size_t len, char *err,
	       size_t errlen)
{
	struct gp p = {.s0 = text, .s = text, .end = text + len, .err = err, .errlen = errlen};
	size_t sb = scratch_bytes(), fb;
	uint8_t *b, *q;
	int r;

	memset(g, 0, sizeof *g);
	if (len > GRAM_MAX_TEXT) {
		plat_snprintf(err, errlen, "grammar of %zu bytes (the limit is %u)", len,
			      GRAM_MAX_TEXT);
		return -LLMK_ERANGE;
	}
	if (!(b = llm_mem_alloc(mem, sb, &r))) {
		plat_snprintf(err, errlen, "no memory for the grammar's parse (%zu bytes)", sb);
		return r;
	}
	q = b;
	p.el = (struct gram_elem *)q, q += GRAM_MAX_ELEMS * sizeof *p.el;
	p.tmp = (struct gram_elem *)q, q += GRAM_MAX_ELEMS * sizeof *p.tmp;
	p.rng = (uint32_t *)q, q += 2 * GRAM_MAX_RANGES * sizeof(uint32_t);
	p.name = (const char **)q, q += GRAM_MAX_RULES * sizeof *p.name;
	p.rule_at = (uint32_t *)q, q += GRAM_MAX_RULES * sizeof(uint32_t);
	p.name_len = (uint32_t *)q, q += GRAM_MAX_RULES * sizeof(uint32_t);
	p.ref_at = (uint32_t *)q, q += GRAM_MAX_RULES * sizeof(uint32_t);
	p.def_at = (uint32_t *)q, q += GRAM_MAX_RULES * sizeof(uint32_t);
	p.wt = (uint64_t *)q, q += GRAM_MAX_RULES * sizeof(uint64_t);
	p.flag = q;

	space(&p, true);
	while (p.s < p.end && !rule(&p))
		;
	r = p.r ? p.r : check(&p);
	if (r < 0)
		goto out;
	g->root = (uint32_t)r;
	fb = p.n_el * sizeof *g->el + 2 * (size_t)p.n_rng * sizeof(uint32_t) +
	     p.n_rules * sizeof(uint32_t);
	if (!(g->block = llm_mem_alloc(mem, fb, &r))) {
		plat_snprintf(err, errlen, "no memory for the grammar (%zu bytes)", fb);
		goto out;
	}
	g->mem = mem;
	g->block_bytes = fb;
	q = g->block;
	g->el = (struct gram_elem *)q, q += p.n_el * sizeof *g->el;
	g->rng = (uint32_t *)q, q += 2 * (size_t)p.n_rng * sizeof(uint32_t);
	g->rule_at = (uint32_t *)q;
	memcpy(g->el, p.el, p.n_el * sizeof *g->el);
	memcpy(g->rng, p.rng, 2 * (size_t)p.n_rng * sizeof(uint32_t));
	memcpy(g->rule_at, p.rule_at, p.n_rules * sizeof(uint32_t));
	g->n_el = p.n_el;
	g->n_rng = p.n_rng;
	g->n_rules = p.n_rules;
	r = 0;
out:
	llm_mem_free(mem, b, sb);
	return r;
}

void gram_free(struct gram *g)
{
	if (g->block)
		llm_mem_free(g->mem, g->block, g->block_bytes);
	memset(g, 0, sizeof *g);
}
