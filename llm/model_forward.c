/*
 * llm/model_forward.c — the forward pass of every row of model_archs[]
 * (model.h).
 *
 * The forward pass is llama2.c's forward() for a batch of tokens: embed,
 * then per layer RMSNorm -> Q/K/V -> RoPE -> cache -> causal attention ->
 * output projection -> residual -> RMSNorm -> SwiGLU FFN -> residual; then
 * the final norm and the output head. Weight products go through mm_matmul
 * (prefill multiplies a whole batch, decode one row); everything else is the
 * scalar math below, in llm/math.h functions only.
 *
 * `profile on` timing sits at the steps' boundaries (acquire, matmul,
 * per_token, attention, activation, embed, head): each charges its own
 * stage, so layer_forward says only what the layer computes.
 */
#include "model.h"
#include "math.h"
#include "vmath.h"

/* ---- profile ---- */
static uint64_t prof_start(const struct model *m)
{
	return m->prof.on ? plat_time_ns() : 0;
}

/* Charge the time since t0 (prof_start) to stage st. */
static void prof_charge(struct model *m, enum model_stage st, uint64_t t0)
{
	if (m->prof.on)
		m->prof.ns[st] += plat_time_ns() - t0;
}

/* ---- the math ---- */
/* The sum of squares in 8 running sums (element i into sum i % 8, then
 * summed pairwise): one chain of n adds was the norm's whole cost, and 8
 * chains go 8 at a time (a vector of 8 lanes where the target has one). The
 * order is fixed, so every build and thread count gives the same bits. */
static void rmsnorm(float *o, const float *x, const float *w, uint32_t n, float eps)
{
	typedef float f4 __attribute__((vector_size(16)));
	f4 a = {0}, b = {0}, u, v;
	float p[8], ss;
	uint32_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&u, x + i, sizeof u);
		memcpy(&v, x + i + 4, sizeof v);
		a = a + u * u;
		b = b + v * v;
	}
	memcpy(p, &a, sizeof a);
	memcpy(p + 4, &b, sizeof b);
	for (; i < n; i++)
		p[i % 8] += x[i] * x[i];
	ss = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
	ss = 1.0f / math_sqrtf(ss / (float)n + eps);
	for (uint32_t i = 0; i < n; i++)
		o[i] = x[i] * ss * w[i];
}

/* One row normalised as the architecture does (model_arch.norm). */
static void norm_row(const struct model_hparams *hp, float *o, const float *x, const float *w)
{
	switch (hp->arch->norm) {
	case MODEL_NORM_RMS:
		rmsnorm(o, x, w, hp->n_embd, hp->norm_eps);
		break;
	}
}

/* Each of n_heads heads of x RMS-normed on its own with the head_dim gains
 * w (qwen3's Q/K norms: llama.cpp llm_build_qwen3, build_norm on the
 * [head_dim, n_head] view, the model's rms epsilon); olmo2's the whole row
 * at once, n_heads x head_dim gains (build_norm before the reshape). */
static void qk_norms(const struct model_hparams *hp, float *x, uint32_t n_heads,
		     const float *w)
{
	if (hp->arch->qk_norm_whole) {
		rmsnorm(x, x, w, n_heads * hp->head_dim, hp->norm_eps);
		return;
	}
	for (uint32_t h = 0; h < n_heads; h++) {
		float *v = x + (size_t)h * hp->head_dim;
		rmsnorm(v, v, w, hp->head_dim, hp->norm_eps);
	}
}

/* Rotate the first rope_dim elements of each of n_heads heads of x by the
 * angles whose cosines and sines are cs[2 i], cs[2 i + 1]. */
static void rope(const struct model *m, float *x, uint32_t n_heads, const float *cs)
{
	const struct model_hparams *hp = &m->hp;
	uint32_t half = hp->rope_dim / 2;

	for (uint32_t i = 0; i < half; i++) {
		float c = cs[2 * i], s = cs[2 * i + 1];
		/* NORM: adjacent pairs (2i, 2i+1); NeoX: (i, i + d/2) */
		bool neox = hp->arch->rope == MODEL_ROPE_NEOX;
		uint32_t a = neox ? i : 2 * i;
		uint32_t b = neox ? i + half : 2 * i + 1;
		for (uint32_t h = 0; h < n_heads; h++) {
			float *v = x + (size_t)h * hp->head_dim;
			float x0 = v[a], x1 = v[b];
			v[a] = x0 * c - x1 * s;
			v[b] = x0 * s + x1 * c;
		}
	}
}

/*
 * The per-token steps of a batch, cut between the workers by token (each
 * token's result is computed whole by one worker, so it does not depend on
 * the thread count): TOK_POST_ATTN / TOK_POST_FFN xb = post_norm(xb)
 * (gemma2/3, before the add); TOK_ADD x += xb; TOK_NORM xb = attn_norm(x) and
 * TOK_FFN_NORM xb = ffn_norm(x); TOK_ROPE_KV the Q/K head norms (qwen3),
 * RoPE on q and k (the angles once per token for both) and the KV store.
 */
enum { TOK_ADD = 1, TOK_NORM = 2, TOK_FFN_NORM = 4, TOK_ROPE_KV = 8, TOK_POST_ATTN = 16,
       TOK_POST_FFN = 32 };

/*
 * Where the tokens of a batch are: one sequence's consecutive positions
 * pos, pos + 1, .. (base and tpos NULL), or one token per sequence (several
 * sequences decoding together): token b at position tpos[b] of its
 * sequence, whose cache rows start at base[b]. RoPE takes the position in
 * the sequence; the KV row and the attended range [base, base + position]
 * are in the cache.
 */
