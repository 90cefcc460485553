/*
 * llm/sample_rep.c — the steps that look at which tokens came before: the
 * logit bias (first in the chain, while the list is indexed by token id),
 * the repetition penalties and DRY.
 *
 * Both penalties count into s->tally (one entry per vocabulary token) and
 * put it back to zero before they return, so the tally costs nothing between
 * steps and they work on the list in any order.
 */
#include "sample_int.h"
#include "math.h"

/* llama.cpp's logit bias sampler: first, on the list indexed by id. */
void sample_apply_bias(struct sampler *s)
{
	for (uint32_t i = 0; i < s->par.n_bias; i++)
		if (s->par.bias[i].id < s->n_cand && s->cand[s->par.bias[i].id].id == s->par.bias[i].id)
			s->cand[s->par.bias[i].id].logit += s->par.bias[i].bias;
	s->sorted = false;
}

/*
 * llama.cpp llama_sampler_penalties_apply: for each token that occurs c > 0
 * times in the last repeat_last_n: logit <= 0 ? logit * repeat : logit /
 * repeat, then logit -= c * frequency + presence.
 */
void sample_apply_penalties(struct sampler *s)
{
	const struct sample_params *p = &s->par;
	uint32_t w = p->repeat_last_n < s->hist_len ? p->repeat_last_n : s->hist_len;
	struct sample_cand *c = s->cand;

	if (!w || (p->repeat_penalty == 1.0f && p->frequency_penalty == 0.0f &&
		   p->presence_penalty == 0.0f))
		return;
	for (uint32_t i = 0; i < w; i++) {
		uint32_t t = sample_hist_at(s, i);
		if (t < s->n_vocab)
			s->tally[t]++;
	}
	for (uint32_t i = 0; i < s->n_cand; i++) {
		float n = (float)s->tally[c[i].id];
		if (n == 0.0f)
			continue;
		if (c[i].logit <= 0.0f)
			c[i].logit *= p->repeat_penalty;
		else
			c[i].logit /= p->repeat_penalty;
		c[i].logit -= n * p->frequency_penalty + p->presence_penalty;
	}
	for (uint32_t i = 0; i < w; i++) {
		uint32_t t = sample_hist_at(s, i);
		if (t < s->n_vocab)
			s->tally[t] = 0;
	}
	s->sorted = false;
}

/* ---- DRY ---- */
static bool is_breaker(const struct sampler *s, uint32_t id)
{
	return id < s->n_vocab && (s->breaker[id >> 3] >> (id & 7) & 1);
}

void sample_dry_breaker(struct sampler *s, uint32_t id, const char *text, size_t n)
{
	if (id >= s->n_vocab)
		return;
	for (size_t i = 0; i < n; i++)
		for (const char *b = SAMPLE_DRY_BREAKERS; *b; b++)
			if (text[i] == *b)
				s->breaker[id >> 3] |= (uint8_t)(1u << (id & 7));
}

/*
 * Read the last n tokens backwards, r[j] = the j-th most recent, and find
 * for every k the length z[k] of the longest common prefix of r and r[k..]:
 * the longest run of tokens ending k tokens back that equals the run ending
 * now. The Z-algorithm (Gusfield 1997, §1.4) does it in O(n): [l, r) is the
 * box r[l..r) == r[0..r-l) that reaches furthest, inside which z[k - l]
 * already says how far the match goes.
 */
static void dry_z(struct sampler *s, uint32_t n)
{
	uint32_t *z = s->zbuf, l = 0, r = 0;

	z[0] = n;
	for (uint32_t k = 1; k < n; k++) {
		uint32_t m = 0;
		if (k < r) {
			m = z[k - l];
			if (m > r - k)
				m = r - k;
		}
		while (k + m < n && sample_hist_at(s, m) == sample_hist_at(s, k + m))
			m++;
		z[k] = m;
		if (k + m > r) {
			l = k;
			r = k + m;
		}
	}
}

/*
 * DRY, "don't repeat yourself" (p-e-w, text-generation-webui #5677; llama.cpp
 * llama_sampler_dry_apply). Over the last dry_last_n tokens (-1: all the run
 * has), a token that would extend a repeat of len >= dry_allowed_length
 * tokens (the run ending now also occurred before and was followed by it)
 * loses dry_multiplier * dry_base^(len - dry_allowed_length) from its
 * logit, len the longest such repeat. Repeats do not reach back past the
 * most recent sequence breaker, and a breaker is never penalised.
 */
void sample_dry(struct sampler *s)
{
	const struct sample_params *p = &s->par;
	uint32_t n = s->hist_len, lim, allowed = p->dry_allowed_length, max_exp = 0;

	if (p->dry_multiplier == 0.0f || p->dry_base < 1.0f || p->dry_last_n == 0)
		return;
	if (p->dry_last_n > 0 && (uint32_t)p->dry_last_n < n)
		n = (uint32_t)p->dry_last_n;
	if (n <= allowed)
		return;
	lim = n;
	for (uint32_t i = 0; i < n; i++) {
		if (is_breaker(s, sample_hist_at(s, i))) {
			lim = i;
			break;
		}
	}
	if (lim < allowed)
		return;
	dry_z(s, n);
	/* r[k - 1] followed the run ending at r[k]: the longest per token, + 1 in the tally */
	for (uint32_t k = 1; k < n; k++) {
		uint32_t len = s->zbuf[k] < lim ? s->zbuf[k] : lim, t = sample_hist_at(s, k - 1);
		if (len >= allowed && t < s->n_vocab && s->tally[t] < len + 1)
			s->tally[t] = len + 1;
	}
	/* llama.cpp clamps the exponent so that base^exp stays below FLT_MAX */
	if (p->dry_base > 1.000001f)
		max_exp = (uint32_t)(88.7228391f / math_logf(p->dry_base));
	for (uint32_t i = 0; i < s->n_cand; i++) {
		uint32_t id = s->cand[i].id, t = s->tally[id], e;
		if (!t || is_breaker(s, id))
			continue;
		e = t - 1 - allowed;
		if (max_exp && e > max_exp)
			e = max_exp;
		s->cand[i].logit -= p->dry_multiplier * math_powf(p->dry_base, (float)e);
	}
	for (uint32_t k = 1; k < n; k++) {
		uint32_t t = sample_hist_at(s, k - 1);
		if (t < s->n_vocab)
			s->tally[t] = 0;
	}
	s->sorted = false;
}
