/*
 * llm/jinja_parse.c — the chat template's tokens (jinja_lex.c) to a tree
 * (jinja_int.h).
 *
 * Recursive descent with Jinja's precedence: `a if c else b`, or, and, not,
 * comparisons (== != < <= > >= in, not in), + -, ~, * / // %, **, unary -,
 * then primaries with .attr, [i], [a:b:c], (args), | filter and `is` test.
 * Nesting is bounded (JJ_PARSE_DEPTH), elif links included.
 */
#include "jinja_int.h"

static struct jj_tok *cur(struct jj_ps *p)
{
	return &p->t[p->at];
}

static bool is_op(struct jj_ps *p, const char *op)
{
	struct jj_tok *t = cur(p);
	return t->t == T_OP && t->n == strlen(op) && memcmp(t->s, op, t->n) == 0;
}

static bool is_name(struct jj_ps *p, const char *name)
{
	struct jj_tok *t = cur(p);
	return t->t == T_NAME && jj_name_is(t->s, t->n, name);
}

static bool accept_op(struct jj_ps *p, const char *op)
{
	if (!is_op(p, op))
		return false;
	p->at++;
	return true;
}

static bool accept_name(struct jj_ps *p, const char *name)
{
	if (!is_name(p, name))
		return false;
	p->at++;
	return true;
}

static bool expect_op(struct jj_ps *p, const char *op)
{
	if (accept_op(p, op))
		return true;
	jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected '%s'", op);
	return false;
}

static struct jj_node *node(struct jj_ps *p, uint8_t k, uint32_t pos)
{
	struct jj_node *n = jj_alloc(p->j, sizeof *n);
	if (n) {
		memset(n, 0, sizeof *n);
		n->k = k;
		n->pos = pos;
	}
	return n;
}

/* A growing array of nodes (the kids of a list, call, block). */
static bool add_kid(struct jj_ps *p, struct jj_node *n, struct jj_node *kid, uint32_t *cap)
{
	if (!kid)
		return false;
	if (n->nk == *cap) {
		uint32_t c = *cap ? *cap * 2 : 4;
		struct jj_node **k = jj_alloc(p->j, c * sizeof *k);
		if (!k)
			return false;
		if (n->nk)
			memcpy(k, n->kid, n->nk * sizeof *k);
		n->kid = k;
		*cap = c;
	}
	n->kid[n->nk++] = kid;
	return true;
}

static struct jj_node *expr(struct jj_ps *p);
static struct jj_node *unary(struct jj_ps *p);

static bool enter(struct jj_ps *p)
{
	if (++p->depth > JJ_PARSE_DEPTH) {
		jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "nesting deeper than %d", JJ_PARSE_DEPTH);
		return false;
	}
	return true;
}

/* (a, b=c, ...) after the '(' */
static bool call_args(struct jj_ps *p, struct jj_node *n)
{
	uint32_t cap = 0;

	while (!accept_op(p, ")")) {
		struct jj_node *a;
		if (cur(p)->t == T_NAME && p->t[p->at + 1].t == T_OP && p->t[p->at + 1].n == 1 &&
		    p->t[p->at + 1].s[0] == '=') {
			a = node(p, N_KWARG, cur(p)->pos);
			if (!a)
				return false;
			a->s = cur(p)->s;
			a->sn = cur(p)->n;
			p->at += 2;
			a->a = expr(p);
			if (!a->a)
				return false;
		} else {
			a = expr(p);
		}
		if (!add_kid(p, n, a, &cap))
			return false;
		if (!is_op(p, ")") && !expect_op(p, ","))
			return false;
	}
	return true;
}

static struct jj_node *literal_list(struct jj_ps *p, uint32_t pos, const char *close)
{
	struct jj_node *n = node(p, N_LIST, pos);
	uint32_t cap = 0;

