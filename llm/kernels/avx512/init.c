/*
 * llm/kernels/avx512/init.c — AVX-512 rows, registered after the AVX2 rows
 * so that they win wherever this directory has one (llm/quant.h).
 */
#include "avx512_rows.h"

void quant_avx512_init(uint32_t cpu_features)
{
	if ((cpu_features & AVX512_NEED) != AVX512_NEED)
		return;
	avx512_legacy_register(cpu_features);
	avx512_kq_register(cpu_features);
	avx512_tile_register(cpu_features);
}
