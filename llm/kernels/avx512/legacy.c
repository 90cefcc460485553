/*
 * llm/kernels/avx512/legacy.c — AVX-512 (VNNI) rows of the 32-element block
 * types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 against Q8_0 / Q8_1 activations) and
 * of the float types (F32, F16, BF16 against F32 activations).
 *
 * Block layouts as in llm/quant_blocks.h (ggml-common.h block_q*). Decode is
 * a matrix-vector product that streams every weight byte once, so these rows
 * are built to keep up with memory: few instructions per byte, and a
 * software prefetch LG_PF bytes ahead of the weights (without it these
 * rows stalled on memory).
 *
 * Block rows go eight blocks at a time, two blocks per zmm:
 *  - quants: the 16 bytes of nibbles of blocks A and B are broadcast to
 *    [A A B B] (loads, one merge), then one AND keeps the low nibbles in
 *    128-bit lanes 0 and 2 and the high nibbles, times 16, in lanes 1 and 3;
 *    that is the element order of the two Q8 blocks [a_A a_B] of the
 *    activations. Q5 types shift the high nibbles down instead (their fifth
 *    bit, 16, would not fit in a byte times 16) and add the fifth bit.
 *  - vpdpbusd takes the quants as unsigned bytes: the zero points (8 for
 *    Q4_0, 16 for Q5_0; 128 for Q8_0 whose quants get their sign bit
 *    flipped) come out as o * sum(a), a second vpdpbusd of the constant o
 *    against the activations, subtracted in int32: every lane's sum of four
 *    products is exact, as the scalar row's block sums.
 *  - the eight blocks' f16 scales (d, and m or s beside them in Q4_1, Q5_1
 *    and Q8_1) are gathered as dwords by vpermt2d from a few 64-byte
 *    windows and converted at once by vcvtph2ps; their products d_w d_a
 *    (and m s) are floats as in the scalar row.
 *  - each int32 lane is converted to float and multiplied by its block's
 *    d_w d_a (d_w d_a / 16 for high-nibble lanes, an exact power of two)
 *    into one float accumulator per activation row, summed once per row.
 * So the result differs from the scalar row only by float rounding (the
 * order of the sum), within the selftest's bound. A row whose block count
 * is not a multiple of 8 ends with the AVX2 row over the last blocks.
 *
 * vec_dot and gemm share one body (the weight blocks unpacked once for every
 * activation row, each row's float steps those of vec_dot), so gemm returns
 * vec_dot's bits for every column.
 */
#include "../avx2/avx2.h"
#include "../avx2/avx2_rows.h"
#include "../scalar/scalar.h"
#include "avx512_rows.h"

#define LG_INLINE static inline __attribute__((always_inline))
#define LG_UNROLL _Pragma("GCC unroll 4")

/* Prefetch distance in weight bytes, a few rows of a small matrix: far
 * enough ahead to cover memory latency at the rate these rows consume bytes;
 * shorter left read bandwidth unused, and 4 KiB was the most consistent of
 * the distances that reached it (docs/perf.md, "Rows and prefill tiles"). */
#define LG_PF 4096

/* Activation row j of a gemm call, at block i. */
#define LG_ACT(T, j, i) ((const struct T *)((const uint8_t *)act + (size_t)(j) * as) + (i))

/* Ask for the cache lines of the bytes LG_PF ahead of a batch of `bytes`. */
LG_INLINE void lg_prefetch(const void *p, size_t bytes)
{
	const char *c = (const char *)p + LG_PF;

	for (size_t o = 0; o < bytes; o += 64)
		_mm_prefetch(c + o, _MM_HINT_T0);
}

LG_INLINE __m512i lg_load(const void *p, size_t off)
{
	return _mm512_loadu_si512((const uint8_t *)p + off);
}

/* Index vectors: lanes 0-3 = a, 4-7 = b, 8-11 = c, 12-15 = d. */
LG_INLINE __m512i lg_idx4(int a, int b, int c, int d)
{
	return _mm512_set_epi32(d, d, d, d, c, c, c, c, b, b, b, b, a, a, a, a);
}

/* A vpermt2d index (dwords 0-15 from the first table, 16-31 from the
 * second) gathering the 8 listed dwords into lanes 0..7. */
LG_INLINE __m512i lg_idx8(int a, int b, int c, int d, int e, int f, int g, int h)
{
	return _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, h, g, f, e, d, c, b, a);
}

