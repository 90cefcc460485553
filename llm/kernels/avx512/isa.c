/*
 * llm/kernels/avx512/isa.c — the AVX-512 (VNNI) descriptor of the quant
 * table (llm/quant_isa.h). It goes over the AVX2 one (llm/quant.c), so
 * Q8_1 and Q8_K, which have no row here, keep the AVX2 quantizers.
 *
 * A row lists only what this file does not take from the scalar rows.
 */
#include "../avx2/avx2_rows.h"
#include "avx512_rows.h"

static const struct quant_isa_row avx512_row[GGML_TYPE_COUNT] = {
	[GGML_TYPE_F32] = {.vec_dot = avx512_f32_vec_dot},
	[GGML_TYPE_F16] = {.to_float = avx2_f16_to_float, .vec_dot = avx512_f16_vec_dot},
	[GGML_TYPE_BF16] = {.to_float = avx2_bf16_to_float, .vec_dot = avx512_bf16_vec_dot},
	[GGML_TYPE_Q4_0] = {.vec_dot = avx512_q4_0_vec_dot, .gemm = avx512_q4_0_gemm,
			    .rows = avx512_q4_0_rows},
	[GGML_TYPE_Q4_1] = {.vec_dot = avx512_q4_1_vec_dot, .gemm = avx512_q4_1_gemm},
	[GGML_TYPE_Q5_0] = {.vec_dot = avx512_q5_0_vec_dot, .gemm = avx512_q5_0_gemm},
	[GGML_TYPE_Q5_1] = {.vec_dot = avx512_q5_1_vec_dot, .gemm = avx512_q5_1_gemm},
	[GGML_TYPE_Q8_0] = {.from_float = avx2_q8_0_from_float, .vec_dot = avx512_q8_0_vec_dot,
			    .gemm = avx512_q8_0_gemm},
	[GGML_TYPE_Q2_K] = {.vec_dot = avx512_q2_K_vec_dot, .gemm = avx512_q2_K_gemm},
	[GGML_TYPE_Q3_K] = {.vec_dot = avx512_q3_K_vec_dot, .gemm = avx512_q3_K_gemm},
	[GGML_TYPE_Q4_K] = {.vec_dot = avx512_q4_K_vec_dot, .gemm = avx512_q4_K_gemm},
	[GGML_TYPE_Q5_K] = {.vec_dot = avx512_q5_K_vec_dot, .gemm = avx512_q5_K_gemm},
	[GGML_TYPE_Q6_K] = {.vec_dot = avx512_q6_K_vec_dot, .gemm = avx512_q6_K_gemm},
	[GGML_TYPE_IQ4_NL] = {.vec_dot = avx512_iq4_nl_vec_dot},
	[GGML_TYPE_IQ4_XS] = {.vec_dot = avx512_iq4_xs_vec_dot},
};

/*
 * The packed kernels' prefetches (tile.c), by CPU maker because each
 * maker's caches read a stream fastest differently: on AMD's CPUs
 * non-temporal (lines fetched for L2 leave it for the L3 as victims,
 * traffic a stream read once does not need), 8 KiB ahead, one group at a
 * time; elsewhere into L2, 4 KiB ahead, through the lanes. Measurements:
 * docs/perf.md, "Decode read pattern".
 */
#define TUNE_AMD {.ahead = 8192, .nta = true, .nta_sb = true, .lanes = false}
#define TUNE_OTHER {.ahead = 4096, .nta = false, .nta_sb = false, .lanes = true}

static const struct quant_isa avx512 = {
	.impl = "avx512vnni", .row = avx512_row, .tile = avx512_tile,
	.packed = avx512_packed, .tune = TUNE_OTHER,
};
static const struct quant_isa avx512_amd = {
	.impl = "avx512vnni", .row = avx512_row, .tile = avx512_tile,
	.packed = avx512_packed, .tune = TUNE_AMD,
};
static const struct quant_isa avx512_gfni = {
	.impl = "avx512vnni", .row = avx512_row, .tile = avx512_tile,
	.packed = avx512_packed_gfni, .tune = TUNE_OTHER,
};
static const struct quant_isa avx512_gfni_amd = {
	.impl = "avx512vnni", .row = avx512_row, .tile = avx512_tile,
	.packed = avx512_packed_gfni, .tune = TUNE_AMD,
};

const struct quant_isa *quant_avx512_get(uint32_t cpu_features)
{
	bool amd = cpu_features & PLAT_CPU_AMD;

	if ((cpu_features & AVX512_NEED) != AVX512_NEED)
		return NULL;
	if (cpu_features & PLAT_CPU_GFNI)
		return amd ? &avx512_gfni_amd : &avx512_gfni;
	return amd ? &avx512_amd : &avx512;
}
