/*
 * tests/unit/test_model_refs.c — every architecture of model_archs[]
 * against llama.cpp: the reference model of each (mkm_ref_spec, written
 * here), its greedy continuation through the shell as a user runs it
 * (resident and streamed), token for token against the ids llama.cpp chose
 * on the same file (tests/refs/arch/<arch>.json, recorded by `make
 * record-arch-refs`), and the first logits through the model directly.
 *
 * The near-tie rule: where our id differs from llama.cpp's, the difference
 * is forgiven only if llama.cpp's best and second-best logits at that step
 * were within NEAR_TIE (float sums in another order can swap those), and
 * the rest of the continuation is then not compared (it follows another
 * token). Any other difference fails. The Q8_0 models (every matrix Q8_0,
 * packed where the CPU has a packed form) use wider margins (NEAR_TIE_Q).
 * Both engines run with an F32 KV cache. Run under every CPU class (make
 * test-unit-avx2, ...), it checks their kernels too.
 */
#include "test.h"
#include "shell_fixture.h"
#include "gguf_edit.h"
#include "model_fixture.h"
#include "../../llm/model.h"
#include "../../tools/writer/mkmodel.h"

#include <stdlib.h>

#define NEAR_TIE 1e-3
#define LOGIT_TOL 2e-3 /* of the largest first logit */
/* Q8_0: both quantize each activation row to 8 bits before the products,
 * and a value on a rounding boundary now and then lands a step apart (and
 * ggml's GELU reads an F16 table): wider margins. */
#define NEAR_TIE_Q 3e-2
/* Q8_0 with experts: an expert's output enters the sum times its router
 * weight, so the roundings move later logits further (llama's Mixtral form
 * parts from llama.cpp at a step where its margin was 0.038; the F32
 * models, and these models' first logits, agree as closely as the dense
 * ones). */
#define NEAR_TIE_QX 6e-2
#define LOGIT_TOL_Q 3e-2
#define MAX_N 64

struct ref {
	char prompt[256];
	double prompt_tokens[MAX_N], tokens[MAX_N], gaps[MAX_N], logits[MAX_N];
	int n_prompt, n_tokens, n_gaps, n_logits;
};

/* The numbers of "key": [a, b, ...] in text, up to cap; how many. */
static int nums(const char *text, const char *key, double *out, int cap)
{
	char pat[64];
	const char *p;
	int n = 0;

	snprintf(pat, sizeof pat, "\"%s\":[", key);
	if (!(p = strstr(text, pat)))
		return -1;
	for (p += strlen(pat); *p && *p != ']' && n < cap;) {
		char *e;
		out[n++] = strtod(p, &e);
		if (e == p)
			return -1;
		p = e + (*e == ',');
	}
	return n;
}

static bool ref_read(struct ref *r, const char *arch)
{
	char path[256];
	const char *p, *q;
	char *text;

	snprintf(path, sizeof path, "tests/refs/arch/%s.json", arch);
	if (!(text = test_read_file(path, NULL))) {
		fprintf(stderr, "  %s: no reference (make record-arch-refs)\n", path);
		return false;
	}
	memset(r, 0, sizeof *r);
	p = strstr(text, "\"prompt\":\"");
	q = p ? strchr(p + 10, '"') : NULL;
	if (p && q)
		snprintf(r->prompt, sizeof r->prompt, "%.*s", (int)(q - p - 10), p + 10);
	r->n_prompt = nums(text, "prompt_tokens", r->prompt_tokens, MAX_N);
	r->n_tokens = nums(text, "tokens", r->tokens, MAX_N);
	r->n_gaps = nums(text, "gaps", r->gaps, MAX_N);
	r->n_logits = nums(text, "logits", r->logits, MAX_N);
	free(text);
	return p && q && r->n_prompt > 0 && r->n_tokens > 0 && r->n_gaps == r->n_tokens &&
	       r->n_logits > 0;
}

