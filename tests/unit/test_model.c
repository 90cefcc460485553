/*
 * tests/unit/test_model.c — the forward pass against reference outputs:
 * stories260K (F32 and F16) greedy continuations token for token and the
 * first two positions' logits within 0.02; every quant-zoo model's logits of
 * "hello world" within the README's tolerance of the exact oracle.
 */
#include "test.h"
#include "gguf_edit.h"
#include "model_fixture.h"
#include "../../llm/model.h"
#include "../../tools/writer/mkmodel.h"

#include <stdlib.h>

/* ---- a tiny JSON reader: just what the reference .jsonl lines need ---- */

/* The value after "key": in line, or NULL. */
static const char *json_key(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof pat, "\"%s\"", key);
	p = strstr(line, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	while (*p == ' ' || *p == ':')
		p++;
	return p;
}

/* A flat array of numbers at p ("[1, 2.5, -3]") into out; returns the count
 * (-1 if malformed) and where it ended in *end. */
static int json_numbers(const char *p, double *out, int cap, const char **end)
{
	int n = 0;

	if (*p != '[')
		return -1;
	p++;
	for (;;) {
		char *e;
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == ']') {
			*end = p + 1;
			return n;
		}
		double v = strtod(p, &e);
		if (e == p || n >= cap)
			return -1;
		out[n++] = v;
		p = e;
	}
}

struct ref {
	int32_t prompt[64];
	int n_prompt;
	int32_t tokens[128];
	int n_tokens;
	double logits[4][1024];
	int n_logits, n_vocab;
};

static int ref_parse(const char *line, struct ref *r)
{
	static double tmp[1024];
	const char *p, *end;
	int n;

	memset(r, 0, sizeof *r);
	if (!(p = json_key(line, "prompt_tokens")) || (n = json_numbers(p, tmp, 64, &end)) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		r->prompt[i] = (int32_t)tmp[i];
	r->n_prompt = n;
	if (!(p = json_key(line, "tokens")) || (n = json_numbers(p, tmp, 128, &end)) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		r->tokens[i] = (int32_t)tmp[i];
	r->n_tokens = n;
	if (!(p = json_key(line, "logits")) || *p != '[')
		return -1;
	p++;
	while (r->n_logits < 4 && (p = strchr(p, '[')) != NULL) {
		n = json_numbers(p, r->logits[r->n_logits], 1024, &end);
		if (n < 0)
			return -1;
		r->n_vocab = n;
		r->n_logits++;
		p = end;
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == ']')
			break;
	}
	return 0;
}

static int argmax(const float *x, uint32_t n)
{
	int best = 0;
	for (uint32_t i = 1; i < n; i++)
		if (x[i] > x[best])
			best = (int)i;
	return best;
}

static double max_diff(const float *a, const double *b, uint32_t n)
{
	double d = 0;
	for (uint32_t i = 0; i < n; i++)
		if (fabs(a[i] - b[i]) > d)
			d = fabs(a[i] - b[i]);
	return d;
}

/*
 * Prefill the prompt, then greedy decode, one token per forward pass;
 * returns the number of tokens matching ref before the first difference.
 */
static int greedy_check(struct tmodel *t, const struct ref *r, double tol, double *worst)
{
	uint32_t nv = t->m.hp.n_vocab, pos = (uint32_t)r->n_prompt;
	int match = 0;

	*worst = 0;
	if (model_forward(&t->m, &t->s, &t->mm, &t->kv, r->prompt, pos, 0, true))
		return -1;
	for (int i = 0; i < r->n_tokens; i++) {
		int32_t id = argmax(t->s.logits, nv);
		if (i < r->n_logits) {
			double d = max_diff(t->s.logits, r->logits[i], nv);
			*worst = d > *worst ? d : *worst;
			CHECK(d <= tol);
		}
		if (id != r->tokens[i])
			break;
		match++;
		if (i + 1 < r->n_tokens &&
		    model_forward(&t->m, &t->s, &t->mm, &t->kv, &id, 1, pos++, true))
			return -1;
	}
	return match;
}

/* min_match < 0: every token and logits within 0.02; else at least that
 * many tokens per case (a lossy cache). */
static void stories(const char *gguf, const char *refs, uint32_t kv_type, uint32_t n_batch,
		    int min_match)
{
	char path[4096], *text, *line;
	const char *dir = testdata_dir();
	struct ref *r = malloc(sizeof *r);
	int n_cases = 0;

	if (!dir) {
		free(r);
		SKIP("no testdata (LLMK_TESTDATA)");
	}
	snprintf(path, sizeof path, "%s/stories260K/%s", dir, refs);
	text = test_read_file(path, NULL);
	CHECK(text != NULL);
	if (!text) {
		free(r);
		return;
	}
	snprintf(path, sizeof path, "%s/stories260K/%s", dir, gguf);
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		struct tmodel t;
		double worst;
		int m;

		CHECK_EQ_INT(ref_parse(line, r), 0);
		CHECK_EQ_INT(tmodel_open(&t, path, kv_type, 128, n_batch), 0);
		m = greedy_check(&t, r, min_match < 0 ? 0.02 : 1.0, &worst);
		if (getenv("LLMK_VERBOSE"))
			fprintf(stderr, "  %s case %d: %d of %d tokens, logits off by %g\n", gguf,
				n_cases, m, r->n_tokens, worst);
		if (m != r->n_tokens && min_match < 0)
			fprintf(stderr, "  %s: case %d: %d of %d tokens match (logits off by %g)\n",
				gguf, n_cases, m, r->n_tokens, worst);
		if (min_match < 0)
			CHECK_EQ_INT(m, r->n_tokens);
		else
			CHECK(m >= min_match);
		tmodel_close(&t);
		n_cases++;
	}
	CHECK_EQ_INT(n_cases, 6);
	free(text);
	free(r);
}

