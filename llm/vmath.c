/*
 * llm/vmath.c — llm/vmath.h for the baseline target, and the selection.
 */
#include "vmath.h"

#define VM_OPS vmath_generic
#define VM_IMPL "generic"
#include "vmath_impl.inc"

#if defined(__x86_64__)
extern const struct vmath_ops vmath_avx512, vmath_avx2;
#endif

static const struct vmath_ops *vm_sel = &vmath_generic;

void vmath_init(uint32_t cpu_features)
{
	vm_sel = &vmath_generic;
#if defined(__x86_64__)
	const uint32_t need = PLAT_CPU_AVX512F | PLAT_CPU_AVX512BW | PLAT_CPU_AVX512DQ |
			      PLAT_CPU_AVX512VL;
	const uint32_t avx2 = PLAT_CPU_AVX2 | PLAT_CPU_FMA | PLAT_CPU_F16C;

	if ((cpu_features & need) == need)
		vm_sel = &vmath_avx512;
	else if ((cpu_features & avx2) == avx2)
		vm_sel = &vmath_avx2;
#endif
	(void)cpu_features;
}

const struct vmath_ops *vmath(void)
{
	return vm_sel;
}