/* The shell's "ids: ..." line against the reference, with the near-tie rule. */
static void check_ids(const struct ref *r, const char *arch, const char *how, const char *out,
		      double near_tie)
{
	const char *p = strstr(out, "\nids:");
	int i = 0;

	CHECK(p != NULL);
	if (!p)
		return;
	for (p += 5; i < r->n_tokens; i++) {
		char *e;
		long v = strtol(p, &e, 10);
		if (e == p) {
			fprintf(stderr, "  %s %s: %d ids, want %d\n", arch, how, i, r->n_tokens);
			CHECK(0);
			return;
		}
		p = e;
		if (v == (long)r->tokens[i])
			continue;
		if (r->gaps[i] < near_tie)
			return; /* a near-tie: the rest follows another token */
		fprintf(stderr, "  %s %s: step %d chose %ld, llama.cpp %.0f (its margin %g)\n", arch,
			how, i, v, r->tokens[i], r->gaps[i]);
		CHECK(0);
		return;
	}
}

/* The first logits of toks through the model in file (len bytes), resident,
 * with an F32 cache of n_ctx positions, into out (n_out floats; zeros if it
 * failed). name: whose model, in a message. */
static void first_logits(const char *name, void *file, size_t len, uint32_t n_ctx,
			 const int32_t *toks, uint32_t n, float *out, uint32_t n_out)
{
	struct tmodel t;
	int e = tmodel_read(&t, file, len, name);

	if (!e)
		e = tmodel_load(&t, GGML_TYPE_F32, n_ctx, 16, 1);
	if (!e)
		e = model_forward(&t.m, &t.s, &t.mm, &t.kv, toks, n, 0, true);
	CHECK_EQ_INT(e, 0);
	if (!e)
		memcpy(out, t.s.logits, n_out * sizeof *out);
	else
		memset(out, 0, n_out * sizeof *out);
	tmodel_close(&t);
}

/* The first logits after the prompt, through the model with resident
 * weights, against llama.cpp's. */
static void check_logits(const struct ref *r, const char *arch, const char *path, double tol)
{
	int32_t toks[MAX_N];
	float lg[MAX_N];
	size_t len;
	double worst = 0, big = 1;
	void *file = test_read_file(path, &len);

	CHECK(file != NULL);
	if (!file)
		return;
	for (int i = 0; i < r->n_prompt; i++)
		toks[i] = (int32_t)r->prompt_tokens[i];
	first_logits(arch, file, len, MAX_N, toks, (uint32_t)r->n_prompt, lg, (uint32_t)r->n_logits);
	for (int i = 0; i < r->n_logits; i++) {
		double d = fabs(lg[i] - r->logits[i]);
		worst = d > worst ? d : worst;
		big = fabs(r->logits[i]) > big ? fabs(r->logits[i]) : big;
	}
	/* relative to the largest logit (at least 1): ggml's GELU reads an
	 * F16 table */
	worst /= big;
	if (worst > tol || getenv("REFS_VERBOSE"))
		fprintf(stderr, "  %s: first logits off llama.cpp's by %g\n", arch, worst);
	CHECK(worst <= tol);
	free(file);
}

/* One reference model (variant suffix: "" F32, "-q8_0" every matrix Q8_0;
 * experts: llama's Mixtral form with that many experts, "-moe"). */