TEST(model_stories260K_f32_greedy_matches_reference)
{
	stories("stories260K.gguf", "refs-F32.jsonl", GGML_TYPE_F16, 64, -1);
}

TEST(model_stories260K_f16_greedy_matches_reference)
{
	stories("stories260K-F16.gguf", "refs-F16.jsonl", GGML_TYPE_F16, 64, -1);
}

/* Prefill in pieces of 3 with an F32 cache gives the same tokens. */
TEST(model_stories260K_small_batches_f32_cache)
{
	stories("stories260K.gguf", "refs-F32.jsonl", GGML_TYPE_F32, 3, -1);
}

/* A Q8_0 cache (rows of 32: stories' kv_dim) is lossy: greedy text drifts
 * after a while on this tiny model, but its start must still agree. */
TEST(model_stories260K_kv_q8_0)
{
	stories("stories260K.gguf", "refs-F32.jsonl", GGML_TYPE_Q8_0, 64, 10);
}

/* ---- the quant zoo: logits of the first 4 positions ---- */
static const char *const zoo[] = {
	"f32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1",
	"Q2_K", "Q3_K_S", "Q4_K_S", "Q5_K_S", "Q6_K",
};

/* The oracle's logits are of the positions after the prompt and after each
 * of its first three greedy tokens (teacher-forced: our own argmax may
 * differ where random weights leave small gaps). */
static void zoo_check(const char *name)
{
	char path[4096], *text;
	const char *dir = testdata_dir();
	struct ref *r;
	struct tmodel t;

	if (!dir)
		SKIP("no testdata (LLMK_TESTDATA)");
	r = malloc(sizeof *r);
	snprintf(path, sizeof path, "%s/quant/ref/%s.logits-oracle.jsonl", dir, name);
	text = test_read_file(path, NULL);
	CHECK(text != NULL);
	if (!text || ref_parse(text, r) || r->n_logits != 4) {
		CHECK(0);
		free(text);
		free(r);
		return;
	}
	snprintf(path, sizeof path, "%s/quant/zoo-%s.gguf", dir, name);
	CHECK_EQ_INT(tmodel_open(&t, path, GGML_TYPE_F32, 64, 64), 0);
	const struct gguf_tensor *wq = gguf_find_tensor(&t.g, "blk.0.attn_q.weight");
	const struct quant_type *q = quant_get(wq->type);
	double tol = q->act_type == GGML_TYPE_F32 ? 0.01 : 0.15, worst = 0;
	uint32_t pos = (uint32_t)r->n_prompt, nv = t.m.hp.n_vocab;

	CHECK_EQ_INT(nv, r->n_vocab);
	CHECK_EQ_INT(model_forward(&t.m, &t.s, &t.mm, &t.kv, r->prompt, pos, 0, true), 0);
	for (int i = 0; i < 4; i++) {
		double d = max_diff(t.s.logits, r->logits[i], nv);
		worst = d > worst ? d : worst;
		if (i < 3)
			CHECK_EQ_INT(model_forward(&t.m, &t.s, &t.mm, &t.kv, &r->tokens[i], 1, pos++,
						   true), 0);
	}
	if (worst > tol || getenv("LLMK_VERBOSE"))
		fprintf(stderr, "  zoo %s (%s rows, act %s): logits off by %g (tolerance %g)\n", name,
			q->impl, quant_name(q->act_type), worst, tol);
	CHECK(worst <= tol);
	/* what the weights say they packed: every layer matrix and the untied
	 * head whose type this CPU packs, read off the tensor table */
	uint64_t want = 0;
	for (uint64_t i = 0; i < t.g.n_tensors; i++) {
		const struct gguf_tensor *x = &t.g.tensors[i];
		if (x->n_dims == 2 && (strncmp(x->name, "blk.", 4) == 0 ||
				       strcmp(x->name, "output.weight") == 0) &&
		    quant_can_pack(x->type, x->ne[1], x->ne[0]))
			want |= (uint64_t)1 << x->type;
	}
	if (t.m.w.packed_types != want)
		fprintf(stderr, "  zoo %s: packed types 0x%llx, want 0x%llx\n", name,
			(unsigned long long)t.m.w.packed_types, (unsigned long long)want);
	CHECK(t.m.w.packed_types == want);
	CHECK((want != 0) == (t.m.w.packed_bytes != 0));
	tmodel_close(&t);
	free(text);
	free(r);
}

