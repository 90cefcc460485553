/*
 * llm/model.c — a model's state beside its weights (model.h): the scratch
 * of a batch, the RoPE frequency table and its check, and the profile's
 * counters. The forward pass is llm/model_forward.c; the architectures,
 * hyperparameters and tensor layout check are llm/model_hparams.c.
 */
#include "model.h"
#include "math.h"
#include "vmath.h"

#include <float.h>

/* ---- setup ---- */
/* Floats from one piece of the scratch to the next: 64-byte aligned pieces,
 * each followed by LLM_MEM_REDZONE poisoned bytes in the sanitizer build. */
static size_t scratch_stride(size_t floats)
{
	return ((floats + 15) & ~(size_t)15) + LLM_MEM_REDZONE / sizeof(float);
}

/* The floats of the whole scratch, and of each piece (lens: its own floats). */
#define SCRATCH_PIECES 17
static size_t scratch_floats(const struct model_hparams *hp, uint32_t B, uint32_t W,
			     size_t *lens)
{
	size_t E = hp->n_embd, Q = (size_t)hp->n_head * hp->head_dim;
	size_t KV = (size_t)hp->n_head_kv * hp->head_dim, F = hp->n_ff;
	size_t X = hp->n_expert ? E : 0, K = hp->n_expert_used;

	F = hp->n_expert && hp->n_ff_exp > F ? hp->n_ff_exp : F;
	F = hp->n_expert && hp->n_ff_shexp > F ? hp->n_ff_shexp : F;
	/* x xb q k v att hb hb2 tiles amax asum logits; router ex ey acc rows */
	size_t p[SCRATCH_PIECES] = {B * E, B * (E > Q ? E : Q), B * Q, B * KV, B * KV, B * Q,
			B * F, B * F, (size_t)W * 3 * MODEL_ATT_TILE * hp->head_dim,
			(size_t)B * hp->n_head, (size_t)B * hp->n_head, hp->n_vocab,
			B * (hp->n_expert + K), B * X, B * X, B * X, hp->n_expert ? B * (K + 1) : 0};
	size_t n = 0;

	for (int i = 0; i < SCRATCH_PIECES; i++) {
		if (lens)
			lens[i] = p[i];
		n += scratch_stride(p[i]);
	}
	return n;
}

uint64_t model_scratch_bytes(const struct model_hparams *hp, uint32_t n_batch,
			     uint32_t n_workers)
{
	return scratch_floats(hp, n_batch, n_workers, NULL) * sizeof(float);
}

int model_scratch_init(struct model_scratch *s, const struct model_hparams *hp,
		       uint32_t n_batch, uint32_t n_workers, struct llm_mem *mem)
{
	size_t lens[SCRATCH_PIECES];
	float **dst[SCRATCH_PIECES];
	float *p;
	int e = 0;

	memset(s, 0, sizeof *s);
	n_workers = n_workers ? n_workers : 1;
	s->bytes = scratch_floats(hp, n_batch, n_workers, lens) * sizeof(float);
	s->base = llm_mem_alloc(mem, s->bytes, &e);
	if (!s->base)
		return e;
	s->n_batch = n_batch;
	s->n_workers = n_workers;
	s->vm = vmath_get(plat_cpu_features());
	dst[0] = &s->x; dst[1] = &s->xb; dst[2] = &s->q; dst[3] = &s->k; dst[4] = &s->v;
	dst[5] = &s->att; dst[6] = &s->hb; dst[7] = &s->hb2; dst[8] = &s->tiles;
	dst[9] = &s->amax; dst[10] = &s->asum; dst[11] = &s->logits;
	dst[12] = &s->router; dst[13] = &s->ex; dst[14] = &s->ey; dst[15] = &s->acc;
	dst[16] = (float **)&s->rows; /* uint32_t, the size of a float */
	p = s->base;
	for (int i = 0; i < SCRATCH_PIECES; i++) {
		*dst[i] = p;
		llm_mem_poison(p + lens[i], (scratch_stride(lens[i]) - lens[i]) * sizeof(float));
		p += scratch_stride(lens[i]);
	}
	return 0;
}

void model_scratch_zeroize(struct model_scratch *s)
{
	llm_mem_zeroize_all(s->base, s->bytes);
}

void model_scratch_free(struct model_scratch *s, struct llm_mem *mem)
{
	if (s->base)
		llm_mem_free(mem, s->base, s->bytes);
	memset(s, 0, sizeof *s);
}

/*
 * RoPE frequencies (RoFormer, Su et al. 2021; llama.cpp ggml_rope_ext):
 * pair i rotates by pos * scale * base^(-2i/d) (YaRN: a mix of the scaled
 * and unscaled frequency), divided by the llama3 frequency factor of pair i
 * when rope_freqs.weight exists.
 */
/* The pair index whose wavelength fits n_rot times into the original
 * context (ggml_rope_yarn_corr_dim). */
static float yarn_corr_dim(const struct model_hparams *hp, float n_rot)
{
	return (float)hp->rope_dim *
	       math_logf((float)hp->yarn_orig_ctx / (n_rot * 2.0f * 3.14159265358979f)) /
	       (2.0f * math_logf(hp->rope_base));
}

