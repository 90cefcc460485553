/*
 * llm/kernels/avx2/q_float.c — AVX2 rows of F32, F16 and BF16 weights (F32
 * activations). Four 8-lane FMA accumulators replace the scalar row's double
 * sum: the result differs by float rounding only (bound in test_simd.c).
 * to_float is exact (F16C and a 16-bit shift are exact widenings).
 */
#include "avx2.h"
#include "avx2_rows.h"

static inline __m256 ld_f16(const uint16_t *h)
{
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)h));
}

static inline __m256 ld_bf16(const uint16_t *h)
{
	__m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)h));

	return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

/* Dot of n elements, LOAD(w + i) giving 8 floats; tail (n % 32) in scalar. */
#define FLOAT_DOT(LOAD, SCALAR)                                                      \
	__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                  \
	size_t i = 0;                                                                \
	float s;                                                                     \
	for (; i + 32 <= n; i += 32) {                                               \
		a0 = _mm256_fmadd_ps(LOAD(x + i), _mm256_loadu_ps(y + i), a0);       \
		a1 = _mm256_fmadd_ps(LOAD(x + i + 8), _mm256_loadu_ps(y + i + 8), a1); \
		a2 = _mm256_fmadd_ps(LOAD(x + i + 16), _mm256_loadu_ps(y + i + 16), a2); \
		a3 = _mm256_fmadd_ps(LOAD(x + i + 24), _mm256_loadu_ps(y + i + 24), a3); \
	}                                                                            \
	s = avx2_hsum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3))); \
	for (; i < n; i++)                                                           \
		s += SCALAR(x[i]) * y[i];                                            \
	return s

static inline float f32_id(float f)
{
	return f;
}

static inline float bf16_f(uint16_t h)
{
	return q_bits_f32((uint32_t)h << 16);
}

float avx2_f32_vec_dot(size_t n, const void *w, const void *act)
{
	const float *x = w, *y = act;

	FLOAT_DOT(_mm256_loadu_ps, f32_id);
}

float avx2_f16_vec_dot(size_t n, const void *w, const void *act)
{
	const uint16_t *x = w;
	const float *y = act;

	FLOAT_DOT(ld_f16, avx2_f16);
}

float avx2_bf16_vec_dot(size_t n, const void *w, const void *act)
{
	const uint16_t *x = w;
	const float *y = act;

	FLOAT_DOT(ld_bf16, bf16_f);
}

void avx2_f16_to_float(const void *src, float *dst, size_t n)
{
	const uint16_t *h = src;
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, ld_f16(h + i));
	for (; i < n; i++)
		dst[i] = avx2_f16(h[i]);
}

void avx2_bf16_to_float(const void *src, float *dst, size_t n)
{
	const uint16_t *h = src;
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, ld_bf16(h + i));
	for (; i < n; i++)
		dst[i] = bf16_f(h[i]);
}
