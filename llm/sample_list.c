/*
 * llm/sample_list.c — the tools every sampler step uses on the candidate
 * list: sorting (by logit or probability), the k best, the argmax, the
 * softmax, and the RNG (XTC's coin and the draw share it). It calls no
 * step: sample.c (the chain) and the steps (sample_cut.c, sample_rep.c)
 * call it.
 */
#include "sample_int.h"
#include "math.h"

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

