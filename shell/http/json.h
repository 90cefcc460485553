/*
 * shell/http/json.h — a strict, bounded JSON (RFC 8259) reader and a writer
 * for the API's requests and responses.
 *
 * The reader parses into caller-owned nodes and a string store: no
 * allocation. It refuses what RFC 8259 leaves open: duplicate keys, NUL in
 * strings (\u0000), lone surrogates, numbers outside a double's range or
 * with leading zeros, trailing bytes; and input past max_size bytes, depth
 * past max_depth, nodes past the array given.
 *
 *   struct json_node nodes[256]; char store[4096];
 *   struct json_doc d = {nodes, 256, 0, store, sizeof store, 0, 16, 65536};
 *   json_parse(&d, text, len, err, sizeof err);
 *   const struct json_node *m = json_get(&d, &d.nodes[0], "model");
 */
#ifndef SHELL_HTTP_JSON_H
#define SHELL_HTTP_JSON_H

#include "../../kernel/platform.h"

enum json_type { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

#define JSON_NONE UINT32_MAX /* no child / no next sibling */

struct json_node {
	enum json_type type;
	uint32_t next;          /* next sibling in the parent array or object */
	uint32_t child;         /* first element or member */
	uint32_t count;         /* elements or members */
	const char *key;        /* an object's member: its key (in store, NUL-terminated) */
	const char *str;        /* STRING: decoded UTF-8 in store, NUL-terminated */
	size_t len;             /* its length */
	double num;             /* NUMBER */
	bool is_int;            /* NUMBER written without fraction or exponent, in int64 */
	int64_t i;              /* ... then its exact value */
};

struct json_doc {
	struct json_node *nodes;
	size_t cap, n;          /* nodes[0] is the root after a parse */
	char *store;
	size_t store_cap, store_len;
	uint32_t max_depth;     /* arrays and objects nested at most this deep */
	size_t max_size;        /* input bytes at most */
};

/* 0; -LLMK_EFORMAT with err naming what and the byte offset, -LLMK_ERANGE
 * past a bound (size, depth, nodes, store, a number's range). */
int json_parse(struct json_doc *d, const char *text, size_t len, char *err, size_t errlen);
/* Member key of object obj, or NULL (also when obj is not an object). */
const struct json_node *json_get(const struct json_doc *d, const struct json_node *obj,
				 const char *key);
/* First element/member of a container, next sibling; NULL at the end. */
const struct json_node *json_first(const struct json_doc *d, const struct json_node *c);
const struct json_node *json_next(const struct json_doc *d, const struct json_node *n);

/* ---- writer: appends into a caller's buffer; overflow is sticky ---- */
struct json_out {
	char *buf;
	size_t cap, len;
	bool overflow;          /* something did not fit: the text is cut */
};
void json_out_init(struct json_out *o, char *buf, size_t cap);
void json_out_raw(struct json_out *o, const char *s, size_t n);
/* A string literal's bytes. */
#define json_out_lit(o, lit) json_out_raw((o), (lit), sizeof(lit) - 1)
/* s[0..n) as a JSON string with its quotes: ", \ and controls escaped,
 * bytes that are not UTF-8 written as U+FFFD. */
void json_out_str(struct json_out *o, const char *s, size_t n);
void json_out_cstr(struct json_out *o, const char *s);
void json_out_i64(struct json_out *o, int64_t v);
void json_out_f64(struct json_out *o, double v);
/* Bytes of s[0..n) that form whole UTF-8 sequences from its start: a
 * streamed piece may end inside one, whose rest comes with the next. */
size_t json_utf8_whole(const char *s, size_t n);

#endif
