/*
 * llm/kernels/avx512/tile.c — prefill tiles (llm/quant_isa.h, tile contract) on
 * AVX-512 VNNI.
 *
 * A tile of up to 16 weight rows is first repacked into the worker's
 * scratch, in one form for every weight type: each element an unsigned byte
 * u, and per row and sub-block of G elements (G = 32, or 16 for the types
 * whose scales are per 16) two floats ws and wm with
 *
 *     weight = ws * (u - o) + wm      (Q4_0: u = q, o = 8, ws = d;
 *                                      Q8_0: u = q + 128, o = 128, ws = d;
 *                                      Q4_K: o = 0, ws = d sc, wm = -dmin m;
 *                                      Q5_K: as Q4_K, u = q + 16 h;
 *                                      Q6_K: u = q, o = 32, ws = d sc;
 *                                      Q2_K: o = 0, ws = d sc, wm = -dmin m;
 *                                      Q3_K: u = q + 4 h, o = 4, ws = d sc)
 *
 * Bytes are laid out so that one 512-bit register holds elements 4g..4g+3 of
 * all 16 rows (a dword per row): vpdpbusd against the four activation bytes
 * of one token, broadcast, adds those four products into each row's lane.
 * The offset o is the same for every row, so its term -o * sum(qa) is the
 * token's: its prep row holds it per sub-block as an int32, and each
 * sub-block's integer sum starts from it (a broadcast load, no arithmetic),
 * so the sum is sum((u - o) * qa), exact. With an activation sub-block's
 * scale da and the sum of its quants sa (the prep row), one sub-block adds
 *
 *     da * ws * sum((u - o) * qa)  [+ wm * da * sa, Q4_K only]
 *
 * to each row's float lane (for Q8_K activations, whose da is per
 * superblock, the sub-blocks' terms gather first and meet da once). The
 * integer sum is exact; the float steps are the same for every row and
 * token whatever the tile, batch or thread, so a result depends only on its
 * row and its token. The weights are unpacked once per tile and used by
 * every token of the batch: prefill becomes a run of vpdpbusd over data in
 * L1/L2, with two or three float operations per sub-block and token.
 */
#include <immintrin.h>

#include "../avx2/q6_xyz.h"
#include "../scalar/scalar.h"
#include "avx512_rows.h"

typedef int32_t u32_unaligned __attribute__((may_alias, aligned(1)));

/* acc += w . (the four bytes at p, broadcast): vpdpbusd with an embedded
 * {1to16} broadcast operand, which GCC does not form from set1 by itself
 * (that costs a separate vpbroadcastd per product). */
static inline __m512i dpbusd_bcast(__m512i acc, __m512i w, const int8_t *p)
{
	__asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*(const u32_unaligned *)p));
	return acc;
}

/* f += x * (the float at p, broadcast): vfmadd231ps with {1to16}. */
static inline __m512 fmadd_bcast(__m512 f, __m512 x, const float *p)
{
	__asm__("vfmadd231ps %2%{1to16%}, %1, %0" : "+v"(f) : "v"(x), "m"(*p));
	return f;
}

/*
 * The 32 bytes of 16 rows' run i (elements 32 i .. 32 i + 31) into the tile:
 * group 8 i + j holds dword j of rows 0..15. An 8 x 8 dword transpose in each
 * 256-bit half (rows 0-7 low, 8-15 high), then 128-bit lanes put in order.
 */
static inline void put_run(uint8_t *q, size_t i, const __m256i *R)
{
	__m512i z[8], t[8], u[8];

	for (int k = 0; k < 8; k++)
		z[k] = _mm512_inserti64x4(_mm512_castsi256_si512(R[k]), R[k + 8], 1);
	for (int k = 0; k < 8; k += 2) {
		t[k] = _mm512_unpacklo_epi32(z[k], z[k + 1]);
		t[k + 1] = _mm512_unpackhi_epi32(z[k], z[k + 1]);
	}
	for (int k = 0; k < 8; k += 4) {
		u[k] = _mm512_unpacklo_epi64(t[k], t[k + 2]);
		u[k + 1] = _mm512_unpackhi_epi64(t[k], t[k + 2]);
		u[k + 2] = _mm512_unpacklo_epi64(t[k + 1], t[k + 3]);
		u[k + 3] = _mm512_unpackhi_epi64(t[k + 1], t[k + 3]);
	}
	/* u[c] (c < 4), 128-bit lane l: dword c (l even) or c + 4 (l odd) of
	 * rows 0-3 (l < 2) or 8-11; u[c + 4] the same for rows 4-7 / 12-15 */
	for (int c = 0; c < 4; c++)
		for (int hi = 0; hi < 2; hi++) {
			__m512i x = hi ? _mm512_shuffle_i32x4(u[c], u[c + 4], 0xdd) /* l1 l3 l1 l3 */
				       : _mm512_shuffle_i32x4(u[c], u[c + 4], 0x88); /* l0 l2 l0 l2 */
			x = _mm512_shuffle_i32x4(x, x, 0xd8); /* lanes 0 2 1 3 */
			_mm512_storeu_si512(q + (i * 8 + (size_t)c + 4 * (size_t)hi) * 64, x);
		}
}

static inline __m256i nibbles_lo_hi(const uint8_t *qs16)
{
	__m128i b = _mm_loadu_si128((const __m128i *)qs16);
	__m256i v = _mm256_set_m128i(_mm_srli_epi16(b, 4), b);

	return _mm256_and_si256(v, _mm256_set1_epi8(0x0f));
}

/*
 * The scales: the dword at byte off of each of the 16 rows, one gather
 * (rows nr..15 are not read and give 0, so their scales are 0). idx holds
 * r * w_stride; offsets stay inside a block, so nothing past the tensor is
 * read.
 */
static inline __m512i row_dwords(const uint8_t *w, __m512i idx, __mmask16 km, size_t off)
{
	return _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), km, idx, w + off, 1);
}

static inline __m512i row_index(size_t w_stride)
{
	return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
						    14, 15),
				  _mm512_set1_epi32((int)w_stride));
}

/* F16C on the low (hi = 0) or high half of each dword: exact, as q_f16(). */
static inline __m512 half_of(__m512i v, int hi)
{
	if (hi)
		v = _mm512_srli_epi32(v, 16);
	return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v));
}

/* Q4_0 and Q8_0: block i of 16 rows, its d (a dword at the block start:
 * d and the first two quants) as ws; bytes through put_run. */
static void repack_q4_0(const uint8_t *w, size_t w_stride, int nr, size_t n, struct q_rtile *t)
{
	const __m512i idx = row_index(w_stride);
	const __mmask16 km = (__mmask16)((1u << nr) - 1);

	for (size_t i = 0; i < n / 32; i++) {
		__m256i R[16];
		size_t off = i * sizeof(struct block_q4_0);
		for (int r = 0; r < 16; r++)
			R[r] = r < nr ? nibbles_lo_hi(w + (size_t)r * w_stride + off + 2)
				      : _mm256_setzero_si256();
		_mm512_storeu_ps(t->ws + i * 16, half_of(row_dwords(w, idx, km, off), 0));
		put_run(t->q, i, R);
	}
}

static void repack_q8_0(const uint8_t *w, size_t w_stride, int nr, size_t n, struct q_rtile *t)
{
	const __m512i idx = row_index(w_stride);
	const __mmask16 km = (__mmask16)((1u << nr) - 1);
	const __m256i x80 = _mm256_set1_epi8((char)0x80);

	for (size_t i = 0; i < n / 32; i++) {
		__m256i R[16];
		size_t off = i * sizeof(struct block_q8_0);
		for (int r = 0; r < 16; r++)
			R[r] = r < nr ? _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(
								 w + (size_t)r * w_stride + off + 2)),
							 x80) /* q + 128 */
				      : _mm256_setzero_si256();
		_mm512_storeu_ps(t->ws + i * 16, half_of(row_dwords(w, idx, km, off), 0));
		put_run(t->q, i, R);
	}
}

