/*
 * llm/grammar_schema.c — a JSON schema as a GBNF grammar (grammar.h), the
 * language llama.cpp's common/json-schema-to-grammar.cpp gives it: the same
 * primitives (space, char, string, number, integer; an empty schema is any
 * object), properties in the schema's order, required ones first, the
 * optional ones after them in order, any subset of them; no other keys
 * unless additionalProperties says so.
 *
 * Supported: type (one or a list), properties, required,
 * additionalProperties (true, false or a schema; its keys are not kept from
 * the declared ones, as llama.cpp's are), enum, const, anyOf, oneOf, items,
 * prefixItems, minItems, maxItems, minLength, maxLength, an integer's
 * minimum, maximum, exclusiveMinimum, exclusiveMaximum, format (date,
 * time, date-time, uuid), $ref to "#", "#/definitions/NAME" and
 * "#/$defs/NAME", a string's pattern (gen_pattern's subset), allOf
 * (gen_allof, llama.cpp's object merge). Anything else
 * that would narrow the language (a number's bounds, allOf, ...) is
 * refused by name rather than silently widened.
 *
 * Two steps: the schema's text is parsed into nodes (llm/grammar_json.c;
 * depth and count bounded), then each subschema becomes a rule
 * "rN ::= ...", its parts' rules written before it.
 */
#include "grammar.h"
#include "grammar_json.h"

#define JS_MAX_PARTS 128u  /* properties, enum values, alternatives of one schema */
#define JS_MAX_REFS 64u

struct js {
	struct js_doc d;    /* the schema, and the first error */
	char *out;
	size_t len, cap;
	uint32_t n_rules;
	const struct js_node *root;
	const char *ref_s[JS_MAX_REFS];
	uint32_t ref_n[JS_MAX_REFS], ref_rule[JS_MAX_REFS], n_refs;
	uint32_t depth;
};

/* ---- the grammar's text ---- */

static void put(struct js *j, const char *s, size_t n)
{
	if (j->len + n + 1 > j->cap) {
		js_fail(&j->d, -LLMK_ERANGE, "the grammar passes its buffer", NULL, 0);
		return;
	}
	memcpy(j->out + j->len, s, n);
	j->len += n;
	j->out[j->len] = 0;
}

static void puts_(struct js *j, const char *s)
{
	put(j, s, strlen(s));
}

static void putf(struct js *j, const char *fmt, uint32_t v)
{
	char b[48];
	puts_(j, (plat_snprintf(b, sizeof b, fmt, v), b));
}

static void rule_ref(struct js *j, uint32_t id)
{
	putf(j, " r%u", id);
}

/* A JSON text as a GBNF literal's inside: '"' and '\' escaped. */
static void lit_bytes(struct js *j, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			put(j, "\\", 1);
		put(j, s + i, 1);
	}
}

/* A value, compact, as the literal of its JSON text (const and enum). */
static void lit_value(struct js *j, const struct js_node *x)
{
	switch (x->type) {
	case JS_NULL: puts_(j, "null"); break;
	case JS_TRUE: puts_(j, "true"); break;
	case JS_FALSE: puts_(j, "false"); break;
	case JS_NUM: lit_bytes(j, x->s, x->n); break;
	case JS_STR: lit_bytes(j, "\"", 1); lit_bytes(j, x->s, x->n); lit_bytes(j, "\"", 1); break;
	default: {
		bool obj = x->type == JS_OBJ;
		puts_(j, obj ? "{" : "[");
		for (const struct js_node *c = js_at(&j->d, x->child); c; c = js_at(&j->d, c->next)) {
			if (obj) {
				lit_bytes(j, "\"", 1);
				lit_bytes(j, c->key, c->key_n);
				lit_bytes(j, "\":", 2);
			}
			lit_value(j, c);
			if (c->next)
				puts_(j, ",");
		}
		puts_(j, obj ? "}" : "]");
	}
	}
}

static const char prelude[] =
	"space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
	"char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
	"string ::= \"\\\"\" char* \"\\\"\" space\n"
	"integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
	"decimal-part ::= [0-9]{1,16}\n"
	"number ::= (\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)? space\n"
	"integer ::= (\"-\"? integral-part) space\n"
	"boolean ::= (\"true\" | \"false\") space\n"
	"null ::= \"null\" space\n"
	"value ::= object | array | string | number | boolean | null\n"
	"object ::= \"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? \"}\" space\n"
	"array ::= \"[\" space ( value (\",\" space value)* )? \"]\" space\n"
	/* string formats, as llama.cpp draws them */
	"date ::= [0-9]{4} \"-\" ( \"0\" [1-9] | \"1\" [0-2] ) \"-\" ( \"0\" [1-9] | [1-2] [0-9] | \"3\" [0-1] )\n"
	"time ::= ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{3} )? "
	"( \"Z\" | ( \"+\" | \"-\" ) ( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] )\n"
	"date-time ::= date \"T\" time\n"
	"uuid ::= [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12}\n";

static int gen(struct js *j, const struct js_node *s, uint32_t *id);

