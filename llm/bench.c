/*
 * llm/bench.c — memory bandwidth, matmul kernel and model measurements
 * (bench.h).
 */
#include "bench.h"
#include "math.h"

struct bw_job {
	const uint64_t *buf;
	size_t words;
	int streams;          /* 1 or BW_STREAMS */
	int nta;              /* prefetch non-temporal (else into L2) */
	size_t ahead;         /* prefetch distance in bytes */
	uint64_t sink[64];   /* one slot per worker, 8 words apart (no false sharing) */
};

/* 16-byte vectors (GCC vector extension: SSE2 / NEON registers). */
typedef uint64_t bw_vec __attribute__((vector_size(16)));

/* Worker i sums its share as j->streams streams read side by side, one
 * 64-byte line of each per step in four independent chains of 16-byte
 * loads, so the loads, not the adds, set the pace; each step prefetches the
 * line j->ahead bytes ahead in each stream. The probe takes the better of
 * the two patterns decode reads with (llm/quant_isa.h, struct quant_tune), so
 * the figure is what the machine can read, not what a plain loop happens to
 * get: which pattern reads fastest depends on the CPU, and both beat the
 * hardware prefetcher alone (docs/perf.md, "Read probe"). */
#define BW_STREAMS 4
static inline void bw_prefetch(const struct bw_job *j, const bw_vec *q)
{
	if (j->nta)
		__builtin_prefetch((const char *)q + j->ahead, 0, 0);
	else
		__builtin_prefetch((const char *)q + j->ahead, 0, 2);
}

static void bw_task(void *arg, int i, int n)
{
	struct bw_job *j = arg;
	size_t lines = j->words / 8;
	size_t l0 = lines * (size_t)i / (size_t)n, l1 = lines * (size_t)(i + 1) / (size_t)n;
	size_t per = (l1 - l0) / (size_t)j->streams;
	const bw_vec *p = (const bw_vec *)j->buf;
	bw_vec s0 = {0, 0}, s1 = s0, s2 = s0, s3 = s0;

	for (size_t k = 0; k < per; k++)
		for (int s = 0; s < j->streams; s++) {
			const bw_vec *q = p + 4 * (l0 + (size_t)s * per + k);
			bw_prefetch(j, q);
			s0 += q[0];
			s1 += q[1];
			s2 += q[2];
			s3 += q[3];
		}
	/* the lines the streams leave over, read as one */
	for (size_t k = 4 * (l0 + (size_t)j->streams * per); k < 4 * l1; k += 4) {
		s0 += p[k];
		s1 += p[k + 1];
		s2 += p[k + 2];
		s3 += p[k + 3];
	}
	s0 += s1 + s2 + s3;
	j->sink[(i & 7) * 8] = s0[0] + s0[1];
}

int bench_mem_read_buf(void *buf, size_t bytes, int threads, uint64_t min_ns, double *gbs)
{
	struct bw_job j;
	uint64_t start, best = 0;

	j.buf = buf;
	j.words = (bytes & ~(size_t)4095) / 8;
	start = plat_time_ns();
	/* the two patterns in turn, 3 passes each at least */
	for (int pass = 0; pass < 6 || plat_time_ns() - start < min_ns; pass++) {
		uint64_t t0, dt;
		j.streams = pass & 1 ? 1 : BW_STREAMS;
		j.nta = pass & 1;
		j.ahead = pass & 1 ? 4096 : 2048;
		t0 = plat_time_ns();
		plat_parallel(bw_task, &j, threads);
		dt = plat_time_ns() - t0;
		if (!best || dt < best)
			best = dt;
	}
	*gbs = (double)(j.words * 8) / (double)(best ? best : 1);
	return 0;
}

void *bench_mem_buf(struct llm_mem *mem, size_t *bytes, int *err)
{
	uint64_t *buf = NULL;
	size_t n = plat_emulated() ? BENCH_PROBE_MIN : BENCH_PROBE_BYTES;

	for (; !buf && n >= BENCH_PROBE_MIN; n /= 2) {
		*err = 0;
		buf = llm_mem_alloc(mem, n, err);
		if (buf)
			*bytes = n;
	}
	/* touch every page so the first pass measures memory, not page faults */
	for (size_t k = 0; buf && k < *bytes / 8; k += 512)
		buf[k] = k;
	return buf;
}

