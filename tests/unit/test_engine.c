/*
 * tests/unit/test_engine.c — llm/engine.c's memory hygiene (prompt lookup
 * at the end of the file): engine_forget
 * (chat --reset, a confidential session's start and end) zeroizes the
 * bytes of the conversation, the generated text, the cached tokens, every
 * KV row, the activations and logits and the sampler's state, not only
 * their counts; the next prompt then reuses nothing from the cache; and
 * engine_unload hands every byte back through the zeroizing free. On a
 * synthetic model (tools/host/mkmodel.h), so it never skips.
 */
#include "test.h"

#include <stdlib.h>

#include "../../llm/engine.h"
#include "../../tools/host/host.h"
#include "../../tools/writer/mkmodel.h"

/* It reads whole allocations, the redzones the sanitizer build poisons
 * inside them included (llm/mem.h). */
__attribute__((no_sanitize_address)) static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* A loaded engine over a fresh synthetic model of spec s (file: its name
 * in the test's directory); w and batch (0: the default) as load takes them. */
static struct engine *open_spec(const struct mkm_spec *s, const char *file,
				enum engine_weights w, uint32_t batch)
{
	char path[600], err[256];

	snprintf(path, sizeof path, "%s/%s", test_tmpdir(), file);
	CHECK_EQ_INT(mkm_write(s, path, err, sizeof err), 0);
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

/* ... with a chat template. */
static struct engine *loaded(void)
{
	struct mkm_spec s;

	mkm_defaults(&s);
	s.name = "forget";
	s.chat_template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";
	return open_spec(&s, "engine_forget.gguf", ENGINE_WEIGHTS_AUTO, 0);
}

static int chat(struct engine *e, const char *msg)
{
	struct engine_gen g;
	char err[256];
	engine_gen_init(e, &g);
	g.samp.temp = 0.8f;
	g.samp.seed = 5;
	g.n_predict = 6;
	return engine_chat(e, msg, &g, err, sizeof err);
}

TEST(engine_forget_zeroizes_the_conversation_kv_and_sampler)
{
	struct engine *e = loaded();

	CHECK_EQ_INT(chat(e, "a secret about the weather"), 0);
	CHECK_EQ_INT(chat(e, "and one more"), 0);
	CHECK(e->n_past > 0 && e->n_msgs == 4 && e->text_len > 0);
	/* what a conversation leaves behind, before */
	CHECK(!all_zero(e->kv.k, e->kv.bytes) && !all_zero(e->kv.v, e->kv.bytes));
	CHECK(!all_zero(e->chat_buf, e->chat_cap) && !all_zero(e->fmt_buf, e->chat_cap));
	CHECK(!all_zero(e->ctx_tok, (e->n_ctx + 1) * sizeof(int32_t)));
	CHECK(!all_zero(e->s.base, e->s.bytes));
	CHECK(!all_zero(e->smp.cand, e->smp.n_vocab * sizeof *e->smp.cand));
	CHECK(!all_zero(e->smp.hist, e->smp.hist_cap * sizeof *e->smp.hist));

	engine_forget(e);
	CHECK(all_zero(e->kv.k, e->kv.bytes) && all_zero(e->kv.v, e->kv.bytes));
	CHECK(all_zero(e->chat_buf, e->chat_cap) && all_zero(e->fmt_buf, e->chat_cap));
	CHECK(all_zero(e->text, e->text_cap));
	CHECK(all_zero(e->ctx_tok, (e->n_ctx + 1) * sizeof(int32_t)));
	CHECK(all_zero(e->tok_buf, (e->n_ctx + 1) * sizeof(int32_t)));
	CHECK(all_zero(e->s.base, e->s.bytes));
	CHECK(all_zero(e->mm.act, e->mm.act_cap));
	CHECK(all_zero(e->smp.cand, e->smp.n_vocab * sizeof *e->smp.cand));
	CHECK(all_zero(e->smp.hist, e->smp.hist_cap * sizeof *e->smp.hist));
	CHECK(all_zero(&e->smp.rng, sizeof e->smp.rng));
	CHECK(all_zero(e->msgs, sizeof e->msgs));
	CHECK_EQ_INT(e->n_past, 0);
	CHECK_EQ_INT(e->n_msgs, 0);
	CHECK(e->loaded);

	/* the same message again evaluates from position 0: nothing reused */
	CHECK_EQ_INT(chat(e, "a secret about the weather"), 0);
	CHECK_EQ_INT(e->run.n_reused, 0);
	engine_unload(e);
	free(e);
	host_remove_disks();
}

TEST(engine_chat_reset_zeroizes_and_unload_frees_through_the_wipe)
{
	struct engine *e = loaded();

	CHECK_EQ_INT(chat(e, "remember this"), 0);
	CHECK(!all_zero(e->kv.k, e->kv.bytes));
	engine_chat_reset(e);
	CHECK(all_zero(e->kv.k, e->kv.bytes) && all_zero(e->chat_buf, e->chat_cap));
	CHECK_EQ_INT(e->n_past, 0);
	CHECK_EQ_INT(chat(e, "remember this"), 0);
	CHECK_EQ_INT(e->run.n_reused, 0);
	/* unload: every byte went back through llm_mem_free, which zeroizes
	 * (llm/mem.c; the pages are unmapped after, so not readable here) */
	engine_unload(e);
	CHECK_EQ_INT(e->mem.used, 0);
	CHECK_EQ_INT(e->mem.n_allocs, 0);
	CHECK(!e->loaded && e->kv.k == NULL && e->text == NULL);
	free(e);
	host_remove_disks();
}

TEST(llm_mem_zeroize_clears_in_place)
{
	uint8_t b[64];
	memset(b, 0xa5, sizeof b);
	llm_mem_zeroize(b + 8, 40);
	CHECK(b[7] == 0xa5 && all_zero(b + 8, 40) && b[48] == 0xa5);
	llm_mem_zeroize(NULL, 10);
}

/* ---- prompt lookup ----
 * `lookup N` (llm/engine.c): tokens that followed the context's last n-gram
 * where it occurred before are checked in the pass of the token just
 * sampled. The reply must be the one a pass a token gives, greedy or
 * sampled, to the end of the context; drafts taken save passes. The
 * synthetic models' random weights fall into loops a lookup predicts. */

/* A synthetic model of weight type `type` for prompt lookup. */
static struct engine *open_model(const char *type, enum engine_weights w, uint32_t batch)
{
	char file[64];
	struct mkm_spec s;

	mkm_defaults(&s);
	s.name = "lookup";
	CHECK_EQ_INT(mkm_parse_type(type, &s.type, &s.mix), 0);
	snprintf(file, sizeof file, "engine_lookup_%s.gguf", type);
	return open_spec(&s, file, w, batch);
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
