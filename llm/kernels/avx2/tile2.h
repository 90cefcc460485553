/*
 * llm/kernels/avx2/tile2.h — what the AVX2 tile files (tile.c, tile_q8.c)
 * share: the packed kernels' prefetch, the 8 x 8 dword transpose of their
 * repacks and packs, and the Q8_0 tile and packed form tile.c's tables name.
 */
#ifndef LLM_KERNELS_AVX2_TILE2_H
#define LLM_KERNELS_AVX2_TILE2_H

#include <immintrin.h>

#include "../scalar/scalar.h"

/* (always_inline: a function that only prefetches counts as free of side
 * effects, and GCC deletes calls to it before they would be inlined.) The
 * hint's test is outside the loops, which are unrolled: a test and a
 * branch per line slowed packed decode in cache (docs/perf.md, "K-quant
 * superblock prefetch"). */
static inline __attribute__((always_inline)) void p2_prefetch(const uint8_t *p, size_t bytes,
							     size_t ahead, bool nta)
{
	const char *q = (const char *)p + ahead;

	if (!ahead)
		return;
	if (nta)
		_Pragma("GCC unroll 8") for (size_t o = 0; o < bytes; o += 64)
			_mm_prefetch(q + o, _MM_HINT_NTA);
	else
		_Pragma("GCC unroll 8") for (size_t o = 0; o < bytes; o += 64)
			_mm_prefetch(q + o, _MM_HINT_T1);
}

/* 8 rows' 8 dwords (R[0..7]) transposed: dword k of the 8 rows (32 bytes)
 * to dst + stride k. */
static inline void put8_stride(uint8_t *dst, const __m256i *R, size_t stride)
{
	__m256i t[8], u[8];

	for (int k = 0; k < 8; k += 2) {
		t[k] = _mm256_unpacklo_epi32(R[k], R[k + 1]);
		t[k + 1] = _mm256_unpackhi_epi32(R[k], R[k + 1]);
	}
	for (int k = 0; k < 8; k += 4) {
		u[k] = _mm256_unpacklo_epi64(t[k], t[k + 2]);
		u[k + 1] = _mm256_unpackhi_epi64(t[k], t[k + 2]);
		u[k + 2] = _mm256_unpacklo_epi64(t[k + 1], t[k + 3]);
		u[k + 3] = _mm256_unpackhi_epi64(t[k + 1], t[k + 3]);
	}
	/* u[c], u[c + 4] (c < 4): dwords c (low lanes) and c + 4 of rows 0-3, 4-7 */
	for (size_t c = 0; c < 4; c++) {
		_mm256_storeu_si256((__m256i *)(dst + stride * c),
				    _mm256_permute2x128_si256(u[c], u[c + 4], 0x20));
		_mm256_storeu_si256((__m256i *)(dst + stride * (c + 4)),
				    _mm256_permute2x128_si256(u[c], u[c + 4], 0x31));
	}
}

/* The 32 bytes of 8 rows' run as 8 dwords of each row: group k of the run
 * gets dword k of the rows at dst + 64 k (the packed layouts' lines, the
 * repacked tile's groups). */
static inline void put8(uint8_t *dst, const __m256i *R)
{
	put8_stride(dst, R, 64);
}

/* tile_q8.c: Q8_0's tile and packed form, for tile.c's tables. */
extern const struct quant_tile avx2_tile_q8_0;
extern const struct quant_packed avx2_packed_q8_0;

#endif
