/*
 * tests/unit/test_engine_lookup.c — prompt lookup (`lookup N`, llm/engine.c):
 * tokens that followed the context's last n-gram where it occurred before
 * are checked in the pass of the token just sampled. The reply must be the
 * one a pass a token gives, greedy or sampled, to the end of the context;
 * drafts taken save passes. On synthetic models (tools/writer/mkmodel.h),
 * whose random weights fall into loops a lookup predicts, so it never skips.
 */
#include "test.h"

#include <stdlib.h>

#include "../../llm/engine.h"
#include "../../tools/host/host.h"
#include "../../tools/writer/mkmodel.h"

static struct engine *open_model(const char *type, enum engine_weights w, uint32_t batch)
{
	char path[600], err[256];
	struct mkm_spec s;

	mkm_defaults(&s);
	s.name = "lookup";
	CHECK_EQ_INT(mkm_parse_type(type, &s.type, &s.mix), 0);
	snprintf(path, sizeof path, "%s/engine_lookup_%s.gguf", test_tmpdir(), type);
	CHECK_EQ_INT(mkm_write(&s, path, err, sizeof err), 0);
	host_remove_disks();
	CHECK_EQ_INT(host_add_disk(path), 0);
	struct engine *e = calloc(1, sizeof *e);
	engine_init(e);
	e->cfg.threads = 1;
	e->cfg.weights = w;
	if (batch)
		e->cfg.n_batch = batch;
	int r = engine_load(e, 0, false, err, sizeof err);
	CHECK_EQ_INT(r, 0);
	if (r)
		fprintf(stderr, "load: %s\n", err);
	return e;
}

static void close_model(struct engine *e)
{
	engine_unload(e);
	free(e);
	host_remove_disks();
}

/* One run from a fresh cache: its ids in ids[0..return). */
static uint32_t run(struct engine *e, const char *prompt, int lookup, float temp,
		    uint32_t n_predict, int32_t *ids, uint32_t cap)
{
	struct engine_gen g;
	char err[256];

	engine_forget(e);
	engine_gen_init(e, &g);
	g.lookup = lookup;
	g.samp.temp = temp;
	g.samp.seed = 11;
	g.n_predict = n_predict;
	g.out_ids = ids;
	g.out_cap = cap;
	int r = engine_infer(e, prompt, &g, err, sizeof err);
	CHECK_EQ_INT(r, 0);
	if (r)
		fprintf(stderr, "infer: %s\n", err);
	return g.n_out < cap ? g.n_out : cap;
}

static bool same(const int32_t *a, uint32_t na, const int32_t *b, uint32_t nb)
{
	return na == nb && !memcmp(a, b, na * sizeof *a);
}

/* Every token either is a draft the last pass took or had a pass of its
 * own, but the last, which needs none. */
static void check_counts(const struct engine *e, uint32_t lookup)
{
	CHECK_EQ_INT(e->run.lookup, lookup);
	CHECK_EQ_INT(e->run.n_passes + e->run.n_accepted, e->run.n_gen - 1);
	CHECK(e->run.n_accepted <= e->run.n_drafted);
	if (!lookup)
		CHECK_EQ_INT(e->run.n_drafted, 0);
}

TEST(engine_lookup_gives_the_same_tokens_in_fewer_passes)
{
	static const char *types[] = {"F32", "Q4_0", "Q8_0"};
	static const float temps[] = {0.0f, 0.8f};
	int32_t a[200], b[200];

	for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
		struct engine *e = open_model(types[t], ENGINE_WEIGHTS_AUTO, 0);
		for (size_t k = 0; k < 2; k++) {
			uint32_t na = run(e, "hello world", 0, temps[k], 150, a, 200);
			CHECK_EQ_INT(na, 150);
			CHECK_STR(e->run.stop, "limit");
			check_counts(e, 0);
			CHECK_EQ_INT(e->run.n_passes, 149);
			for (int look = 1; look <= ENGINE_LOOKUP_MAX; look *= 4) {
				uint32_t nb = run(e, "hello world", look, temps[k], 150, b, 200);
				CHECK(same(a, na, b, nb));
				check_counts(e, (uint32_t)look);
				if (temps[k] == 0.0f && look > 1) /* these models loop, greedy */
					CHECK(e->run.n_accepted > 10);
			}
		}
		close_model(e);
	}
}

/* Drafts never pass the context: the reply runs to its end as without. */
TEST(engine_lookup_stops_at_the_end_of_the_context)
{
	int32_t a[300], b[300];
	struct engine *e = open_model("F32", ENGINE_WEIGHTS_AUTO, 0);

	uint32_t na = run(e, "hello world", 0, 0.0f, ENGINE_PREDICT_ALL, a, 300);
	CHECK_STR(e->run.stop, "context");
	CHECK_EQ_INT(e->n_past, e->n_ctx);
	uint32_t nb = run(e, "hello world", ENGINE_LOOKUP_MAX, 0.0f, ENGINE_PREDICT_ALL, b, 300);
	CHECK_STR(e->run.stop, "context");
	CHECK_EQ_INT(e->n_past, e->n_ctx);
	CHECK(same(a, na, b, nb));
	CHECK(e->run.n_accepted > 0);
	close_model(e);
}

/* The default drafts while the weights stream (a pass reads the model
 * whatever it carries) and not while they are resident. */
TEST(engine_lookup_by_default_only_while_streaming)
{
	int32_t a[100], b[100];
	struct engine *e = open_model("Q4_0", ENGINE_WEIGHTS_RESIDENT, 0);
	uint32_t na = run(e, "hello world", ENGINE_LOOKUP_AUTO, 0.0f, 80, a, 100);
	CHECK(!e->streaming);
	check_counts(e, 0);
	CHECK(e->run.lookup_off == NULL);
	close_model(e);

	e = open_model("Q4_0", ENGINE_WEIGHTS_STREAM, 0);
	uint32_t nb = run(e, "hello world", ENGINE_LOOKUP_AUTO, 0.0f, 80, b, 100);
	CHECK(e->streaming);
	check_counts(e, ENGINE_LOOKUP_STREAM);
	CHECK(e->run.n_accepted > 0);
	CHECK(same(a, na, b, nb));
	close_model(e);
}

/* A pass of one token cannot carry drafts: the run goes without, and says why. */
TEST(engine_lookup_off_with_a_batch_of_one)
{
	int32_t a[40];
	struct engine *e = open_model("F32", ENGINE_WEIGHTS_AUTO, 1);

	run(e, "hello world", 4, 0.0f, 30, a, 40);
	check_counts(e, 0);
	CHECK(e->run.lookup_off != NULL && strstr(e->run.lookup_off, "batch") != NULL);
	close_model(e);
}
