/*
 * llm/quant_fill.c — pseudo-random valid blocks of every type (quant.h
 * quant_fill_random): test data, selftest input, benchmark weights and
 * tools/mkmodel's weights, written straight as blocks so a 7B-shaped model
 * costs no quantizer time.
 *
 * Sizing: quants are uniform, so a step d over W levels has standard
 * deviation d W / sqrt(12); each type picks d (and its sub-block scales) so
 * that the dequantized values come out with the standard deviation asked for.
 */
#include "quant.h"

#include "kernels/scalar/scalar.h"

#define SQRT12 3.4641016f

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull); /* splitmix64 */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static float rng_unit(uint64_t *s) /* [0, 1) */
{
	return (float)(rng_next(s) >> 40) * (1.0f / 16777216.0f);
}

static int rng_int(uint64_t *s, int lo, int hi) /* [lo, hi] */
{
	return lo + (int)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

static void rng_bytes(uint64_t *s, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t r = rng_next(s);
		memcpy(p + i, &r, n - i < 8 ? n - i : 8);
	}
}

/* A block scale near `d`, jittered by up to +-25%. */
static uint16_t rng_scale(uint64_t *s, float d)
{
	return q_f32_to_f16(d * (0.75f + 0.5f * rng_unit(s)));
}

/* The same with a random sign: symmetric types store q - 2^(b-1), whose mean
 * is -1/2; flipping half the scales cancels that bias. */
static uint16_t rng_sscale(uint64_t *s, float d)
{
	return rng_scale(s, rng_next(s) & 1 ? d : -d);
}

static void fill_floats(float *x, size_t n, float std, uint64_t *s)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (2.0f * rng_unit(s) - 1.0f) * std * 1.7320508f; /* uniform, sd = std */
}

static void fill_legacy(uint32_t t, uint8_t *p, size_t nb, float std, uint64_t *s)
{
	for (size_t i = 0; i < nb; i++) {
		switch (t) {
		case GGML_TYPE_Q4_0: {
			struct block_q4_0 *b = (void *)(p + i * sizeof *b);
			b->d = rng_sscale(s, std * SQRT12 / 16);
			rng_bytes(s, b->qs, sizeof b->qs);
			break;
		}
		case GGML_TYPE_Q4_1: {
			struct block_q4_1 *b = (void *)(p + i * sizeof *b);
			float d = std * SQRT12 / 16;
			b->d = rng_scale(s, d);
			b->m = q_f32_to_f16(-7.5f * d * (0.9f + 0.2f * rng_unit(s)));
			rng_bytes(s, b->qs, sizeof b->qs);
			break;
		}
		case GGML_TYPE_Q5_0: {
			struct block_q5_0 *b = (void *)(p + i * sizeof *b);
			b->d = rng_sscale(s, std * SQRT12 / 32);
			rng_bytes(s, b->qh, sizeof b->qh);
			rng_bytes(s, b->qs, sizeof b->qs);
			break;
		}
		case GGML_TYPE_Q5_1: {
			struct block_q5_1 *b = (void *)(p + i * sizeof *b);
			float d = std * SQRT12 / 32;
			b->d = rng_scale(s, d);
			b->m = q_f32_to_f16(-15.5f * d * (0.9f + 0.2f * rng_unit(s)));
			rng_bytes(s, b->qh, sizeof b->qh);
			rng_bytes(s, b->qs, sizeof b->qs);
			break;
		}
		case GGML_TYPE_Q8_0: {
			struct block_q8_0 *b = (void *)(p + i * sizeof *b);
			b->d = rng_sscale(s, std * SQRT12 / 255);
			rng_bytes(s, (uint8_t *)b->qs, sizeof b->qs);
			for (int j = 0; j < QK8_0; j++)
				if (b->qs[j] == -128)
					b->qs[j] = -127;
			break;
		}
		}
	}
}

/* Q4_K/Q5_K 6-bit scale/min packing (inverse of scale_min_k4 in q_k.c). */
static void pack_scale_min_k4(uint8_t *q, int j, int sc, int m)
{
	if (j < 4) {
		q[j] = (uint8_t)((q[j] & 0xc0) | sc);
		q[j + 4] = (uint8_t)((q[j + 4] & 0xc0) | m);
	} else {
		q[j + 4] = (uint8_t)((sc & 0xf) | (m & 0xf) << 4);
		q[j - 4] = (uint8_t)((q[j - 4] & 0x3f) | (sc >> 4) << 6);
		q[j] = (uint8_t)((q[j] & 0x3f) | (m >> 4) << 6);
	}
}

