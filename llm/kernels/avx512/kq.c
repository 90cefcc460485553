/*
 * llm/kernels/avx512/kq.c — AVX-512 (VNNI) rows of the K-quant types:
 * Q2_K, Q3_K, Q4_K, Q5_K, Q6_K against Q8_K activations.
 *
 * Bit layouts as in llm/kernels/scalar/q_k.c (ggml-common.h block_q*_K).
 * A super-block of 256 elements is four zmm of 64 quants, each in element
 * order so that its activations are one plain 64-byte load. The quants stay
 * unsigned (0..63): offsets (Q3_K's -4, Q6_K's -32) and mins are taken out
 * through the Q8_K bsums,
 *   sum_s sc_s sum_e (q_e - o) a_e = sum_s sc_s sum_e q_e a_e - o sum_s sc_s bsum_s.
 *
 * Per zmm: vpdpbusd (u8 quants x s8 activations) gives 16 int32 lanes, each
 * the sum of 4 products, |sum| <= 4 * 63 * 127 = 32004, so it is also a valid
 * int16. vpdpwssd then multiplies each lane's low int16 by the scale of its
 * sub-block (the lane's high int16 against 0) and accumulates: the
 * super-block sum is exact in int32, as in the scalar row. Only the float
 * steps differ from it: one FMA per lane and super-block, one sum per row.
 *
 * These rows are bound by their vector uops (ports 0 and 5), so the work
 * that is per super-block but not per element is done for four super-blocks
 * at once, one per 128-bit lane: the scales are unpacked into a scratch,
 * from which a block's four scale vectors are one broadcast load and four
 * vpshufb; the float factors d d_a (and dmin d_a) are gathered, converted
 * and multiplied once and then used as broadcast memory operands.
 *
 * vec_dot and gemm share one body, so gemm returns vec_dot's bits for
 * every column.
 */
#include <immintrin.h>

#include "../scalar/scalar.h"
#include "avx512_rows.h"

#define KQ_INLINE static inline __attribute__((always_inline))
/* The per-zmm loops must unroll: their arrays are meant to stay in registers. */
#define KQ_UNROLL _Pragma("GCC unroll 4")

/* Super-blocks per batch: one per 128-bit lane of a zmm. */
#define KQ_BATCH 4

/*
 * Decode streams every weight once per token. With only the hardware
 * prefetcher these rows fell short of a plain load loop's read bandwidth;
 * asking for the lines 4 KiB ahead (the row's later blocks, then the next
 * row's) passes it (docs/perf.md, "Rows and prefill tiles").
 */
#define KQ_PREFETCH 4096

/* The batch's scratch: scale bytes for vpshufb (16 or 32 per block), mins
 * or offset terms as int16 per 16 elements, the float factors per column. */
struct kq_scratch {
	_Alignas(64) uint8_t s[KQ_BATCH * 32];
	_Alignas(64) int16_t m[KQ_BATCH][16];
	_Alignas(64) float f[QUANT_GEMM_COLS][2 * KQ_BATCH];
};

/* One super-block's quants and scale vectors. */
struct kq_sb {
	__m512i q[4];  /* elements 64 g .. 64 g + 63 as unsigned bytes */
	__m512i sc[4]; /* per int32 lane of q[g]: scale of its sub-block, high int16 0 */
};

/*
 * vpshufb controls that spread a block's scales (broadcast to every 128-bit
 * lane) over the int32 lanes of zmm g, zero-extended: kq_ctl32 for
 * sub-blocks of 32 (8 unsigned bytes; lanes 0..7 take 2 g, 8..15 take
 * 2 g + 1), kq_ctl16u for sub-blocks of 16 (16 unsigned bytes; 128-bit lane
 * l takes 4 g + l), kq_ctl16s for sub-blocks of 16 held as int16 (zmm g
 * reads half g / 2 of them; lane l takes 4 (g % 2) + l).
 */
