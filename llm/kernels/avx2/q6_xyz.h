/*
 * llm/kernels/avx2/q6_xyz.h — one row's half of a Q6_K superblock in the
 * packed layout's X, Y, Z form (llm/kernels/scalar/pack.c), on ymm: the
 * AVX2 and the AVX-512 packs (pack2_q6_K_to, pack_q6_K_to) both take it.
 */
#ifndef LLM_KERNELS_AVX2_Q6_XYZ_H
#define LLM_KERNELS_AVX2_Q6_XYZ_H

#include <immintrin.h>

#include "../scalar/scalar.h"

static inline void q6_xyz(const struct block_q6_K *b, int h, __m256i *X, __m256i *Y, __m256i *Z)
{
	const __m256i m4 = _mm256_set1_epi8(0x0f), m3 = _mm256_set1_epi8(3),
		      m30 = _mm256_set1_epi8(0x30), mc0 = _mm256_set1_epi8((char)0xc0),
		      mf0 = _mm256_set1_epi8((char)0xf0);
	__m256i l0 = _mm256_loadu_si256((const __m256i *)(b->ql + 64 * h));
	__m256i l1 = _mm256_loadu_si256((const __m256i *)(b->ql + 64 * h + 32));
	__m256i qh = _mm256_loadu_si256((const __m256i *)(b->qh + 32 * h));

	/* X = (l0 & 15) | (qh & 3) << 4 | (qh & 0x30) << 2 */
	*X = _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(l0, m4),
					     _mm256_slli_epi16(_mm256_and_si256(qh, m3), 4)),
			     _mm256_slli_epi16(_mm256_and_si256(qh, m30), 2));
	/* Y = (l1 & 15) | (qh << 2) & 0x30 | qh & 0xc0 */
	*Y = _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(l1, m4),
					     _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30)),
			     _mm256_and_si256(qh, mc0));
	/* Z = (l0 >> 4) | (l1 & 0xf0) */
	*Z = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
			     _mm256_and_si256(l1, mf0));
}

#endif
