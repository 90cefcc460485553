/*
 * llm/kernels/avx512/avx512_rows.h — the AVX-512 functions (F, BW, VL, DQ
 * and VNNI; contracts in llm/quant_isa.h) and quant_avx512_get(), the
 * descriptor that names them over the AVX2 one.
 *
 *   legacy.c  vec_dot/gemm rows of F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0
 *   kq.c      vec_dot/gemm rows of Q2_K, Q3_K, Q4_K, Q5_K, Q6_K
 *   iq.c      vec_dot rows of IQ4_NL, IQ4_XS
 *   tile.c    prefill tiles: weights repacked once per tile to bytes, then
 *             VNNI dot products against every token of the batch; the
 *             packed forms of Q4_0, Q8_0, Q4_K and Q6_K
 *   isa.c     the descriptor
 */
#ifndef LLM_KERNELS_AVX512_ROWS_H
#define LLM_KERNELS_AVX512_ROWS_H

#include "../../quant_isa.h"

#define AVX512_NEED (PLAT_CPU_AVX2 | PLAT_CPU_FMA | PLAT_CPU_F16C | PLAT_CPU_AVX512F | \
		     PLAT_CPU_AVX512BW | PLAT_CPU_AVX512DQ | PLAT_CPU_AVX512VL | \
		     PLAT_CPU_AVX512VNNI)

/* The AVX-512 descriptor (isa.c) for a CPU with AVX512_NEED, else NULL. */
const struct quant_isa *quant_avx512_get(uint32_t cpu_features);

float avx512_f32_vec_dot(size_t n, const void *w, const void *act);
float avx512_f16_vec_dot(size_t n, const void *w, const void *act);
float avx512_bf16_vec_dot(size_t n, const void *w, const void *act);

#define AVX512_ROW(T)                                                                    \
	float avx512_##T##_vec_dot(size_t n, const void *w, const void *act);            \
	void avx512_##T##_gemm(size_t n, const void *w, const void *act, size_t as,      \
			       float *out, size_t os, int nc);
AVX512_ROW(q4_0)
AVX512_ROW(q4_1)
AVX512_ROW(q5_0)
AVX512_ROW(q5_1)
AVX512_ROW(q8_0)
AVX512_ROW(q2_K)
AVX512_ROW(q3_K)
AVX512_ROW(q4_K)
AVX512_ROW(q5_K)
AVX512_ROW(q6_K)
float avx512_iq4_nl_vec_dot(size_t n, const void *w, const void *act);
float avx512_iq4_xs_vec_dot(size_t n, const void *w, const void *act);
void avx512_q4_0_rows(size_t n, const void *w, size_t w_stride, const void *act, float *out);

/* By type (tile.c): the prefill tiles, and the packed forms, with Q4_0's
 * through GFNI (PLAT_CPU_GFNI) or without. */
extern const struct quant_tile *const avx512_tile[GGML_TYPE_COUNT];
extern const struct quant_packed *const avx512_packed[GGML_TYPE_COUNT];
extern const struct quant_packed *const avx512_packed_gfni[GGML_TYPE_COUNT];

#endif
