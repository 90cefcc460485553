/*
 * llm/kernels/avx2/tile.c — prefill tiles (llm/quant_isa.h, tile contract) on
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
 * rows unpack the weights every fourth token (docs/perf.md, "Rows and
 * prefill tiles"). The
 * integer sums are exact and the float steps are the same for every row and
 * token, so a result depends only on its row and token (not on the tile,
 * batch or thread).
 *
 * Q8_0 weights (u up to 255) would overflow vpmaddubsw's int16: its tile
 * and packed form take int16 pairs instead (tile_q8.c). The repack unpacks
 * each row's run of 32 on ymm (scales in scalar code) and transposes 8 rows
 * at a time.
 *
 * Below the tiles, the packed forms of Q4_0, Q4_K and Q6_K (llm/quant_isa.h
 * struct quant_packed): the AVX-512 packed layout, read two ymm a line, with
 * these tiles' sums and float steps, so their bits.
 */
#include <immintrin.h>

#include "../scalar/scalar.h"
#include "avx2_rows.h"
#include "q6_xyz.h"
#include "tile2.h"

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

static __m256i run_q4_0(const uint8_t *row, size_t i, float *ws, float *wm, float *sd)
{
	const struct block_q4_0 *b = (const struct block_q4_0 *)row + i;

	ws[0] = q_f16(b->d);
	wm[0] = 0.0f;
	(void)sd;
	return nib_lo_hi(b->qs);
}

/* Q4_K / Q5_K: run i is sub-block j = i % 8 of superblock i / 8: the low
 * (j even) or high nibbles of qs[32 (j / 2) + l], plus 16 for Q5_K where bit
 * j of qh[l] is set. KINT (Q4_K): ws the scale as an int32, wm the min as a
 * float, sd the superblock's d and dmin (cols(), KINT); else ws = d * sc,
 * wm = -(dmin * m). */
static inline __m256i run_kmins(uint16_t hd, uint16_t hm, const uint8_t *scales,
				const uint8_t *qh, const uint8_t *qs, int j, float *ws, float *wm,
				float *sd, const int KINT)
{
	__m256i u = bits(qs + 32 * (j / 2), 4 * (j & 1), 15);
	int sc, m;

	if (qh)
		u = _mm256_or_si256(u, _mm256_slli_epi16(bits(qh, j, 1), 4));
	q_scale_min_k4(scales, j, &sc, &m);
	if (KINT) {
		int32_t v = sc;
		memcpy(ws, &v, sizeof v);
		wm[0] = (float)m;
		sd[0] = q_f16(hd);
		sd[1] = q_f16(hm);
	} else {
		ws[0] = q_f16(hd) * (float)sc;
		wm[0] = -(q_f16(hm) * (float)m);
	}
	return u;
}

static __m256i run_q4_K(const uint8_t *row, size_t i, float *ws, float *wm, float *sd)
{
	const struct block_q4_K *b = (const struct block_q4_K *)row + i / 8;

	return run_kmins(b->d, b->dmin, b->scales, NULL, b->qs, (int)(i % 8), ws, wm, sd, 1);
}

static __m256i run_q5_K(const uint8_t *row, size_t i, float *ws, float *wm, float *sd)
{
	const struct block_q5_K *b = (const struct block_q5_K *)row + i / 8;

	return run_kmins(b->d, b->dmin, b->scales, b->qh, b->qs, (int)(i % 8), ws, wm, sd, 0);
}

/* Q6_K: element 128 h + 32 j + l: low 4 bits from ql[64 h + l + 32 (j & 1)]
 * (low nibble for j < 2, high for j >= 2), top 2 bits from qh[32 h + l] at
 * bit 2 j; stored with +32. Sub-blocks of 16, int8 scales: ws the scale as
 * an int32, sd the superblock's d (cols(), KINT). */
static __m256i run_q6_K(const uint8_t *row, size_t i, float *ws, float *wm, float *sd)
{
	const struct block_q6_K *b = (const struct block_q6_K *)row + i / 8;
	int h = (int)(i % 8) / 4, j = (int)(i % 4);

	for (int k = 0; k < 2; k++) {
		int32_t v = b->scales[2 * (i % 8) + (size_t)k];
		memcpy(&ws[k], &v, sizeof v);
		wm[k] = 0.0f;
	}
	sd[0] = q_f16(b->d);
	sd[1] = 0.0f;
	return _mm256_or_si256(bits(b->ql + 64 * h + 32 * (j & 1), j >= 2 ? 4 : 0, 15),
			       _mm256_slli_epi16(bits(b->qh + 32 * h, 2 * j, 3), 4));
}

/* Q2_K: element 128 n + 32 j + l is bits 2 j..2 j + 1 of qs[32 n + l];
 * sub-block s: scale scales[s] & 15, min scales[s] >> 4. */
static __m256i run_q2_K(const uint8_t *row, size_t i, float *ws, float *wm, float *sd)
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
static __m256i run_q3_K(const uint8_t *row, size_t i, float *ws, float *wm, float *sd)
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

typedef __m256i (*run_fn)(const uint8_t *row, size_t i, float *ws, float *wm, float *sd);

/* Rows [0, nr) into the tile (rows nr..15: zero bytes and scales); KINT:
 * the superblocks' d and dmin into sd too. */
static inline __attribute__((always_inline)) void
repack(run_fn run, const uint8_t *w, size_t w_stride, int nr, size_t n, int G, struct q_rtile *t,
       const int KINT)
{
	const size_t per = 32 / (size_t)G; /* sub-blocks per run */

	for (size_t i = 0; i < n / 32; i++) {
		__m256i R[16];
		for (int r = 0; r < 16; r++) {
			float ws[2] = {0, 0}, wm[2] = {0, 0}, sd[2] = {0, 0};
			R[r] = r < nr ? run(w + (size_t)r * w_stride, i, ws, wm, sd)
				      : _mm256_setzero_si256();
			for (size_t k = 0; k < per; k++) {
				/* (the bits as they are: KINT's ws are int32s) */
				memcpy(&t->ws[(i * per + k) * 16 + (size_t)r], &ws[k], sizeof ws[k]);
				t->wm[(i * per + k) * 16 + (size_t)r] = wm[k];
			}
			if (KINT && i % 8 == 0) {
				t->sd[i / 8 * 32 + (size_t)r] = sd[0];
				t->sd[i / 8 * 32 + 16 + (size_t)r] = sd[1];
			}
		}
		put8(t->q + i * 8 * 64, R);
		put8(t->q + i * 8 * 64 + 32, R + 8);
	}
}

/*
 * C tokens (1 to 4) against the repacked tile. QB, QBYTES, QOFF: the
 * activation block (elements, bytes, offset of its quants); G: sub-block;
 * MINS: prep holds (da, sa) and wm applies, else (da, -o sa as an int32);
 * DEPTH: groups whose vpmaddubsw sums add in int16. Each group's two ymm
 * serve the C tokens' broadcasts; the float sums f and g of the tokens
 * live on the stack (touched once per sub-block), which leaves the 16 ymm
 * to the int16 and int32 sums. (The empty asm keeps each int16 sum a
 * running one, as GCC otherwise reassociates the group's additions and
 * keeps their leaves on the stack.)
 *
 * KINT (Q4_K, Q6_K): a superblock's sub-block scales stay integers. ws
 * holds each sub-block's scale as an int32 and the exact integer sums of
 * the superblock add up as T = sum of scale x sub-block sum (vpmulld; at
 * most 31 M for Q4_K, 395 M for Q6_K); with mins, wm holds each min as a
 * float and M = sum of min x sa (exact: below 2^21); then once a
 * superblock x = T d (- M dmin) and f += x da, d and dmin from sd. Fewer
 * float steps than a scale per sub-block, and the packed steps take the
 * same (docs/perf.md, "AVX2 decode steps").
 */