#define KQ_Z 0x80
#define KQ_D1(b) (b), KQ_Z, KQ_Z, KQ_Z
#define KQ_D2(b) (b), (b) + 1, KQ_Z, KQ_Z
#define KQ_L(d) d, d, d, d
#define KQ_C32(g) {KQ_L(KQ_D1(2 * (g))), KQ_L(KQ_D1(2 * (g))),                          \
		   KQ_L(KQ_D1(2 * (g) + 1)), KQ_L(KQ_D1(2 * (g) + 1))}
#define KQ_C16U(g) {KQ_L(KQ_D1(4 * (g))), KQ_L(KQ_D1(4 * (g) + 1)),                     \
		    KQ_L(KQ_D1(4 * (g) + 2)), KQ_L(KQ_D1(4 * (g) + 3))}
#define KQ_C16S(h) {KQ_L(KQ_D2(8 * (h))), KQ_L(KQ_D2(8 * (h) + 2)),                     \
		    KQ_L(KQ_D2(8 * (h) + 4)), KQ_L(KQ_D2(8 * (h) + 6))}

static const _Alignas(64) uint8_t kq_ctl32[4][64] = {KQ_C32(0), KQ_C32(1), KQ_C32(2), KQ_C32(3)};
static const _Alignas(64) uint8_t kq_ctl16u[4][64] = {KQ_C16U(0), KQ_C16U(1), KQ_C16U(2),
						      KQ_C16U(3)};
static const _Alignas(64) uint8_t kq_ctl16s[2][64] = {KQ_C16S(0), KQ_C16S(1)};

KQ_INLINE __m512i kq_ld(const void *p)
{
	return _mm512_load_si512(p);
}

/* 32 bytes to both halves of a zmm (a load, no shuffle). */
KQ_INLINE __m512i kq_bcast32(const uint8_t *p)
{
	return _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)p));
}

KQ_INLINE __m512i kq_bcast16(const uint8_t *p)
{
	return _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)p));
}

/* vpsrlvw counts: the lower 256 bits by lo, the upper by hi. */
KQ_INLINE __m512i kq_shift2(int lo, int hi)
{
	return _mm512_inserti64x4(_mm512_set1_epi16((short)lo), _mm256_set1_epi16((short)hi), 1);
}

/* Bits of a where c is set, of b where it is clear: vpternlog's table
 * indexed by a b c (bit 4 a + 2 b + c) is c ? a : b = 0xe4. */
KQ_INLINE __m512i kq_select(__m512i c, __m512i a, __m512i b)
{
	return _mm512_ternarylogic_epi32(a, b, c, 0xe4);
}

/* 16 bytes at off of blocks 0..cnt-1 (stride bytes apart), one per 128-bit
 * lane; lanes past cnt repeat the last block (their results go unused). */
KQ_INLINE __m512i kq_load4(const void *blocks, size_t stride, size_t off, int cnt)
{
	const uint8_t *p = (const uint8_t *)blocks + off;
	size_t s1 = cnt > 1 ? stride : 0, s2 = cnt > 2 ? 2 * stride : s1;
	size_t s3 = cnt > 3 ? 3 * stride : s2;
	__m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)p));

	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + s1)), 1);
	v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + s2)), 2);
	return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(p + s3)), 3);
}

/* 16 unsigned bytes per lane to int16 in m[lane][0..15]. */
KQ_INLINE void kq_store_m_u8(__m512i v, struct kq_scratch *t)
{
	_mm512_store_si512(t->m[0], _mm512_cvtepu8_epi16(_mm512_castsi512_si256(v)));
	_mm512_store_si512(t->m[2], _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(v, 1)));
}

/* 16 signed scales per lane to int16: to s (32 bytes a block), and times
 * -2^o_shift to m, the offset term against bsums. */
