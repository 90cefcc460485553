/*
 * llm/kernels/scalar/q_k.c — the K-quants (256-element super-blocks): Q2_K,
 * Q3_K, Q4_K, Q5_K, Q6_K, and the activation type Q8_K.
 *
 * Each type is first unpacked into one plain form: 256 integer quants in
 * element order (offsets already applied), an integer scale and min per
 * sub-block (16 or 32 elements). to_float and vec_dot both work from that
 * form, so the bit layouts (ggml-common.h, ggml-quants.c dequantize_row_*)
 * live in one place per type. to_float does ggml's float operations in
 * ggml's order, which is what makes it bit-exact.
 */
#include "scalar.h"

struct kq {
	int8_t q[QK_K];
	int sc[16];   /* per sub-block scale */
	int m[16];    /* per sub-block min (types with mins) */
	int sub;      /* elements per sub-block: 16 or 32 */
};

/* Q2_K: 2-bit quants, bytes qs[32 n + l] hold elements 128 n + 32 j + l (j = 0..3)
 * in bits 2j..2j+1; scale/min of sub-block s in the low/high nibble of scales[s]. */
static void unpack_q2_K(const struct block_q2_K *b, struct kq *k)
{
	for (int n = 0; n < 2; n++)
		for (int j = 0; j < 4; j++)
			for (int l = 0; l < 32; l++)
				k->q[128 * n + 32 * j + l] = (int8_t)((b->qs[32 * n + l] >> (2 * j)) & 3);
	for (int s = 0; s < 16; s++) {
		k->sc[s] = b->scales[s] & 0xf;
		k->m[s] = b->scales[s] >> 4;
	}
	k->sub = 16;
}

/* Q3_K: as Q2_K for the low 2 bits; the third bit of element 128 n + 32 j + l is
 * bit 4 n + j of hmask[l] and, when clear, the quant is 4 lower. 16 6-bit scales:
 * low nibbles in scales[0..7] (s < 8: low, else high nibble of scales[s - 8]),
 * high 2 bits in scales[8 + s % 4] at bit 2 (s / 4). Stored with +32. */
static void unpack_q3_K(const struct block_q3_K *b, struct kq *k)
{
	for (int n = 0; n < 2; n++)
		for (int j = 0; j < 4; j++)
			for (int l = 0; l < 32; l++) {
				int lo = (b->qs[32 * n + l] >> (2 * j)) & 3;
				int hi = (b->hmask[l] >> (4 * n + j)) & 1;
				k->q[128 * n + 32 * j + l] = (int8_t)(lo - 4 + 4 * hi);
			}
	for (int s = 0; s < 16; s++) {
		int low = s < 8 ? b->scales[s] & 0xf : b->scales[s - 8] >> 4;
		int high = (b->scales[8 + s % 4] >> (2 * (s / 4))) & 3;
		k->sc[s] = (low | high << 4) - 32;
		k->m[s] = 0;
	}
	k->sub = 16;
}

/* Q4_K: element 64 c + l (l < 32) is the low nibble of qs[32 c + l], element
 * 64 c + 32 + l the high nibble: sub-block s = e / 32. */
static void unpack_q4_K(const struct block_q4_K *b, struct kq *k)
{
	for (int c = 0; c < 4; c++)
		for (int l = 0; l < 32; l++) {
			k->q[64 * c + l] = (int8_t)(b->qs[32 * c + l] & 0xf);
			k->q[64 * c + 32 + l] = (int8_t)(b->qs[32 * c + l] >> 4);
		}
	for (int s = 0; s < 8; s++)
		q_scale_min_k4(b->scales, s, &k->sc[s], &k->m[s]);
	k->sub = 32;
}

/* Q5_K: Q4_K plus bit 4 of element 32 s + l in bit s of qh[l]. */
static void unpack_q5_K(const struct block_q5_K *b, struct kq *k)
{
	for (int c = 0; c < 4; c++)
		for (int l = 0; l < 32; l++) {
			int h = b->qh[l] >> (2 * c);
			k->q[64 * c + l] = (int8_t)((b->qs[32 * c + l] & 0xf) | (h & 1) << 4);
			k->q[64 * c + 32 + l] = (int8_t)((b->qs[32 * c + l] >> 4) | (h & 2) << 3);
		}
	for (int s = 0; s < 8; s++)
		q_scale_min_k4(b->scales, s, &k->sc[s], &k->m[s]);
	k->sub = 32;
}

/* Q6_K: element 128 n + 32 j + l: low 4 bits from ql[64 n + l + 32 (j & 1)]
 * (low nibble for j < 2, high for j >= 2), top 2 bits from qh[32 n + l] at bit
 * 2 j; stored with +32. Scale of sub-block s: signed scales[s]. */
