/*
 * tests/unit/test_bench.c — llm/bench.c's model benchmark called as the
 * shell calls it: stories260K's pp and tg tests give positive rates and the
 * figures the table prints, the depth's rows are written into the cache,
 * the cache holds no conversation afterwards, and every option the context
 * or the batch cannot hold is refused before anything runs.
 */
#include "test.h"
#include "../../llm/bench.h"
#include "../../tools/host/host.h"

#include <stdlib.h>

static struct engine *load_stories(void)
{
	char path[4096], err[256];
	struct engine *e;

	snprintf(path, sizeof path, "%s/stories260K/stories260K.gguf", testdata_dir());
	host_remove_disks();
	CHECK_EQ_INT(host_add_disk(path), 0);
	e = calloc(1, sizeof *e);
	engine_init(e);
	CHECK_EQ_INT(engine_load(e, 0, false, err, sizeof err), 0);
	return e;
}

static void unload(struct engine *e)
{
	engine_unload(e);
	free(e);
	host_remove_disks();
}

TEST(bench_model_runs_pp_and_tg_and_leaves_no_conversation)
{
	struct bench_model_opts o = {.pp = 8, .tg = 4, .reps = 2, .depth = 3, .batch = 1,
				     .threads = 1};
	struct bench_model r;
	struct engine_stats st;
	struct engine *e;
	char err[160];
	float k[64], zero[64] = {0};
	int any = 0;

	if (!testdata_dir())
		SKIP("no testdata (LLMK_TESTDATA)");
	e = load_stories();
	CHECK(e->kv.kv_dim <= 64);
	for (uint32_t p = 0; p < 3; p++) /* zero the depth's rows of layer 0 first */
		kv_store(&e->kv, 0, p, zero, zero);
	CHECK_EQ_INT(bench_model_run(e, &o, &r, err, sizeof err), 0);
	CHECK(r.pp_mean > 0 && r.tg_mean > 0 && r.pp_sd >= 0 && r.tg_sd >= 0);
	CHECK_STR(r.name, "llama");
	CHECK_STR(r.quant, "F32");
	CHECK_EQ_INT(r.n_params, 292800);
	/* a decode pass reads every tensor but all rows of the embedding table
	 * but one: 48 F32 tensors, token_embd 512 x 64 */
	CHECK(r.token_bytes < r.size + 1024 && r.token_bytes > r.size - 512 * 64 * 4);
	CHECK(r.mem_gbs > 0 && r.probe_mib >= 256);
	CHECK(r.frac > 0 && r.frac_lo <= r.frac && r.frac <= r.frac_hi);
	CHECK_NEAR(r.eff_gbs, (double)r.token_bytes * r.tg_mean * 1e-9, 1e-9);
	/* the depth's tokens went into the cache rows before the tests' */
	for (uint32_t p = 0; p < 3; p++) {
		kv_load_k(&e->kv, 0, p, k);
		for (uint32_t i = 0; i < e->kv.kv_dim; i++)
			any += k[i] != 0.0f;
	}
	CHECK(any > 0);
	CHECK_EQ_INT(engine_get_stats(e, &st), 0);
	CHECK_EQ_INT(st.n_past, 0);
	unload(e);
}

TEST(bench_model_refuses_what_the_context_or_batch_cannot_hold)
{
	static const struct {
		struct bench_model_opts o;
		int want;
	} cases[] = {
		{{.pp = 100, .tg = 0, .reps = 1, .depth = 29, .batch = 1, .threads = 1}, -LLMK_ERANGE},
		{{.pp = 0, .tg = 129, .reps = 1, .batch = 1, .threads = 1}, -LLMK_ERANGE},
		{{.pp = 0, .tg = 2, .reps = 1, .depth = 1, .batch = 2, .threads = 1}, -LLMK_EINVAL},
		{{.pp = 0, .tg = 2, .reps = 1, .batch = BENCH_MAX_SEQS + 1, .threads = 1}, -LLMK_ERANGE},
		{{.pp = 0, .tg = 33, .reps = 1, .batch = 4, .threads = 1}, -LLMK_ERANGE},
		{{.pp = 4, .tg = 0, .reps = 0, .batch = 1, .threads = 1}, -LLMK_EINVAL},
		{{.pp = 4, .tg = 0, .reps = BENCH_MAX_REPS + 1, .batch = 1, .threads = 1}, -LLMK_EINVAL},
	};
	struct bench_model r;
	struct engine *e;
	char err[160];

	if (!testdata_dir())
		SKIP("no testdata (LLMK_TESTDATA)");
	e = load_stories(); /* context 128, batch 128 */
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		err[0] = 0;
		CHECK_EQ_INT(bench_model_run(e, &cases[i].o, &r, err, sizeof err), cases[i].want);
		CHECK(err[0] != 0);
	}
	engine_unload(e);
	CHECK_EQ_INT(bench_model_run(e, &cases[0].o, &r, err, sizeof err), -LLMK_EINVAL);
	CHECK(strstr(err, "no model") != NULL);
	free(e);
	host_remove_disks();
}
