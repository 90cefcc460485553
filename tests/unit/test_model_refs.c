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
#include "../../llm/model.h"
#include "../../tools/writer/mkmodel.h"

#include <stdlib.h>

#define NEAR_TIE 1e-3
#define LOGIT_TOL 2e-3 /* of the largest first logit */
/* Q8_0: both quantize each activation row to 8 bits before the products,
 * and a value on a rounding boundary now and then lands a step apart (and
 * ggml's GELU reads an F16 table): wider margins. */
#define NEAR_TIE_Q 3e-2
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

/* The first logits after the prompt, through the model with resident
 * weights, against llama.cpp's. */
static void check_logits(const struct ref *r, const char *arch, const char *path, double tol)
{
	struct llm_membuf mb;
	struct llm_reader rd;
	struct llm_mem mem;
	struct gguf_file g;
	struct model_hparams hp;
	struct wt_ctx w;
	struct model m;
	struct model_scratch sc;
	struct kv_cache kv;
	struct mm_ctx mm;
	char err[256] = "";
	int32_t toks[MAX_N];
	size_t len;
	double worst = 0, big = 1;
	void *file = test_read_file(path, &len);

	CHECK(file != NULL);
	if (!file)
		return;
	for (int i = 0; i < r->n_prompt; i++)
		toks[i] = (int32_t)r->prompt_tokens[i];
	llm_reader_mem(&rd, &mb, file, len);
	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(gguf_open(&g, &rd, &mem, err, sizeof err), 0);
	CHECK_EQ_INT(model_read_hparams(&hp, &g, err, sizeof err), 0);
	CHECK_EQ_INT(model_check_layout(&hp, &g, err, sizeof err), 0);
	if (err[0])
		fprintf(stderr, "  %s: %s\n", arch, err);
	CHECK_EQ_INT(wt_resident_open(&w, &g, &rd, &mem, hp.n_layer, hp.n_embd, 1, NULL, err,
				      sizeof err), 0);
	CHECK_EQ_INT(model_init(&m, &hp, &w, &mem), 0);
	CHECK_EQ_INT(kv_init(&kv, &mem, GGML_TYPE_F32, hp.n_layer, MAX_N,
			     hp.n_head_kv * hp.head_dim), 0);
	CHECK_EQ_INT(model_scratch_init(&sc, &hp, 16, 1, &mem), 0);
	CHECK_EQ_INT(mm_init(&mm, &mem, 1), 0);
	CHECK_EQ_INT(model_forward(&m, &sc, &mm, &kv, toks, (uint32_t)r->n_prompt, 0, true), 0);
	for (int i = 0; i < r->n_logits; i++) {
		double d = fabs(sc.logits[i] - r->logits[i]);
		worst = d > worst ? d : worst;
		big = fabs(r->logits[i]) > big ? fabs(r->logits[i]) : big;
	}
	/* relative to the largest logit (at least 1): ggml's GELU reads an
	 * F16 table */
	worst /= big;
	if (worst > tol)
		fprintf(stderr, "  %s: first logits off llama.cpp's by %g\n", arch, worst);
	CHECK(worst <= tol);
	mm_free(&mm);
	model_scratch_free(&sc, &mem);
	kv_free(&kv);
	model_free(&m);
	gguf_close(&g);
	CHECK_EQ_INT(mem.used, 0);
	free(file);
}

/* One reference model (variant suffix: "" F32, "-q8_0" every matrix Q8_0). */
static void check_model(const char *arch, const char *suffix, uint32_t type, double near_tie,
			double logit_tol)
{
	struct mkm_spec spec;
	struct shell_fixture f;
	struct ref r;
	char name[64], path[512], cmd[512], err[256];
	int st;

	snprintf(name, sizeof name, "%s%s", arch, suffix);
	CHECK(ref_read(&r, name));
	CHECK_EQ_INT(mkm_ref_spec(&spec, arch), 0);
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
		check_model(a->name, "", GGML_TYPE_F32, NEAR_TIE, LOGIT_TOL);
}

TEST(model_refs_every_arch_in_q8_0_matches_llama_cpp_greedy)
{
	const struct model_arch *a;

	for (size_t i = 0; (a = model_arch_at(i)); i++)
		check_model(a->name, "-q8_0", GGML_TYPE_Q8_0, NEAR_TIE_Q, LOGIT_TOL_Q);
}
