/*
 * llm/kernels/scalar/q_float.c — F32, F16 and BF16 rows (activations in F32).
 *
 * Float weights take float activations: no second rounding of x, so a model
 * stored in F16 computes exactly what the float reference computes from the
 * same dequantized weights. Dot products accumulate in double so the result
 * does not depend on the row length's rounding history.
 */
#include "scalar.h"

uint16_t q_f32_to_f16(float f)
{
	uint32_t x = q_f32_bits(f), sign = (x >> 16) & 0x8000, r, m, shift, rem, half;

	x &= 0x7fffffff;
	if (x > 0x7f800000)
		return (uint16_t)(sign | 0x7e00);           /* NaN stays NaN (quiet) */
	if (x >= 0x477ff000)
		return (uint16_t)(sign | 0x7c00);           /* >= 65520 rounds to inf */
	if (x >= 0x38800000) {                              /* normal half: >= 2^-14 */
		r = x - (112u << 23);
		r += 0xfff + ((r >> 13) & 1);               /* round to nearest even */
		return (uint16_t)(sign | (r >> 13));
	}
	if (x < 0x33000000)
		return (uint16_t)sign;                      /* <= 2^-25: rounds to zero */
	m = (x & 0x7fffff) | 0x800000;                      /* subnormal half */
	shift = 126 - (x >> 23);
	r = m >> shift;
	rem = m & ((1u << shift) - 1);
	half = 1u << (shift - 1);
	if (rem > half || (rem == half && (r & 1)))
		r++;
	return (uint16_t)(sign | r);
}

void q_f32_to_float(const void *src, float *dst, size_t n)
{
	memcpy(dst, src, n * sizeof(float));
}

void q_f32_from_float(const float *src, void *dst, size_t n)
{
	memcpy(dst, src, n * sizeof(float));
}

float q_f32_vec_dot(size_t n, const void *w, const void *act)
{
	const float *x = w, *y = act;
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += (double)x[i] * y[i];
	return (float)s;
}

void q_f16_to_float(const void *src, float *dst, size_t n)
{
	const uint16_t *h = src;

	for (size_t i = 0; i < n; i++)
		dst[i] = q_f16(h[i]);
}

void q_f16_from_float(const float *src, void *dst, size_t n)
{
	uint16_t *h = dst;

	for (size_t i = 0; i < n; i++)
		h[i] = q_f32_to_f16(src[i]);
}

float q_f16_vec_dot(size_t n, const void *w, const void *act)
{
	const uint16_t *x = w;
	const float *y = act;
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += (double)q_f16(x[i]) * y[i];
	return (float)s;
}

/* bfloat16 is the top half of a binary32: widening is a shift. */
static inline float bf16(uint16_t h)
{
	return q_bits_f32((uint32_t)h << 16);
}

void q_bf16_to_float(const void *src, float *dst, size_t n)
{
	const uint16_t *h = src;

	for (size_t i = 0; i < n; i++)
		dst[i] = bf16(h[i]);
}

void q_bf16_from_float(const float *src, void *dst, size_t n)
{
	uint16_t *h = dst;

	for (size_t i = 0; i < n; i++)
		h[i] = q_f32_to_bf16(src[i]);
}

float q_bf16_vec_dot(size_t n, const void *w, const void *act)
{
	const uint16_t *x = w;
	const float *y = act;
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += (double)bf16(x[i]) * y[i];
	return (float)s;
}