	if (!n)
		return NULL;
	while (!accept_op(p, close)) {
		if (!add_kid(p, n, expr(p), &cap))
			return NULL;
		if (!is_op(p, close) && !expect_op(p, ","))
			return NULL;
	}
	return n;
}

static struct jj_node *primary(struct jj_ps *p)
{
	struct jj_tok *t = cur(p);
	struct jj_node *n;

	if (t->t == T_STR) {
		if (!(n = node(p, N_LIT, t->pos)))
			return NULL;
		/* adjacent literals are one string, as in Python */
		struct jj_buf b = {0};
		while (cur(p)->t == T_STR) {
			jj_buf_put(p->j, &b, cur(p)->s, cur(p)->n, NULL);
			p->at++;
		}
		n->lit = jj_buf_str(&b);
		return p->j->err ? NULL : n;
	}
	if (t->t == T_INT || t->t == T_FLOAT) {
		if (!(n = node(p, N_LIT, t->pos)))
			return NULL;
		n->lit = jj_int(t->i);
		if (t->t == T_FLOAT) {
			n->lit.t = JV_FLOAT;
			n->lit.u.s = t->s;
			n->lit.n = t->n;
		}
		p->at++;
		return n;
	}
	if (t->t == T_NAME) {
		if (!(n = node(p, N_LIT, t->pos)))
			return NULL;
		p->at++;
		if (jj_name_is(t->s, t->n, "true") || jj_name_is(t->s, t->n, "True"))
			n->lit = jj_bool(true);
		else if (jj_name_is(t->s, t->n, "false") || jj_name_is(t->s, t->n, "False"))
			n->lit = jj_bool(false);
		else if (jj_name_is(t->s, t->n, "none") || jj_name_is(t->s, t->n, "None"))
			n->lit = jj_none();
		else {
			n->k = N_NAME;
			n->s = t->s;
			n->sn = t->n;
		}
		return n;
	}
	if (accept_op(p, "(")) {
		uint32_t pos = t->pos;
		if (accept_op(p, ")"))
			return node(p, N_LIST, pos);
		n = expr(p);
		if (n && accept_op(p, ",")) { /* a tuple: a list here */
			struct jj_node *l = node(p, N_LIST, pos);
			uint32_t cap = 0;
			if (!l || !add_kid(p, l, n, &cap))
				return NULL;
			while (!accept_op(p, ")")) {
				if (!add_kid(p, l, expr(p), &cap))
					return NULL;
				if (!is_op(p, ")") && !expect_op(p, ","))
					return NULL;
			}
			return l;
		}
		return n && expect_op(p, ")") ? n : NULL;
	}
	if (accept_op(p, "["))
		return literal_list(p, t->pos, "]");
	if (accept_op(p, "{")) {
		uint32_t cap = 0;
		if (!(n = node(p, N_DICT, t->pos)))
			return NULL;
		while (!accept_op(p, "}")) {
			if (!add_kid(p, n, expr(p), &cap) || !expect_op(p, ":") ||
			    !add_kid(p, n, expr(p), &cap))
				return NULL;
			if (!is_op(p, "}") && !expect_op(p, ","))
				return NULL;
		}
		return n;
	}
	jj_fail(p->j, -LLMK_EFORMAT, t->pos, "unexpected %s",
		t->t == T_EOF ? "end of template" : t->t == T_VC || t->t == T_BC ? "end of tag" : "token");
	return NULL;
}

/* After a filter's or test's name: its arguments, if any. */
static bool filter_args(struct jj_ps *p, struct jj_node *f)
{
	if (accept_op(p, "("))
		return call_args(p, f);
	return true;
}

