/*
 * llm/engine_batch.c — continuous batching (engine_batch.h): slots in
 * disjoint ranges of the loaded model's cache; each pass one
 * model_forward_seqs_some of every decoding slot's token and pieces of the
 * prompts joining, the logits only of the rows that sample.
 *
 * The batch's samplers, token lists, texts, grammars and logits rows come
 * from memory of its own, charged against what the engine's mem-budget
 * leaves (so a load on the console, which starts the engine's accounting
 * afresh, never meets the batch's holdings).
 */
#include "engine_batch.h"
#include "engine_int.h"

#define TEXT_PER_POS 64u /* bytes of generated text a slot keeps per position */

static size_t text_cap(uint32_t n_ctx)
{
	return (size_t)n_ctx * TEXT_PER_POS + 1024;
}

static void slot_free(struct engine_batch *b, struct engine_batch_slot *s)
{
	if (s->toks)
		llm_mem_free(&b->mem, s->toks, (b->n_ctx + 1) * sizeof(int32_t));
	if (s->text)
		llm_mem_free(&b->mem, s->text, s->text_cap);
	if (s->smp.cand)
		sample_free(&s->smp);
	s->toks = NULL;
	s->text = NULL;
}

void engine_batch_free(struct engine_batch *b)
{
	for (uint32_t i = 0; i < ENGINE_BATCH_MAX; i++) {
		if (b->slot[i].used)
			engine_batch_release(b, (int)i);
		slot_free(b, &b->slot[i]);
	}
	if (b->rows)
		llm_mem_free(&b->mem, b->rows, b->rows_bytes);
	memset(b, 0, sizeof *b);
}

static int slot_alloc(struct engine_batch *b, struct engine_batch_slot *s)
{
	struct engine *e = b->e;
	int r = 0;

	s->text_cap = text_cap(b->n_ctx);
	if (!(s->toks = llm_mem_alloc(&b->mem, (b->n_ctx + 1) * sizeof(int32_t), &r)) ||
	    !(s->text = llm_mem_alloc(&b->mem, s->text_cap, &r)) ||
	    (r = sample_init(&s->smp, &b->mem, e->model.hp.n_vocab, b->n_ctx, &e->cfg.samp))) {
		slot_free(b, s);
		return r ? r : -LLMK_ENOMEM;
	}
	engine_mark_breakers(e, &s->smp);
	return 0;
}

int engine_batch_init(struct engine_batch *b, struct engine *e, uint32_t want, char *err,
		      size_t errlen)
{
	uint32_t n, per, V;
	uint64_t budget = 0;
	int r = 0;

	memset(b, 0, sizeof *b);
	if ((r = engine_need_model(e, err, errlen)))
		return r;
	if (want < 1 || want > ENGINE_BATCH_MAX) {
		plat_snprintf(err, errlen, "batch: %u slots (1 to %d)", want, ENGINE_BATCH_MAX);
		return -LLMK_EINVAL;
	}
	V = e->model.hp.n_vocab;
	/* each range whole attention tiles, at least ENGINE_BATCH_MIN_CTX positions */
	n = want < e->s.n_batch ? want : e->s.n_batch;
	while (n > 1 && (e->n_ctx / n) / MODEL_ATT_TILE * MODEL_ATT_TILE < ENGINE_BATCH_MIN_CTX)
		n--;
	per = n > 1 ? (e->n_ctx / n) / MODEL_ATT_TILE * MODEL_ATT_TILE : e->n_ctx;
	if (e->mem.budget) {
		budget = e->mem.budget > e->mem.used ? e->mem.budget - e->mem.used : 0;
		if (!budget) {
			plat_snprintf(err, errlen, "batch: the model's plan leaves nothing of "
				      "mem-budget for a slot (a smaller config ctx leaves room)");
			return -LLMK_EBUDGET;
		}
	}
	llm_mem_init(&b->mem, budget);
	b->e = e;
	b->n_ctx = per;
	for (b->n_slots = 0; b->n_slots < n; b->n_slots++) {
		struct engine_batch_slot *s = &b->slot[b->n_slots];
		/* the slot's logits row with it: a slot that fits has its row */
		uint64_t row = (uint64_t)V * sizeof(float);
		if (b->mem.budget && b->mem.used + row + 4096 > b->mem.budget)
			break;
		if ((r = slot_alloc(b, s)))
			break;
		s->base = b->n_slots * per;
	}
	if (b->n_slots) {
		b->rows_bytes = (size_t)b->n_slots * V * sizeof(float);
		if (!(b->rows = llm_mem_alloc(&b->mem, b->rows_bytes, &r))) {
			/* one slot fewer leaves room for the rows */
			slot_free(b, &b->slot[--b->n_slots]);
			b->rows_bytes = (size_t)b->n_slots * V * sizeof(float);
			if (b->n_slots)
				b->rows = llm_mem_alloc(&b->mem, b->rows_bytes, &r);
		}
	}
	if (!b->n_slots || !b->rows) {
		plat_snprintf(err, errlen, "batch: no room for one slot of %u positions: %s", per,
			      plat_strerror(r ? r : -LLMK_ENOMEM));
		engine_batch_free(b);
		return r ? r : -LLMK_ENOMEM;
	}
	b->epoch = e->epoch;
	e->n_past = 0; /* the shell's cached prompt is the batch's now */
	return 0;
}