int bench_mem_read(struct llm_mem *mem, int threads, uint64_t min_ns, double *gbs)
{
	int err = 0;
	size_t bytes = 0;
	void *buf = bench_mem_buf(mem, &bytes, &err);

	if (!buf)
		return err ? err : -LLMK_ENOMEM;
	bench_mem_read_buf(buf, bytes, threads, min_ns, gbs);
	llm_mem_free(mem, buf, bytes);
	return 0;
}

/* Seconds per call of mm_matmul, the best of repeated calls for min_ns. */
static int bench_time(struct mm_ctx *c, float *out, const void *w, uint32_t t, size_t M,
		      size_t K, const float *x, size_t B, uint64_t min_ns, double *sec)
{
	uint64_t start = plat_time_ns(), best = 0;
	int err;

	for (int rep = 0; rep < 2 || plat_time_ns() - start < min_ns; rep++) {
		uint64_t t0 = plat_time_ns(), dt;
		err = mm_matmul(c, out, w, t, M, K, x, B);
		if (err)
			return err;
		dt = plat_time_ns() - t0;
		if (!best || dt < best)
			best = dt;
	}
	*sec = (double)best * 1e-9;
	return 0;
}

#define BK_K 4096
#define BK_PP_M 512

int bench_kernel_run(struct mm_ctx *c, uint32_t type, size_t tg_bytes, uint32_t pp_batch,
		     uint64_t min_ns, struct bench_kernel *r)
{
	size_t row = (size_t)quant_row_bytes(type, BK_K), M, wbytes, xbytes, obytes;
	bool was_scalar = c->scalar;
	uint64_t seed = 7 + type;
	uint8_t *w = NULL;
	float *x = NULL, *o = NULL;
	int err = 0;

	const struct quant_type *q = quant_table_get(c->qt, type);

	if (!row || !q || !q->vec_dot || !pp_batch)
		return -LLMK_EINVAL;
	memset(r, 0, sizeof *r);
	r->type = type;
	r->impl = q->impl;
	r->pp_batch = pp_batch;
	M = tg_bytes / row < BK_PP_M ? BK_PP_M : tg_bytes / row;
	r->tg_bytes = M * row;
	wbytes = M * row;
	xbytes = (size_t)pp_batch * BK_K * sizeof(float);
	obytes = (size_t)pp_batch * (M > BK_PP_M ? M : BK_PP_M) * sizeof(float);
	w = llm_mem_alloc(c->mem, wbytes, &err);
	x = w ? llm_mem_alloc(c->mem, xbytes, &err) : NULL;
	o = x ? llm_mem_alloc(c->mem, obytes, &err) : NULL;
	if (!o)
		goto out;
	err = quant_fill_random(type, w, M * BK_K, 0.02f, &seed);
	if (!err)
		err = quant_fill_random(GGML_TYPE_F32, x, (size_t)pp_batch * BK_K, 1.0f, &seed);
	for (int s = 0; s < 2 && !err; s++) {
		double sec;
		/* the scalar rows are compute-bound: a sixteenth of the matrix
		 * (still past the caches) measures them in a sixteenth of the time */
		size_t m = s == 1 && M / 16 > BK_PP_M ? M / 16 : M;
		c->scalar = s == 1;
		err = bench_time(c, o, w, type, m, BK_K, x, 1, min_ns, &sec);
		if (err)
			break;
		r->tg_gbs[s] = (double)(m * row) / sec * 1e-9;
		err = bench_time(c, o, w, type, BK_PP_M, BK_K, x, pp_batch, min_ns, &sec);
		r->pp_gops[s] = 2.0 * BK_PP_M * BK_K * pp_batch / sec * 1e-9;
	}
	c->scalar = was_scalar;
out:
	if (o)
		llm_mem_free(c->mem, o, obytes);
	if (x)
		llm_mem_free(c->mem, x, xbytes);
	if (w)
		llm_mem_free(c->mem, w, wbytes);
	return err;
}