static inline __attribute__((always_inline)) void
cols(const struct q_rtile *t, size_t n, const int8_t *const *a, const float *const *p,
     float *const *o, int nr, const int C, const int G, const size_t QB, const size_t QBYTES,
     const size_t QOFF, const int MINS, const int DEPTH, const int KINT)
{
	const size_t SB = QB / (size_t)G;
	const __m256i ones = _mm256_set1_epi16(1);
	_Alignas(32) float f[4][16], g[4][16];
	_Alignas(32) int32_t ti[4][16];

	memset(f, 0, sizeof f);
	memset(g, 0, sizeof g);
	memset(ti, 0, sizeof ti);
	for (size_t s = 0; s < n / (size_t)G; s++) {
		size_t k0 = s * (size_t)G, aoff = k0 / QB * QBYTES + QOFF + k0 % QB;
		const uint8_t *qg = t->q + k0 / 4 * 64;
		__m256i acc[4][2];
		_Pragma("GCC unroll 4") for (int c = 0; c < C; c++) {
			int32_t init = 0;
			if (!MINS)
				memcpy(&init, &p[c][2 * s + 1], sizeof init);
			acc[c][0] = acc[c][1] = _mm256_set1_epi32(init);
		}
		_Pragma("GCC unroll 8") for (int j0 = 0; j0 < G / 4; j0 += DEPTH) {
			__m256i s16[4][2];
			_Pragma("GCC unroll 4") for (int c = 0; c < C; c++)
				s16[c][0] = s16[c][1] = _mm256_setzero_si256();
			/* (DEPTH divides G / 4 for every type below) */
			_Pragma("GCC unroll 8") for (int j = j0; j < j0 + DEPTH; j++) {
				__m256i w0 = _mm256_load_si256((const __m256i *)(qg + 64 * j));
				__m256i w1 = _mm256_load_si256((const __m256i *)(qg + 64 * j + 32));
				_Pragma("GCC unroll 4") for (int c = 0; c < C; c++) {
					int32_t x;
					memcpy(&x, a[c] + aoff + 4 * j, sizeof x);
					__m256i av = _mm256_set1_epi32(x);
					s16[c][0] = _mm256_add_epi16(s16[c][0], _mm256_maddubs_epi16(w0, av));
					s16[c][1] = _mm256_add_epi16(s16[c][1], _mm256_maddubs_epi16(w1, av));
					__asm__("" : "+x"(s16[c][0]), "+x"(s16[c][1]));
				}
			}
			_Pragma("GCC unroll 4") for (int c = 0; c < C; c++)
				_Pragma("GCC unroll 2") for (int h = 0; h < 2; h++)
					acc[c][h] = _mm256_add_epi32(acc[c][h],
								     _mm256_madd_epi16(s16[c][h], ones));
		}
		_Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
			if (KINT) {
				const float *sd = t->sd + s / SB * 32 + 8 * (size_t)h;
				__m256i sc = _mm256_loadu_si256((const __m256i *)(t->ws + s * 16 + 8 * (size_t)h));
				__m256 wm = MINS ? _mm256_loadu_ps(t->wm + s * 16 + 8 * (size_t)h)
						 : _mm256_setzero_ps();
				_Pragma("GCC unroll 4") for (int c = 0; c < C; c++) {
					__m256i tc = _mm256_add_epi32(
						_mm256_load_si256((const __m256i *)(ti[c] + 8 * h)),
						_mm256_mullo_epi32(acc[c][h], sc));
					__m256 gc = _mm256_setzero_ps();
					if (MINS)
						gc = _mm256_fmadd_ps(wm, _mm256_set1_ps(p[c][2 * s + 1]),
								     _mm256_load_ps(g[c] + 8 * h));
					if (s % SB == SB - 1) {
						__m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(tc),
									 _mm256_loadu_ps(sd));
						if (MINS)
							x = _mm256_fnmadd_ps(gc, _mm256_loadu_ps(sd + 16), x);
						_mm256_store_ps(f[c] + 8 * h,
								_mm256_fmadd_ps(x, _mm256_set1_ps(p[c][2 * s]),
										_mm256_load_ps(f[c] + 8 * h)));
						tc = _mm256_setzero_si256();
						gc = _mm256_setzero_ps();
					}
					_mm256_store_si256((__m256i *)(ti[c] + 8 * h), tc);
					if (MINS)
						_mm256_store_ps(g[c] + 8 * h, gc);
				}
				continue;
			}
			__m256 ws = _mm256_loadu_ps(t->ws + s * 16 + 8 * (size_t)h);
			__m256 wm = MINS ? _mm256_loadu_ps(t->wm + s * 16 + 8 * (size_t)h)
					 : _mm256_setzero_ps();
			_Pragma("GCC unroll 4") for (int c = 0; c < C; c++) {
				__m256 x = _mm256_cvtepi32_ps(acc[c][h]);
				__m256 fc = _mm256_load_ps(f[c] + 8 * h), gc;
				if (SB == 1) {
					/* Q8_0 activations: prep (da, -o sa) per block */
					x = _mm256_mul_ps(x, ws);
					fc = _mm256_fmadd_ps(x, _mm256_set1_ps(p[c][2 * s]), fc);
					_mm256_store_ps(f[c] + 8 * h, fc);
					continue;
				}
				gc = _mm256_fmadd_ps(x, ws, _mm256_load_ps(g[c] + 8 * h));
				if (MINS)
					gc = _mm256_fmadd_ps(wm, _mm256_set1_ps(p[c][2 * s + 1]), gc);
				if (s % SB == SB - 1) {
					fc = _mm256_fmadd_ps(gc, _mm256_set1_ps(p[c][2 * s]), fc);
					_mm256_store_ps(f[c] + 8 * h, fc);
					gc = _mm256_setzero_ps();
				}
				_mm256_store_ps(g[c] + 8 * h, gc);
			}
		}
	}
	_Pragma("GCC unroll 4") for (int c = 0; c < C; c++)
		memcpy(o[c], f[c], (size_t)nr * sizeof(float));
}

#define A2_COLS(C)                                                                        \
	for (; b + (C) <= B; b += (C)) {                                                 \
		const int8_t *a[4];                                                      \
		const float *p[4];                                                       \
		float *o[4];                                                             \
		for (int c = 0; c < (C); c++) {                                          \
			a[c] = (const int8_t *)act + (b + (size_t)c) * as;               \
			p[c] = prep + (b + (size_t)c) * QUANT_TILE_PREP_FLOATS(n);       \
			o[c] = out + (b + (size_t)c) * os;                               \
		}                                                                        \
		cols(&t, n, a, p, o, nr, (C), G, QB, QBYTES, QOFF, MINS, DEPTH, KINT);    \
	}

