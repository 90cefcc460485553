/*
 * llm/engine.c — running a loaded engine (engine.h): tokenizing, the
 * generation loop (stop strings, prompt lookup, grammar), forgetting; loading
 * and the memory plan are engine_load.c's, chat's conversation engine_chat.c's.
 */
#include "engine_int.h"
#include "grammar.h"

/* ---- running ---- */
void engine_gen_init(const struct engine *e, struct engine_gen *g)
{
	memset(g, 0, sizeof *g);
	g->samp = e->cfg.samp;
	g->n_predict = e->cfg.n_predict;
	g->lookup = e->cfg.lookup;
}

struct engine_threads engine_threads_set(struct engine *e, int n)
{
	struct engine_threads was = {e->mm.n_threads, e->s.n_workers};

	e->epoch++; /* a run or a bench: the cache is no batch's any more */

	if (n > 0) {
		e->mm.n_threads = n;
		if ((uint32_t)n < e->s.n_workers)
			e->s.n_workers = (uint32_t)n;
	}
	return was;
}

void engine_threads_restore(struct engine *e, struct engine_threads t)
{
	e->mm.n_threads = t.mm;
	e->s.n_workers = t.workers;
}

int engine_need_model(struct engine *e, char *err, size_t errlen)
{
	if (!e->loaded) {
		plat_snprintf(err, errlen, "no model loaded (use 'load N')");
		return -LLMK_EINVAL;
	}
	if (e->vocab_only) {
		plat_snprintf(err, errlen, "model loaded with --vocab-only: no weights to run");
		return -LLMK_EINVAL;
	}
	return 0;
}

int engine_tokenize(struct engine *e, const char *text, size_t len, bool parse_special,
		    const struct tok_span *spans, size_t n_spans, uint32_t *n, char *err,
		    size_t errlen)
{
	size_t got = 0;
	int r = spans ? tok_encode_spans(&e->tok, text, len, true, spans, n_spans, e->tok_buf,
					 e->n_ctx + 1, &got)
		      : tok_encode(&e->tok, text, len, true, parse_special, e->tok_buf,
				   e->n_ctx + 1, &got);

	if (r == 0 && got == e->n_ctx) {
		/* the reply's first token needs a position of its own */
		plat_snprintf(err, errlen, "prompt is %zu tokens, it fills the context (%u): no "
			      "room to generate (at most %u tokens)", got, e->n_ctx, e->n_ctx - 1);
		return -LLMK_ERANGE;
	}
	if (r == -LLMK_ERANGE || (r == 0 && got > e->n_ctx)) {
		plat_snprintf(err, errlen, "prompt is %zu tokens, longer than the context (%u)",
			      got, e->n_ctx);
		return -LLMK_ERANGE;
	}
	if (r) {
		plat_snprintf(err, errlen, "tokenizer: %s", plat_strerror(r));
		return r;
	}
	if (got == 0) {
		plat_snprintf(err, errlen, "empty prompt");
		return -LLMK_EINVAL;
	}
	*n = (uint32_t)got;
	return 0;
}

/*
 * Bring the cache to hold exactly toks[0..n) and leave the last token's
 * logits in e->s.logits. Tokens already cached as a prefix are kept; at
 * least the last one is evaluated again for its logits. The rest goes
 * through the model a batch at a time, so Ctrl-C is seen between batches
 * (the cache then holds the prefix evaluated so far).
 */
static int feed(struct engine *e, const int32_t *toks, uint32_t n, struct engine_gen *g)
{
	uint32_t keep = 0;
	int r;

	while (keep < e->n_past && keep < n && e->ctx_tok[keep] == toks[keep])
		keep++;
	if (keep == n)
		keep--;
	e->run.n_reused = keep;
	e->run.n_prompt = n - keep;
	e->n_past = keep;
	while (e->n_past < n) {
		uint32_t B = n - e->n_past < e->s.n_batch ? n - e->n_past : e->s.n_batch;
		if (g->cancel && g->cancel(g->ctx))
			return -LLMK_ECANCEL;
		r = model_forward(&e->model, &e->s, &e->mm, &e->kv, toks + e->n_past, B, e->n_past,
				  e->n_past + B == n);
		if (r)
			return r;
		memmove(e->ctx_tok + e->n_past, toks + e->n_past, B * sizeof(int32_t));
		e->n_past += B;
	}
	return 0;
}

