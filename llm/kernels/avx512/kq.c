/*
 * llm/kernels/avx512/kq.c — AVX-512 (VNNI) rows of the K-quant types.
 */
#include "avx512_rows.h"

void avx512_kq_register(uint32_t cpu_features)
{
	(void)cpu_features;
}