/* One tile function per weight type: repack, then the tokens four at a time. */
#define A2_TILE(T, G_, ACT, MINS_, DEPTH_, KINT_)                                         \
	static void tile2_##T(size_t n, const void *w, size_t w_stride, int nr,          \
			      const void *act, size_t as, const float *prep, size_t B,   \
			      float *out, size_t os, void *scratch,                      \
			      const struct quant_tune *tune)                             \
	{                                                                                \
		const int G = (G_), MINS = (MINS_), DEPTH = (DEPTH_), KINT = (KINT_);    \
		const size_t QB = ACT##_QB2, QBYTES = ACT##_BYTES2, QOFF = ACT##_OFF2;   \
		struct q_rtile t = q_rtile_at(scratch, n, G);                              \
		size_t b = 0;                                                            \
		repack(run_##T, w, w_stride, nr, n, G, &t, KINT);                        \
		A2_COLS(4)                                                               \
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

/* DEPTH: 2 * 127 * umax * DEPTH < 32768 (umax 15, 31, 63, 3, 7); KINT: the
 * types with packed forms, whose decode steps gain from it */
A2_TILE(q4_0, 32, Q8_0, 0, 8, 0)
A2_TILE(q4_K, 32, Q8_K, 1, 8, 1)
A2_TILE(q5_K, 32, Q8_K, 1, 4, 0)
A2_TILE(q6_K, 16, Q8_K, 0, 2, 1)
A2_TILE(q2_K, 16, Q8_K, 1, 4, 0)
A2_TILE(q3_K, 16, Q8_K, 0, 4, 0)

/* A packed tile: from 4 tokens up with the tile scratch, the group unpacked
 * once into tile2's form and the tokens run as tile2's (cols: unpacking the
 * nibbles again on every pass over the group was slower for prompts);
 * else the tokens two at a time straight off the packed group (COLS_FN),
 * the first pass prefetching ahead into L2. */
#define P2_TILE(NAME, COLS_FN, UNPACK_FN, G_, ACT, MINS_, DEPTH_, NTA, KINT_)             \
	static void NAME(size_t n, const void *w, size_t w_stride, int nr, const void *act,  \
			 size_t as, const float *prep, size_t B, float *out, size_t os,      \
			 void *scratch, const struct quant_tune *tune)                       \
	{                                                                                    \
		const size_t ahead = tune->ahead;                                            \
		const bool nta = tune->NTA;                                                  \
		size_t b = 0;                                                                \
		(void)w_stride;                                                              \
		if (scratch && B >= 4) {                                                     \
			const int G = (G_), MINS = (MINS_), DEPTH = (DEPTH_), KINT = (KINT_); \
			const size_t QB = ACT##_QB2, QBYTES = ACT##_BYTES2,                  \
				     QOFF = ACT##_OFF2;                                      \
			struct q_rtile t = q_rtile_at(scratch, n, G);                        \
			UNPACK_FN(w, n, &t, ahead, nta);                                     \
			nr = 16;                                                             \
			A2_COLS(4)                                                           \
			A2_COLS(2)                                                           \
			A2_COLS(1)                                                           \
			return;                                                              \
		}                                                                            \
		for (; b < B;) {                                                             \
			const int8_t *a[2];                                                  \
			const float *p[2];                                                   \
			float *o[2];                                                         \
			int C = B - b >= 2 ? 2 : 1;                                          \
			for (int c = 0; c < C; c++) {                                        \
				a[c] = (const int8_t *)act + (b + (size_t)c) * as;           \
				p[c] = prep + (b + (size_t)c) * QUANT_TILE_PREP_FLOATS(n);   \
				o[c] = out + (b + (size_t)c) * os;                           \
			}                                                                    \
			if (C == 2)                                                          \
				COLS_FN(w, n, a, p, o, 2, b ? 0 : ahead, nta);               \
			else                                                                 \
				COLS_FN(w, n, a, p, o, 1, b ? 0 : ahead, nta);               \
			b += (size_t)C;                                                      \
		}                                                                            \
	}

/*
 * Packed Q4_0 (llm/quant_isa.h struct quant_packed; the layout of pk_pack_q4_0
 * in llm/kernels/scalar/pack.c, which the AVX-512 packed tiles read too): a
 * pair of blocks of the 16 rows is 64 bytes of f16 scales, then for each
 * block 4 lines of quant dwords, dword j of the 16 rows side by side (its
 * low nibbles are quants 4 j .. 4 j + 3, its high ones 16 + 4 j ..). A line
 * is two ymm here (rows 0-7, 8-15), read in place: no repack. The integer
 * sums are cols()'s (a block's 8 vpmaddubsw per row add in int16:
 * 8 * 2 * 15 * 127 < 32768) and so are the float steps, so the results are
 * tile2_q4_0's bits, as llm/quant_isa.h asks of a packed form.
 */
#define P2_UNIT 576     /* bytes of a pair of blocks of the 16 rows */
/* The prefetches' distance (ahead, 0 for none) and hint (nta: non-temporal,
 * else into L2) are the descriptor's tuning (struct quant_tune, isa.c),
 * which each tile, lanes and pack_to call reads once. */

/* Block i of packed group g for C tokens (1 or 2) into f[c][h] (rows 8 h ..) */
static inline __attribute__((always_inline)) void
p2_step_q40(const uint8_t *g, size_t i, const int8_t *const *a, const float *const *p,
	    __m256 (*f)[2], const int C, size_t ahead, bool nta)
{
	const __m256i m4 = _mm256_set1_epi8(15), ones = _mm256_set1_epi16(1);
	const uint8_t *u = g + (i / 2) * P2_UNIT, *q = u + 64 + (i & 1) * 256;
	size_t aoff = i * Q8_0_BYTES2 + Q8_0_OFF2;
	__m256i s16[2][2];

	p2_prefetch(u + (i & 1) * (P2_UNIT / 2), P2_UNIT / 2, ahead, nta);
	for (int c = 0; c < C; c++)
		s16[c][0] = s16[c][1] = _mm256_setzero_si256();
	_Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
		__m256i w[2];
		w[0] = _mm256_loadu_si256((const __m256i *)(q + 64 * j));
		w[1] = _mm256_loadu_si256((const __m256i *)(q + 64 * j + 32));
		for (int c = 0; c < C; c++) {
			int32_t xl, xh;
			memcpy(&xl, a[c] + aoff + 4 * j, sizeof xl);
			memcpy(&xh, a[c] + aoff + 16 + 4 * j, sizeof xh);
			__m256i al = _mm256_set1_epi32(xl), ah = _mm256_set1_epi32(xh);
			_Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
				__m256i lo = _mm256_and_si256(w[h], m4);
				__m256i hi = _mm256_and_si256(_mm256_srli_epi16(w[h], 4), m4);
				s16[c][h] = _mm256_add_epi16(s16[c][h], _mm256_maddubs_epi16(lo, al));
				s16[c][h] = _mm256_add_epi16(s16[c][h], _mm256_maddubs_epi16(hi, ah));
				__asm__("" : "+x"(s16[c][h])); /* (cols()) */
			}
		}
	}
	_Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
		__m256 ws = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(u + 32 * (i & 1) + 16 * h)));
		for (int c = 0; c < C; c++) {
			int32_t init;
			memcpy(&init, &p[c][2 * i + 1], sizeof init);
			__m256i acc = _mm256_add_epi32(_mm256_set1_epi32(init),
						       _mm256_madd_epi16(s16[c][h], ones));
			__m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), ws);
			f[c][h] = _mm256_fmadd_ps(x, _mm256_set1_ps(p[c][2 * i]), f[c][h]);
		}
	}
}

/*
 * Blocks 2 i2 and 2 i2 + 1 (the pair sharing a 576-byte unit) of packed
 * group g for one token (decode) into f[h]. The sums and float steps are
 * p2_step_q40's, so its bits: the int16 sums of the low and of the high
 * nibbles run as two chains, added before the widening (each at most 4 *
 * 2 * 15 * 127, their sum below 32768); each quant line is loaded once (an
 * empty asm: GCC otherwise folds a second load into the mask) and the pair's
 * address and loop code are paid once: faster than a block at a time
 * (docs/perf.md, "AVX2 decode steps").
 */
