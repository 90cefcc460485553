/*
 * llm/sample_cut.c — the steps that cut the candidate list or rescale it:
 * top-n-sigma, top-k, typical, top-p, min-p, XTC, temperature. Each follows
 * llama.cpp's sampler of the same name (src/llama-sampling.cpp) with
 * min_keep 0, except that a token a step rules out leaves the list (where
 * llama.cpp sometimes keeps it with a logit of -inf, which a later step
 * would count).
 */
#include "sample_int.h"
#include "math.h"

/*
 * Top-n-sigma (Tang et al. 2024, "Top-nsigma: not all logits are you
 * need"): keep the tokens whose logit is at least max - n * sigma, sigma the
 * standard deviation of the (finite) logits. The list keeps its order.
 */
void sample_top_n_sigma(struct sampler *s, float n)
{
	struct sample_cand *c = s->cand;
	double sum = 0, acc = 0, mean, lim;
	float max = 0.0f;
	uint32_t valid = 0, k = 0;

	if (n <= 0.0f || s->n_cand <= 1)
		return;
	for (uint32_t i = 0; i < s->n_cand; i++) {
		if (math_isinf(c[i].logit) && c[i].logit < 0)
			continue;
		if (!valid || c[i].logit > max)
			max = c[i].logit;
		sum += c[i].logit;
		valid++;
	}
	if (!valid)
		return;
	mean = sum / valid;
	for (uint32_t i = 0; i < s->n_cand; i++)
		if (!(math_isinf(c[i].logit) && c[i].logit < 0))
			acc += (c[i].logit - mean) * (c[i].logit - mean);
	lim = (double)max - (double)n * math_sqrtf((float)(acc / valid));
	for (uint32_t i = 0; i < s->n_cand; i++)
		if ((double)c[i].logit >= lim)
			c[k++] = c[i];
	s->n_cand = k;
}

void sample_top_k(struct sampler *s, uint32_t k)
{
	if (k == 0 || k >= s->n_cand) {
		sample_sort_list(s);
		return;
	}
	sample_select_top_k(s, k);
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
 * their surprise -ln p is from the entropy, keep the closest ones until
 * their probability passes p (llama.cpp: strictly more than p). The ranking
 * key lives in the p field while sorting, so the logits stay as they were.
 */
void sample_typical(struct sampler *s, float p)
{
	struct sample_cand *c = s->cand;
	float ent = 0.0f, cum = 0.0f, top, sum = 0.0f;
	uint32_t n;

	if (p >= 1.0f || s->n_cand < 2)
		return;
	sample_softmax(s);
	top = c[0].logit;
	for (uint32_t i = 0; i < s->n_cand; i++) {
		if (c[i].p > 0.0f)
			ent -= c[i].p * math_logf(c[i].p);
		sum += math_expf(c[i].logit - top);
	}
	for (uint32_t i = 0; i < s->n_cand; i++) {
		float d = c[i].p > 0.0f ? -math_logf(c[i].p) - ent : 1e30f;
		c[i].p = -(d < 0.0f ? -d : d); /* the closest first in a descending sort */
	}
	sample_sort_by_p(c, s->n_cand);
	n = s->n_cand;
	for (uint32_t i = 0; i < s->n_cand; i++) {
		cum += math_expf(c[i].logit - top) / sum;
		if (cum > p) {
			n = i + 1;
			break;
		}
	}
	s->n_cand = n;
	for (uint32_t i = 0; i < n; i++)
		c[i].p = math_expf(c[i].logit - top) / sum;
	s->sorted = false;
}

/*
 * XTC, "exclude top choices" (llama.cpp llama_sample_xtc_apply): with
 * probability xtc_probability, and only when at least two tokens have a
 * probability >= xtc_threshold, remove all of those but the least likely
 * one. A threshold above 0.5 cannot have two such tokens: off.
 */
void sample_xtc(struct sampler *s)
{
	const struct sample_params *p = &s->par;
	uint32_t above = 0;

	if (p->xtc_probability <= 0.0f || p->xtc_threshold > 0.5f || s->n_cand < 2)
		return;
	if (sample_rng_float(&s->rng) > p->xtc_probability)
		return;
	sample_softmax(s);
	while (above < s->n_cand && s->cand[above].p >= p->xtc_threshold)
		above++;
	if (above < 2)
		return;
	memmove(s->cand, s->cand + above - 1, (s->n_cand - above + 1) * sizeof *s->cand);
	s->n_cand -= above - 1;
}

/*
 * Temperature (llama.cpp temp_ext): logits / temp; temp <= 0 keeps only the
 * most likely token. With dynatemp_range > 0 the temperature follows the
 * list's entropy H (Dynamic Temperature, kalomaze):
 *   t = lo + (hi - lo) * (H / ln n)^dynatemp_exp,
 *   lo = max(0, temp - range), hi = temp + range, n the candidates.
 */
void sample_temperature(struct sampler *s)
{
	const struct sample_params *p = &s->par;
	float t = p->temp;

	if (t <= 0.0f) {
		sample_keep_argmax(s);
		return;
	}
	if (p->dynatemp_range > 0.0f) {
		float lo = t - p->dynatemp_range > 0.0f ? t - p->dynatemp_range : 0.0f;
		float hi = t + p->dynatemp_range, ent = 0.0f;
		if (s->n_cand <= 1)
			return;
		sample_softmax(s);
		for (uint32_t i = 0; i < s->n_cand; i++)
			if (s->cand[i].p > 0.0f)
				ent -= s->cand[i].p * math_logf(s->cand[i].p);
		t = lo + (hi - lo) * math_powf(ent / math_logf((float)s->n_cand), p->dynatemp_exp);
		if (!(t > 0.0f)) {
			sample_keep_argmax(s);
			return;
		}
	}
	for (uint32_t i = 0; i < s->n_cand; i++)
		s->cand[i].logit /= t;
	s->sorted = false; /* rounding may tie two logits: sort again */
}