static void check_model(const char *arch, uint32_t experts, const char *suffix, uint32_t type,
			double near_tie, double logit_tol)
{
	struct mkm_spec spec;
	struct shell_fixture f;
	struct ref r;
	char name[64], path[512], cmd[512], err[256];
	int st;

	snprintf(name, sizeof name, "%s%s%s", arch, experts ? "-moe" : "", suffix);
	CHECK(ref_read(&r, name));
	CHECK_EQ_INT(mkm_ref_spec(&spec, arch), 0);
	if (experts)
		mkm_set_experts(&spec, experts, 2);
	spec.type = type;
	spec.mix = MKM_MIX_PURE;
	snprintf(path, sizeof path, "%s/ref-%s.gguf", test_tmpdir(), name);
	CHECK_EQ_INT(mkm_write(&spec, path, err, sizeof err), 0);
	if (!r.n_tokens)
		return;
	check_logits(&r, name, path, logit_tol);
	CHECK_EQ_INT(fixture_open(&f, (const char *[]){path, NULL}, NULL), 0);
	snprintf(cmd, sizeof cmd, "infer \"%s\" -n %d --temp 0 --ids --ignore-eos", r.prompt,
		 r.n_tokens);
	/* llama.cpp's run had an F32 cache (an F16 one moves these random
	 * models' scores enough to swap choices) */
	fixture_run(&f, "config kv-type f32", &st);
	CHECK_EQ_INT(st, 0);
	/* resident (packed where the CPU has a packed form), then streamed */
	fixture_run(&f, "load 0", &st);
	CHECK_EQ_INT(st, 0);
	check_ids(&r, name, "resident", fixture_run(&f, cmd, &st), near_tie);
	CHECK_EQ_INT(st, 0);
	fixture_run(&f, "load --stream 0", &st);
	CHECK_EQ_INT(st, 0);
	check_ids(&r, name, "streamed", fixture_run(&f, cmd, &st), near_tie);
	CHECK_EQ_INT(st, 0);
	fixture_close(&f);
}

TEST(model_refs_every_arch_matches_llama_cpp_greedy)
{
	const struct model_arch *a;

	for (size_t i = 0; (a = model_arch_at(i)); i++)
		check_model(a->name, 0, "", GGML_TYPE_F32, NEAR_TIE, LOGIT_TOL);
	/* a row whose models may have experts (llama: Mixtral), with them */
	for (size_t i = 0; (a = model_arch_at(i)); i++)
		if (a->moe == MODEL_MOE_OPTIONAL)
			check_model(a->name, 4, "", GGML_TYPE_F32, NEAR_TIE, LOGIT_TOL);
}

TEST(model_refs_every_arch_in_q8_0_matches_llama_cpp_greedy)
{
	const struct model_arch *a;

	for (size_t i = 0; (a = model_arch_at(i)); i++)
		check_model(a->name, 0, "-q8_0", GGML_TYPE_Q8_0,
			    a->moe == MODEL_MOE_ALWAYS ? NEAR_TIE_QX : NEAR_TIE_Q, LOGIT_TOL_Q);
	for (size_t i = 0; (a = model_arch_at(i)); i++)
		if (a->moe == MODEL_MOE_OPTIONAL)
			check_model(a->name, 4, "-q8_0", GGML_TYPE_Q8_0, NEAR_TIE_QX, LOGIT_TOL_Q);
}

/* LongRoPE (phi3's reference: original context ctx / 4 = 32) takes the short
 * factors while the cache stays within the original context and the long
 * ones past it (llama.cpp get_rope_factors): a cache of 32 gives what a file
 * whose long factors are its short ones gives with a cache of 64, and other
 * logits than the same cache of 64 with the real long factors. */
TEST(model_longrope_takes_short_factors_within_the_original_context)
{
	struct mkm_spec spec;
	char path[512], err[256];
	struct llm_membuf mb;
	struct llm_reader rd;
	struct llm_mem mem;
	struct gguf_file g;
	int32_t toks[8] = {1, 40, 41, 42, 43, 44, 45, 46};
	float a[64], b[64], c[64];
	size_t len;
	uint8_t *file;

	CHECK_EQ_INT(mkm_ref_spec(&spec, "phi3"), 0);
	CHECK(spec.longrope && spec.ctx / 4 == 32);
	snprintf(path, sizeof path, "%s/longrope.gguf", test_tmpdir());
	CHECK_EQ_INT(mkm_write(&spec, path, err, sizeof err), 0);
	file = test_read_file(path, &len);
	CHECK(file != NULL);
	if (!file)
		return;
	first_logits("longrope", file, len, 32, toks, 8, a, 64);
	first_logits("longrope", file, len, 64, toks, 8, c, 64);
	/* the long factors overwritten with the short ones */
	llm_reader_mem(&rd, &mb, file, len);
	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(gguf_open(&g, &rd, &mem, err, sizeof err), 0);
	const struct gguf_tensor *lt = gguf_find_tensor(&g, "rope_factors_long.weight");
	const struct gguf_tensor *st = gguf_find_tensor(&g, "rope_factors_short.weight");
	CHECK(lt && st && lt->size == st->size);
	if (lt && st)
		memcpy(file + lt->offset, file + st->offset, (size_t)st->size);
	gguf_close(&g);
	first_logits("longrope", file, len, 64, toks, 8, b, 64);
	CHECK(memcmp(a, b, sizeof a) == 0);
	CHECK(memcmp(a, c, sizeof a) != 0);
	free(file);
}