/*
 * Q4_K and Q5_K (the same header: d, dmin, 12 bytes of scales; Q5_K then
 * 32 bytes of qh), a superblock at a time: the 8 scales and mins of the 16
 * rows from three gathered dwords (ggml get_scale_min_k4, as
 * llm/kernels/scalar/q_k.c: sub-block j < 4 has sc = q[j] & 63,
 * m = q[j + 4] & 63; j >= 4 takes the low 4 bits from q[j + 4] and the top
 * 2 from q[j - 4] and q[j]), then runs 2 c and 2 c + 1: the low and the high
 * nibbles of qs[32 c .. 32 c + 31], for Q5_K plus 16 where bit 2 c (or
 * 2 c + 1) of qh[l] is set; a run is a sub-block.
 */
static inline __attribute__((always_inline)) void
repack_kmins(const uint8_t *w, size_t w_stride, int nr, size_t n, struct q_rtile *t,
	     const size_t BYTES, const int QH)
{
	const __m512i idx = row_index(w_stride), m6 = _mm512_set1_epi32(63),
		      m4d = _mm512_set1_epi32(15), m2 = _mm512_set1_epi32(3);
	const __m256i m4 = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
	const __mmask16 km = (__mmask16)((1u << nr) - 1);
	const size_t qs_off = QH ? 48 : 16;

	for (size_t sb = 0; sb < n / QK_K; sb++) {
		size_t off = sb * BYTES;
		__m512i dd = row_dwords(w, idx, km, off);
		__m512i q0 = row_dwords(w, idx, km, off + 4), q1 = row_dwords(w, idx, km, off + 8),
			q2 = row_dwords(w, idx, km, off + 12);
		__m512 d = half_of(dd, 0), dmin = half_of(dd, 1);
		for (int j = 0; j < 8; j++) {
			__m512i sc, m;
			if (j < 4) {
				sc = _mm512_and_si512(_mm512_srli_epi32(q0, (unsigned)(8 * j)), m6);
				m = _mm512_and_si512(_mm512_srli_epi32(q1, (unsigned)(8 * j)), m6);
			} else {
				unsigned k = (unsigned)(j - 4);
				__m512i h0 = _mm512_and_si512(_mm512_srli_epi32(q0, 8 * k + 6), m2);
				__m512i h1 = _mm512_and_si512(_mm512_srli_epi32(q1, 8 * k + 6), m2);
				sc = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(q2, 8 * k), m4d),
						     _mm512_slli_epi32(h0, 4));
				m = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(q2, 8 * k + 4), m4d),
						    _mm512_slli_epi32(h1, 4));
			}
			/* d * (float)sc and -(dmin * (float)m), as the scalar row */
			_mm512_storeu_ps(t->ws + (sb * 8 + (size_t)j) * 16,
					 _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc)));
			_mm512_storeu_ps(t->wm + (sb * 8 + (size_t)j) * 16,
					 _mm512_sub_ps(_mm512_setzero_ps(),
						       _mm512_mul_ps(dmin, _mm512_cvtepi32_ps(m))));
		}
		for (int c = 0; c < 4; c++) {
			__m256i lo[16], hi[16];
			for (int r = 0; r < 16; r++) {
				const uint8_t *b = w + (size_t)r * w_stride + off;
				if (r >= nr) {
					lo[r] = hi[r] = _mm256_setzero_si256();
					continue;
				}
				__m256i v = _mm256_loadu_si256((const __m256i *)(b + qs_off + 32 * c));
				lo[r] = _mm256_and_si256(v, m4);
				hi[r] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
				if (QH) {
					__m256i h = _mm256_loadu_si256((const __m256i *)(b + 16));
					__m256i h_lo = _mm256_and_si256(_mm256_srli_epi16(h, 2 * c), one);
					__m256i h_hi = _mm256_and_si256(_mm256_srli_epi16(h, 2 * c + 1), one);
					lo[r] = _mm256_or_si256(lo[r], _mm256_slli_epi16(h_lo, 4));
					hi[r] = _mm256_or_si256(hi[r], _mm256_slli_epi16(h_hi, 4));
				}
			}
			put_run(t->q, sb * 8 + 2 * (size_t)c, lo);
			put_run(t->q, sb * 8 + 2 * (size_t)c + 1, hi);
		}
	}
}

static void repack_q4_K(const uint8_t *w, size_t w_stride, int nr, size_t n, struct q_rtile *t)
{
	repack_kmins(w, w_stride, nr, n, t, sizeof(struct block_q4_K), 0);
}

static void repack_q5_K(const uint8_t *w, size_t w_stride, int nr, size_t n, struct q_rtile *t)
{
	repack_kmins(w, w_stride, nr, n, t, sizeof(struct block_q5_K), 1);
}

_Static_assert(__builtin_offsetof(struct block_q4_K, qs) == 16, "q4_K quants");
_Static_assert(__builtin_offsetof(struct block_q5_K, qh) == 16, "q5_K high bits");
_Static_assert(__builtin_offsetof(struct block_q5_K, qs) == 48, "q5_K quants");

/*
 * Q2_K, a superblock at a time: the 16 (scale, min) nibble pairs of the 16
 * rows from four gathered dwords, d and dmin from the dword at byte 80; then
 * its 8 runs of 32: element 128 n + 32 j + l is bits 2 j..2 j + 1 of
 * qs[32 n + l]. Sub-blocks of 16, with mins.
 */
static void repack_q2_K(const uint8_t *w, size_t w_stride, int nr, size_t n, struct q_rtile *t)
{
	const __m512i idx = row_index(w_stride), m4d = _mm512_set1_epi32(15);
	const __m256i m2 = _mm256_set1_epi8(3);
	const __mmask16 km = (__mmask16)((1u << nr) - 1);

	for (size_t sb = 0; sb < n / QK_K; sb++) {
		size_t off = sb * sizeof(struct block_q2_K);
		__m512i dd = row_dwords(w, idx, km, off + 80);
		__m512 d = half_of(dd, 0), dmin = half_of(dd, 1);
		for (int k = 0; k < 4; k++) {
			__m512i v = row_dwords(w, idx, km, off + 4 * (size_t)k);
			for (int b = 0; b < 4; b++) {
				size_t sub = sb * 16 + 4 * (size_t)k + (size_t)b;
				__m512i sc = _mm512_and_si512(_mm512_srli_epi32(v, (unsigned)(8 * b)), m4d);
				__m512i m = _mm512_and_si512(_mm512_srli_epi32(v, (unsigned)(8 * b + 4)), m4d);
				_mm512_storeu_ps(t->ws + sub * 16, _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc)));
				_mm512_storeu_ps(t->wm + sub * 16,
						 _mm512_sub_ps(_mm512_setzero_ps(),
							       _mm512_mul_ps(dmin, _mm512_cvtepi32_ps(m))));
			}
		}
		for (int i = 0; i < 8; i++) {
			__m256i R[16];
			for (int r = 0; r < 16; r++) {
				const struct block_q2_K *b =
					(const struct block_q2_K *)(w + (size_t)r * w_stride) + sb;
				R[r] = r < nr ? _mm256_and_si256(
							_mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)(
										  b->qs + 32 * (i / 4))),
									  2 * (i % 4)),
							m2)
					      : _mm256_setzero_si256();
			}
			put_run(t->q, sb * 8 + (size_t)i, R);
		}
	}
}

