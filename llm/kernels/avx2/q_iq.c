/*
 * llm/kernels/avx2/q_iq.c — AVX2 rows of IQ4_NL and IQ4_XS (layouts:
 * llm/kernels/scalar/q_iq.c).
 *
 * A 4-bit index becomes its table value with one byte shuffle (the 16-entry
 * kvalues_iq4nl in each 128-bit lane); the values (|v| <= 127) then go
 * through the sign trick of avx2.h. IQ4_NL accumulates its blocks in 8
 * float lanes (differs from the scalar row by float rounding); IQ4_XS sums a
 * super-block in integers, its sub-block scales applied by madd, and then
 * does the scalar row's float operations, so its bits are the scalar row's.
 */
#include "avx2.h"
#include "avx2_rows.h"

static inline __m256i iq4_table(void)
{
	return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)q_iq4nl_values));
}

float avx2_iq4_nl_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_iq4_nl *x = w;
	const struct block_q8_0 *y = act;
	const __m256i tab = iq4_table();
	__m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
	size_t nb = n / QK4_NL, i = 0;

	for (; i + 2 <= nb; i += 2) {
		__m256i q0 = _mm256_shuffle_epi8(tab, avx2_nibbles(x[i].qs));
		__m256i q1 = _mm256_shuffle_epi8(tab, avx2_nibbles(x[i + 1].qs));
		__m256i p0 = avx2_dot_i8(q0, _mm256_loadu_si256((const __m256i *)y[i].qs));
		__m256i p1 = avx2_dot_i8(q1, _mm256_loadu_si256((const __m256i *)y[i + 1].qs));
		acc0 = _mm256_fmadd_ps(_mm256_set1_ps(avx2_f16(x[i].d) * avx2_f16(y[i].d)),
				       _mm256_cvtepi32_ps(p0), acc0);
		acc1 = _mm256_fmadd_ps(_mm256_set1_ps(avx2_f16(x[i + 1].d) * avx2_f16(y[i + 1].d)),
				       _mm256_cvtepi32_ps(p1), acc1);
	}
	for (; i < nb; i++) {
		__m256i q = _mm256_shuffle_epi8(tab, avx2_nibbles(x[i].qs));
		__m256i p = avx2_dot_i8(q, _mm256_loadu_si256((const __m256i *)y[i].qs));
		acc0 = _mm256_fmadd_ps(_mm256_set1_ps(avx2_f16(x[i].d) * avx2_f16(y[i].d)),
				       _mm256_cvtepi32_ps(p), acc0);
	}
	return avx2_hsum(_mm256_add_ps(acc0, acc1));
}

/* Pairs of products (|q| <= 127, |y| <= 127: each pair within int16) times
 * the sub-block scale (|ls - 32| <= 32) summed in int32: the integer the
 * scalar row sums, |isum| < 2^31. */
float avx2_iq4_xs_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_iq4_xs *x = w;
	const struct block_q8_K *y = act;
	const __m256i tab = iq4_table();
	float sum = 0;

	for (size_t i = 0; i < n / QK_K; i++) {
		__m256i isum = _mm256_setzero_si256();
		_Pragma("GCC unroll 8") for (int s = 0; s < QK_K / 32; s++) {
			__m256i q = _mm256_shuffle_epi8(tab, avx2_nibbles(x[i].qs + 16 * s));
			__m256i a = _mm256_loadu_si256((const __m256i *)(y[i].qs + 32 * s));
			__m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(a, q));
			__m256i sc = _mm256_set1_epi16((short)(q_iq4_xs_scale(&x[i], s) - 32));
			isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, sc));
		}
		sum += avx2_f16(x[i].d) * y[i].d * (float)avx2_hsum_i32(isum);
	}
	return sum;
}
