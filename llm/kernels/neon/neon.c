/*
 * llm/kernels/neon/neon.c — the NEON rows for every AArch64 CPU: the int8
 * dot is SMULL/SMLAL2-style widening multiplies and pairwise adds (products
 * fit int16; a pair |w| <= 128, |a| <= 127 fits too). isa.c names them.
 */
#if defined(__aarch64__)
#include <arm_neon.h>

#include "../scalar/scalar.h"
#include "neon_rows.h"

#define FN(name) neon_##name

static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b)
{
	acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
	return vpadalq_s16(acc, vmull_high_s8(a, b));
}

#include "rows.inc"
#endif