/*
 * Q3_K, a superblock at a time: the 16 6-bit scales of the 16 rows (low
 * nibbles in bytes 0..7, s < 8 low and s >= 8 high nibble of byte s % 8;
 * top 2 bits in byte 8 + s % 4 at bit 2 (s / 4); stored with +32) from three
 * gathered dwords, d from the high half of the dword at byte 106 (which ends
 * with the block); then its 8 runs: element 128 n + 32 j + l has bits
 * 2 j..2 j + 1 of qs[32 n + l] and, as bit 2, bit 4 n + j of hmask[l]; the
 * offset is 4. Sub-blocks of 16.
 */
static void repack_q3_K(const uint8_t *w, size_t w_stride, int nr, size_t n, struct q_rtile *t)
{
	const __m512i idx = row_index(w_stride), m4d = _mm512_set1_epi32(15),
		      m2d = _mm512_set1_epi32(3), k32 = _mm512_set1_epi32(32);
	const __m256i m2 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
	const __mmask16 km = (__mmask16)((1u << nr) - 1);

	for (size_t sb = 0; sb < n / QK_K; sb++) {
		size_t off = sb * sizeof(struct block_q3_K);
		__m512 d = half_of(row_dwords(w, idx, km, off + 106), 1);
		__m512i lo[2] = {row_dwords(w, idx, km, off + 96), row_dwords(w, idx, km, off + 100)};
		__m512i hi = row_dwords(w, idx, km, off + 104);
		for (int s = 0; s < 16; s++) {
			unsigned byte = (unsigned)(s % 4);
			__m512i l = _mm512_and_si512(
				_mm512_srli_epi32(lo[(s % 8) / 4], 8 * byte + (s < 8 ? 0 : 4)), m4d);
			__m512i h = _mm512_and_si512(
				_mm512_srli_epi32(hi, 8 * byte + 2 * (unsigned)(s / 4)), m2d);
			__m512i sc = _mm512_sub_epi32(_mm512_or_si512(l, _mm512_slli_epi32(h, 4)), k32);
			_mm512_storeu_ps(t->ws + (sb * 16 + (size_t)s) * 16,
					 _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc)));
		}
		for (int i = 0; i < 8; i++) {
			int nn = i / 4, j = i % 4;
			__m256i R[16];
			for (int r = 0; r < 16; r++) {
				const struct block_q3_K *b =
					(const struct block_q3_K *)(w + (size_t)r * w_stride) + sb;
				if (r >= nr) {
					R[r] = _mm256_setzero_si256();
					continue;
				}
				__m256i q = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * nn));
				__m256i hm = _mm256_loadu_si256((const __m256i *)b->hmask);
				q = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), m2);
				hm = _mm256_and_si256(_mm256_srli_epi16(hm, 4 * nn + j), one);
				R[r] = _mm256_or_si256(q, _mm256_slli_epi16(hm, 2));
			}
			put_run(t->q, sb * 8 + (size_t)i, R);
		}
	}
}

_Static_assert(__builtin_offsetof(struct block_q2_K, qs) == 16 &&
		       __builtin_offsetof(struct block_q2_K, d) == 80,
	       "q2_K layout");
_Static_assert(__builtin_offsetof(struct block_q3_K, qs) == 32 &&
		       __builtin_offsetof(struct block_q3_K, scales) == 96 &&
		       __builtin_offsetof(struct block_q3_K, d) == 108,
	       "q3_K layout");

/*
 * Q6_K, a superblock at a time: the 16 int8 scales of the 16 rows from four
 * gathered dwords and d (the high half of the dword at byte 206, which ends
 * with the block), ws = d * sc; then its 8 runs of 32. Element 128 h + 32 j
 * + l takes its low 4 bits from ql[64 h + l + 32 (j & 1)] (low nibble for
 * j < 2, high for j >= 2) and its top 2 bits from qh[32 h + l] at bit 2 j;
 * stored with +32. Sub-blocks of 16.
 */
static void repack_q6_K(const uint8_t *w, size_t w_stride, int nr, size_t n, struct q_rtile *t)
{
	const __m512i idx = row_index(w_stride);
	const __m256i m4 = _mm256_set1_epi8(0x0f), m2 = _mm256_set1_epi8(3);
	const __mmask16 km = (__mmask16)((1u << nr) - 1);

	for (size_t sb = 0; sb < n / QK_K; sb++) {
		size_t off = sb * sizeof(struct block_q6_K);
		__m512 d = half_of(row_dwords(w, idx, km, off + 206), 1);
		for (int k = 0; k < 4; k++) {
			__m512i v = row_dwords(w, idx, km, off + 192 + 4 * (size_t)k);
			for (int b = 0; b < 4; b++) {
				/* byte b, sign-extended */
				__m512i sc = _mm512_srai_epi32(_mm512_slli_epi32(v, (unsigned)(24 - 8 * b)), 24);
				_mm512_storeu_ps(t->ws + (sb * 16 + 4 * (size_t)k + (size_t)b) * 16,
						 _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc)));
			}
		}
		for (int i = 0; i < 8; i++) {
			int h = i / 4, j = i % 4;
			__m256i R[16];
			for (int r = 0; r < 16; r++) {
				const struct block_q6_K *b =
					(const struct block_q6_K *)(w + (size_t)r * w_stride) + sb;
				if (r >= nr) {
					R[r] = _mm256_setzero_si256();
					continue;
				}
				__m256i lo = _mm256_loadu_si256((const __m256i *)(b->ql + 64 * h + 32 * (j & 1)));
				__m256i hb = _mm256_loadu_si256((const __m256i *)(b->qh + 32 * h));
				if (j >= 2)
					lo = _mm256_srli_epi16(lo, 4);
				lo = _mm256_and_si256(lo, m4);
				hb = _mm256_and_si256(_mm256_srli_epi16(hb, 2 * j), m2);
				R[r] = _mm256_or_si256(lo, _mm256_slli_epi16(hb, 4));
			}
			put_run(t->q, sb * 8 + (size_t)i, R);
		}
	}
}

/*
 * C tokens against the repacked tile. QB, QBYTES, QOFF: the activation
 * type's block (elements, bytes, offset of the quants); G: sub-block; MINS:
 * the weights have a min term (Q4_K: prep holds (da, sa), sa a float);
 * otherwise prep holds (da, -o * sa as an int32) and the integer sums start
 * from the latter.
 */