static uint32_t new_rule(struct js *j)
{
	return j->n_rules++;
}

static void open_rule(struct js *j, uint32_t id)
{
	putf(j, "r%u ::=", id);
}

/* One rule naming a primitive. */
static int named(struct js *j, const char *name, uint32_t *id)
{
	*id = new_rule(j);
	open_rule(j, *id);
	puts_(j, " ");
	puts_(j, name);
	puts_(j, "\n");
	return j->d.r;
}

static uint32_t u32_of(const struct js_node *x, uint32_t dflt)
{
	uint32_t v = 0;
	if (!x || x->type != JS_NUM)
		return dflt;
	for (uint32_t i = 0; i < x->n && x->s[i] >= '0' && x->s[i] <= '9'; i++)
		v = v > 100000000 ? v : v * 10 + (uint32_t)(x->s[i] - '0');
	return v;
}

/* ---- pattern: a regular expression as a GBNF expression ---- */

#define JS_MAX_PATTERN 4096u

static uint32_t hex4(const char *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v = v * 16 + (uint32_t)(c <= '9' ? c - '0' : (c | 32) - 'a' + 10);
	}
	return v;
}

/* The control character a backslash escape letter stands for (b f n r t v), or 0. */
static char esc_of(char e)
{
	static const char from[] = "bfnrtv", to[] = "\b\f\n\r\t\v";

	for (int i = 0; from[i]; i++)
		if (from[i] == e)
			return to[i];
	return 0;
}

/* A JSON string's text (escapes as written, already checked by js_read)
 * decoded into out; its length, or -1 if it does not fit. */
static int json_unescape(const char *s, uint32_t n, char *out, uint32_t cap)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n;) {
		uint32_t cp = (uint8_t)s[i++];
		if (cp == '\\' && i < n) {
			char e = s[i++];
			if (e == 'u' && i + 4 <= n) {
				cp = hex4(s + i), i += 4;
				if (cp >= 0xd800 && cp < 0xdc00 && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u')
					cp = 0x10000 + ((cp - 0xd800) << 10) + (hex4(s + i + 2) - 0xdc00), i += 6;
			} else {
				cp = (uint8_t)(e != 'v' && esc_of(e) ? esc_of(e) : e);
			}
		}
		if (k + 4 > cap)
			return -1;
		if (cp < 0x80) {
			out[k++] = (char)cp;
		} else if (cp < 0x800) {
			out[k++] = (char)(0xc0 | cp >> 6);
			out[k++] = (char)(0x80 | (cp & 63));
		} else if (cp < 0x10000) {
			out[k++] = (char)(0xe0 | cp >> 12);
			out[k++] = (char)(0x80 | (cp >> 6 & 63));
			out[k++] = (char)(0x80 | (cp & 63));
		} else {
			out[k++] = (char)(0xf0 | cp >> 18);
			out[k++] = (char)(0x80 | (cp >> 12 & 63));
			out[k++] = (char)(0x80 | (cp >> 6 & 63));
			out[k++] = (char)(0x80 | (cp & 63));
		}
	}
	return (int)k;
}

/* One byte inside a GBNF literal or character class: controls as \xHH. */
static void pat_byte(struct js *j, char c, bool in_class)
{
	char b[8];

	if ((uint8_t)c < 0x20 || c == 0x7f) {
		plat_snprintf(b, sizeof b, "\\x%02X", (unsigned)(uint8_t)c);
		puts_(j, b);
	} else if (c == '"' || c == '\\' || (in_class && (c == ']' || c == '['))) {
		put(j, "\\", 1);
		put(j, &c, 1);
	} else {
		put(j, &c, 1);
	}
}

/* The class shorthands (also inside [...]): their ranges, or NULL. */
static const char *pat_shorthand(char c)
{
	switch (c) {
	case 'd': return "0-9";
	case 'w': return "0-9A-Za-z_";
	case 's': return " \\t\\n\\r\\x0B\\x0C";
	default: return NULL;
	}
}

/*
 * llama.cpp's pattern subset (json-schema-to-grammar.cpp, _visit_pattern):
 * anchored ^...$; literals; '.' (not a line break); [...] classes;
 * ( ) and (?: ) groups; '|'; '*', '+', '?' and {m}, {m,}, {,n}, {m,n}
 * after an item; a backslash before one of ^$.[]()|{}*+?-/ \\ is that
 * character. Ours also draws \d, \w and \s (llama.cpp's grammar refuses
 * them). Lookarounds and back-references would narrow the language: refused.
 */
