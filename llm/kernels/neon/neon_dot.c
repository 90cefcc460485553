/*
 * llm/kernels/neon/neon_dot.c — the NEON rows with SDOT (Armv8.2
 * FEAT_DotProd): four int8 products summed into each int32 lane in one
 * instruction. Only this file is built for +dotprod; quant_neon_get()
 * gives these rows only when the CPU reports the feature.
 */
#if defined(__aarch64__)
#pragma GCC target("arch=armv8.2-a+dotprod")
#include <arm_neon.h>

#include "../scalar/scalar.h"
#include "neon_rows.h"

#define FN(name) neondot_##name

static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b)
{
	return vdotq_s32(acc, a, b);
}

#include "rows.inc"
#endif
