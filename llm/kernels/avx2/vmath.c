/*
 * llm/kernels/avx2/vmath.c — llm/vmath.h's ops built with AVX2 (the same
 * source as llm/vmath.c, so the same bits; vmath_get() picks it where
 * AVX-512 is missing, as on AMD Zen 2 and 3).
 */
#include "../../vmath.h"

#define VM_OPS vmath_avx2
#define VM_STORAGE static
#define VM_IMPL "avx2"
#define VM_ATT_BYTES 32
#include "../../vmath_impl.inc"

const struct vmath_ops *vmath_avx2_get(uint32_t cpu_features)
{
	const uint32_t need = PLAT_CPU_AVX2 | PLAT_CPU_FMA | PLAT_CPU_F16C;

	return (cpu_features & need) == need ? &vmath_avx2 : NULL;
}
