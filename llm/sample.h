/*
 * llm/sample.h — turning logits into the next token.
 *
 * The chain is llama.cpp's (common/sampling.cpp, its sampler names):
 *   logit bias -> the steps of par.order -> draw
 * with the default order (`--samplers`)
 *   penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature
 * and a step whose setting is "off" does nothing. temp <= 0 is greedy: the
 * argmax of what the chain leaves, no random draw. mirostat = 1 or 2 replaces
 * the steps with temperature then Mirostat (Basu et al. 2021, algorithms 1
 * and 2), as llama.cpp does (no penalties or DRY then either).
 *
 * The RNG is our own (xoshiro256**, seeded through splitmix64) so one seed
 * reproduces a run bit for bit on every platform; XTC's coin and the draw
 * share it.
 */
#ifndef LLM_SAMPLE_H
#define LLM_SAMPLE_H

#include "mem.h"

#define SAMPLE_MAX_BIAS 16
#define SAMPLE_SEED_RANDOM 0xffffffffffffffffull
#define SAMPLE_MAX_ORDER 16
/* Mirostat v1 estimates the Zipf exponent from the m most likely tokens;
 * llama.cpp passes m = 100 (the paper's value). */
#define SAMPLE_MIROSTAT_M 100
/* DRY's sequence breakers, llama.cpp's defaults: a token whose text holds
 * one of these characters ends a repeat (and is never penalised). */
#define SAMPLE_DRY_BREAKERS "\n:\"*"

struct sample_bias {
	uint32_t id;
	float bias; /* added to the logit; -inf bans the token */
};

/* The steps of the chain, llama.cpp's common_sampler_type. */
enum sample_step {
	SAMPLE_PENALTIES,
	SAMPLE_DRY,
	SAMPLE_TOP_N_SIGMA,
	SAMPLE_TOP_K,
	SAMPLE_TYPICAL,
	SAMPLE_TOP_P,
	SAMPLE_MIN_P,
	SAMPLE_XTC,
	SAMPLE_TEMPERATURE,
	SAMPLE_N_STEPS,
};

struct sample_params {
	float temp;              /* <= 0: greedy */
	float dynatemp_range;    /* 0: off; else temp +- range by the entropy */
	float dynatemp_exp;      /* how the normalised entropy maps into that range */
	uint32_t top_k;          /* 0: off */
	float top_p;             /* >= 1: off */
	float min_p;             /* <= 0: off */
	float typical;           /* >= 1: off */
	float top_nsigma;        /* <= 0: off; keep logits >= max - n * sigma */
	float xtc_probability;   /* 0: off; chance that XTC cuts this token */
	float xtc_threshold;     /* > 0.5: off */
	float repeat_penalty;    /* 1: off; divides positive logits, multiplies negative */
	uint32_t repeat_last_n;  /* window of the penalties; 0: off */
	float presence_penalty;  /* subtracted once if the token is in the window */
	float frequency_penalty; /* subtracted per occurrence in the window */
	float dry_multiplier;    /* 0: off */
	float dry_base;          /* < 1: off */
	uint32_t dry_allowed_length; /* repeats this long are free */
	int dry_last_n;          /* window of DRY; -1: the whole context; 0: off */
	int mirostat;            /* 0, 1 or 2 */
	float mirostat_tau;      /* target surprise (bits) */
	float mirostat_eta;      /* learning rate */
	uint64_t seed;           /* SAMPLE_SEED_RANDOM: the engine draws one per run */
	uint8_t order[SAMPLE_MAX_ORDER]; /* enum sample_step, run in this order */
	uint32_t n_order;
	uint32_t n_bias;
	struct sample_bias bias[SAMPLE_MAX_BIAS];
};

/* llama.cpp's defaults (common/common.h): temp 0.8, top-k 40, top-p 0.95,
 * min-p 0.05, repeat penalty 1.0 over 64, DRY off (base 1.75, allowed
 * length 2, window -1), XTC off (threshold 0.1), top-n-sigma off, dynamic
 * temperature off (exponent 1), mirostat tau 5, eta 0.1, the order above. */
void sample_defaults(struct sample_params *p);

