/*
 * llm/sample.c — the sampling chain (see sample.h for the order).
 *
 * Each step works on the candidate list s->cand[0..n_cand). Penalties and
 * bias run while the list is still indexed by token id (cand[i].id == i);
 * the filters after them sort it by logit and cut its tail.
 */
#include "sample.h"
#include "math.h"

void sample_defaults(struct sample_params *p)
{
	memset(p, 0, sizeof *p);
	p->temp = 0.8f;
	p->top_k = 40;
	p->top_p = 0.95f;
	p->min_p = 0.05f;
	p->typical = 1.0f;
	p->repeat_penalty = 1.0f;
	p->repeat_last_n = 64;
	p->mirostat_tau = 5.0f;
	p->mirostat_eta = 0.1f;
	p->seed = SAMPLE_SEED_RANDOM;
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

/* ---- setup ---- */
int sample_init(struct sampler *s, struct llm_mem *mem, uint32_t n_vocab,
		const struct sample_params *p)
{
	int err = 0;

	memset(s, 0, sizeof *s);
	s->mem = mem;
	s->n_vocab = n_vocab;
	s->cand = llm_mem_alloc(mem, (size_t)n_vocab * sizeof *s->cand, &err);
	if (!s->cand)
		return err;
	return sample_reset(s, p);
}

void sample_free(struct sampler *s)
{
	if (s->cand)
		llm_mem_free(s->mem, s->cand, (size_t)s->n_vocab * sizeof *s->cand);
	if (s->hist)
		llm_mem_free(s->mem, s->hist, (size_t)s->hist_cap * sizeof *s->hist);
	memset(s, 0, sizeof *s);
}

void sample_zeroize(struct sampler *s)
{
	llm_mem_zeroize(s->cand, (size_t)s->n_vocab * sizeof *s->cand);
	llm_mem_zeroize(s->hist, (size_t)s->hist_cap * sizeof *s->hist);
	llm_mem_zeroize(&s->rng, sizeof s->rng);
	llm_mem_zeroize(&s->par, sizeof s->par); /* the seed, stop-free params; reset at the next run */
	s->mu = 0;
	s->n_cand = s->hist_len = s->hist_head = 0;
}

int sample_reset(struct sampler *s, const struct sample_params *p)
{
	int err = 0;

	s->par = *p;
	sample_rng_seed(&s->rng, p->seed);
	s->mu = 2.0f * p->mirostat_tau;
	s->hist_len = s->hist_head = 0;
	if (p->repeat_last_n != s->hist_cap) {
		if (s->hist)
			llm_mem_free(s->mem, s->hist, (size_t)s->hist_cap * sizeof *s->hist);
		s->hist = NULL;
		s->hist_cap = 0;
		if (p->repeat_last_n) {
			s->hist = llm_mem_alloc(s->mem, (size_t)p->repeat_last_n * sizeof *s->hist,
						&err);
			if (!s->hist)
				return err;
			s->hist_cap = p->repeat_last_n;
		}
	}
	return 0;
}

void sample_accept(struct sampler *s, uint32_t id)
{
	if (!s->hist_cap)
		return;
	s->hist[s->hist_head] = id;
	s->hist_head = (s->hist_head + 1) % s->hist_cap;
	if (s->hist_len < s->hist_cap)
		s->hist_len++;
}

/* ---- penalties and bias (candidates still indexed by id) ---- */

/*
 * llama.cpp llama_sampler_penalties_apply: for each distinct token of the
 * window with count c: logit <= 0 ? logit * repeat : logit / repeat, then
 * logit -= c * frequency + presence. The p field counts occurrences.
 */
void sample_apply_penalties(struct sampler *s)
{
	const struct sample_params *p = &s->par;
	struct sample_cand *c = s->cand;

	if (!s->hist_len || (p->repeat_penalty == 1.0f && p->frequency_penalty == 0.0f &&
			     p->presence_penalty == 0.0f))
		return;
	for (uint32_t i = 0; i < s->hist_len; i++)
		if (s->hist[i] < s->n_cand)
			c[s->hist[i]].p += 1.0f;
	for (uint32_t i = 0; i < s->hist_len; i++) {
		uint32_t id = s->hist[i];
		if (id >= s->n_cand || c[id].p == 0.0f)
			continue;
		float n = c[id].p;
		c[id].p = 0.0f;
		if (c[id].logit <= 0.0f)
			c[id].logit *= p->repeat_penalty;
		else
			c[id].logit /= p->repeat_penalty;
		c[id].logit -= n * p->frequency_penalty + p->presence_penalty;
	}
}

void sample_apply_bias(struct sampler *s)
{
	for (uint32_t i = 0; i < s->par.n_bias; i++)
		if (s->par.bias[i].id < s->n_cand)
			s->cand[s->par.bias[i].id].logit += s->par.bias[i].bias;
}

/* ---- sorting: heap sort by logit, descending (no libc qsort) ---- */
static int cand_before(const struct sample_cand *a, const struct sample_cand *b)
{
	/* ties go to the lower id, so results do not depend on the input order */
	return a->logit < b->logit || (a->logit == b->logit && a->id > b->id);
}

static void sift_down(struct sample_cand *c, uint32_t i, uint32_t n)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		if (l < n && cand_before(&c[l], &c[m]))
			m = l;
		if (l + 1 < n && cand_before(&c[l + 1], &c[m]))
			m = l + 1;
		if (m == i)
			return;
		struct sample_cand t = c[i];
		c[i] = c[m];
		c[m] = t;
		i = m;
	}
}