/* Bytes of both 256-bit halves: x in lanes 0 and 2, y in 1 and 3. */
LG_INLINE __m512i lg_bytes2(char x, char y)
{
	__m256i h = _mm256_set_m128i(_mm_set1_epi8(y), _mm_set1_epi8(x));

	return _mm512_inserti64x4(_mm512_castsi256_si512(h), h, 1);
}

/* 32 bytes at a then 32 bytes at b. */
LG_INLINE __m512i lg_2x32(const void *a, const void *b)
{
	return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a)),
				  _mm256_loadu_si256((const __m256i *)b), 1);
}

/* 16 bytes at a to 128-bit lanes 0 and 1, 16 bytes at b to lanes 2 and 3. */
LG_INLINE __m512i lg_2x16x2(const void *a, const void *b)
{
	__m512i v = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)a));

	return _mm512_mask_broadcast_i32x4(v, 0xff00, _mm_loadu_si128((const __m128i *)b));
}

/* Q4 quants of two blocks: low nibbles, high nibbles x 16 (lg_bytes2 mask). */
LG_INLINE __m512i lg_q4x2(const uint8_t *qa, const uint8_t *qb, __m512i nib16)
{
	return _mm512_and_si512(lg_2x16x2(qa, qb), nib16);
}

/* Q5 quants 0..31 of two blocks: nibbles plus 16 where qh has the bit (bit j
 * of the little-endian u32 is element j; elements in zmm order A then B). */
LG_INLINE __m512i lg_q5x2(const uint8_t *qa, const uint8_t *qb, const uint8_t *ha,
			  const uint8_t *hb)
{
	__m512i v = lg_2x16x2(qa, qb);
	uint32_t a, b;

	memcpy(&a, ha, 4);
	memcpy(&b, hb, 4);
	v = _mm512_and_si512(_mm512_mask_srli_epi16(v, 0xff00ff00u, v, 4), _mm512_set1_epi8(0x0f));
	return _mm512_mask_add_epi8(v, _cvtu64_mask64((uint64_t)b << 32 | a), v,
				    _mm512_set1_epi8(16));
}

/* u8 quants q times s8 activations a minus o times a, per int32 lane. */
LG_INLINE __m512i lg_dot_off(__m512i q, __m512i a, __m512i o)
{
	return _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), q, a),
				_mm512_dpbusd_epi32(_mm512_setzero_si512(), o, a));
}

/* acc + float(d) * sc, lane by lane (|d| < 2^24: the conversion is exact). */
LG_INLINE __m512 lg_fma(__m512i d, __m512 sc, __m512 acc)
{
	return _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), sc, acc);
}

/*
 * Scale gathers for 8 blocks, reading only bytes of those blocks (a window
 * past them could cross the end of the tensor). The "parity" form (d alone,
 * at a stride of 18, 22 or 34 bytes, 2 mod 4: every other block starts on a
 * dword): dword lane k holds block k's d, the dword at byte 4 floor(s k / 4),
 * in its low half for even k and its high half for odd k, so lg_cvt_par()
 * gives d of block k in float lane 2 k + (k & 1) and zero in the others.
 * The "pair" form (d and m, or d and s, adjacent at a stride of 20, 24 or 36
 * bytes, 0 mod 4): lane k holds (d, m), lg_cvt_pair() gives d in float lane
 * 2 k and m in 2 k + 1.
 */
#define LG_PAR_LANES 0x9999 /* float lanes 0, 3, 4, 7, 8, 11, 12, 15 */

LG_INLINE __m512 lg_cvt_par(__m512i v)
{
	return _mm512_maskz_cvtph_ps(LG_PAR_LANES, _mm512_castsi512_si256(v));
}

LG_INLINE __m512 lg_cvt_pair(__m512i v)
{
	return _mm512_cvtph_ps(_mm512_castsi512_si256(v));
}

/* block_q4_0, 18 bytes: d of block k at byte 18 k, all within 128 bytes. */
LG_INLINE __m512i lg_d_q4_0(const void *x)
{
	return _mm512_permutex2var_epi32(lg_load(x, 0), lg_idx8(0, 4, 9, 13, 18, 22, 27, 31),
					 lg_load(x, 64));
}