/* The longest tail of text[0..len) that is a proper prefix of a stop string:
 * it must be held back until the next piece decides. */
size_t engine_held_back(const struct engine_gen *g, const char *text, size_t len)
{
	size_t keep = 0;

	for (uint32_t i = 0; i < g->n_stops; i++) {
		size_t sl = strlen(g->stops[i]);
		for (size_t k = sl ? sl - 1 : 0; k > keep; k--)
			if (k <= len && memcmp(text + len - k, g->stops[i], k) == 0) {
				keep = k;
				break;
			}
	}
	return keep;
}

/* First occurrence of a stop string starting at or after from; -1 if none. */
long engine_find_stop(const struct engine_gen *g, const char *text, size_t len, size_t from)
{
	long best = -1;

	for (uint32_t i = 0; i < g->n_stops; i++) {
		size_t sl = strlen(g->stops[i]);
		for (size_t p = from; sl && p + sl <= len; p++)
			if (memcmp(text + p, g->stops[i], sl) == 0) {
				if (best < 0 || (long)p < best)
					best = (long)p;
				break;
			}
	}
	return best;
}

static void emit(const struct engine_gen *g, const char *s, size_t n)
{
	if (n && g->emit)
		g->emit(g->ctx, s, n);
}

/* (engine_int.h) Append a piece; true when a stop string ended the text. */
bool engine_add_text(const struct engine_gen *g, char *text, size_t cap, size_t *len,
		     size_t *emitted, const char *piece, size_t n)
{
	size_t hold;
	long at;

	if (*len + n >= cap)
		n = cap - 1 - *len;
	memcpy(text + *len, piece, n);
	*len += n;
	text[*len] = 0;
	/* a stop can only start in the unemitted tail: text before it was
	 * emitted only once no stop could start there */
	at = engine_find_stop(g, text, *len, *emitted);
	if (at >= 0) {
		*len = (size_t)at;
		text[at] = 0;
		if (*len > *emitted)
			emit(g, text + *emitted, *len - *emitted);
		*emitted = *len;
		return true;
	}
	hold = engine_held_back(g, text, *len);
	if (*len - hold > *emitted) {
		emit(g, text + *emitted, *len - hold - *emitted);
		*emitted = *len - hold;
	}
	return false;
}

/* The run is over: the held-back tail goes out too, unless a stop string
 * ended the text (then nothing past *emitted is the reply's). */
void engine_end_text(const struct engine_gen *g, const char *text, size_t len, size_t *emitted,
		     bool stopped)
{
	if (len > *emitted && !stopped)
		emit(g, text + *emitted, len - *emitted);
	*emitted = len;
}

/* --ignore-eos (llama.cpp: every end-of-generation token's logit bias is
 * -inf): the end tokens can no longer be drawn. */
void engine_ban_eog(const struct engine *e, float *logits)
{
	uint32_t n = e->tok.n_vocab < e->model.hp.n_vocab ? e->tok.n_vocab : e->model.hp.n_vocab;

	for (uint32_t id = 0; id < n; id++)
		if (e->tok.tokens[id].attr & TOK_ATTR_EOG)
			logits[id] = -__builtin_inff();
}

/* The longest n-gram checked, and the shortest: one token matches too often
 * by chance to be worth its drafts. */
#define LOOKUP_NGRAM_MAX 4
#define LOOKUP_NGRAM_MIN 2

/*
 * Prompt lookup (Saxena 2023; llama.cpp's lookup decoding): the context
 * h[0..n) (the cache's tokens and the one just sampled) ends in an n-gram;
 * where it occurred before, latest first and longest n first, the tokens
 * that followed it there are the draft, at most max. Returns how many.
 */
static uint32_t lookup_draft(const int32_t *h, uint32_t n, uint32_t max, int32_t *d)
{
	for (uint32_t g = LOOKUP_NGRAM_MAX; g >= LOOKUP_NGRAM_MIN; g--) {
		if (n <= g)
			continue;
		const int32_t *tail = h + n - g;
		/* an occurrence at [at, at + g) with at least one token after it */
		for (uint32_t at = n - g; at-- > 0;) {
			if (memcmp(h + at, tail, g * sizeof *h) != 0)
				continue;
			uint32_t k = 0;
			while (k < max && at + g + k < n)
				d[k] = h[at + g + k], k++;
			return k;
		}
	}
	return 0;
}