KQ_INLINE void kq_store_s16(__m512i v, int o_shift, struct kq_scratch *t)
{
	const __m512i zero = _mm512_setzero_si512();
	__m512i a = _mm512_cvtepi8_epi16(_mm512_castsi512_si256(v));
	__m512i b = _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(v, 1));

	_mm512_store_si512(t->s, a);
	_mm512_store_si512(t->s + 64, b);
	_mm512_store_si512(t->m[0], _mm512_sub_epi16(zero, _mm512_slli_epi16(a, o_shift)));
	_mm512_store_si512(t->m[2], _mm512_sub_epi16(zero, _mm512_slli_epi16(b, o_shift)));
}

/*
 * Float factors of blocks 0..cnt-1 against one activation row: the two f16
 * of the dword at woff of each weight block, times that block's d_a, to
 * f[2 u] and f[2 u + 1]. Q2_K/Q4_K/Q5_K: the dword is (d, dmin). Q3_K and
 * Q6_K end in d, read as the high half of the dword before it (a dword at d
 * would pass the block's end) and shifted down: (d, 0).
 */
KQ_INLINE void kq_factors(const void *w, int wbytes, int woff, bool d_high,
			  const struct block_q8_K *y, int cnt, float *f)
{
	const int yb = (int)sizeof(struct block_q8_K);
	__m128i wd = _mm_mmask_i32gather_epi32(_mm_setzero_si128(), (__mmask8)((1 << cnt) - 1),
					       _mm_setr_epi32(0, wbytes, 2 * wbytes, 3 * wbytes),
					       (const uint8_t *)w + woff, 1);
	__m256 da = _mm256_mmask_i32gather_ps(_mm256_setzero_ps(), (__mmask8)((1 << 2 * cnt) - 1),
					      _mm256_setr_epi32(0, 0, yb, yb, 2 * yb, 2 * yb,
								3 * yb, 3 * yb),
					      &y->d, 1);

	if (d_high)
		wd = _mm_srli_epi32(wd, 16);
	_mm256_store_ps(f, _mm256_mul_ps(_mm256_cvtph_ps(wd), da));
}

/*
 * Q4_K/Q5_K scales: ggml get_scale_min_k4 for four blocks, each lane
 * holding a block's first 16 bytes (d, dmin, then the 12 scale bytes as
 * dwords w0 w1 w2): scales 0..3 = w0 & 0x3f.., 4..7 = (w2 & 0x0f..) | top 2
 * bits of w0 at bits 4..5; mins 0..3 = w1 & 0x3f.., 4..7 = (w2 >> 4) | top 2
 * bits of w1. Scales to s (16 bytes a block), each min twice to m (one per
 * 16 elements, as the bsums).
 */
KQ_INLINE void kq_batch_k4(const void *x, size_t bytes, int cnt, struct kq_scratch *t)
{
	__m512i raw = kq_load4(x, bytes, 0, cnt);
	__m512i a = _mm512_shuffle_epi32(raw, _MM_SHUFFLE(3, 2, 3, 1)); /* w0 w2 w1 w2 */
	__m512i b = _mm512_shuffle_epi32(raw, _MM_SHUFFLE(2, 2, 1, 1)); /* w0 w0 w1 w1 */
	__m512i lo_mask = _mm512_set4_epi32(0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f);
	__m512i lo = _mm512_and_si512(_mm512_srlv_epi32(a, _mm512_set4_epi32(4, 0, 0, 0)), lo_mask);
	__m512i hi = _mm512_and_si512(_mm512_srli_epi32(b, 2),
				      _mm512_set4_epi32(0x30303030, 0, 0x30303030, 0));
	__m512i sm = _mm512_or_si512(lo, hi);

	_mm512_store_si512(t->s, sm);
	kq_store_m_u8(_mm512_unpackhi_epi8(sm, sm), t);
}

KQ_INLINE void kq_batch_q4_K(const struct block_q4_K *x, int cnt, struct kq_scratch *t)
{
	kq_batch_k4(x, sizeof *x, cnt, t);
}

KQ_INLINE void kq_batch_q5_K(const struct block_q5_K *x, int cnt, struct kq_scratch *t)
{
	kq_batch_k4(x, sizeof *x, cnt, t);
}

