/*
 * llm/sample.c — the sampler's state, its order of steps, the chain and the
 * draw (see sample.h for the chain). The steps are in sample_cut.c (those
 * that cut or rescale the candidate list) and sample_rep.c (those that read
 * the token history).
 *
 * Every step works on the candidate list s->cand[0..n_cand), which starts
 * indexed by token id (cand[i].id == i) and, once a step sorts it, stays in
 * descending logit order while s->sorted says so.
 */
#include "sample_int.h"
#include "math.h"

/* ---- the order: llama.cpp's names (common_sampler_type_to_str) and letters ---- */
static const char *const step_names[SAMPLE_N_STEPS] = {
	"penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature",
};
static const char step_letters[SAMPLE_N_STEPS + 1] = "edskypmxt";

/* llama.cpp's other spellings (common_sampler_types_from_names, alt names). */
static const struct {
	const char *name;
	uint8_t step;
} step_alt[] = {
	{"top-k", SAMPLE_TOP_K},     {"top-p", SAMPLE_TOP_P},         {"nucleus", SAMPLE_TOP_P},
	{"top-n-sigma", SAMPLE_TOP_N_SIGMA}, {"typical-p", SAMPLE_TYPICAL}, {"typical", SAMPLE_TYPICAL},
	{"typ-p", SAMPLE_TYPICAL},   {"typ", SAMPLE_TYPICAL},         {"min-p", SAMPLE_MIN_P},
	{"temp", SAMPLE_TEMPERATURE},
};

const char *sample_step_name(enum sample_step st)
{
	return (unsigned)st < SAMPLE_N_STEPS ? step_names[st] : "?";
}

