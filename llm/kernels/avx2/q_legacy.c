/*
 * llm/kernels/avx2/q_legacy.c — AVX2 rows of the 32-element block types
 * (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) and the Q8_0 / Q8_1 activation quantizers.
 *
 * Each block's integer dot product is exact (as the scalar row's); the block
 * results are then accumulated in 8 float lanes with FMA instead of one
 * sequential float sum, so the row result differs from the scalar row only
 * by float rounding (bound in tests/unit/test_simd.c). The quantizers do the
 * scalar row's IEEE operations (max, divide, multiply, round to nearest even)
 * and give the same bytes.
 */
#include "avx2.h"
#include "avx2_rows.h"

/* max |x| over 32 floats */
static inline float amax32(const float *x)
{
	__m256 sign = _mm256_set1_ps(-0.0f), m;
	__m128 h;

	m = _mm256_andnot_ps(sign, _mm256_loadu_ps(x));
	_Pragma("GCC unroll 8") for (int k = 8; k < 32; k += 8)
		m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + k)));
	h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
	h = _mm_max_ps(h, _mm_movehl_ps(h, h));
	h = _mm_max_ss(h, _mm_movehdup_ps(h));
	return _mm_cvtss_f32(h);
}

/* 32 floats times id, rounded to nearest even, packed to int8 in order. */
static inline __m256i round32(const float *x, float id)
{
	__m256 s = _mm256_set1_ps(id);
	__m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), s));
	__m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), s));
	__m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), s));
	__m256i d = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), s));
	__m256i p = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));

	/* packs works per 128-bit lane: dwords come out as 0 2 4 6 1 3 5 7 */
	return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

static inline float quant8(const float *x, int8_t *q)
{
	float d = amax32(x) / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;

	_mm256_storeu_si256((__m256i *)q, round32(x, id));
	return d;
}

void avx2_q8_0_from_float(const float *src, void *dst, size_t n)
{
	struct block_q8_0 *b = dst;

	for (size_t i = 0; i < n / QK8_0; i++, src += QK8_0)
		b[i].d = q_f32_to_f16(quant8(src, b[i].qs));
}

void avx2_q8_1_from_float(const float *src, void *dst, size_t n)
{
	struct block_q8_1 *b = dst;

	for (size_t i = 0; i < n / QK8_1; i++, src += QK8_1) {
		float d = quant8(src, b[i].qs);
		__m256i q = _mm256_loadu_si256((const __m256i *)b[i].qs);
		int sum = avx2_hsum_i32(avx2_dot_i8(_mm256_set1_epi8(1), q));
		b[i].d = q_f32_to_f16(d);
		b[i].s = q_f32_to_f16((float)sum * d);
	}
}

/*
 * Each row is one always-inlined body over NC activation rows (1 for
 * vec_dot, QUANT_GEMM_COLS for gemm): a weight block is unpacked once and
 * used NC times, and every activation row sees exactly the float operations
 * vec_dot does, so gemm and vec_dot give identical bits.
 */
#define ACT(T, j, i) ((const struct T *)((const uint8_t *)act + (size_t)(j) * as) + (i))
#define INLINE static inline __attribute__((always_inline))

/* Scales of four consecutive blocks (f16 fields `stride` bytes apart). */
static inline __m128 f16x4(const void *p, size_t stride)
{
	const uint8_t *b = p;
	uint16_t h[4];

	_Pragma("GCC unroll 8") for (int k = 0; k < 4; k++)
		memcpy(&h[k], b + k * stride, 2);
	return _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)h));
}

/* Lane k of v in all 8 lanes. */
#define LANE(v, k) _mm256_broadcastss_ps(_mm_permute_ps(v, (k) * 0x55))

/* Symmetric types: signed quants q of a block against each row's Q8_0 block,
 * scaled by d (the product of the two block scales, as a float). Even and
 * odd blocks go to two accumulators (two FMA chains in flight). */
#define SYM_STEP(NC, UNPACK, i, h, DSET)                                              \
	do {                                                                          \
		__m256i q = UNPACK(i);                                                \
		__m256i aq = _mm256_sign_epi8(q, q);                                  \
		_Pragma("GCC unroll 8") for (int j = 0; j < NC; j++) {                \
			const struct block_q8_0 *y = ACT(block_q8_0, j, i);           \
			__m256i a = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)y->qs), q); \
			__m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(aq, a), _mm256_set1_epi16(1)); \
			acc[h][j] = _mm256_fmadd_ps(DSET, _mm256_cvtepi32_ps(p), acc[h][j]); \
		}                                                                     \
	} while (0)

/* The four blocks' scale products come from one conversion per side; the
 * products are the same floats as the one-block path's. */