/*
 * The order from llama.cpp's --samplers text: names separated by ';'
 * (llama.cpp's names: penalties dry top_n_sigma top_k typ_p top_p min_p xtc
 * temperature, and its other spellings: top-k, nucleus, typical, temp, ...),
 * or its one-letter form ("edskypmxt"). Returns 0, or -LLMK_EINVAL with
 * *bad, *bad_len naming the item that is not a sampler, or -LLMK_ERANGE for
 * more than SAMPLE_MAX_ORDER steps; p is changed only on success.
 */
int sample_order_parse(struct sample_params *p, const char *text, const char **bad,
		       size_t *bad_len);
/* The order as names joined by ';', or as letters if the names do not fit
 * in cap. Always NUL-terminated (cap > 0). */
void sample_order_format(const struct sample_params *p, char *buf, size_t cap);
const char *sample_step_name(enum sample_step st);

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
	bool sorted;               /* cand[0..n_cand) is in descending logit order */
	uint32_t *tally;           /* n_vocab, zero between steps: per-token counts */
	uint8_t *breaker;          /* n_vocab bits: DRY's sequence breakers */
	uint32_t *hist;            /* ring of the last hist_cap accepted tokens */
	uint32_t *zbuf;            /* hist_cap: DRY's repeat lengths */
	uint32_t hist_cap, hist_len, hist_head;
	void *block;               /* all of the above, one allocation of block_bytes */
	size_t block_bytes;
	struct llm_mem *mem;
};

/* Bytes sample_init takes for a vocabulary and a context: the engine's
 * memory plan counts sample_bytes(n_vocab, 0) once and SAMPLE_POS_BYTES per
 * context position (the token history and DRY's repeat lengths). */
#define SAMPLE_POS_BYTES (2 * sizeof(uint32_t))
uint64_t sample_bytes(uint32_t n_vocab, uint32_t n_ctx);

/* Allocates the candidates, the history of n_ctx + 1 tokens (a run never
 * accepts more) and DRY's tables from mem. No token is a breaker yet. */
int sample_init(struct sampler *s, struct llm_mem *mem, uint32_t n_vocab, uint32_t n_ctx,
		const struct sample_params *p);
void sample_free(struct sampler *s);
/* Mark id as one of DRY's sequence breakers if its text (text[0..n), the
 * token's piece) holds a character of SAMPLE_DRY_BREAKERS. The engine calls
 * it for every token at load; the marks stay until sample_free. */
void sample_dry_breaker(struct sampler *s, uint32_t id, const char *text, size_t n);
/* Zeroize the candidates (last logits and probabilities), the token
 * history, DRY's tables, the RNG and mirostat state; the arrays stay
 * allocated (and the breaker marks, which come from the vocabulary). */
void sample_zeroize(struct sampler *s);
/* New parameters and a fresh RNG/history/mirostat state (start of a run). */
int sample_reset(struct sampler *s, const struct sample_params *p);
/* Remember a token for the penalties and DRY (prompt tokens and generated ones). */
void sample_accept(struct sampler *s, uint32_t id);
/* Choose the next token from logits[n_vocab]. logits is not modified. */
uint32_t sample_next(struct sampler *s, const float *logits);

/* The individual steps, over s->cand[0..n_cand) (exposed for tests). The
 * ones without a value argument read it from s->par. */
void sample_apply_bias(struct sampler *s);
void sample_apply_penalties(struct sampler *s);
void sample_dry(struct sampler *s);
void sample_sort(struct sample_cand *c, uint32_t n); /* by logit, descending */
void sample_softmax(struct sampler *s);              /* sorts, fills p */
void sample_top_n_sigma(struct sampler *s, float n);
void sample_top_k(struct sampler *s, uint32_t k);
void sample_typical(struct sampler *s, float p);
void sample_top_p(struct sampler *s, float p);
void sample_min_p(struct sampler *s, float p);
void sample_xtc(struct sampler *s);
void sample_temperature(struct sampler *s); /* temp with dynatemp */
void sample_mirostat1_top_k(struct sampler *s); /* v1's cut, before its draw */

#endif
