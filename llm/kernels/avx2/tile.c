/*
 * llm/kernels/avx2/tile.c — prefill tiles (llm/quant.h, tile contract) on
 * AVX2, for CPUs without AVX-512 VNNI (AMD Zen 2 and 3, which run most
 * SEV-SNP guests; older Intel).
 *
 * The form is the AVX-512 tiles' (llm/kernels/avx512/tile.c): a tile of up to
 * 16 weight rows is repacked into the worker's scratch as unsigned bytes u,
 * [n / 4 groups][16 rows][4 bytes], with per row and sub-block of G elements
 * a scale ws and, for the types with mins, wm:
 *
 *     weight = ws * (u - o) + wm
 *
 * A group is two ymm (rows 0-7 and 8-15). Against one token's four
 * activation bytes, broadcast, vpmaddubsw gives each row's two sums of two
 * products in int16; the sums of up to DEPTH groups add in int16 without
 * overflow (|qa| <= 127 and u <= umax, 2 * 127 * umax * DEPTH < 32768), then
 * vpmaddwd by ones widens them into the int32 sum that starts from the
 * prep row's -o * sa: about two instructions per 32 products, where the gemm
 * rows unpack the weights every fourth token (kbench, per core: 31-47 GMAC/s
 * against the gemm rows' 14-17 here). The
 * integer sums are exact and the float steps are the same for every row and
 * token, so a result depends only on its row and token (not on the tile,
 * batch or thread).
 *
 * Q8_0 weights (u up to 255) would overflow vpmaddubsw's int16 and keep the
 * gemm rows. The repack unpacks each row's run of 32 on ymm (scales in scalar
 * code) and transposes 8 rows at a time.
 */
#include <immintrin.h>

#include "../scalar/scalar.h"
#include "avx2_rows.h"

/*
 * run_T(row, i, ws, wm): row's run i (elements 32 i .. 32 i + 31) as 32
 * bytes u, and the scale (and min) of each sub-block it covers: one for
 * G = 32, two for G = 16. Layouts as llm/kernels/scalar (ggml block_q*).
 */
static inline __m256i nib_lo_hi(const uint8_t *qs16)
{
	__m128i b = _mm_loadu_si128((const __m128i *)qs16);

	return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(15));
}

static inline __m256i bits(const uint8_t *p, int shift, int mask)
{
	return _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)p), shift),
				_mm256_set1_epi8((char)mask));
}

static __m256i run_q4_0(const uint8_t *row, size_t i, float *ws, float *wm)
{
	const struct block_q4_0 *b = (const struct block_q4_0 *)row + i;

	ws[0] = q_f16(b->d);
	wm[0] = 0.0f;
	return nib_lo_hi(b->qs);
}

/* Q4_K / Q5_K: run i is sub-block j = i % 8 of superblock i / 8: the low
 * (j even) or high nibbles of qs[32 (j / 2) + l], plus 16 for Q5_K where bit
 * j of qh[l] is set. */
static inline __m256i run_kmins(uint16_t hd, uint16_t hm, const uint8_t *scales,
				const uint8_t *qh, const uint8_t *qs, int j, float *ws, float *wm)
{
	__m256i u = bits(qs + 32 * (j / 2), 4 * (j & 1), 15);
	int sc, m;

	if (qh)
		u = _mm256_or_si256(u, _mm256_slli_epi16(bits(qh, j, 1), 4));
	q_scale_min_k4(scales, j, &sc, &m);
	ws[0] = q_f16(hd) * (float)sc;
	wm[0] = -(q_f16(hm) * (float)m);
	return u;
}

static __m256i run_q4_K(const uint8_t *row, size_t i, float *ws, float *wm)
{
	const struct block_q4_K *b = (const struct block_q4_K *)row + i / 8;

	return run_kmins(b->d, b->dmin, b->scales, NULL, b->qs, (int)(i % 8), ws, wm);
}

static __m256i run_q5_K(const uint8_t *row, size_t i, float *ws, float *wm)
{
	const struct block_q5_K *b = (const struct block_q5_K *)row + i / 8;

	return run_kmins(b->d, b->dmin, b->scales, b->qh, b->qs, (int)(i % 8), ws, wm);
}