static struct jj_node *postfix(struct jj_ps *p, struct jj_node *n)
{
	while (n && !p->j->err) {
		struct jj_tok *t = cur(p);
		struct jj_node *m;
		if (accept_op(p, ".")) {
			if (cur(p)->t != T_NAME && cur(p)->t != T_INT) {
				jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected a name after '.'");
				return NULL;
			}
			if (!(m = node(p, N_ATTR, t->pos)))
				return NULL;
			m->a = n;
			m->s = cur(p)->s;
			m->sn = cur(p)->n;
			p->at++;
			n = m;
		} else if (accept_op(p, "[")) {
			struct jj_node *parts[3] = {0};
			int k = 0;
			bool slice = false;
			while (!accept_op(p, "]")) {
				if (accept_op(p, ":")) {
					slice = true;
					if (++k > 2) {
						jj_fail(p->j, -LLMK_EFORMAT, t->pos, "a slice has 3 parts");
						return NULL;
					}
					continue;
				}
				if (parts[k]) {
					jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected ']'");
					return NULL;
				}
				if (!(parts[k] = expr(p)))
					return NULL;
			}
			if (!(m = node(p, slice ? N_SLICE : N_INDEX, t->pos)))
				return NULL;
			if (!slice && !parts[0]) {
				jj_fail(p->j, -LLMK_EFORMAT, t->pos, "an empty index");
				return NULL;
			}
			m->a = n;
			m->b = parts[0];
			m->c = parts[1];
			m->d = parts[2];
			n = m;
		} else if (accept_op(p, "(")) {
			if (!(m = node(p, N_CALL, n->pos)))
				return NULL;
			m->a = n;
			if (!call_args(p, m))
				return NULL;
			n = m;
		} else {
			break;
		}
	}
	return n;
}

/* filters and tests bind to the unary operand */
static struct jj_node *filters(struct jj_ps *p, struct jj_node *n)
{
	while (n && !p->j->err) {
		struct jj_tok *t = cur(p);
		struct jj_node *m;
		if (accept_op(p, "|")) {
			if (cur(p)->t != T_NAME) {
				jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected a filter name");
				return NULL;
			}
			if (!(m = node(p, N_FILTER, t->pos)))
				return NULL;
			m->s = cur(p)->s;
			m->sn = cur(p)->n;
			p->at++;
			/* the operand is the first argument */
			uint32_t cap = 0;
			if (!add_kid(p, m, n, &cap))
				return NULL;
			if (accept_op(p, "(")) {
				m->nk = 0;
				cap = 0;
				struct jj_node tmp = {0};
				if (!call_args(p, &tmp))
					return NULL;
				if (!add_kid(p, m, n, &cap))
					return NULL;
				for (uint32_t i = 0; i < tmp.nk; i++)
					if (!add_kid(p, m, tmp.kid[i], &cap))
						return NULL;
			}
			n = m;
		} else if (accept_name(p, "is")) {
			if (!(m = node(p, N_TEST, t->pos)))
				return NULL;
			m->neg = accept_name(p, "not");
			if (cur(p)->t != T_NAME) {
				jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected a test name");
				return NULL;
			}
			m->s = cur(p)->s;
			m->sn = cur(p)->n;
			m->a = n;
			p->at++;
			if (is_op(p, "(")) {
				if (!filter_args(p, m))
					return NULL;
			} else if (cur(p)->t == T_STR || cur(p)->t == T_INT ||
				   (cur(p)->t == T_NAME && !is_name(p, "and") && !is_name(p, "or") &&
				    !is_name(p, "else") && !is_name(p, "if") && !is_name(p, "in") &&
				    !is_name(p, "is") && !is_name(p, "not"))) {
				/* `is sameas none`, `is equalto 'x'`: one argument, no parentheses */
				uint32_t cap = 0;
				struct jj_node *arg = postfix(p, primary(p));
				if (!add_kid(p, m, arg, &cap))
					return NULL;
			}
			n = m;
		} else {
			break;
		}
	}
	return n;
}

static struct jj_node *unary(struct jj_ps *p)
{
	struct jj_node *n;
	uint32_t pos = cur(p)->pos;