struct bpos {
	uint32_t pos;
	const uint32_t *base, *tpos;
};

static inline uint32_t bp_pos(const struct bpos *p, uint32_t b)
{
	return p->tpos ? p->tpos[b] : p->pos + b;
}

static inline uint32_t bp_lo(const struct bpos *p, uint32_t b)
{
	return p->base ? p->base[b] : 0;
}

static inline uint32_t bp_row(const struct bpos *p, uint32_t b)
{
	return bp_lo(p, b) + bp_pos(p, b);
}

struct tok_job {
	const struct model *m;
	struct model_scratch *s;
	struct kv_cache *kv;
	const struct wt_layer *w;
	uint32_t l, B;
	const struct bpos *bp;
	int what;
};

static void tok_task(void *arg, int wi, int nw)
{
	const struct tok_job *j = arg;
	const struct model_hparams *hp = &j->m->hp;
	struct model_scratch *s = j->s;
	uint32_t E = hp->n_embd, Q = hp->n_head * hp->head_dim, KV = hp->n_head_kv * hp->head_dim;
	uint32_t b0 = (uint32_t)((uint64_t)j->B * (uint32_t)wi / (uint32_t)nw);
	uint32_t b1 = (uint32_t)((uint64_t)j->B * (uint32_t)(wi + 1) / (uint32_t)nw);
	float cs[MODEL_MAX_ROPE_DIM];

	for (uint32_t b = b0; b < b1; b++) {
		float *x = s->x + (size_t)b * E, *xb = s->xb + (size_t)b * E;
		/* gemma2/3: the block's output normed before it is added */
		if (j->what & TOK_POST_ATTN && j->w->attn_post_norm)
			norm_row(hp, xb, xb, j->w->attn_post_norm);
		if (j->what & TOK_POST_FFN && j->w->ffn_post_norm)
			norm_row(hp, xb, xb, j->w->ffn_post_norm);
		if (j->what & TOK_ADD && hp->res_mul == 1.0f)
			for (uint32_t i = 0; i < E; i++)
				x[i] += xb[i];
		else if (j->what & TOK_ADD) /* granite: the block's output scaled */
			for (uint32_t i = 0; i < E; i++)
				x[i] += xb[i] * hp->res_mul;
		/* olmo2 has no norm before its blocks: they read x as it is */
		if (j->what & TOK_NORM && j->w->attn_norm)
			norm_row(hp, xb, x, j->w->attn_norm);
		if (j->what & TOK_FFN_NORM && j->w->ffn_norm)
			norm_row(hp, xb, x, j->w->ffn_norm);
		if (j->what & (TOK_NORM | TOK_FFN_NORM) && !j->w->attn_norm)
			memcpy(xb, x, E * sizeof *xb);
		if (j->what & TOK_ROPE_KV) {
			uint32_t p = bp_pos(j->bp, b);
			bool swa = model_layer_swa(hp, j->l);
			/* LongRoPE's long factors where the cache reaches past the
			 * original context (llama.cpp: n_ctx_seq > n_ctx_orig_yarn) */
			const float *inv_freq = swa ? j->m->inv_freq_swa
				: j->kv->n_ctx > hp->yarn_orig_ctx ? j->m->inv_freq_long : j->m->inv_freq;
			float mscale = swa && hp->arch->swa_rope_base != 0.0f ? 1.0f : hp->rope_mscale;
			if (j->w->q_norm) /* both: model_check_layout */
				qk_norms(hp, s->q + (size_t)b * Q, hp->n_head, j->w->q_norm);
			if (j->w->k_norm)
				qk_norms(hp, s->k + (size_t)b * KV, hp->n_head_kv, j->w->k_norm);
			for (uint32_t i = 0; i < hp->rope_dim / 2; i++) {
				float th = (float)p * inv_freq[i];
				cs[2 * i] = math_cosf(th) * mscale;
				cs[2 * i + 1] = math_sinf(th) * mscale;
			}
			/* smollm3's NoPE layers: no rotation at all */
			if (!hp->arch->nope_every || (j->l + 1) % hp->arch->nope_every) {
				rope(j->m, s->q + (size_t)b * Q, hp->n_head, cs);
				rope(j->m, s->k + (size_t)b * KV, hp->n_head_kv, cs);
			}
			kv_store(j->kv, j->l, bp_row(j->bp, b), s->k + (size_t)b * KV,
				 s->v + (size_t)b * KV);
		}
	}
}

static void per_token(struct model *m, struct model_scratch *s, struct kv_cache *kv,
		      uint32_t l, uint32_t B, const struct bpos *bp, int what, const struct wt_layer *w)
{
	struct tok_job j = {m, s, kv, w, l, B, bp, what};
	uint32_t nw = s->n_workers < B ? s->n_workers : B;
	uint64_t t0 = prof_start(m);

	/* waking the pool costs more than a few tokens' worth */
	if (nw > 1 && B >= 8)
		plat_parallel(tok_task, &j, (int)nw);
	else
		tok_task(&j, 0, 1);
	prof_charge(m, what & TOK_ROPE_KV ? MS_ROPE_KV : MS_NORM, t0);
}

/* h = silu(h) * h2 over n values, cut between the workers (a prompt batch
 * has n = B x n_ff: the exp of each is worth spreading). */
struct swiglu_job {
	const struct vmath_ops *vm;
	float *h;
	const float *h2;
	size_t n;
};

static void swiglu_task(void *arg, int i, int nw)
{
	struct swiglu_job *j = arg;
	size_t a = j->n * (size_t)i / (size_t)nw, b = j->n * (size_t)(i + 1) / (size_t)nw;

	j->vm->swiglu(j->h + a, j->h2 + a, b - a);
}