static int gen_pattern(struct js *j, const struct js_node *pat, uint32_t *id)
{
	char p[JS_MAX_PATTERN];
	int len;
	uint32_t depth = 0;
	bool item = false; /* a quantifier has something before it */

	if (pat->type != JS_STR || (len = json_unescape(pat->s, pat->n, p, sizeof p)) < 0)
		return js_fail(&j->d, pat->type == JS_STR ? -LLMK_ERANGE : -LLMK_EINVAL,
			       "pattern must be a string of at most 4096 bytes", NULL, 0);
	if (len < 2 || p[0] != '^' || p[len - 1] != '$' || (len >= 3 && p[len - 2] == '\\'))
		return js_fail(&j->d, -LLMK_EINVAL, "pattern must start with '^' and end with '$'",
			       NULL, 0);
	*id = new_rule(j);
	open_rule(j, *id);
	puts_(j, " \"\\\"\" (");
	for (int i = 1; i < len - 1 && !j->d.r;) {
		char c = p[i++];
		if (c == '(') {
			if (i < len - 1 && p[i] == '?') {
				if (p[i + 1] != ':')
					return js_fail(&j->d, -LLMK_ENOTSUP, "pattern: lookarounds are not supported",
						       NULL, 0);
				i += 2;
			}
			if (++depth > GRAM_MAX_NESTING)
				return js_fail(&j->d, -LLMK_ERANGE, "pattern: groups nested too deep", NULL, 0);
			puts_(j, " (");
			item = false;
		} else if (c == ')') {
			if (!depth--)
				return js_fail(&j->d, -LLMK_EINVAL, "pattern: unbalanced parentheses", NULL, 0);
			puts_(j, " )");
			item = true;
		} else if (c == '|') {
			puts_(j, " |");
			item = false;
		} else if (c == '*' || c == '+' || c == '?') {
			if (!item)
				return js_fail(&j->d, -LLMK_EINVAL, "pattern: a quantifier follows nothing", NULL, 0);
			put(j, &c, 1);
			item = false; /* a quantifier of a quantifier (lazy a*?) is not drawn */
		} else if (c == '{') {
			uint32_t lo = 0, hi = 0;
			bool comma = false, has_hi = false;
			if (!item)
				return js_fail(&j->d, -LLMK_EINVAL, "pattern: a quantifier follows nothing", NULL, 0);
			for (;; i++) {
				if (i >= len - 1)
					return js_fail(&j->d, -LLMK_EINVAL, "pattern: unbalanced curly brackets", NULL, 0);
				if (p[i] == '}')
					break;
				if (p[i] == ',' && !comma) {
					comma = true;
				} else if (p[i] >= '0' && p[i] <= '9') {
					uint32_t *v = comma ? &hi : &lo;
					*v = *v > 100000 ? *v : *v * 10 + (uint32_t)(p[i] - '0');
					has_hi |= comma;
				} else {
					return js_fail(&j->d, -LLMK_EINVAL, "pattern: a bad {m,n}", NULL, 0);
				}
			}
			i++;
			if (!comma)
				putf(j, "{%u}", lo);
			else if (!has_hi)
				putf(j, "{%u,}", lo);
			else if (hi < lo)
				return js_fail(&j->d, -LLMK_EINVAL, "pattern: {m,n} with n < m", NULL, 0);
			else
				putf(j, "{%u,", lo), putf(j, "%u}", hi);
			item = false;
		} else if (c == '[') {
			puts_(j, " [");
			if (i < len - 1 && p[i] == '^')
				put(j, "^", 1), i++;
			bool first = true;
			for (;; first = false) {
				if (i >= len - 1)
					return js_fail(&j->d, -LLMK_EINVAL, "pattern: unbalanced square brackets", NULL, 0);
				char k = p[i++];
				if (k == ']' && !first)
					break;
				if (k == '\\' && i < len - 1) {
					char e = p[i++];
					const char *sh = pat_shorthand(e);
					char f = e == 'b' ? 0 : esc_of(e);
					if (sh)
						puts_(j, sh);
					else if (e == '-' || e == '^')
						puts_(j, e == '-' ? "\\x2D" : "\\x5E"); /* not a range, not a negation */
					else if (f)
						pat_byte(j, f, true);
					else if ((e >= '0' && e <= '9') || (e >= 'A' && e <= 'Z') || (e >= 'a' && e <= 'z'))
						return js_fail(&j->d, -LLMK_ENOTSUP, "pattern: an escape not supported:",
							       p + i - 2, 2);
					else
						pat_byte(j, e, true);
				} else {
					pat_byte(j, k, true);
				}
			}
			put(j, "]", 1);
			item = true;
		} else if (c == '.') {
			puts_(j, " [^\\x0A\\x0D]");
			item = true;
		} else if (c == '\\') {
			char e = p[i++];
			const char *sh = pat_shorthand(e);
			char f = e == 'b' ? 0 : esc_of(e);
			if (sh) {
				puts_(j, " [");
				puts_(j, sh);
				puts_(j, "]");
			} else if ((e >= '0' && e <= '9') || (e >= 'A' && e <= 'Z') ||
				   (e >= 'a' && e <= 'z' && !f)) {
				return js_fail(&j->d, -LLMK_ENOTSUP, "pattern: an escape not supported:", p + i - 2, 2);
			} else {
				puts_(j, " \"");
				pat_byte(j, f ? f : e, false);
				puts_(j, "\"");
			}
			item = true;
		} else {
			/* one character (all of a UTF-8 sequence) as a literal */
			puts_(j, " \"");
			pat_byte(j, c, false);
			while (i < len - 1 && ((uint8_t)p[i] & 0xc0) == 0x80)
				pat_byte(j, p[i++], false);
			puts_(j, "\"");
			item = true;
		}
	}
	if (depth && !j->d.r)
		return js_fail(&j->d, -LLMK_EINVAL, "pattern: unbalanced parentheses", NULL, 0);
	puts_(j, " ) \"\\\"\" space\n");
	return j->d.r;
}