static inline __attribute__((always_inline)) void
run_cols(const struct q_rtile *t, size_t n, const int8_t *const *a, const float *const *p,
	 float *const *o, __mmask16 km, const int C, const int G, const size_t QB,
	 const size_t QBYTES, const size_t QOFF, const int MINS, const char *pf, size_t pf_step)
{
	/* SB sub-blocks share one activation scale (Q8_K: a superblock): their
	 * terms gather in g unscaled, and g joins f times da once per SB */
	const size_t SB = QB / (size_t)G;
	__m512 f[8], g[8];
	__m512i acc[8], wv[8];

	_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
		f[c] = g[c] = _mm512_setzero_ps();
	for (size_t s = 0; s < n / (size_t)G; s++) {
		if (pf)
			for (size_t o = 0; o < pf_step; o += 64)
				_mm_prefetch(pf + s * pf_step + o, _MM_HINT_T1);
		size_t k0 = s * (size_t)G, aoff = k0 / QB * QBYTES + QOFF + k0 % QB;
		const uint8_t *qg = t->q + k0 / 4 * 64;
		__m512 ws = _mm512_loadu_ps(t->ws + s * 16);
		_Pragma("GCC unroll 8") for (int j = 0; j < G / 4; j++)
			wv[j] = _mm512_loadu_si512(qg + 64 * j);
		_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
			acc[c] = MINS ? _mm512_setzero_si512()
				      : _mm512_set1_epi32(*(const int32_t *)&p[c][2 * s + 1]);
		_Pragma("GCC unroll 8") for (int j = 0; j < G / 4; j++)
			_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
				acc[c] = dpbusd_bcast(acc[c], wv[j], a[c] + aoff + 4 * j);
		if (SB == 1) {
			/* prep (da, -o sa) per sub-block */
			_Pragma("GCC unroll 8") for (int c = 0; c < C; c++) {
				__m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[c]), ws);
				f[c] = fmadd_bcast(f[c], x, &p[c][2 * s]);
			}
			continue;
		}
		/* prep (da, sa or -o sa) per sub-block */
		_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
			g[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[c]), ws, g[c]);
		if (MINS) {
			__m512 wm = _mm512_loadu_ps(t->wm + s * 16);
			_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
				g[c] = fmadd_bcast(g[c], wm, &p[c][2 * s + 1]);
		}
		if (s % SB == SB - 1)
			_Pragma("GCC unroll 8") for (int c = 0; c < C; c++) {
				f[c] = fmadd_bcast(f[c], g[c], &p[c][2 * s]);
				g[c] = _mm512_setzero_ps();
			}
	}
	_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
		_mm512_mask_storeu_ps(o[c], km, f[c]);
}

/* Every token of the batch, C at a time: the activation, prep and output
 * pointers of tokens b .. b + C - 1, then the call (the repacked and the
 * packed tiles alike). */
#define TOKEN_GROUPS(C, ...)                                                          \
	for (; b + (C) <= B; b += (C)) {                                             \
		const int8_t *a[8];                                                  \
		const float *p[8];                                                   \
		float *o[8];                                                         \
		for (int c = 0; c < (C); c++) {                                      \
			a[c] = (const int8_t *)act + (b + (size_t)c) * as;           \
			p[c] = prep + (b + (size_t)c) * QUANT_TILE_PREP_FLOATS(n);   \
			o[c] = out + (b + (size_t)c) * os;                           \
		}                                                                    \
		__VA_ARGS__;                                                         \
	}

#define COLS(C)                                                                  \
	TOKEN_GROUPS(C, run_cols(&t, n, a, p, o, km, (C), G, QB, QBYTES, QOFF, MINS, \
				 b ? NULL : next, pf_step))

/* One tile function per weight type: repack, then every token, 8 at a time.
 * While the first tokens run, the 16 rows after the tile are prefetched into
 * L2 (a worker's next tile, or its sibling's: both share the core's L2), so
 * the next repack does not wait on memory. */
#define TILE_FN(T, G_, ACT, MINS_)                                                             \
	static void tile_##T(size_t n, const void *w, size_t w_stride, int nr,         \
			     const void *act, size_t as, const float *prep, size_t B,  \
			     float *out, size_t os, void *scratch,                     \
			     const struct quant_tune *tune)                            \
	{                                                                              \
		const int G = (G_), MINS = (MINS_);                                    \
		const size_t QB = ACT##_QB, QBYTES = ACT##_BYTES, QOFF = ACT##_OFF;   \
		struct q_rtile t = q_rtile_at(scratch, n, G);                              \
		__mmask16 km = (__mmask16)((1u << nr) - 1);                            \
		size_t b = 0;                                                          \
		const char *next = (const char *)w + 16 * w_stride;                    \
		size_t pf_step = (16 * w_stride / (n / (size_t)G) + 63) / 64 * 64;     \
		repack_##T(w, w_stride, nr, n, &t);                                    \
		COLS(8)                                                                \
		COLS(4)                                                                \
		COLS(2)                                                                \
		COLS(1)                                                                \
	}

#define Q8_0_QB QK8_0
#define Q8_0_BYTES sizeof(struct block_q8_0)
#define Q8_0_OFF 2
#define Q8_K_QB QK_K
#define Q8_K_BYTES sizeof(struct block_q8_K)
#define Q8_K_OFF 4
_Static_assert(__builtin_offsetof(struct block_q8_0, qs) == Q8_0_OFF, "q8_0 quants");
_Static_assert(__builtin_offsetof(struct block_q8_K, qs) == Q8_K_OFF, "q8_K quants");

TILE_FN(q4_0, 32, Q8_0, 0)
TILE_FN(q8_0, 32, Q8_0, 0)
TILE_FN(q4_K, 32, Q8_K, 1)
TILE_FN(q5_K, 32, Q8_K, 1)
TILE_FN(q6_K, 16, Q8_K, 0)
TILE_FN(q2_K, 16, Q8_K, 1)
TILE_FN(q3_K, 16, Q8_K, 0)

/*
 * Float weights (F16, BF16) against F32 activations (no prep rows): the 16
 * rows' elements are transposed into [n][16] halves in scratch, then for
 * every element one conversion to 16 floats serves C tokens' FMAs with the
 * activation broadcast from memory. Each result is its row's and token's
 * sum in element order, whatever the tile, batch or thread.
 */
static inline __m512 half16(const uint16_t *p, const int BF)
{
	__m256i h = _mm256_load_si256((const __m256i *)p);

	if (BF)
		return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
	return _mm512_cvtph_ps(h);
}

static inline __attribute__((always_inline)) void
float_cols(const uint16_t *t, size_t n, const float *const *x, float *const *o, __mmask16 km,
	   const int C, const int BF)
{
	__m512 f[8];

	_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
		f[c] = _mm512_setzero_ps();
	for (size_t k = 0; k < n; k++) {
		__m512 wv = half16(t + k * 16, BF);
		_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
			f[c] = fmadd_bcast(f[c], wv, x[c] + k);
	}
	_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
		_mm512_mask_storeu_ps(o[c], km, f[c]);
}

#define FCOLS(C)                                                                          \
	for (; b + (C) <= B; b += (C)) {                                                 \
		const float *x[8];                                                       \
		float *o[8];                                                             \
		for (int c = 0; c < (C); c++) {                                          \
			x[c] = (const float *)((const uint8_t *)act + (b + (size_t)c) * as); \
			o[c] = out + (b + (size_t)c) * os;                               \
		}                                                                        \
		float_cols(t, n, x, o, km, (C), BF);                                     \
	}

/* The 16 rows' halves (F16 or BF16) into [n][16]: each 16-element stretch
 * is 8 dwords (pairs of halves) per row, transposed by put_run into 8 zmm of
 * the 16 rows' pairs; the low and high halves of those are elements 2 c and
 * 2 c + 1. n is a multiple of 32 (the tile contract). */
static void repack_halves(const void *w, size_t w_stride, int nr, size_t n, uint16_t *t)
{
	_Alignas(64) uint8_t tmp[8 * 64];

	for (size_t k0 = 0; k0 < n; k0 += 16) {
		__m256i R[16];
		for (int r = 0; r < 16; r++)
			R[r] = r < nr ? _mm256_loadu_si256((const __m256i *)((const uint8_t *)w +
									   (size_t)r * w_stride +
									   2 * k0))
				      : _mm256_setzero_si256();
		put_run(tmp, 0, R);
		for (int c = 0; c < 8; c++) {
			__m512i z = _mm512_load_si512(tmp + 64 * c);
			_mm256_store_si256((__m256i *)(t + (k0 + 2 * (size_t)c) * 16),
					   _mm512_cvtepi32_epi16(z));
			_mm256_store_si256((__m256i *)(t + (k0 + 2 * (size_t)c + 1) * 16),
					   _mm512_cvtepi32_epi16(_mm512_srli_epi32(z, 16)));
		}
	}
}

