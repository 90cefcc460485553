/*
 * llm/kernels/avx512/avx512_rows.h — the AVX-512 rows (F, BW, VL, DQ and
 * VNNI) and quant_avx512_init(), which registers them over the AVX2 rows.
 *
 *   legacy.c  vec_dot/gemm rows of F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0
 *   kq.c      vec_dot/gemm rows of Q2_K, Q3_K, Q4_K, Q5_K, Q6_K
 *   tile.c    prefill tiles: weights repacked once per tile to bytes, then
 *             VNNI dot products against every token of the batch
 */
#ifndef LLM_KERNELS_AVX512_ROWS_H
#define LLM_KERNELS_AVX512_ROWS_H

#include "../../quant.h"

#define AVX512_NEED (PLAT_CPU_AVX2 | PLAT_CPU_FMA | PLAT_CPU_F16C | PLAT_CPU_AVX512F | \
		     PLAT_CPU_AVX512BW | PLAT_CPU_AVX512DQ | PLAT_CPU_AVX512VL | \
		     PLAT_CPU_AVX512VNNI)

void quant_avx512_init(uint32_t cpu_features);

/* Each registers (quant_register / quant_register_tile) what it has. */
void avx512_legacy_register(uint32_t cpu_features);
void avx512_kq_register(uint32_t cpu_features);
void avx512_tile_register(uint32_t cpu_features);

#endif