/* block_q5_0, 22 bytes: blocks 0..5 in bytes 0..127, 6 and 7 at 132, 154. */
LG_INLINE __m512i lg_d_q5_0(const void *x)
{
	__m512i lo = _mm512_permutex2var_epi32(lg_load(x, 0), lg_idx8(0, 5, 11, 16, 22, 27, 0, 0),
					       lg_load(x, 64));
	__m512i hi = _mm512_permutexvar_epi32(lg_idx8(0, 0, 0, 0, 0, 0, 5, 10), lg_load(x, 112));

	return _mm512_mask_blend_epi32(0xc0, lo, hi);
}

/* block_q8_0, 34 bytes (weights and activations): two blocks per 68 bytes. */
LG_INLINE __m512i lg_d_q8_0(const void *y)
{
	__m512i i = lg_idx8(0, 8, 16, 24, 0, 8, 16, 24);
	__m512i lo = _mm512_permutex2var_epi32(lg_load(y, 0), i, lg_load(y, 68));
	__m512i hi = _mm512_permutex2var_epi32(lg_load(y, 136), i, lg_load(y, 204));

	return _mm512_mask_blend_epi32(0xf0, lo, hi);
}

/* block_q4_1, 20 bytes: (d, m) of blocks 0..3 in bytes 0..63, 4..7 in 80..143. */
LG_INLINE __m512i lg_dm_q4_1(const void *x)
{
	return _mm512_permutex2var_epi32(lg_load(x, 0), lg_idx8(0, 5, 10, 15, 16, 21, 26, 31),
					 lg_load(x, 80));
}

/* block_q5_1, 24 bytes: (d, m) of blocks 0..5 from bytes 0..63 and 72..135,
 * 6 and 7 from 128..191. */
LG_INLINE __m512i lg_dm_q5_1(const void *x)
{
	__m512i lo = _mm512_permutex2var_epi32(lg_load(x, 0), lg_idx8(0, 6, 12, 16, 22, 28, 0, 0),
					       lg_load(x, 72));
	__m512i hi = _mm512_permutexvar_epi32(lg_idx8(0, 0, 0, 0, 0, 0, 4, 10), lg_load(x, 128));

	return _mm512_mask_blend_epi32(0xc0, lo, hi);
}

/* block_q8_1, 36 bytes: (d, s), two blocks per 72 bytes. */
LG_INLINE __m512i lg_ds_q8_1(const void *y)
{
	__m512i i = lg_idx8(0, 9, 16, 25, 0, 9, 16, 25);
	__m512i lo = _mm512_permutex2var_epi32(lg_load(y, 0), i, lg_load(y, 72));
	__m512i hi = _mm512_permutex2var_epi32(lg_load(y, 144), i, lg_load(y, 216));

	return _mm512_mask_blend_epi32(0xf0, lo, hi);
}

static float lg_hsum(__m512 v)
{
	__m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));

	return avx2_hsum(_mm256_add_ps(_mm512_castps512_ps256(v), hi));
}

/* Weight bytes of one batch of 8 blocks. */
#define LG_BATCH(T) (8 * sizeof(struct block_##T))

/*
 * Q4_0 against Q8_0. Per batch: s = d_w d_a in the parity lanes, s16 = s / 16;
 * pair p (blocks 2p, 2p+1) takes lanes 4p and 4p+3 of s for the low nibbles,
 * of s16 for the high ones.
 */