	if (!enter(p))
		return NULL;
	if (accept_op(p, "-")) {
		if ((n = node(p, N_NEG, pos)))
			n->a = unary(p);
		n = n && n->a ? n : NULL;
	} else if (accept_op(p, "+")) {
		n = unary(p);
	} else {
		n = filters(p, postfix(p, primary(p)));
	}
	p->depth--;
	return n;
}

static struct jj_node *bin(struct jj_ps *p, uint8_t op, struct jj_node *a, struct jj_node *b,
			   uint32_t pos)
{
	struct jj_node *n;
	if (!a || !b || !(n = node(p, N_BIN, pos)))
		return NULL;
	n->op = op;
	n->a = a;
	n->b = b;
	return n;
}

static struct jj_node *power(struct jj_ps *p)
{
	struct jj_node *n = unary(p);
	while (n && is_op(p, "**")) {
		uint32_t pos = cur(p)->pos;
		p->at++;
		n = bin(p, OP_POW, n, unary(p), pos);
	}
	return n;
}

static struct jj_node *mul(struct jj_ps *p)
{
	struct jj_node *n = power(p);
	for (;;) {
		uint32_t pos = cur(p)->pos;
		uint8_t op = is_op(p, "*") ? OP_MUL : is_op(p, "/") ? OP_DIV : is_op(p, "//") ? OP_FDIV
			   : is_op(p, "%") ? OP_MOD : 0;
		if (!n || !op)
			return n;
		p->at++;
		n = bin(p, op, n, power(p), pos);
	}
}

static struct jj_node *concat(struct jj_ps *p)
{
	struct jj_node *n = mul(p);
	while (n && is_op(p, "~")) {
		uint32_t pos = cur(p)->pos;
		p->at++;
		n = bin(p, OP_CAT, n, mul(p), pos);
	}
	return n;
}

static struct jj_node *add(struct jj_ps *p)
{
	struct jj_node *n = concat(p);
	for (;;) {
		uint32_t pos = cur(p)->pos;
		uint8_t op = is_op(p, "+") ? OP_ADD : is_op(p, "-") ? OP_SUB : 0;
		if (!n || !op)
			return n;
		p->at++;
		n = bin(p, op, n, concat(p), pos);
	}
}

static struct jj_node *compare(struct jj_ps *p)
{
	struct jj_node *n = add(p);
	for (;;) {
		uint32_t pos = cur(p)->pos;
		uint8_t op = is_op(p, "==") ? OP_EQ : is_op(p, "!=") ? OP_NE : is_op(p, "<") ? OP_LT
			   : is_op(p, "<=") ? OP_LE : is_op(p, ">") ? OP_GT : is_op(p, ">=") ? OP_GE
			   : is_name(p, "in") ? OP_IN : 0;
		if (!op && is_name(p, "not") && p->t[p->at + 1].t == T_NAME &&
		    jj_name_is(p->t[p->at + 1].s, p->t[p->at + 1].n, "in")) {
			op = OP_NOTIN;
			p->at++;
		}
		if (!n || !op)
			return n;
		p->at++;
		n = bin(p, op, n, add(p), pos);
	}
}

static struct jj_node *not_(struct jj_ps *p)
{
	uint32_t pos = cur(p)->pos;
	if (accept_name(p, "not")) {
		struct jj_node *n;
		if (!enter(p))
			return NULL;
		if ((n = node(p, N_NOT, pos)))
			n->a = not_(p);
		p->depth--;
		return n && n->a ? n : NULL;
	}
	return compare(p);
}

static struct jj_node *and_(struct jj_ps *p)
{
	struct jj_node *n = not_(p);
	while (n && is_name(p, "and")) {
		uint32_t pos = cur(p)->pos;
		p->at++;
		n = bin(p, OP_AND, n, not_(p), pos);
	}
	return n;
}

