/*
 * llm/kernels/scalar/scalar.h — the scalar reference rows of the quant table
 * (llm/quant.c) and the small helpers they share, which the SIMD
 * directories use too.
 *
 * These are the definition of "correct": to_float matches ggml's to_float bit
 * for bit (same operations in the same order), vec_dot is the exact integer
 * dot product of the quants followed by the block scales, and every SIMD row
 * is tested against them.
 */
#ifndef LLM_KERNELS_SCALAR_H
#define LLM_KERNELS_SCALAR_H

#include "../../fp_exact.h"
#include "../../quant_blocks.h"
#include "../../quant_isa.h"

static inline uint32_t q_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static inline float q_bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* IEEE 754 binary16 -> binary32, exact (subnormals normalized, NaN payload kept). */
static inline float q_f16(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	int e = -1;

	if (exp == 0x1f)
		return q_bits_f32(sign | 0x7f800000 | (man << 13));
	if (exp)
		return q_bits_f32(sign | ((exp + 112) << 23) | (man << 13));
	if (!man)
		return q_bits_f32(sign);
	do {
		e++;
		man <<= 1;
	} while (!(man & 0x400));
	return q_bits_f32(sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13));
}

/* Round to nearest (ties to even) for |x| <= 2^22: adding 1.5 * 2^23 leaves
 * the rounded integer in the low mantissa bits. */
static inline int q_round(float x)
{
	uint32_t u = q_f32_bits(x + 12582912.0f);

	return (int)(u & 0x7fffff) - 0x400000;
}

static inline float q_fabs(float x)
{
	return q_bits_f32(q_f32_bits(x) & 0x7fffffff);
}

uint16_t q_f32_to_f16(float f);

/* binary32 -> bfloat16, round to nearest even; NaN stays NaN (quiet). */
static inline uint16_t q_f32_to_bf16(float f)
{
	uint32_t u = q_f32_bits(f);

	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

/*
 * Random blocks (the rows' fill: quant_fill_random). A splitmix64 stream;
 * quants are uniform, so a step d over W levels has standard deviation
 * d W / sqrt(12), and each type picks d (and its sub-block scales) so that
 * the dequantized values come out with the standard deviation asked for.
 */
#define Q_SQRT12 3.4641016f

static inline uint64_t q_rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline float q_rng_unit(uint64_t *s) /* [0, 1) */
{
	return (float)(q_rng_next(s) >> 40) * (1.0f / 16777216.0f);
}

static inline int q_rng_int(uint64_t *s, int lo, int hi) /* [lo, hi] */
{
	return lo + (int)(q_rng_next(s) % (uint64_t)(hi - lo + 1));
}

static inline void q_rng_bytes(uint64_t *s, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t r = q_rng_next(s);
		memcpy(p + i, &r, n - i < 8 ? n - i : 8);
	}
}

/* A block scale near `d`, jittered by up to +-25%. */
static inline uint16_t q_rng_scale(uint64_t *s, float d)
{
	return q_f32_to_f16(d * (0.75f + 0.5f * q_rng_unit(s)));
}

/* The same with a random sign: symmetric types store q - 2^(b-1), whose mean
 * is -1/2; flipping half the scales cancels that bias. */
static inline uint16_t q_rng_sscale(uint64_t *s, float d)
{
	return q_rng_scale(s, q_rng_next(s) & 1 ? d : -d);
}

/* F32, F16, BF16 weights against F32 activations (q_float.c). */
void q_f32_to_float(const void *src, float *dst, size_t n);
void q_f32_from_float(const float *src, void *dst, size_t n);
float q_f32_vec_dot(size_t n, const void *w, const void *act);
void q_f16_to_float(const void *src, float *dst, size_t n);
void q_f16_from_float(const float *src, void *dst, size_t n);
float q_f16_vec_dot(size_t n, const void *w, const void *act);
void q_bf16_to_float(const void *src, float *dst, size_t n);
void q_bf16_from_float(const float *src, void *dst, size_t n);
float q_bf16_vec_dot(size_t n, const void *w, const void *act);

/* 32-element block types (q_legacy.c). */
void q4_0_to_float(const void *src, float *dst, size_t n);
float q4_0_vec_dot(size_t n, const void *w, const void *act);
void q4_0_fill(void *dst, size_t nb, float std, uint64_t *s);
void q4_1_to_float(const void *src, float *dst, size_t n);
float q4_1_vec_dot(size_t n, const void *w, const void *act);
void q4_1_fill(void *dst, size_t nb, float std, uint64_t *s);
void q5_0_to_float(const void *src, float *dst, size_t n);
float q5_0_vec_dot(size_t n, const void *w, const void *act);
void q5_0_fill(void *dst, size_t nb, float std, uint64_t *s);
void q5_1_to_float(const void *src, float *dst, size_t n);
float q5_1_vec_dot(size_t n, const void *w, const void *act);
void q5_1_fill(void *dst, size_t nb, float std, uint64_t *s);
void q8_0_to_float(const void *src, float *dst, size_t n);
void q8_0_from_float(const float *src, void *dst, size_t n);
float q8_0_vec_dot(size_t n, const void *w, const void *act);
void q8_0_fill(void *dst, size_t nb, float std, uint64_t *s);
void q8_1_to_float(const void *src, float *dst, size_t n);
void q8_1_from_float(const float *src, void *dst, size_t n);

