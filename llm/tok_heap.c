/*
 * llm/tok_heap.c — the merge queue of both tokenizers (tok_int.h): a binary
 * min-heap of adjacent symbol pairs, lowest priority first and, on a tie,
 * the leftmost pair, as llama.cpp's llm_bigram_bpe / llm_bigram_spm
 * comparators order them.
 */
#include "tok_int.h"

static bool pair_before(const struct tok_pair *a, const struct tok_pair *b)
{
	return a->prio < b->prio || (a->prio == b->prio && a->left < b->left);
}

void tok_heap_push(struct tok_heap *h, struct tok_pair p)
{
	size_t i = h->n++;

	while (i > 0) {
		size_t up = (i - 1) / 2;
		if (!pair_before(&p, &h->v[up]))
			break;
		h->v[i] = h->v[up];
		i = up;
	}
	h->v[i] = p;
}

struct tok_pair tok_heap_pop(struct tok_heap *h)
{
	struct tok_pair top = h->v[0], last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && pair_before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!pair_before(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}