TEST(model_quant_zoo_logits_match_oracle)
{
	for (size_t i = 0; i < sizeof zoo / sizeof zoo[0]; i++)
		zoo_check(zoo[i]);
}

/* ---- refusing what we do not run ---- */
TEST(model_rejects_unknown_architecture_by_name)
{
	/* a GGUF with general.architecture = "gpt2" and nothing else */
	uint8_t buf[256], *p = buf;
	const char *key = "general.architecture", *val = "gpt2";
	struct llm_membuf mb;
	struct llm_reader rd;
	struct llm_mem mem;
	struct gguf_file g;
	struct model_hparams hp;
	char err[256] = "";
	uint64_t v;
	uint32_t u;

#define PUT(x, n) (memcpy(p, x, n), p += n)
	PUT("GGUF", 4);
	u = 3; PUT(&u, 4);
	v = 0; PUT(&v, 8);
	v = 1; PUT(&v, 8);
	v = strlen(key); PUT(&v, 8); PUT(key, strlen(key));
	u = GGUF_VT_STRING; PUT(&u, 4);
	v = strlen(val); PUT(&v, 8); PUT(val, strlen(val));
#undef PUT
	llm_reader_mem(&rd, &mb, buf, (uint64_t)(p - buf));
	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(gguf_open(&g, &rd, &mem, err, sizeof err), 0);
	CHECK_EQ_INT(model_read_hparams(&hp, &g, err, sizeof err), -LLMK_ENOTSUP);
	CHECK(strstr(err, "'gpt2'") != NULL);
	gguf_close(&g);
}

/* The default synthetic model with metadata edits: model_read_hparams's
 * code (or model_check_layout's), its error line in err. */
static int hparams_with(const struct gedit_kv *kv, size_t n_kv, char *err, size_t errlen)
{
	struct gedit ed = {.kv = kv, .n_kv = n_kv};
	struct mkm_spec s;

	mkm_defaults(&s);
	return tmodel_edited(&s, "hparams", &ed, err, errlen);
}

/* Issue 18 defect 6: NaN, infinite, negative, denormal and zero float
 * hyperparameters loaded, and generation then emitted token 0 from NaN
 * logits. Each is refused naming the key and the value; float64 values
 * that do not fit a float are refused the same way; in-range values load. */
