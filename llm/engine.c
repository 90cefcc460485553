/*
 * llm/engine.c — loading, the memory plan, and the generation loop
 * (engine.h); chat's conversation is engine_chat.c's.
 */
#include "engine_int.h"
#include "grammar.h"

#define MIN_CTX 16u
#define TEXT_PER_TOKEN 64u /* bytes of text kept per context position */
#define PLAN_ERR "engine: model needs"
#define TOK_RESERVE (2u << 20)

void engine_init(struct engine *e)
{
	memset(e, 0, sizeof *e);
	/* this CPU's quant table, built here on the start thread (once) */
	(void)quant_cpu();
	e->disk = -1;
	e->cfg.kv_type = GGML_TYPE_F16;
	e->cfg.n_batch = ENGINE_DEFAULT_BATCH;
	e->cfg.n_predict = 128;
	e->cfg.lookup = ENGINE_LOOKUP_AUTO;
	sample_defaults(&e->cfg.samp);
}

/* ---- load ---- */
static uint32_t threads(const struct engine *e)
{
	return e->cfg.threads > 0 ? (uint32_t)e->cfg.threads : (uint32_t)plat_cpu_count();
}

static void *take(struct engine *e, size_t n, int *err)
{
	return llm_mem_alloc(&e->mem, n, err);
}

static const char *sz(uint64_t b, char *buf, size_t n)
{
	if (b >= (1ull << 30))
		plat_snprintf(buf, n, "%.2f GiB", (double)b / (double)(1ull << 30));
	else
		plat_snprintf(buf, n, "%.1f MiB", (double)b / (double)(1ull << 20));
	return buf;
}

/* No mem-budget: the plan takes what the machine has free now (the engine's
 * own holdings included), less a reserve for the platform (disk queues, the
 * shell), so a model larger than the memory streams instead of failing. The
 * allocator itself stays unlimited. 0 when the platform cannot tell. */
static uint64_t implicit_budget(const struct engine *e)
{
	struct plat_mem_stats ms;
	uint64_t have;

	plat_mem_stats(&ms);
	have = ms.free + e->mem.used;
	return have > (32ull << 20) ? have - have / 32 - (8ull << 20) : 0;
}

static const char *budget_what(const struct engine *e)
{
	return e->cfg.mem_budget ? "mem-budget is" : "free memory (no mem-budget) is";
}

/* Prompt lookup's drafts a pass: `lookup` as asked (ENGINE_LOOKUP_AUTO:
 * ENGINE_LOOKUP_STREAM while streaming, else none), at most
 * ENGINE_LOOKUP_MAX and what a pass of batch tokens carries beside the token. */
static uint32_t lookup_drafts(int asked, bool streaming, uint32_t batch)
{
	int n = asked == ENGINE_LOOKUP_AUTO ? (streaming ? ENGINE_LOOKUP_STREAM : 0) : asked;

	if (n <= 0 || batch < 2)
		return 0;
	if (n > ENGINE_LOOKUP_MAX)
		n = ENGINE_LOOKUP_MAX;
	return (uint32_t)n < batch ? (uint32_t)n : batch - 1;
}

/* The logits rows of n drafts' passes (the token's and each draft's); the
 * plan leaves room for the configured lookup's. */
static uint64_t lookup_bytes(const struct engine *e, uint32_t n)
{
	return n ? ((uint64_t)n + 1) * e->model.hp.n_vocab * sizeof(float) : 0;
}

/*
 * Streaming plan: the streamer's slots instead of the weights. As many slots
 * (up to ENGINE_STREAM_SLOTS) as leave the configured context; if none do,
 * two slots and the context the rest holds. Refused when two slots and
 * MIN_CTX positions do not fit.
 */
