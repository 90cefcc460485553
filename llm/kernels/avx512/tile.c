/*
 * llm/kernels/avx512/tile.c — prefill tiles (llm/quant.h, tile contract).
 */
#include "avx512_rows.h"

void avx512_tile_register(uint32_t cpu_features)
{
	(void)cpu_features;
}