TEST(model_hparams_refuse_nan_infinite_negative_denormal_and_zero_floats)
{
	static const char eps[] = "llama.attention.layer_norm_rms_epsilon";
	static const char base[] = "llama.rope.freq_base";
	static const char factor[] = "llama.rope.scaling.factor";
	static const char linear[] = "llama.rope.scale_linear";
	const uint32_t F32 = GGUF_VT_FLOAT32, F64 = GGUF_VT_FLOAT64;
	const struct { const char *key; uint32_t type; double v; const char *want; } bad[] = {
		{eps, F32, NAN, "= nan"}, {eps, F32, INFINITY, "= inf"}, {eps, F32, -INFINITY, "= -inf"},
		{eps, F32, -1e-5, "= -1e-05"}, {eps, F32, 1e-40, "= 9.99995e-41"}, {eps, F32, 0, "= 0"},
		{eps, F32, 2, "= 2"}, {eps, F64, 1e-300, "= 0"},
		{base, F32, NAN, "= nan"}, {base, F32, INFINITY, "= inf"}, {base, F32, -1e4, "= -10000"},
		{base, F32, 0, "= 0"}, {base, F32, 1e-40, "= 9.99995e-41"}, {base, F32, 0.5, "= 0.5"},
		{base, F64, 1e300, "= inf"},
		{factor, F32, NAN, "= nan"}, {factor, F32, INFINITY, "= inf"}, {factor, F32, -2, "= -2"},
		{factor, F32, 1e-40, "= 9.99995e-41"}, {factor, F32, 0.5, "= 0.5"},
		{linear, F32, NAN, "= nan"}, {linear, F32, -INFINITY, "= -inf"}, {linear, F32, 1e-40, "= 9.99995e-41"},
	};
	const struct { const char *key; uint32_t type; double v; } good[] = {
		{eps, F32, 1e-6}, {eps, F64, 1e-5}, {base, F32, 500000}, {base, F32, 1},
		{factor, F32, 4}, {factor, F32, 0 /* none, as llama.cpp */}, {linear, F32, 2},
	};
	char err[256];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct gedit_kv kv = {bad[i].key, bad[i].type, 0, bad[i].v, NULL};
		int r = hparams_with(&kv, 1, err, sizeof err);
		if (r != -LLMK_EFORMAT || !strstr(err, bad[i].key) || !strstr(err, bad[i].want)) {
			fprintf(stderr, "  %s %s %g: got %d \"%s\", want -%d with \"%s\"\n", bad[i].key,
				gguf_vtype_name(bad[i].type), bad[i].v, r, err, LLMK_EFORMAT, bad[i].want);
			test_failed_checks++;
		}
	}
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		struct gedit_kv kv = {good[i].key, good[i].type, 0, good[i].v, NULL};
		int r = hparams_with(&kv, 1, err, sizeof err);
		if (r != 0) {
			fprintf(stderr, "  %s %g: got %d \"%s\", want 0\n", good[i].key, good[i].v, r, err);
			test_failed_checks++;
		}
	}
}

/* attention.key_length times the heads is a 32-bit row count (Q, K, V) in
 * the forward pass: 4 heads of 2^31 would wrap it, so it is refused before
 * the layout check could be fooled by a wrapped product. */
TEST(model_hparams_refuse_a_head_size_whose_rows_overflow_32_bits)
{
	const struct gedit_kv kv[] = {{"llama.attention.key_length", GGUF_VT_UINT32, 1u << 31, 0, NULL},
				      {"llama.attention.value_length", GGUF_VT_UINT32, 1u << 31, 0, NULL}};
	char err[256];

	CHECK_EQ_INT(hparams_with(kv, 2, err, sizeof err), -LLMK_EFORMAT);
	CHECK(strstr(err, "llama.attention.key_length = 2147483648 times 4 heads") != NULL);
}

/* Three sequences decoded together from cache rows base[i], greedy: their
 * ids, and the last step's logits in lg (NS x n_vocab). */
enum { NS = 3, STEPS = 12 };
static void run_together(struct tmodel *t, const uint32_t *base, int32_t ids[NS][STEPS], float *lg)
{
	uint32_t pos[NS], V = t->m.hp.n_vocab;
	int32_t tok[NS];

	for (int i = 0; i < NS; i++) {
		pos[i] = 0;
		tok[i] = 1;
	}
	CHECK_EQ_INT(model_forward_seqs(&t->m, &t->s, &t->mm, &t->kv, tok, base, pos, NS, NULL), 0);
	for (int i = 0; i < NS; i++) {
		pos[i] = 1;
		tok[i] = 300 + 17 * i;
	}
	for (int k = 0; k < STEPS; k++) {
		CHECK_EQ_INT(model_forward_seqs(&t->m, &t->s, &t->mm, &t->kv, tok, base, pos, NS, lg),
			     0);
		for (int i = 0; i < NS; i++) {
			ids[i][k] = argmax(lg + (size_t)i * V, V);
			tok[i] = ids[i][k];
			pos[i]++;
		}
	}
}

/*
 * Several sequences decoding together (model_forward_seqs) give each
 * sequence what it gets alone: stories260K (F32 rows, one thread), three
 * different prompts, 12 greedy steps each. With cache ranges 64 apart their
 * attention tiles split where a lone sequence's do, and the logits are the
 * same bits; with ranges that start inside a tile (40 and 100), the same ids.
 */
