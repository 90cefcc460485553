/*
 * llm/kernels/avx512/iq.c — AVX-512 (VNNI) rows of IQ4_NL and IQ4_XS
 * (layouts: llm/kernels/scalar/q_iq.c), two 32-element groups per zmm.
 *
 * The 16 bytes of nibbles of groups A and B become [A A B B] in 128-bit
 * lanes, the high nibbles shifted down in lanes 1 and 3: the element order
 * of the activations [a_A a_B]. kvalues_iq4nl's values are negative exactly
 * for indices 0..7, so one byte shuffle gives |value| (unsigned, for
 * vpdpbusd) and a compare gives the lanes whose activation is negated
 * (|a| <= 127): every int32 lane is an exact sum of four products. IQ4_NL
 * accumulates blocks in float lanes (differs from the scalar row by float
 * rounding); IQ4_XS sums a super-block in integers and gives the scalar
 * row's bits.
 */
#include "../avx2/avx2.h"
#include "../avx2/avx2_rows.h"
#include "avx512_rows.h"

#define IQ_INLINE static inline __attribute__((always_inline))

IQ_INLINE __m512i iq_abs_table(void)
{
	static const int8_t abs_v[16] = {127, 104, 83, 65, 49, 35, 22, 10,
					 1, 13, 25, 38, 53, 69, 89, 113};

	return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)abs_v));
}

/* The indices of two groups, nibbles qa[0..15] and qb[0..15], in element order. */
IQ_INLINE __m512i iq_idx2(const uint8_t *qa, const uint8_t *qb)
{
	__m256i ab = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)qb),
				      _mm_loadu_si128((const __m128i *)qa));
	__m512i z = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3),
					     _mm512_castsi256_si512(ab));

	z = _mm512_mask_blend_epi64(0xcc, z, _mm512_srli_epi16(z, 4));
	return _mm512_and_si512(z, _mm512_set1_epi8(0x0f));
}

/* 16 int32 sums of four value * activation products. */
IQ_INLINE __m512i iq_dot(__m512i tab, __m512i idx, __m512i a)
{
	__mmask64 neg = _mm512_cmplt_epu8_mask(idx, _mm512_set1_epi8(8));
	__m512i sa = _mm512_mask_sub_epi8(a, neg, _mm512_setzero_si512(), a);

	return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_shuffle_epi8(tab, idx), sa);
}

IQ_INLINE __m512i iq_ld2(const int8_t *a, const int8_t *b)
{
	return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a)),
				  _mm256_loadu_si256((const __m256i *)b), 1);
}

/* d of block A in lanes 0-7, of block B in 8-15 */
IQ_INLINE __m512 iq_d2(float a, float b)
{
	return _mm512_mask_blend_ps(0xff00, _mm512_set1_ps(a), _mm512_set1_ps(b));
}

float avx512_iq4_nl_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_iq4_nl *x = w;
	const struct block_q8_0 *y = act;
	const __m512i tab = iq_abs_table();
	__m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
	size_t nb = n / QK4_NL, i = 0;
	float tail = 0;

	for (; i + 4 <= nb; i += 4) {
		__m512i p0 = iq_dot(tab, iq_idx2(x[i].qs, x[i + 1].qs), iq_ld2(y[i].qs, y[i + 1].qs));
		__m512i p1 = iq_dot(tab, iq_idx2(x[i + 2].qs, x[i + 3].qs),
				    iq_ld2(y[i + 2].qs, y[i + 3].qs));
		__m512 d0 = iq_d2(avx2_f16(x[i].d) * avx2_f16(y[i].d),
				  avx2_f16(x[i + 1].d) * avx2_f16(y[i + 1].d));
		__m512 d1 = iq_d2(avx2_f16(x[i + 2].d) * avx2_f16(y[i + 2].d),
				  avx2_f16(x[i + 3].d) * avx2_f16(y[i + 3].d));
		acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p0), d0, acc0);
		acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p1), d1, acc1);
	}
	if (i < nb)
		tail = avx2_iq4_nl_vec_dot((nb - i) * QK4_NL, x + i, y + i);
	return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) + tail;
}

/* As the AVX2 row: |isum| < 2^31, then the scalar row's float steps. */
float avx512_iq4_xs_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_iq4_xs *x = w;
	const struct block_q8_K *y = act;
	const __m512i tab = iq_abs_table();
	float sum = 0;

	for (size_t i = 0; i < n / QK_K; i++) {
		__m512i isum = _mm512_setzero_si512();
		_Pragma("GCC unroll 4") for (int s = 0; s < QK_K / 32; s += 2) {
			const uint8_t *qs = x[i].qs + 16 * s;
			__m512i a = _mm512_loadu_si512(y[i].qs + 32 * s);
			__m512i p = iq_dot(tab, iq_idx2(qs, qs + 16), a);
			__m512i sc = _mm512_mask_blend_epi32(
				0xff00, _mm512_set1_epi32(q_iq4_xs_scale(&x[i], s) - 32),
				_mm512_set1_epi32(q_iq4_xs_scale(&x[i], s + 1) - 32));
			isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(p, sc));
		}
		sum += avx2_f16(x[i].d) * y[i].d * (float)_mm512_reduce_add_epi32(isum);
	}
	return sum;
}