static void swiglu(struct model_scratch *s, float *h, const float *h2, size_t n)
{
	struct swiglu_job j = {s->vm, h, h2, n};

	if (s->n_workers > 1 && n >= 16384)
		plat_parallel(swiglu_task, &j, (int)s->n_workers);
	else
		swiglu_task(&j, 0, 1);
}

/* h = gelu(h) * h2, GELU in its tanh approximation (Hendrycks & Gimpel
 * 2016; ggml_gelu's constants): gemma's GeGLU. */
static void geglu(float *h, const float *h2, size_t n)
{
	const float c = 0.79788456080286535588f, a = 0.044715f; /* sqrt(2 / pi) */

	for (size_t i = 0; i < n; i++) {
		float x = h[i];
		h[i] = 0.5f * x * (1.0f + math_tanhf(c * x * (1.0f + a * x * x))) * h2[i];
	}
}

_Static_assert(MODEL_ATT_TILE == VM_ATT_LD, "an attention tile is a row of the transposed K");

/*
 * Causal attention for a batch: token b (position pos + b) attends to cache
 * positions 0..pos+b. Work is split by KV head (a GQA group of query heads
 * shares one K/V slice), so a worker reads each cache position's slice once
 * per layer, a tile of MODEL_ATT_TILE positions at a time, and runs every
 * query of the batch over the tile. Softmax is online (Milakov & Gimelshein
 * 2018): per (token, head) a running maximum, a running sum, and the output
 * accumulator rescaled when the maximum moves.
 */
struct att_job {
	const struct model *m;
	struct model_scratch *s;
	const struct kv_cache *kv;
	uint32_t l, B;
	const struct bpos *bp;
	uint32_t win; /* a sliding layer's window (0: none) */
};

/* The first cache row token b attends to: its sequence's first, or in a
 * sliding layer the first of the last win positions (llama.cpp
 * LLAMA_SWA_TYPE_STANDARD masks p0 when p1 - p0 >= n_swa). */
static inline uint32_t att_lo(const struct att_job *j, uint32_t b)
{
	uint32_t lo = bp_lo(j->bp, b), row = bp_row(j->bp, b);

	return j->win && row - lo >= j->win ? row - (j->win - 1) : lo;
}

/* m heads' scores of nt positions soft-capped, and their maxima with them
 * (tanh keeps the order). */
static void softcap(float (*sc)[MODEL_ATT_TILE], float *tmax, uint32_t m, uint32_t nt, float cap)
{
	for (uint32_t h = 0; h < m; h++) {
		for (uint32_t t = 0; t < nt; t++)
			sc[h][t] = math_tanhf(sc[h][t] * (1.0f / cap)) * cap;
		tmax[h] = math_tanhf(tmax[h] * (1.0f / cap)) * cap;
	}
}

static void att_tile(const struct att_job *j, uint32_t g, uint32_t t0, uint32_t nt,
		     const float *kT, const float *vt)
{
	const struct model_hparams *hp = &j->m->hp;
	const struct vmath_ops *vm = j->s->vm;
	uint32_t hd = hp->head_dim, group = hp->n_head / hp->n_head_kv, Q = hp->n_head * hd;
	float scale = hp->att_scale; /* 1 / sqrt(head_dim) but for granite */
	struct model_scratch *s = j->s;

	for (uint32_t b = 0; b < j->B; b++) {
		/* the token attends to cache rows lo..p: tile positions ts..tend-1 */
		uint32_t p = bp_row(j->bp, b), lo = att_lo(j, b), ts, tend;
		if (p < t0 || lo >= t0 + nt)
			continue;
		ts = lo > t0 ? lo - t0 : 0;
		tend = p - t0 + 1 < nt ? p - t0 + 1 : nt;
		/* the group's heads VM_ATT_HEADS at a time: the scores and the
		 * accumulation of each run side by side (vmath.h), the softmax
		 * steps of each head as they were, in the same order */
		for (uint32_t h0 = g * group; h0 < (g + 1) * group; h0 += VM_ATT_HEADS) {
			uint32_t m = (g + 1) * group - h0 < VM_ATT_HEADS ? (g + 1) * group - h0
									  : VM_ATT_HEADS;
			uint32_t nt_b = tend - ts;
			float *o = s->att + (size_t)b * Q + (size_t)h0 * hd;
			float sc[VM_ATT_HEADS][MODEL_ATT_TILE], w[VM_ATT_HEADS][MODEL_ATT_TILE];
			float sum[VM_ATT_HEADS], tmax[VM_ATT_HEADS];
			vm->att_scores(sc[0], MODEL_ATT_TILE, tmax,
				       s->q + (size_t)b * Q + (size_t)h0 * hd, hd, m, kT + ts, nt_b,
				       hd, scale);
			if (hp->attn_cap != 0.0f) /* gemma2: cap tanh(score / cap) */
				softcap(sc, tmax, m, nt_b, hp->attn_cap);
			for (uint32_t h = 0; h < m; h++) {
				float *mx = &s->amax[b * hp->n_head + h0 + h];
				sum[h] = s->asum[b * hp->n_head + h0 + h];
				/* one rescale if the tile's maximum is new */
				if (tmax[h] > *mx) {
					float r = math_expf(*mx - tmax[h]);
					sum[h] *= r;
					for (uint32_t i = 0; i < hd; i++)
						o[h * hd + i] *= r;
					*mx = tmax[h];
				}
				for (uint32_t t = 0; t < nt_b; t++)
					sc[h][t] -= *mx;
				vm->expf_n(w[h], sc[h], nt_b);
			}
			/* each head's sum in t order, the heads' chains side by side
			 * (all 8 in registers for the common full run) */
			if (m == VM_ATT_HEADS)
				for (uint32_t t = 0; t < nt_b; t++)
					_Pragma("GCC unroll 8") for (uint32_t h = 0; h < VM_ATT_HEADS; h++)
						sum[h] += w[h][t];
			else
				for (uint32_t t = 0; t < nt_b; t++)
					for (uint32_t h = 0; h < m; h++)
						sum[h] += w[h][t];
			for (uint32_t h = 0; h < m; h++)
				s->asum[b * hp->n_head + h0 + h] = sum[h];
			vm->att_accum(o, hd, vt + (size_t)ts * hd, w[0], MODEL_ATT_TILE, m, nt_b, hd);
		}
	}
}