static int plan_stream(struct engine *e, uint64_t budget, uint64_t per_pos, char *err,
		       size_t errlen)
{
	const struct model_hparams *hp = &e->model.hp;
	uint64_t base, need;
	uint32_t n = ENGINE_STREAM_SLOTS, lo;
	struct stream_need nd;
	char a[32], b[32], c[32], d[32], f[32];

	stream_measure(&e->g, e->sealed ? &e->seal : NULL, e->meas.on, hp->n_layer, hp->n_embd,
		       n, &nd);
	if (n > nd.n_items)
		n = nd.n_items;
	lo = n < 2 ? n : 2;
	base = e->mem.used + e->scratch_bytes + nd.fixed_bytes +
	       lookup_bytes(e, lookup_drafts(e->cfg.lookup, true, e->cfg.n_batch));
	while (budget && n > lo && base + n * nd.slot_bytes + e->n_ctx * per_pos > budget)
		n--;
	need = base + n * nd.slot_bytes + (uint64_t)MIN_CTX * per_pos;
	if (budget && need > budget) {
		plat_snprintf(err, errlen, PLAN_ERR " %s to stream (%u slots of %s, token "
			      "embeddings %s, scratch %s, kv for %u positions %s) but %s %s",
			      sz(need, a, sizeof a), n, sz(nd.slot_bytes, b, sizeof b),
			      sz(nd.embd_bytes, f, sizeof f), sz(e->scratch_bytes, c, sizeof c),
			      MIN_CTX, sz(MIN_CTX * per_pos, d, sizeof d), budget_what(e),
			      sz(budget, d + 16, 16));
		return -LLMK_EBUDGET;
	}
	if (budget && (budget - base - n * nd.slot_bytes) / per_pos < e->n_ctx)
		e->n_ctx = (uint32_t)((budget - base - n * nd.slot_bytes) / per_pos);
	e->n_slots = n;
	e->slot_bytes = nd.slot_bytes;
	e->embd_bytes = nd.embd_bytes;
	e->kv_bytes = kv_bytes(e->cfg.kv_type, hp->n_layer, e->n_ctx, hp->n_head_kv * hp->head_dim);
	return 0;
}

/* Bytes a context position takes: K+V, the token lists, the text and chat
 * buffers, the sampler's history. */
static uint64_t pos_bytes(const struct engine *e)
{
	const struct model_hparams *hp = &e->model.hp;

	return kv_bytes(e->cfg.kv_type, hp->n_layer, 1, hp->n_head_kv * hp->head_dim) +
	       2 * sizeof(int32_t) + 3 * TEXT_PER_TOKEN + SAMPLE_POS_BYTES;
}

/*
 * The memory plan: weights (resident), scratch and buffers must fit the
 * budget; the KV cache then gets the context the configuration asks for, or
 * as many positions as the rest of the budget holds.
 */
static int plan_fit(struct engine *e, char *err, size_t errlen)
{
	const struct model_hparams *hp = &e->model.hp;
	uint32_t kv_dim = hp->n_head_kv * hp->head_dim;
	uint64_t budget = e->cfg.mem_budget, fixed, per_pos = pos_bytes(e), room;
	char a[32], b[32];

	/* the file's context_length is a claim, not a request: 0xffffffff
	 * would plan all the free memory for the cache */
	e->n_ctx_asked = e->cfg.n_ctx ? e->cfg.n_ctx : hp->n_ctx_train;
	e->n_ctx = e->n_ctx_asked < ENGINE_MAX_CTX ? e->n_ctx_asked : ENGINE_MAX_CTX;
	if (!e->cfg.n_ctx && e->n_ctx > ENGINE_DEFAULT_CTX)
		e->n_ctx = ENGINE_DEFAULT_CTX;
	if (kv_bytes(e->cfg.kv_type, hp->n_layer, 1, kv_dim) == 0) {
		plat_snprintf(err, errlen, "engine: kv-type %s cannot hold rows of %u values",
			      kv_type_name(e->cfg.kv_type), kv_dim);
		return -LLMK_ENOTSUP;
	}
	e->weight_bytes = e->g.extent - e->g.data_offset;
	/* model scratch, the sampler's candidates, mm_matmul's activation copy
	 * (grown on first use: at most a batch of the widest input, F32), and
	 * what tok_encode borrows per call (arena chunks of 1 MiB) */
	uint64_t widest = hp->n_ff > hp->n_embd ? hp->n_ff : hp->n_embd;
	if ((uint64_t)hp->n_head * hp->head_dim > widest)
		widest = (uint64_t)hp->n_head * hp->head_dim;
	e->scratch_bytes = model_scratch_bytes(hp, e->cfg.n_batch, threads(e)) +
			   sample_bytes(hp->n_vocab, 0) +
			   mm_scratch_bytes(widest, e->cfg.n_batch, (int)threads(e)) + TOK_RESERVE;
	if (!budget)
		budget = implicit_budget(e);
	e->plan_budget = budget;
	if (!budget) {
		e->streaming = e->cfg.weights == ENGINE_WEIGHTS_STREAM;
		if (e->streaming)
			return plan_stream(e, 0, per_pos, err, errlen);
		e->kv_bytes = kv_bytes(e->cfg.kv_type, hp->n_layer, e->n_ctx, kv_dim);
		return 0;
	}
	fixed = e->mem.used + e->weight_bytes + e->scratch_bytes +
		lookup_bytes(e, lookup_drafts(e->cfg.lookup, false, e->cfg.n_batch));
	e->streaming = e->cfg.weights == ENGINE_WEIGHTS_STREAM ||
		       (e->cfg.weights == ENGINE_WEIGHTS_AUTO && fixed + e->n_ctx * per_pos > budget);
	if (e->streaming)
		return plan_stream(e, budget, per_pos, err, errlen);
	if (fixed + (uint64_t)MIN_CTX * per_pos > budget) {
		plat_snprintf(err, errlen, PLAN_ERR " %s (weights %s) but %s %s",
			      sz(fixed + MIN_CTX * per_pos, a, sizeof a),
			      sz(e->weight_bytes, b, sizeof b), budget_what(e),
			      sz(budget, b + 16, 16));
		return -LLMK_EBUDGET;
	}
	room = (budget - fixed) / per_pos;
	if (room < e->n_ctx)
		e->n_ctx = (uint32_t)room;
	e->kv_bytes = kv_bytes(e->cfg.kv_type, hp->n_layer, e->n_ctx, kv_dim);
	return 0;
}

