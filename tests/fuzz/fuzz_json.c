/*
 * tests/fuzz/fuzz_json.c — libFuzzer target for the API's JSON reader
 * (shell/http/json.c) on any bytes, and the writer on what it reads.
 *
 * Checks: a refusal says what and where; an accepted document's nodes are
 * linked in bounds, each container's count matches its children, every
 * string lies NUL-terminated inside the store; each string written back
 * by json_out_str reads back unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include "../../shell/http/json.h"

static struct json_node nodes[512], nodes2[4];
static char store[8192], store2[8192], out[1 << 16];

static void check_str(const char *s, size_t len)
{
	if (s < store || s + len >= store + sizeof store || s[len] != 0 || memchr(s, 0, len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_doc d = {nodes, 512, 0, store, sizeof store, 0, 16, 1 << 14};
	char err[128] = "";

	if (json_parse(&d, (const char *)data, size, err, sizeof err)) {
		if (!strstr(err, "at byte"))
			abort();
		return 0;
	}
	for (size_t i = 0; i < d.n; i++) {
		const struct json_node *n = &d.nodes[i];
		uint32_t count = 0;
		if (n->next != JSON_NONE && n->next >= d.n)
			abort();
		for (const struct json_node *c = json_first(&d, n); c; c = json_next(&d, c)) {
			if (c <= n || (n->type == JSON_OBJECT) != (c->key != NULL))
				abort();
			count++;
		}
		if ((n->type == JSON_ARRAY || n->type == JSON_OBJECT) && count != n->count)
			abort();
		if (n->key)
			check_str(n->key, strlen(n->key));
		if (n->type == JSON_STRING) {
			struct json_out o;
			struct json_doc d2 = {nodes2, 4, 0, store2, sizeof store2, 0, 1, sizeof out};
			check_str(n->str, n->len);
			json_out_init(&o, out, sizeof out);
			json_out_str(&o, n->str, n->len);
			if (o.overflow || json_parse(&d2, out, o.len, err, sizeof err) ||
			    d2.nodes[0].len != n->len || memcmp(d2.nodes[0].str, n->str, n->len))
				abort();
		}
	}
	return 0;
}