/* How many positions ahead att_group asks for K and V rows, a position at
 * a time as it loads one (a whole tile's rows asked for at once went past
 * what the core keeps in flight: docs/perf.md, "AVX2 decode steps") */
#define MODEL_ATT_PF 4
static void att_group(const struct att_job *j, uint32_t g, float *kt, float *vt, float *kT)
{
	const struct model_hparams *hp = &j->m->hp;
	uint32_t hd = hp->head_dim, group = hp->n_head / hp->n_head_kv, Q = hp->n_head * hd;
	uint32_t lo = UINT32_MAX, end = 0; /* the rows any token attends to */
	struct model_scratch *s = j->s;

	for (uint32_t b = 0; b < j->B; b++) {
		uint32_t a = att_lo(j, b), z = bp_row(j->bp, b) + 1;
		lo = a < lo ? a : lo;
		end = z > end ? z : end;
	}

	for (uint32_t b = 0; b < j->B; b++) {
		for (uint32_t h = g * group; h < (g + 1) * group; h++) {
			s->amax[b * hp->n_head + h] = -1e30f;
			s->asum[b * hp->n_head + h] = 0.0f;
		}
		memset(s->att + (size_t)b * Q + (size_t)g * group * hd, 0,
		       (size_t)group * hd * sizeof(float));
	}
	for (uint32_t t0 = lo / MODEL_ATT_TILE * MODEL_ATT_TILE; t0 < end; t0 += MODEL_ATT_TILE) {
		uint32_t nt = end - t0 < MODEL_ATT_TILE ? end - t0 : MODEL_ATT_TILE;
		bool used = j->bp->base == NULL;
		for (uint32_t b = 0; !used && b < j->B; b++)
			used = att_lo(j, b) < t0 + nt && bp_row(j->bp, b) >= t0;
		if (!used) /* between the sequences of a multi-sequence batch */
			continue;
		if (t0 == lo / MODEL_ATT_TILE * MODEL_ATT_TILE)
			kv_prefetch_parts(j->kv, j->l, t0, nt < MODEL_ATT_PF ? nt : MODEL_ATT_PF,
					  g * hd, hd);
		for (uint32_t t = 0; t < nt; t++) {
			/* the rows MODEL_ATT_PF positions on, a position at a time */
			if (t0 + t + MODEL_ATT_PF < end)
				kv_prefetch_parts(j->kv, j->l, t0 + t + MODEL_ATT_PF, 1, g * hd, hd);
			kv_load_k_part(j->kv, j->l, t0 + t, g * hd, hd, kt + (size_t)t * hd);
			kv_load_v_part(j->kv, j->l, t0 + t, g * hd, hd, vt + (size_t)t * hd);
		}
		/* K transposed: the scores of 16 positions are then 16 lanes */
		s->vm->att_transpose(kT, kt, nt, hd);
		att_tile(j, g, t0, nt, kT, vt);
	}
	for (uint32_t b = 0; b < j->B; b++)
		for (uint32_t h = g * group; h < (g + 1) * group; h++) {
			float *o = s->att + (size_t)b * Q + (size_t)h * hd;
			float inv = 1.0f / s->asum[b * hp->n_head + h];
			for (uint32_t i = 0; i < hd; i++)
				o[i] *= inv;
		}
}

static void att_worker(void *arg, int wi, int nw)
{
	const struct att_job *j = arg;
	size_t tile = (size_t)MODEL_ATT_TILE * j->m->hp.head_dim;
	float *kt = j->s->tiles + (size_t)wi * 3 * tile;

	for (uint32_t g = (uint32_t)wi; g < j->m->hp.n_head_kv; g += (uint32_t)nw)
		att_group(j, g, kt, kt + tile, kt + 2 * tile);
}

static void attention(struct model *m, struct model_scratch *s, const struct kv_cache *kv,
		      uint32_t l, uint32_t B, const struct bpos *bp)
{
	struct att_job j = {m, s, kv, l, B, bp, model_layer_swa(&m->hp, l) ? m->hp.n_swa : 0};
	uint32_t nw = s->n_workers < m->hp.n_head_kv ? s->n_workers : m->hp.n_head_kv;
	uint64_t t0 = prof_start(m);

	/* waking the pool costs more than a small attention (short contexts) */
	uint64_t work = (uint64_t)B * (bp_pos(bp, B - 1) + 1) * m->hp.n_head * m->hp.head_dim;
	if (nw <= 1 || work < (1u << 16))
		att_worker(&j, 0, 1);
	else
		plat_parallel(att_worker, &j, (int)nw);
	prof_charge(m, MS_ATTN, t0);
}