static inline __attribute__((always_inline)) void
p2_step1_q40(const uint8_t *g, size_t i2, const int8_t *a, const float *p, __m256 *f,
	     size_t ahead, bool nta)
{
	const __m256i m4 = _mm256_set1_epi8(15), ones = _mm256_set1_epi16(1);
	const uint8_t *u = g + i2 * P2_UNIT;

	_Pragma("GCC unroll 2") for (int b = 0; b < 2; b++) {
		size_t i = 2 * i2 + (size_t)b, aoff = i * Q8_0_BYTES2 + Q8_0_OFF2;
		const uint8_t *q = u + 64 + 256 * (size_t)b;
		__m256i s16[2][2];
		p2_prefetch(u + (size_t)b * (P2_UNIT / 2), P2_UNIT / 2, ahead, nta);
		s16[0][0] = s16[0][1] = s16[1][0] = s16[1][1] = _mm256_setzero_si256();
		_Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
			int32_t xl, xh;
			memcpy(&xl, a + aoff + 4 * j, sizeof xl);
			memcpy(&xh, a + aoff + 16 + 4 * j, sizeof xh);
			__m256i al = _mm256_set1_epi32(xl), ah = _mm256_set1_epi32(xh);
			_Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
				__m256i w = _mm256_loadu_si256((const __m256i *)(q + 64 * j + 32 * h));
				__asm__("" : "+x"(w));
				__m256i lo = _mm256_and_si256(w, m4);
				__m256i hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), m4);
				s16[h][0] = _mm256_add_epi16(s16[h][0], _mm256_maddubs_epi16(lo, al));
				s16[h][1] = _mm256_add_epi16(s16[h][1], _mm256_maddubs_epi16(hi, ah));
				__asm__("" : "+x"(s16[h][0]), "+x"(s16[h][1])); /* (cols()) */
			}
		}
		_Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
			__m256 ws = _mm256_cvtph_ps(
				_mm_loadu_si128((const __m128i *)(u + 32 * (size_t)b + 16 * h)));
			int32_t init;
			memcpy(&init, &p[2 * i + 1], sizeof init);
			__m256i acc = _mm256_add_epi32(
				_mm256_set1_epi32(init),
				_mm256_madd_epi16(_mm256_add_epi16(s16[h][0], s16[h][1]), ones));
			__m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), ws);
			f[h] = _mm256_fmadd_ps(x, _mm256_set1_ps(p[2 * i]), f[h]);
		}
	}
}

/* The packed group as tile2_q4_0's repack (the low and the high nibbles of
 * each line, the scales widened), a line at a time: no transposes. */
static void p2_unpack_tile_q40(const uint8_t *g, size_t n, struct q_rtile *t, size_t ahead,
			       bool nta)
{
	const __m256i m4 = _mm256_set1_epi8(15);

	for (size_t i = 0; i < n / 32; i++) {
		const uint8_t *u = g + (i / 2) * P2_UNIT, *q = u + 64 + (i & 1) * 256;
		p2_prefetch(u + (i & 1) * (P2_UNIT / 2), P2_UNIT / 2, ahead, nta);
		for (int h = 0; h < 2; h++)
			_mm256_storeu_ps(t->ws + i * 16 + 8 * (size_t)h,
					 _mm256_cvtph_ps(_mm_loadu_si128(
						 (const __m128i *)(u + 32 * (i & 1) + 16 * h))));
		for (int j = 0; j < 4; j++)
			for (int h = 0; h < 2; h++) {
				__m256i w = _mm256_loadu_si256((const __m256i *)(q + 64 * j + 32 * h));
				_mm256_store_si256((__m256i *)(t->q + i * 512 + 64 * j + 32 * h),
						   _mm256_and_si256(w, m4));
				_mm256_store_si256(
					(__m256i *)(t->q + i * 512 + 64 * (j + 4) + 32 * h),
					_mm256_and_si256(_mm256_srli_epi16(w, 4), m4));
			}
	}
}


/* Decode lanes (llm/quant_isa.h): one token against ng groups, a block of each
 * in turn (ng memory streams at once), each group's steps as its tile's. */
static inline __attribute__((always_inline)) void
p2_lanes(const uint8_t *const *g, const int G, size_t n, const int8_t *a, const float *p,
	 float *const *o, size_t ahead, bool nta)
{
	__m256 f[QUANT_LANES][2][2];

	for (int l = 0; l < G; l++)
		f[l][0][0] = f[l][0][1] = _mm256_setzero_ps();
	for (size_t i2 = 0; i2 < n / 64; i2++)
		for (int l = 0; l < G; l++)
			p2_step1_q40(g[l], i2, a, p, f[l][0], ahead, nta);
	for (int l = 0; l < G; l++) {
		_mm256_storeu_ps(o[l], f[l][0][0]);
		_mm256_storeu_ps(o[l] + 8, f[l][0][1]);
	}
}

static void lanes2_q4_0(size_t n, const void *const *groups, int ng, const void *act,
			const float *prep, float *const *out, const struct quant_tune *tune)
{
	const uint8_t *const *g = (const uint8_t *const *)groups;
	const size_t ahead = tune->ahead;
	const bool nta = tune->nta;

	switch (ng) {
	case 4: p2_lanes(g, 4, n, act, prep, out, ahead, nta); break;
	case 3: p2_lanes(g, 3, n, act, prep, out, ahead, nta); break;
	case 2: p2_lanes(g, 2, n, act, prep, out, ahead, nta); break;
	default: p2_lanes(g, 1, n, act, prep, out, ahead, nta); break;
	}
}
_Static_assert(QUANT_LANES == 4, "lanes2_q4_0 has a case for each lane count");

/* 16 rows into the packed layout: per pair of blocks the scales, then each
 * row's two runs of 16 quant bytes as one ymm, transposed 8 rows at a time
 * (put8: dword k of the 8 rows at 64 k). */
static void pack2_q4_0_to(size_t n, const void *src, void *dst, const struct quant_tune *tune)
{
	const size_t rb = n / 32 * 18, ahead = tune->ahead;
	const bool nta = tune->nta;
	const uint8_t *rows = src;
	uint8_t *p = dst;

	for (size_t i = 0; i < n / 64; i++, p += P2_UNIT) {
		__m256i R[16];
		p2_prefetch(rows + 16 * rb + P2_UNIT * i, P2_UNIT, ahead, nta); /* the next group */
		for (int r = 0; r < 16; r++) {
			const uint8_t *b = rows + (size_t)r * rb + 36 * i;
			memcpy(p + 2 * r, b, 2);
			memcpy(p + 32 + 2 * r, b + 18, 2);
			R[r] = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)(b + 20)),
						_mm_loadu_si128((const __m128i *)(b + 2)));
		}
		put8(p + 64, R);
		put8(p + 64 + 32, R + 8);
	}
}

/*
 * Packed Q4_K (the layout of pk_pack_q4_K: a superblock is 36 lines, dword
 * k of the 16 rows side by side: (d, dmin), the 12 scale bytes, then the 32
 * quant dwords). A half (8 rows) at a time, the scales and mins of the 8
 * sub-blocks are unpacked in byte space (ggml get_scale_min_k4, as the
 * AVX-512 packed tile) into the int32s run_kmins gives cols() (KINT). The
 * quants of sub-block j are lines 4 + 8 (j / 2) .., its low (j even) or
 * high nibbles. Sums and float steps are cols()'s with G = 32 (DEPTH 8:
 * 8 * 2 * 15 * 127 < 32768) and KINT, so the bits are tile2_q4_K's.
 */
