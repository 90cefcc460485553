/*
 * llm/kernels/avx2/avx2_rows.h — the AVX2 functions (contracts in
 * llm/quant_isa.h) and quant_avx2_get(), the descriptor that names them.
 */
#ifndef LLM_KERNELS_AVX2_ROWS_H
#define LLM_KERNELS_AVX2_ROWS_H

#include "../../quant_isa.h"

/* The AVX2 descriptor (isa.c) for a CPU with AVX2, FMA and F16C, else NULL. */
const struct quant_isa *quant_avx2_get(uint32_t cpu_features);

float avx2_f32_vec_dot(size_t n, const void *w, const void *act);
float avx2_f16_vec_dot(size_t n, const void *w, const void *act);
float avx2_bf16_vec_dot(size_t n, const void *w, const void *act);
void avx2_f16_to_float(const void *src, float *dst, size_t n);
void avx2_bf16_to_float(const void *src, float *dst, size_t n);

void avx2_q8_0_from_float(const float *src, void *dst, size_t n);
void avx2_q8_1_from_float(const float *src, void *dst, size_t n);
void avx2_q8_K_from_float(const float *src, void *dst, size_t n);

float avx2_q4_0_vec_dot(size_t n, const void *w, const void *act);
float avx2_q4_1_vec_dot(size_t n, const void *w, const void *act);
float avx2_q5_0_vec_dot(size_t n, const void *w, const void *act);
float avx2_q5_1_vec_dot(size_t n, const void *w, const void *act);
float avx2_q8_0_vec_dot(size_t n, const void *w, const void *act);
float avx2_q2_K_vec_dot(size_t n, const void *w, const void *act);
float avx2_q3_K_vec_dot(size_t n, const void *w, const void *act);
float avx2_q4_K_vec_dot(size_t n, const void *w, const void *act);
float avx2_q5_K_vec_dot(size_t n, const void *w, const void *act);
float avx2_q6_K_vec_dot(size_t n, const void *w, const void *act);
float avx2_iq4_nl_vec_dot(size_t n, const void *w, const void *act);
float avx2_iq4_xs_vec_dot(size_t n, const void *w, const void *act);

#define AVX2_GEMM(T) void avx2_##T##_gemm(size_t n, const void *w, const void *act, size_t as, \
					  float *out, size_t os, int nc)
AVX2_GEMM(q4_0);
AVX2_GEMM(q4_1);
AVX2_GEMM(q5_0);
AVX2_GEMM(q5_1);
AVX2_GEMM(q8_0);
AVX2_GEMM(q2_K);
AVX2_GEMM(q3_K);
AVX2_GEMM(q4_K);
AVX2_GEMM(q5_K);
AVX2_GEMM(q6_K);

/* By type (tile.c; Q8_0's in tile_q8.c): the prefill tiles of Q4_0, Q8_0
 * and the K-quants, and the packed forms of Q4_0, Q8_0, Q4_K and Q6_K. */
extern const struct quant_tile *const avx2_tile[GGML_TYPE_COUNT];
extern const struct quant_packed *const avx2_packed[GGML_TYPE_COUNT];

#endif