/* ---- the model benchmark ---- */

/* llama.cpp's general.file_type names (llama_ftype), for the quant column. */
static const char *bench_ftype(const struct engine *e)
{
	static const struct {
		uint32_t ft;
		const char *name;
	} names[] = {
		{0, "F32"}, {1, "F16"}, {2, "Q4_0"}, {3, "Q4_1"}, {7, "Q8_0"}, {8, "Q5_0"},
		{9, "Q5_1"}, {10, "Q2_K"}, {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"},
		{14, "Q4_K_S"}, {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"}, {18, "Q6_K"},
		{32, "BF16"},
	};
	const struct gguf_tensor *t = gguf_find_tensor(&e->g, "blk.0.ffn_gate.weight");
	uint32_t ft;

	if (gguf_get_u32(&e->g, "general.file_type", &ft) == 0)
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			if (names[i].ft == ft)
				return names[i].name;
	return t ? quant_name(t->type) : "?";
}

/* Weight bytes one generated token reads: every tensor but the embedding
 * table (one row of it), unless the head reuses it. */
static uint64_t bench_token_bytes(const struct engine *e)
{
	const struct gguf_tensor *emb = gguf_find_tensor(&e->g, "token_embd.weight");
	uint64_t bytes = 0;

	for (uint64_t i = 0; i < e->g.n_tensors; i++)
		bytes += e->g.tensors[i].size;
	if (emb && !e->model.hp.tied_output)
		bytes -= emb->size - emb->size / (emb->ne[1] ? emb->ne[1] : 1);
	return bytes;
}

/* Mean and sample standard deviation. */
static void bench_mean_sd(const double *v, uint32_t n, double *mean, double *sd)
{
	double m = 0, ss = 0;

	for (uint32_t i = 0; i < n; i++)
		m += v[i] / n;
	for (uint32_t i = 0; i < n; i++)
		ss += (v[i] - m) * (v[i] - m);
	*mean = m;
	*sd = n > 1 ? math_sqrtf((float)(ss / (n - 1))) : 0;
}

static double bench_median(const double *v, uint32_t n)
{
	double s[BENCH_MAX_REPS];

	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = i;
		for (; k > 0 && s[k - 1] > v[i]; k--)
			s[k] = s[k - 1];
		s[k] = v[i];
	}
	return n ? (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : 0;
}

/* A random token id (a 64-bit LCG's high bits), as llama-bench feeds. */
static int32_t bench_token(const struct engine *e, uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return (int32_t)((*seed >> 33) % e->model.hp.n_vocab);
}

/*
 * tg steps of nseq sequences decoding together: sequence i in cache rows
 * from i * (n_ctx / nseq), one random token each per step, every row's
 * logits computed (into lg, nseq x n_vocab): each step is one pass over the
 * weights for nseq tokens.
 */
static int bench_run_seqs(struct engine *e, uint32_t nseq, uint32_t tg, float *lg, uint64_t *seed,
			  uint64_t *ns)
{
	uint32_t base[BENCH_MAX_SEQS], pos[BENCH_MAX_SEQS];
	int32_t tok[BENCH_MAX_SEQS];
	uint64_t t0;
	int r = 0;

	for (uint32_t i = 0; i < nseq; i++)
		base[i] = i * (e->n_ctx / nseq);
	e->n_past = 0; /* the cache no longer holds a conversation */
	t0 = plat_time_ns();
	for (uint32_t k = 0; k < tg && !r; k++) {
		for (uint32_t i = 0; i < nseq; i++) {
			tok[i] = bench_token(e, seed);
			pos[i] = k;
		}
		r = model_forward_seqs(&e->model, &e->s, &e->mm, &e->kv, tok, base, pos, nseq, lg);
	}
	*ns = plat_time_ns() - t0;
	return r;
}

/* One timed run: pp > 0 evaluates pp tokens as prompt batches from position
 * d; else tg tokens one at a time from d (the cache's rows before d hold
 * bench_fill's tokens). */
static int bench_run(struct engine *e, uint32_t pp, uint32_t tg, uint32_t d, uint64_t *seed,
		     uint64_t *ns)
{
	uint32_t n = pp ? pp : tg;
	int32_t *tok = e->tok_buf;
	uint64_t t0;
	int r = 0;

	for (uint32_t i = 0; i < n; i++)
		tok[i] = bench_token(e, seed);
	e->n_past = 0; /* the cache no longer holds a conversation */
	t0 = plat_time_ns();
	if (pp)
		r = model_forward(&e->model, &e->s, &e->mm, &e->kv, tok, pp, d, true);
	for (uint32_t i = 0; !pp && i < tg && !r; i++)
		r = model_forward(&e->model, &e->s, &e->mm, &e->kv, &tok[i], 1, d + i, true);
	*ns = plat_time_ns() - t0;
	return r;
}

/* The depth: d random tokens into the cache (untimed), which the runs then
 * attend to, as llama-bench's -d. */
static int bench_fill(struct engine *e, uint32_t d, uint64_t *seed)
{
	int32_t *tok = e->tok_buf;

	if (!d)
		return 0;
	for (uint32_t i = 0; i < d; i++)
		tok[i] = bench_token(e, seed);
	e->n_past = 0;
	return model_forward(&e->model, &e->s, &e->mm, &e->kv, tok, d, 0, false);
}

/* The read-bandwidth probe before each decode repetition: the machine's
 * bandwidth drifts (other tenants), so each repetition is set against what
 * the memory gave just before it. */
struct bench_probe {
	void *buf;
	size_t bytes;
	int threads;
	uint64_t min_ns;
	double gbs[BENCH_MAX_REPS]; /* per repetition */
};

/* Warm-up, then the repetitions of one test; v[i] is repetition i's tok/s
 * (tokens of every sequence). */
static int bench_test(struct engine *e, const struct bench_model_opts *o, bool pp, float *lg,
		      struct bench_probe *pr, double *v)
{
	uint64_t seed = 1, ns;
	uint32_t n = pp ? o->pp : o->tg, nseq = pp ? 1 : o->batch;
	int r;

	if ((r = bench_fill(e, o->depth, &seed)))
		return r;
	/* warm-up run (page in the weights, wake the workers), not counted */
	r = nseq > 1 ? bench_run_seqs(e, nseq, 1, lg, &seed, &ns)
		     : bench_run(e, pp ? (n < 16 ? n : 16) : 0, pp ? 0 : 1, o->depth, &seed, &ns);
	if (r)
		return r;
	for (uint32_t i = 0; i < o->reps; i++) {
		if (o->cancel && o->cancel(o->ctx))
			return -LLMK_ECANCEL;
		if (pr)
			bench_mem_read_buf(pr->buf, pr->bytes, pr->threads, pr->min_ns, &pr->gbs[i]);
		r = nseq > 1 ? bench_run_seqs(e, nseq, n, lg, &seed, &ns)
			     : bench_run(e, pp ? n : 0, pp ? 0 : n, o->depth, &seed, &ns);
		if (r)
			return r;
		v[i] = (double)n * nseq * 1e9 / (double)(ns ? ns : 1);
	}
	return 0;
}

static int bench_check(const struct engine *e, const struct bench_model_opts *o, char *err,
		       size_t errlen)
{
	if (!e->loaded || e->vocab_only) {
		plat_snprintf(err, errlen, "no model loaded");
		return -LLMK_EINVAL;
	}
	if (o->reps < 1 || o->reps > BENCH_MAX_REPS || o->batch < 1 || o->threads < 1 ||
	    (o->depth && o->batch > 1)) {
		plat_snprintf(err, errlen, "bad options (reps %u, batch %u, threads %d, depth %u)",
			      o->reps, o->batch, o->threads, o->depth);
		return -LLMK_EINVAL;
	}
	if ((uint64_t)o->depth + o->pp > e->n_ctx || (uint64_t)o->depth + o->tg > e->n_ctx ||
	    o->batch > e->s.n_batch || o->batch > BENCH_MAX_SEQS ||
	    (o->batch > 1 && o->tg > e->n_ctx / o->batch)) {
		plat_snprintf(err, errlen, "%u + %u / %u tokens in %u sequences do not fit the "
			      "context (%u) or the batch (%u)", o->depth, o->pp, o->tg, o->batch,
			      e->n_ctx, e->s.n_batch);
		return -LLMK_ERANGE;
	}
	return 0;
}

int bench_model_run(struct engine *e, const struct bench_model_opts *o, struct bench_model *r,
		    char *err, size_t errlen)
{
	struct llm_mem bwmem;
	struct bench_probe *pr = NULL;
	double ppv[BENCH_MAX_REPS], tgv[BENCH_MAX_REPS];
	float *lg = NULL;
	size_t lg_bytes = 0;
	struct engine_threads threads;
	int rc;

	memset(r, 0, sizeof *r);
	if ((rc = bench_check(e, o, err, errlen)))
		return rc;
	r->name = e->model.hp.name[0] ? e->model.hp.name : e->model.hp.arch_name;
	r->quant = bench_ftype(e);
	r->kernels = quant_get(GGML_TYPE_Q8_0)->impl;
	r->size = e->weight_bytes;
	r->n_params = e->model.hp.n_params;
	r->token_bytes = bench_token_bytes(e);
	if (o->batch > 1 && o->tg) {
		int ae = 0;
		lg_bytes = (size_t)o->batch * e->model.hp.n_vocab * sizeof(float);
		lg = llm_mem_alloc(&e->mem, lg_bytes, &ae);
		if (!lg) {
			plat_snprintf(err, errlen, "no memory for the logits of %u sequences "
				      "(%llu bytes)", o->batch, (unsigned long long)lg_bytes);
			return ae ? ae : -LLMK_ENOMEM;
		}
	}
	threads = engine_threads_set(e, o->threads);
	llm_mem_init(&bwmem, 0);
	rc = 0;
	if ((pr = llm_mem_alloc(&bwmem, sizeof *pr, &rc))) {
		pr->threads = o->threads;
		pr->min_ns = plat_emulated() ? 0 : 100000000ull;
		if (!(pr->buf = bench_mem_buf(&bwmem, &pr->bytes, &rc)))
			rc = rc ? rc : -LLMK_ENOMEM;
	}
	if (!rc && o->pp)
		rc = bench_test(e, o, true, NULL, NULL, ppv);
	if (!rc && o->tg)
		rc = bench_test(e, o, false, lg, pr, tgv);
	if (!rc && !o->tg) /* the bandwidth alone */
		bench_mem_read_buf(pr->buf, pr->bytes, pr->threads, pr->min_ns, &pr->gbs[0]);
	if (pr && pr->buf) {
		uint32_t reps = o->tg ? o->reps : 1;
		double f[BENCH_MAX_REPS];
		r->mem_gbs = bench_median(pr->gbs, reps);
		for (uint32_t i = 0; o->tg && i < reps; i++) {
			/* this repetition's effective GB/s over the probe before it */
			f[i] = (double)r->token_bytes * tgv[i] / (double)o->batch * 1e-9 / pr->gbs[i];
			r->frac_lo = i == 0 || f[i] < r->frac_lo ? f[i] : r->frac_lo;
			r->frac_hi = i == 0 || f[i] > r->frac_hi ? f[i] : r->frac_hi;
		}
		r->frac = o->tg ? bench_median(f, reps) : 0;
		r->probe_mib = pr->bytes >> 20;
		llm_mem_free(&bwmem, pr->buf, pr->bytes);
	}
	if (pr)
		llm_mem_free(&bwmem, pr, sizeof *pr);
	if (lg)
		llm_mem_free(&e->mem, lg, lg_bytes);
	engine_threads_restore(e, threads);
	e->n_past = 0;
	if (rc) {
		plat_snprintf(err, errlen, "%s", plat_strerror(rc));
		return rc;
	}
	if (o->pp)
		bench_mean_sd(ppv, o->reps, &r->pp_mean, &r->pp_sd);
	if (o->tg)
		bench_mean_sd(tgv, o->reps, &r->tg_mean, &r->tg_sd);
	/* a pass over the weights per step, for every sequence in it */
	r->eff_gbs = (double)r->token_bytes * r->tg_mean / (double)o->batch * 1e-9;
	return 0;
}