/*
 * With no mem-budget, a context asked for (config ctx, load -c) that free
 * memory cannot hold is refused, naming the most that fits, rather than
 * capped to all the free memory there is (issue 28: -c 16777216 of a 1 MB
 * model planned all of it as cache; docs/perf.md, "Remarks moved from the
 * code").
 * A mem-budget is the user's own cap: under one the context is capped.
 */
static int plan(struct engine *e, char *err, size_t errlen)
{
	char a[32], b[32];
	int r = plan_fit(e, err, errlen);

	if (r || !e->cfg.n_ctx || e->cfg.mem_budget || e->n_ctx >= e->n_ctx_asked)
		return r;
	plat_snprintf(err, errlen, "engine: context %u needs %s but free memory (no mem-budget) "
		      "is %s: at most %u positions fit", e->n_ctx_asked,
		      sz((uint64_t)e->n_ctx_asked * pos_bytes(e), a, sizeof a),
		      sz(e->plan_budget, b, sizeof b), e->n_ctx);
	return -LLMK_EBUDGET;
}

/* DRY's sequence breakers are tokens by their text (llama.cpp reads each
 * token's piece the same way, get_overlapping_token_sequences). */
void engine_mark_breakers(const struct engine *e, struct sampler *smp)
{
	char piece[256];

	for (uint32_t id = 0; id < e->model.hp.n_vocab; id++) {
		int n = tok_piece(&e->tok, (int32_t)id, TOK_PIECE_SPECIAL, piece, sizeof piece);
		if (n > 0)
			sample_dry_breaker(smp, id, piece, (size_t)n);
	}
}

