/*
 * llm/kernels/avx2/avx2.h — helpers shared by the AVX2+FMA+F16C rows.
 *
 * Built only into files compiled with SIMD_FLAGS_avx2 (Makefile) and run only
 * where quant_avx2_get() saw AVX2, FMA and F16C. The integer dot products use the
 * maddubs sign trick: |w| (unsigned) times y carrying w's sign is w * y, and
 * no pair of products reaches the int16 saturation bound as long as the
 * activations stay in [-127, 127] (every Q8 act row guarantees it).
 */
#ifndef LLM_KERNELS_AVX2_H
#define LLM_KERNELS_AVX2_H

#include <immintrin.h>

#include "../scalar/scalar.h"

static inline float avx2_hsum(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_movehdup_ps(s));
	return _mm_cvtss_f32(s);
}

static inline int avx2_hsum_i32(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));

	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
	return _mm_cvtsi128_si32(s);
}

/* One half float to float in hardware (F16C); exact, as q_f16(). */
static inline float avx2_f16(uint16_t h)
{
	return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}

/* 16 bytes of packed nibbles -> 32 bytes: low nibbles then high nibbles,
 * which is the element order of Q4_0/Q4_1/Q5_x blocks. */
static inline __m256i avx2_nibbles(const uint8_t *qs)
{
	__m128i b = _mm_loadu_si128((const __m128i *)qs);
	__m256i v = _mm256_set_m128i(_mm_srli_epi16(b, 4), b);

	return _mm256_and_si256(v, _mm256_set1_epi8(0x0f));
}

/* 32 bits (little-endian) -> 32 bytes, byte j = 0x10 if bit j is set. */
static inline __m256i avx2_bits_to_16(const uint8_t *qh)
{
	uint32_t h;
	__m256i idx, v, m;

	memcpy(&h, qh, 4);
	idx = _mm256_set_epi64x(0x0303030303030303ll, 0x0202020202020202ll,
				0x0101010101010101ll, 0x0000000000000000ll);
	v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)h), idx);
	m = _mm256_set1_epi64x((long long)0x8040201008040201ull);
	v = _mm256_cmpeq_epi8(_mm256_and_si256(v, m), m);
	return _mm256_and_si256(v, _mm256_set1_epi8(0x10));
}

/* Signed bytes x times signed bytes y (|y| <= 127), 8 int32 sums of 4. */
static inline __m256i avx2_dot_i8(__m256i x, __m256i y)
{
	__m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));

	return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

/* Unsigned bytes u (<= 128) times signed bytes y, 8 int32 sums of 4. */
static inline __m256i avx2_dot_u8(__m256i u, __m256i y)
{
	return _mm256_madd_epi16(_mm256_maddubs_epi16(u, y), _mm256_set1_epi16(1));
}

#endif
