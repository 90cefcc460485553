/*
 * llm/kernels/avx2/init.c — the AVX2+FMA+F16C rows of the quant table.
 *
 * Geometry and act_type as the scalar rows (quant_register() refuses a row
 * that differs); functions this directory does not speed up are the scalar
 * ones.
 */
#include "../scalar/scalar.h"
#include "avx2_rows.h"

#define AROW(T, NAME, BLCK, BYTES, ACT, TO, FROM, DOT, GEMM) \
	{NAME, T, BLCK, BYTES, ACT, TO, FROM, DOT, "avx2", GEMM, NULL}
#define B(T) sizeof(struct block_##T)

static const struct quant_type avx2_rows[] = {
	AROW(GGML_TYPE_F32, "F32", 1, 4, GGML_TYPE_F32, q_f32_to_float, q_f32_from_float,
	     avx2_f32_vec_dot, NULL),
	AROW(GGML_TYPE_F16, "F16", 1, 2, GGML_TYPE_F32, avx2_f16_to_float, q_f16_from_float,
	     avx2_f16_vec_dot, NULL),
	AROW(GGML_TYPE_BF16, "BF16", 1, 2, GGML_TYPE_F32, avx2_bf16_to_float, q_bf16_from_float,
	     avx2_bf16_vec_dot, NULL),
	AROW(GGML_TYPE_Q4_0, "Q4_0", QK4_0, B(q4_0), GGML_TYPE_Q8_0, q4_0_to_float, NULL,
	     avx2_q4_0_vec_dot, avx2_q4_0_gemm),
	AROW(GGML_TYPE_Q4_1, "Q4_1", QK4_1, B(q4_1), GGML_TYPE_Q8_1, q4_1_to_float, NULL,
	     avx2_q4_1_vec_dot, avx2_q4_1_gemm),
	AROW(GGML_TYPE_Q5_0, "Q5_0", QK5_0, B(q5_0), GGML_TYPE_Q8_0, q5_0_to_float, NULL,
	     avx2_q5_0_vec_dot, avx2_q5_0_gemm),
	AROW(GGML_TYPE_Q5_1, "Q5_1", QK5_1, B(q5_1), GGML_TYPE_Q8_1, q5_1_to_float, NULL,
	     avx2_q5_1_vec_dot, avx2_q5_1_gemm),
	AROW(GGML_TYPE_Q8_0, "Q8_0", QK8_0, B(q8_0), GGML_TYPE_Q8_0, q8_0_to_float,
	     avx2_q8_0_from_float, avx2_q8_0_vec_dot, avx2_q8_0_gemm),
	AROW(GGML_TYPE_Q8_1, "Q8_1", QK8_1, B(q8_1), GGML_TYPE_Q8_1, q8_1_to_float,
	     avx2_q8_1_from_float, NULL, NULL),
	AROW(GGML_TYPE_Q2_K, "Q2_K", QK_K, B(q2_K), GGML_TYPE_Q8_K, q2_K_to_float, NULL,
	     avx2_q2_K_vec_dot, avx2_q2_K_gemm),
	AROW(GGML_TYPE_Q3_K, "Q3_K", QK_K, B(q3_K), GGML_TYPE_Q8_K, q3_K_to_float, NULL,
	     avx2_q3_K_vec_dot, avx2_q3_K_gemm),
	AROW(GGML_TYPE_Q4_K, "Q4_K", QK_K, B(q4_K), GGML_TYPE_Q8_K, q4_K_to_float, NULL,
	     avx2_q4_K_vec_dot, avx2_q4_K_gemm),
	AROW(GGML_TYPE_Q5_K, "Q5_K", QK_K, B(q5_K), GGML_TYPE_Q8_K, q5_K_to_float, NULL,
	     avx2_q5_K_vec_dot, avx2_q5_K_gemm),
	AROW(GGML_TYPE_Q6_K, "Q6_K", QK_K, B(q6_K), GGML_TYPE_Q8_K, q6_K_to_float, NULL,
	     avx2_q6_K_vec_dot, avx2_q6_K_gemm),
	AROW(GGML_TYPE_Q8_K, "Q8_K", QK_K, B(q8_K), GGML_TYPE_Q8_K, q8_K_to_float,
	     avx2_q8_K_from_float, NULL, NULL),
};

void quant_avx2_init(uint32_t cpu_features)
{
	const uint32_t need = PLAT_CPU_AVX2 | PLAT_CPU_FMA | PLAT_CPU_F16C;

	if ((cpu_features & need) != need)
		return;
	for (size_t i = 0; i < sizeof avx2_rows / sizeof avx2_rows[0]; i++)
		quant_register(&avx2_rows[i]);
	avx2_tile_register(cpu_features);
}