static int matmul(struct mm_ctx *mm, float *out, const struct wt_mat *w, const float *x,
		  uint32_t B)
{
	if (w->packed)
		return mm_matmul_packed(mm, out, w->data, w->type, (size_t)w->rows,
					(size_t)w->cols, x, B);
	return mm_matmul(mm, out, w->data, w->type, (size_t)w->rows, (size_t)w->cols, x, B);
}

/* The weights the product after the next will read (mm_prefetch_next). */
static void prefetch_next(struct mm_ctx *mm, const struct wt_mat *w)
{
	mm_prefetch_next(mm, w->data, (size_t)w->rows * quant_row_bytes(w->type, w->cols));
}

/* The same for layer l's first product (n_layer: the head), where the
 * weights say where it is before the layer is acquired (wt_peek). */
static void prefetch_peek(struct model *m, struct mm_ctx *mm, uint32_t l)
{
	size_t nb = 0;
	const void *p = wt_peek(&m->w, l, &nb);

	if (p)
		mm_prefetch_next(mm, p, nb);
}

/* n products of one input: one mm_matmul_n call where the matrices share
 * type, layout and width (and so the path), else one call each. */
static int matmul_n(struct mm_ctx *mm, int n, float *const out[],
		    const struct wt_mat *const w[], const float *x, uint32_t B)
{
	const void *data[MM_MAX_PARTS];
	size_t rows[MM_MAX_PARTS];
	int p, e;

	for (p = 0; p < n; p++) {
		if (w[p]->type != w[0]->type || w[p]->packed != w[0]->packed ||
		    w[p]->cols != w[0]->cols ||
		    quant_table_can_pack(mm->qt, w[p]->type, w[p]->rows, w[p]->cols) !=
			    quant_table_can_pack(mm->qt, w[0]->type, w[0]->rows, w[0]->cols))
			break;
		data[p] = w[p]->data;
		rows[p] = (size_t)w[p]->rows;
	}
	if (p == n)
		return mm_matmul_n(mm, n, out, data, rows, w[0]->type, w[0]->packed,
				   (size_t)w[0]->cols, x, B);
	for (p = 0; p < n; p++)
		if ((e = matmul(mm, out[p], w[p], x, B)))
			return e;
	return 0;
}

static void add_bias(float *x, const float *b, uint32_t n, uint32_t B)
{
	for (uint32_t r = 0; r < B; r++)
		for (uint32_t i = 0; i < n; i++)
			x[(size_t)r * n + i] += b[i];
}

/* Rows [r0, r0 + n) of a as a matrix of their own (a packed matrix only
 * at whole groups of 16 rows, which keep their bytes: quant_isa.h). */
static int rows_of(struct wt_mat *out, const struct wt_mat *a, uint64_t r0, uint64_t n)
{
	if (a->packed && (r0 % QUANT_TILE_ROWS || n % QUANT_TILE_ROWS))
		return -LLMK_ENOTSUP;
	*out = *a;
	out->data = (const uint8_t *)a->data + r0 * quant_row_bytes(a->type, a->cols);
	out->rows = n;
	return 0;
}

/* phi3's fused matrices as the separate ones: attn_qkv's rows are Q, K, V
 * in turn; ffn_up's the gate's, then the up's (llama.cpp LLM_FFN_SWIGLU on
 * the whole: silu of the first half times the second). */
static int split_fused(const struct model_hparams *hp, struct wt_layer *w)
{
	uint64_t Q = (uint64_t)hp->n_head * hp->head_dim;
	uint64_t KV = (uint64_t)hp->n_head_kv * hp->head_dim, F = hp->n_ff;
	struct wt_mat up = w->w_up;
	int e;

	if ((e = rows_of(&w->wq, &w->wqkv, 0, Q)) || (e = rows_of(&w->wk, &w->wqkv, Q, KV)) ||
	    (e = rows_of(&w->wv, &w->wqkv, Q + KV, KV)) || (e = rows_of(&w->w_gate, &up, 0, F)) ||
	    (e = rows_of(&w->w_up, &up, F, F)))
		return e;
	return 0;
}

/* Layer l's weights (the streamer may wait for them here), phi3's fused
 * matrices split. */
static int acquire(struct model *m, uint32_t l, struct wt_layer *w)
{
	uint64_t t0 = prof_start(m);
	int e;

	if ((e = wt_layer_acquire(&m->w, l, w)))
		return e;
	prof_charge(m, MS_ACQUIRE, t0);
	if (m->hp.arch->fused && (e = split_fused(&m->hp, w)))
		wt_layer_release(&m->w, l);
	return e;
}

/* out = W x for a layer's matrix W over B rows. */
static int product(struct model *m, struct mm_ctx *mm, float *out, const struct wt_mat *w,
		   const float *x, uint32_t B)
{
	uint64_t t0 = prof_start(m);
	int e = matmul(mm, out, w, x, B);

	prof_charge(m, MS_MATMUL, t0);
	return e;
}

/* q, k, v = Wq xb, Wk xb, Wv xb, plus their biases where the model has them
 * (each in every layer or none: model_check_layout). */
static int qkv(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
	       const struct wt_layer *w, uint32_t B)
{
	const struct model_hparams *hp = &m->hp;
	uint32_t Q = hp->n_head * hp->head_dim, KV = hp->n_head_kv * hp->head_dim;
	uint64_t t0 = prof_start(m);
	int e;

	e = matmul_n(mm, 3, (float *const[]){s->q, s->k, s->v},
		     (const struct wt_mat *const[]){&w->wq, &w->wk, &w->wv}, s->xb, B);
	if (!e && w->bq)
		add_bias(s->q, w->bq, Q, B);
	if (!e && w->bk)
		add_bias(s->k, w->bk, KV, B);
	if (!e && w->bv)
		add_bias(s->v, w->bv, KV, B);
	prof_charge(m, MS_MATMUL, t0);
	return e;
}

