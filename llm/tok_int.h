/*
 * llm/tok_int.h — what the tokenizer's files share (not for other modules).
 */
#ifndef LLM_TOK_INT_H
#define LLM_TOK_INT_H

#include "tok.h"
#include "unicode.h"

/* Where encoded ids go: counts past cap so the caller learns the size. */
struct tok_out {
	int32_t *ids;
	size_t cap;
	size_t n;
};

static inline void tok_emit(struct tok_out *o, int32_t id)
{
	if (o->n < o->cap)
		o->ids[o->n] = id;
	o->n++;
}

/* FNV-1a, streamable: hash(a || b) == tok_hash(tok_hash(FNV0, a), b). */
#define TOK_FNV0 2166136261u
static inline uint32_t tok_hash(uint32_t h, const void *p, size_t n)
{
	const uint8_t *s = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 16777619u;
	return h;
}

/*
 * The merge queue (tok_heap.c): adjacent symbols left and right, queued
 * when together they were size bytes (stale once that changed), taken
 * lowest prio first, ties to the leftmost. BPE queues the merge's rank,
 * SPM the token's score negated (the highest score first): a double holds
 * both exactly and orders them as before.
 */
struct tok_pair {
	int32_t left, right;
	double prio;
	uint32_t size;
};
struct tok_heap {
	struct tok_pair *v; /* room for every push the caller makes */
	size_t n;
};
void tok_heap_push(struct tok_heap *h, struct tok_pair p);
struct tok_pair tok_heap_pop(struct tok_heap *h); /* h->n > 0 */

/* Rank of the merge "l r", or -1. */
int32_t tok_merge_rank(const struct tok *t, const char *l, size_t ll, const char *r, size_t rl);

/* Encoders for one run of plain text (no special tokens in it); scratch from a. */
int tok_spm_encode(const struct tok *t, const char *text, size_t n, struct llm_arena *a,
		   struct tok_out *o);
int tok_bpe_encode(const struct tok *t, const char *text, size_t n, struct llm_arena *a,
		   struct tok_out *o);

/*
 * Pre-tokenizer: split n code points (cp, with their uni_class bytes cls)
 * into words. tmp must hold n entries. Returns the word count; the word
 * lengths (in code points, in order) are in *words (which points into len
 * or tmp).
 */
size_t tok_pre_split(enum tok_pre pre, const uint32_t *cp, const uint8_t *cls, size_t n,
		     uint32_t *len, uint32_t *tmp, uint32_t **words);

#endif
