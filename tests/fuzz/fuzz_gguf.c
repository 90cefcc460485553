/*
 * tests/fuzz/fuzz_gguf.c — libFuzzer target for llm/gguf.c and the
 * tokenizer built from what it parsed (llm/tok.c).
 *
 * Any input must either parse into a table whose every tensor lies inside
 * the input and whose every metadata value is walkable, or fail with
 * -LLMK_E* and a one-line "gguf: ..." message. A parsed file then goes
 * through tok_init, and a tokenizer that builds encodes and decodes a few
 * strings. Either way everything allocated is returned. ASan/UBSan catch
 * the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../llm/gguf.h"
#include "../../llm/tok.h"

#define FUZZ_BUDGET (256u << 20)

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_gguf: invariant broken: %s\n", what);
	abort();
}

static uint64_t walk_array(const struct gguf_array *a, int depth)
{
	uint64_t sum = 0;

	if (depth > 64)
		fail("array nesting deeper than the parser allows");
	if (a->type == GGUF_VT_STRING) {
		const struct gguf_str *s = a->data;
		for (uint64_t i = 0; i < a->n; i++)
			sum += s[i].len + (uint8_t)s[i].s[s[i].len]; /* reads the NUL */
	} else if (a->type == GGUF_VT_ARRAY) {
		const struct gguf_array *sub = a->data;
		for (uint64_t i = 0; i < a->n; i++)
			sum += walk_array(&sub[i], depth + 1);
	} else if (a->n) {
		const uint8_t *p = a->data;
		sum += p[0] + p[a->n - 1]; /* first and last element bytes */
	}
	return sum;
}

static void check_file(const struct gguf_file *g, uint64_t size)
{
	uint64_t u;
	int64_t i;
	float f;
	bool b;
	const struct gguf_str *s;
	const struct gguf_array *a;

	for (uint64_t k = 0; k < g->n_kv; k++) {
		const struct gguf_kv *kv = &g->kv[k];
		const char *key = kv->key.s;
		if (kv->key.s[kv->key.len] != 0)
			fail("key not NUL-terminated");
		if (kv->val.type >= GGUF_VT_COUNT)
			fail("value type out of range");
		if (kv->val.type == GGUF_VT_ARRAY)
			walk_array(&kv->val.v.arr, 0);
		/* Getters on every key: only the documented codes (a key with an
		 * inner NUL is not reachable by a C-string lookup). */
		int absent = strlen(key) != kv->key.len ? -LLMK_ENOENT : 0;
		int rcs[7] = {gguf_get_u64(g, key, &u), gguf_get_u32(g, key, (uint32_t *)&u),
			      gguf_get_i64(g, key, &i), gguf_get_f32(g, key, &f),
			      gguf_get_bool(g, key, &b), gguf_get_str(g, key, &s),
			      gguf_get_arr(g, key, &a)};
		for (int r = 0; r < 7; r++)
			if (rcs[r] != 0 && rcs[r] != -LLMK_EFORMAT && rcs[r] != absent)
				fail("getter returned an unexpected code");
	}
	if (g->extent > size || g->data_offset % g->alignment)
		fail("extent or data offset");
	for (uint64_t k = 0; k < g->n_tensors; k++) {
		const struct gguf_tensor *t = &g->tensors[k];
		if (t->offset < g->data_offset || t->offset > size || t->size > size - t->offset ||
		    t->offset + t->size > g->extent)
			fail("tensor outside the file");
		if (t->n_dims > GGUF_MAX_DIMS || gguf_find_tensor(g, t->name) != t)
			fail("tensor table");
	}
}

/* Whatever the vocabulary, encoding and decoding stay inside their buffers. */
static void check_tok(const struct gguf_file *g, struct llm_mem *mem)
{
	static const char *const text[] = {"Hello world", " \xc3\xa9t\xc3\xa9 <s> 123\n\n", "",
					    "\xff\xfe\x80", "<|endoftext|>a  b"};
	struct tok t;
	char err[256], out[2048];
	int32_t ids[256];
	size_t n, m;

	if (tok_init(&t, g, mem, err, sizeof err) < 0) {
		if (strncmp(err, "tok: ", 5) != 0 || strchr(err, '\n'))
			fail("tok_init error message");
		return;
	}
	for (size_t k = 0; k < sizeof text / sizeof text[0]; k++) {
		if (tok_encode(&t, text[k], strlen(text[k]), true, true, ids, 256, &n) == 0)
			tok_decode(&t, ids, n, false, true, out, sizeof out, &m);
	}
	tok_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct llm_reader r;
	struct llm_membuf mb;
	struct llm_mem mem;
	struct gguf_file g;
	char err[256];
	int rc;

	llm_mem_init(&mem, FUZZ_BUDGET);
	llm_reader_mem(&r, &mb, data, size);
	rc = gguf_open(&g, &r, &mem, err, sizeof err);
	if (rc == 0) {
		check_file(&g, size);
		check_tok(&g, &mem);
		gguf_close(&g);
	} else if (rc >= 0 || strncmp(err, "gguf: ", 6) != 0 || strchr(err, '\n')) {
		fail("error code or message");
	}
	if (mem.used != 0)
		fail("memory not returned");
	return 0;
}