static void unpack_q6_K(const struct block_q6_K *b, struct kq *k)
{
	for (int n = 0; n < 2; n++)
		for (int l = 0; l < 32; l++) {
			const uint8_t *ql = b->ql + 64 * n;
			uint8_t h = b->qh[32 * n + l];
			int8_t *q = k->q + 128 * n;
			q[l] = (int8_t)(((ql[l] & 0xf) | (h & 3) << 4) - 32);
			q[l + 32] = (int8_t)(((ql[l + 32] & 0xf) | ((h >> 2) & 3) << 4) - 32);
			q[l + 64] = (int8_t)(((ql[l] >> 4) | ((h >> 4) & 3) << 4) - 32);
			q[l + 96] = (int8_t)(((ql[l + 32] >> 4) | ((h >> 6) & 3) << 4) - 32);
		}
	for (int s = 0; s < 16; s++) {
		k->sc[s] = b->scales[s];
		k->m[s] = 0;
	}
	k->sub = 16;
}

/* ggml: y = (d * sc) * q - (dmin * m), per sub-block. */
static void kq_to_float(const struct kq *k, float d, float dmin, bool has_min, float *y)
{
	for (int e = 0; e < QK_K; e++) {
		int s = e / k->sub;
		float dl = d * (float)k->sc[s];
		if (has_min)
			y[e] = dl * (float)k->q[e] - dmin * (float)k->m[s];
		else
			y[e] = dl * (float)k->q[e];
	}
}

/* Integer dot of one unpacked block with one Q8_K block:
 * d_w d_a sum_s sc_s sum(q a) - dmin_w d_a sum_s m_s sum(a). */
static float kq_dot(const struct kq *k, float d, float dmin, bool has_min,
		    const struct block_q8_K *a)
{
	int isum = 0, msum = 0;

	for (int s = 0; s < QK_K / k->sub; s++) {
		int dot = 0;
		for (int e = s * k->sub; e < (s + 1) * k->sub; e++)
			dot += k->q[e] * a->qs[e];
		isum += k->sc[s] * dot;
	}
	if (!has_min)
		return d * a->d * (float)isum;
	for (int g = 0; g < QK_K / 16; g++)
		msum += k->m[g * 16 / k->sub] * a->bsums[g];
	return d * a->d * (float)isum - dmin * a->d * (float)msum;
}

#define K_ROWS(T, HAS_MIN, D, DMIN)                                                   \
	void T##_to_float(const void *src, float *dst, size_t n)                      \
	{                                                                             \
		const struct block_##T *b = src;                                      \
		struct kq k;                                                          \
		for (size_t i = 0; i < n / QK_K; i++, dst += QK_K) {                  \
			unpack_##T(&b[i], &k);                                        \
			kq_to_float(&k, q_f16(b[i].D), q_f16(b[i].DMIN), HAS_MIN, dst); \
		}                                                                     \
	}                                                                             \
	float T##_vec_dot(size_t n, const void *w, const void *act)                   \
	{                                                                             \
		const struct block_##T *b = w;                                        \
		const struct block_q8_K *a = act;                                     \
		struct kq k;                                                          \
		float sum = 0;                                                        \
		for (size_t i = 0; i < n / QK_K; i++) {                               \
			unpack_##T(&b[i], &k);                                        \
			sum += kq_dot(&k, q_f16(b[i].D), q_f16(b[i].DMIN), HAS_MIN, &a[i]); \
		}                                                                     \
		return sum;                                                           \
	}

K_ROWS(q2_K, true, d, dmin)
K_ROWS(q3_K, false, d, d)
K_ROWS(q4_K, true, d, dmin)
K_ROWS(q5_K, true, d, dmin)
K_ROWS(q6_K, false, d, d)

void q8_K_to_float(const void *src, float *dst, size_t n)
{
	const struct block_q8_K *b = src;

	for (size_t i = 0; i < n / QK_K; i++, dst += QK_K)
		for (int j = 0; j < QK_K; j++)
			dst[j] = b[i].d * (float)b[i].qs[j];
}

/* Symmetric 8-bit over the whole super-block, with the sums of each 16. */
void q8_K_from_float(const float *src, void *dst, size_t n)
{
	struct block_q8_K *b = dst;

	for (size_t i = 0; i < n / QK_K; i++, src += QK_K) {
		float amax = 0, id;
		for (int j = 0; j < QK_K; j++)
			if (q_fabs(src[j]) > amax)
				amax = q_fabs(src[j]);
		b[i].d = amax / 127.0f;
		id = amax != 0.0f ? 127.0f / amax : 0.0f;
		for (int j = 0; j < QK_K; j++) {
			int v = q_round(src[j] * id);
			b[i].qs[j] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
		}
		for (int g = 0; g < QK_K / 16; g++) {
			int s = 0;
			for (int j = 0; j < 16; j++)
				s += b[i].qs[16 * g + j];
			b[i].bsums[g] = (int16_t)s;
		}
	}
}