LG_INLINE void lg_q4_0(size_t n, const void *w, const void *act, size_t as, float *out,
		       size_t os, const int nc)
{
	const struct block_q4_0 *x = w;
	const __m512i nib16 = lg_bytes2(0x0f, (char)0xf0), off = lg_bytes2(8, (char)128);
	size_t nb = n / 32, i;
	__m512 acc[QUANT_GEMM_COLS];

	LG_UNROLL
	for (int j = 0; j < nc; j++)
		acc[j] = _mm512_setzero_ps();
	for (i = 0; i + 8 <= nb; i += 8) {
		__m512 fw = lg_cvt_par(lg_d_q4_0(x + i)), s[QUANT_GEMM_COLS], s16[QUANT_GEMM_COLS];
		lg_prefetch(x + i, LG_BATCH(q4_0));
		LG_UNROLL
		for (int j = 0; j < nc; j++) {
			s[j] = _mm512_mul_ps(fw, lg_cvt_par(lg_d_q8_0(LG_ACT(block_q8_0, j, i))));
			s16[j] = _mm512_mul_ps(s[j], _mm512_set1_ps(0.0625f));
		}
		LG_UNROLL
		for (int p = 0; p < 4; p++) {
			const struct block_q4_0 *xb = x + i + 2 * p;
			__m512i q = lg_q4x2(xb[0].qs, xb[1].qs, nib16);
			__m512i si = lg_idx4(4 * p, 16 + 4 * p, 4 * p + 3, 19 + 4 * p);
			LG_UNROLL
			for (int j = 0; j < nc; j++) {
				const struct block_q8_0 *yb = LG_ACT(block_q8_0, j, i + 2 * p);
				__m512i d = lg_dot_off(q, lg_2x32(yb[0].qs, yb[1].qs), off);
				acc[j] = lg_fma(d, _mm512_permutex2var_ps(s[j], si, s16[j]), acc[j]);
			}
		}
	}
	LG_UNROLL
	for (int j = 0; j < nc; j++) {
		out[j * os] = lg_hsum(acc[j]);
		if (i < nb)
			out[j * os] += avx2_q4_0_vec_dot((nb - i) * 32, x + i,
							LG_ACT(block_q8_0, j, i));
	}
}

/*
 * QUANT_ROWS Q4_0 weight rows (w_stride bytes apart) against one Q8_0
 * activation row, for decode. Everything that depends on the activations
 * alone is done once for the rows: their scales, the pairs of activation
 * blocks, and the zero point's term o * sum(a), negated, which then starts
 * each row's vpdpbusd (the same exact int32 as lg_q4_0's difference). Each
 * row's float steps are lg_q4_0's, so each result has vec_dot's bits.
 */
void avx512_q4_0_rows(size_t n, const void *w, size_t w_stride, const void *act, float *out)
{
	const struct block_q8_0 *y = act;
	const __m512i nib16 = lg_bytes2(0x0f, (char)0xf0), off = lg_bytes2(8, (char)128);
	size_t nb = n / 32, i;
	__m512 acc[QUANT_ROWS];

	LG_UNROLL
	for (int k = 0; k < QUANT_ROWS; k++)
		acc[k] = _mm512_setzero_ps();
	for (i = 0; i + 8 <= nb; i += 8) {
		__m512 fa = lg_cvt_par(lg_d_q8_0(y + i));
		__m512i a[4], neg[4];
		LG_UNROLL
		for (int p = 0; p < 4; p++) {
			const struct block_q8_0 *yb = y + i + 2 * p;
			a[p] = lg_2x32(yb[0].qs, yb[1].qs);
			neg[p] = _mm512_sub_epi32(_mm512_setzero_si512(),
						  _mm512_dpbusd_epi32(_mm512_setzero_si512(), off, a[p]));
		}
		LG_UNROLL
		for (int k = 0; k < QUANT_ROWS; k++) {
			const struct block_q4_0 *x =
				(const struct block_q4_0 *)((const uint8_t *)w + (size_t)k * w_stride);
			__m512 s = _mm512_mul_ps(lg_cvt_par(lg_d_q4_0(x + i)), fa);
			__m512 s16 = _mm512_mul_ps(s, _mm512_set1_ps(0.0625f));
			lg_prefetch(x + i, LG_BATCH(q4_0));
			LG_UNROLL
			for (int p = 0; p < 4; p++) {
				const struct block_q4_0 *xb = x + i + 2 * p;
				__m512i q = lg_q4x2(xb[0].qs, xb[1].qs, nib16);
				__m512i si = lg_idx4(4 * p, 16 + 4 * p, 4 * p + 3, 19 + 4 * p);
				__m512i d = _mm512_dpbusd_epi32(neg[p], q, a[p]);
				acc[k] = lg_fma(d, _mm512_permutex2var_ps(s, si, s16), acc[k]);
			}
		}
	}
	LG_UNROLL
	for (int k = 0; k < QUANT_ROWS; k++) {
		const struct block_q4_0 *x =
			(const struct block_q4_0 *)((const uint8_t *)w + (size_t)k * w_stride);
		out[k] = lg_hsum(acc[k]);
		if (i < nb)
			out[k] += avx2_q4_0_vec_dot((nb - i) * 32, x + i, y + i);
	}
}