/* Q2_K: scales[s] holds the scale of sub-block s in its low nibble, the
 * min in its high nibble. */
KQ_INLINE void kq_batch_q2_K(const struct block_q2_K *x, int cnt, struct kq_scratch *t)
{
	const __m512i nib = _mm512_set1_epi8(0x0f);
	__m512i raw = kq_load4(x, sizeof *x, 0, cnt);

	_mm512_store_si512(t->s, _mm512_and_si512(raw, nib));
	kq_store_m_u8(_mm512_and_si512(_mm512_srli_epi16(raw, 4), nib), t);
}

/*
 * Q3_K: 16 6-bit scales stored + 32 (unpack_q3_K): the low 4 bits of s from
 * byte s (s < 8) or the high nibble of byte s - 8, the top 2 bits from byte
 * 8 + s % 4 at bit 2 (s / 4). Read as the 16 bytes ending the block (bytes
 * 2..13 of the lane are the 12 scale bytes): 16 from the scales would pass
 * its end. o = 4.
 */
KQ_INLINE void kq_batch_q3_K(const struct block_q3_K *x, int cnt, struct kq_scratch *t)
{
	const __m512i lo8 = _mm512_set_epi64(0x0908070605040302ll, 0x0908070605040302ll,
					     0x0908070605040302ll, 0x0908070605040302ll,
					     0x0908070605040302ll, 0x0908070605040302ll,
					     0x0908070605040302ll, 0x0908070605040302ll);
	const __m512i top = _mm512_set1_epi32(0x0d0c0b0a);
	__m512i raw = kq_load4(x, sizeof *x, sizeof *x - 16, cnt);
	__m512i lo = _mm512_shuffle_epi8(raw, lo8); /* bytes 0..7 twice */
	__m512i hi = _mm512_shuffle_epi8(raw, top); /* bytes 8..11 in every dword */

	lo = _mm512_srlv_epi64(lo, _mm512_set_epi64(4, 0, 4, 0, 4, 0, 4, 0));
	lo = _mm512_and_si512(lo, _mm512_set1_epi8(0x0f));
	hi = _mm512_srlv_epi32(hi, _mm512_set4_epi32(6, 4, 2, 0));
	hi = _mm512_slli_epi32(_mm512_and_si512(hi, _mm512_set1_epi8(3)), 4);
	kq_store_s16(_mm512_sub_epi8(_mm512_or_si512(lo, hi), _mm512_set1_epi8(32)), 2, t);
}

/* Q6_K: 16 signed 8-bit scales, one per 16 elements. o = 32. */
KQ_INLINE void kq_batch_q6_K(const struct block_q6_K *x, int cnt, struct kq_scratch *t)
{
	kq_store_s16(kq_load4(x, sizeof *x, offsetof(struct block_q6_K, scales), cnt), 5, t);
}

/* Scale vectors of one block from its bytes s in the scratch. */
KQ_INLINE void kq_scales32(const uint8_t *s, __m512i *sc)
{
	__m512i b = kq_bcast16(s);

	KQ_UNROLL
	for (int g = 0; g < 4; g++)
		sc[g] = _mm512_shuffle_epi8(b, kq_ld(kq_ctl32[g]));
}

KQ_INLINE void kq_scales16u(const uint8_t *s, __m512i *sc)
{
	__m512i b = kq_bcast16(s);

	KQ_UNROLL
	for (int g = 0; g < 4; g++)
		sc[g] = _mm512_shuffle_epi8(b, kq_ld(kq_ctl16u[g]));
}

KQ_INLINE void kq_scales16s(const uint8_t *s, __m512i *sc)
{
	__m512i b0 = kq_bcast16(s), b1 = kq_bcast16(s + 16);

	KQ_UNROLL
	for (int g = 0; g < 4; g++)
		sc[g] = _mm512_shuffle_epi8(g < 2 ? b0 : b1, kq_ld(kq_ctl16s[g & 1]));
}

/* Q4_K: qs[32 c + l] holds element 64 c + l (low nibble) and 64 c + 32 + l
 * (high nibble): 32 bytes to both halves, the upper half shifted by 4. */