/* Q6_K: element 128 h + 32 j + l: low 4 bits from ql[64 h + l + 32 (j & 1)]
 * (low nibble for j < 2, high for j >= 2), top 2 bits from qh[32 h + l] at
 * bit 2 j; stored with +32. Sub-blocks of 16, int8 scales. */
static __m256i run_q6_K(const uint8_t *row, size_t i, float *ws, float *wm)
{
	const struct block_q6_K *b = (const struct block_q6_K *)row + i / 8;
	int h = (int)(i % 8) / 4, j = (int)(i % 4);
	float d = q_f16(b->d);

	for (int k = 0; k < 2; k++) {
		ws[k] = d * (float)b->scales[2 * (i % 8) + (size_t)k];
		wm[k] = 0.0f;
	}
	return _mm256_or_si256(bits(b->ql + 64 * h + 32 * (j & 1), j >= 2 ? 4 : 0, 15),
			       _mm256_slli_epi16(bits(b->qh + 32 * h, 2 * j, 3), 4));
}

/* Q2_K: element 128 n + 32 j + l is bits 2 j..2 j + 1 of qs[32 n + l];
 * sub-block s: scale scales[s] & 15, min scales[s] >> 4. */
static __m256i run_q2_K(const uint8_t *row, size_t i, float *ws, float *wm)
{
	const struct block_q2_K *b = (const struct block_q2_K *)row + i / 8;
	int n = (int)(i % 8) / 4, j = (int)(i % 4);
	float d = q_f16(b->d), dmin = q_f16(b->dmin);

	for (int k = 0; k < 2; k++) {
		uint8_t sm = b->scales[2 * (i % 8) + (size_t)k];
		ws[k] = d * (float)(sm & 15);
		wm[k] = -(dmin * (float)(sm >> 4));
	}
	return bits(b->qs + 32 * n, 2 * j, 3);
}

/* Q3_K: as Q2_K for the low 2 bits, bit 2 from bit 4 n + j of hmask[l]
 * (zero point 4); 6-bit scales stored with +32: low nibbles in scales[0..7]
 * (s < 8 low, else high nibble of scales[s - 8]), top 2 bits in
 * scales[8 + s % 4] at bit 2 (s / 4). */
static __m256i run_q3_K(const uint8_t *row, size_t i, float *ws, float *wm)
{
	const struct block_q3_K *b = (const struct block_q3_K *)row + i / 8;
	int n = (int)(i % 8) / 4, j = (int)(i % 4);
	float d = q_f16(b->d);

	for (int k = 0; k < 2; k++) {
		int s = 2 * (int)(i % 8) + k;
		int low = s < 8 ? b->scales[s] & 15 : b->scales[s - 8] >> 4;
		int high = (b->scales[8 + s % 4] >> (2 * (s / 4))) & 3;
		ws[k] = d * (float)((low | high << 4) - 32);
		wm[k] = 0.0f;
	}
	return _mm256_or_si256(bits(b->qs + 32 * n, 2 * j, 3),
			       _mm256_slli_epi16(bits(b->hmask, 4 * n + j, 1), 2));
}

typedef __m256i (*run_fn)(const uint8_t *row, size_t i, float *ws, float *wm);

/* The 32 bytes of 8 rows' run (R[0..7]) as 8 dwords of each row: an 8 x 8
 * dword transpose; group k of the run gets dword k of the rows at dst +
 * 64 k. */
static inline void put8(uint8_t *dst, const __m256i *R)
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
	for (int c = 0; c < 4; c++) {
		_mm256_store_si256((__m256i *)(dst + 64 * c), _mm256_permute2x128_si256(u[c], u[c + 4], 0x20));
		_mm256_store_si256((__m256i *)(dst + 64 * (c + 4)),
				   _mm256_permute2x128_si256(u[c], u[c + 4], 0x31));
	}
}

