/*
 * llm/kernels/avx2/q_k.c — AVX2 rows of the K-quants (Q2_K..Q6_K) and the
 * Q8_K activation quantizer.
 *
 * Bit layouts as in llm/kernels/scalar/q_k.c (ggml-common.h block_q*_K).
 * Per super-block: the quants of 32 elements are unpacked to bytes in
 * element order, multiplied by the Q8_K activations with maddubs (pairs of
 * products fit int16: |q| <= 63, |a| <= 127), then by the sub-block scales
 * with madd into int32 lanes. The whole super-block sum is exact; only the
 * float accumulation across super-blocks differs from the scalar row.
 */
#include "avx2.h"
#include "avx2_rows.h"

/* int16 scale a for the low 128-bit lane (elements 0..15), b for the high. */
static inline __m256i scale2(int a, int b)
{
	return _mm256_set_m128i(_mm_set1_epi16((short)b), _mm_set1_epi16((short)a));
}

static inline __m256i ld(const void *p)
{
	return _mm256_loadu_si256((const __m256i *)p);
}

/* sum_g m[g] * bsums[g] for the 16 sums of 16 activations. Scalar: the
 * mins were just written as int16 one by one, and a vector load of them
 * would stall on store forwarding. */
static inline int min_dot16(const int16_t *m, const int16_t *bsums)
{
	int s = 0;

	_Pragma("GCC unroll 16") for (int g = 0; g < 16; g++)
		s += m[g] * bsums[g];
	return s;
}

/* Q3_K's 16 6-bit scales (stored + 32), as unpack_q3_K in the scalar row. */
static inline void q3_scales(const uint8_t *b, int16_t *sc)
{
	_Pragma("GCC unroll 16") for (int s = 0; s < 16; s++) {
		int low = s < 8 ? b[s] & 0xf : b[s - 8] >> 4;
		int high = (b[8 + s % 4] >> (2 * (s / 4))) & 3;
		sc[s] = (int16_t)((low | high << 4) - 32);
	}
}

/* ggml get_scale_min_k4 for all 8 sub-blocks. */
static inline void k4_scales(const uint8_t *q, int16_t *sc, int16_t *m)
{
	_Pragma("GCC unroll 16") for (int j = 0; j < 4; j++) {
		sc[j] = q[j] & 63;
		m[j] = q[j + 4] & 63;
		sc[j + 4] = (int16_t)((q[j + 8] & 0xf) | ((q[j] >> 6) << 4));
		m[j + 4] = (int16_t)((q[j + 8] >> 4) | ((q[j + 4] >> 6) << 4));
	}
}

/*
 * vec_dot rows: unpack and multiply 32 elements at a time. Per super-block,
 * lane l of the int32 sum gets the same products as in the gemm body below.
 */
float avx2_q2_K_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q2_K *x = w;
	const struct block_q8_K *y = act;
	__m256 acc = _mm256_setzero_ps();
	float ms = 0;

	for (size_t i = 0; i < n / QK_K; i++) {
		const int8_t *a = y[i].qs;
		int16_t sc[16], m[16];
		__m256i isum = _mm256_setzero_si256();

		_Pragma("GCC unroll 16") for (int s = 0; s < 16; s++) {
			sc[s] = x[i].scales[s] & 0xf;
			m[s] = x[i].scales[s] >> 4;
		}
		_Pragma("GCC unroll 16") for (int h = 0; h < 2; h++) {
			__m256i q = ld(x[i].qs + 32 * h);
			_Pragma("GCC unroll 16") for (int j = 0; j < 4; j++, a += 32) {
				__m256i qj = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), _mm256_set1_epi8(3));
				__m256i p = _mm256_maddubs_epi16(qj, ld(a));
				int s = 8 * h + 2 * j;
				isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scale2(sc[s], sc[s + 1])));
			}
		}
		float da = y[i].d;
		acc = _mm256_fmadd_ps(_mm256_set1_ps(avx2_f16(x[i].d) * da), _mm256_cvtepi32_ps(isum), acc);
		ms += avx2_f16(x[i].dmin) * da * (float)min_dot16(m, y[i].bsums);
	}
	return avx2_hsum(acc) - ms;
}