#define FLOAT_TILE(T, BF_)                                                                \
	static void tile_##T(size_t n, const void *w, size_t w_stride, int nr,           \
			     const void *act, size_t as, const float *prep, size_t B,    \
			     float *out, size_t os, void *scratch,                       \
			     const struct quant_tune *tune)                              \
	{                                                                                \
		const int BF = (BF_);                                                    \
		uint16_t *t = scratch;                                                   \
		__mmask16 km = (__mmask16)((1u << nr) - 1);                              \
		size_t b = 0;                                                            \
		(void)prep;                                                              \
		repack_halves(w, w_stride, nr, n, t);                                    \
		FCOLS(8)                                                                 \
		FCOLS(4)                                                                 \
		FCOLS(2)                                                                 \
		FCOLS(1)                                                                 \
	}

FLOAT_TILE(f16, 0)
FLOAT_TILE(bf16, 1)

/*
 * Packed tiles (llm/quant_isa.h struct quant_packed; the layouts are in
 * llm/kernels/scalar/pack.c): the weights are read where they lie, a 64-byte
 * load holding a dword of each of the 16 rows, and unpacked in registers
 * (nibbles masked and shifted, Q8_0 biased by 128, Q6_K's two bit fields
 * joined) into exactly the bytes the repack above writes to scratch, with
 * the same scales; the integer sums and float steps are run_cols's, so the
 * results are the unpacked tiles' bits. Each unpacked register serves C
 * tokens; with C = 1 this is decode (where the tuning says so, Q4_0 and
 * Q8_0 through the lanes below), and reading the weights once is the whole
 * cost. The first pass over a group prefetches ahead, as the decode rows
 * do, with the distance and hint of the descriptor's tuning (struct
 * quant_tune; isa.c says why they differ by CPU maker).
 *
 * PK_SB_PREFETCH: a K-quant step prefetches its superblock's lines (ahead)
 * a quarter at a time every other sub-block: a sub-block's share before
 * each one left the stream short, all the lines at the step's start slowed
 * the rows in cache, and the prefetch loop's own instructions space the
 * prefetches out, as a CPU drops software prefetches it has no room for
 * (docs/perf.md, "K-quant superblock prefetch").
 */

/* (always_inline: a function that only prefetches counts as free of side
 * effects, and GCC deletes calls to it before they would be inlined) */
static inline __attribute__((always_inline)) void pk_prefetch(const uint8_t *p, size_t bytes,
							     size_t ahead, bool nta)
{
	if (ahead)
		for (size_t o = 0; o < bytes; o += 64) {
			if (nta)
				_mm_prefetch((const char *)p + ahead + o, _MM_HINT_NTA);
			else
				_mm_prefetch((const char *)p + ahead + o, _MM_HINT_T1);
		}
}

static inline __m512 pk_halves(const uint8_t *p)
{
	return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

/*
 * Each type has a step: one block (Q4_0, Q8_0) or superblock (Q4_K, Q6_K)
 * of a packed group g for C tokens, into their sums f (and the superblock
 * partials gs); ahead: prefetch distance, 0 for none. The tiles run the
 * steps of one group in order; the decode lanes below the steps of G groups
 * side by side.
 */

/*
 * x >> 4 in each byte in one instruction (GFNI, PLAT_CPU_GFNI): the affine
 * map whose bit matrix sends bit 4 + k of a byte to bit k and clears the
 * top four (row k of the matrix, byte 7 - k of the qword: 1 << (4 + k)). In
 * asm, as GCC inlines its intrinsic only into functions built for GFNI, and
 * the tiles are built for every AVX-512 CPU; it runs only where the
 * descriptor saw GFNI (isa.c). It takes the place of a shift and a mask in
 * Q4_0's step, the same bytes, so the same bits.
 */
#define GF_SHR4 0x1020408000000000ull
static inline __m512i gf_shr4(__m512i x)
{
	__m512i r;

	__asm__("vgf2p8affineqb $0, %[m], %[x], %[r]"
		: [r] "=v"(r)
		: [x] "v"(x), [m] "v"(_mm512_set1_epi64((long long)GF_SHR4)));
	return r;
}

/* Q4_0 / Q8_0: pairs of blocks; Q8 = 1 for Q8_0 (8 dwords of s8 quants, as
 * u8 + 128); GF = 1: Q4_0's high nibbles through gf_shr4 */
static inline __attribute__((always_inline)) void
pk_step_q40(const uint8_t *g, size_t i, const int8_t *const *a, const float *const *p,
	    __m512 *f, const int C, const int Q8, const int GF, size_t ahead, bool nta)
{
	const __m512i m4 = _mm512_set1_epi8(0x0f), x80 = _mm512_set1_epi8((char)0x80);
	const size_t QW = Q8 ? 8 : 4, UNIT = 64 + 2 * 64 * QW;
	const uint8_t *u = g + (i / 2) * UNIT, *q = u + 64 + (i & 1) * 64 * QW;
	size_t aoff = i * Q8_0_BYTES + Q8_0_OFF;
	__m512 ws = pk_halves(u + 32 * (i & 1));
	__m512i acc[8], wv[8];

	pk_prefetch(u + (i & 1) * (UNIT / 2), UNIT / 2, ahead, nta);
	if (Q8) {
		_Pragma("GCC unroll 8") for (int j = 0; j < 8; j++)
			wv[j] = _mm512_xor_si512(_mm512_loadu_si512(q + 64 * j), x80);
	} else {
		_Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
			__m512i z = _mm512_loadu_si512(q + 64 * j);
			wv[j] = _mm512_and_si512(z, m4);
			wv[4 + j] = GF ? gf_shr4(z) : _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
		}
	}
	_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
		acc[c] = _mm512_set1_epi32(*(const int32_t *)&p[c][2 * i + 1]);
	_Pragma("GCC unroll 8") for (int j = 0; j < 8; j++)
		_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
			acc[c] = dpbusd_bcast(acc[c], wv[j], a[c] + aoff + 4 * j);
	_Pragma("GCC unroll 8") for (int c = 0; c < C; c++) {
		__m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[c]), ws);
		f[c] = fmadd_bcast(f[c], x, &p[c][2 * i]);
	}
}

/* Q4_K: a superblock of 2304 bytes, its (d, dmin) and scale dwords first.
 * The sums f of the tokens are read and written at o (fo: the step adds
 * its superblock to o[c]): with C = 8, 8 acc, 8 gs and 8 f vectors do not
 * fit the 32 registers beside the scales, and the spills GCC chose cost
 * more than a load and a store per token and superblock. */