KQ_INLINE void kq_prep_q4_K(const struct block_q4_K *b, const uint8_t *s, struct kq_sb *k)
{
	const __m512i low = _mm512_set1_epi8(0x0f), sh = kq_shift2(0, 4);

	kq_scales32(s, k->sc);
	KQ_UNROLL
	for (int g = 0; g < 4; g++)
		k->q[g] = _mm512_and_si512(_mm512_srlv_epi16(kq_bcast32(b->qs + 32 * g), sh), low);
}

/* Q5_K: Q4_K plus bit 4 of element 32 s + l in bit s of qh[l]. With the
 * upper half (odd sub-blocks) shifted right by 1, zmm g finds its bit at
 * 2 g in both halves; a 16-bit shift only moves bits across bytes in
 * places the masks drop. */
KQ_INLINE void kq_prep_q5_K(const struct block_q5_K *b, const uint8_t *s, struct kq_sb *k)
{
	const __m512i low = _mm512_set1_epi8(0x0f), b4 = _mm512_set1_epi8(0x10);
	const __m512i sh = kq_shift2(0, 4);
	__m512i qh = _mm512_srlv_epi16(kq_bcast32(b->qh), kq_shift2(0, 1)), h[4];

	h[0] = _mm512_slli_epi16(qh, 4);
	h[1] = _mm512_slli_epi16(qh, 2);
	h[2] = qh;
	h[3] = _mm512_srli_epi16(qh, 2);
	kq_scales32(s, k->sc);
	KQ_UNROLL
	for (int g = 0; g < 4; g++)
		k->q[g] = kq_select(low, _mm512_srlv_epi16(kq_bcast32(b->qs + 32 * g), sh),
				    _mm512_and_si512(h[g], b4));
}

/*
 * Q6_K: zmm 2 n holds elements 128 n + 0..63, the low nibbles of
 * ql[64 n .. 64 n + 63]; zmm 2 n + 1 elements 128 n + 64..127, their high
 * nibbles. Top 2 bits: qh[32 n + l] bits 2 j for element 128 n + 32 j + l;
 * with the upper half shifted right by 2, zmm 2 n finds them at bits 0..1
 * and zmm 2 n + 1 at bits 4..5 (h keeps only those).
 */
KQ_INLINE void kq_prep_q6_K(const struct block_q6_K *b, const uint8_t *s, struct kq_sb *k)
{
	const __m512i low = _mm512_set1_epi8(0x0f), keep = _mm512_set1_epi8(0x33);
	const __m512i sh = kq_shift2(0, 2);

	kq_scales16s(s, k->sc);
	KQ_UNROLL
	for (int n = 0; n < 2; n++) {
		__m512i ql = _mm512_loadu_si512(b->ql + 64 * n);
		__m512i h = _mm512_srlv_epi16(kq_bcast32(b->qh + 32 * n), sh);

		h = _mm512_and_si512(h, keep);
		k->q[2 * n] = kq_select(low, ql, _mm512_slli_epi16(h, 4));
		k->q[2 * n + 1] = kq_select(low, _mm512_srli_epi16(ql, 4), h);
	}
}

/* Q2_K: element 128 n + 32 j + l is bits 2 j of qs[32 n + l]; zmm g = 2 n + i
 * takes j = 2 i (lower half) and 2 i + 1 (upper, shifted right by 2 first). */
KQ_INLINE void kq_prep_q2_K(const struct block_q2_K *b, const uint8_t *s, struct kq_sb *k)
{
	const __m512i three = _mm512_set1_epi8(3), sh = kq_shift2(0, 2);

	kq_scales16u(s, k->sc);
	KQ_UNROLL
	for (int n = 0; n < 2; n++) {
		__m512i q = _mm512_srlv_epi16(kq_bcast32(b->qs + 32 * n), sh);
		k->q[2 * n] = _mm512_and_si512(q, three);
		k->q[2 * n + 1] = _mm512_and_si512(_mm512_srli_epi16(q, 4), three);
	}
}