/*
 * One forward pass for the token id just sampled at e->n_past, and with it
 * the drafts the context suggests: *lg then points at the logits of the
 * token after id (row 0), the drafts' rows after it. Returns the drafts'
 * count (d[0..) is what the pass assumed follows id), or -LLMK_E*.
 */
static int step(struct engine *e, int32_t id, uint32_t room, float *rows, int32_t *d, float **lg)
{
	uint32_t max = e->run.lookup, k;
	uint32_t base[ENGINE_LOOKUP_MAX + 1] = {0}, pos[ENGINE_LOOKUP_MAX + 1];
	int32_t tok[ENGINE_LOOKUP_MAX + 1];
	int r;

	/* drafts past the tokens still wanted or past the context are wasted */
	if (max > room)
		max = room;
	if (max > e->n_ctx - e->n_past - 1)
		max = e->n_ctx - e->n_past - 1;
	e->ctx_tok[e->n_past] = id;
	k = max ? lookup_draft(e->ctx_tok, e->n_past + 1, max, d) : 0;
	e->run.n_passes++;
	if (!k) {
		*lg = e->s.logits;
		return model_forward(&e->model, &e->s, &e->mm, &e->kv, &id, 1, e->n_past, true);
	}
	tok[0] = id;
	for (uint32_t i = 0; i <= k; i++) {
		pos[i] = e->n_past + i;
		if (i)
			tok[i] = d[i - 1];
	}
	e->run.n_drafted += k;
	*lg = rows;
	r = model_forward_seqs(&e->model, &e->s, &e->mm, &e->kv, tok, base, pos, k + 1, rows);
	return r ? r : (int)k;
}

/* The grammar's choice (llm/grammar_gen.c): the sampled token if the
 * grammar allows it, else a draw from the tokens it allows; -1 if none. */
int32_t engine_constrain(struct sampler *smp, struct gram_gen *gx, float *lg, int32_t id)
{
	if (gram_gen_allows(gx, id))
		return id;
	gram_gen_mask(gx, lg);
	id = (int32_t)sample_next(smp, lg);
	return gram_gen_allows(gx, id) ? id : -1;
}

static int generate(struct engine *e, struct engine_gen *g, float *rows, struct gram_gen *gx)
{
	size_t emitted = 0;
	char piece[256];
	int32_t draft[ENGINE_LOOKUP_MAX];
	uint32_t n_draft = 0, at = 0; /* draft[at..n_draft) the pass assumed next */
	float *lg = e->s.logits;
	int r = 0;

	e->text_len = 0;
	e->text[0] = 0;
	g->n_out = 0;
	e->run.n_gen = 0;
	e->run.stop = "limit";
	for (uint32_t i = 0; i < g->n_predict; i++) {
		int32_t id;
		int n;

		if (g->cancel && g->cancel(g->ctx)) {
			e->run.stop = "cancel";
			r = -LLMK_ECANCEL;
			break;
		}
		if (g->ignore_eos)
			engine_ban_eog(e, lg);
		id = (int32_t)sample_next(&e->smp, lg);
		if (gx) {
			uint64_t t = plat_time_ns();
			id = engine_constrain(&e->smp, gx, lg, id);
			e->run.grammar_ns += plat_time_ns() - t;
			if (id < 0) {
				e->run.stop = "grammar-refused";
				break;
			}
		}
		if (tok_is_eog(&e->tok, id)) {
			e->run.stop = "eog";
			break;
		}
		sample_accept(&e->smp, (uint32_t)id);
		if (g->out_ids && g->n_out < g->out_cap)
			g->out_ids[g->n_out] = id;
		g->n_out++;
		e->run.n_gen++;
		n = tok_piece(&e->tok, id, 0, piece, sizeof piece);
		if (n > 0 && engine_add_text(g, e->text, e->text_cap, &e->text_len, &emitted, piece,
					     (size_t)n)) {
			e->run.stop = "stop";
			break;
		}
		if (gx) {
			uint64_t t = plat_time_ns();
			gram_gen_accept(gx, id);
			e->run.grammar_ns += plat_time_ns() - t;
			if (gram_gen_done(gx)) {
				e->run.stop = "grammar";
				break;
			}
		}
		if (i + 1 == g->n_predict)
			break;
		/* the pass took id's position as the draft's: its row there holds
		 * what a pass of id alone would, and the next row the logits after id */
		if (at < n_draft && id == draft[at]) {
			e->ctx_tok[e->n_past++] = id;
			e->run.n_accepted++;
			lg = rows + (size_t)++at * e->model.hp.n_vocab;
			continue;
		}
		if (e->n_past >= e->n_ctx) {
			e->run.stop = "context";
			break;
		}
		/* (what a wrong draft wrote in the cache lies past n_past: overwritten) */
		r = step(e, id, g->n_predict - i - 2, rows, draft, &lg);
		if (r < 0) {
			e->run.stop = "error"; /* a disk or a sealed chunk failed mid-reply */
			break;
		}
		n_draft = (uint32_t)r;
		at = 0;
		r = 0;
		e->n_past++;
	}
	engine_end_text(g, e->text, e->text_len, &emitted, strcmp(e->run.stop, "stop") == 0);
	return r;
}