static inline __attribute__((always_inline)) void
pk_step_q4K(const uint8_t *g, size_t sb, const int8_t *const *a, const float *const *p,
	    __m512 *f, float *const *fo, __m512 *gs, const int C, size_t ahead, bool nta)
{
	const __m512i m4 = _mm512_set1_epi8(0x0f), mf0 = _mm512_set1_epi8((char)0xf0),
		      m3f = _mm512_set1_epi8(0x3f), m30 = _mm512_set1_epi8(0x30);
	__m512i acc[8];
	const uint8_t *u = g + sb * 2304;
	__m512i dd = _mm512_loadu_si512(u), q0 = _mm512_loadu_si512(u + 64),
		q1 = _mm512_loadu_si512(u + 128), q2 = _mm512_loadu_si512(u + 192);
	__m512 d = half_of(dd, 0), dmin = half_of(dd, 1);
	/* ggml get_scale_min_k4 (as repack_kmins) in byte space: byte k
	 * of sc03/m03 holds sc/m of sub-block k, of sc47/m47 those of
	 * sub-block 4 + k (low nibble from q2, top two bits from bits
	 * 6-7 of q0 or q1; 0xe4: m4 ? a : b); then one byte shuffle per
	 * sub-block puts its byte in each row's lane */
	__m512i sc03 = _mm512_and_si512(q0, m3f), m03 = _mm512_and_si512(q1, m3f);
	__m512i sc47 = _mm512_ternarylogic_epi32(
		q2, _mm512_and_si512(_mm512_srli_epi32(q0, 2), m30), m4, 0xe4);
	__m512i m47 = _mm512_ternarylogic_epi32(
		_mm512_srli_epi32(q2, 4), _mm512_and_si512(_mm512_srli_epi32(q1, 2), m30), m4, 0xe4);
	_Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) {
		const int k4 = j % 4;
		if (j % 2 == 0) /* a quarter of the 36 lines ahead (PK_SB_PREFETCH) */
			pk_prefetch(u + 576 * (size_t)(j / 2), 576, ahead, nta);
		const __m512i pick = _mm512_set4_epi32(
			(int)(0x80808000u | (unsigned)(12 + k4)), (int)(0x80808000u | (unsigned)(8 + k4)),
			(int)(0x80808000u | (unsigned)(4 + k4)), (int)(0x80808000u | (unsigned)k4));
		__m512i sc = _mm512_shuffle_epi8(j < 4 ? sc03 : sc47, pick);
		__m512i m = _mm512_shuffle_epi8(j < 4 ? m03 : m47, pick);
		__m512 ws = _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc));
		__m512 wm = _mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(dmin, _mm512_cvtepi32_ps(m)));
		const uint8_t *q = u + 256 + 64 * 8 * (size_t)(j / 2);
		size_t s = sb * 8 + (size_t)j, aoff = sb * Q8_K_BYTES + Q8_K_OFF + 32 * (size_t)j;
		/* odd sub-blocks: the high nibbles in place (16 q), the sums
		 * shifted back after (exact: multiples of 16) */
		if (C == 1) {
			/* one token: two chains of vpdpbusd, not one of 8 */
			__m512i a2 = _mm512_setzero_si512();
			acc[0] = _mm512_setzero_si512();
			_Pragma("GCC unroll 4") for (int k = 0; k < 8; k += 2) {
				__m512i w0 = _mm512_and_si512(_mm512_loadu_si512(q + 64 * k), j & 1 ? mf0 : m4);
				__m512i w1 = _mm512_and_si512(_mm512_loadu_si512(q + 64 * k + 64),
							      j & 1 ? mf0 : m4);
				acc[0] = dpbusd_bcast(acc[0], w0, a[0] + aoff + 4 * k);
				a2 = dpbusd_bcast(a2, w1, a[0] + aoff + 4 * k + 4);
			}
			acc[0] = _mm512_add_epi32(acc[0], a2);
		} else {
			_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
				acc[c] = _mm512_setzero_si512();
			_Pragma("GCC unroll 8") for (int k = 0; k < 8; k++) {
				__m512i w = _mm512_and_si512(_mm512_loadu_si512(q + 64 * k), j & 1 ? mf0 : m4);
				_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
					acc[c] = dpbusd_bcast(acc[c], w, a[c] + aoff + 4 * k);
			}
		}
		_Pragma("GCC unroll 8") for (int c = 0; c < C; c++) {
			if (j & 1)
				acc[c] = _mm512_srai_epi32(acc[c], 4);
			gs[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[c]), ws, gs[c]);
			gs[c] = fmadd_bcast(gs[c], wm, &p[c][2 * s + 1]);
		}
		if (j == 7)
			_Pragma("GCC unroll 8") for (int c = 0; c < C; c++) {
				if (fo)
					_mm512_storeu_ps(fo[c], fmadd_bcast(_mm512_loadu_ps(fo[c]), gs[c],
									    &p[c][2 * s]));
				else
					f[c] = fmadd_bcast(f[c], gs[c], &p[c][2 * s]);
				gs[c] = _mm512_setzero_ps();
			}
	}
}

/* Q6_K: a superblock of 3360 bytes: X, Y, Z for each h (pack.c), the scales
 * by sub-block, d */
static inline __attribute__((always_inline)) void
pk_step_q6K(const uint8_t *g, size_t sb, const int8_t *const *a, const float *const *p,
	    __m512 *f, __m512 *gs, const int C, size_t ahead, bool nta)
{
	const __m512i m4 = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30),
		      m3f = _mm512_set1_epi8(0x3f);
	__m512i acc[8], wv[8];
	const uint8_t *u = g + sb * 3360;
	__m512 d = pk_halves(u + 3328);

	_Pragma("GCC unroll 8") for (int i = 0; i < 8; i++) {
		int h = i / 4, j = i % 4;
		if (i % 2 == 0) /* a quarter of the 53 lines ahead (PK_SB_PREFETCH) */
			pk_prefetch(u + 832 * (size_t)(i / 2), i < 6 ? 832 : 3360 - 832 * 3, ahead,
				    nta);
		const uint8_t *x = u + 1536 * (size_t)h;
		/* run j of X, Y, Z: v0 = X & 63, v1 = Y & 63; v2, v3 take
		 * Z's nibble and bits 6-7 of X or Y moved to 4-5 (0xe4:
		 * m4 ? low : high) */
		_Pragma("GCC unroll 8") for (int k = 0; k < 8; k++) {
			const uint8_t *r = x + 64 * (size_t)k;
			if (j < 2) {
				wv[k] = _mm512_and_si512(_mm512_loadu_si512(r + 512 * j), m3f);
			} else {
				__m512i z = _mm512_loadu_si512(r + 1024);
				__m512i t = _mm512_srli_epi16(_mm512_loadu_si512(r + 512 * (j - 2)), 2);
				if (j == 3)
					z = _mm512_srli_epi16(z, 4);
				wv[k] = _mm512_ternarylogic_epi32(z, _mm512_and_si512(t, m30), m4, 0xe4);
			}
		}
		_Pragma("GCC unroll 2") for (int half = 0; half < 2; half++) {
			size_t s = sb * 16 + 2 * (size_t)i + (size_t)half;
			size_t aoff = sb * Q8_K_BYTES + Q8_K_OFF + 32 * (size_t)i + 16 * (size_t)half;
			/* ws = d * sc, as the repack */
			__m512 ws = _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
				_mm_loadu_si128((const __m128i *)(u + 3072 + 16 * (s % 16))))));
			_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
				acc[c] = _mm512_set1_epi32(*(const int32_t *)&p[c][2 * s + 1]);
			_Pragma("GCC unroll 4") for (int k = 0; k < 4; k++)
				_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
					acc[c] = dpbusd_bcast(acc[c], wv[4 * half + k],
							      a[c] + aoff + 4 * k);
			_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
				gs[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[c]), ws, gs[c]);
		}
	}
	_Pragma("GCC unroll 8") for (int c = 0; c < C; c++) {
		f[c] = fmadd_bcast(f[c], gs[c], &p[c][2 * (sb * 16 + 15)]);
		gs[c] = _mm512_setzero_ps();
	}
}

/* Steps of the four types as one call: block or superblock i of g.
 * PK_Q4_0_GF: Q4_0 with GFNI (not a GGML type). */