bool engine_batch_valid(const struct engine_batch *b)
{
	return b->e && b->e->loaded && b->e->epoch == b->epoch;
}

uint32_t engine_batch_used(const struct engine_batch *b)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < b->n_slots; i++)
		n += b->slot[i].used;
	return n;
}

bool engine_batch_done(const struct engine_batch *b, int i)
{
	return i >= 0 && (uint32_t)i < b->n_slots && b->slot[i].used && !b->slot[i].active;
}

/* The request ends: what text is left goes out (not past a stop string). */
static void finish(struct engine_batch *b, struct engine_batch_slot *s, const char *why)
{
	s->run.stop = why;
	engine_end_text(s->g, s->text, s->text_len, &s->emitted, strcmp(why, "stop") == 0);
	s->run.gen_ns = plat_time_ns() - s->t_start;
	if (s->has_gram) {
		s->run.grammar = true;
		s->run.n_masked = s->gx.n_masked;
		s->run.n_mask_hits = s->gx.n_hits;
	}
	if (s->active)
		b->n_active--;
	s->active = false;
}

static void fail(struct engine_batch *b, struct engine_batch_slot *s, int r, const char *msg)
{
	s->result = r;
	plat_snprintf(s->err, sizeof s->err, "%s", msg);
	finish(b, s, r == -LLMK_ECANCEL ? "cancel" : "error");
}

/*
 * The slot's next token from logits lg (writable: a grammar masks them),
 * as engine.c's generate() takes it: sampled, constrained, checked for an
 * end, stop strings, the grammar's end, n_predict and the context. Still
 * active after: s->next is fed at s->n_past by the next pass.
 */
static void take_token(struct engine_batch *b, struct engine_batch_slot *s, float *lg)
{
	struct engine *e = b->e;
	struct engine_gen *g = s->g;
	char piece[256];
	int32_t id;
	int n;

	if (g->cancel && g->cancel(g->ctx)) {
		fail(b, s, -LLMK_ECANCEL, "cancelled");
		return;
	}
	if (g->ignore_eos)
		engine_ban_eog(e, lg);
	id = (int32_t)sample_next(&s->smp, lg);
	if (s->has_gram) {
		uint64_t t = plat_time_ns();
		id = engine_constrain(&s->smp, &s->gx, lg, id);
		s->run.grammar_ns += plat_time_ns() - t;
		if (id < 0) {
			finish(b, s, "grammar-refused");
			return;
		}
	}
	if (tok_is_eog(&e->tok, id)) {
		finish(b, s, "eog");
		return;
	}
	sample_accept(&s->smp, (uint32_t)id);
	if (g->out_ids && g->n_out < g->out_cap)
		g->out_ids[g->n_out] = id;
	g->n_out++;
	s->run.n_gen++;
	n = tok_piece(&e->tok, id, 0, piece, sizeof piece);
	if (n > 0 &&
	    engine_add_text(g, s->text, s->text_cap, &s->text_len, &s->emitted, piece, (size_t)n)) {
		finish(b, s, "stop");
		return;
	}
	if (s->has_gram) {
		uint64_t t = plat_time_ns();
		gram_gen_accept(&s->gx, id);
		s->run.grammar_ns += plat_time_ns() - t;
		if (gram_gen_done(&s->gx)) {
			finish(b, s, "grammar");
			return;
		}
	}
	if (++s->i >= g->n_predict) {
		finish(b, s, "limit");
		return;
	}
	if (s->n_past >= b->n_ctx) {
		finish(b, s, "context");
		return;
	}
	s->toks[s->n_past] = id;
	s->next = id;
}