/* Q5_0 against Q8_0: as Q4_0 with 5-bit quants and zero point 16. */
LG_INLINE void lg_q5_0(size_t n, const void *w, const void *act, size_t as, float *out,
		       size_t os, const int nc)
{
	const struct block_q5_0 *x = w;
	const __m512i off = _mm512_set1_epi8(16);
	size_t nb = n / 32, i;
	__m512 acc[QUANT_GEMM_COLS];

	LG_UNROLL
	for (int j = 0; j < nc; j++)
		acc[j] = _mm512_setzero_ps();
	for (i = 0; i + 8 <= nb; i += 8) {
		__m512 fw = lg_cvt_par(lg_d_q5_0(x + i)), s[QUANT_GEMM_COLS];
		lg_prefetch(x + i, LG_BATCH(q5_0));
		LG_UNROLL
		for (int j = 0; j < nc; j++)
			s[j] = _mm512_mul_ps(fw, lg_cvt_par(lg_d_q8_0(LG_ACT(block_q8_0, j, i))));
		LG_UNROLL
		for (int p = 0; p < 4; p++) {
			const struct block_q5_0 *xb = x + i + 2 * p;
			__m512i q = lg_q5x2(xb[0].qs, xb[1].qs, xb[0].qh, xb[1].qh);
			__m512i si = lg_idx4(4 * p, 4 * p, 4 * p + 3, 4 * p + 3);
			LG_UNROLL
			for (int j = 0; j < nc; j++) {
				const struct block_q8_0 *yb = LG_ACT(block_q8_0, j, i + 2 * p);
				__m512i d = lg_dot_off(q, lg_2x32(yb[0].qs, yb[1].qs), off);
				acc[j] = lg_fma(d, _mm512_permutexvar_ps(si, s[j]), acc[j]);
			}
		}
	}
	LG_UNROLL
	for (int j = 0; j < nc; j++) {
		out[j * os] = lg_hsum(acc[j]);
		if (i < nb)
			out[j * os] += avx2_q5_0_vec_dot((nb - i) * 32, x + i,
							LG_ACT(block_q8_0, j, i));
	}
}

/* Q8_0 against Q8_0: quants with the sign bit flipped are q + 128 unsigned. */
LG_INLINE void lg_q8_0(size_t n, const void *w, const void *act, size_t as, float *out,
		       size_t os, const int nc)
{
	const struct block_q8_0 *x = w;
	const __m512i off = _mm512_set1_epi8((char)0x80);
	size_t nb = n / 32, i;
	__m512 acc[QUANT_GEMM_COLS];

	LG_UNROLL
	for (int j = 0; j < nc; j++)
		acc[j] = _mm512_setzero_ps();
	for (i = 0; i + 8 <= nb; i += 8) {
		__m512 fw = lg_cvt_par(lg_d_q8_0(x + i)), s[QUANT_GEMM_COLS];
		lg_prefetch(x + i, LG_BATCH(q8_0));
		LG_UNROLL
		for (int j = 0; j < nc; j++)
			s[j] = _mm512_mul_ps(fw, lg_cvt_par(lg_d_q8_0(LG_ACT(block_q8_0, j, i))));
		LG_UNROLL
		for (int p = 0; p < 4; p++) {
			const struct block_q8_0 *xb = x + i + 2 * p;
			__m512i q = _mm512_xor_si512(lg_2x32(xb[0].qs, xb[1].qs), off);
			__m512i si = lg_idx4(4 * p, 4 * p, 4 * p + 3, 4 * p + 3);
			LG_UNROLL
			for (int j = 0; j < nc; j++) {
				const struct block_q8_0 *yb = LG_ACT(block_q8_0, j, i + 2 * p);
				__m512i d = lg_dot_off(q, lg_2x32(yb[0].qs, yb[1].qs), off);
				acc[j] = lg_fma(d, _mm512_permutexvar_ps(si, s[j]), acc[j]);
			}
		}
	}
	LG_UNROLL
	for (int j = 0; j < nc; j++) {
		out[j * os] = lg_hsum(acc[j]);
		if (i < nb)
			out[j * os] += avx2_q8_0_vec_dot((nb - i) * 32, x + i,
							LG_ACT(block_q8_0, j, i));
	}
}

/*
 * Q4_1 against Q8_1, x = d q + m: s = (d_w, m) times (d_a, s_a) lane by lane
 * is d_w d_a in the even lanes and m s_a (s_a = d_a sum(a), Q8_1) in the odd
 * ones, which go straight to the accumulator; pair p takes lanes 4p, 4p+2.
 */
