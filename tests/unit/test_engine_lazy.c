/*
 * tests/unit/test_engine_lazy.c — a lazy grammar in the engine's single run
 * (engine_infer) and in a batch slot (engine_batch_*), greedy on a
 * synthetic model (tools/host/mkmodel.h), so it never skips:
 *   - a trigger the text never holds: the ids and text are those of the run
 *     with no grammar, bit for bit;
 *   - a trigger taken from that free text (the end of one of its tokens):
 *     the text is the free one up to the trigger, then what the grammar
 *     allows, to its end ("grammar");
 *   - the batch slot gives what the single run gives.
 */
#include "test.h"

#include <stdlib.h>

#include "../../llm/engine.h"
#include "../../llm/engine_batch.h"
#include "../../tools/host/host.h"
#include "../../tools/writer/mkmodel.h"

#define N_GEN 40

static struct engine *open_model(void)
{
	struct mkm_spec s;
	char path[600], err[256];

	mkm_defaults(&s);
	s.name = "lazy";
	s.std = 1.0f; /* peaked logits: a varied greedy text */
	snprintf(path, sizeof path, "%s/engine_lazy.gguf", test_tmpdir());
	CHECK_EQ_INT(mkm_write(&s, path, err, sizeof err), 0);
	host_remove_disks();
	CHECK_EQ_INT(host_add_disk(path), 0);
	struct engine *e = calloc(1, sizeof *e);
	engine_init(e);
	e->cfg.threads = 1;
	int r = engine_load(e, 0, false, err, sizeof err);
	CHECK_EQ_INT(r, 0);
	if (r) {
		fprintf(stderr, "load: %s\n", err);
		free(e);
		return NULL;
	}
	return e;
}

struct out {
	int32_t ids[N_GEN];
	uint32_t n;
	char text[2048];
	const char *stop;
};

static void gen_init(struct engine *e, struct engine_gen *g, struct out *o, const char *grammar,
		     const char *trigger)
{
	engine_gen_init(e, g);
	g->samp.temp = 0;
	g->n_predict = N_GEN;
	g->lookup = 0;
	g->ignore_eos = true;
	g->out_ids = o->ids;
	g->out_cap = N_GEN;
	g->grammar = grammar;
	if (trigger) {
		g->triggers[0] = trigger;
		g->n_triggers = 1;
	}
}

static int single(struct engine *e, const char *grammar, const char *trigger, struct out *o)
{
	struct engine_gen g;
	char err[256];
	int r;

	memset(o, 0, sizeof *o);
	gen_init(e, &g, o, grammar, trigger);
	if ((r = engine_infer(e, "Once upon a time", &g, err, sizeof err))) {
		fprintf(stderr, "  infer: %s\n", err);
		return r;
	}
	o->n = g.n_out;
	snprintf(o->text, sizeof o->text, "%.*s", (int)e->text_len, e->text);
	o->stop = e->run.stop;
	return 0;
}

static int batched(struct engine *e, const char *grammar, const char *trigger, struct out *o)
{
	struct engine_batch *b = calloc(1, sizeof *b);
	struct engine_gen g;
	char err[256];
	int i, r = -1;

	memset(o, 0, sizeof *o);
	if (!b || engine_batch_init(b, e, 2, err, sizeof err)) {
		fprintf(stderr, "  batch: %s\n", b ? err : "no memory");
		free(b);
		return -1;
	}
	gen_init(e, &g, o, grammar, trigger);
	if ((i = engine_batch_infer(b, "Once upon a time", &g, err, sizeof err)) < 0) {
		fprintf(stderr, "  join: %s\n", err);
		goto out;
	}
	for (int k = 0; k < 10 * N_GEN && !engine_batch_done(b, i); k++)
		if (engine_batch_step(b) < 0)
			break;
	if (engine_batch_done(b, i)) {
		struct engine_batch_slot *s = &b->slot[i];
		o->n = g.n_out;
		snprintf(o->text, sizeof o->text, "%.*s", (int)s->text_len, s->text);
		o->stop = s->run.stop;
		r = s->result;
	}
	engine_batch_release(b, i);
out:
	engine_batch_free(b);
	free(b);
	return r;
}

