/*
 * llm/quant_fill.c — pseudo-random valid blocks of every type (quant.h
 * quant_fill_random): test data, selftest input, benchmark weights and
 * tools/mkmodel's weights, written straight as blocks so a 7B-shaped model
 * costs no quantizer time. Each weight type's scalar row has its own fill
 * (llm/kernels/scalar); the float and activation types take random floats
 * through their quantizer.
 */
#include "quant.h"

#include "kernels/scalar/scalar.h"

static void fill_floats(float *x, size_t n, float std, uint64_t *s)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (2.0f * q_rng_unit(s) - 1.0f) * std * 1.7320508f; /* uniform, sd = std */
}

int quant_fill_random(uint32_t t, void *dst, size_t n, float std, uint64_t *state)
{
	const struct quant_type *q = quant_scalar(t);
	float x[QK_K];
	uint8_t *p = dst;

	if (!q || n % q->blck || (!q->fill && !q->from_float))
		return -LLMK_EINVAL;
	if (q->fill) {
		q->fill(dst, n / q->blck, std, state);
		return 0;
	}
	for (size_t i = 0; i < n; i += QK_K) {
		size_t m = n - i < QK_K ? n - i : QK_K;
		fill_floats(x, m, std, state);
		q->from_float(x, p + i / q->blck * q->bytes, m);
	}
	return 0;
}
