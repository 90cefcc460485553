/*
 * llm/grammar_json.c — the JSON (RFC 8259) reader behind llm/grammar_schema.c
 * (grammar_json.h): recursive descent, every value a node, the depth and
 * the node count bounded so a hostile schema is an error line, not a
 * stack overflow.
 */
#include "grammar_json.h"

int js_fail(struct js_doc *j, int r, const char *what, const char *a, uint32_t an)
{
	if (j->r)
		return j->r;
	if (an > 40)
		an = 40;
	char name[48];
	memcpy(name, a ? a : "", a ? an : 0);
	name[a ? an : 0] = 0;
	plat_snprintf(j->err, j->errlen, "json schema: %s%s%s%s", what, a ? " '" : "", name,
		      a ? "'" : "");
	return j->r = r;
}


static void ws(struct js_doc *j)
{
	while (j->s < j->end && (*j->s == ' ' || *j->s == '\t' || *j->s == '\n' || *j->s == '\r'))
		j->s++;
}

static int at_fail(struct js_doc *j, const char *what)
{
	char m[96];
	plat_snprintf(m, sizeof m, "byte %u: %s", (unsigned)(j->s - j->s0), what);
	return js_fail(j, -LLMK_EFORMAT, m, NULL, 0);
}

static int str(struct js_doc *j, const char **s, uint32_t *n)
{
	j->s++; /* '"' */
	*s = j->s;
	while (j->s < j->end && *j->s != '"') {
		if ((uint8_t)*j->s < 0x20)
			return at_fail(j, "a control character in a string");
		j->s += *j->s == '\\' && j->s + 1 < j->end ? 2 : 1;
	}
	if (j->s >= j->end)
		return at_fail(j, "a string without its closing quote");
	*n = (uint32_t)(j->s - *s);
	j->s++;
	return 0;
}

static int value(struct js_doc *j, uint32_t *idx);

static int lit(struct js_doc *j, const char *w, uint8_t t, struct js_node *x)
{
	size_t n = strlen(w);
	if ((size_t)(j->end - j->s) < n || memcmp(j->s, w, n))
		return at_fail(j, "expecting a JSON value");
	j->s += n;
	x->type = t;
	return 0;
}

static int value(struct js_doc *j, uint32_t *idx)
{
	struct js_node *x;
	uint32_t me, last = 0;

	ws(j);
	if (j->n_nd >= JS_MAX_NODES)
		return js_fail(j, -LLMK_ERANGE, "more values than the limit (16384)", NULL, 0);
	if (++j->depth > JS_MAX_DEPTH)
		return js_fail(j, -LLMK_ERANGE, "nested deeper than the limit (64)", NULL, 0);
	me = j->n_nd++;
	x = &j->nd[me];
	*idx = me + 1;
	if (j->s >= j->end)
		return at_fail(j, "unexpected end");
	switch (*j->s) {
	case '"':
		x->type = JS_STR;
		if (str(j, &x->s, &x->n))
			return j->r;
		break;
	case 't': return lit(j, "true", JS_TRUE, x) || (j->depth--, 0);
	case 'f': return lit(j, "false", JS_FALSE, x) || (j->depth--, 0);
	case 'n': return lit(j, "null", JS_NULL, x) || (j->depth--, 0);
	case '[':
	case '{': {
		bool obj = *j->s == '{';
		char close = obj ? '}' : ']';
		x->type = obj ? JS_OBJ : JS_ARR;
		j->s++;
		ws(j);
		if (j->s < j->end && *j->s == close) {
			j->s++;
			break;
		}
		for (;;) {
			const char *k = NULL;
			uint32_t kn = 0, c;
			ws(j);
			if (obj) {
				if (j->s >= j->end || *j->s != '"')
					return at_fail(j, "expecting a key");
				if (str(j, &k, &kn))
					return j->r;
				ws(j);
				if (j->s >= j->end || *j->s != ':')
					return at_fail(j, "expecting ':'");
				j->s++;
			}
			if (value(j, &c))
				return j->r;
			j->nd[c - 1].key = k;
			j->nd[c - 1].key_n = kn;
			if (last)
				j->nd[last - 1].next = c;
			else
				j->nd[me].child = c;
			last = c;
			ws(j);
			if (j->s < j->end && *j->s == ',') {
				j->s++;
				continue;
			}
			if (j->s < j->end && *j->s == close) {
				j->s++;
				break;
			}
			return at_fail(j, obj ? "expecting ',' or '}'" : "expecting ',' or ']'");
		}
		break;
	}
	default:
		if (*j->s != '-' && (*j->s < '0' || *j->s > '9'))
			return at_fail(j, "expecting a JSON value");
		x->type = JS_NUM;
		x->s = j->s;
		while (j->s < j->end && (*j->s == '+' || *j->s == '-' || *j->s == '.' ||
					  *j->s == 'e' || *j->s == 'E' || (*j->s >= '0' && *j->s <= '9')))
			j->s++;
		x->n = (uint32_t)(j->s - x->s);
	}
	j->depth--;
	return 0;
}

const struct js_node *js_at(const struct js_doc *j, uint32_t idx)
{
	return idx ? &j->nd[idx - 1] : NULL;
}

const struct js_node *js_member(const struct js_doc *j, const struct js_node *o, const char *k)
{
	size_t n = strlen(k);
	if (!o || o->type != JS_OBJ)
		return NULL;
	for (const struct js_node *c = js_at(j, o->child); c; c = js_at(j, c->next))
		if (c->key_n == n && !memcmp(c->key, k, n))
			return c;
	return NULL;
}

bool js_str_is(const struct js_node *x, const char *w)
{
	return x && x->type == JS_STR && x->n == strlen(w) && !memcmp(x->s, w, x->n);
}


int js_read(struct js_doc *d, uint32_t *top)
{
	if (!value(d, top)) {
		ws(d);
		if (d->s != d->end)
			at_fail(d, "text after the schema");
	}
	return d->r;
}