/* Rows [0, nr) into the tile (rows nr..15: zero bytes and scales). */
static inline __attribute__((always_inline)) void
repack(run_fn run, const uint8_t *w, size_t w_stride, int nr, size_t n, int G, struct q_rtile *t)
{
	const size_t per = 32 / (size_t)G; /* sub-blocks per run */

	for (size_t i = 0; i < n / 32; i++) {
		__m256i R[16];
		for (int r = 0; r < 16; r++) {
			float ws[2] = {0, 0}, wm[2] = {0, 0};
			R[r] = r < nr ? run(w + (size_t)r * w_stride, i, ws, wm) : _mm256_setzero_si256();
			for (size_t k = 0; k < per; k++) {
				t->ws[(i * per + k) * 16 + (size_t)r] = ws[k];
				t->wm[(i * per + k) * 16 + (size_t)r] = wm[k];
			}
		}
		put8(t->q + i * 8 * 64, R);
		put8(t->q + i * 8 * 64 + 32, R + 8);
	}
}

/*
 * C tokens (1 or 2) against the repacked tile. QB, QBYTES, QOFF: the
 * activation block (elements, bytes, offset of its quants); G: sub-block;
 * MINS: prep holds (da, sa) and wm applies, else (da, -o sa as an int32);
 * DEPTH: groups whose vpmaddubsw sums add in int16.
 */
static inline __attribute__((always_inline)) void
cols(const struct q_rtile *t, size_t n, const int8_t *const *a, const float *const *p,
     float *const *o, int nr, const int C, const int G, const size_t QB, const size_t QBYTES,
     const size_t QOFF, const int MINS, const int DEPTH)
{
	const size_t SB = QB / (size_t)G;
	const __m256i ones = _mm256_set1_epi16(1);
	__m256 f[2][2], g[2][2];

	for (int c = 0; c < C; c++)
		for (int h = 0; h < 2; h++)
			f[c][h] = g[c][h] = _mm256_setzero_ps();
	for (size_t s = 0; s < n / (size_t)G; s++) {
		size_t k0 = s * (size_t)G, aoff = k0 / QB * QBYTES + QOFF + k0 % QB;
		const uint8_t *qg = t->q + k0 / 4 * 64;
		__m256i acc[2][2];
		for (int c = 0; c < C; c++) {
			int32_t init = 0;
			if (!MINS)
				memcpy(&init, &p[c][2 * s + 1], sizeof init);
			acc[c][0] = acc[c][1] = _mm256_set1_epi32(init);
		}
		for (int j0 = 0; j0 < G / 4; j0 += DEPTH) {
			__m256i s16[2][2];
			for (int c = 0; c < C; c++)
				s16[c][0] = s16[c][1] = _mm256_setzero_si256();
			for (int j = j0; j < j0 + DEPTH && j < G / 4; j++) {
				__m256i w0 = _mm256_load_si256((const __m256i *)(qg + 64 * j));
				__m256i w1 = _mm256_load_si256((const __m256i *)(qg + 64 * j + 32));
				for (int c = 0; c < C; c++) {
					int32_t x;
					memcpy(&x, a[c] + aoff + 4 * j, sizeof x);
					__m256i av = _mm256_set1_epi32(x);
					s16[c][0] = _mm256_add_epi16(s16[c][0], _mm256_maddubs_epi16(w0, av));
					s16[c][1] = _mm256_add_epi16(s16[c][1], _mm256_maddubs_epi16(w1, av));
				}
			}
			for (int c = 0; c < C; c++)
				for (int h = 0; h < 2; h++)
					acc[c][h] = _mm256_add_epi32(acc[c][h],
								     _mm256_madd_epi16(s16[c][h], ones));
		}
		for (int h = 0; h < 2; h++) {
			__m256 ws = _mm256_loadu_ps(t->ws + s * 16 + 8 * (size_t)h);
			__m256 wm = MINS ? _mm256_loadu_ps(t->wm + s * 16 + 8 * (size_t)h)
					 : _mm256_setzero_ps();
			for (int c = 0; c < C; c++) {
				__m256 x = _mm256_cvtepi32_ps(acc[c][h]);
				if (SB == 1) {
					/* Q8_0 activations: prep (da, -o sa) per block */
					x = _mm256_mul_ps(x, ws);
					f[c][h] = _mm256_fmadd_ps(x, _mm256_set1_ps(p[c][2 * s]), f[c][h]);
					continue;
				}
				g[c][h] = _mm256_fmadd_ps(x, ws, g[c][h]);
				if (MINS)
					g[c][h] = _mm256_fmadd_ps(wm, _mm256_set1_ps(p[c][2 * s + 1]),
								  g[c][h]);
				if (s % SB == SB - 1) {
					f[c][h] = _mm256_fmadd_ps(g[c][h], _mm256_set1_ps(p[c][2 * s]),
								  f[c][h]);
					g[c][h] = _mm256_setzero_ps();
				}
			}
		}
	}
	for (int c = 0; c < C; c++) {
		float r[16];
		_mm256_storeu_ps(r, f[c][0]);
		_mm256_storeu_ps(r + 8, f[c][1]);
		memcpy(o[c], r, (size_t)nr * sizeof(float));
	}
}