static struct jj_node *or_(struct jj_ps *p)
{
	struct jj_node *n = and_(p);
	while (n && is_name(p, "or")) {
		uint32_t pos = cur(p)->pos;
		p->at++;
		n = bin(p, OP_OR, n, and_(p), pos);
	}
	return n;
}

static struct jj_node *expr(struct jj_ps *p)
{
	struct jj_node *n, *c;
	uint32_t pos = cur(p)->pos;

	if (!enter(p))
		return NULL;
	n = or_(p);
	if (n && accept_name(p, "if")) {
		if (!(c = node(p, N_COND, pos)))
			return NULL;
		c->a = n;
		c->b = or_(p);
		if (c->b && accept_name(p, "else"))
			c->c = expr(p);
		n = c->b ? c : NULL;
	}
	p->depth--;
	return n;
}

/* ---- statements ---- */

static struct jj_node *block(struct jj_ps *p, const char *const *stops, int *stop);

static bool end_tag(struct jj_ps *p)
{
	if (cur(p)->t == T_BC) {
		p->at++;
		return true;
	}
	jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected the end of the tag");
	return false;
}

static struct jj_node *stmt_if(struct jj_ps *p, uint32_t pos);

/* an elif chain nests: each link counts toward JJ_PARSE_DEPTH */
static struct jj_node *stmt_if_link(struct jj_ps *p, uint32_t pos)
{
	struct jj_node *n;

	if (!enter(p))
		return NULL;
	n = stmt_if(p, pos);
	p->depth--;
	return n;
}

static struct jj_node *stmt_if(struct jj_ps *p, uint32_t pos)
{
	static const char *const stops[] = {"elif", "else", "endif", NULL};
	struct jj_node *n = node(p, N_IF, pos);
	int stop;

	if (!n || !(n->a = expr(p)) || !end_tag(p) || !(n->b = block(p, stops, &stop)))
		return NULL;
	if (stop == 0) { /* elif: an if in the else */
		n->c = stmt_if_link(p, cur(p)->pos);
		return n->c ? n : NULL;
	}
	if (stop == 1) {
		static const char *const end[] = {"endif", NULL};
		if (!end_tag(p) || !(n->c = block(p, end, &stop)))
			return NULL;
	}
	return end_tag(p) ? n : NULL;
}

static bool name_kid(struct jj_ps *p, struct jj_node *n, uint32_t *cap)
{
	struct jj_node *v;
	if (cur(p)->t != T_NAME) {
		jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected a name");
		return false;
	}
	if (!(v = node(p, N_NAME, cur(p)->pos)))
		return false;
	v->s = cur(p)->s;
	v->sn = cur(p)->n;
	p->at++;
	return add_kid(p, n, v, cap);
}

static struct jj_node *stmt_for(struct jj_ps *p, uint32_t pos)
{
	static const char *const stops[] = {"else", "endfor", NULL};
	struct jj_node *n = node(p, N_FOR, pos);
	uint32_t cap = 0;
	int stop;

	if (!n)
		return NULL;
	accept_op(p, "(");
	do {
		if (!name_kid(p, n, &cap))
			return NULL;
	} while (accept_op(p, ","));
	accept_op(p, ")");
	if (!accept_name(p, "in")) {
		jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected 'in'");
		return NULL;
	}
	/* the iterable: no conditional expression, `if` filters the loop */
	if (!(n->a = or_(p)))
		return NULL;
	if (accept_name(p, "if") && !(n->d = or_(p)))
		return NULL;
	if (accept_name(p, "recursive")) {
		jj_fail(p->j, -LLMK_ENOTSUP, pos, "recursive loops are not supported");
		return NULL;
	}
	if (!end_tag(p))
		return NULL;
	p->loops++;
	n->b = block(p, stops, &stop);
	p->loops--;
	if (!n->b)
		return NULL;
	if (stop == 0) {
		static const char *const end[] = {"endfor", NULL};
		if (!end_tag(p) || !(n->c = block(p, end, &stop)))
			return NULL;
	}
	return end_tag(p) ? n : NULL;
}