static bool same(const struct out *a, const struct out *b)
{
	return a->n == b->n && memcmp(a->ids, b->ids, a->n * sizeof a->ids[0]) == 0 &&
	       strcmp(a->text, b->text) == 0 && strcmp(a->stop, b->stop) == 0;
}

TEST(engine_lazy_grammar_no_trigger_is_the_run_without_a_grammar)
{
	struct engine *e = open_model();
	struct out free_run, lazy, bat;

	if (!e)
		return;
	CHECK_EQ_INT(single(e, NULL, NULL, &free_run), 0);
	CHECK_EQ_INT((int)free_run.n, N_GEN);
	CHECK_EQ_INT(single(e, "root ::= \"\\x01\" [0-9]", "\x01", &lazy), 0);
	CHECK(same(&free_run, &lazy));
	CHECK_EQ_INT(batched(e, "root ::= \"\\x01\" [0-9]", "\x01", &bat), 0);
	CHECK(same(&free_run, &bat));
	/* a trigger and no grammar: refused */
	struct engine_gen g;
	char err[256];
	gen_init(e, &g, &lazy, NULL, "x");
	CHECK_EQ_INT(engine_infer(e, "x", &g, err, sizeof err), -LLMK_EINVAL);
	engine_unload(e);
	free(e);
}

TEST(engine_lazy_grammar_applies_from_the_trigger_single_and_batched)
{
	struct engine *e = open_model();
	struct out free_run, lazy, bat;
	char trig[8], grammar[128];
	size_t at = 0;

	if (!e)
		return;
	CHECK_EQ_INT(single(e, NULL, NULL, &free_run), 0);
	/* the trigger: two printable bytes that end a token of the free text
	 * (from its fourth on) and are nowhere in it before */
	size_t end = 0;
	for (uint32_t k = 0; k < free_run.n && !end; k++) {
		char p[64];
		int n = tok_piece(&e->tok, free_run.ids[k], 0, p, sizeof p);
		at += n > 0 ? (size_t)n : 0;
		if (k < 3 || at < 2 || at > strlen(free_run.text))
			continue;
		memcpy(trig, free_run.text + at - 2, 2);
		trig[2] = 0;
		if (trig[0] > ' ' && trig[0] < 127 && trig[0] != '^' && trig[1] > ' ' &&
		    trig[1] < 127 && strstr(free_run.text, trig) == free_run.text + at - 2)
			end = at;
	}
	if (!end) {
		CHECK(end > 0);
		goto out;
	}
	/* a grammar that starts with the trigger */
	snprintf(grammar, sizeof grammar, "root ::= \"\\x%02x\\x%02x=\" [0-9] [0-9] \";\"",
		 (uint8_t)trig[0], (uint8_t)trig[1]);
	CHECK_EQ_INT(single(e, grammar, trig, &lazy), 0);
	CHECK_STR(lazy.stop, "grammar");
	size_t n = strlen(lazy.text);
	CHECK(n >= end + 4 && memcmp(lazy.text, free_run.text, end - 2) == 0);
	if (n >= end + 4) {
		/* from the trigger on: the trigger, "=", two digits, ";" */
		CHECK(memcmp(lazy.text + end - 2, trig, 2) == 0);
		CHECK(lazy.text[n - 4] == '=' && lazy.text[n - 1] == ';');
		CHECK(lazy.text[n - 3] >= '0' && lazy.text[n - 3] <= '9');
	}
	CHECK_EQ_INT(batched(e, grammar, trig, &bat), 0);
	CHECK(same(&lazy, &bat));
out:
	engine_unload(e);
	free(e);
}
