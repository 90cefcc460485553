/*
 * llm/kernels/neon/neon.c — the NEON rows for every AArch64 CPU: the int8
 * dot is SMULL/SMLAL2-style widening multiplies and pairwise adds (products
 * fit int16; a pair |w| <= 128, |a| <= 127 fits too). Also registers the
 * rows (quant_neon_init).
 */
#if defined(__aarch64__)
#include <arm_neon.h>

#include "../scalar/scalar.h"
#include "neon_rows.h"

#define FN(name) neon_##name

static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b)
{
	acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
	return vpadalq_s16(acc, vmull_high_s8(a, b));
}

#include "rows.inc"

#define NROW(T, NAME, BLCK, BYTES, ACT, TO, FROM, DOT, IMPL) \
	{NAME, T, BLCK, BYTES, ACT, TO, FROM, DOT, IMPL, NULL, NULL}
#define B(T) sizeof(struct block_##T)

/* The rows with prefix P (neon, neondot): geometry and act_type as the
 * scalar rows (quant_register() checks), scalar to_float. */
#define ROWS(P, IMPL)                                                                       \
	NROW(GGML_TYPE_F32, "F32", 1, 4, GGML_TYPE_F32, q_f32_to_float, q_f32_from_float,   \
	     P##_f32_vec_dot, IMPL),                                                        \
	NROW(GGML_TYPE_F16, "F16", 1, 2, GGML_TYPE_F32, q_f16_to_float, q_f16_from_float,   \
	     P##_f16_vec_dot, IMPL),                                                        \
	NROW(GGML_TYPE_BF16, "BF16", 1, 2, GGML_TYPE_F32, q_bf16_to_float, q_bf16_from_float, \
	     P##_bf16_vec_dot, IMPL),                                                       \
	NROW(GGML_TYPE_Q4_0, "Q4_0", QK4_0, B(q4_0), GGML_TYPE_Q8_0, q4_0_to_float, NULL,   \
	     P##_q4_0_vec_dot, IMPL),                                                       \
	NROW(GGML_TYPE_Q4_1, "Q4_1", QK4_1, B(q4_1), GGML_TYPE_Q8_1, q4_1_to_float, NULL,   \
	     P##_q4_1_vec_dot, IMPL),                                                       \
	NROW(GGML_TYPE_Q5_0, "Q5_0", QK5_0, B(q5_0), GGML_TYPE_Q8_0, q5_0_to_float, NULL,   \
	     P##_q5_0_vec_dot, IMPL),                                                       \
	NROW(GGML_TYPE_Q5_1, "Q5_1", QK5_1, B(q5_1), GGML_TYPE_Q8_1, q5_1_to_float, NULL,   \
	     P##_q5_1_vec_dot, IMPL),                                                       \
	NROW(GGML_TYPE_Q8_0, "Q8_0", QK8_0, B(q8_0), GGML_TYPE_Q8_0, q8_0_to_float,         \
	     P##_q8_0_from_float, P##_q8_0_vec_dot, IMPL),                                  \
	NROW(GGML_TYPE_Q8_1, "Q8_1", QK8_1, B(q8_1), GGML_TYPE_Q8_1, q8_1_to_float,         \
	     P##_q8_1_from_float, NULL, IMPL),                                              \
	NROW(GGML_TYPE_Q2_K, "Q2_K", QK_K, B(q2_K), GGML_TYPE_Q8_K, q2_K_to_float, NULL,    \
	     P##_q2_K_vec_dot, IMPL),                                                       \
	NROW(GGML_TYPE_Q3_K, "Q3_K", QK_K, B(q3_K), GGML_TYPE_Q8_K, q3_K_to_float, NULL,    \
	     P##_q3_K_vec_dot, IMPL),                                                       \
	NROW(GGML_TYPE_Q4_K, "Q4_K", QK_K, B(q4_K), GGML_TYPE_Q8_K, q4_K_to_float, NULL,    \
	     P##_q4_K_vec_dot, IMPL),                                                       \
	NROW(GGML_TYPE_Q5_K, "Q5_K", QK_K, B(q5_K), GGML_TYPE_Q8_K, q5_K_to_float, NULL,    \
	     P##_q5_K_vec_dot, IMPL),                                                       \
	NROW(GGML_TYPE_Q6_K, "Q6_K", QK_K, B(q6_K), GGML_TYPE_Q8_K, q6_K_to_float, NULL,    \
	     P##_q6_K_vec_dot, IMPL),                                                       \
	NROW(GGML_TYPE_Q8_K, "Q8_K", QK_K, B(q8_K), GGML_TYPE_Q8_K, q8_K_to_float,          \
	     P##_q8_K_from_float, NULL, IMPL)

static const struct quant_type neon_plain[] = {ROWS(neon, "neon")};
static const struct quant_type neon_sdot[] = {ROWS(neondot, "neon-dotprod")};

void quant_neon_init(uint32_t cpu_features)
{
	const struct quant_type *rows =
		cpu_features & PLAT_CPU_DOTPROD ? neon_sdot : neon_plain;

	if (!(cpu_features & PLAT_CPU_NEON))
		return;
	for (size_t i = 0; i < sizeof neon_plain / sizeof neon_plain[0]; i++)
		quant_register(&rows[i]);
}
#endif
