/*
 * llm/sample.c — the sampler's state, its table of steps (name, letter,
 * when it is on, what it runs), the chain and the draw (see sample.h for the
 * chain). The steps are in sample_cut.c (those that cut or rescale the
 * candidate list) and sample_rep.c (those that read the token history);
 * what they share (sorting, softmax, the RNG) is in sample_list.c, which
 * calls none of them.
 *
 * Every step works on the candidate list s->cand[0..n_cand), which starts
 * indexed by token id (cand[i].id == i) and, once a step sorts it, stays in
 * descending logit order while s->sorted says so.
 */
#include "sample_int.h"
#include "math.h"

/* ---- the steps: one row each, in enum sample_step's order ---- */
static bool penalties_on(const struct sample_params *p)
{
	return p->repeat_last_n &&
	       (p->repeat_penalty != 1.0f || p->frequency_penalty != 0.0f || p->presence_penalty != 0.0f);
}

static bool dry_on(const struct sample_params *p)
{
	return p->dry_multiplier != 0.0f && p->dry_base >= 1.0f && p->dry_last_n != 0;
}

static bool typical_on(const struct sample_params *p)
{
	return p->typical < 1.0f;
}

static bool xtc_on(const struct sample_params *p)
{
	return p->xtc_probability > 0.0f && p->xtc_threshold <= 0.5f;
}

static void run_top_n_sigma(struct sampler *s)
{
	sample_top_n_sigma(s, s->par.top_nsigma);
}

static void run_top_k(struct sampler *s)
{
	sample_top_k(s, s->par.top_k);
}

static void run_typical(struct sampler *s)
{
	sample_typical(s, s->par.typical);
}

static void run_top_p(struct sampler *s)
{
	sample_top_p(s, s->par.top_p);
}

static void run_min_p(struct sampler *s)
{
	sample_min_p(s, s->par.min_p);
}

#define STEP_MAX_ALT 4

static const struct {
	const char *name;             /* llama.cpp's (common_sampler_type_to_str) */
	char letter;                  /* its --sampling-seq letter */
	const char *alt[STEP_MAX_ALT]; /* its other spellings (common_sampler_types_from_names) */
	/* the step may only drop tokens other than the most likely one: a greedy
	 * run skips it when no step after it could change its argmax */
	bool keeps_argmax;
	bool (*on)(const struct sample_params *p); /* NULL: always; else false means "off" */
	void (*run)(struct sampler *s);
} steps[SAMPLE_N_STEPS] = {
	[SAMPLE_PENALTIES] = {"penalties", 'e', {0}, false, penalties_on, sample_apply_penalties},
	[SAMPLE_DRY] = {"dry", 'd', {0}, false, dry_on, sample_dry},
	[SAMPLE_TOP_N_SIGMA] = {"top_n_sigma", 's', {"top-n-sigma"}, true, NULL, run_top_n_sigma},
	[SAMPLE_TOP_K] = {"top_k", 'k', {"top-k"}, true, NULL, run_top_k},
	[SAMPLE_TYPICAL] = {"typ_p", 'y', {"typical-p", "typical", "typ-p", "typ"}, false, typical_on,
			    run_typical},
	[SAMPLE_TOP_P] = {"top_p", 'p', {"top-p", "nucleus"}, true, NULL, run_top_p},
	[SAMPLE_MIN_P] = {"min_p", 'm', {"min-p"}, true, NULL, run_min_p},
	[SAMPLE_XTC] = {"xtc", 'x', {0}, false, xtc_on, sample_xtc},
	[SAMPLE_TEMPERATURE] = {"temperature", 't', {"temp"}, true, NULL, sample_temperature},
};

const char *sample_step_name(enum sample_step st)
{
	return (unsigned)st < SAMPLE_N_STEPS ? steps[st].name : "?";
}

static bool name_is(const char *name, const char *s, size_t n)
{
	return name && strlen(name) == n && !memcmp(name, s, n);
}

static int step_by_name(const char *s, size_t n)
{
	for (int i = 0; i < SAMPLE_N_STEPS; i++) {
		if (name_is(steps[i].name, s, n))
			return i;
		for (int a = 0; a < STEP_MAX_ALT; a++)
			if (name_is(steps[i].alt[a], s, n))
				return i;
	}
	return -1;
}