#define PK_Q4_0_GF 0x10000u
#define PK_Q40_LIKE(T) ((T) == GGML_TYPE_Q4_0 || (T) == GGML_TYPE_Q8_0 || (T) == PK_Q4_0_GF)
#define PK_STEP(T, g, i, a, p, f, gs, C, ahead, nta)                                     \
	do {                                                                             \
		if (PK_Q40_LIKE(T))                                                      \
			pk_step_q40(g, i, a, p, f, C, (T) == GGML_TYPE_Q8_0,             \
				    (T) == PK_Q4_0_GF, ahead, nta);                      \
		else if ((T) == GGML_TYPE_Q4_K)                                          \
			pk_step_q4K(g, i, a, p, f, NULL, gs, C, ahead, nta);             \
		else                                                                     \
			pk_step_q6K(g, i, a, p, f, gs, C, ahead, nta);                   \
	} while (0)

/* A tile: every step of group g for C tokens; ahead: the prefetch distance,
 * the tuning's on the first pass over the group, else 0 (none). */
static inline __attribute__((always_inline)) void
pk_cols(const uint8_t *g, size_t n, const int8_t *const *a, const float *const *p,
	float *const *o, const int C, const uint32_t T, size_t ahead, bool nta)
{
	const size_t steps = PK_Q40_LIKE(T) ? n / 32 : n / QK_K;
	__m512 f[8], gs[8];

	_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
		f[c] = gs[c] = _mm512_setzero_ps();
	if (T == GGML_TYPE_Q4_K && C > 1) {
		/* the sums at o (pk_step_q4K) */
		_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
			_mm512_storeu_ps(o[c], f[c]);
		for (size_t i = 0; i < steps; i++)
			pk_step_q4K(g, i, a, p, f, o, gs, C, ahead, nta);
		return;
	}
	for (size_t i = 0; i < steps; i++)
		PK_STEP(T, g, i, a, p, f, gs, C, ahead, nta);
	_Pragma("GCC unroll 8") for (int c = 0; c < C; c++)
		_mm512_storeu_ps(o[c], f[c]);
}

/*
 * Decode lanes (struct quant_packed lanes): one token against G packed
 * groups, a step of each in turn, so a worker reads G memory streams at
 * once instead of one: a core's reads in flight are bounded per stream, so
 * more streams keep more reads in flight (docs/perf.md, "Decode read pattern").
 * Each group's steps are its tile's with C = 1, in the same order, so the
 * bits are the tile's. LANE_AHEAD: the prefetch distance in each stream,
 * the one the read probe found fastest with four streams there.
 */
#define LANE_AHEAD 2048

static inline __attribute__((always_inline)) void
pk_lanes(const uint8_t *const *g, const int G, size_t n, const int8_t *a, const float *p,
	 float *const *o, const int Q8, const int GF, bool nta)
{
	__m512 f[QUANT_LANES];

	_Pragma("GCC unroll 4") for (int l = 0; l < G; l++)
		f[l] = _mm512_setzero_ps();
	for (size_t i = 0; i < n / 32; i++)
		_Pragma("GCC unroll 4") for (int l = 0; l < G; l++)
			pk_step_q40(g[l], i, &a, &p, &f[l], 1, Q8, GF, LANE_AHEAD, nta);
	_Pragma("GCC unroll 4") for (int l = 0; l < G; l++)
		_mm512_storeu_ps(o[l], f[l]);
}

#define PK_TILE(NAME, CALL)                                                              \
	static void NAME(size_t n, const void *w, size_t w_stride, int nr, const void *act, \
			 size_t as, const float *prep, size_t B, float *out, size_t os,     \
			 void *scratch, const struct quant_tune *tune)                      \
	{                                                                                   \
		const uint8_t *g = w;                                                       \
		const size_t ahead = tune->ahead;                                           \
		const bool nta = tune->nta;                                                 \
		size_t b = 0;                                                               \
		(void)w_stride;                                                             \
		(void)nr;                                                                   \
		(void)scratch;                                                              \
		TOKEN_GROUPS(8, CALL(8))                                                    \
		TOKEN_GROUPS(4, CALL(4))                                                    \
		TOKEN_GROUPS(2, CALL(2))                                                    \
		TOKEN_GROUPS(1, CALL(1))                                                    \
	}

#define PK_Q40(C) pk_cols(g, n, a, p, o, (C), GGML_TYPE_Q4_0, b == 0 ? ahead : 0, nta)
#define PK_Q40G(C) pk_cols(g, n, a, p, o, (C), PK_Q4_0_GF, b == 0 ? ahead : 0, nta)
#define PK_Q80(C) pk_cols(g, n, a, p, o, (C), GGML_TYPE_Q8_0, b == 0 ? ahead : 0, nta)
#define PK_Q4K(C) pk_cols(g, n, a, p, o, (C), GGML_TYPE_Q4_K, b == 0 ? ahead : 0, nta)
#define PK_Q6K(C) pk_cols(g, n, a, p, o, (C), GGML_TYPE_Q6_K, b == 0 ? ahead : 0, nta)
PK_TILE(ptile_q4_0, PK_Q40)
PK_TILE(ptile_q4_0_gf, PK_Q40G)
PK_TILE(ptile_q8_0, PK_Q80)
PK_TILE(ptile_q4_K, PK_Q4K)
PK_TILE(ptile_q6_K, PK_Q6K)

#define PK_LANES(NAME, Q8, GF)                                                           \
	static void NAME(size_t n, const void *const *groups, int ng, const void *act,      \
			 const float *prep, float *const *out, const struct quant_tune *tune) \
	{                                                                                   \
		const uint8_t *const *g = (const uint8_t *const *)groups;                   \
		const bool nta = tune->nta;                                                 \
		switch (ng) {                                                               \
		case 4: pk_lanes(g, 4, n, act, prep, out, (Q8), (GF), nta); break;          \
		case 3: pk_lanes(g, 3, n, act, prep, out, (Q8), (GF), nta); break;          \
		case 2: pk_lanes(g, 2, n, act, prep, out, (Q8), (GF), nta); break;          \
		default: pk_lanes(g, 1, n, act, prep, out, (Q8), (GF), nta); break;         \
		}                                                                           \
	}
_Static_assert(QUANT_LANES == 4, "PK_LANES has a case for each lane count");
PK_LANES(lanes_q4_0, 0, 0)
PK_LANES(lanes_q4_0_gf, 0, 1)
PK_LANES(lanes_q8_0, 1, 0)

/*
 * The other packs on AVX-512 (the layouts of pack.c): each run of 8 dwords
 * of the 16 rows goes through put_run (one 512-bit register per dword of
 * all 16 rows), the f16 scales are 16 halves. Q4_0 and Q8_0 a pair of
 * blocks at a time, Q4_K a superblock (36 dwords: 4 runs and a half).
 */
static inline __m256i pk_row2(const uint8_t *a, const uint8_t *b)
{
	return _mm256_set_m128i(_mm_loadu_si128((const __m128i *)b),
				_mm_loadu_si128((const __m128i *)a));
}

static void pack_q4_0_to(size_t n, const void *src, void *dst, const struct quant_tune *tune)
{
	const size_t ahead = tune->ahead;
	const bool nta = tune->nta;
	const size_t rb = n / 32 * 18;
	const uint8_t *rows = src;
	uint8_t *p = dst;

	for (size_t i = 0; i < n / 64; i++, p += 576) {
		__m256i R[16];
		pk_prefetch(rows + 16 * rb + 576 * i, 576, ahead, nta); /* the next group */
		for (int r = 0; r < 16; r++) {
			const uint8_t *b = rows + (size_t)r * rb + 36 * i;
			memcpy(p + 2 * r, b, 2);
			memcpy(p + 32 + 2 * r, b + 18, 2);
			R[r] = pk_row2(b + 2, b + 20);
		}
		put_run(p + 64, 0, R);
	}
}