/* hb, hb2 = gate x, up x over B rows of x. */
static int gate_up(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
		   const struct wt_mat *gate, const struct wt_mat *up, const float *x, uint32_t B)
{
	uint64_t t0 = prof_start(m);
	int e = matmul_n(mm, 2, (float *const[]){s->hb, s->hb2},
			 (const struct wt_mat *const[]){gate, up}, x, B);

	prof_charge(m, MS_MATMUL, t0);
	return e;
}

/* hb = act(hb) * hb2 over B rows of width F: the gated FFN's activation
 * (model_arch.act). */
static void activation(struct model *m, struct model_scratch *s, uint32_t B, uint32_t F)
{
	size_t n = (size_t)B * F;
	uint64_t t0 = prof_start(m);

	switch (m->hp.arch->act) {
	case MODEL_ACT_SILU:
		swiglu(s, s->hb, s->hb2, n);
		break;
	case MODEL_ACT_GELU:
		geglu(s->hb, s->hb2, n);
		break;
	}
	prof_charge(m, MS_ACT, t0);
}

/* xb = down(act(gate(xb)) * up(xb)): layer l's dense FFN over B rows. */
static int ffn(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
	       const struct wt_layer *w, uint32_t l, uint32_t B)
{
	int e;

	prefetch_next(mm, &w->w_down);
	if ((e = gate_up(m, s, mm, &w->w_gate, &w->w_up, s->xb, B)))
		return e;
	activation(m, s, B, m->hp.n_ff);
	prefetch_peek(m, mm, l + 1); /* the next layer's first product, or the head */
	return product(m, mm, s->xb, &w->w_down, s->hb, B);
}

/*
 * A mixture of experts (llama.cpp build_moe_ffn, softmax gating): token b's
 * router logits to probabilities by softmax, the n_expert_used largest
 * chosen (the lower index first on a tie), their probabilities the weights,
 * divided by their sum (at least 2^-14, ggml's clamp) where the row says.
 */
static void route(const struct model_hparams *hp, float *p, uint32_t *sel, float *wsel)
{
	uint32_t n = hp->n_expert, k = hp->n_expert_used;
	float mx = p[0], sum = 0.0f;

	for (uint32_t i = 1; i < n; i++)
		mx = p[i] > mx ? p[i] : mx;
	for (uint32_t i = 0; i < n; i++) {
		p[i] = math_expf(p[i] - mx);
		sum += p[i];
	}
	for (uint32_t i = 0; i < n; i++)
		p[i] *= 1.0f / sum;
	for (uint32_t j = 0; j < k; j++) {
		uint32_t best = n;
		for (uint32_t i = 0; i < n; i++) {
			bool taken = false;
			for (uint32_t t = 0; t < j; t++)
				taken |= sel[t] == i;
			if (!taken && (best == n || p[i] > p[best]))
				best = i;
		}
		sel[j] = best;
		wsel[j] = p[best];
	}
	if (hp->arch->moe_norm) {
		float ws = 0.0f;
		for (uint32_t j = 0; j < k; j++)
			ws += wsel[j];
		ws = ws > 6.103515625e-5f ? ws : 6.103515625e-5f;
		for (uint32_t j = 0; j < k; j++)
			wsel[j] /= ws;
	}
}

/* The FFN of a layer of experts on xb (B rows), its output into xb: each
 * expert runs over the rows routed to it (gathered into ex), its output
 * (ey) added to theirs times its weight; qwen2moe's shared expert over
 * every row, times sigmoid(gate_inp_shexp . x). Every expert's weights are
 * in memory either way (the streamer reads whole layers): which ones a
 * token chose shows in no read. */
static int experts(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
		   const struct wt_layer *w, uint32_t B)
{
	const struct model_hparams *hp = &m->hp;
	uint32_t E = hp->n_embd, n = hp->n_expert, k = hp->n_expert_used, F = hp->n_ff_exp;
	float *wsel = s->router + (size_t)B * n;
	uint32_t *sel = s->rows, *list = s->rows + (size_t)B * k;
	int e;

	if ((e = product(m, mm, s->router, &w->gate_inp, s->xb, B)))
		return e;
	for (uint32_t b = 0; b < B; b++)
		route(hp, s->router + (size_t)b * n, sel + (size_t)b * k, wsel + (size_t)b * k);
	memset(s->acc, 0, (size_t)B * E * sizeof *s->acc);
	for (uint32_t x = 0; x < n; x++) {
		struct wt_mat g, u, d;
		uint32_t nr = 0;
		for (uint32_t i = 0; i < B * k; i++)
			if (sel[i] == x) /* choice i: token i / k */
				list[nr++] = i;
		if (!nr)
			continue;
		for (uint32_t r = 0; r < nr; r++)
			memcpy(s->ex + (size_t)r * E, s->xb + (size_t)(list[r] / k) * E,
			       E * sizeof(float));
		if ((e = rows_of(&g, &w->gate_exps, (uint64_t)x * F, F)) ||
		    (e = rows_of(&u, &w->up_exps, (uint64_t)x * F, F)) ||
		    (e = rows_of(&d, &w->down_exps, (uint64_t)x * E, E)) ||
		    (e = gate_up(m, s, mm, &g, &u, s->ex, nr)))
			return e;
		activation(m, s, nr, F);
		if ((e = product(m, mm, s->ey, &d, s->hb, nr)))
			return e;
		for (uint32_t r = 0; r < nr; r++) {
			float *acc = s->acc + (size_t)(list[r] / k) * E, *y = s->ey + (size_t)r * E;
			for (uint32_t i = 0; i < E; i++)
				acc[i] += y[i] * wsel[list[r]];
		}
	}
	if (hp->arch->moe_shexp) {
		if ((e = gate_up(m, s, mm, &w->gate_shexp, &w->up_shexp, s->xb, B)))
			return e;
		activation(m, s, B, hp->n_ff_shexp);
		if ((e = product(m, mm, s->ey, &w->down_shexp, s->hb, B)))
			return e;
		for (uint32_t b = 0; b < B; b++) {
			const float *x = s->xb + (size_t)b * E, *y = s->ey + (size_t)b * E;
			float z = 0.0f, *acc = s->acc + (size_t)b * E;
			for (uint32_t i = 0; i < E; i++)
				z += w->gate_inp_shexp[i] * x[i];
			z = 1.0f / (1.0f + math_expf(-z));
			for (uint32_t i = 0; i < E; i++)
				acc[i] += y[i] * z;
		}
	}
	memcpy(s->xb, s->acc, (size_t)B * E * sizeof *s->acc);
	return 0;
}