/* The request's grammar (or its schema's), parsed into the slot. */
static int slot_grammar(struct engine_batch *b, struct engine_batch_slot *s, char *err,
			size_t errlen)
{
	struct engine *e = b->e;
	const char *text = s->g->grammar;
	char *conv = NULL, why[200];
	int r;

	if (!text && !s->g->json_schema) {
		if (s->g->n_triggers) {
			plat_snprintf(err, errlen, "grammar triggers need a grammar or a schema");
			return -LLMK_EINVAL;
		}
		return 0;
	}
	if (!text) {
		if (!(conv = llm_mem_alloc(&b->mem, GRAM_SCHEMA_OUT, &r))) {
			plat_snprintf(err, errlen, "json schema: no memory for its grammar");
			return r;
		}
		if ((r = gram_schema(s->g->json_schema, strlen(s->g->json_schema), conv,
				     GRAM_SCHEMA_OUT, &b->mem, err, errlen))) {
			llm_mem_free(&b->mem, conv, GRAM_SCHEMA_OUT);
			return r;
		}
		text = conv;
	}
	r = gram_parse(&s->gr, &b->mem, text, strlen(text), why, sizeof why);
	if (conv)
		llm_mem_free(&b->mem, conv, GRAM_SCHEMA_OUT);
	if (r) {
		plat_snprintf(err, errlen, "grammar: %s", why);
		return r;
	}
	if ((r = gram_gen_init(&s->gx, &s->gr, &e->tok, e->tok.n_vocab < e->model.hp.n_vocab ?
			       e->tok.n_vocab : e->model.hp.n_vocab, &b->mem))) {
		plat_snprintf(err, errlen, "grammar: %s", r == -LLMK_ERANGE ?
			      "its start passes the matcher's bounds" : plat_strerror(r));
		gram_free(&s->gr);
		return r;
	}
	if (s->g->n_triggers &&
	    (r = gram_gen_lazy(&s->gx, s->g->triggers, s->g->n_triggers, why, sizeof why))) {
		plat_snprintf(err, errlen, "grammar: %s", why);
		gram_gen_free(&s->gx);
		gram_free(&s->gr);
		return r;
	}
	s->has_gram = true;
	return 0;
}

static int join(struct engine_batch *b, uint32_t n, struct engine_gen *g, char *err,
		size_t errlen)
{
	struct engine *e = b->e;
	struct engine_batch_slot *s = NULL;
	int r, i;

	for (i = 0; i < (int)b->n_slots && !s; i++)
		if (!b->slot[i].used)
			s = &b->slot[i];
	if (!s) {
		plat_snprintf(err, errlen, "batch: every slot (%u) is taken", b->n_slots);
		return -LLMK_EBUSY;
	}
	i = (int)(s - b->slot);
	if (n >= b->n_ctx) {
		plat_snprintf(err, errlen, "prompt is %u tokens; a slot holds %u (at most %u to "
			      "leave room to generate; a larger context or fewer slots: serve "
			      "--slots N)", n, b->n_ctx, b->n_ctx - 1);
		return -LLMK_ERANGE;
	}
	memset(&s->run, 0, sizeof s->run);
	s->g = g;
	s->n_past = s->i = 0;
	s->text_len = s->emitted = 0;
	s->text[0] = 0;
	s->result = 0;
	s->err[0] = 0;
	s->has_gram = false;
	memcpy(s->toks, e->tok_buf, n * sizeof(int32_t));
	if ((r = slot_grammar(b, s, err, errlen)))
		return r;
	if (g->samp.seed == SAMPLE_SEED_RANDOM && plat_entropy(&g->samp.seed, sizeof g->samp.seed))
		g->samp.seed = plat_time_ns();
	g->samp.seed &= ~(1ull << 63);
	if ((r = sample_reset(&s->smp, &g->samp))) {
		plat_snprintf(err, errlen, "sampler: %s", plat_strerror(r));
		if (s->has_gram) {
			gram_gen_free(&s->gx);
			gram_free(&s->gr);
		}
		return r;
	}
	for (uint32_t k = 0; k < n; k++)
		sample_accept(&s->smp, (uint32_t)s->toks[k]);
	s->used = s->active = true;
	b->n_active++;
	s->run.seed = g->samp.seed;
	s->run.threads = e->mm.n_threads;
	s->run.n_prompt = n;
	s->run.stop = "error";
	g->n_out = 0;
	e->n_past = 0;
	s->prefilling = true;
	s->fed = 0;
	s->n_prompt = n;
	s->order = ++b->joined;
	s->t_start = plat_time_ns();
	if (g->n_predict == 0)
		finish(b, s, "limit");
	return i;
}

int engine_batch_infer(struct engine_batch *b, const char *prompt, struct engine_gen *g,
		       char *err, size_t errlen)
{
	uint32_t n;
	int r;

	if (!engine_batch_valid(b)) {
		plat_snprintf(err, errlen, "batch: the engine changed since it began");
		return -LLMK_EINVAL;
	}
	if ((r = engine_tokenize(b->e, prompt, strlen(prompt), g->special != ENGINE_SPECIAL_TEXT,
				 NULL, 0, &n, err, errlen)))
		return r;
	return join(b, n, g, err, errlen);
}

int engine_batch_chat(struct engine_batch *b, const struct chat_msg *msgs, size_t n,
		      struct engine_gen *g, char *err, size_t errlen)
{
	uint32_t n_tok;
	int r;