static void fill_q2_K(struct block_q2_K *b, float std, uint64_t *s)
{
	float d = std * SQRT12 / (4 * 11.5f);                /* sc in 8..15 */

	for (int j = 0; j < 16; j++)
		b->scales[j] = (uint8_t)(rng_int(s, 8, 15) | rng_int(s, 8, 15) << 4);
	b->d = rng_scale(s, d);
	b->dmin = q_f32_to_f16(1.5f * d);                    /* min ~ half the range */
	rng_bytes(s, b->qs, sizeof b->qs);
}

static void fill_q3_K(struct block_q3_K *b, float std, uint64_t *s)
{
	memset(b->scales, 0, sizeof b->scales);
	for (int j = 0; j < 16; j++) {
		/* stored +32: scales +-(8..31) */
		int l = rng_next(s) & 1 ? rng_int(s, 40, 63) : rng_int(s, 1, 24);
		if (j < 8)
			b->scales[j] |= (uint8_t)(l & 0xf);
		else
			b->scales[j - 8] |= (uint8_t)((l & 0xf) << 4);
		b->scales[8 + j % 4] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
	}
	b->d = rng_scale(s, std * SQRT12 / (8 * 19.5f));
	rng_bytes(s, b->hmask, sizeof b->hmask);
	rng_bytes(s, b->qs, sizeof b->qs);
}

static void fill_q45_K(uint8_t *scales, uint16_t *d, uint16_t *dmin, int levels, float std,
		       uint64_t *s)
{
	float dd = std * SQRT12 / (levels * 47.5f);         /* sc, m in 32..63 */

	memset(scales, 0, K_SCALE_SIZE);
	for (int j = 0; j < 8; j++)
		pack_scale_min_k4(scales, j, rng_int(s, 32, 63), rng_int(s, 32, 63));
	*d = rng_scale(s, dd);
	*dmin = q_f32_to_f16(dd * (levels - 1) * 0.5f);     /* centres q around 0 */
}

static void fill_q6_K(struct block_q6_K *b, float std, uint64_t *s)
{
	for (int j = 0; j < 16; j++)
		b->scales[j] = (int8_t)(rng_next(s) & 1 ? rng_int(s, 20, 100) : -rng_int(s, 20, 100));
	b->d = rng_scale(s, std * SQRT12 / (64 * 60.0f));
	rng_bytes(s, b->ql, sizeof b->ql);
	rng_bytes(s, b->qh, sizeof b->qh);
}

static void fill_k(uint32_t t, uint8_t *p, size_t nb, float std, uint64_t *s)
{
	for (size_t i = 0; i < nb; i++) {
		switch (t) {
		case GGML_TYPE_Q2_K:
			fill_q2_K((void *)(p + i * sizeof(struct block_q2_K)), std, s);
			break;
		case GGML_TYPE_Q3_K:
			fill_q3_K((void *)(p + i * sizeof(struct block_q3_K)), std, s);
			break;
		case GGML_TYPE_Q4_K: {
			struct block_q4_K *b = (void *)(p + i * sizeof *b);
			fill_q45_K(b->scales, &b->d, &b->dmin, 16, std, s);
			rng_bytes(s, b->qs, sizeof b->qs);
			break;
		}
		case GGML_TYPE_Q5_K: {
			struct block_q5_K *b = (void *)(p + i * sizeof *b);
			fill_q45_K(b->scales, &b->d, &b->dmin, 32, std, s);
			rng_bytes(s, b->qh, sizeof b->qh);
			rng_bytes(s, b->qs, sizeof b->qs);
			break;
		}
		case GGML_TYPE_Q6_K:
			fill_q6_K((void *)(p + i * sizeof(struct block_q6_K)), std, s);
			break;
		}
	}
}

int quant_fill_random(uint32_t t, void *dst, size_t n, float std, uint64_t *state)
{
	const struct quant_type *q = quant_scalar(t);
	float x[QK_K];
	uint8_t *p = dst;

	if (!q || n % q->blck)
		return -LLMK_EINVAL;
	switch (t) {
	case GGML_TYPE_F32: case GGML_TYPE_F16: case GGML_TYPE_BF16:
	case GGML_TYPE_Q8_1: case GGML_TYPE_Q8_K:
		/* Float types and activation types: random floats through from_float. */
		for (size_t i = 0; i < n; i += QK_K) {
			size_t m = n - i < QK_K ? n - i : QK_K;
			fill_floats(x, m, std, state);
			q->from_float(x, p + i / q->blck * q->bytes, m);
		}
		return 0;
	case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K: case GGML_TYPE_Q4_K:
	case GGML_TYPE_Q5_K: case GGML_TYPE_Q6_K:
		fill_k(t, p, n / QK_K, std, state);
		return 0;
	default:
		fill_legacy(t, p, n / q->blck, std, state);
		return 0;
	}
}