/* One layer over a batch of B tokens at the positions bp gives. The
 * prefetches ask for the weights of the product after the next one. */
static int layer_forward(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
			 struct kv_cache *kv, uint32_t l, uint32_t B, const struct bpos *bp)
{
	struct wt_layer w;
	int e;

	if ((e = acquire(m, l, &w)))
		return e;

	/* attention block: x += wo(attention(rope(q), rope(k), v)) of norm(x) */
	per_token(m, s, kv, l, B, bp, TOK_NORM, &w);
	prefetch_next(mm, &w.wo);
	if ((e = qkv(m, s, mm, &w, B)))
		goto out;
	per_token(m, s, kv, l, B, bp, TOK_ROPE_KV, &w);
	attention(m, s, kv, l, B, bp);
	prefetch_next(mm, w.gate_inp.data ? &w.gate_inp : &w.w_gate);
	if ((e = product(m, mm, s->xb, &w.wo, s->att, B)))
		goto out;

	/* feed-forward block: x += ffn(norm(x)), or the experts' sum */
	per_token(m, s, kv, l, B, bp, TOK_POST_ATTN | TOK_ADD | TOK_FFN_NORM, &w);
	if ((e = w.gate_inp.data ? experts(m, s, mm, &w, B) : ffn(m, s, mm, &w, l, B)))
		goto out;
	per_token(m, s, kv, l, B, bp, TOK_POST_FFN | TOK_ADD, &w);
out:
	wt_layer_release(&m->w, l);
	return e;
}

/* granite's logits: times 1 / logit_scale (llama.cpp ggml_scale); gemma2's
 * soft-capped. */
static void scale_logits(const struct model_hparams *hp, float *logits, size_t n)
{
	if (hp->logit_mul != 1.0f)
		for (size_t i = 0; i < n; i++)
			logits[i] *= hp->logit_mul;
	if (hp->final_cap != 0.0f) /* gemma2: cap tanh(logits / cap) */
		for (size_t i = 0; i < n; i++)
			logits[i] = math_tanhf(logits[i] * (1.0f / hp->final_cap)) * hp->final_cap;
}

/* Final norm of the last row, then the head in chunks into s->logits. */
static int head_forward(struct model *m, struct model_scratch *s, struct mm_ctx *mm, uint32_t B)
{
	const struct model_hparams *hp = &m->hp;
	uint32_t E = hp->n_embd, chunk = m->w.head_chunk;
	int e = 0;

	norm_row(hp, s->xb, s->x + (size_t)(B - 1) * E, m->w.output_norm);
	for (uint32_t r0 = 0; r0 < hp->n_vocab && !e; r0 += chunk) {
		uint32_t n = hp->n_vocab - r0 < chunk ? hp->n_vocab - r0 : chunk;
		struct wt_mat h;
		if ((e = wt_head_acquire(&m->w, r0, n, &h)))
			break;
		if (r0 + n >= hp->n_vocab)
			prefetch_peek(m, mm, 0); /* the next token's first product */
		e = matmul(mm, s->logits + r0, &h, s->xb, 1);
		wt_head_release(&m->w, r0);
	}
	scale_logits(hp, s->logits, hp->n_vocab);
	return e;
}

/* A pass of B tokens through the embedding and every layer, at the
 * positions bp gives (one sequence's run, or several sequences' tokens). */
static int layers_pass(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
		       struct kv_cache *kv, const int32_t *tok, uint32_t B, const struct bpos *bp)
{
	const struct model_hparams *hp = &m->hp;
	uint64_t t0 = prof_start(m);
	int e;

	for (uint32_t b = 0; b < B; b++)
		if ((e = wt_embed_row(&m->w, tok[b], s->x + (size_t)b * hp->n_embd)))
			return e;
	if (hp->arch->embd_scale || hp->embd_mul != 1.0f) {
		/* gemma: sqrt(n_embd); granite: its embedding_scale */
		float sc = hp->arch->embd_scale ? math_sqrtf((float)hp->n_embd) : hp->embd_mul;
		for (size_t i = 0; i < (size_t)B * hp->n_embd; i++)
			s->x[i] *= sc;
	}
	prof_charge(m, MS_EMBED, t0);
	for (uint32_t l = 0; l < hp->n_layer; l++) {
		t0 = prof_start(m);
		if ((e = layer_forward(m, s, mm, kv, l, B, bp)))
			return e;
		if (m->prof.on) /* acquire included */
			m->prof.layer_ns[l] += plat_time_ns() - t0;
	}
	if (m->prof.on) {
		m->prof.tokens += B;
		m->prof.passes++;
	}
	return 0;
}