static int step_by_name(const char *s, size_t n)
{
	for (int i = 0; i < SAMPLE_N_STEPS; i++)
		if (strlen(step_names[i]) == n && !memcmp(step_names[i], s, n))
			return i;
	for (size_t i = 0; i < sizeof step_alt / sizeof step_alt[0]; i++)
		if (strlen(step_alt[i].name) == n && !memcmp(step_alt[i].name, s, n))
			return step_alt[i].step;
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
		if (step_letters[i] == c)
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
				buf[len] = p->order[len] < SAMPLE_N_STEPS ? step_letters[p->order[len]] : '?';
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

/* ---- RNG: xoshiro256** (Blackman & Vigna), state from splitmix64 ---- */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void sample_rng_seed(struct sample_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t sample_rng_next(struct sample_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

float sample_rng_float(struct sample_rng *r)
{
	return (float)(sample_rng_next(r) >> 40) * (1.0f / 16777216.0f);
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

/* ---- sorting: heap sort, descending (no libc qsort) ---- */
static int cand_before(const struct sample_cand *a, const struct sample_cand *b, bool by_p)
{
	float ka = by_p ? a->p : a->logit, kb = by_p ? b->p : b->logit;

	/* ties go to the lower id, so results do not depend on the input order */
	return ka < kb || (ka == kb && a->id > b->id);
}

static void sift_down(struct sample_cand *c, uint32_t i, uint32_t n, bool by_p)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		if (l < n && cand_before(&c[l], &c[m], by_p))
			m = l;
		if (l + 1 < n && cand_before(&c[l + 1], &c[m], by_p))
			m = l + 1;
		if (m == i)
			return;
		struct sample_cand t = c[i];
		c[i] = c[m];
		c[m] = t;
		i = m;
	}
}

/* Min-heap on "before" keeps the worst at the top; popping it in turn to the
 * back leaves the array sorted best first. */
static void heap_sort_desc(struct sample_cand *c, uint32_t n, bool by_p)
{
	for (uint32_t i = n / 2; i-- > 0;)
		sift_down(c, i, n, by_p);
	for (uint32_t end = n; end > 1; end--) {
		struct sample_cand t = c[0];
		c[0] = c[end - 1];
		c[end - 1] = t;
		sift_down(c, 0, end - 1, by_p);
	}
}

void sample_sort(struct sample_cand *c, uint32_t n)
{
	heap_sort_desc(c, n, false);
}

void sample_sort_by_p(struct sample_cand *c, uint32_t n)
{
	heap_sort_desc(c, n, true);
}

void sample_sort_list(struct sampler *s)
{
	if (!s->sorted)
		heap_sort_desc(s->cand, s->n_cand, false);
	s->sorted = true;
}

/* A min-heap of size k over the list keeps the k best; sorted at the end. */
void sample_select_top_k(struct sampler *s, uint32_t k)
{
	struct sample_cand *c = s->cand;

	if (!s->sorted) {
		for (uint32_t i = k / 2; i-- > 0;)
			sift_down(c, i, k, false);
		for (uint32_t i = k; i < s->n_cand; i++) {
			if (cand_before(&c[0], &c[i], false)) {
				c[0] = c[i];
				sift_down(c, 0, k, false);
			}
		}
		heap_sort_desc(c, k, false);
	}
	s->n_cand = k;
	s->sorted = true;
}

void sample_keep_argmax(struct sampler *s)
{
	uint32_t best = 0;

	for (uint32_t i = 1; i < s->n_cand; i++)
		if (cand_before(&s->cand[best], &s->cand[i], false))
			best = i;
	s->cand[0] = s->cand[best];
	s->n_cand = 1;
	s->sorted = true;
}

void sample_softmax(struct sampler *s)
{
	struct sample_cand *c = s->cand;
	float sum = 0.0f;

	sample_sort_list(s);
	for (uint32_t i = 0; i < s->n_cand; i++) {
		c[i].p = math_expf(c[i].logit - c[0].logit);
		sum += c[i].p;
	}
	for (uint32_t i = 0; i < s->n_cand; i++)
		c[i].p /= sum;
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
static bool step_active(const struct sampler *s, enum sample_step st)
{
	const struct sample_params *p = &s->par;

	switch (st) {
	case SAMPLE_PENALTIES:
		return p->repeat_last_n && (p->repeat_penalty != 1.0f || p->frequency_penalty != 0.0f ||
					    p->presence_penalty != 0.0f);
	case SAMPLE_DRY:
		return p->dry_multiplier != 0.0f && p->dry_base >= 1.0f && p->dry_last_n != 0;
	case SAMPLE_TYPICAL:
		return p->typical < 1.0f;
	case SAMPLE_XTC:
		return p->xtc_probability > 0.0f && p->xtc_threshold <= 0.5f;
	default:
		return true;
	}
}

/* Steps that may only drop tokens other than the most likely one: a greedy
 * run skips them when no step after them could change its argmax. */
static bool step_keeps_argmax(enum sample_step st)
{
	return st == SAMPLE_TOP_N_SIGMA || st == SAMPLE_TOP_K || st == SAMPLE_TOP_P ||
	       st == SAMPLE_MIN_P || st == SAMPLE_TEMPERATURE;
}

static void run_step(struct sampler *s, enum sample_step st)
{
	const struct sample_params *p = &s->par;

	switch (st) {
	case SAMPLE_PENALTIES:
		sample_apply_penalties(s);
		break;
	case SAMPLE_DRY:
		sample_dry(s);
		break;
	case SAMPLE_TOP_N_SIGMA:
		sample_top_n_sigma(s, p->top_nsigma);
		break;
	case SAMPLE_TOP_K:
		sample_top_k(s, p->top_k);
		break;
	case SAMPLE_TYPICAL:
		sample_typical(s, p->typical);
		break;
	case SAMPLE_TOP_P:
		sample_top_p(s, p->top_p);
		break;
	case SAMPLE_MIN_P:
		sample_min_p(s, p->min_p);
		break;
	case SAMPLE_XTC:
		sample_xtc(s);
		break;
	case SAMPLE_TEMPERATURE:
		sample_temperature(s);
		break;
	case SAMPLE_N_STEPS:
		break;
	}
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
			if (!step_keeps_argmax(p->order[i]) && step_active(s, p->order[i]))
				n = i + 1;
	}
	for (uint32_t i = 0; i < n; i++)
		run_step(s, (enum sample_step)p->order[i]);
	if (greedy) {
		sample_keep_argmax(s);
		return s->cand[0].id;
	}
	return s->cand[draw(s)].id;
}