/* arch's reference model (experts: llama's Mixtral form with that many)
 * with ed's edits: model_read_hparams, then model_check_layout; the first
 * error (0: loads), its line in err. */
static int edited_load_x(const char *arch, uint32_t experts, const struct gedit *ed, char *err,
			 size_t errlen)
{
	struct mkm_spec s;
	char name[64];

	mkm_ref_spec(&s, arch);
	if (experts)
		mkm_set_experts(&s, experts, 2);
	snprintf(name, sizeof name, "edit-%s", arch);
	return tmodel_edited(&s, name, ed, err, errlen);
}

static int edited_load(const char *arch, const struct gedit *ed, char *err, size_t errlen)
{
	return edited_load_x(arch, 0, ed, err, errlen);
}

/* What olmo2 and LongRoPE refuse, one line naming the key or tensor each:
 * olmo2 with a norm before its blocks or a sliding window; LongRoPE factors
 * of the wrong length, in a row without LongRoPE, beside rope_freqs, or with
 * a zero original context or a non-positive attention factor. The unedited
 * models load. */
TEST(model_layout_refuses_olmo2_and_longrope_variants_llama_cpp_does_not_run)
{
	static const float ones[32] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
				       1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	static const float ones64[64];
	struct gedit none = {0};
	char err[256];

	CHECK_EQ_INT(edited_load("olmo2", &none, err, sizeof err), 0);
	CHECK_EQ_INT(edited_load("phi3", &none, err, sizeof err), 0);
	{
		struct gedit_tensor t = {"blk.0.attn_norm.weight", 1, {64, 1, 1, 1}, GGML_TYPE_F32,
					 ones64};
		struct gedit ed = {.t = &t, .n_t = 1};
		CHECK_EQ_INT(edited_load("olmo2", &ed, err, sizeof err), -LLMK_ENOTSUP);
		CHECK(strstr(err, "blk.0.attn_norm.weight") && strstr(err, "olmo2"));
	}
	{
		struct gedit_kv kv = {.key = "olmo2.attention.sliding_window", .type = GGUF_VT_UINT32, .u = 8};
		struct gedit ed = {.kv = &kv, .n_kv = 1};
		CHECK_EQ_INT(edited_load("olmo2", &ed, err, sizeof err), -LLMK_ENOTSUP);
		CHECK(strstr(err, "olmo2.attention.sliding_window = 8") != NULL);
	}
	{
		struct gedit_tensor t = {.name = "rope_factors_long.weight", .n_dims = 1,
					 .ne = {4, 1, 1, 1}};
		struct gedit ed = {.t = &t, .n_t = 1};
		CHECK_EQ_INT(edited_load("phi3", &ed, err, sizeof err), -LLMK_EFORMAT);
		CHECK(strstr(err, "rope_factors_long.weight") != NULL);
	}
	{
		struct gedit_tensor t = {"rope_factors_long.weight", 1, {8, 1, 1, 1}, GGML_TYPE_F32,
					 ones};
		struct gedit ed = {.t = &t, .n_t = 1};
		CHECK_EQ_INT(edited_load("qwen3", &ed, err, sizeof err), -LLMK_ENOTSUP);
		CHECK(strstr(err, "LongRoPE") && strstr(err, "qwen3"));
	}
	{
		struct gedit_tensor t = {"rope_freqs.weight", 1, {8, 1, 1, 1}, GGML_TYPE_F32, ones};
		struct gedit ed = {.t = &t, .n_t = 1};
		CHECK_EQ_INT(edited_load("phi3", &ed, err, sizeof err), -LLMK_ENOTSUP);
		CHECK(strstr(err, "rope_freqs.weight") != NULL);
	}
	{
		struct gedit_kv kv = {.key = "phi3.rope.scaling.original_context_length",
				      .type = GGUF_VT_UINT32};
		struct gedit ed = {.kv = &kv, .n_kv = 1};
		CHECK_EQ_INT(edited_load("phi3", &ed, err, sizeof err), -LLMK_EFORMAT);
		CHECK(strstr(err, "original_context_length = 0") != NULL);
	}
	{
		struct gedit_kv kv = {.key = "phi3.rope.scaling.attn_factor", .type = GGUF_VT_FLOAT32,
				      .f = -1.0};
		struct gedit ed = {.kv = &kv, .n_kv = 1};
		CHECK_EQ_INT(edited_load("phi3", &ed, err, sizeof err), -LLMK_EFORMAT);
		CHECK(strstr(err, "phi3.rope.scaling.attn_factor = -1") != NULL);
	}
}