#define P2_SB 2304      /* bytes of a superblock of the 16 rows */

struct p2_kscales {
	__m256 d, dmin;
	__m256i sc03, m03, sc47, m47; /* byte k of each row's dword: sub-block k (4 + k) */
};

/* Half h (rows 8 h .. 8 h + 7) of superblock u's scales. */
static inline __attribute__((always_inline)) struct p2_kscales p2_kscales_at(const uint8_t *u,
									      int h)
{
	const __m256i m3f = _mm256_set1_epi8(0x3f), m30 = _mm256_set1_epi8(0x30),
		      m4 = _mm256_set1_epi8(0x0f);
	/* the low and the high half of each dword into the low 8 bytes of each lane */
	const __m256i lo16 = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1,
					      -1, 0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1,
					      -1, -1);
	const __m256i hi16 = _mm256_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15, -1, -1, -1, -1, -1, -1,
					      -1, -1, 2, 3, 6, 7, 10, 11, 14, 15, -1, -1, -1, -1,
					      -1, -1, -1, -1);
	__m256i dd = _mm256_loadu_si256((const __m256i *)(u + 32 * h));
	__m256i q0 = _mm256_loadu_si256((const __m256i *)(u + 64 + 32 * h));
	__m256i q1 = _mm256_loadu_si256((const __m256i *)(u + 128 + 32 * h));
	__m256i q2 = _mm256_loadu_si256((const __m256i *)(u + 192 + 32 * h));
	struct p2_kscales k;

	k.d = _mm256_cvtph_ps(_mm256_castsi256_si128(
		_mm256_permute4x64_epi64(_mm256_shuffle_epi8(dd, lo16), 0x08)));
	k.dmin = _mm256_cvtph_ps(_mm256_castsi256_si128(
		_mm256_permute4x64_epi64(_mm256_shuffle_epi8(dd, hi16), 0x08)));
	k.sc03 = _mm256_and_si256(q0, m3f);
	k.m03 = _mm256_and_si256(q1, m3f);
	/* j >= 4: the low 4 bits from q2 (low or high nibble), bits 4-5 from
	 * bits 6-7 of q0 (scale) or q1 (min) */
	k.sc47 = _mm256_or_si256(_mm256_and_si256(q2, m4),
				 _mm256_and_si256(_mm256_srli_epi32(q0, 2), m30));
	k.m47 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(q2, 4), m4),
				_mm256_and_si256(_mm256_srli_epi32(q1, 2), m30));
	return k;
}

/* Sub-block j's byte of each row's dword in bytes03 (j < 4) or bytes47, as
 * an int32 (the pick's 0x80s clear the other three bytes). */
static inline __attribute__((always_inline)) __m256i p2_kpick(__m256i bytes, int j)
{
	const unsigned b = (unsigned)(j % 4);
	const __m256i pick = _mm256_setr_epi32(
		(int)(0x80808000u | b), (int)(0x80808000u | (4 + b)), (int)(0x80808000u | (8 + b)),
		(int)(0x80808000u | (12 + b)), (int)(0x80808000u | b), (int)(0x80808000u | (4 + b)),
		(int)(0x80808000u | (8 + b)), (int)(0x80808000u | (12 + b)));

	return _mm256_shuffle_epi8(bytes, pick);
}

/* Superblock sb of packed group g for C tokens (1 or 2) into f[c][h] (rows
 * 8 h ..): both halves in one pass, each line's two ymm against the same
 * broadcast activation. The halves' scale and min bytes wait on the stack
 * (16 ymm hold the sums); each sub-block adds its scale x sum to T and its
 * min x sa to M, and the superblock ends as cols() (KINT) ends it. */
static inline __attribute__((always_inline)) void
p2_step_q4K(const uint8_t *g, size_t sb, const int8_t *const *a, const float *const *p,
	    __m256 (*f)[2], const int C, size_t ahead, bool nta)
{
	const __m256i m4 = _mm256_set1_epi8(15), ones = _mm256_set1_epi16(1);
	const uint8_t *u = g + sb * P2_SB;
	__m256i kb[2][4]; /* per half: sc03, m03, sc47, m47 */
	__m256i T[2][2];
	__m256 M[2][2];

	_Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
		struct p2_kscales k = p2_kscales_at(u, h);
		kb[h][0] = k.sc03;
		kb[h][1] = k.m03;
		kb[h][2] = k.sc47;
		kb[h][3] = k.m47;
	}
	__asm__("" : : "m"(kb)); /* (on the stack: see above) */
	for (int c = 0; c < C; c++) {
		T[c][0] = T[c][1] = _mm256_setzero_si256();
		M[c][0] = M[c][1] = _mm256_setzero_ps();
	}
	_Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) {
		/* each sub-block loads its own scales and lines (an empty asm:
		 * GCC otherwise kept what it could share on the stack across the
		 * unrolled loop) */
		const uint8_t *uo = u;
		__asm__("" : "+r"(uo));
		const uint8_t *q = uo + 256 + 512 * (size_t)(j / 2);
		size_t s = sb * 8 + (size_t)j, aoff = sb * Q8_K_BYTES2 + Q8_K_OFF2 + 32 * (size_t)j;
		__m256i s16[2][2];
		/* a quarter of the superblock's 36 lines ahead every other
		 * sub-block, as the AVX-512 steps (PK_SB_PREFETCH): with all of
		 * them at the step's start decode read much less of the probe
		 * (docs/perf.md, "K-quant superblock prefetch") */
		if (j % 2 == 0)
			p2_prefetch(u + 576 * (size_t)(j / 2), 576, ahead, nta);
		for (int c = 0; c < C; c++)
			s16[c][0] = s16[c][1] = _mm256_setzero_si256();
		_Pragma("GCC unroll 8") for (int l = 0; l < 8; l++) {
			__m256i w[2];
			for (int h = 0; h < 2; h++) {
				w[h] = _mm256_loadu_si256((const __m256i *)(q + 64 * l + 32 * h));
				w[h] = _mm256_and_si256(j & 1 ? _mm256_srli_epi16(w[h], 4) : w[h], m4);
			}
			for (int c = 0; c < C; c++) {
				int32_t x;
				memcpy(&x, a[c] + aoff + 4 * l, sizeof x);
				__m256i av = _mm256_set1_epi32(x);
				for (int h = 0; h < 2; h++)
					s16[c][h] = _mm256_add_epi16(s16[c][h],
								     _mm256_maddubs_epi16(w[h], av));
				__asm__("" : "+x"(s16[c][0]), "+x"(s16[c][1])); /* (cols()) */
			}
		}
		_Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
			__m256i sc = p2_kpick(kb[h][j < 4 ? 0 : 2], j);
			__m256 m = _mm256_cvtepi32_ps(p2_kpick(kb[h][j < 4 ? 1 : 3], j));
			for (int c = 0; c < C; c++) {
				T[c][h] = _mm256_add_epi32(
					T[c][h], _mm256_mullo_epi32(_mm256_madd_epi16(s16[c][h], ones), sc));
				M[c][h] = _mm256_fmadd_ps(m, _mm256_set1_ps(p[c][2 * s + 1]), M[c][h]);
			}
		}
		if (C == 1)
			__asm__("" : "+x"(T[0][0]), "+x"(T[0][1]), "+x"(M[0][0]), "+x"(M[0][1]));
	}
	_Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
		struct p2_kscales k = p2_kscales_at(u, h);
		for (int c = 0; c < C; c++) {
			__m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(T[c][h]), k.d);
			x = _mm256_fnmadd_ps(M[c][h], k.dmin, x);
			f[c][h] = _mm256_fmadd_ps(x, _mm256_set1_ps(p[c][2 * (sb * 8 + 7)]), f[c][h]);
		}
	}
}