#define SYM_BODY(NC, UNPACK)                                                          \
	__m256 acc[2][NC];                                                            \
	size_t nb = n / 32, i = 0;                                                    \
	_Pragma("GCC unroll 8") for (int j = 0; j < NC; j++)                          \
		acc[0][j] = acc[1][j] = _mm256_setzero_ps();                          \
	for (; i + 4 <= nb; i += 4) {                                                 \
		__m128 dw = f16x4(&x[i].d, sizeof x[0]), d4[NC];                      \
		_Pragma("GCC unroll 8") for (int j = 0; j < NC; j++)                  \
			d4[j] = _mm_mul_ps(dw, f16x4(&ACT(block_q8_0, j, i)->d, sizeof(struct block_q8_0))); \
		SYM_STEP(NC, UNPACK, i, 0, LANE(d4[j], 0));                           \
		SYM_STEP(NC, UNPACK, i + 1, 1, LANE(d4[j], 1));                       \
		SYM_STEP(NC, UNPACK, i + 2, 0, LANE(d4[j], 2));                       \
		SYM_STEP(NC, UNPACK, i + 3, 1, LANE(d4[j], 3));                       \
	}                                                                             \
	for (; i < nb; i++)                                                           \
		SYM_STEP(NC, UNPACK, i, i & 1,                                        \
			 _mm256_set1_ps(avx2_f16(x[i].d) * avx2_f16(ACT(block_q8_0, j, i)->d))); \
	_Pragma("GCC unroll 8") for (int j = 0; j < NC; j++)                                     \
		out[j * os] = avx2_hsum(_mm256_add_ps(acc[0][j], acc[1][j]))

/* Types with a min: unsigned quants against Q8_1 rows, plus m * s. */
#define MIN_STEP(NC, UNPACK, i, h)                                                    \
	do {                                                                          \
		__m256i q = UNPACK(i);                                                \
		float dw = avx2_f16(x[i].d), mw = avx2_f16(x[i].m);                   \
		_Pragma("GCC unroll 8") for (int j = 0; j < NC; j++) {                \
			const struct block_q8_1 *y = ACT(block_q8_1, j, i);           \
			__m256i a = _mm256_loadu_si256((const __m256i *)y->qs);       \
			acc[h][j] = _mm256_fmadd_ps(_mm256_set1_ps(dw * avx2_f16(y->d)), \
						    _mm256_cvtepi32_ps(avx2_dot_u8(q, a)), acc[h][j]); \
			ms[j] += mw * avx2_f16(y->s);                                 \
		}                                                                     \
	} while (0)

#define MIN_BODY(NC, UNPACK)                                                          \
	__m256 acc[2][NC];                                                            \
	float ms[NC];                                                                 \
	size_t nb = n / 32, i = 0;                                                    \
	_Pragma("GCC unroll 8") for (int j = 0; j < NC; j++) {                        \
		acc[0][j] = acc[1][j] = _mm256_setzero_ps();                          \
		ms[j] = 0;                                                            \
	}                                                                             \
	for (; i + 2 <= nb; i += 2) {                                                 \
		MIN_STEP(NC, UNPACK, i, 0);                                           \
		MIN_STEP(NC, UNPACK, i + 1, 1);                                       \
	}                                                                             \
	if (i < nb)                                                                   \
		MIN_STEP(NC, UNPACK, i, 0);                                           \
	_Pragma("GCC unroll 8") for (int j = 0; j < NC; j++)                          \
		out[j * os] = avx2_hsum(_mm256_add_ps(acc[0][j], acc[1][j])) + ms[j]

#define Q4_0_Q(i) _mm256_sub_epi8(avx2_nibbles(x[i].qs), _mm256_set1_epi8(8))
#define Q4_1_Q(i) avx2_nibbles(x[i].qs)
#define Q5_Q(i) _mm256_or_si256(avx2_nibbles(x[i].qs), avx2_bits_to_16(x[i].qh))
#define Q5_0_Q(i) _mm256_sub_epi8(Q5_Q(i), _mm256_set1_epi8(16))
#define Q8_0_Q(i) _mm256_loadu_si256((const __m256i *)x[i].qs)

/* vec_dot and gemm of type T from BODY(NC, UNPACK) */
#define ROWS(T, WT, BODY, UNPACK)                                                      \
	INLINE void T##_k(size_t n, const void *w, const void *act, size_t as, float *out, \
			  size_t os, int nc)                                           \
	{                                                                              \
		const struct WT *x = w;                                                \
		if (nc == 1) {                                                         \
			BODY(1, UNPACK);                                               \
		} else {                                                               \
			BODY(QUANT_GEMM_COLS, UNPACK);                                 \
		}                                                                      \
	}                                                                              \
	float avx2_##T##_vec_dot(size_t n, const void *w, const void *act)             \
	{                                                                              \
		float r;                                                               \
		T##_k(n, w, act, 0, &r, 0, 1);                                         \
		return r;                                                              \
	}                                                                              \
	void avx2_##T##_gemm(size_t n, const void *w, const void *act, size_t as, float *out, \
			     size_t os, int nc)                                        \
	{                                                                              \
		if (nc == QUANT_GEMM_COLS) {                                           \
			T##_k(n, w, act, as, out, os, QUANT_GEMM_COLS);                \
			return;                                                        \
		}                                                                      \
		for (int j = 0; j < nc; j++)                                           \
			T##_k(n, w, (const uint8_t *)act + (size_t)j * as, 0, out + (size_t)j * os, 0, 1); \
	}

ROWS(q4_0, block_q4_0, SYM_BODY, Q4_0_Q)
ROWS(q5_0, block_q5_0, SYM_BODY, Q5_0_Q)
ROWS(q8_0, block_q8_0, SYM_BODY, Q8_0_Q)
ROWS(q4_1, block_q4_1, MIN_BODY, Q4_1_Q)
ROWS(q5_1, block_q5_1, MIN_BODY, Q5_Q)