static int gen_string(struct js *j, const struct js_node *s, uint32_t *id)
{
	const struct js_node *mn = js_member(&j->d, s, "minLength"), *mx = js_member(&j->d, s, "maxLength");
	const struct js_node *f = js_member(&j->d, s, "format");
	const struct js_node *pat = js_member(&j->d, s, "pattern");

	if (pat)
		return gen_pattern(j, pat, id);
	if (f) {
		static const char *const fmts[] = {"date", "time", "date-time", "uuid", NULL};
		for (int i = 0; fmts[i]; i++)
			if (js_str_is(f, fmts[i])) {
				*id = new_rule(j);
				open_rule(j, *id);
				puts_(j, " \"\\\"\" ");
				puts_(j, fmts[i]);
				puts_(j, " \"\\\"\" space\n");
				return j->d.r;
			}
		return js_fail(&j->d, -LLMK_ENOTSUP, "format not supported yet:",
			       f->type == JS_STR ? f->s : NULL, f->n);
	}

	if (!mn && !mx)
		return named(j, "string", id);
	*id = new_rule(j);
	open_rule(j, *id);
	putf(j, " \"\\\"\" char{%u,", u32_of(mn, 0));
	if (mx)
		putf(j, "%u", u32_of(mx, 0));
	puts_(j, "} \"\\\"\" space\n");
	return j->d.r;
}

static int gen_array(struct js *j, const struct js_node *s, uint32_t *id)
{
	const struct js_node *items = js_member(&j->d, s, "items"), *pre = js_member(&j->d, s, "prefixItems");
	uint32_t item, min = u32_of(js_member(&j->d, s, "minItems"), 0);
	bool bounded = js_member(&j->d, s, "maxItems") != NULL;
	uint32_t max = u32_of(js_member(&j->d, s, "maxItems"), 0);

	if (items && items->type == JS_ARR)
		pre = items, items = NULL;
	if (pre && pre->type == JS_OBJ) /* llama.cpp: one schema there is every item's */
		items = pre, pre = NULL;
	if (pre) { /* a tuple: these items in this order */
		uint32_t part[JS_MAX_PARTS], n = 0;
		for (const struct js_node *c = js_at(&j->d, pre->child); c; c = js_at(&j->d, c->next)) {
			if (n >= JS_MAX_PARTS)
				return js_fail(&j->d, -LLMK_ERANGE, "too many prefixItems", NULL, 0);
			if (gen(j, c, &part[n++]))
				return j->d.r;
		}
		*id = new_rule(j);
		open_rule(j, *id);
		puts_(j, " \"[\" space");
		for (uint32_t i = 0; i < n; i++) {
			if (i)
				puts_(j, " \",\" space");
			rule_ref(j, part[i]);
		}
		puts_(j, " \"]\" space\n");
		return j->d.r;
	}
	if (items) {
		if (gen(j, items, &item))
			return j->d.r;
	} else if (named(j, "value", &item)) {
		return j->d.r;
	}
	if (bounded && max < min)
		return js_fail(&j->d, -LLMK_EINVAL, "maxItems below minItems", NULL, 0);
	*id = new_rule(j);
	open_rule(j, *id);
	puts_(j, " \"[\" space");
	if (bounded && max == 0) {
		puts_(j, " \"]\" space\n");
		return j->d.r;
	}
	puts_(j, min ? " (" : " ((");
	rule_ref(j, item);
	puts_(j, " (\",\" space");
	rule_ref(j, item);
	putf(j, "){%u,", min ? min - 1 : 0);
	if (bounded)
		putf(j, "%u", max - 1);
	puts_(j, min ? "})" : "})?)");
	puts_(j, " \"]\" space\n");
	return j->d.r;
}

static const struct js_node *ref_target(struct js *j, const struct js_node *ref);

/* An object of the properties key[0..n) (members of some "properties": their
 * keys and schemas), is_req[i] those required, add additionalProperties. */