static int forward_batch(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
			 struct kv_cache *kv, const int32_t *tok, uint32_t B, uint32_t pos,
			 bool want_logits)
{
	struct bpos bp = {pos, NULL, NULL};
	uint64_t t0;
	int e;

	if ((e = layers_pass(m, s, mm, kv, tok, B, &bp)) || !want_logits)
		return e;
	t0 = prof_start(m);
	e = head_forward(m, s, mm, B);
	prof_charge(m, MS_HEAD, t0);
	return e;
}

int model_forward(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
		  struct kv_cache *kv, const int32_t *tokens, uint32_t n, uint32_t pos,
		  bool want_logits)
{
	int e;

	if (n == 0 || (uint64_t)pos + n > kv->n_ctx)
		return -LLMK_ERANGE;
	for (uint32_t i = 0; i < n; i += s->n_batch) {
		uint32_t B = n - i < s->n_batch ? n - i : s->n_batch;
		bool last = i + B == n;
		if ((e = forward_batch(m, s, mm, kv, tokens + i, B, pos + i, want_logits && last)))
			return e;
	}
	return 0;
}

/* Logits of all n rows of x: each row normed into xb, then the head a
 * chunk at a time, in pieces of rows whose n x rows outputs fit s->logits,
 * copied out to row i of logits. */
static int head_rows(struct model *m, struct model_scratch *s, struct mm_ctx *mm, uint32_t n,
		     float *logits)
{
	const struct model_hparams *hp = &m->hp;
	uint32_t E = hp->n_embd, chunk = m->w.head_chunk, piece = hp->n_vocab / n;
	int e = 0;

	for (uint32_t b = 0; b < n; b++)
		norm_row(hp, s->xb + (size_t)b * E, s->x + (size_t)b * E, m->w.output_norm);
	for (uint32_t r0 = 0; r0 < hp->n_vocab && !e; r0 += chunk) {
		uint32_t nr = hp->n_vocab - r0 < chunk ? hp->n_vocab - r0 : chunk;
		struct wt_mat h;
		if ((e = wt_head_acquire(&m->w, r0, nr, &h)))
			break;
		if (h.packed) /* pieces of whole packed groups */
			piece = piece / QUANT_TILE_ROWS * QUANT_TILE_ROWS;
		if (!piece)
			e = -LLMK_ERANGE;
		for (uint32_t k0 = 0; k0 < nr && !e; k0 += piece) {
			struct wt_mat sub = h;
			uint32_t k = nr - k0 < piece ? nr - k0 : piece;
			sub.data = (const uint8_t *)h.data + (size_t)k0 * quant_row_bytes(h.type, h.cols);
			sub.rows = k;
			if ((e = matmul(mm, s->logits, &sub, s->xb, n)))
				break;
			for (uint32_t b = 0; b < n; b++)
				memcpy(logits + (size_t)b * hp->n_vocab + r0 + k0,
				       s->logits + (size_t)b * k, (size_t)k * sizeof(float));
		}
		wt_head_release(&m->w, r0);
	}
	scale_logits(hp, logits, (size_t)n * hp->n_vocab);
	return e;
}

int model_forward_seqs(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
		       struct kv_cache *kv, const int32_t *tokens, const uint32_t *base,
		       const uint32_t *pos, uint32_t n, float *logits)
{
	const struct model_hparams *hp = &m->hp;
	struct bpos bp = {0, base, pos};
	uint64_t t0;
	int e;

	/* (the head's rows go through s->logits, n_vocab floats, n at a time) */
	if (n == 0 || n > s->n_batch || (logits && n > hp->n_vocab))
		return -LLMK_ERANGE;
	for (uint32_t i = 0; i < n; i++)
		if ((uint64_t)base[i] + pos[i] >= kv->n_ctx)
			return -LLMK_ERANGE;
	if ((e = layers_pass(m, s, mm, kv, tokens, n, &bp)) || !logits)
		return e;
	t0 = prof_start(m);
	e = head_rows(m, s, mm, n, logits);
	prof_charge(m, MS_HEAD, t0);
	return e;
}

int model_forward_seqs_some(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
			    struct kv_cache *kv, const int32_t *tokens, const uint32_t *base,
			    const uint32_t *pos, uint32_t n, const uint8_t *want, float *logits)
{
	const struct model_hparams *hp = &m->hp;
	struct bpos bp = {0, base, pos};
	uint32_t k = 0;
	uint64_t t0;
	int e;

	if (n == 0 || n > s->n_batch)
		return -LLMK_ERANGE;
	for (uint32_t i = 0; i < n; i++)
		if ((uint64_t)base[i] + pos[i] >= kv->n_ctx)
			return -LLMK_ERANGE;
	if ((e = layers_pass(m, s, mm, kv, tokens, n, &bp)))
		return e;
	/* the wanted rows of x to the front, in order: the head sees only them */
	for (uint32_t i = 0; i < n; i++)
		if (want[i]) {
			if (k != i)
				memmove(s->x + (size_t)k * hp->n_embd, s->x + (size_t)i * hp->n_embd,
					hp->n_embd * sizeof(float));
			k++;
		}
	if (!k || !logits)
		return 0;
	if (k > hp->n_vocab)
		return -LLMK_ERANGE;
	t0 = prof_start(m);
	e = head_rows(m, s, mm, k, logits);
	prof_charge(m, MS_HEAD, t0);
	return e;
}