/* The logits rows for the run's drafts (e->run.lookup of them a pass), or
 * NULL with e->run.lookup_off saying why a run asked to draft goes without. */
static float *lookup_rows(struct engine *e, const struct engine_gen *g, size_t *bytes)
{
	uint32_t n = engine_lookup_drafts(g->lookup, e->streaming, e->s.n_batch);
	float *rows;
	int err;

	if (!n) {
		if (engine_lookup_drafts(g->lookup, e->streaming, 2))
			e->run.lookup_off = "a batch of 1 token";
		return NULL;
	}
	*bytes = (size_t)engine_lookup_bytes(e, n);
	if (!(rows = llm_mem_alloc(&e->mem, *bytes, &err))) {
		e->run.lookup_off = "no room in the memory budget for its logits";
		return NULL;
	}
	e->run.lookup = n;
	return rows;
}

/* Evaluate toks[0..n) (already in e->tok_buf) and generate, under gx
 * when not NULL. */
static int run_grammar(struct engine *e, uint32_t n, struct engine_gen *g, struct gram_gen *gx,
		       char *err, size_t errlen)
{
	struct wt_io_stats io;
	uint64_t t0, t1;
	int r;

	e->run.stop = "error";
	/* a random seed is drawn here and remembered, so any run can be repeated */
	if (g->samp.seed == SAMPLE_SEED_RANDOM && plat_entropy(&g->samp.seed, sizeof g->samp.seed))
		g->samp.seed = plat_time_ns();
	g->samp.seed &= ~(1ull << 63); /* never SAMPLE_SEED_RANDOM itself */
	e->run.seed = g->samp.seed;
	if ((r = sample_reset(&e->smp, &g->samp))) {
		plat_snprintf(err, errlen, "sampler: %s", plat_strerror(r));
		return r;
	}
	for (uint32_t i = 0; i < n; i++)
		sample_accept(&e->smp, (uint32_t)e->tok_buf[i]);
	wt_io_stats(&e->model.w, &io, true); /* stats count this run's disk traffic */
	t0 = plat_time_ns();
	r = feed(e, e->tok_buf, n, g);
	t1 = plat_time_ns();
	e->run.prompt_ns = t1 - t0;
	e->run.n_gen = 0;
	e->run.gen_ns = 0;
	e->run.n_passes = e->run.n_drafted = e->run.n_accepted = e->run.lookup = 0;
	e->run.lookup_off = NULL;
	e->run.grammar = false;
	e->run.grammar_ns = 0;
	e->run.n_masked = e->run.n_mask_hits = 0;
	if (r == -LLMK_ECANCEL) {
		e->run.stop = "cancel";
		plat_snprintf(err, errlen, "cancelled while reading the prompt (%u of %u tokens)",
			      e->n_past, n);
		return r;
	}
	if (r) {
		e->n_past = 0; /* the cache may be half written */
		plat_snprintf(err, errlen, "forward pass: %s", plat_strerror(r));
		engine_seal_msg(e, err, errlen);
		return r;
	}
	size_t rows_bytes = 0;
	float *rows = lookup_rows(e, g, &rows_bytes);
	r = generate(e, g, rows, gx);
	e->run.gen_ns = plat_time_ns() - t1;
	if (rows)
		llm_mem_free(&e->mem, rows, rows_bytes);
	if (r == -LLMK_ECANCEL)
		plat_snprintf(err, errlen, "cancelled after %u tokens", e->run.n_gen);
	else if (r) {
		e->n_past = 0;
		plat_snprintf(err, errlen, "forward pass: %s", plat_strerror(r));
		engine_seal_msg(e, err, errlen);
	}
	return r;
}