static int load_model(struct engine *e, char *err, size_t errlen)
{
	const struct model_hparams *hp;
	struct model_hparams h;
	struct wt_ctx w;
	int r, ae = 0;

	if ((r = model_read_hparams(&h, &e->g, err, errlen)) ||
	    (r = model_check_layout(&h, &e->g, err, errlen)))
		return r;
	/* as llama.cpp: token_embd and output are {n_embd, n_vocab} with n_vocab
	 * the tokenizer's count; padding rows would be ids it cannot render */
	if (e->tok.n_vocab != h.n_vocab) {
		plat_snprintf(err, errlen, "engine: the tokenizer has %u tokens but "
			      "'token_embd.weight' has %u rows (they must be equal)",
			      e->tok.n_vocab, h.n_vocab);
		return -LLMK_EFORMAT;
	}
	e->model.hp = h;
	if ((r = plan(e, err, errlen)))
		return r;
	e->ctx_cap = NULL;
	if (e->n_ctx < e->n_ctx_asked)
		e->ctx_cap = e->n_ctx == ENGINE_MAX_CTX ? "at the ctx limit"
			     : !e->cfg.n_ctx && e->n_ctx == ENGINE_DEFAULT_CTX
				     ? "at the default 4096; config ctx N for more"
			     : e->cfg.mem_budget      ? "by mem-budget"
						      : "by free memory";
	if (e->streaming) {
		plat_disk_stream(e->disk, true); /* before the first read-ahead */
		struct stream_bind sb = {&e->meas, e->g.data_offset};
		r = wt_stream_open(&w, &e->g, &e->rd, e->disk, e->sealed ? &e->seal : NULL,
				   e->meas.on ? &sb : NULL, &e->mem,
				   h.n_layer, h.n_embd, e->n_slots, err, errlen);
	} else
		r = wt_resident_open(&w, &e->g, &e->rd, &e->mem, h.n_layer, h.n_embd,
				     e->cfg.no_pack ? 0 : (int)threads(e),
				     e->meas.on ? &e->meas : NULL, err, errlen);
	if (r)
		return r;
	if (!e->streaming) /* as read (streaming: the streamer completes it) */
		measure_complete(&e->meas);
	if ((r = model_check_rope_freqs(&h, &w, err, errlen))) {
		wt_close(&w);
		return r;
	}
	if ((r = model_init(&e->model, &h, &w, &e->mem))) {
		wt_close(&w);
		goto oom;
	}
	hp = &e->model.hp;
	if ((r = kv_init(&e->kv, &e->mem, e->cfg.kv_type, hp->n_layer, e->n_ctx,
			 hp->n_head_kv * hp->head_dim)) ||
	    (r = model_scratch_init(&e->s, hp, e->cfg.n_batch, threads(e), &e->mem)) ||
	    (r = sample_init(&e->smp, &e->mem, hp->n_vocab, e->n_ctx, &e->cfg.samp)) ||
	    (r = mm_init(&e->mm, &e->mem, (int)threads(e))))
		goto oom;
	engine_mark_breakers(e, &e->smp);
	e->text_cap = (size_t)e->n_ctx * TEXT_PER_TOKEN + 1024;
	e->chat_cap = e->text_cap;
	if (!(e->ctx_tok = take(e, (e->n_ctx + 1) * sizeof(int32_t), &ae)) ||
	    !(e->tok_buf = take(e, (e->n_ctx + 1) * sizeof(int32_t), &ae)) ||
	    !(e->text = take(e, e->text_cap, &ae)) || !(e->chat_buf = take(e, e->chat_cap, &ae)) ||
	    !(e->fmt_buf = take(e, e->chat_cap, &ae))) {
		r = ae;
		goto oom;
	}
	return 0;
oom:
	plat_snprintf(err, errlen, "engine: allocating the model's buffers (context %u): %s",
		      e->n_ctx, plat_strerror(r));
	return r;
}

static void pick_template(struct engine *e)
{
	const struct gguf_str *s;

	/* as llama.cpp: no template at all is chatml; one of the built-in
	 * formats is that format (as llama.cpp without --jinja); any other
	 * runs as itself in llm/jinja.c (as llama.cpp --jinja) */
	e->tmpl = CHAT_UNKNOWN;
	e->tmpl_src = NULL;
	e->tmpl_len = 0;
	e->tmpl_in_file = gguf_get_str(&e->g, "tokenizer.chat_template", &s) == 0;
	if (e->tmpl_in_file) {
		e->tmpl = chat_detect(s->s);
		e->tmpl_src = s->s;
		e->tmpl_len = (size_t)s->len;
		if (e->tmpl == CHAT_UNKNOWN)
			e->tmpl = CHAT_JINJA;
	}
	e->tmpl_detected = e->tmpl != CHAT_UNKNOWN;
	if (e->cfg.tmpl != CHAT_UNKNOWN) {
		e->tmpl = e->cfg.tmpl;
		e->tmpl_detected = false;
	} else if (!e->tmpl_in_file) {
		e->tmpl = CHAT_DEFAULT;
	}
}