/* Length of s up to its first ';' or its end. */
static size_t item_len(const char *s)
{
	size_t n = 0;

	while (s[n] && s[n] != ';')
		n++;
	return n;
}

static int step_by_letter(char c)
{
	for (int i = 0; i < SAMPLE_N_STEPS; i++)
		if (steps[i].letter == c)
			return i;
	return -1;
}

int sample_order_parse(struct sample_params *p, const char *text, const char **bad,
		       size_t *bad_len)
{
	uint8_t order[SAMPLE_MAX_ORDER];
	size_t len = strlen(text);
	uint32_t n = 0;
	int st;

	*bad = text;
	*bad_len = len;
	/* one word that is not a name: llama.cpp's letters (--sampling-seq) */
	if (len && item_len(text) == len && step_by_name(text, len) < 0) {
		for (size_t i = 0; i < len; i++)
			if (step_by_letter(text[i]) < 0)
				return -LLMK_EINVAL;
		if (len > SAMPLE_MAX_ORDER)
			return -LLMK_ERANGE;
		for (size_t i = 0; i < len; i++)
			order[n++] = (uint8_t)step_by_letter(text[i]);
	} else {
		for (const char *s = text;; s++) {
			size_t l = item_len(s);
			if ((st = step_by_name(s, l)) < 0) {
				*bad = s;
				*bad_len = l;
				return -LLMK_EINVAL;
			}
			if (n == SAMPLE_MAX_ORDER)
				return -LLMK_ERANGE;
			order[n++] = (uint8_t)st;
			if (!s[l])
				break;
			s += l;
		}
	}
	memcpy(p->order, order, n);
	p->n_order = n;
	return 0;
}

void sample_order_format(const struct sample_params *p, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < p->n_order && i < SAMPLE_MAX_ORDER; i++) {
		const char *nm = sample_step_name((enum sample_step)p->order[i]);
		size_t l = strlen(nm);
		if (len + (i > 0) + l + 1 > cap) {
			/* too long for names: the letters */
			for (len = 0; len < p->n_order && len + 1 < cap; len++)
				buf[len] = p->order[len] < SAMPLE_N_STEPS ? steps[p->order[len]].letter : '?';
			buf[len] = 0;
			return;
		}
		if (i > 0)
			buf[len++] = ';';
		memcpy(buf + len, nm, l + 1);
		len += l;
	}
}

void sample_defaults(struct sample_params *p)
{
	memset(p, 0, sizeof *p);
	p->temp = 0.8f;
	p->dynatemp_range = 0.0f;
	p->dynatemp_exp = 1.0f;
	p->top_k = 40;
	p->top_p = 0.95f;
	p->min_p = 0.05f;
	p->typical = 1.0f;
	p->top_nsigma = -1.0f;
	p->xtc_probability = 0.0f;
	p->xtc_threshold = 0.1f;
	p->repeat_penalty = 1.0f;
	p->repeat_last_n = 64;
	p->dry_multiplier = 0.0f;
	p->dry_base = 1.75f;
	p->dry_allowed_length = 2;
	p->dry_last_n = -1;
	p->mirostat_tau = 5.0f;
	p->mirostat_eta = 0.1f;
	p->seed = SAMPLE_SEED_RANDOM;
	for (int i = 0; i < SAMPLE_N_STEPS; i++)
		p->order[i] = (uint8_t)i;
	p->n_order = SAMPLE_N_STEPS;
}

/* ---- setup: one block holds the candidates, the tally, the history, DRY's
 * repeat lengths and the breaker bits ---- */
static uint64_t al8(uint64_t x)
{
	return (x + 7) & ~7ull;
}

static uint32_t hist_cap(uint32_t n_ctx)
{
	return n_ctx == 0xffffffffu ? n_ctx : n_ctx + 1;
}

uint64_t sample_bytes(uint32_t n_vocab, uint32_t n_ctx)
{
	uint64_t cap = hist_cap(n_ctx);

	return al8((uint64_t)n_vocab * sizeof(struct sample_cand)) +
	       al8((uint64_t)n_vocab * sizeof(uint32_t)) + 2 * al8(cap * sizeof(uint32_t)) +
	       al8(((uint64_t)n_vocab + 7) / 8);
}