TEST(model_sequences_together_match_each_alone)
{
	char path[4096];
	const char *dir = testdata_dir();
	struct tmodel t;
	int32_t alone[NS][STEPS], together[NS][STEPS];
	float *alone_logits, *lg;
	uint32_t V;

	if (!dir)
		SKIP("no testdata (LLMK_TESTDATA)");
	snprintf(path, sizeof path, "%s/stories260K/stories260K.gguf", dir);
	CHECK_EQ_INT(tmodel_open(&t, path, GGML_TYPE_F16, 192, 8), 0);
	V = t.m.hp.n_vocab;
	alone_logits = malloc((size_t)NS * V * sizeof(float));
	lg = malloc((size_t)NS * V * sizeof(float));
	for (int i = 0; i < NS; i++) {
		int32_t prompt[2] = {1, 300 + 17 * i};
		CHECK_EQ_INT(model_forward(&t.m, &t.s, &t.mm, &t.kv, prompt, 2, 0, true), 0);
		for (int k = 0; k < STEPS; k++) {
			alone[i][k] = argmax(t.s.logits, V);
			if (k == STEPS - 1)
				memcpy(alone_logits + (size_t)i * V, t.s.logits, V * sizeof(float));
			else
				CHECK_EQ_INT(model_forward(&t.m, &t.s, &t.mm, &t.kv, &alone[i][k], 1,
							   2 + (uint32_t)k, true), 0);
		}
	}
	{
		const uint32_t aligned[NS] = {0, 64, 128}, inside[NS] = {0, 40, 100};
		run_together(&t, aligned, together, lg);
		for (int i = 0; i < NS; i++) {
			for (int k = 0; k < STEPS; k++)
				CHECK_EQ_INT(together[i][k], alone[i][k]);
			CHECK(memcmp(lg + (size_t)i * V, alone_logits + (size_t)i * V,
				     V * sizeof(float)) == 0);
		}
		run_together(&t, inside, together, lg);
		for (int i = 0; i < NS; i++)
			for (int k = 0; k < STEPS; k++)
				CHECK_EQ_INT(together[i][k], alone[i][k]);
	}
	/* a position outside the cache, or more sequences than the batch */
	{
		uint32_t base[1] = {191}, pos[1] = {1};
		int32_t tok[1] = {1};
		CHECK_EQ_INT(model_forward_seqs(&t.m, &t.s, &t.mm, &t.kv, tok, base, pos, 1, NULL),
			     -LLMK_ERANGE);
		CHECK_EQ_INT(model_forward_seqs(&t.m, &t.s, &t.mm, &t.kv, tok, base, pos, 9, NULL),
			     -LLMK_ERANGE);
	}
	free(alone_logits);
	free(lg);
	tmodel_close(&t);
}

/*
 * A pass of several sequences' prompt pieces (continuous batching's
 * prefill, model_forward_seqs_some): three 3-token prompts in one pass of
 * 9 tokens, cache ranges 64 apart, the logits only of each prompt's last
 * token, in order; each the same bits as the prompt alone through
 * model_forward. No wanted row: no logits written.
 */
TEST(model_prompts_together_give_each_prompts_logits)
{
	char path[4096];
	const char *dir = testdata_dir();
	struct tmodel t;
	float *alone, *lg;
	uint32_t V, base[9], pos[9];
	int32_t tok[9];
	uint8_t want[9];

	if (!dir)
		SKIP("no testdata (LLMK_TESTDATA)");
	snprintf(path, sizeof path, "%s/stories260K/stories260K.gguf", dir);
	CHECK_EQ_INT(tmodel_open(&t, path, GGML_TYPE_F16, 192, 9), 0);
	V = t.m.hp.n_vocab;
	alone = malloc((size_t)NS * V * sizeof(float));
	lg = malloc((size_t)NS * V * sizeof(float));
	for (int i = 0; i < NS; i++) {
		int32_t prompt[3] = {1, 300 + 17 * i, 40 + i};
		CHECK_EQ_INT(model_forward(&t.m, &t.s, &t.mm, &t.kv, prompt, 3, 0, true), 0);
		memcpy(alone + (size_t)i * V, t.s.logits, V * sizeof(float));
		for (int p = 0; p < 3; p++) {
			tok[i * 3 + p] = prompt[p];
			base[i * 3 + p] = 64u * (uint32_t)i;
			pos[i * 3 + p] = (uint32_t)p;
			want[i * 3 + p] = p == 2;
		}
	}
	CHECK_EQ_INT(model_forward_seqs_some(&t.m, &t.s, &t.mm, &t.kv, tok, base, pos, 9, want, lg), 0);
	for (int i = 0; i < NS; i++)
		CHECK(memcmp(lg + (size_t)i * V, alone + (size_t)i * V, V * sizeof(float)) == 0);
	memset(want, 0, sizeof want);
	lg[0] = 12345.0f;
	CHECK_EQ_INT(model_forward_seqs_some(&t.m, &t.s, &t.mm, &t.kv, tok, base, pos, 9, want, lg), 0);
	CHECK(lg[0] == 12345.0f);
	free(alone);
	free(lg);
	tmodel_close(&t);
}