LG_INLINE void lg_q4_1(size_t n, const void *w, const void *act, size_t as, float *out,
		       size_t os, const int nc)
{
	const struct block_q4_1 *x = w;
	const __m512i nib16 = lg_bytes2(0x0f, (char)0xf0);
	size_t nb = n / 32, i;
	__m512 acc[QUANT_GEMM_COLS];

	LG_UNROLL
	for (int j = 0; j < nc; j++)
		acc[j] = _mm512_setzero_ps();
	for (i = 0; i + 8 <= nb; i += 8) {
		__m512 fw = lg_cvt_pair(lg_dm_q4_1(x + i)), s[QUANT_GEMM_COLS], s16[QUANT_GEMM_COLS];
		lg_prefetch(x + i, LG_BATCH(q4_1));
		LG_UNROLL
		for (int j = 0; j < nc; j++) {
			s[j] = _mm512_mul_ps(fw, lg_cvt_pair(lg_ds_q8_1(LG_ACT(block_q8_1, j, i))));
			s16[j] = _mm512_mul_ps(s[j], _mm512_set1_ps(0.0625f));
			acc[j] = _mm512_mask_add_ps(acc[j], 0xaaaa, acc[j], s[j]);
		}
		LG_UNROLL
		for (int p = 0; p < 4; p++) {
			const struct block_q4_1 *xb = x + i + 2 * p;
			__m512i q = lg_q4x2(xb[0].qs, xb[1].qs, nib16);
			__m512i si = lg_idx4(4 * p, 16 + 4 * p, 4 * p + 2, 18 + 4 * p);
			LG_UNROLL
			for (int j = 0; j < nc; j++) {
				const struct block_q8_1 *yb = LG_ACT(block_q8_1, j, i + 2 * p);
				__m512i d = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q,
								lg_2x32(yb[0].qs, yb[1].qs));
				acc[j] = lg_fma(d, _mm512_permutex2var_ps(s[j], si, s16[j]), acc[j]);
			}
		}
	}
	LG_UNROLL
	for (int j = 0; j < nc; j++) {
		out[j * os] = lg_hsum(acc[j]);
		if (i < nb)
			out[j * os] += avx2_q4_1_vec_dot((nb - i) * 32, x + i,
							LG_ACT(block_q8_1, j, i));
	}
}

/* Q5_1 against Q8_1: as Q4_1 with 5-bit quants. */
LG_INLINE void lg_q5_1(size_t n, const void *w, const void *act, size_t as, float *out,
		       size_t os, const int nc)
{
	const struct block_q5_1 *x = w;
	size_t nb = n / 32, i;
	__m512 acc[QUANT_GEMM_COLS];

	LG_UNROLL
	for (int j = 0; j < nc; j++)
		acc[j] = _mm512_setzero_ps();
	for (i = 0; i + 8 <= nb; i += 8) {
		__m512 fw = lg_cvt_pair(lg_dm_q5_1(x + i)), s[QUANT_GEMM_COLS];
		lg_prefetch(x + i, LG_BATCH(q5_1));
		LG_UNROLL
		for (int j = 0; j < nc; j++) {
			s[j] = _mm512_mul_ps(fw, lg_cvt_pair(lg_ds_q8_1(LG_ACT(block_q8_1, j, i))));
			acc[j] = _mm512_mask_add_ps(acc[j], 0xaaaa, acc[j], s[j]);
		}
		LG_UNROLL
		for (int p = 0; p < 4; p++) {
			const struct block_q5_1 *xb = x + i + 2 * p;
			__m512i q = lg_q5x2(xb[0].qs, xb[1].qs, xb[0].qh, xb[1].qh);
			__m512i si = lg_idx4(4 * p, 4 * p, 4 * p + 2, 4 * p + 2);
			LG_UNROLL
			for (int j = 0; j < nc; j++) {
				const struct block_q8_1 *yb = LG_ACT(block_q8_1, j, i + 2 * p);
				__m512i d = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q,
								lg_2x32(yb[0].qs, yb[1].qs));
				acc[j] = lg_fma(d, _mm512_permutexvar_ps(si, s[j]), acc[j]);
			}
		}
	}
	LG_UNROLL
	for (int j = 0; j < nc; j++) {
		out[j * os] = lg_hsum(acc[j]);
		if (i < nb)
			out[j * os] += avx2_q5_1_vec_dot((nb - i) * 32, x + i,
							LG_ACT(block_q8_1, j, i));
	}
}