/* Any allocation may meet the budget first: say so, whatever was allocating. */
static int budget_err(struct engine *e, int r, char *err, size_t errlen)
{
	char was[256], b[32];

	if (e->cfg.mem_budget && (r == -LLMK_EBUDGET || r == -LLMK_ENOMEM) &&
	    strncmp(err, PLAN_ERR, sizeof PLAN_ERR - 1) != 0) {
		plat_snprintf(was, sizeof was, "%s", err);
		plat_snprintf(err, errlen, "model does not fit mem-budget %s (%s)",
			      sz(e->cfg.mem_budget, b, sizeof b), was);
	}
	return r;
}

/* A sealed image's first failure explains a load error better than the
 * reader's caller can ("chunk 7 fails authentication ..."). */
static void seal_msg(struct engine *e, char *err, size_t errlen)
{
	if (e->sealed && seal_error(&e->seal)[0])
		plat_snprintf(err, errlen, "%s", seal_error(&e->seal));
	else if (!e->sealed && e->meas.tags.why[0]) /* a bound plain model's block that changed */
		plat_snprintf(err, errlen, "%s", e->meas.tags.why);
}

static int load_err(struct engine *e, int r, char *err, size_t errlen)
{
	seal_msg(e, err, errlen);
	if (e->sealed)
		seal_close(&e->seal);
	e->sealed = false;
	return budget_err(e, r, err, errlen);
}

/* A plain model's digest, complete (measure.h): to whoever asked. */
static void measured(void *ctx, const uint8_t digest[32])
{
	struct engine *e = ctx;
	struct engine_measurement m = {e->disk, false, e->g.extent, {0}};

	memcpy(m.digest, digest, 32);
	if (e->cfg.on_measured)
		e->cfg.on_measured(e->cfg.on_measured_ctx, &m);
}

int engine_load(struct engine *e, int disk, bool vocab_only, char *err, size_t errlen)
{
	uint64_t t0 = plat_time_ns();
	int r;

	engine_unload(e);
	llm_mem_init(&e->mem, e->cfg.mem_budget);
	llm_reader_disk(&e->rd, disk);
	r = seal_wrap(&e->seal, &e->rd, e->cfg.keysrc, &e->mem, err, errlen);
	if (r < 0)
		return budget_err(e, r, err, errlen);
	e->sealed = r == 1;
	if ((r = gguf_open(&e->g, &e->rd, &e->mem, err, errlen)))
		return load_err(e, r, err, errlen);
	/* a plain model is measured by the bytes it is computed with (measure.h) */
	measure_reset(&e->meas);
	if (!e->sealed && !vocab_only && (r = measure_header(&e->meas, &e->g, &e->rd, &e->mem, err,
							     errlen)))
		return load_err(e, r, err, errlen);
	if ((r = tok_init(&e->tok, &e->g, &e->mem, err, errlen))) {
		gguf_close(&e->g);
		return load_err(e, r, err, errlen);
	}
	e->disk = disk;
	e->vocab_only = vocab_only;
	e->loaded = true;
	if (!vocab_only && (r = load_model(e, err, errlen))) {
		seal_msg(e, err, errlen);
		engine_unload(e);
		return budget_err(e, r, err, errlen);
	}
	if (vocab_only) {
		const struct gguf_str *s;
		if (gguf_get_str(&e->g, "general.name", &s) == 0)
			plat_snprintf(e->model.hp.name, sizeof e->model.hp.name, "%s", s->s);
	}
	pick_template(e);
	e->run.load_ns = plat_time_ns() - t0;
	/* loaded: the measurement is reported from now on */
	if (!vocab_only && e->sealed && e->cfg.on_measured) {
		struct engine_measurement m = {disk, true, e->g.extent, {0}};
		memcpy(m.digest, e->seal.hdr.plain_sha256, 32);
		e->cfg.on_measured(e->cfg.on_measured_ctx, &m);
	} else if (!vocab_only) {
		measure_arm(&e->meas, measured, e);
	}
	return 0;
}

int engine_measure(struct engine *e, char *err, size_t errlen)
{
	int r;

	if (!e->loaded || !e->meas.on || e->meas.done)
		return 0;
	if ((r = wt_stream_measure_rest(&e->model.w))) {
		plat_snprintf(err, errlen, "measuring the rest of the model: %s", plat_strerror(r));
		seal_msg(e, err, errlen);
	}
	return r;
}