static int gen_props(struct js *j, const struct js_node *const *key, const bool *is_req,
		     uint32_t n, const struct js_node *add, uint32_t *id)
{
	uint32_t kv[JS_MAX_PARTS], n_req = 0, extra = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct js_node *c = key[i];
		uint32_t v;
		if (gen(j, c, &v))
			return j->d.r;
		/* kv ::= "\"key\"" space ":" space value */
		kv[i] = new_rule(j);
		open_rule(j, kv[i]);
		puts_(j, " \"\\\"");
		lit_bytes(j, c->key, c->key_n);
		puts_(j, "\\\"\" space \":\" space");
		rule_ref(j, v);
		puts_(j, "\n");
		n_req += is_req[i];
	}
	if (add && add->type != JS_FALSE) {
		uint32_t v;
		if (add->type == JS_TRUE ? named(j, "value", &v) : gen(j, add, &v))
			return j->d.r;
		extra = new_rule(j) + 1;
		open_rule(j, extra - 1);
		puts_(j, " string \":\" space");
		rule_ref(j, v);
		puts_(j, "\n");
	}
	/* the optional ones, in order, any subset: opt_i ::= kv_i ("," space opt_i+1)? | opt_i+1,
	 * the last one's tail the extra pairs */
	uint32_t next = 0; /* rule + 1 of the tail after the optional at i */
	if (extra) {
		next = new_rule(j) + 1; /* extra ("," space extra)* */
		open_rule(j, next - 1);
		rule_ref(j, extra - 1);
		puts_(j, " (\",\" space");
		rule_ref(j, extra - 1);
		puts_(j, ")*\n");
	}
	for (uint32_t i = n; i-- > 0;) {
		if (is_req[i])
			continue;
		uint32_t o = new_rule(j);
		open_rule(j, o);
		rule_ref(j, kv[i]);
		if (next) {
			puts_(j, " (\",\" space");
			rule_ref(j, next - 1);
			puts_(j, ")? |");
			rule_ref(j, next - 1);
		}
		puts_(j, "\n");
		next = o + 1;
	}
	*id = new_rule(j);
	open_rule(j, *id);
	puts_(j, " \"{\" space");
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!is_req[i])
			continue;
		if (k++)
			puts_(j, " \",\" space");
		rule_ref(j, kv[i]);
	}
	if (next) {
		puts_(j, n_req ? " (\",\" space" : " (");
		rule_ref(j, next - 1);
		puts_(j, ")?");
	}
	puts_(j, " \"}\" space\n");
	return j->d.r;
}

static int gen_object(struct js *j, const struct js_node *s, uint32_t *id)
{
	const struct js_node *props = js_member(&j->d, s, "properties"), *req = js_member(&j->d, s, "required");
	const struct js_node *add = js_member(&j->d, s, "additionalProperties");
	const struct js_node *key[JS_MAX_PARTS];
	bool is_req[JS_MAX_PARTS];
	uint32_t n = 0;

	if (!props && !add)
		return named(j, "object", id);
	for (const struct js_node *c = props ? js_at(&j->d, props->child) : NULL; c; c = js_at(&j->d, c->next)) {
		if (n >= JS_MAX_PARTS)
			return js_fail(&j->d, -LLMK_ERANGE, "too many properties", NULL, 0);
		key[n] = c;
		is_req[n] = false;
		for (const struct js_node *r = req ? js_at(&j->d, req->child) : NULL; r; r = js_at(&j->d, r->next))
			if (r->type == JS_STR && r->n == c->key_n && !memcmp(r->s, c->key, r->n))
				is_req[n] = true;
		n++;
	}
	return gen_props(j, key, is_req, n, add, id);
}

/* allOf, as llama.cpp draws it: one object of all its components'
 * properties (a $ref followed), each required (all of a component's,
 * whatever its "required" says) but those of an anyOf inside it, which
 * are optional; no other keys. Components without properties add none. */
static int allof_add(struct js *j, const struct js_node *c, bool req, const struct js_node **key,
		     bool *is_req, uint32_t *n, uint32_t depth)
{
	const struct js_node *ref = js_member(&j->d, c, "$ref"), *props;

	if (ref && ref->type == JS_STR) {
		if (depth > JS_MAX_REFS)
			return js_fail(&j->d, -LLMK_ERANGE, "allOf: $refs nested deeper than the limit", NULL, 0);
		const struct js_node *t = ref_target(j, ref);
		return t ? allof_add(j, t, req, key, is_req, n, depth + 1) : j->d.r;
	}
	if (!(props = js_member(&j->d, c, "properties")) || props->type != JS_OBJ)
		return 0;
	for (const struct js_node *p = js_at(&j->d, props->child); p; p = js_at(&j->d, p->next)) {
		if (*n >= JS_MAX_PARTS)
			return js_fail(&j->d, -LLMK_ERANGE, "too many properties", NULL, 0);
		key[*n] = p;
		is_req[(*n)++] = req;
	}
	return 0;
}

static int gen_allof(struct js *j, const struct js_node *all, uint32_t *id)
{
	const struct js_node *key[JS_MAX_PARTS];
	bool is_req[JS_MAX_PARTS];
	uint32_t n = 0;

	if (all->type != JS_ARR)
		return js_fail(&j->d, -LLMK_EINVAL, "allOf must be an array", NULL, 0);
	for (const struct js_node *t = js_at(&j->d, all->child); t && !j->d.r; t = js_at(&j->d, t->next)) {
		const struct js_node *any = js_member(&j->d, t, "anyOf");
		if (t->type != JS_OBJ)
			return js_fail(&j->d, -LLMK_EINVAL, "allOf holds schemas that are objects", NULL, 0);
		if (any && any->type == JS_ARR)
			for (const struct js_node *u = js_at(&j->d, any->child); u && !j->d.r;
			     u = js_at(&j->d, u->next))
				allof_add(j, u, false, key, is_req, &n, 0);
		else
			allof_add(j, t, true, key, is_req, &n, 0);
	}
	return j->d.r ? j->d.r : gen_props(j, key, is_req, n, NULL, id);
}