float avx2_q3_K_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q3_K *x = w;
	const struct block_q8_K *y = act;
	const __m256i three = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);
	__m256 acc = _mm256_setzero_ps();

	for (size_t i = 0; i < n / QK_K; i++) {
		const int8_t *a = y[i].qs;
		int16_t sc[16];
		__m256i isum = _mm256_setzero_si256(), hm = ld(x[i].hmask);

		q3_scales(x[i].scales, sc);
		_Pragma("GCC unroll 16") for (int h = 0; h < 2; h++) {
			__m256i q = ld(x[i].qs + 32 * h);
			_Pragma("GCC unroll 16") for (int j = 0; j < 4; j++, a += 32) {
				__m256i bit = _mm256_set1_epi8((char)(1 << (4 * h + j)));
				__m256i hb = _mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), bit);
				__m256i qu = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), three);
				__m256i av = ld(a), p;
				int s = 8 * h + 2 * j;
				/* q = lo + 4 hbit - 4, in [-4, 3] */
				qu = _mm256_or_si256(qu, _mm256_and_si256(hb, four));
				p = _mm256_sub_epi16(_mm256_maddubs_epi16(qu, av), _mm256_maddubs_epi16(four, av));
				isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scale2(sc[s], sc[s + 1])));
			}
		}
		acc = _mm256_fmadd_ps(_mm256_set1_ps(avx2_f16(x[i].d) * y[i].d),
				      _mm256_cvtepi32_ps(isum), acc);
	}
	return avx2_hsum(acc);
}

/* Min term of Q4_K/Q5_K: mins of sub-blocks of 32 against bsums of 16. */
static inline int k4_min_dot(const int16_t *m, const int16_t *bsums)
{
	int s = 0;

	_Pragma("GCC unroll 16") for (int g = 0; g < 8; g++)
		s += m[g] * (bsums[2 * g] + bsums[2 * g + 1]);
	return s;
}

float avx2_q4_K_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q4_K *x = w;
	const struct block_q8_K *y = act;
	const __m256i low = _mm256_set1_epi8(0xf);
	__m256 acc = _mm256_setzero_ps();
	float ms = 0;

	for (size_t i = 0; i < n / QK_K; i++) {
		const int8_t *a = y[i].qs;
		int16_t sc[8], m[8];
		__m256i isum = _mm256_setzero_si256();

		k4_scales(x[i].scales, sc, m);
		_Pragma("GCC unroll 16") for (int c = 0; c < 4; c++, a += 64) {
			__m256i q = ld(x[i].qs + 32 * c);
			__m256i lo = _mm256_and_si256(q, low);
			__m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low);
			__m256i p0 = _mm256_maddubs_epi16(lo, ld(a));
			__m256i p1 = _mm256_maddubs_epi16(hi, ld(a + 32));
			p0 = _mm256_madd_epi16(p0, _mm256_set1_epi16(sc[2 * c]));
			p1 = _mm256_madd_epi16(p1, _mm256_set1_epi16(sc[2 * c + 1]));
			isum = _mm256_add_epi32(isum, _mm256_add_epi32(p0, p1));
		}
		float da = y[i].d;
		acc = _mm256_fmadd_ps(_mm256_set1_ps(avx2_f16(x[i].d) * da), _mm256_cvtepi32_ps(isum), acc);
		ms += avx2_f16(x[i].dmin) * da * (float)k4_min_dot(m, y[i].bsums);
	}
	return avx2_hsum(acc) - ms;
}