/* ---- random blocks (quant_fill_random) ---- */

void q2_K_fill(void *dst, size_t nb, float std, uint64_t *s)
{
	struct block_q2_K *b = dst;
	float d = std * Q_SQRT12 / (4 * 11.5f);               /* sc in 8..15 */

	for (size_t i = 0; i < nb; i++) {
		for (int j = 0; j < 16; j++) {
			int sc = q_rng_int(s, 8, 15); /* (in this order: the bytes are fixed) */
			b[i].scales[j] = (uint8_t)(sc | q_rng_int(s, 8, 15) << 4);
		}
		b[i].d = q_rng_scale(s, d);
		b[i].dmin = q_f32_to_f16(1.5f * d);           /* min ~ half the range */
		q_rng_bytes(s, b[i].qs, sizeof b[i].qs);
	}
}

void q3_K_fill(void *dst, size_t nb, float std, uint64_t *s)
{
	struct block_q3_K *b = dst;

	for (size_t i = 0; i < nb; i++) {
		memset(b[i].scales, 0, sizeof b[i].scales);
		for (int j = 0; j < 16; j++) {
			/* stored +32: scales +-(8..31) */
			int l = q_rng_next(s) & 1 ? q_rng_int(s, 40, 63) : q_rng_int(s, 1, 24);
			if (j < 8)
				b[i].scales[j] |= (uint8_t)(l & 0xf);
			else
				b[i].scales[j - 8] |= (uint8_t)((l & 0xf) << 4);
			b[i].scales[8 + j % 4] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
		}
		b[i].d = q_rng_scale(s, std * Q_SQRT12 / (8 * 19.5f));
		q_rng_bytes(s, b[i].hmask, sizeof b[i].hmask);
		q_rng_bytes(s, b[i].qs, sizeof b[i].qs);
	}
}

/* Q4_K/Q5_K 6-bit scale/min packing (inverse of q_scale_min_k4). */
static void pack_scale_min_k4(uint8_t *q, int j, int sc, int m)
{
	if (j < 4) {
		q[j] = (uint8_t)((q[j] & 0xc0) | sc);
		q[j + 4] = (uint8_t)((q[j + 4] & 0xc0) | m);
	} else {
		q[j + 4] = (uint8_t)((sc & 0xf) | (m & 0xf) << 4);
		q[j - 4] = (uint8_t)((q[j - 4] & 0x3f) | (sc >> 4) << 6);
		q[j] = (uint8_t)((q[j] & 0x3f) | (m >> 4) << 6);
	}
}

static void fill_q45_K(uint8_t *scales, uint16_t *d, uint16_t *dmin, int levels, float std,
		       uint64_t *s)
{
	float dd = std * Q_SQRT12 / (levels * 47.5f);        /* sc, m in 32..63 */

	memset(scales, 0, K_SCALE_SIZE);
	for (int j = 0; j < 8; j++)
		pack_scale_min_k4(scales, j, q_rng_int(s, 32, 63), q_rng_int(s, 32, 63));
	*d = q_rng_scale(s, dd);
	*dmin = q_f32_to_f16(dd * (levels - 1) * 0.5f);      /* centres q around 0 */
}

void q4_K_fill(void *dst, size_t nb, float std, uint64_t *s)
{
	struct block_q4_K *b = dst;

	for (size_t i = 0; i < nb; i++) {
		fill_q45_K(b[i].scales, &b[i].d, &b[i].dmin, 16, std, s);
		q_rng_bytes(s, b[i].qs, sizeof b[i].qs);
	}
}

void q5_K_fill(void *dst, size_t nb, float std, uint64_t *s)
{
	struct block_q5_K *b = dst;

	for (size_t i = 0; i < nb; i++) {
		fill_q45_K(b[i].scales, &b[i].d, &b[i].dmin, 32, std, s);
		q_rng_bytes(s, b[i].qh, sizeof b[i].qh);
		q_rng_bytes(s, b[i].qs, sizeof b[i].qs);
	}
}

void q6_K_fill(void *dst, size_t nb, float std, uint64_t *s)
{
	struct block_q6_K *b = dst;

	for (size_t i = 0; i < nb; i++) {
		for (int j = 0; j < 16; j++)
			b[i].scales[j] = (int8_t)(q_rng_next(s) & 1 ? q_rng_int(s, 20, 100)
								   : -q_rng_int(s, 20, 100));
		b[i].d = q_rng_scale(s, std * Q_SQRT12 / (64 * 60.0f));
		q_rng_bytes(s, b[i].ql, sizeof b[i].ql);
		q_rng_bytes(s, b[i].qh, sizeof b[i].qh);
	}
}