/* Min-heap on "before" keeps the k best at the top-level; popping them in
 * turn to the back leaves the array sorted best first. */
static void heap_sort_desc(struct sample_cand *c, uint32_t n)
{
	for (uint32_t i = n / 2; i-- > 0;)
		sift_down(c, i, n);
	for (uint32_t end = n; end > 1; end--) {
		struct sample_cand t = c[0];
		c[0] = c[end - 1];
		c[end - 1] = t;
		sift_down(c, 0, end - 1);
	}
}

void sample_sort(struct sample_cand *c, uint32_t n)
{
	heap_sort_desc(c, n);
}

/* The k best, sorted, in c[0..k): a min-heap of size k over the list. */
static void select_top_k(struct sample_cand *c, uint32_t n, uint32_t k)
{
	for (uint32_t i = k / 2; i-- > 0;)
		sift_down(c, i, k);
	for (uint32_t i = k; i < n; i++) {
		if (cand_before(&c[0], &c[i])) {
			c[0] = c[i];
			sift_down(c, 0, k);
		}
	}
	heap_sort_desc(c, k);
}

void sample_softmax(struct sampler *s)
{
	struct sample_cand *c = s->cand;
	float sum = 0.0f;

	sample_sort(c, s->n_cand);
	for (uint32_t i = 0; i < s->n_cand; i++) {
		c[i].p = math_expf(c[i].logit - c[0].logit);
		sum += c[i].p;
	}
	for (uint32_t i = 0; i < s->n_cand; i++)
		c[i].p /= sum;
}

/* ---- filters ---- */
void sample_top_k(struct sampler *s, uint32_t k)
{
	if (k == 0 || k >= s->n_cand) {
		sample_sort(s->cand, s->n_cand);
		return;
	}
	select_top_k(s->cand, s->n_cand, k);
	s->n_cand = k;
}

/* Keep the shortest prefix whose probability reaches p (llama.cpp top_p). */
void sample_top_p(struct sampler *s, float p)
{
	float cum = 0.0f;

	if (p >= 1.0f)
		return;
	sample_softmax(s);
	for (uint32_t i = 0; i < s->n_cand; i++) {
		cum += s->cand[i].p;
		if (cum >= p) {
			s->n_cand = i + 1;
			return;
		}
	}
}

/* Keep tokens with probability >= p * the best one's. */
void sample_min_p(struct sampler *s, float p)
{
	if (p <= 0.0f || s->n_cand == 0)
		return;
	sample_softmax(s);
	float lim = p * s->cand[0].p;
	uint32_t n = 1;
	while (n < s->n_cand && s->cand[n].p >= lim)
		n++;
	s->n_cand = n;
}