/* enum / anyOf / a type list: one rule of alternatives */
static int gen_alts(struct js *j, const uint32_t *part, uint32_t n, uint32_t *id)
{
	*id = new_rule(j);
	open_rule(j, *id);
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			puts_(j, " |");
		rule_ref(j, part[i]);
	}
	puts_(j, "\n");
	return j->d.r;
}

static int gen_const(struct js *j, const struct js_node *v, uint32_t *id)
{
	*id = new_rule(j);
	open_rule(j, *id);
	puts_(j, " \"");
	lit_value(j, v);
	puts_(j, "\" space\n");
	return j->d.r;
}

/* The schema a $ref names, or NULL (an error said). */
static const struct js_node *ref_target(struct js *j, const struct js_node *ref)
{
	const struct js_node *t = NULL;

	if (ref->n == 1 && ref->s[0] == '#')
		t = j->root;
	for (const char *pfx = "#/definitions/"; !t && pfx; pfx = pfx[2] == 'd' ? "#/$defs/" : NULL) {
		size_t pn = strlen(pfx);
		const struct js_node *defs = js_member(&j->d, j->root, pfx[2] == 'd' ? "definitions" : "$defs");
		if (ref->n <= pn || memcmp(ref->s, pfx, pn) || !defs)
			continue;
		for (const struct js_node *c = js_at(&j->d, defs->child); c; c = js_at(&j->d, c->next))
			if (c->key_n == ref->n - pn && !memcmp(c->key, ref->s + pn, c->key_n))
				t = c;
	}
	if (!t)
		js_fail(&j->d, -LLMK_ENOENT, "unresolved $ref", ref->s, ref->n);
	return t;
}

static int gen_ref(struct js *j, const struct js_node *ref, uint32_t *id)
{
	const struct js_node *t;

	for (uint32_t i = 0; i < j->n_refs; i++)
		if (j->ref_n[i] == ref->n && !memcmp(j->ref_s[i], ref->s, ref->n)) {
			*id = j->ref_rule[i];
			return 0;
		}
	if (!(t = ref_target(j, ref)))
		return j->d.r;
	if (j->n_refs >= JS_MAX_REFS)
		return js_fail(&j->d, -LLMK_ERANGE, "too many $refs", NULL, 0);
	/* the rule is named before it is written, so the schema may recur through it */
	uint32_t me = new_rule(j), body, k = j->n_refs++;
	j->ref_s[k] = ref->s;
	j->ref_n[k] = ref->n;
	j->ref_rule[k] = me;
	if (gen(j, t, &body))
		return j->d.r;
	open_rule(j, me);
	rule_ref(j, body);
	puts_(j, "\n");
	*id = me;
	return j->d.r;
}


/* ---- integers with bounds (minimum, maximum, exclusive...) ----
 * The language llama.cpp draws: the integers in [lo, hi], no leading zeros,
 * at most 16 digits on a side without a bound. A range of equal-length
 * digit strings x..y is its first digit's cases: x's first digit then the
 * rest from x's rest up, the digits between with anything after, y's first
 * digit then up to y's rest. */
#define JS_INT_DIGITS 16

static const char nines[] = "9999999999999999999", zeros[] = "0000000000000000000";

static void digit_set(struct js *j, char a, char b)
{
	char t[8] = {'[', a, '-', b, ']', 0};
	if (a == b)
		t[2] = ']', t[3] = 0;
	puts_(j, t);
}

static void digits_range(struct js *j, const char *x, const char *y, uint32_t n)
{
	if (!n)
		return;
	if (!memcmp(x, zeros, n) && !memcmp(y, nines, n)) { /* any n digits: keeps it linear */
		putf(j, "[0-9]{%u}", n);
		return;
	}
	if (x[0] == y[0]) {
		digit_set(j, x[0], x[0]);
		if (n > 1) {
			puts_(j, " ");
			digits_range(j, x + 1, y + 1, n - 1);
		}
		return;
	}
	puts_(j, "(");
	digit_set(j, x[0], x[0]);
	if (n > 1) {
		puts_(j, " (");
		digits_range(j, x + 1, nines, n - 1);
		puts_(j, ")");
	}
	if (y[0] - x[0] > 1) {
		puts_(j, " | ");
		digit_set(j, (char)(x[0] + 1), (char)(y[0] - 1));
		if (n > 1)
			putf(j, " [0-9]{%u}", n - 1);
	}
	puts_(j, " | ");
	digit_set(j, y[0], y[0]);
	if (n > 1) {
		puts_(j, " (");
		digits_range(j, zeros, y + 1, n - 1);
		puts_(j, ")");
	}
	puts_(j, ")");
}

