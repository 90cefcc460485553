/*
 * llm/sample_int.h — what the sampler's files share (sample.c: state, the
 * table of steps, the chain and the draw; sample_cut.c: the steps that cut
 * or rescale the list; sample_rep.c: the steps that read the token history;
 * sample_list.c: sorting, the k best, the argmax, softmax and the RNG, which
 * the others call and which calls none of them).
 */
#ifndef LLM_SAMPLE_INT_H
#define LLM_SAMPLE_INT_H

#include "sample.h"

/* The i-th most recent accepted token (i < s->hist_len). */
static inline uint32_t sample_hist_at(const struct sampler *s, uint32_t i)
{
	uint32_t j = s->hist_head + s->hist_cap - 1 - i;
	return s->hist[j >= s->hist_cap ? j - s->hist_cap : j];
}

/* Sort the list by logit (descending, ties to the lower id) unless it is. */
void sample_sort_list(struct sampler *s);
/* The k best, sorted, in c[0..k), the list cut to them (k < n_cand). */
void sample_select_top_k(struct sampler *s, uint32_t k);
/* Keep only the most likely token (ties to the lower id). */
void sample_keep_argmax(struct sampler *s);
/* Sort by the p field, descending, ties to the lower id. */
void sample_sort_by_p(struct sample_cand *c, uint32_t n);

#endif