static void pack_q8_0_to(size_t n, const void *src, void *dst, const struct quant_tune *tune)
{
	const size_t ahead = tune->ahead;
	const bool nta = tune->nta;
	const size_t rb = n / 32 * 34;
	const uint8_t *rows = src;
	uint8_t *p = dst;

	for (size_t i = 0; i < n / 64; i++, p += 1088) {
		__m256i R[16], S[16];
		pk_prefetch(rows + 16 * rb + 1088 * i, 1088, ahead, nta); /* the next group */
		for (int r = 0; r < 16; r++) {
			const uint8_t *b = rows + (size_t)r * rb + 68 * i;
			memcpy(p + 2 * r, b, 2);
			memcpy(p + 32 + 2 * r, b + 34, 2);
			R[r] = _mm256_loadu_si256((const __m256i *)(b + 2));
			S[r] = _mm256_loadu_si256((const __m256i *)(b + 36));
		}
		put_run(p + 64, 0, R);
		put_run(p + 576, 0, S);
	}
}

static void pack_q4_K_to(size_t n, const void *src, void *dst, const struct quant_tune *tune)
{
	const size_t ahead = tune->ahead;
	const bool nta = tune->nta;
	const size_t rb = n / QK_K * 144;
	const uint8_t *rows = src;
	uint8_t *p = dst;
	_Alignas(64) uint8_t last[8 * 64];

	for (size_t u = 0; u < n / QK_K; u++, p += 2304) {
		__m256i R[16];
		pk_prefetch(rows + 16 * rb + 2304 * u, 2304, ahead, nta); /* the next group */
		for (int k = 0; k < 4; k++) {
			for (int r = 0; r < 16; r++)
				R[r] = _mm256_loadu_si256(
					(const __m256i *)(rows + (size_t)r * rb + 144 * u + 32 * (size_t)k));
			put_run(p + 512 * (size_t)k, 0, R);
		}
		for (int r = 0; r < 16; r++) /* dwords 32..35, the last 16 bytes */
			R[r] = _mm256_castsi128_si256(_mm_loadu_si128(
				(const __m128i *)(rows + (size_t)r * rb + 144 * u + 128)));
		put_run(last, 0, R);
		memcpy(p + 2048, last, 4 * 64);
	}
}

/*
 * Q6_K packed (the layout of pk_pack_q6_K in pack.c, which unpacks it), a
 * superblock of the 16 rows at a time: each row's X, Y, Z for one h are 32
 * bytes computed on ymm (q6_xyz), then put_run interleaves the 16 rows' dwords into
 * 8 registers; the scales are a 16 x 16 byte transpose, d 16 halves.
 */
static void pack_q6_K_to(size_t n, const void *src, void *dst, const struct quant_tune *tune)
{
	const size_t ahead = tune->ahead;
	const bool nta = tune->nta;
	const size_t rb = n / QK_K * sizeof(struct block_q6_K);
	const uint8_t *rows = src;
	uint8_t *p = dst;

	for (size_t u = 0; u < n / QK_K; u++, p += 3360) {
		pk_prefetch(rows + 16 * rb + 3360 * u, 3360, ahead, nta); /* the next group */
		for (int h = 0; h < 2; h++) {
			__m256i X[16], Y[16], Z[16];
			for (int r = 0; r < 16; r++)
				q6_xyz((const struct block_q6_K *)(rows + r * rb) + u, h, &X[r], &Y[r],
				       &Z[r]);
			put_run(p + 1536 * (size_t)h, 0, X);
			put_run(p + 1536 * (size_t)h + 512, 0, Y);
			put_run(p + 1536 * (size_t)h + 1024, 0, Z);
		}
		for (int r = 0; r < 16; r++) {
			const struct block_q6_K *b = (const struct block_q6_K *)(rows + r * rb) + u;
			for (int sb = 0; sb < 16; sb++)
				p[3072 + 16 * sb + r] = (uint8_t)b->scales[sb];
			memcpy(p + 3328 + 2 * r, &b->d, 2);
		}
	}
}

static const struct quant_packed pack_q4_0 = {
	pack_q4_0_to, pk_unpack_q4_0, {ptile_q4_0, tile_prep_q4_0, "avx512vnni packed"}, 64,
	lanes_q4_0};
/* Q4_0 where the CPU has GFNI (gf_shr4): the same layout and bits */
static const struct quant_packed pack_q4_0_gf = {
	pack_q4_0_to, pk_unpack_q4_0, {ptile_q4_0_gf, tile_prep_q4_0, "avx512vnni+gfni packed"},
	64, lanes_q4_0_gf};
static const struct quant_packed pack_q8_0 = {
	pack_q8_0_to, pk_unpack_q8_0, {ptile_q8_0, tile_prep_q8_0, "avx512vnni packed"}, 64,
	lanes_q8_0};
static const struct quant_packed pack_q4_K = {
	pack_q4_K_to, pk_unpack_q4_K, {ptile_q4_K, tile_prep_kmins32, "avx512vnni packed"}, 256,
	NULL};
static const struct quant_packed pack_q6_K = {
	pack_q6_K_to, pk_unpack_q6_K, {ptile_q6_K, tile_prep_q6_K, "avx512vnni packed"}, 256,
	NULL};

const struct quant_packed *const avx512_packed[GGML_TYPE_COUNT] = {
	[GGML_TYPE_Q4_0] = &pack_q4_0, [GGML_TYPE_Q8_0] = &pack_q8_0,
	[GGML_TYPE_Q4_K] = &pack_q4_K, [GGML_TYPE_Q6_K] = &pack_q6_K,
};
const struct quant_packed *const avx512_packed_gfni[GGML_TYPE_COUNT] = {
	[GGML_TYPE_Q4_0] = &pack_q4_0_gf, [GGML_TYPE_Q8_0] = &pack_q8_0,
	[GGML_TYPE_Q4_K] = &pack_q4_K, [GGML_TYPE_Q6_K] = &pack_q6_K,
};

/* the float tiles have no prep rows: their activations are F32 */
static void prep_none(size_t n, const void *act, float *prep)
{
	(void)n;
	(void)act;
	(void)prep;
}

static const struct quant_tile t_q4_0 = {tile_q4_0, tile_prep_q4_0, "avx512vnni"};
static const struct quant_tile t_q8_0 = {tile_q8_0, tile_prep_q8_0, "avx512vnni"};
static const struct quant_tile t_q4_K = {tile_q4_K, tile_prep_kmins32, "avx512vnni"};
static const struct quant_tile t_q5_K = {tile_q5_K, tile_prep_kmins32, "avx512vnni"};
static const struct quant_tile t_q6_K = {tile_q6_K, tile_prep_q6_K, "avx512vnni"};
static const struct quant_tile t_q2_K = {tile_q2_K, tile_prep_kmins16, "avx512vnni"};
static const struct quant_tile t_q3_K = {tile_q3_K, tile_prep_q3_K, "avx512vnni"};
static const struct quant_tile t_f16 = {tile_f16, prep_none, "avx512vnni"};
static const struct quant_tile t_bf16 = {tile_bf16, prep_none, "avx512vnni"};

const struct quant_tile *const avx512_tile[GGML_TYPE_COUNT] = {
	[GGML_TYPE_Q4_0] = &t_q4_0, [GGML_TYPE_Q8_0] = &t_q8_0, [GGML_TYPE_Q4_K] = &t_q4_K,
	[GGML_TYPE_Q5_K] = &t_q5_K, [GGML_TYPE_Q6_K] = &t_q6_K, [GGML_TYPE_Q2_K] = &t_q2_K,
	[GGML_TYPE_Q3_K] = &t_q3_K, [GGML_TYPE_F16] = &t_f16,   [GGML_TYPE_BF16] = &t_bf16,
};