	if (!engine_batch_valid(b)) {
		plat_snprintf(err, errlen, "batch: the engine changed since it began");
		return -LLMK_EINVAL;
	}
	if ((r = engine_chat_tokens(b->e, msgs, n, g, &n_tok, err, errlen)))
		return r;
	return join(b, n_tok, g, err, errlen);
}

/* The prefilling slot that joined first and has prompt left, or NULL. */
static struct engine_batch_slot *next_joiner(struct engine_batch *b, const uint32_t *took)
{
	struct engine_batch_slot *best = NULL;

	for (uint32_t i = 0; i < b->n_slots; i++) {
		struct engine_batch_slot *s = &b->slot[i];
		if (s->active && s->prefilling && s->fed + took[i] < s->n_prompt &&
		    (!best || s->order < best->order))
			best = s;
	}
	return best;
}

int engine_batch_step(struct engine_batch *b)
{
	struct engine *e;
	uint32_t cap, n = 0, took[ENGINE_BATCH_MAX] = {0}, row = 0;
	struct engine_batch_slot *j;
	int r;

	if (!b->n_active)
		return 0;
	if (!engine_batch_valid(b)) {
		for (uint32_t i = 0; i < b->n_slots; i++)
			if (b->slot[i].active)
				fail(b, &b->slot[i], -LLMK_EINVAL,
				     "the engine was used meanwhile (a console command)");
		return -LLMK_EINVAL;
	}
	e = b->e;
	cap = e->s.n_batch < ENGINE_BATCH_PASS ? e->s.n_batch : ENGINE_BATCH_PASS;
	/* every decoding slot's token first, then pieces of the prompts, the
	 * first to join first, as far as the pass holds */
	for (uint32_t i = 0; i < b->n_slots; i++) {
		struct engine_batch_slot *s = &b->slot[i];
		if (!s->active || s->prefilling)
			continue;
		b->tok[n] = s->next;
		b->base[n] = s->base;
		b->pos[n] = s->n_past;
		b->want[n] = 1;
		b->who[n++] = (uint8_t)i;
	}
	while (n < cap && (j = next_joiner(b, took))) {
		uint32_t i = (uint32_t)(j - b->slot);
		while (n < cap && j->fed + took[i] < j->n_prompt) {
			uint32_t p = j->fed + took[i]++;
			b->tok[n] = j->toks[p];
			b->base[n] = j->base;
			b->pos[n] = p;
			b->want[n] = p + 1 == j->n_prompt;
			b->who[n++] = (uint8_t)i;
		}
	}
	r = model_forward_seqs_some(&e->model, &e->s, &e->mm, &e->kv, b->tok, b->base, b->pos, n,
				    b->want, b->rows);
	b->passes++;
	b->tokens += n;
	for (uint32_t k = 0; k < n; k++) {
		struct engine_batch_slot *s = &b->slot[b->who[k]];
		float *lg = b->rows + (size_t)row * e->model.hp.n_vocab;
		if (!s->active)
			continue;
		if (r) {
			char msg[96];
			plat_snprintf(msg, sizeof msg, "forward pass: %s", plat_strerror(r));
			fail(b, s, r, msg);
			continue;
		}
		if (!b->want[k]) /* a prompt token before the last */
			continue;
		row++;
		if (s->prefilling) {
			uint64_t now = plat_time_ns();
			s->prefilling = false;
			s->fed = s->n_past = s->n_prompt;
			s->run.prompt_ns = now - s->t_start;
			s->t_start = now;
		} else {
			s->n_past++;
			s->run.n_passes++;
		}
		take_token(b, s, lg);
	}
	for (uint32_t i = 0; i < b->n_slots && !r; i++)
		if (b->slot[i].active && b->slot[i].prefilling)
			b->slot[i].fed += took[i];
	return r ? r : (int)n;
}

void engine_batch_cancel(struct engine_batch *b, int i)
{
	if (i >= 0 && (uint32_t)i < b->n_slots && b->slot[i].active)
		fail(b, &b->slot[i], -LLMK_ECANCEL, "cancelled");
}

void engine_batch_release(struct engine_batch *b, int i)
{
	struct engine_batch_slot *s;

	if (i < 0 || (uint32_t)i >= b->n_slots || !b->slot[i].used)
		return;
	s = &b->slot[i];
	if (s->active)
		engine_batch_cancel(b, i);
	if (s->has_gram) {
		gram_gen_free(&s->gx);
		gram_free(&s->gr);
		s->has_gram = false;
	}
	llm_mem_zeroize(s->text, s->text_cap);
	llm_mem_zeroize(s->toks, (b->n_ctx + 1) * sizeof(int32_t));
	s->text_len = s->emitted = 0;
	s->used = false;
	s->g = NULL;
}
