/*
 * llm/kernels/neon/neon_rows.h — the NEON rows (Advanced SIMD, every
 * AArch64 CPU) and the dot-product rows (SDOT, Armv8.2 FEAT_DotProd), and
 * quant_neon_get(), the descriptor of the best set the CPU features allow.
 *
 * The row bodies are written once (rows.inc) and compiled twice: neon.c with
 * the Armv8.0 widening-multiply int8 dot, neon_dot.c with SDOT. Both give
 * the same integers, so both are checked against the scalar rows the same
 * way (llm/selftest.c).
 */
#ifndef LLM_KERNELS_NEON_ROWS_H
#define LLM_KERNELS_NEON_ROWS_H

#include "../../quant_isa.h"

/* The NEON descriptor (isa.c): the SDOT rows where the CPU has DOTPROD, the
 * plain ones elsewhere; NULL without NEON. */
const struct quant_isa *quant_neon_get(uint32_t cpu_features);

#define NEON_ROW_LIST(P)                                                           \
	float P##_f32_vec_dot(size_t n, const void *w, const void *act);          \
	float P##_f16_vec_dot(size_t n, const void *w, const void *act);          \
	float P##_bf16_vec_dot(size_t n, const void *w, const void *act);         \
	void P##_q8_0_from_float(const float *src, void *dst, size_t n);          \
	void P##_q8_1_from_float(const float *src, void *dst, size_t n);          \
	void P##_q8_K_from_float(const float *src, void *dst, size_t n);          \
	float P##_q4_0_vec_dot(size_t n, const void *w, const void *act);         \
	float P##_q4_1_vec_dot(size_t n, const void *w, const void *act);         \
	float P##_q5_0_vec_dot(size_t n, const void *w, const void *act);         \
	float P##_q5_1_vec_dot(size_t n, const void *w, const void *act);         \
	float P##_q8_0_vec_dot(size_t n, const void *w, const void *act);         \
	float P##_q2_K_vec_dot(size_t n, const void *w, const void *act);         \
	float P##_q3_K_vec_dot(size_t n, const void *w, const void *act);         \
	float P##_q4_K_vec_dot(size_t n, const void *w, const void *act);         \
	float P##_q5_K_vec_dot(size_t n, const void *w, const void *act);         \
	float P##_q6_K_vec_dot(size_t n, const void *w, const void *act);         \
	float P##_iq4_nl_vec_dot(size_t n, const void *w, const void *act);       \
	float P##_iq4_xs_vec_dot(size_t n, const void *w, const void *act);

NEON_ROW_LIST(neon)
NEON_ROW_LIST(neondot)

#endif
