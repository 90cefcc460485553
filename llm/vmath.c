/*
 * llm/vmath.c — llm/vmath.h for the baseline target, and the choice of build.
 */
#include "vmath.h"

#define VM_OPS vmath_generic
#define VM_IMPL "generic"
#include "vmath_impl.inc"

const struct vmath_ops *vmath_get(uint32_t cpu_features)
{
	const struct vmath_ops *v = NULL;

#if defined(__x86_64__)
	v = vmath_avx512_get(cpu_features);
	if (!v)
		v = vmath_avx2_get(cpu_features);
#endif
	(void)cpu_features;
	return v ? v : &vmath_generic;
}