/* 256-element super-block types (q_k.c). */
void q2_K_to_float(const void *src, float *dst, size_t n);
float q2_K_vec_dot(size_t n, const void *w, const void *act);
void q2_K_fill(void *dst, size_t nb, float std, uint64_t *s);
void q3_K_to_float(const void *src, float *dst, size_t n);
float q3_K_vec_dot(size_t n, const void *w, const void *act);
void q3_K_fill(void *dst, size_t nb, float std, uint64_t *s);
void q4_K_to_float(const void *src, float *dst, size_t n);
float q4_K_vec_dot(size_t n, const void *w, const void *act);
void q4_K_fill(void *dst, size_t nb, float std, uint64_t *s);
void q5_K_to_float(const void *src, float *dst, size_t n);
float q5_K_vec_dot(size_t n, const void *w, const void *act);
void q5_K_fill(void *dst, size_t nb, float std, uint64_t *s);
void q6_K_to_float(const void *src, float *dst, size_t n);
float q6_K_vec_dot(size_t n, const void *w, const void *act);
void q6_K_fill(void *dst, size_t nb, float std, uint64_t *s);
void q8_K_to_float(const void *src, float *dst, size_t n);
void q8_K_from_float(const float *src, void *dst, size_t n);

/* The i-quants with 4-bit indices into a non-linear table (q_iq.c). */
extern const int8_t q_iq4nl_values[16];
void iq4_nl_to_float(const void *src, float *dst, size_t n);
float iq4_nl_vec_dot(size_t n, const void *w, const void *act);
void iq4_nl_fill(void *dst, size_t nb, float std, uint64_t *s);
void iq4_xs_to_float(const void *src, float *dst, size_t n);
float iq4_xs_vec_dot(size_t n, const void *w, const void *act);
void iq4_xs_fill(void *dst, size_t nb, float std, uint64_t *s);

/* IQ4_XS: the 6-bit scale of sub-block s (0..7), stored + 32. */
static inline int q_iq4_xs_scale(const struct block_iq4_xs *b, int s)
{
	return ((b->scales_l[s / 2] >> (4 * (s % 2))) & 0xf) | ((b->scales_h >> (2 * s)) & 3) << 4;
}

/* Q4_K/Q5_K 6-bit scales and mins (ggml get_scale_min_k4): sub-blocks 0..3 in
 * the low 6 bits of bytes 0..3 (scales) and 4..7 (mins); 4..7 take their low
 * nibbles from bytes 8..11 and their top 2 bits from the top of bytes 0..7. */
static inline void q_scale_min_k4(const uint8_t *q, int j, int *sc, int *m)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4);
		*m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
	}
}

/* The repacked prefill tile in a worker's scratch, the form of every ISA's
 * tiles (llm/kernels/avx512/tile.c): bytes [n / 4][16 rows][4], then the
 * sub-block scales ws and mins wm, [n / G][16 rows] each; then sd, [n /
 * 256][2][16 rows], for tiles that keep a K-quant's sub-block scales as
 * integers and apply its superblock's d (and dmin) once (the AVX2 Q4_K and
 * Q6_K tiles: llm/kernels/avx2/tile.c). The whole takes at most 24.5 n
 * bytes (G = 16), within quant_tile_scratch(n). */
struct q_rtile {
	uint8_t *q;
	float *ws, *wm;
	float *sd;
};

static inline struct q_rtile q_rtile_at(void *scratch, size_t n, int G)
{
	struct q_rtile t;

	t.q = scratch;
	t.ws = (float *)(t.q + 16 * n);
	t.wm = t.ws + n / (size_t)G * 16;
	t.sd = t.wm + n / (size_t)G * 16;
	return t;
}

/* Prep rows of the prefill tiles (tile_prep.c), by weight type: Q4_0 and
 * Q8_0 (zero points 8, 128; Q8_0 activations), the K-quants with mins
 * (sub-blocks of 32: Q4_K, Q5_K; of 16: Q2_K), Q6_K and Q3_K (zero points 32,
 * 4; sub-blocks of 16). */
void tile_prep_q4_0(size_t n, const void *act, float *prep);
void tile_prep_q8_0(size_t n, const void *act, float *prep);
void tile_prep_kmins32(size_t n, const void *act, float *prep);
void tile_prep_kmins16(size_t n, const void *act, float *prep);
void tile_prep_q6_K(size_t n, const void *act, float *prep);
void tile_prep_q3_K(size_t n, const void *act, float *prep);

/* The packed layouts (pack.c; llm/quant_isa.h struct quant_packed): one group
 * of 16 rows of n elements, in place; tmp holds the group's bytes. */
void pk_pack_q4_0(size_t n, void *group, void *tmp);
void pk_unpack_q4_0(size_t n, void *group, void *tmp);
void pk_pack_q8_0(size_t n, void *group, void *tmp);
void pk_unpack_q8_0(size_t n, void *group, void *tmp);
void pk_pack_q4_K(size_t n, void *group, void *tmp);
void pk_unpack_q4_K(size_t n, void *group, void *tmp);
void pk_pack_q6_K(size_t n, void *group, void *tmp);
void pk_unpack_q6_K(size_t n, void *group, void *tmp);

#endif