/* Q3_K: low 2 bits as Q2_K; the third bit of element 128 n + 32 j + l is bit
 * 4 n + j of hmask[l] (set: no -4). The quants here are lo + 4 hbit (0..7).
 * With the upper half of hmask shifted right by 1, zmm g finds its bit at
 * 2 g in both halves. */
KQ_INLINE void kq_prep_q3_K(const struct block_q3_K *b, const uint8_t *s, struct kq_sb *k)
{
	const __m512i three = _mm512_set1_epi8(3), b2 = _mm512_set1_epi8(4);
	const __m512i sh = kq_shift2(0, 2);
	__m512i hm = _mm512_srlv_epi16(kq_bcast32(b->hmask), kq_shift2(0, 1)), h[4];

	h[0] = _mm512_slli_epi16(hm, 2);
	h[1] = hm;
	h[2] = _mm512_srli_epi16(hm, 2);
	h[3] = _mm512_srli_epi16(hm, 4);
	kq_scales16s(s, k->sc);
	KQ_UNROLL
	for (int n = 0; n < 2; n++) {
		__m512i q = _mm512_srlv_epi16(kq_bcast32(b->qs + 32 * n), sh);
		k->q[2 * n] = kq_select(three, q, _mm512_and_si512(h[2 * n], b2));
		k->q[2 * n + 1] = kq_select(three, _mm512_srli_epi16(q, 4),
					    _mm512_and_si512(h[2 * n + 1], b2));
	}
}

/*
 * One prepared super-block against one Q8_K block; m is its int16 per 16
 * elements, f its factors (d d_a, dmin d_a). With mins (KQ_MIN) the min
 * term dmin d_a sum m bsum goes through accm; otherwise (KQ_OFF) m is -o sc
 * and its product with bsums joins the exact integer sum before the FMA.
 */
enum { KQ_MIN, KQ_OFF };

KQ_INLINE void kq_col(const struct kq_sb *k, const int16_t *m, const struct block_q8_K *y,
		      const float *f, int kind, __m512 *acc, __m256 *accm)
{
	const __m512i zero = _mm512_setzero_si512();
	/* VEX loads zero the upper 256 bits: zext is free */
	__m512i bs = _mm512_zextsi256_si512(_mm256_loadu_si256((const __m256i *)y->bsums));
	__m512i mv = _mm512_zextsi256_si512(_mm256_load_si256((const __m256i *)m));
	__m512i s0 = zero, s1 = zero;

	KQ_UNROLL
	for (int g = 0; g < 4; g += 2) {
		__m512i p0 = _mm512_dpbusd_epi32(zero, k->q[g], _mm512_loadu_si512(y->qs + 64 * g));
		__m512i p1 = _mm512_dpbusd_epi32(zero, k->q[g + 1],
						 _mm512_loadu_si512(y->qs + 64 * g + 64));
		s0 = _mm512_dpwssd_epi32(s0, p0, k->sc[g]);
		s1 = _mm512_dpwssd_epi32(s1, p1, k->sc[g + 1]);
	}
	if (kind == KQ_OFF)
		s1 = _mm512_dpwssd_epi32(s1, mv, bs);
	*acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1)), _mm512_set1_ps(f[0]),
			       *acc);
	if (kind == KQ_MIN) {
		__m256i md = _mm256_madd_epi16(_mm512_castsi512_si256(mv),
					       _mm512_castsi512_si256(bs));
		*accm = _mm256_fmadd_ps(_mm256_cvtepi32_ps(md), _mm256_set1_ps(f[1]), *accm);
	}
}

KQ_INLINE float kq_sum(__m512 acc, __m256 accm)
{
	return _mm512_reduce_add_ps(_mm512_sub_ps(acc, _mm512_zextps256_ps512(accm)));
}