/* What a mixture of experts refuses, one line each: qwen3moe without its
 * expert count, more experts a token than it has, a router of another
 * width than the count; a llama whose expert_count is 0 with a router
 * (Mixtral's tensors in a dense model); experts in gemma, which has none. */
TEST(model_layout_refuses_experts_that_do_not_fit_their_keys)
{
	static const float zeros[64 * 4];
	struct gedit none = {0};
	char err[256];

	CHECK_EQ_INT(edited_load("qwen2moe", &none, err, sizeof err), 0);
	CHECK_EQ_INT(edited_load_x("llama", 4, &none, err, sizeof err), 0);
	{
		struct gedit_kv kv = {.key = "qwen3moe.expert_count", .type = GEDIT_REMOVE};
		struct gedit ed = {.kv = &kv, .n_kv = 1};
		CHECK_EQ_INT(edited_load("qwen3moe", &ed, err, sizeof err), -LLMK_ENOENT);
		CHECK(strstr(err, "qwen3moe.expert_count") != NULL);
	}
	{
		struct gedit_kv kv = {.key = "qwen3moe.expert_used_count", .type = GGUF_VT_UINT32,
				      .u = 5};
		struct gedit ed = {.kv = &kv, .n_kv = 1};
		CHECK_EQ_INT(edited_load("qwen3moe", &ed, err, sizeof err), -LLMK_EFORMAT);
		CHECK(strstr(err, "expert_used_count = 5") != NULL);
	}
	{
		struct gedit_kv kv = {.key = "llama.expert_count", .type = GGUF_VT_UINT32, .u = 3};
		struct gedit ed = {.kv = &kv, .n_kv = 1};
		CHECK_EQ_INT(edited_load_x("llama", 4, &ed, err, sizeof err), -LLMK_EFORMAT);
		CHECK(strstr(err, "blk.0.ffn_gate_inp.weight") != NULL);
	}
	{
		struct gedit_tensor t = {"blk.0.ffn_gate_inp.weight", 2, {64, 4, 1, 1}, GGML_TYPE_F32,
					 zeros};
		struct gedit ed = {.t = &t, .n_t = 1};
		CHECK_EQ_INT(edited_load("llama", &ed, err, sizeof err), -LLMK_EFORMAT);
		CHECK(strstr(err, "blk.0.ffn_gate_inp.weight' present") != NULL);
		CHECK_EQ_INT(edited_load("gemma", &ed, err, sizeof err), -LLMK_ENOTSUP);
		CHECK(strstr(err, "not supported") != NULL);
	}
}