/* The run's grammar (or the schema's, converted), parsed, and its matcher
 * over the vocabulary: memory from the engine's budget for the run only. */
static int run_threads(struct engine *e, uint32_t n, struct engine_gen *g, char *err,
		       size_t errlen)
{
	const char *text = g->grammar;
	char *conv = NULL, why[200];
	struct gram gr;
	struct gram_gen gx;
	int r;

	if (!text && !g->json_schema) {
		if (g->n_triggers) {
			plat_snprintf(err, errlen, "grammar triggers need a grammar or a schema");
			return -LLMK_EINVAL;
		}
		return run_grammar(e, n, g, NULL, err, errlen);
	}
	if (!text) {
		if (!(conv = llm_mem_alloc(&e->mem, GRAM_SCHEMA_OUT, &r))) {
			plat_snprintf(err, errlen, "json schema: no memory for its grammar");
			return r;
		}
		if ((r = gram_schema(g->json_schema, strlen(g->json_schema), conv, GRAM_SCHEMA_OUT,
				     &e->mem, err, errlen))) {
			llm_mem_free(&e->mem, conv, GRAM_SCHEMA_OUT);
			return r;
		}
		text = conv;
	}
	r = gram_parse(&gr, &e->mem, text, strlen(text), why, sizeof why);
	if (conv)
		llm_mem_free(&e->mem, conv, GRAM_SCHEMA_OUT);
	if (r) {
		plat_snprintf(err, errlen, "grammar: %s", why);
		return r;
	}
	if ((r = gram_gen_init(&gx, &gr, &e->tok, e->tok.n_vocab < e->model.hp.n_vocab ?
				e->tok.n_vocab : e->model.hp.n_vocab, &e->mem))) {
		plat_snprintf(err, errlen, "grammar: %s", r == -LLMK_ERANGE ?
			      "its start passes the matcher's bounds" : plat_strerror(r));
		gram_free(&gr);
		return r;
	}
	if (g->n_triggers && (r = gram_gen_lazy(&gx, g->triggers, g->n_triggers, why, sizeof why))) {
		plat_snprintf(err, errlen, "grammar: %s", why);
		gram_gen_free(&gx);
		gram_free(&gr);
		return r;
	}
	r = run_grammar(e, n, g, &gx, err, errlen);
	e->run.grammar = true;
	e->run.n_masked = gx.n_masked;
	e->run.n_mask_hits = gx.n_hits;
	gram_gen_free(&gx);
	gram_free(&gr);
	return r;
}

int engine_run(struct engine *e, uint32_t n, struct engine_gen *g, char *err, size_t errlen)
{
	struct engine_threads was = engine_threads_set(e, g->threads);
	int r;

	e->run.threads = e->mm.n_threads;
	r = run_threads(e, n, g, err, errlen);
	engine_threads_restore(e, was);
	return r;
}

int engine_infer(struct engine *e, const char *prompt, struct engine_gen *g,
		 char *err, size_t errlen)
{
	uint32_t n;
	int r;

	if ((r = engine_need_model(e, err, errlen)) ||
	    (r = engine_tokenize(e, prompt, strlen(prompt), g->special != ENGINE_SPECIAL_TEXT,
				 NULL, 0, &n, err, errlen)))
		return r;
	return engine_run(e, n, g, err, errlen);
}

/* ---- forgetting ---- */
void engine_forget(struct engine *e)
{
	if (e->loaded && !e->vocab_only) {
		llm_mem_zeroize(e->ctx_tok, (e->n_ctx + 1) * sizeof(int32_t));
		llm_mem_zeroize(e->tok_buf, (e->n_ctx + 1) * sizeof(int32_t));
		llm_mem_zeroize(e->text, e->text_cap);
		llm_mem_zeroize(e->chat_buf, e->chat_cap);
		llm_mem_zeroize(e->fmt_buf, e->chat_cap);
		kv_zeroize(&e->kv);
		model_scratch_zeroize(&e->s);
		mm_zeroize(&e->mm);
		sample_zeroize(&e->smp);
	}
	llm_mem_zeroize(e->msgs, sizeof e->msgs);
	llm_mem_zeroize(e->spans, sizeof e->spans);
	e->n_msgs = 0;
	e->chat_len = 0;
	e->text_len = 0;
	e->n_past = 0;
	e->epoch++;
	uint64_t load_ns = e->run.load_ns;
	memset(&e->run, 0, sizeof e->run);
	e->run.load_ns = load_ns;
}