KQ_INLINE void kq_prefetch(const void *block, size_t bytes)
{
	KQ_UNROLL
	for (size_t o = 0; o < bytes; o += 64)
		_mm_prefetch((const char *)block + KQ_PREFETCH + o, _MM_HINT_T0);
}

/* Activation row j of a gemm (as bytes apart; vec_dot has j = 0). */
#define KQ_ACT(j) ((const struct block_q8_K *)((const uint8_t *)act + (size_t)(j) * as))

/*
 * NC activation rows against one weight row: per batch, the weights' scales
 * once and each row's factors; per block, the quants once and each row's
 * dot product. S is the scale bytes per block in the scratch; WOFF and
 * D_HIGH locate the factor dword (kq_factors).
 */
#define KQ_BODY(NC, T, S, WOFF, D_HIGH, KIND)                                           \
	const struct block_##T *x = w;                                                  \
	const size_t nb = n / QK_K;                                                     \
	__m512 acc[NC];                                                                 \
	__m256 accm[NC];                                                                \
	struct kq_scratch t;                                                            \
	struct kq_sb k;                                                                 \
	KQ_UNROLL for (int j = 0; j < NC; j++) {                                        \
		acc[j] = _mm512_setzero_ps();                                           \
		accm[j] = _mm256_setzero_ps();                                          \
	}                                                                               \
	for (size_t i0 = 0; i0 < nb; i0 += KQ_BATCH) {                                  \
		int cnt = nb - i0 < KQ_BATCH ? (int)(nb - i0) : KQ_BATCH;               \
		kq_batch_##T(x + i0, cnt, &t);                                          \
		KQ_UNROLL for (int j = 0; j < NC; j++)                                  \
			kq_factors(x + i0, (int)sizeof *x, WOFF, D_HIGH,                \
				   KQ_ACT(j) + i0, cnt, t.f[j]);                        \
		for (int u = 0; u < cnt; u++) {                                         \
			kq_prefetch(x + i0 + u, sizeof *x);                             \
			kq_prep_##T(x + i0 + u, t.s + (S) * u, &k);                     \
			KQ_UNROLL for (int j = 0; j < NC; j++)                          \
				kq_col(&k, t.m[u], KQ_ACT(j) + i0 + u, t.f[j] + 2 * u,  \
				       KIND, &acc[j], &accm[j]);                        \
		}                                                                       \
	}

#define KQ_ROWS(T, S, WOFF, D_HIGH, KIND)                                                  \
	float avx512_##T##_vec_dot(size_t n, const void *w, const void *act)               \
	{                                                                                  \
		const size_t as = 0;                                                       \
		KQ_BODY(1, T, S, WOFF, D_HIGH, KIND)                                       \
		return kq_sum(acc[0], accm[0]);                                            \
	}                                                                                  \
	void avx512_##T##_gemm(size_t n, const void *w, const void *act, size_t as,        \
			       float *out, size_t os, int nc)                              \
	{                                                                                  \
		if (nc == QUANT_GEMM_COLS) {                                               \
			KQ_BODY(QUANT_GEMM_COLS, T, S, WOFF, D_HIGH, KIND)                 \
			for (int j = 0; j < QUANT_GEMM_COLS; j++)                          \
				out[(size_t)j * os] = kq_sum(acc[j], accm[j]);             \
			return;                                                            \
		}                                                                          \
		for (int j = 0; j < nc; j++)                                               \
			out[(size_t)j * os] = avx512_##T##_vec_dot(n, w, KQ_ACT(j));       \
	}

KQ_ROWS(q2_K, 16, offsetof(struct block_q2_K, d), false, KQ_MIN)
KQ_ROWS(q3_K, 32, offsetof(struct block_q3_K, d) - 2, true, KQ_OFF)
KQ_ROWS(q4_K, 16, offsetof(struct block_q4_K, d), false, KQ_MIN)
KQ_ROWS(q5_K, 16, offsetof(struct block_q5_K, d), false, KQ_MIN)
KQ_ROWS(q6_K, 32, offsetof(struct block_q6_K, d) - 2, true, KQ_OFF)