/* A tile's columns straight off packed group g (Q4_0, or Q4_K when K4): C
 * tokens, the steps in order, the 16 sums of each token to o[c]. */
static inline __attribute__((always_inline)) void
p2_cols(const uint8_t *g, size_t n, const int8_t *const *a, const float *const *p,
	float *const *o, const int C, size_t ahead, bool nta, const int K4)
{
	__m256 f[2][2];

	for (int c = 0; c < C; c++)
		f[c][0] = f[c][1] = _mm256_setzero_ps();
	if (!K4 && C == 1) /* decode: a pair of blocks a step */
		for (size_t i2 = 0; i2 < n / 64; i2++)
			p2_step1_q40(g, i2, a[0], p[0], f[0], ahead, nta);
	for (size_t i = 0; !(!K4 && C == 1) && i < (K4 ? n / QK_K : n / 32); i++) {
		if (K4)
			p2_step_q4K(g, i, a, p, f, C, ahead, nta);
		else
			p2_step_q40(g, i, a, p, f, C, ahead, nta);
	}
	for (int c = 0; c < C; c++) {
		_mm256_storeu_ps(o[c], f[c][0]);
		_mm256_storeu_ps(o[c] + 8, f[c][1]);
	}
}
#define p2_cols_q40(...) p2_cols(__VA_ARGS__, 0)
#define p2_cols_q4K(...) p2_cols(__VA_ARGS__, 1)

/* The packed group as tile2_q4_K's repack: each quant line's low and high
 * nibbles are lines of two sub-blocks' runs; per sub-block the scales as
 * int32s (ws) and the mins as floats (wm), per superblock d and dmin (sd). */
static void p2_unpack_tile_q4K(const uint8_t *g, size_t n, struct q_rtile *t, size_t ahead,
			       bool nta)
{
	const __m256i m4 = _mm256_set1_epi8(15);

	for (size_t sb = 0; sb < n / QK_K; sb++) {
		const uint8_t *u = g + sb * P2_SB;
		p2_prefetch(u, P2_SB, ahead, nta);
		for (int h = 0; h < 2; h++) {
			struct p2_kscales k = p2_kscales_at(u, h);
			_mm256_storeu_ps(t->sd + sb * 32 + 8 * (size_t)h, k.d);
			_mm256_storeu_ps(t->sd + sb * 32 + 16 + 8 * (size_t)h, k.dmin);
			for (int j = 0; j < 8; j++) {
				size_t o = (sb * 8 + (size_t)j) * 16 + 8 * (size_t)h;
				_mm256_storeu_si256((__m256i *)(t->ws + o),
						    p2_kpick(j < 4 ? k.sc03 : k.sc47, j));
				_mm256_storeu_ps(t->wm + o,
						 _mm256_cvtepi32_ps(p2_kpick(j < 4 ? k.m03 : k.m47, j)));
			}
			for (int j = 0; j < 8; j += 2)
				for (int l = 0; l < 8; l++) {
					const uint8_t *q = u + 256 + 512 * (size_t)(j / 2) + 64 * (size_t)l;
					__m256i w = _mm256_loadu_si256((const __m256i *)(q + 32 * h));
					uint8_t *d0 = t->q + (sb * 8 + (size_t)j) * 512 + 64 * (size_t)l;
					_mm256_store_si256((__m256i *)(d0 + 32 * h), _mm256_and_si256(w, m4));
					_mm256_store_si256((__m256i *)(d0 + 512 + 32 * h),
							   _mm256_and_si256(_mm256_srli_epi16(w, 4), m4));
				}
		}
	}
}

P2_TILE(ptile2_q4_0, p2_cols_q40, p2_unpack_tile_q40, 32, Q8_0, 0, 8, nta, 0)
P2_TILE(ptile2_q4_K, p2_cols_q4K, p2_unpack_tile_q4K, 32, Q8_K, 1, 8, nta_sb, 1)

/* 16 rows of Q4_K into the packed layout: per superblock the rows' 144
 * bytes as 4 ymm runs and a last 16 bytes, transposed 8 rows at a time. */
static void pack2_q4_K_to(size_t n, const void *src, void *dst, const struct quant_tune *tune)
{
	const size_t rb = n / QK_K * 144, ahead = tune->ahead;
	const bool nta = tune->nta;
	const uint8_t *rows = src;
	uint8_t *p = dst;

	for (size_t sb = 0; sb < n / QK_K; sb++, p += P2_SB) {
		__m256i R[16];
		_Alignas(32) uint8_t last[8 * 64];
		p2_prefetch(rows + 16 * rb + P2_SB * sb, P2_SB, ahead, nta); /* the next group */
		for (int k = 0; k < 4; k++) {
			for (int r = 0; r < 16; r++)
				R[r] = _mm256_loadu_si256(
					(const __m256i *)(rows + (size_t)r * rb + 144 * sb + 32 * (size_t)k));
			put8(p + 512 * (size_t)k, R);
			put8(p + 512 * (size_t)k + 32, R + 8);
		}
		for (int r = 0; r < 16; r++) /* dwords 32..35, the last 16 bytes */
			R[r] = _mm256_castsi128_si256(_mm_loadu_si128(
				(const __m128i *)(rows + (size_t)r * rb + 144 * sb + 128)));
		put8(last, R);
		put8(last + 32, R + 8);
		memcpy(p + 2048, last, 4 * 64);
	}
}

/*
 * Packed Q6_K (the layout of pk_pack_q6_K: per superblock, for each h the
 * 6-bit values as X, Y, Z, 8 lines each; the 16 sub-blocks' int8 scales of
 * the 16 rows; d): run 4 h + j of a row is X & 63 (j = 0), Y & 63 (1), or
 * Z's low (2) or high (3) nibble with bits 6-7 of X or Y as bits 4-5. Half
 * (8 rows) at a time; sums and float steps are cols()'s with G = 16 (DEPTH
 * 2: 2 * 2 * 63 * 128 < 32768) and KINT (the int8 scales widened to int32s),
 * so the bits are tile2_q6_K's.
 */
#define P2_SB6 3360     /* bytes of a Q6_K superblock of the 16 rows */

/* Line k of run i (rows 8 h8 ..) of superblock u, as unsigned 6-bit values. */
static inline __attribute__((always_inline)) __m256i p2_q6_line(const uint8_t *u, int i, int k,
							       int h8)
{
	const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30),
		      m3f = _mm256_set1_epi8(0x3f);
	const int j = i % 4;
	const uint8_t *r = u + 1536 * (size_t)(i / 4) + 64 * (size_t)k + 32 * (size_t)h8;

	if (j < 2)
		return _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(r + 512 * j)), m3f);
	__m256i z = _mm256_loadu_si256((const __m256i *)(r + 1024));
	__m256i t = _mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)(r + 512 * (j - 2))), 2);
	if (j == 3)
		z = _mm256_srli_epi16(z, 4);
	return _mm256_or_si256(_mm256_and_si256(z, m4), _mm256_and_si256(t, m30));
}

