/*
 * llm/engine_load.c — the engine's lifecycle (engine.h): defaults, loading a
 * model (plain or sealed, measured as it is read), the memory plan (resident
 * or streamed, the context that fits), unloading. Running it is engine.c's.
 */
#include "engine_int.h"

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
uint32_t engine_lookup_drafts(int asked, bool streaming, uint32_t batch)
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
uint64_t engine_lookup_bytes(const struct engine *e, uint32_t n)
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
	       engine_lookup_bytes(e, engine_lookup_drafts(e->cfg.lookup, true, e->cfg.n_batch));
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
		engine_lookup_bytes(e, engine_lookup_drafts(e->cfg.lookup, false, e->cfg.n_batch));
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
void engine_seal_msg(struct engine *e, char *err, size_t errlen)
{
	if (e->sealed && seal_error(&e->seal)[0])
		plat_snprintf(err, errlen, "%s", seal_error(&e->seal));
	else if (!e->sealed && e->meas.tags.why[0]) /* a bound plain model's block that changed */
		plat_snprintf(err, errlen, "%s", e->meas.tags.why);
}

static int load_err(struct engine *e, int r, char *err, size_t errlen)
{
	engine_seal_msg(e, err, errlen);
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
		engine_seal_msg(e, err, errlen);
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
		engine_seal_msg(e, err, errlen);
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
