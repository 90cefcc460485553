/*
 * llm/kernels/avx2/vmath.c — llm/vmath.h's ops built with AVX2 (the same
 * source as llm/vmath.c, so the same bits; vmath_init() picks it where
 * AVX-512 is missing, as on AMD Zen 2 and 3).
 */
#include "../../vmath.h"

#define VM_OPS vmath_avx2
#define VM_IMPL "avx2"
#include "../../vmath_impl.inc"