/* Sub-block s's int8 scales for rows 8 h8 .., as int32s (cols(), KINT). */
static inline __m256i p2_q6_sc(const uint8_t *u, size_t s, int h8)
{
	return _mm256_cvtepi8_epi32(
		_mm_loadl_epi64((const __m128i *)(u + 3072 + 16 * (s % 16) + 8 * (size_t)h8)));
}

/* The superblock's d for rows 8 h8 .. */
static inline __m256 p2_q6_d(const uint8_t *u, int h8)
{
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(u + 3328 + 16 * h8)));
}

/* Superblock sb of packed group g, half h8, for C tokens (1 or 2) into f[c]. */
static inline __attribute__((always_inline)) void
p2_step_q6K(const uint8_t *g, size_t sb, int h8, const int8_t *const *a, const float *const *p,
	    __m256 *f, const int C, size_t ahead, bool nta)
{
	const __m256i ones = _mm256_set1_epi16(1);
	const uint8_t *u = g + sb * P2_SB6;
	__m256i T[2];

	if (h8 == 0) /* the 53 lines at once (prompts of 2 and 3 tokens) */
		p2_prefetch(u, P2_SB6, ahead, nta);

	for (int c = 0; c < C; c++)
		T[c] = _mm256_setzero_si256();
	_Pragma("GCC unroll 8") for (int i = 0; i < 8; i++) {
		__m256i wv[8];
		_Pragma("GCC unroll 8") for (int k = 0; k < 8; k++)
			wv[k] = p2_q6_line(u, i, k, h8);
		_Pragma("GCC unroll 2") for (int half = 0; half < 2; half++) {
			size_t s = sb * 16 + 2 * (size_t)i + (size_t)half;
			size_t aoff = sb * Q8_K_BYTES2 + Q8_K_OFF2 + 32 * (size_t)i + 16 * (size_t)half;
			__m256i sc = p2_q6_sc(u, s, h8);
			for (int c = 0; c < C; c++) {
				int32_t init;
				memcpy(&init, &p[c][2 * s + 1], sizeof init);
				__m256i acc = _mm256_set1_epi32(init);
				_Pragma("GCC unroll 2") for (int j0 = 0; j0 < 4; j0 += 2) {
					__m256i s16 = _mm256_setzero_si256();
					_Pragma("GCC unroll 2") for (int j = j0; j < j0 + 2; j++) {
						int32_t x;
						memcpy(&x, a[c] + aoff + 4 * j, sizeof x);
						s16 = _mm256_add_epi16(
							s16, _mm256_maddubs_epi16(wv[4 * half + j],
										  _mm256_set1_epi32(x)));
					}
					acc = _mm256_add_epi32(acc, _mm256_madd_epi16(s16, ones));
				}
				T[c] = _mm256_add_epi32(T[c], _mm256_mullo_epi32(acc, sc));
			}
		}
	}
	for (int c = 0; c < C; c++)
		f[c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(T[c]), p2_q6_d(u, h8)),
				       _mm256_set1_ps(p[c][2 * (sb * 16 + 15)]), f[c]);
}

/*
 * Superblock sb of packed group g for one token (decode), both halves in
 * one pass: each line's broadcast activation serves the two ymm of its 16
 * rows, and each line is used as soon as it is unpacked. The sums and the
 * float steps of each half are p2_step_q6K's, so its bits. (p2_step_q6K
 * unpacks a run's 8 lines first, for its second token; for one, GCC spilled
 * them with the address arithmetic of both halves: docs/perf.md, "K-quant
 * superblock prefetch".)
 */
static inline __attribute__((always_inline)) void
p2_step1_q6K(const uint8_t *g, size_t sb, const int8_t *a, const float *p, __m256 *f,
	     size_t ahead, bool nta)
{
	const __m256i ones = _mm256_set1_epi16(1);
	const uint8_t *u = g + sb * P2_SB6;
	__m256i T[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};

	_Pragma("GCC unroll 8") for (int i = 0; i < 8; i++)
		_Pragma("GCC unroll 2") for (int half = 0; half < 2; half++) {
			/* each sub-block loads its own lines: an empty asm hides
			 * that runs share X and Y lines, which GCC otherwise loaded
			 * once and kept on the stack across the unrolled loop, its
			 * sums and scales with them (docs/perf.md, "AVX2 decode
			 * steps") */
			const uint8_t *uo = u;
			__asm__("" : "+r"(uo));
			/* a sixteenth of the 53 lines ahead before each sub-block:
			 * from memory, one core read further below the read probe
			 * with a quarter every other sub-block (docs/perf.md, "AVX2
			 * decode steps") */
			p2_prefetch(u + P2_SB6 / 16 * (size_t)(2 * i + half), P2_SB6 / 16, ahead, nta);
			size_t s = sb * 16 + 2 * (size_t)i + (size_t)half;
			const int8_t *q = a + sb * Q8_K_BYTES2 + Q8_K_OFF2 + 32 * (size_t)i +
					  16 * (size_t)half;
			int32_t init;
			__m256i acc[2];
			memcpy(&init, &p[2 * s + 1], sizeof init);
			acc[0] = acc[1] = _mm256_set1_epi32(init);
			_Pragma("GCC unroll 2") for (int k0 = 0; k0 < 4; k0 += 2) {
				__m256i s16[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
				_Pragma("GCC unroll 2") for (int k = k0; k < k0 + 2; k++) {
					int32_t x;
					memcpy(&x, q + 4 * k, sizeof x);
					__m256i av = _mm256_set1_epi32(x);
					_Pragma("GCC unroll 2") for (int h8 = 0; h8 < 2; h8++)
						s16[h8] = _mm256_add_epi16(
							s16[h8],
							_mm256_maddubs_epi16(
								p2_q6_line(uo, i, 4 * half + k, h8), av));
					__asm__("" : "+x"(s16[0]), "+x"(s16[1])); /* (cols()) */
				}
				_Pragma("GCC unroll 2") for (int h8 = 0; h8 < 2; h8++)
					acc[h8] = _mm256_add_epi32(acc[h8], _mm256_madd_epi16(s16[h8], ones));
			}
			_Pragma("GCC unroll 2") for (int h8 = 0; h8 < 2; h8++)
				T[h8] = _mm256_add_epi32(T[h8],
							 _mm256_mullo_epi32(acc[h8], p2_q6_sc(uo, s, h8)));
			__asm__("" : "+x"(T[0]), "+x"(T[1]));
		}
	_Pragma("GCC unroll 2") for (int h8 = 0; h8 < 2; h8++)
		f[h8] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(T[h8]), p2_q6_d(u, h8)),
					_mm256_set1_ps(p[2 * (sb * 16 + 15)]), f[h8]);
}

