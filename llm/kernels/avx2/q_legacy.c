/*
 * llm/kernels/avx2/q_legacy.c — AVX2 rows of the 32-element block types
 * (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) and the Q8_0 / Q8_1 activation quantizers.
 *
 * Each block's integer dot product is exact (as the scalar row's); the block
 * results are then accumulated in 8 float lanes with FMA instead of one
 * sequential float sum, so the row result differs from the scalar row only
 * by float rounding (bound in tests/unit/test_simd.c). The quantizers do the
 * scalar row's IEEE operations (max, divide, multiply, round to nearest even)
 * and give the same bytes.
 */
#include "avx2.h"
#include "avx2_rows.h"

/* max |x| over 32 floats */
static inline float amax32(const float *x)
{
	__m256 sign = _mm256_set1_ps(-0.0f), m;
	__m128 h;

	m = _mm256_andnot_ps(sign, _mm256_loadu_ps(x));
	for (int k = 8; k < 32; k += 8)
		m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + k)));
	h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
	h = _mm_max_ps(h, _mm_movehl_ps(h, h));
	h = _mm_max_ss(h, _mm_movehdup_ps(h));
	return _mm_cvtss_f32(h);
}

/* 32 floats times id, rounded to nearest even, packed to int8 in order. */
static inline __m256i round32(const float *x, float id)
{
	__m256 s = _mm256_set1_ps(id);
	__m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), s));
	__m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), s));
	__m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), s));
	__m256i d = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), s));
	__m256i p = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));

	/* packs works per 128-bit lane: dwords come out as 0 2 4 6 1 3 5 7 */
	return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

static inline float quant8(const float *x, int8_t *q)
{
	float d = amax32(x) / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;

	_mm256_storeu_si256((__m256i *)q, round32(x, id));
	return d;
}

void avx2_q8_0_from_float(const float *src, void *dst, size_t n)
{
	struct block_q8_0 *b = dst;

	for (size_t i = 0; i < n / QK8_0; i++, src += QK8_0)
		b[i].d = q_f32_to_f16(quant8(src, b[i].qs));
}

void avx2_q8_1_from_float(const float *src, void *dst, size_t n)
{
	struct block_q8_1 *b = dst;

	for (size_t i = 0; i < n / QK8_1; i++, src += QK8_1) {
		float d = quant8(src, b[i].qs);
		__m256i q = _mm256_loadu_si256((const __m256i *)b[i].qs);
		int sum = avx2_hsum_i32(avx2_dot_i8(_mm256_set1_epi8(1), q));
		b[i].d = q_f32_to_f16(d);
		b[i].s = q_f32_to_f16((float)sum * d);
	}
}

float avx2_q4_0_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q4_0 *x = w;
	const struct block_q8_0 *y = act;
	__m256 acc = _mm256_setzero_ps();

	for (size_t i = 0; i < n / QK4_0; i++) {
		__m256i q = _mm256_sub_epi8(avx2_nibbles(x[i].qs), _mm256_set1_epi8(8));
		__m256i a = _mm256_loadu_si256((const __m256i *)y[i].qs);
		__m256 d = _mm256_set1_ps(avx2_f16(x[i].d) * avx2_f16(y[i].d));
		acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(avx2_dot_i8(q, a)), acc);
	}
	return avx2_hsum(acc);
}

float avx2_q4_1_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q4_1 *x = w;
	const struct block_q8_1 *y = act;
	__m256 acc = _mm256_setzero_ps();
	float ms = 0;

	for (size_t i = 0; i < n / QK4_1; i++) {
		__m256i a = _mm256_loadu_si256((const __m256i *)y[i].qs);
		__m256 d = _mm256_set1_ps(avx2_f16(x[i].d) * avx2_f16(y[i].d));
		acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(avx2_dot_u8(avx2_nibbles(x[i].qs), a)), acc);
		ms += avx2_f16(x[i].m) * avx2_f16(y[i].s);
	}
	return avx2_hsum(acc) + ms;
}

float avx2_q5_0_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q5_0 *x = w;
	const struct block_q8_0 *y = act;
	__m256 acc = _mm256_setzero_ps();

	for (size_t i = 0; i < n / QK5_0; i++) {
		__m256i q = _mm256_or_si256(avx2_nibbles(x[i].qs), avx2_bits_to_16(x[i].qh));
		__m256i a = _mm256_loadu_si256((const __m256i *)y[i].qs);
		__m256 d = _mm256_set1_ps(avx2_f16(x[i].d) * avx2_f16(y[i].d));
		q = _mm256_sub_epi8(q, _mm256_set1_epi8(16));
		acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(avx2_dot_i8(q, a)), acc);
	}
	return avx2_hsum(acc);
}

float avx2_q5_1_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q5_1 *x = w;
	const struct block_q8_1 *y = act;
	__m256 acc = _mm256_setzero_ps();
	float ms = 0;

	for (size_t i = 0; i < n / QK5_1; i++) {
		__m256i q = _mm256_or_si256(avx2_nibbles(x[i].qs), avx2_bits_to_16(x[i].qh));
		__m256i a = _mm256_loadu_si256((const __m256i *)y[i].qs);
		__m256 d = _mm256_set1_ps(avx2_f16(x[i].d) * avx2_f16(y[i].d));
		acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(avx2_dot_u8(q, a)), acc);
		ms += avx2_f16(x[i].m) * avx2_f16(y[i].s);
	}
	return avx2_hsum(acc) + ms;
}

float avx2_q8_0_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q8_0 *x = w, *y = act;
	__m256 acc = _mm256_setzero_ps();

	for (size_t i = 0; i < n / QK8_0; i++) {
		__m256i q = _mm256_loadu_si256((const __m256i *)x[i].qs);
		__m256i a = _mm256_loadu_si256((const __m256i *)y[i].qs);
		__m256 d = _mm256_set1_ps(avx2_f16(x[i].d) * avx2_f16(y[i].d));
		acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(avx2_dot_i8(q, a)), acc);
	}
	return avx2_hsum(acc);
}