int sample_init(struct sampler *s, struct llm_mem *mem, uint32_t n_vocab, uint32_t n_ctx,
		const struct sample_params *p)
{
	uint64_t bytes = sample_bytes(n_vocab, n_ctx);
	char *b;
	int err = 0;

	memset(s, 0, sizeof *s);
	s->mem = mem;
	s->n_vocab = n_vocab;
	s->hist_cap = hist_cap(n_ctx);
	if (bytes > (size_t)-1)
		return -LLMK_ENOMEM;
	s->block = llm_mem_alloc(mem, (size_t)bytes, &err); /* zero-filled */
	if (!s->block)
		return err;
	s->block_bytes = (size_t)bytes;
	b = s->block;
	s->cand = (struct sample_cand *)b;
	b += al8((uint64_t)n_vocab * sizeof(struct sample_cand));
	s->tally = (uint32_t *)b;
	b += al8((uint64_t)n_vocab * sizeof(uint32_t));
	s->hist = (uint32_t *)b;
	b += al8((uint64_t)s->hist_cap * sizeof(uint32_t));
	s->zbuf = (uint32_t *)b;
	b += al8((uint64_t)s->hist_cap * sizeof(uint32_t));
	s->breaker = (uint8_t *)b;
	return sample_reset(s, p);
}

void sample_free(struct sampler *s)
{
	if (s->block)
		llm_mem_free(s->mem, s->block, s->block_bytes);
	memset(s, 0, sizeof *s);
}

void sample_zeroize(struct sampler *s)
{
	llm_mem_zeroize(s->cand, (size_t)s->n_vocab * sizeof *s->cand);
	llm_mem_zeroize(s->tally, (size_t)s->n_vocab * sizeof *s->tally);
	llm_mem_zeroize(s->hist, (size_t)s->hist_cap * sizeof *s->hist);
	llm_mem_zeroize(s->zbuf, (size_t)s->hist_cap * sizeof *s->zbuf);
	llm_mem_zeroize(&s->rng, sizeof s->rng);
	llm_mem_zeroize(&s->par, sizeof s->par); /* the seed, stop-free params; reset at the next run */
	llm_mem_zeroize(&s->mu, sizeof s->mu);
	s->n_cand = s->hist_len = s->hist_head = 0;
	s->sorted = false;
}

int sample_reset(struct sampler *s, const struct sample_params *p)
{
	if (p->n_order > SAMPLE_MAX_ORDER)
		return -LLMK_EINVAL;
	for (uint32_t i = 0; i < p->n_order; i++)
		if (p->order[i] >= SAMPLE_N_STEPS)
			return -LLMK_EINVAL;
	s->par = *p;
	sample_rng_seed(&s->rng, p->seed);
	s->mu = 2.0f * p->mirostat_tau;
	s->hist_len = s->hist_head = 0;
	return 0;
}

void sample_accept(struct sampler *s, uint32_t id)
{
	if (!s->hist_cap)
		return;
	s->hist[s->hist_head] = id;
	s->hist_head = s->hist_head + 1 == s->hist_cap ? 0 : s->hist_head + 1;
	if (s->hist_len < s->hist_cap)
		s->hist_len++;
}

/* ---- the draw and Mirostat ---- */

/* Index of a draw from the softmax of the remaining candidates. */
static uint32_t draw(struct sampler *s)
{
	float r, cum = 0.0f;

	sample_softmax(s);
	r = sample_rng_float(&s->rng);
	for (uint32_t i = 0; i < s->n_cand; i++) {
		cum += s->cand[i].p;
		if (r < cum)
			return i;
	}
	return s->n_cand - 1;
}

static void apply_temp(struct sampler *s, float t)
{
	for (uint32_t i = 0; i < s->n_cand; i++)
		s->cand[i].logit /= t;
	s->sorted = false; /* rounding may tie two logits: sort again */
}

/* Draw, then move mu toward the target surprise tau by the observed error
 * (both versions of Mirostat, Basu et al. 2021 algorithms 1 and 2). */
static uint32_t mirostat_draw(struct sampler *s)
{
	uint32_t i = draw(s);
	float surprise = -math_logf(s->cand[i].p) * 1.44269504f;

	s->mu -= s->par.mirostat_eta * (surprise - s->par.mirostat_tau);
	return s->cand[i].id;
}