#define A2_COLS(C)                                                                        \
	for (; b + (C) <= B; b += (C)) {                                                 \
		const int8_t *a[2];                                                      \
		const float *p[2];                                                       \
		float *o[2];                                                             \
		for (int c = 0; c < (C); c++) {                                          \
			a[c] = (const int8_t *)act + (b + (size_t)c) * as;               \
			p[c] = prep + (b + (size_t)c) * QUANT_TILE_PREP_FLOATS(n);       \
			o[c] = out + (b + (size_t)c) * os;                               \
		}                                                                        \
		cols(&t, n, a, p, o, nr, (C), G, QB, QBYTES, QOFF, MINS, DEPTH);          \
	}

/* One tile function per weight type: repack, then the tokens two at a time. */
#define A2_TILE(T, G_, ACT, MINS_, DEPTH_)                                                \
	static void tile2_##T(size_t n, const void *w, size_t w_stride, int nr,          \
			      const void *act, size_t as, const float *prep, size_t B,   \
			      float *out, size_t os, void *scratch)                      \
	{                                                                                \
		const int G = (G_), MINS = (MINS_), DEPTH = (DEPTH_);                    \
		const size_t QB = ACT##_QB2, QBYTES = ACT##_BYTES2, QOFF = ACT##_OFF2;   \
		struct q_rtile t = q_rtile_at(scratch, n, G);                              \
		size_t b = 0;                                                            \
		repack(run_##T, w, w_stride, nr, n, G, &t);                              \
		A2_COLS(2)                                                               \
		A2_COLS(1)                                                               \
	}

#define Q8_0_QB2 QK8_0
#define Q8_0_BYTES2 sizeof(struct block_q8_0)
#define Q8_0_OFF2 2
#define Q8_K_QB2 QK_K
#define Q8_K_BYTES2 sizeof(struct block_q8_K)
#define Q8_K_OFF2 4
_Static_assert(__builtin_offsetof(struct block_q8_0, qs) == Q8_0_OFF2, "q8_0 quants");
_Static_assert(__builtin_offsetof(struct block_q8_K, qs) == Q8_K_OFF2, "q8_K quants");

/* DEPTH: 2 * 127 * umax * DEPTH < 32768 (umax 15, 31, 63, 3, 7) */
A2_TILE(q4_0, 32, Q8_0, 0, 8)
A2_TILE(q4_K, 32, Q8_K, 1, 8)
A2_TILE(q5_K, 32, Q8_K, 1, 4)
A2_TILE(q6_K, 16, Q8_K, 0, 2)
A2_TILE(q2_K, 16, Q8_K, 1, 4)
A2_TILE(q3_K, 16, Q8_K, 0, 4)

static const struct quant_tile tiles2[] = {
	{tile2_q4_0, tile_prep_q4_0, "avx2"},    {tile2_q4_K, tile_prep_kmins32, "avx2"},
	{tile2_q5_K, tile_prep_kmins32, "avx2"}, {tile2_q6_K, tile_prep_q6_K, "avx2"},
	{tile2_q2_K, tile_prep_kmins16, "avx2"}, {tile2_q3_K, tile_prep_q3_K, "avx2"},
};
static const uint32_t tile2_types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K,
				       GGML_TYPE_Q6_K, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K};

void avx2_tile_register(void)
{
	for (size_t i = 0; i < sizeof tiles2 / sizeof tiles2[0]; i++)
		quant_register_tile(tile2_types[i], &tiles2[i]);
}
