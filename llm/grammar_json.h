/*
 * llm/grammar_json.h — the JSON reader of llm/grammar_schema.c (internal):
 * a document parsed into nodes, siblings linked, strings and numbers left
 * as their text in the source. Bounded: JS_MAX_NODES values, JS_MAX_DEPTH
 * nesting.
 */
#ifndef LLM_GRAMMAR_JSON_H
#define LLM_GRAMMAR_JSON_H

#include "../kernel/platform.h"

#define JS_MAX_NODES 16384u
#define JS_MAX_DEPTH 64u

enum js_type { JS_NULL, JS_TRUE, JS_FALSE, JS_NUM, JS_STR, JS_ARR, JS_OBJ };

struct js_node {
	uint8_t type;
	const char *s;      /* JS_STR: the text between the quotes, escapes as written;
			       JS_NUM: the number's text */
	uint32_t n;
	const char *key;    /* as a member of an object: its key (raw) */
	uint32_t key_n;
	uint32_t child, next; /* first element/member, next sibling: index + 1, 0 = none */
};

struct js_doc {
	const char *s0, *s, *end;
	struct js_node *nd;  /* JS_MAX_NODES, the caller's */
	uint32_t n_nd, depth;
	char *err;           /* "json schema: ..." on the first error */
	size_t errlen;
	int r;               /* the first error */
};

/* Parse d->s0..d->end whole into d->nd; *top: the root's index + 1.
 * Returns 0 or d->r (-LLMK_EFORMAT, -LLMK_ERANGE). */
int js_read(struct js_doc *d, uint32_t *top);
/* The first error, said once: "json schema: what 'a'". */
int js_fail(struct js_doc *d, int r, const char *what, const char *a, uint32_t an);
const struct js_node *js_at(const struct js_doc *d, uint32_t idx);
/* Object o's member named k, or NULL (o may be NULL or not an object). */
const struct js_node *js_member(const struct js_doc *d, const struct js_node *o, const char *k);
bool js_str_is(const struct js_node *x, const char *w);

#endif
