/*
 * llm/fp_exact.h — no fused multiply-add contraction in this file.
 *
 * Bit-exact results (dequantization equal to ggml's, math.h equal on host
 * and kernel, x86_64 and aarch64) need every a * b + c rounded twice as C
 * says. GCC contracts across statements by default in GNU C mode (aarch64
 * always has FMA; x86_64 does with -mfma), clang within expressions. Include
 * this first in a source file whose float results must not depend on the
 * target. Explicit FMA (SIMD intrinsics) is unaffected.
 */
#ifndef LLM_FP_EXACT_H
#define LLM_FP_EXACT_H

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#endif