/* vec_dot and gemm of each block type from its body (nc a constant in each). */
#define LG_ROWS(T)                                                                        \
	float avx512_##T##_vec_dot(size_t n, const void *w, const void *act)              \
	{                                                                                 \
		float r;                                                                  \
		lg_##T(n, w, act, 0, &r, 0, 1);                                           \
		return r;                                                                 \
	}                                                                                 \
	void avx512_##T##_gemm(size_t n, const void *w, const void *act, size_t as,      \
			       float *out, size_t os, int nc)                             \
	{                                                                                 \
		if (nc == QUANT_GEMM_COLS) {                                              \
			lg_##T(n, w, act, as, out, os, QUANT_GEMM_COLS);                  \
			return;                                                           \
		}                                                                         \
		for (int j = 0; j < nc; j++)                                              \
			lg_##T(n, w, (const uint8_t *)act + (size_t)j * as, 0,            \
			       out + (size_t)j * os, 0, 1);                               \
	}

LG_ROWS(q4_0)
LG_ROWS(q5_0)
LG_ROWS(q8_0)
LG_ROWS(q4_1)
LG_ROWS(q5_1)

/*
 * Float weights against F32 activations: four 16-lane FMA chains, the last
 * n % 16 elements through masked loads (which do not fault past the end).
 * LOAD(x + i) and LOADM(mask, x + i) give 16 weights as floats.
 */
#define LG_FLOAT_DOT(T, LOAD, LOADM)                                                       \
	const T *x = w;                                                                    \
	const float *y = act;                                                              \
	__m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                        \
	size_t i = 0;                                                                      \
	for (; i + 64 <= n; i += 64) {                                                     \
		lg_prefetch(x + i, 64 * sizeof(T));                                        \
		a0 = _mm512_fmadd_ps(LOAD(x + i), _mm512_loadu_ps(y + i), a0);             \
		a1 = _mm512_fmadd_ps(LOAD(x + i + 16), _mm512_loadu_ps(y + i + 16), a1);   \
		a2 = _mm512_fmadd_ps(LOAD(x + i + 32), _mm512_loadu_ps(y + i + 32), a2);   \
		a3 = _mm512_fmadd_ps(LOAD(x + i + 48), _mm512_loadu_ps(y + i + 48), a3);   \
	}                                                                                  \
	for (; i + 16 <= n; i += 16)                                                       \
		a0 = _mm512_fmadd_ps(LOAD(x + i), _mm512_loadu_ps(y + i), a0);             \
	if (i < n) {                                                                       \
		__mmask16 k = (__mmask16)((1u << (n - i)) - 1);                            \
		a1 = _mm512_fmadd_ps(LOADM(k, x + i), _mm512_maskz_loadu_ps(k, y + i), a1); \
	}                                                                                  \
	return lg_hsum(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)))

LG_INLINE __m512 lg_f32(const float *p)
{
	return _mm512_loadu_ps(p);
}

LG_INLINE __m512 lg_f32m(__mmask16 k, const float *p)
{
	return _mm512_maskz_loadu_ps(k, p);
}

LG_INLINE __m512 lg_f16(const uint16_t *p)
{
	return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

LG_INLINE __m512 lg_f16m(__mmask16 k, const uint16_t *p)
{
	return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, p));
}

/* bfloat16 is the high half of a float: widen and shift (exact). */
LG_INLINE __m512 lg_bf16(const uint16_t *p)
{
	__m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));

	return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
}

LG_INLINE __m512 lg_bf16m(__mmask16 k, const uint16_t *p)
{
	__m512i v = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, p));

	return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
}

float avx512_f32_vec_dot(size_t n, const void *w, const void *act)
{
	LG_FLOAT_DOT(float, lg_f32, lg_f32m);
}

float avx512_f16_vec_dot(size_t n, const void *w, const void *act)
{
	LG_FLOAT_DOT(uint16_t, lg_f16, lg_f16m);
}

float avx512_bf16_vec_dot(size_t n, const void *w, const void *act)
{
	LG_FLOAT_DOT(uint16_t, lg_bf16, lg_bf16m);
}
