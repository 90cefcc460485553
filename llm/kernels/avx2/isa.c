/*
 * llm/kernels/avx2/isa.c — the AVX2+FMA+F16C descriptor of the quant table
 * (llm/quant_isa.h): the rows by type, tile.c's tiles and packed forms, and
 * the packed kernels' tuning by CPU maker.
 *
 * A row lists only what this directory speeds up: to_float and from_float
 * left out are the scalar ones.
 */
#include "avx2_rows.h"

static const struct quant_isa_row avx2_row[GGML_TYPE_COUNT] = {
	[GGML_TYPE_F32] = {.vec_dot = avx2_f32_vec_dot},
	[GGML_TYPE_F16] = {.to_float = avx2_f16_to_float, .vec_dot = avx2_f16_vec_dot},
	[GGML_TYPE_BF16] = {.to_float = avx2_bf16_to_float, .vec_dot = avx2_bf16_vec_dot},
	[GGML_TYPE_Q4_0] = {.vec_dot = avx2_q4_0_vec_dot, .gemm = avx2_q4_0_gemm},
	[GGML_TYPE_Q4_1] = {.vec_dot = avx2_q4_1_vec_dot, .gemm = avx2_q4_1_gemm},
	[GGML_TYPE_Q5_0] = {.vec_dot = avx2_q5_0_vec_dot, .gemm = avx2_q5_0_gemm},
	[GGML_TYPE_Q5_1] = {.vec_dot = avx2_q5_1_vec_dot, .gemm = avx2_q5_1_gemm},
	[GGML_TYPE_Q8_0] = {.from_float = avx2_q8_0_from_float, .vec_dot = avx2_q8_0_vec_dot,
			    .gemm = avx2_q8_0_gemm},
	[GGML_TYPE_Q8_1] = {.from_float = avx2_q8_1_from_float},
	[GGML_TYPE_Q2_K] = {.vec_dot = avx2_q2_K_vec_dot, .gemm = avx2_q2_K_gemm},
	[GGML_TYPE_Q3_K] = {.vec_dot = avx2_q3_K_vec_dot, .gemm = avx2_q3_K_gemm},
	[GGML_TYPE_Q4_K] = {.vec_dot = avx2_q4_K_vec_dot, .gemm = avx2_q4_K_gemm},
	[GGML_TYPE_Q5_K] = {.vec_dot = avx2_q5_K_vec_dot, .gemm = avx2_q5_K_gemm},
	[GGML_TYPE_Q6_K] = {.vec_dot = avx2_q6_K_vec_dot, .gemm = avx2_q6_K_gemm},
	[GGML_TYPE_Q8_K] = {.from_float = avx2_q8_K_from_float},
	[GGML_TYPE_IQ4_NL] = {.vec_dot = avx2_iq4_nl_vec_dot},
	[GGML_TYPE_IQ4_XS] = {.vec_dot = avx2_iq4_xs_vec_dot},
};

/*
 * The packed kernels' prefetches (tile.c), by CPU maker as the AVX-512
 * ones (llm/kernels/avx512/isa.c): on AMD's CPUs non-temporal, 8 KiB
 * ahead and one group at a time, the K-quant steps' quarters of a
 * superblock too (where memory is the bound they read more of it so);
 * elsewhere into L2, 2 KiB ahead, and the lanes (docs/perf.md, "Decode
 * read pattern").
 */
static const struct quant_isa avx2 = {
	.impl = "avx2", .row = avx2_row, .tile = avx2_tile, .packed = avx2_packed,
	.tune = {.ahead = 2048, .nta = false, .nta_sb = false, .lanes = true},
};
static const struct quant_isa avx2_amd = {
	.impl = "avx2", .row = avx2_row, .tile = avx2_tile, .packed = avx2_packed,
	.tune = {.ahead = 8192, .nta = true, .nta_sb = true, .lanes = false},
};

const struct quant_isa *quant_avx2_get(uint32_t cpu_features)
{
	const uint32_t need = PLAT_CPU_AVX2 | PLAT_CPU_FMA | PLAT_CPU_F16C;

	if ((cpu_features & need) != need)
		return NULL;
	return cpu_features & PLAT_CPU_AMD ? &avx2_amd : &avx2;
}