static uint32_t ndigits(uint64_t v)
{
	uint32_t n = 1;
	while (v >= 10)
		v /= 10, n++;
	return n;
}

static void dec(uint64_t v, uint32_t n, char *out)
{
	for (uint32_t i = n; i-- > 0; v /= 10)
		out[i] = (char)('0' + v % 10);
}

/* The non-negative integers in [a, b] (b_inf: no upper bound), as
 * alternatives, " | " before each but the first of the group (*first). */
static void alt(struct js *j, bool *first)
{
	puts_(j, *first ? " " : " | ");
	*first = false;
}

static void nonneg_range(struct js *j, uint64_t a, uint64_t b, bool b_inf, bool *first)
{
	uint32_t la = ndigits(a), lb = b_inf ? la : ndigits(b);
	char x[24], y[24];
	uint64_t p = 1;

	for (uint32_t i = 1; i < la; i++)
		p *= 10;
	for (uint32_t l = la; l <= lb; l++, p *= 10) {
		uint64_t lo = l == la ? a : p, hi = l == lb && !b_inf ? b : p * 10 - 1;
		dec(lo, l, x);
		dec(hi, l, y);
		alt(j, first);
		digits_range(j, x, y, l);
	}
	if (b_inf && la < JS_INT_DIGITS) {
		alt(j, first);
		putf(j, "[1-9] [0-9]{%u,15}", la);
	}
}

/* A bound's value: an integer, or a number rounded toward the inside. */
static int bound(struct js *j, const struct js_node *x, bool upper, int64_t *v)
{
	bool neg = x->n && x->s[0] == '-';
	uint64_t m = 0;
	uint32_t i = neg;

	for (; i < x->n && x->s[i] >= '0' && x->s[i] <= '9'; i++) {
		if (m > 100000000000000000ull)
			return js_fail(&j->d, -LLMK_ERANGE, "a bound past 10^17", NULL, 0);
		m = m * 10 + (uint64_t)(x->s[i] - '0');
	}
	if (i < x->n)
		return js_fail(&j->d, -LLMK_ENOTSUP, "an integer bound that is not an integer", x->s, x->n);
	(void)upper;
	*v = neg ? -(int64_t)m : (int64_t)m;
	return 0;
}

static int gen_integer(struct js *j, const struct js_node *s, uint32_t *id)
{
	const struct js_node *mn = js_member(&j->d, s, "minimum"), *mx = js_member(&j->d, s, "maximum");
	const struct js_node *xmn = js_member(&j->d, s, "exclusiveMinimum");
	const struct js_node *xmx = js_member(&j->d, s, "exclusiveMaximum");
	bool has_lo = mn || xmn, has_hi = mx || xmx;
	int64_t lo = 0, hi = 0, t;

	if (!has_lo && !has_hi)
		return named(j, "integer", id);
	if ((mn && bound(j, mn, false, &lo)) || (xmn && bound(j, xmn, false, &t)))
		return j->d.r;
	if (xmn && (!mn || t + 1 > lo))
		lo = t + 1;
	if ((mx && bound(j, mx, true, &hi)) || (xmx && bound(j, xmx, true, &t)))
		return j->d.r;
	if (xmx && (!mx || t - 1 < hi))
		hi = t - 1;
	if (has_lo && has_hi && lo > hi)
		return js_fail(&j->d, -LLMK_EINVAL, "an integer range with no integer in it", NULL, 0);
	*id = new_rule(j);
	open_rule(j, *id);
	bool first = true;
	puts_(j, " (");
	/* the negative ones: "-" and a magnitude in [max(1, -hi), -lo] */
	if (!has_lo || lo < 0) {
		bool f2 = true;
		uint64_t mlo = has_hi && hi < 0 ? (uint64_t)(-hi) : 1;
		alt(j, &first);
		puts_(j, "\"-\" (");
		nonneg_range(j, mlo, has_lo ? (uint64_t)(-lo) : 0, !has_lo, &f2);
		puts_(j, ")");
	}
	if (!has_hi || hi >= 0)
		nonneg_range(j, has_lo && lo > 0 ? (uint64_t)lo : 0, has_hi ? (uint64_t)hi : 0, !has_hi,
			     &first);
	puts_(j, ") space\n");
	return j->d.r;
}

static int gen_type(struct js *j, const struct js_node *s, const struct js_node *t, uint32_t *id)
{
	if (js_str_is(t, "string"))
		return gen_string(j, s, id);
	if (js_str_is(t, "array"))
		return gen_array(j, s, id);
	if (js_str_is(t, "object"))
		return gen_object(j, s, id);
	if (js_str_is(t, "integer"))
		return gen_integer(j, s, id);
	if (js_str_is(t, "number") || js_str_is(t, "integer") || js_str_is(t, "boolean") || js_str_is(t, "null")) {
		char name[8];
		memcpy(name, t->s, t->n);
		name[t->n] = 0;
		return named(j, name, id);
	}
	return js_fail(&j->d, -LLMK_ENOTSUP, "unknown type", t && t->type == JS_STR ? t->s : NULL,
		       t ? t->n : 0);
}

