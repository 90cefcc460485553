/*
 * llm/kernels/avx512/vmath.c — llm/vmath.h's ops built with AVX-512 (the
 * same source as llm/vmath.c, so the same bits; vmath_get() picks it).
 */
#include "../../vmath.h"

#define VM_OPS vmath_avx512
#define VM_STORAGE static
#define VM_IMPL "avx512"
#include "../../vmath_impl.inc"

const struct vmath_ops *vmath_avx512_get(uint32_t cpu_features)
{
	const uint32_t need = PLAT_CPU_AVX512F | PLAT_CPU_AVX512BW | PLAT_CPU_AVX512DQ |
			      PLAT_CPU_AVX512VL;

	return (cpu_features & need) == need ? &vmath_avx512 : NULL;
}