static struct jj_node *stmt_set(struct jj_ps *p, uint32_t pos)
{
	struct jj_node *n = node(p, N_SET, pos);
	uint32_t cap = 0;

	if (!n || cur(p)->t != T_NAME) {
		if (n)
			jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected a name to set");
		return NULL;
	}
	n->s = cur(p)->s;
	n->sn = cur(p)->n;
	p->at++;
	if (accept_op(p, ".")) { /* ns.attr = */
		if (cur(p)->t != T_NAME) {
			jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected an attribute name");
			return NULL;
		}
		if (!(n->c = node(p, N_NAME, cur(p)->pos)))
			return NULL;
		n->c->s = cur(p)->s;
		n->c->sn = cur(p)->n;
		p->at++;
	} else if (is_op(p, ",")) { /* a, b = pair */
		p->at--;
		do {
			if (!name_kid(p, n, &cap))
				return NULL;
		} while (accept_op(p, ","));
	}
	if (cur(p)->t == T_BC && !n->c && !n->nk) { /* {% set x %}...{% endset %} */
		static const char *const end[] = {"endset", NULL};
		int stop;
		n->k = N_SETBLOCK;
		if (!end_tag(p) || !(n->b = block(p, end, &stop)) || !end_tag(p))
			return NULL;
		return n;
	}
	if (!expect_op(p, "=") || !(n->a = expr(p)))
		return NULL;
	if (is_op(p, ",")) { /* x = a, b: a tuple */
		struct jj_node *l = node(p, N_LIST, n->a->pos);
		uint32_t lc = 0;
		if (!l || !add_kid(p, l, n->a, &lc))
			return NULL;
		while (accept_op(p, ","))
			if (!add_kid(p, l, expr(p), &lc))
				return NULL;
		n->a = l;
	}
	return end_tag(p) ? n : NULL;
}

static struct jj_node *stmt_macro(struct jj_ps *p, uint32_t pos)
{
	static const char *const end[] = {"endmacro", NULL};
	struct jj_node *n = node(p, N_MACRO, pos);
	uint32_t cap = 0;
	int stop;

	if (!n || cur(p)->t != T_NAME) {
		if (n)
			jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected the macro's name");
		return NULL;
	}
	uint32_t loops = p->loops; /* a macro's body is outside any loop around it */
	p->loops = 0;
	n->s = cur(p)->s;
	n->sn = cur(p)->n;
	p->at++;
	if (!expect_op(p, "("))
		return NULL;
	/* parameters: names, each maybe `= default` (kept in the name node's a) */
	while (!accept_op(p, ")")) {
		if (!name_kid(p, n, &cap))
			return NULL;
		if (accept_op(p, "=") && !(n->kid[n->nk - 1]->a = expr(p)))
			return NULL;
		if (!is_op(p, ")") && !expect_op(p, ","))
			return NULL;
	}
	if (!end_tag(p) || !(n->b = block(p, end, &stop)) || !end_tag(p))
		return NULL;
	p->loops = loops;
	return n;
}

static struct jj_node *statement(struct jj_ps *p)
{
	struct jj_tok *t = cur(p);
	uint32_t pos = t->pos;