/* Keywords that narrow a language this converter cannot draw yet. */
static const char *const unsupported[] = {
	"not", "if", "patternProperties", "propertyNames", "minProperties",
	"maxProperties", "uniqueItems", "contains", "multipleOf", NULL,
};

static int gen(struct js *j, const struct js_node *s, uint32_t *id)
{
	const struct js_node *x;
	uint32_t part[JS_MAX_PARTS], n = 0;

	if (++j->depth > JS_MAX_DEPTH)
		return js_fail(&j->d, -LLMK_ERANGE, "schemas nested deeper than the limit", NULL, 0);
	if (s->type == JS_TRUE) {
		named(j, "value", id);
		goto out;
	}
	if (s->type != JS_OBJ) {
		js_fail(&j->d, -LLMK_EINVAL, "a schema that is not an object", NULL, 0);
		goto out;
	}
	/* numeric bounds are drawn for integers only (as llama.cpp does) */
	static const char *const bounds[] = {"minimum", "maximum", "exclusiveMinimum",
					     "exclusiveMaximum", NULL};
	for (int i = 0; bounds[i]; i++)
		if (js_member(&j->d, s, bounds[i]) && !js_str_is(js_member(&j->d, s, "type"), "integer")) {
			js_fail(&j->d, -LLMK_ENOTSUP, "bounds are supported for integers only:", bounds[i],
				(uint32_t)strlen(bounds[i]));
			goto out;
		}
	for (int i = 0; unsupported[i]; i++)
		if (js_member(&j->d, s, unsupported[i])) {
			js_fail(&j->d, -LLMK_ENOTSUP, "not supported yet:", unsupported[i],
				(uint32_t)strlen(unsupported[i]));
			goto out;
		}
	if ((x = js_member(&j->d, s, "$ref")) && x->type == JS_STR) {
		gen_ref(j, x, id);

	} else if ((x = js_member(&j->d, s, "const"))) {
		gen_const(j, x, id);
	} else if ((x = js_member(&j->d, s, "enum")) || (x = js_member(&j->d, s, "anyOf")) ||
		   (x = js_member(&j->d, s, "oneOf"))) {
		bool is_enum = x == js_member(&j->d, s, "enum");
		if (x->type != JS_ARR)
			return js_fail(&j->d, -LLMK_EINVAL, "enum/anyOf/oneOf must be an array", NULL, 0);
		for (const struct js_node *c = js_at(&j->d, x->child); c && !j->d.r; c = js_at(&j->d, c->next)) {
			if (n >= JS_MAX_PARTS)
				return js_fail(&j->d, -LLMK_ERANGE, "too many alternatives", NULL, 0);
			if (is_enum)
				gen_const(j, c, &part[n++]);
			else
				gen(j, c, &part[n++]);
		}
		if (!j->d.r)
			gen_alts(j, part, n, id);
	} else if ((x = js_member(&j->d, s, "allOf")) && !js_member(&j->d, s, "properties")) {
		/* as llama.cpp: declared properties win over allOf */
		gen_allof(j, x, id);
	} else if ((x = js_member(&j->d, s, "type")) && x->type == JS_ARR) {
		for (const struct js_node *c = js_at(&j->d, x->child); c && !j->d.r; c = js_at(&j->d, c->next)) {
			if (n >= JS_MAX_PARTS)
				return js_fail(&j->d, -LLMK_ERANGE, "too many types", NULL, 0);
			gen_type(j, s, c, &part[n++]);
		}
		if (!j->d.r)
			gen_alts(j, part, n, id);
	} else if (x) {
		gen_type(j, s, x, id);
	} else if (js_member(&j->d, s, "properties") || js_member(&j->d, s, "additionalProperties")) {
		gen_object(j, s, id);
	} else if (js_member(&j->d, s, "items") || js_member(&j->d, s, "prefixItems")) {
		gen_array(j, s, id);
	} else if (js_member(&j->d, s, "format") || js_member(&j->d, s, "pattern")) {
		gen_string(j, s, id);
	} else {
		named(j, s->child ? "value" : "object", id);
	}
out:
	j->depth--;
	return j->d.r;
}

int gram_schema(const char *schema, size_t len, char *out, size_t cap, struct llm_mem *mem,
		char *err, size_t errlen)
{
	struct js j = {.d = {.s0 = schema, .s = schema, .end = schema + len, .err = err,
			     .errlen = errlen},
		       .out = out, .cap = cap};
	size_t nb = JS_MAX_NODES * sizeof(struct js_node);
	uint32_t top, root;
	int r;

	if (!(j.d.nd = llm_mem_alloc(mem, nb, &r))) {
		plat_snprintf(err, errlen, "json schema: no memory for its parse");
		return r;
	}
	if (!js_read(&j.d, &top)) {
		j.root = js_at(&j.d, top);
		puts_(&j, prelude);
		if (!gen(&j, j.root, &root))
			putf(&j, "root ::= r%u\n", root);
	}
	llm_mem_free(mem, j.d.nd, nb);
	return j.d.r;
}
