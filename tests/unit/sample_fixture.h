/* tests/unit/sample_fixture.h — a sampler over a small vocabulary, for the
 * test_sample*.c files. */
#ifndef SAMPLE_FIXTURE_H
#define SAMPLE_FIXTURE_H

#include "test.h"
#include "../../llm/sample.h"
#include "../../llm/math.h"

#define FIX_CTX 64 /* context positions of a fixture's sampler */

struct fix {
	struct sampler s;
	struct llm_mem mem;
	struct sample_params p;
};

/* llama.cpp's defaults, every filter off: only what a test sets acts. */
static inline void fix_params(struct sample_params *p)
{
	sample_defaults(p);
	p->top_k = 0;
	p->top_p = 1.0f;
	p->min_p = 0.0f;
	p->temp = 1.0f;
	p->seed = 1;
}

static inline void fix_init(struct fix *f, uint32_t n_vocab)
{
	llm_mem_init(&f->mem, 0);
	CHECK_EQ_INT(sample_init(&f->s, &f->mem, n_vocab, FIX_CTX, &f->p), 0);
}

/* The candidate list as sample_next starts it. */
static inline void fix_load(struct fix *f, const float *l)
{
	for (uint32_t i = 0; i < f->s.n_vocab; i++) {
		f->s.cand[i].id = i;
		f->s.cand[i].logit = l[i];
		f->s.cand[i].p = 0;
	}
	f->s.n_cand = f->s.n_vocab;
	f->s.sorted = false;
}

static inline void fix_free(struct fix *f)
{
	sample_free(&f->s);
	CHECK_EQ_INT(f->mem.used, 0);
}

static inline bool fix_kept(const struct fix *f, uint32_t id)
{
	for (uint32_t i = 0; i < f->s.n_cand; i++)
		if (f->s.cand[i].id == id)
			return true;
	return false;
}

/* The probability the list now gives id (softmax of what is left), 0 if cut. */
static inline double fix_prob(struct fix *f, uint32_t id)
{
	sample_softmax(&f->s);
	for (uint32_t i = 0; i < f->s.n_cand; i++)
		if (f->s.cand[i].id == id)
			return f->s.cand[i].p;
	return 0;
}

/* The logit the list now holds for id (NAN if cut). */
static inline double fix_logit(const struct fix *f, uint32_t id)
{
	for (uint32_t i = 0; i < f->s.n_cand; i++)
		if (f->s.cand[i].id == id)
			return f->s.cand[i].logit;
	return NAN;
}

#endif