static inline __attribute__((always_inline)) void
p2_cols_q6K(const uint8_t *g, size_t n, const int8_t *const *a, const float *const *p,
	    float *const *o, const int C, size_t ahead, bool nta)
{
	if (C == 1) {
		__m256 f[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
		for (size_t sb = 0; sb < n / QK_K; sb++)
			p2_step1_q6K(g, sb, a[0], p[0], f, ahead, nta);
		_mm256_storeu_ps(o[0], f[0]);
		_mm256_storeu_ps(o[0] + 8, f[1]);
		return;
	}
	for (int h8 = 0; h8 < 2; h8++) {
		__m256 f[2];
		for (int c = 0; c < C; c++)
			f[c] = _mm256_setzero_ps();
		for (size_t sb = 0; sb < n / QK_K; sb++)
			p2_step_q6K(g, sb, h8, a, p, f, C, h8 ? 0 : ahead, nta);
		for (int c = 0; c < C; c++)
			_mm256_storeu_ps(o[c] + 8 * h8, f[c]);
	}
}

/* The packed group as tile2_q6_K's repack: run lines, the scales as int32s
 * per sub-block (ws), d per superblock (sd). */
static void p2_unpack_tile_q6K(const uint8_t *g, size_t n, struct q_rtile *t, size_t ahead,
			       bool nta)
{
	for (size_t sb = 0; sb < n / QK_K; sb++) {
		const uint8_t *u = g + sb * P2_SB6;
		p2_prefetch(u, P2_SB6, ahead, nta);
		for (int h8 = 0; h8 < 2; h8++) {
			_mm256_storeu_ps(t->sd + sb * 32 + 8 * (size_t)h8, p2_q6_d(u, h8));
			for (int i = 0; i < 8; i++)
				for (int k = 0; k < 8; k++)
					_mm256_store_si256((__m256i *)(t->q + (sb * 8 + (size_t)i) * 512 +
								       64 * (size_t)k + 32 * (size_t)h8),
							   p2_q6_line(u, i, k, h8));
			for (size_t s = 0; s < 16; s++)
				_mm256_storeu_si256((__m256i *)(t->ws + (sb * 16 + s) * 16 + 8 * (size_t)h8),
						    p2_q6_sc(u, s, h8));
		}
	}
}

P2_TILE(ptile2_q6_K, p2_cols_q6K, p2_unpack_tile_q6K, 16, Q8_K, 0, 2, nta_sb, 1)

/* 16 rows of Q6_K into the packed layout: X, Y, Z of each row (q6_xyz),
 * transposed 8 rows at a time; the scales a byte per row, d a half. */
static void pack2_q6_K_to(size_t n, const void *src, void *dst, const struct quant_tune *tune)
{
	const size_t rb = n / QK_K * sizeof(struct block_q6_K), ahead = tune->ahead;
	const bool nta = tune->nta;
	const uint8_t *rows = src;
	uint8_t *p = dst;

	for (size_t sb = 0; sb < n / QK_K; sb++, p += P2_SB6) {
		p2_prefetch(rows + 16 * rb + P2_SB6 * sb, P2_SB6, ahead, nta); /* the next group */
		for (int h = 0; h < 2; h++) {
			__m256i X[16], Y[16], Z[16];
			for (int r = 0; r < 16; r++)
				q6_xyz((const struct block_q6_K *)(rows + r * rb) + sb, h, &X[r], &Y[r],
				       &Z[r]);
			for (int k = 0; k < 2; k++) {
				put8(p + 1536 * (size_t)h + 32 * (size_t)k, X + 8 * k);
				put8(p + 1536 * (size_t)h + 512 + 32 * (size_t)k, Y + 8 * k);
				put8(p + 1536 * (size_t)h + 1024 + 32 * (size_t)k, Z + 8 * k);
			}
		}
		for (int r = 0; r < 16; r++) {
			const struct block_q6_K *b = (const struct block_q6_K *)(rows + r * rb) + sb;
			for (int s = 0; s < 16; s++)
				p[3072 + 16 * s + r] = (uint8_t)b->scales[s];
			memcpy(p + 3328 + 2 * r, &b->d, 2);
		}
	}
}

/* Decode lanes of the K-quants: a superblock of each group in turn, both
 * halves (each half's sums in superblock order, as p2_cols_*). */
static inline __attribute__((always_inline)) void
p2_lanes_k(const uint8_t *const *g, const int G, size_t n, const int8_t *a, const float *p,
	   float *const *o, size_t ahead, bool nta, const int Q6)
{
	__m256 f[QUANT_LANES][2];

	for (int l = 0; l < G; l++)
		f[l][0] = f[l][1] = _mm256_setzero_ps();
	for (size_t sb = 0; sb < n / QK_K; sb++)
		for (int l = 0; l < G; l++)
			if (Q6)
				p2_step1_q6K(g[l], sb, a, p, f[l], ahead, nta);
			else
				p2_step_q4K(g[l], sb, &a, &p, &f[l], 1, ahead, nta);
	for (int l = 0; l < G; l++) {
		_mm256_storeu_ps(o[l], f[l][0]);
		_mm256_storeu_ps(o[l] + 8, f[l][1]);
	}
}

#define P2_KLANES(NAME, Q6)                                                               \
	static void NAME(size_t n, const void *const *groups, int ng, const void *act,      \
			 const float *prep, float *const *out, const struct quant_tune *tune) \
	{                                                                                   \
		const uint8_t *const *g = (const uint8_t *const *)groups;                   \
		const size_t ahead = tune->ahead;                                           \
		const bool nta = tune->nta_sb;                                                 \
		switch (ng) {                                                               \
		case 4: p2_lanes_k(g, 4, n, act, prep, out, ahead, nta, (Q6)); break;       \
		case 3: p2_lanes_k(g, 3, n, act, prep, out, ahead, nta, (Q6)); break;       \
		case 2: p2_lanes_k(g, 2, n, act, prep, out, ahead, nta, (Q6)); break;       \
		default: p2_lanes_k(g, 1, n, act, prep, out, ahead, nta, (Q6)); break;      \
		}                                                                           \
	}
P2_KLANES(lanes2_q4_K, 0)
P2_KLANES(lanes2_q6_K, 1)

static const struct quant_packed pack2_q4_0 = {
	pack2_q4_0_to, pk_unpack_q4_0, {ptile2_q4_0, tile_prep_q4_0, "avx2 packed"}, 64, lanes2_q4_0};
static const struct quant_packed pack2_q4_K = {
	pack2_q4_K_to, pk_unpack_q4_K, {ptile2_q4_K, tile_prep_kmins32, "avx2 packed"}, 256,
	lanes2_q4_K};
static const struct quant_packed pack2_q6_K = {
	pack2_q6_K_to, pk_unpack_q6_K, {ptile2_q6_K, tile_prep_q6_K, "avx2 packed"}, 256,
	lanes2_q6_K};

const struct quant_packed *const avx2_packed[GGML_TYPE_COUNT] = {
	[GGML_TYPE_Q4_0] = &pack2_q4_0,
	[GGML_TYPE_Q8_0] = &avx2_packed_q8_0,
	[GGML_TYPE_Q4_K] = &pack2_q4_K,
	[GGML_TYPE_Q6_K] = &pack2_q6_K,
};

static const struct quant_tile t2_q4_0 = {tile2_q4_0, tile_prep_q4_0, "avx2"};
static const struct quant_tile t2_q4_K = {tile2_q4_K, tile_prep_kmins32, "avx2"};
static const struct quant_tile t2_q5_K = {tile2_q5_K, tile_prep_kmins32, "avx2"};
static const struct quant_tile t2_q6_K = {tile2_q6_K, tile_prep_q6_K, "avx2"};
static const struct quant_tile t2_q2_K = {tile2_q2_K, tile_prep_kmins16, "avx2"};
static const struct quant_tile t2_q3_K = {tile2_q3_K, tile_prep_q3_K, "avx2"};

const struct quant_tile *const avx2_tile[GGML_TYPE_COUNT] = {
	[GGML_TYPE_Q4_0] = &t2_q4_0, [GGML_TYPE_Q8_0] = &avx2_tile_q8_0, [GGML_TYPE_Q4_K] = &t2_q4_K, [GGML_TYPE_Q5_K] = &t2_q5_K,
	[GGML_TYPE_Q6_K] = &t2_q6_K, [GGML_TYPE_Q2_K] = &t2_q2_K, [GGML_TYPE_Q3_K] = &t2_q3_K,
};