static void give(struct engine *e, void *p, size_t n)
{
	if (p)
		llm_mem_free(&e->mem, p, n);
}

void engine_unload(struct engine *e)
{
	struct engine_config cfg = e->cfg;
	struct llm_mem mem;

	if (e->loaded) {
		give(e, e->ctx_tok, (e->n_ctx + 1) * sizeof(int32_t));
		give(e, e->tok_buf, (e->n_ctx + 1) * sizeof(int32_t));
		give(e, e->text, e->text_cap);
		give(e, e->chat_buf, e->chat_cap);
		give(e, e->fmt_buf, e->chat_cap);
		if (e->mm.mem)
			mm_free(&e->mm);
		if (e->smp.cand)
			sample_free(&e->smp);
		if (e->s.base)
			model_scratch_free(&e->s, &e->mem);
		if (e->kv.k)
			kv_free(&e->kv);
		if (e->model.inv_freq)
			model_free(&e->model);
		tok_free(&e->tok);
		gguf_close(&e->g);
		if (e->streaming) /* the streamer is closed: no reads in flight */
			plat_disk_stream(e->disk, false);
	}
	if (e->sealed)
		seal_close(&e->seal);
	mem = e->mem;
	uint32_t epoch = e->epoch;
	memset(e, 0, sizeof *e);
	e->epoch = epoch + 1;
	e->cfg = cfg;
	e->mem = mem; /* kept so a caller can see nothing is left held (used == 0) */
	e->disk = -1;
}

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

static void emit(struct engine_gen *g, const char *s, size_t n)
{
	if (n && g->emit)
		g->emit(g->ctx, s, n);
}

/* Append a piece; true when a stop string ended the text (trimmed there). */
static bool add_text(struct engine *e, struct engine_gen *g, const char *piece, size_t n,
		     size_t *emitted)
{
	size_t hold;
	long at;

	if (e->text_len + n >= e->text_cap)
		n = e->text_cap - 1 - e->text_len;
	memcpy(e->text + e->text_len, piece, n);
	e->text_len += n;
	e->text[e->text_len] = 0;
	/* a stop can only start in the unemitted tail: text before it was
	 * emitted only once no stop could start there */
	at = engine_find_stop(g, e->text, e->text_len, *emitted);
	if (at >= 0) {
		e->text_len = (size_t)at;
		e->text[at] = 0;
		if (e->text_len > *emitted)
			emit(g, e->text + *emitted, e->text_len - *emitted);
		*emitted = e->text_len;
		return true;
	}
	hold = engine_held_back(g, e->text, e->text_len);
	if (e->text_len - hold > *emitted) {
		emit(g, e->text + *emitted, e->text_len - hold - *emitted);
		*emitted = e->text_len - hold;
	}
	return false;
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
		if (n > 0 && add_text(e, g, piece, (size_t)n, &emitted)) {
			e->run.stop = "stop";
			break;
		}
		if (gx) {
			uint64_t t = plat_time_ns();
			gram_gen_accept(gx, id);
			e->run.grammar_ns += plat_time_ns() - t;
			if (gram_done(gx->cur)) {
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
	if (e->text_len > emitted && strcmp(e->run.stop, "stop") != 0)
		emit(g, e->text + emitted, e->text_len - emitted);
	return r;
}

/* The logits rows for the run's drafts (e->run.lookup of them a pass), or
 * NULL with e->run.lookup_off saying why a run asked to draft goes without. */
static float *lookup_rows(struct engine *e, const struct engine_gen *g, size_t *bytes)
{
	uint32_t n = lookup_drafts(g->lookup, e->streaming, e->s.n_batch);
	float *rows;
	int err;

	if (!n) {
		if (lookup_drafts(g->lookup, e->streaming, 2))
			e->run.lookup_off = "a batch of 1 token";
		return NULL;
	}
	*bytes = (size_t)lookup_bytes(e, n);
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
		seal_msg(e, err, errlen);
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
		seal_msg(e, err, errlen);
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

	if (!text && !g->json_schema)
		return run_grammar(e, n, g, NULL, err, errlen);
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