float avx2_q5_K_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q5_K *x = w;
	const struct block_q8_K *y = act;
	const __m256i low = _mm256_set1_epi8(0xf), b4 = _mm256_set1_epi8(0x10);
	__m256 acc = _mm256_setzero_ps();
	float ms = 0;

	for (size_t i = 0; i < n / QK_K; i++) {
		const int8_t *a = y[i].qs;
		int16_t sc[8], m[8];
		__m256i isum = _mm256_setzero_si256(), qh = ld(x[i].qh);

		k4_scales(x[i].scales, sc, m);
		_Pragma("GCC unroll 16") for (int c = 0; c < 4; c++, a += 64) {
			__m256i q = ld(x[i].qs + 32 * c);
			__m256i m0 = _mm256_set1_epi8((char)(1 << (2 * c)));
			__m256i m1 = _mm256_set1_epi8((char)(2 << (2 * c)));
			__m256i h0 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, m0), m0), b4);
			__m256i h1 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, m1), m1), b4);
			__m256i lo = _mm256_or_si256(_mm256_and_si256(q, low), h0);
			__m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), low), h1);
			__m256i p0 = _mm256_maddubs_epi16(lo, ld(a));
			__m256i p1 = _mm256_maddubs_epi16(hi, ld(a + 32));
			p0 = _mm256_madd_epi16(p0, _mm256_set1_epi16(sc[2 * c]));
			p1 = _mm256_madd_epi16(p1, _mm256_set1_epi16(sc[2 * c + 1]));
			isum = _mm256_add_epi32(isum, _mm256_add_epi32(p0, p1));
		}
		float da = y[i].d;
		acc = _mm256_fmadd_ps(_mm256_set1_ps(avx2_f16(x[i].d) * da), _mm256_cvtepi32_ps(isum), acc);
		ms += avx2_f16(x[i].dmin) * da * (float)k4_min_dot(m, y[i].bsums);
	}
	return avx2_hsum(acc) - ms;
}

float avx2_q6_K_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q6_K *x = w;
	const struct block_q8_K *y = act;
	const __m256i low = _mm256_set1_epi8(0xf), three = _mm256_set1_epi8(3);
	const __m256i k32 = _mm256_set1_epi8(32);
	__m256 acc = _mm256_setzero_ps();

	for (size_t i = 0; i < n / QK_K; i++) {
		const int8_t *a = y[i].qs;
		const int8_t *sc = x[i].scales;
		__m256i isum = _mm256_setzero_si256();

		_Pragma("GCC unroll 16") for (int h = 0; h < 2; h++) {
			__m256i l0 = ld(x[i].ql + 64 * h), l1 = ld(x[i].ql + 64 * h + 32);
			__m256i qh = ld(x[i].qh + 32 * h);
			_Pragma("GCC unroll 16") for (int j = 0; j < 4; j++, a += 32) {
				__m256i l = j & 1 ? l1 : l0;
				__m256i lo = j >= 2 ? _mm256_srli_epi16(l, 4) : l;
				__m256i hi = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), three);
				__m256i q = _mm256_or_si256(_mm256_and_si256(lo, low), _mm256_slli_epi16(hi, 4));
				__m256i av = ld(a);
				/* (q - 32) a = q a - 32 a */
				__m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(q, av),
							     _mm256_maddubs_epi16(k32, av));
				int s = 8 * h + 2 * j;
				isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scale2(sc[s], sc[s + 1])));
			}
		}
		acc = _mm256_fmadd_ps(_mm256_set1_ps(avx2_f16(x[i].d) * y[i].d),
				      _mm256_cvtepi32_ps(isum), acc);
	}
	return avx2_hsum(acc);
}

/*
 * Every K-quant row is one body: a super-block is unpacked once into eight
 * groups of 32 quant bytes (unsigned; off is subtracted after the multiply),
 * eight madd scale vectors (the int16 scale of each 16 elements) and, for
 * types with mins, the 16 int16 mins of each 16 elements; then each of NC
 * activation rows (1: vec_dot, QUANT_GEMM_COLS: gemm) takes the same integer
 * and float steps, so gemm and vec_dot give identical bits.
 */
struct kprep {
	__m256i q[8], sc[8];
	int16_t m[16];
	int off;
};

static inline void prep_q2_K(const struct block_q2_K *b, struct kprep *k)
{
	_Pragma("GCC unroll 16") for (int h = 0; h < 2; h++) {
		__m256i q = ld(b->qs + 32 * h);
		_Pragma("GCC unroll 16") for (int j = 0; j < 4; j++) {
			int s = 8 * h + 2 * j;
			k->q[4 * h + j] = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), _mm256_set1_epi8(3));
			k->sc[4 * h + j] = scale2(b->scales[s] & 0xf, b->scales[s + 1] & 0xf);
		}
	}
	_Pragma("GCC unroll 16") for (int s = 0; s < 16; s++)
		k->m[s] = b->scales[s] >> 4;
	k->off = 0;
}