	if (t->t != T_NAME) {
		jj_fail(p->j, -LLMK_EFORMAT, pos, "expected a statement");
		return NULL;
	}
	p->at++;
	if (jj_name_is(t->s, t->n, "if"))
		return stmt_if(p, pos);
	if (jj_name_is(t->s, t->n, "for"))
		return stmt_for(p, pos);
	if (jj_name_is(t->s, t->n, "set"))
		return stmt_set(p, pos);
	if (jj_name_is(t->s, t->n, "macro"))
		return stmt_macro(p, pos);
	if (jj_name_is(t->s, t->n, "break") || jj_name_is(t->s, t->n, "continue")) {
		struct jj_node *n;
		if (!p->loops) {
			jj_fail(p->j, -LLMK_EFORMAT, pos, "'%.*s' outside a for loop", (int)t->n, t->s);
			return NULL;
		}
		n = node(p, t->s[0] == 'b' ? N_BREAK : N_CONTINUE, pos);
		return n && end_tag(p) ? n : NULL;
	}
	if (jj_name_is(t->s, t->n, "filter")) { /* {% filter f(args) %}body{% endfilter %} */
		static const char *const end[] = {"endfilter", NULL};
		struct jj_node *n = node(p, N_FILTERBLOCK, pos);
		int stop;
		if (!n || cur(p)->t != T_NAME) {
			if (n)
				jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected a filter name");
			return NULL;
		}
		n->s = cur(p)->s;
		n->sn = cur(p)->n;
		p->at++;
		if (accept_op(p, "(") && !call_args(p, n))
			return NULL;
		if (!end_tag(p) || !(n->b = block(p, end, &stop)) || !end_tag(p))
			return NULL;
		return n;
	}
	if (jj_name_is(t->s, t->n, "generation")) { /* HF's assistant-mask marker: a plain block */
		static const char *const end[] = {"endgeneration", NULL};
		int stop;
		struct jj_node *b;
		if (!end_tag(p) || !(b = block(p, end, &stop)) || !end_tag(p))
			return NULL;
		return b;
	}
	jj_fail(p->j, -LLMK_ENOTSUP, pos, "the statement '%.*s' is not supported", (int)(t->n > 32 ? 32 : t->n), t->s);
	return NULL;
}

/* Statements until EOF (stops NULL) or a `{% stop %}` tag: *stop is its
 * index, the parser left on the tag's end (after the name). */
static struct jj_node *block(struct jj_ps *p, const char *const *stops, int *stop)
{
	struct jj_node *seq;
	uint32_t cap = 0;

	if (!enter(p) || !(seq = node(p, N_SEQ, cur(p)->pos)))
		return NULL;
	for (;;) {
		struct jj_tok *t = cur(p);
		struct jj_node *n = NULL;
		if (p->j->err)
			return NULL;
		if (!jj_step(p->j, t->pos))
			return NULL;
		if (t->t == T_EOF) {
			if (stops) {
				int last = 0;
				while (stops[last + 1])
					last++;
				jj_fail(p->j, -LLMK_EFORMAT, t->pos, "missing {%% %s %%}", stops[last]);
				return NULL;
			}
			break;
		}
		if (t->t == T_TEXT) {
			if ((n = node(p, N_TEXT, t->pos))) {
				n->s = t->s;
				n->sn = t->n;
			}
			p->at++;
		} else if (t->t == T_VO) {
			p->at++;
			if ((n = node(p, N_OUT, t->pos)) && (n->a = expr(p))) {
				if (cur(p)->t != T_VC) {
					jj_fail(p->j, -LLMK_EFORMAT, cur(p)->pos, "expected '}}'");
					return NULL;
				}
				p->at++;
			} else {
				return NULL;
			}
		} else if (t->t == T_BO) {
			p->at++;
			if (stops && cur(p)->t == T_NAME) {
				for (int i = 0; stops[i]; i++)
					if (is_name(p, stops[i])) {
						p->at++;
						*stop = i;
						p->depth--;
						return seq;
					}
			}
			n = statement(p);
		} else {
			jj_fail(p->j, -LLMK_EFORMAT, t->pos, "unexpected token");
			return NULL;
		}
		if (!add_kid(p, seq, n, &cap))
			return NULL;
	}
	p->depth--;
	return seq;
}

struct jj_node *jj_parse(struct jj *j)
{
	struct jj_ps p = {.j = j};
	int stop;

	if (!jj_lex(&p))
		return NULL;
	return block(&p, NULL, &stop);
}