/*
 * Locally typical sampling (Meister et al. 2022): rank tokens by how far
 * their surprise -log p is from the entropy, keep the closest ones until
 * their probability reaches p.
 */
void sample_typical(struct sampler *s, float p)
{
	struct sample_cand *c = s->cand;
	float ent = 0.0f, cum = 0.0f;

	if (p >= 1.0f || s->n_cand < 2)
		return;
	sample_softmax(s);
	for (uint32_t i = 0; i < s->n_cand; i++)
		if (c[i].p > 0.0f)
			ent -= c[i].p * math_logf(c[i].p);
	/* Sort by distance via the logit field: a copy keeps the real logits. */
	for (uint32_t i = 0; i < s->n_cand; i++) {
		float d = (c[i].p > 0.0f ? -math_logf(c[i].p) : 1e30f) - ent;
		float ad = d < 0.0f ? -d : d;
		/* store -distance so the descending sort puts the closest first;
		 * the real logit is recovered from p below */
		c[i].logit = -ad;
	}
	sample_sort(c, s->n_cand);
	uint32_t n = s->n_cand;
	for (uint32_t i = 0; i < s->n_cand; i++) {
		cum += c[i].p;
		if (cum >= p) {
			n = i + 1;
			break;
		}
	}
	s->n_cand = n;
	/* log p differs from the logit by a constant: softmax sees the same */
	for (uint32_t i = 0; i < n; i++)
		c[i].logit = c[i].p > 0.0f ? math_logf(c[i].p) : -1e30f;
}

static void apply_temp(struct sampler *s, float t)
{
	for (uint32_t i = 0; i < s->n_cand; i++)
		s->cand[i].logit /= t;
}

/* Draw from the softmax of the remaining candidates. */
static uint32_t draw(struct sampler *s)
{
	float r, cum = 0.0f;

	sample_softmax(s);
	r = sample_rng_float(&s->rng);
	for (uint32_t i = 0; i < s->n_cand; i++) {
		cum += s->cand[i].p;
		if (r < cum)
			return s->cand[i].id;
	}
	return s->cand[s->n_cand - 1].id;
}

/*
 * Mirostat v2 (Basu et al. 2021, algorithm 2; llama.cpp mirostat_v2): drop
 * tokens whose surprise -log2 p exceeds mu, draw, then move mu toward the
 * target tau by the observed error.
 */
static uint32_t mirostat2(struct sampler *s)
{
	struct sample_cand *c = s->cand;
	uint32_t n = 0, id;
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
	id = draw(s);
	for (uint32_t i = 0; i < s->n_cand; i++) {
		if (c[i].id == id) {
			float surprise = -math_logf(c[i].p) * 1.44269504f;
			s->mu -= s->par.mirostat_eta * (surprise - s->par.mirostat_tau);
			break;
		}
	}
	return id;
}

uint32_t sample_next(struct sampler *s, const float *logits)
{
	const struct sample_params *p = &s->par;

	for (uint32_t i = 0; i < s->n_vocab; i++) {
		s->cand[i].id = i;
		s->cand[i].logit = logits[i];
		s->cand[i].p = 0.0f;
	}
	s->n_cand = s->n_vocab;
	sample_apply_penalties(s);
	sample_apply_bias(s);

	if (p->temp <= 0.0f) {
		uint32_t best = 0;
		for (uint32_t i = 1; i < s->n_cand; i++)
			if (s->cand[i].logit > s->cand[best].logit)
				best = i;
		return s->cand[best].id;
	}
	if (p->mirostat == 2) {
		apply_temp(s, p->temp);
		return mirostat2(s);
	}
	sample_top_k(s, p->top_k);
	sample_top_p(s, p->top_p);
	sample_min_p(s, p->min_p);
	sample_typical(s, p->typical);
	apply_temp(s, p->temp);
	return draw(s);
}