static inline void prep_q3_K(const struct block_q3_K *b, struct kprep *k)
{
	__m256i hm = ld(b->hmask);
	int16_t sc[16];

	q3_scales(b->scales, sc);
	_Pragma("GCC unroll 16") for (int h = 0; h < 2; h++) {
		__m256i q = ld(b->qs + 32 * h);
		_Pragma("GCC unroll 16") for (int j = 0; j < 4; j++) {
			__m256i bit = _mm256_set1_epi8((char)(1 << (4 * h + j)));
			__m256i hb = _mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), bit);
			__m256i lo = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), _mm256_set1_epi8(3));
			int s = 8 * h + 2 * j;
			/* lo + 4 hbit; the quant is that minus 4, in [-4, 3] */
			k->q[4 * h + j] = _mm256_or_si256(lo, _mm256_and_si256(hb, _mm256_set1_epi8(4)));
			k->sc[4 * h + j] = scale2(sc[s], sc[s + 1]);
		}
	}
	k->off = 4;
}

/* Q4_K/Q5_K scales per 32 elements; mins spread to each 16 (bsums). */
static inline void prep_k4_scales(const uint8_t *scales, struct kprep *k)
{
	int16_t sc[8], m[8];

	k4_scales(scales, sc, m);
	_Pragma("GCC unroll 16") for (int g = 0; g < 8; g++) {
		k->sc[g] = _mm256_set1_epi16(sc[g]);
		k->m[2 * g] = k->m[2 * g + 1] = m[g];
	}
	k->off = 0;
}

static inline void prep_q4_K(const struct block_q4_K *b, struct kprep *k)
{
	const __m256i low = _mm256_set1_epi8(0xf);

	prep_k4_scales(b->scales, k);
	_Pragma("GCC unroll 16") for (int c = 0; c < 4; c++) {
		__m256i q = ld(b->qs + 32 * c);
		k->q[2 * c] = _mm256_and_si256(q, low);
		k->q[2 * c + 1] = _mm256_and_si256(_mm256_srli_epi16(q, 4), low);
	}
}

static inline void prep_q5_K(const struct block_q5_K *b, struct kprep *k)
{
	const __m256i low = _mm256_set1_epi8(0xf), b4 = _mm256_set1_epi8(0x10);
	__m256i qh = ld(b->qh);

	prep_k4_scales(b->scales, k);
	_Pragma("GCC unroll 16") for (int c = 0; c < 4; c++) {
		__m256i q = ld(b->qs + 32 * c);
		__m256i m0 = _mm256_set1_epi8((char)(1 << (2 * c)));
		__m256i m1 = _mm256_set1_epi8((char)(2 << (2 * c)));
		__m256i h0 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, m0), m0), b4);
		__m256i h1 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, m1), m1), b4);
		k->q[2 * c] = _mm256_or_si256(_mm256_and_si256(q, low), h0);
		k->q[2 * c + 1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), low), h1);
	}
}

static inline void prep_q6_K(const struct block_q6_K *b, struct kprep *k)
{
	const __m256i low = _mm256_set1_epi8(0xf), three = _mm256_set1_epi8(3);

	_Pragma("GCC unroll 16") for (int h = 0; h < 2; h++) {
		__m256i l0 = ld(b->ql + 64 * h), l1 = ld(b->ql + 64 * h + 32);
		__m256i qh = ld(b->qh + 32 * h);
		_Pragma("GCC unroll 16") for (int j = 0; j < 4; j++) {
			__m256i l = j & 1 ? l1 : l0;
			__m256i lo = j >= 2 ? _mm256_srli_epi16(l, 4) : l;
			__m256i hi = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), three);
			int s = 8 * h + 2 * j;
			k->q[4 * h + j] = _mm256_or_si256(_mm256_and_si256(lo, low), _mm256_slli_epi16(hi, 4));
			k->sc[4 * h + j] = scale2(b->scales[s], b->scales[s + 1]);
		}
	}
	k->off = 32;
}

/* Integer sum of one prepared super-block against one Q8_K block, in 8
 * lanes. maddubs pairs fit int16: q <= 63, |a| <= 127; the offset's pairs
 * are subtracted in int16 (|(q - off) a| pair sums <= 2 * 32 * 127). */
static inline __m256i kdot(const struct kprep *k, const int8_t *a)
{
	__m256i isum = _mm256_setzero_si256(), off = _mm256_set1_epi8((char)k->off);

	_Pragma("GCC unroll 16") for (int g = 0; g < 8; g++) {
		__m256i av = ld(a + 32 * g);
		__m256i p = _mm256_maddubs_epi16(k->q[g], av);
		if (k->off)
			p = _mm256_sub_epi16(p, _mm256_maddubs_epi16(off, av));
		isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, k->sc[g]));
	}
	return isum;
}