/*
 * Mirostat v1's cut (llama.cpp llama_sampler_mirostat_apply, m = 100):
 * estimate the Zipf exponent s from the m most likely tokens by least
 * squares, s = sum t_i b_i / sum t_i^2 with t_i = ln((i+2)/(i+1)) and
 * b_i = ln(p_i / p_(i+1)), then keep the k most likely tokens where
 *   k = (eps 2^mu / (1 - N^-eps))^(1/s), eps = s - 1, N the vocabulary.
 */
void sample_mirostat1_top_k(struct sampler *s)
{
	struct sample_cand *c = s->cand;
	double tb = 0, tt = 0, sh, eps, x, k;

	sample_softmax(s);
	for (uint32_t i = 0; i + 1 < s->n_cand && i + 1 < SAMPLE_MIROSTAT_M; i++) {
		if (!(c[i + 1].p > 0.0f))
			break; /* an underflowed tail says nothing about the slope */
		double t = math_log((double)(i + 2) / (double)(i + 1));
		double b = math_log((double)c[i].p / (double)c[i + 1].p);
		tb += t * b;
		tt += t * t;
	}
	if (tt == 0.0) {
		k = 1; /* one token with any probability */
	} else {
		sh = tb / tt;
		eps = sh - 1.0;
		/* eps / (1 - N^-eps) tends to 1 / ln N as eps -> 0 (llama.cpp's 0/0) */
		if (eps > -1e-6 && eps < 1e-6)
			x = 1.0 / math_log((double)s->n_vocab);
		else
			x = eps / (1.0 - math_exp(-eps * math_log((double)s->n_vocab)));
		x *= math_exp((double)s->mu * 0.69314718055994531);
		k = x > 0 ? math_exp(math_log(x) / sh) : 1;
	}
	if (k >= 1 && k < (double)s->n_cand)
		sample_select_top_k(s, (uint32_t)k);
	else if (!(k >= 1))
		sample_select_top_k(s, 1); /* NaN too */
}

/* Mirostat v2 (llama.cpp mirostat_v2): drop tokens whose surprise -log2 p
 * exceeds mu (keeping at least one), renormalise, draw. */
static uint32_t mirostat2(struct sampler *s)
{
	struct sample_cand *c = s->cand;
	uint32_t n = 0;
	float sum = 0.0f;

	sample_softmax(s);
	while (n < s->n_cand && -math_logf(c[n].p) * 1.44269504f <= s->mu)
		n++;
	if (n == 0)
		n = 1;
	s->n_cand = n;
	for (uint32_t i = 0; i < n; i++)
		sum += c[i].p;
	for (uint32_t i = 0; i < n; i++)
		c[i].logit = math_logf(c[i].p / sum);
	s->sorted = false;
	return mirostat_draw(s);
}

/* ---- the chain ---- */
static bool step_active(const struct sampler *s, uint8_t st)
{
	return !steps[st].on || steps[st].on(&s->par);
}

uint32_t sample_next(struct sampler *s, const float *logits)
{
	const struct sample_params *p = &s->par;
	bool greedy = p->temp <= 0.0f;
	uint32_t n = p->n_order;

	for (uint32_t i = 0; i < s->n_vocab; i++) {
		s->cand[i].id = i;
		s->cand[i].logit = logits[i];
		s->cand[i].p = 0.0f;
	}
	s->n_cand = s->n_vocab;
	s->sorted = false;
	sample_apply_bias(s);

	if (p->mirostat == 1 || p->mirostat == 2) {
		if (greedy) {
			sample_keep_argmax(s);
			return s->cand[0].id;
		}
		apply_temp(s, p->temp);
		if (p->mirostat == 2)
			return mirostat2(s);
		sample_mirostat1_top_k(s);
		return mirostat_draw(s);
	}
	if (greedy) {
		n = 0;
		for (uint32_t i = 0; i < p->n_order; i++)
			if (!steps[p->order[i]].keeps_argmax && step_active(s, p->order[i]))
				n = i + 1;
	}
	for (uint32_t i = 0; i < n; i++)
		steps[p->order[i]].run(s);
	if (greedy) {
		sample_keep_argmax(s);
		return s->cand[0].id;
	}
	return s->cand[draw(s)].id;
}
