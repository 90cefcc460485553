/*
 * llm/kernels/avx512/legacy.c — AVX-512 (VNNI) rows of the 32-element block
 * types and the float types.
 */
#include "avx512_rows.h"

void avx512_legacy_register(uint32_t cpu_features)
{
	(void)cpu_features;
}