#define INLINE static inline __attribute__((always_inline))

#define K_BODY(NC, T, HAS_MIN, DMIN)                                                    \
	const struct block_##T *x = w;                                                 \
	__m256 acc[NC];                                                                \
	float ms[NC];                                                                  \
	struct kprep k;                                                                \
	_Pragma("GCC unroll 16") for (int j = 0; j < NC; j++) {                        \
		acc[j] = _mm256_setzero_ps();                                          \
		ms[j] = 0;                                                             \
	}                                                                              \
	for (size_t i = 0; i < n / QK_K; i++) {                                        \
		float dw = avx2_f16(x[i].d), dm = avx2_f16(x[i].DMIN);                 \
		prep_##T(&x[i], &k);                                                   \
		_Pragma("GCC unroll 16") for (int j = 0; j < NC; j++) {                \
			const struct block_q8_K *y =                                   \
				(const struct block_q8_K *)((const uint8_t *)act + (size_t)j * as) + i; \
			acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(dw * y->d),            \
						 _mm256_cvtepi32_ps(kdot(&k, y->qs)), acc[j]); \
			if (HAS_MIN)                                                   \
				ms[j] += dm * y->d * (float)min_dot16(k.m, y->bsums);  \
		}                                                                      \
	}                                                                              \
	_Pragma("GCC unroll 16") for (int j = 0; j < NC; j++)                          \
		out[j * os] = avx2_hsum(acc[j]) - ms[j]

#define K_ROWS(T, HAS_MIN, DMIN)                                                        \
	void avx2_##T##_gemm(size_t n, const void *w, const void *act, size_t as, float *out, \
			     size_t os, int nc)                                         \
	{                                                                               \
		if (nc == QUANT_GEMM_COLS) {                                            \
			K_BODY(QUANT_GEMM_COLS, T, HAS_MIN, DMIN);                      \
			return;                                                         \
		}                                                                       \
		for (int j = 0; j < nc; j++)                                            \
			out[(size_t)j * os] = avx2_##T##_vec_dot(n, w, (const uint8_t *)act + (size_t)j * as); \
	}

K_ROWS(q2_K, true, dmin)
K_ROWS(q3_K, false, d)
K_ROWS(q4_K, true, dmin)
K_ROWS(q5_K, true, dmin)
K_ROWS(q6_K, false, d)

void avx2_q8_K_from_float(const float *src, void *dst, size_t n)
{
	struct block_q8_K *b = dst;
	const __m256 sign = _mm256_set1_ps(-0.0f);
	const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);

	for (size_t i = 0; i < n / QK_K; i++, src += QK_K) {
		__m256 m = _mm256_setzero_ps(), s;
		float amax, id;
		__m128 h;

		for (int k = 0; k < QK_K; k += 8)
			m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(src + k)));
		h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
		h = _mm_max_ps(h, _mm_movehl_ps(h, h));
		amax = _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
		b[i].d = amax / 127.0f;
		id = amax != 0.0f ? 127.0f / amax : 0.0f;
		s = _mm256_set1_ps(id);
		for (int k = 0; k < QK_K; k += 32) {
			__m256i v[4], p;
			_Pragma("GCC unroll 16") for (int r = 0; r < 4; r++)
				v[r] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(src + k + 8 * r), s));
			p = _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
			p = _mm256_max_epi8(_mm256_permutevar8x32_epi32(p, perm), _mm256_set1_epi8(-127));
			_mm256_storeu_si256((__m256i *)(b[i].qs + k), p);
			/* sums of each 16: byte sums of 8 (biased to unsigned) in 4 u64 lanes */
			__m256i sad = _mm256_sad_epu8(_mm256_xor_si256(p, _mm256_set1_epi8((char)0x80)),
						      _mm256_setzero_si256());
			int64_t t[4];
			_mm256_storeu_si256((__m256i *)t, sad);
			b[i].bsums[k / 16] = (int16_t)(t[0] + t[1] - 2048);
			b[i].bsums[k / 16 + 1] = (int16_t)(t[2] + t[3] - 2048);
		}
	}
}
