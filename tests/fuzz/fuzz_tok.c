/*
 * tests/fuzz/fuzz_tok.c — libFuzzer target for the tokenizers.
 *
 * Loads every vocabulary in $LLMK_TESTDATA/vocab once. An input's first byte
 * picks the vocabulary (low bits) and the flags (add_special, parse_special);
 * the rest is the text. Checks: encoding never fails, a too-small output says
 * the same count, every id decodes, pieces and decode agree on what fits.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../llm/gguf.h"
#include "../../llm/tok.h"

#define MAX_VOCABS 16

static struct llm_mem mem;
static struct tok toks[MAX_VOCABS];
static int n_toks = -1;

static void load_one(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct llm_reader r;
	struct llm_membuf mb;
	struct gguf_file g;
	char err[256];
	void *buf;
	long n;

	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n);
	if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		llm_reader_mem(&r, &mb, buf, (uint64_t)n);
		if (gguf_open(&g, &r, &mem, err, sizeof err) == 0) {
			if (tok_init(&toks[n_toks], &g, &mem, err, sizeof err) == 0)
				n_toks++;
			gguf_close(&g);
		}
	}
	free(buf);
	fclose(f);
}

static void load_all(void)
{
	const char *td = getenv("LLMK_TESTDATA");
	char dir[4096], path[8300];
	struct dirent *e;
	DIR *d;

	n_toks = 0;
	llm_mem_init(&mem, 0);
	snprintf(dir, sizeof dir, "%s/vocab", td ? td : "../shared/testdata");
	if (!(d = opendir(dir)))
		return;
	while ((e = readdir(d)) && n_toks < MAX_VOCABS) {
		size_t l = strlen(e->d_name);
		if (l > 5 && strcmp(e->d_name + l - 5, ".gguf") == 0) {
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			load_one(path);
		}
	}
	closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct tok *t;
	const char *text = (const char *)data + 1;
	size_t len, n = 0, n2 = 0, cap, got;
	bool add, parse;
	int32_t *ids, few[1];
	char *buf;

	if (n_toks < 0)
		load_all();
	if (n_toks == 0 || size == 0)
		return 0;
	t = &toks[data[0] % n_toks];
	add = data[0] & 0x40;
	parse = data[0] & 0x80;
	len = size - 1;
	cap = 3 * len + 8;
	ids = malloc(cap * sizeof *ids);
	if (tok_encode(t, text, len, add, parse, ids, cap, &n) != 0)
		abort();
	if (n > 1 && (tok_encode(t, text, len, add, parse, few, 1, &n2) != -LLMK_ERANGE || n2 != n))
		abort();
	cap = 8 * len + 64;
	buf = malloc(cap);
	for (size_t i = 0; i < n; i++)
		if (tok_piece(t, ids[i], TOK_PIECE_SPECIAL, buf, cap) < 0)
			abort();
	if (tok_decode(t, ids, n, false, true, buf, cap, &got) != 0 || got >= cap)
		abort();
	if (got > 0 && tok_decode(t, ids, n, false, true, buf, got, &n2) != -LLMK_ERANGE)
		abort();
	free(buf);
	free(ids);
	return 0;
}
