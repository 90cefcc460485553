/*
 * llm/sample.h — turning logits into the next token.
 *
 * The chain (DESIGN.md "Engine data flow", llama.cpp's sampler names):
 *   penalties (repeat / frequency / presence over the last N tokens)
 *   -> logit bias -> top-k -> top-p -> min-p -> typical -> temperature -> draw
 * temp <= 0 is greedy: the argmax after penalties and bias. mirostat = 2
 * replaces top-k..typical with Mirostat v2 (Basu et al. 2021, algorithm 2).
 *
 * The RNG is our own (xoshiro256**, seeded through splitmix64) so one seed
 * reproduces a run bit for bit on every platform.
 */
#ifndef LLM_SAMPLE_H
#define LLM_SAMPLE_H

#include "mem.h"

#define SAMPLE_MAX_BIAS 16
#define SAMPLE_SEED_RANDOM 0xffffffffffffffffull

struct sample_bias {
	uint32_t id;
	float bias; /* added to the logit; -inf bans the token */
};

struct sample_params {
	float temp;              /* <= 0: greedy */
	uint32_t top_k;          /* 0: off */
	float top_p;             /* >= 1: off */
	float min_p;             /* <= 0: off */
	float typical;           /* >= 1: off */
	float repeat_penalty;    /* 1: off; divides positive logits, multiplies negative */
	uint32_t repeat_last_n;  /* window of the penalties; 0: off */
	float presence_penalty;  /* subtracted once if the token is in the window */
	float frequency_penalty; /* subtracted per occurrence in the window */
	int mirostat;            /* 0 or 2 */
	float mirostat_tau;      /* target surprise (bits) */
	float mirostat_eta;      /* learning rate */
	uint64_t seed;           /* SAMPLE_SEED_RANDOM: the engine draws one per run */
	uint32_t n_bias;
	struct sample_bias bias[SAMPLE_MAX_BIAS];
};

/* llama.cpp's defaults (common/common.h): temp 0.8, top-k 40, top-p 0.95,
 * min-p 0.05, repeat penalty 1.0 over 64, mirostat tau 5, eta 0.1. */
void sample_defaults(struct sample_params *p);

struct sample_rng {
	uint64_t s[4];
};
void sample_rng_seed(struct sample_rng *r, uint64_t seed);
uint64_t sample_rng_next(struct sample_rng *r);
float sample_rng_float(struct sample_rng *r); /* uniform in [0, 1) */

struct sample_cand {
	uint32_t id;
	float logit;
	float p;
};

struct sampler {
	struct sample_params par;
	uint32_t n_vocab;
	struct sample_rng rng;
	float mu;                  /* mirostat state: 2 * tau at start */
	struct sample_cand *cand;  /* n_vocab */
	uint32_t n_cand;
	uint32_t *hist;            /* ring of the last repeat_last_n accepted tokens */
	uint32_t hist_cap, hist_len, hist_head;
	struct llm_mem *mem;
};

/* Allocates the candidate array and history from mem. */
int sample_init(struct sampler *s, struct llm_mem *mem, uint32_t n_vocab,
		const struct sample_params *p);
void sample_free(struct sampler *s);
/* Zeroize the candidates (last logits and probabilities), the token
 * history, the RNG and mirostat state; the arrays stay allocated. */
void sample_zeroize(struct sampler *s);
/* New parameters and a fresh RNG/history/mirostat state (start of a run). */
int sample_reset(struct sampler *s, const struct sample_params *p);
/* Remember a token for the penalties (prompt tokens and generated ones). */
void sample_accept(struct sampler *s, uint32_t id);
/* Choose the next token from logits[n_vocab]. logits is not modified. */
uint32_t sample_next(struct sampler *s, const float *logits);

/* The individual steps, over s->cand[0..n_cand) (exposed for tests). */
void sample_apply_penalties(struct sampler *s);
void sample_apply_bias(struct sampler *s);
void sample_sort(struct sample_cand *c, uint32_t n); /* by logit, descending */
void sample_softmax(struct sampler *s);              /* sorts, fills p */
void sample_top_k(struct sampler *s, uint32_t k);
void sample_top_p(struct sampler *s, float p);
void sample_min_p(struct sampler *s, float p);
void sample_typical(struct sampler *s, float p);

#endif