static float rope_freq(const struct model_hparams *hp, const float *factors, uint32_t i)
{
	float f = math_expf(-(float)(2 * i) / (float)hp->rope_dim * math_logf(hp->rope_base));

	if (hp->yarn) {
		/* pairs below the fast dimension keep their frequency, those past
		 * the slow one are interpolated, a linear ramp between */
		float lo = math_floorf(yarn_corr_dim(hp, hp->yarn_beta_fast));
		float hi = -math_floorf(-yarn_corr_dim(hp, hp->yarn_beta_slow)); /* ceil */
		lo = lo > 0.0f ? lo : 0.0f;
		hi = hi < (float)(hp->rope_dim - 1) ? hi : (float)(hp->rope_dim - 1);
		float y = ((float)i - lo) / (hi - lo > 0.001f ? hi - lo : 0.001f);
		float ramp = 1.0f - (y < 0.0f ? 0.0f : y > 1.0f ? 1.0f : y);
		f = f * hp->rope_scale * (1.0f - ramp) + f * ramp;
	} else {
		f *= hp->rope_scale;
	}
	if (factors)
		f /= factors[i];
	return f;
}

static int check_factors(const struct model_hparams *hp, const float *factors, const char *name,
			 char *err, size_t errlen)
{
	for (uint32_t i = 0; factors && i < hp->rope_dim / 2; i++) {
		float f = rope_freq(hp, factors, i);
		/* an angle is position x frequency, for positions below MODEL_MAX_POS */
		if (factors[i] > 0.0f && factors[i] <= FLT_MAX && f <= FLT_MAX / MODEL_MAX_POS)
			continue;
		plat_snprintf(err, errlen, "model: %s[%u] = %g gives pair %u the "
			      "frequency %g; a factor must be positive and finite, and the "
			      "frequency at most %g", name, i, (double)factors[i], i, (double)f,
			      (double)(FLT_MAX / MODEL_MAX_POS));
		return -LLMK_EFORMAT;
	}
	return 0;
}

int model_check_rope_freqs(const struct model_hparams *hp, const struct wt_ctx *w, char *err,
			   size_t errlen)
{
	int e;

	if ((e = check_factors(hp, w->rope_freqs, "rope_freqs.weight", err, errlen)) ||
	    (e = check_factors(hp, w->rope_long, "rope_factors_long.weight", err, errlen)) ||
	    (e = check_factors(hp, w->rope_short, "rope_factors_short.weight", err, errlen)))
		return e;
	return 0;
}

/* The tables: inv_freq, inv_freq_long (LongRoPE's long factors), and the
 * sliding layers' own (gemma3), each rope_dim / 2 floats. */
#define N_TABLES 3

int model_init(struct model *m, const struct model_hparams *hp, struct wt_ctx *w,
	       struct llm_mem *mem)
{
	uint32_t half = hp->rope_dim / 2;
	int e = 0;

	memset(m, 0, sizeof *m);
	m->inv_freq = llm_mem_alloc(mem, N_TABLES * half * sizeof(float), &e);
	if (!m->inv_freq)
		return e;
	m->prof.layer_ns = llm_mem_alloc(mem, hp->n_layer * sizeof(uint64_t), &e);
	if (!m->prof.layer_ns) {
		llm_mem_free(mem, m->inv_freq, N_TABLES * half * sizeof(float));
		m->inv_freq = NULL;
		return e;
	}
	m->hp = *hp;
	m->w = *w;
	m->mem = mem;
	/* LongRoPE: the short factors within the original context, the long
	 * ones past it (llama.cpp get_rope_factors; the layout check keeps
	 * rope_freqs and these apart) */
	for (uint32_t i = 0; i < half; i++)
		m->inv_freq[i] = rope_freq(hp, w->rope_long ? w->rope_short : w->rope_freqs, i);
	m->inv_freq_long = m->inv_freq;
	if (w->rope_long) {
		m->inv_freq_long = m->inv_freq + half;
		for (uint32_t i = 0; i < half; i++)
			m->inv_freq_long[i] = rope_freq(hp, w->rope_long, i);
	}
	/* gemma3's sliding layers: their own base, no scaling or factors */
	m->inv_freq_swa = m->inv_freq;
	if (hp->arch->swa_rope_base != 0.0f) {
		m->inv_freq_swa = m->inv_freq + 2 * half;
		for (uint32_t i = 0; i < half; i++)
			m->inv_freq_swa[i] = math_expf(-(float)(2 * i) / (float)hp->rope_dim *
						       math_logf(hp->arch->swa_rope_base));
	}
	return 0;
}

void model_free(struct model *m)
{
	if (m->inv_freq)
		llm_mem_free(m->mem, m->inv_freq, N_TABLES * (m->hp.rope_dim / 2) * sizeof(float));
	if (m->prof.layer_ns)
		llm_mem_free(m->mem, m->prof.layer_ns, m->hp.n_layer * sizeof(uint64_t));
	wt_close(&m->w);
	memset(m, 0, sizeof *m);
}

/* ---- profile ---- */
const char *const model_stage_names[MS_N] = {
	"embed", "acquire", "norm", "matmul", "rope+kv", "attention", "act", "head",
};

void model_prof_reset(struct model *m)
{
	bool on = m->prof.on;
	uint64_t *layer = m->prof.layer_ns;

	memset(&m->prof, 0, sizeof m->prof);
	memset(layer, 0, m->hp.n_layer * sizeof *layer);
	m->prof.layer_ns = layer;
	m->prof.on = on;
}
