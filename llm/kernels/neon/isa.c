/*
 * llm/kernels/neon/isa.c — the NEON descriptors of the quant table
 * (llm/quant_isa.h): the same rows built twice (rows.inc), with the
 * Armv8.0 widening-multiply int8 dot (neon.c) and with SDOT (neon_dot.c).
 * to_float, and from_float of the float types, are the scalar ones.
 */
#if defined(__aarch64__)
#include "neon_rows.h"

#define NEON_ROWS(P)                                                                       \
	{                                                                                  \
		[GGML_TYPE_F32] = {.vec_dot = P##_f32_vec_dot},                            \
		[GGML_TYPE_F16] = {.vec_dot = P##_f16_vec_dot},                            \
		[GGML_TYPE_BF16] = {.vec_dot = P##_bf16_vec_dot},                          \
		[GGML_TYPE_Q4_0] = {.vec_dot = P##_q4_0_vec_dot},                          \
		[GGML_TYPE_Q4_1] = {.vec_dot = P##_q4_1_vec_dot},                          \
		[GGML_TYPE_Q5_0] = {.vec_dot = P##_q5_0_vec_dot},                          \
		[GGML_TYPE_Q5_1] = {.vec_dot = P##_q5_1_vec_dot},                          \
		[GGML_TYPE_Q8_0] = {.from_float = P##_q8_0_from_float,                     \
				    .vec_dot = P##_q8_0_vec_dot},                          \
		[GGML_TYPE_Q8_1] = {.from_float = P##_q8_1_from_float},                    \
		[GGML_TYPE_Q2_K] = {.vec_dot = P##_q2_K_vec_dot},                          \
		[GGML_TYPE_Q3_K] = {.vec_dot = P##_q3_K_vec_dot},                          \
		[GGML_TYPE_Q4_K] = {.vec_dot = P##_q4_K_vec_dot},                          \
		[GGML_TYPE_Q5_K] = {.vec_dot = P##_q5_K_vec_dot},                          \
		[GGML_TYPE_Q6_K] = {.vec_dot = P##_q6_K_vec_dot},                          \
		[GGML_TYPE_Q8_K] = {.from_float = P##_q8_K_from_float},                    \
		[GGML_TYPE_IQ4_NL] = {.vec_dot = P##_iq4_nl_vec_dot},                      \
		[GGML_TYPE_IQ4_XS] = {.vec_dot = P##_iq4_xs_vec_dot},                      \
	}

static const struct quant_isa_row neon_row[GGML_TYPE_COUNT] = NEON_ROWS(neon);
static const struct quant_isa_row neondot_row[GGML_TYPE_COUNT] = NEON_ROWS(neondot);

static const struct quant_isa neon = {.impl = "neon", .row = neon_row};
static const struct quant_isa neondot = {.impl = "neon-dotprod", .row = neondot_row};

const struct quant_isa *quant_neon_get(uint32_t cpu_features)
{
	if (!(cpu_features & PLAT_CPU_NEON))
		return NULL;
	return cpu_features & PLAT_CPU_DOTPROD ? &neondot : &neon;
}
#endif
