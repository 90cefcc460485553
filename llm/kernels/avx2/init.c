/*
 * llm/kernels/avx2/init.c — the AVX2+FMA+F16C rows of the quant table.
 *
 * Each row copies the scalar row (name, geometry, act_type, the functions
 * this directory does not speed up) and replaces what it implements.
 */
#include "avx2_rows.h"

struct avx2_row {
	uint32_t type;
	quant_to_float_fn to_float;
	quant_from_float_fn from_float;
	quant_vec_dot_fn vec_dot;
	quant_gemm_fn gemm;
};

static const struct avx2_row avx2_rows[] = {
	{GGML_TYPE_F32, NULL, NULL, avx2_f32_vec_dot, NULL},
	{GGML_TYPE_F16, avx2_f16_to_float, NULL, avx2_f16_vec_dot, NULL},
	{GGML_TYPE_BF16, avx2_bf16_to_float, NULL, avx2_bf16_vec_dot, NULL},
	{GGML_TYPE_Q4_0, NULL, NULL, avx2_q4_0_vec_dot, avx2_q4_0_gemm},
	{GGML_TYPE_Q4_1, NULL, NULL, avx2_q4_1_vec_dot, avx2_q4_1_gemm},
	{GGML_TYPE_Q5_0, NULL, NULL, avx2_q5_0_vec_dot, avx2_q5_0_gemm},
	{GGML_TYPE_Q5_1, NULL, NULL, avx2_q5_1_vec_dot, avx2_q5_1_gemm},
	{GGML_TYPE_Q8_0, NULL, avx2_q8_0_from_float, avx2_q8_0_vec_dot, avx2_q8_0_gemm},
	{GGML_TYPE_Q8_1, NULL, avx2_q8_1_from_float, NULL, NULL},
	{GGML_TYPE_Q2_K, NULL, NULL, avx2_q2_K_vec_dot, avx2_q2_K_gemm},
	{GGML_TYPE_Q3_K, NULL, NULL, avx2_q3_K_vec_dot, avx2_q3_K_gemm},
	{GGML_TYPE_Q4_K, NULL, NULL, avx2_q4_K_vec_dot, avx2_q4_K_gemm},
	{GGML_TYPE_Q5_K, NULL, NULL, avx2_q5_K_vec_dot, avx2_q5_K_gemm},
	{GGML_TYPE_Q6_K, NULL, NULL, avx2_q6_K_vec_dot, avx2_q6_K_gemm},
	{GGML_TYPE_Q8_K, NULL, avx2_q8_K_from_float, NULL, NULL},
};

#define N_AVX2 (sizeof avx2_rows / sizeof avx2_rows[0])

/* The table quant_register() points into: filled once, read-only after. */
static struct quant_type avx2_table[N_AVX2];

void quant_avx2_init(uint32_t cpu_features)
{
	const uint32_t need = PLAT_CPU_AVX2 | PLAT_CPU_FMA | PLAT_CPU_F16C;

	if ((cpu_features & need) != need)
		return;
	for (size_t i = 0; i < N_AVX2; i++) {
		const struct avx2_row *r = &avx2_rows[i];
		struct quant_type *q = &avx2_table[i];
		*q = *quant_scalar(r->type);
		if (r->to_float)
			q->to_float = r->to_float;
		if (r->from_float)
			q->from_float = r->from_float;
		if (r->vec_dot)
			q->vec_dot = r->vec_dot;
		q->gemm = r->gemm;
		q->impl = "avx2";
		quant_register(q);
	}
}
