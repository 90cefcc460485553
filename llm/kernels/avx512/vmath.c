/*
 * llm/kernels/avx512/vmath.c — llm/vmath.h's ops built with AVX-512 (the
 * same source as llm/vmath.c, so the same bits; vmath_init() picks it).
 */
#include "../../vmath.h"

#define VM_OPS vmath_avx512
#define VM_IMPL "avx512"
#include "../../vmath_impl.inc"
