/*
 * kernel/cpu_features.h — what both platforms share about the CPU's
 * features (kernel/cpu_features.c): the x86 CPUID decoder, a pure function
 * from CPUID words and XCR0 to PLAT_CPU_* bits, which kernel/x86_64/cpu.c
 * (bare metal) and tools/host/plat_pool.c (Linux) each feed with the words they
 * read. The features' names are platform.h's plat_cpu_feature_text.
 */
#ifndef LLMK_CPU_FEATURES_H
#define LLMK_CPU_FEATURES_H

#include "platform.h"

/* XCR0's state components (Intel SDM Vol. 1 §13.1). */
#define XCR0_X87 (1u << 0)
#define XCR0_SSE (1u << 1)
#define XCR0_AVX (1u << 2)
#define XCR0_AVX512 (7u << 5) /* opmask, ZMM_Hi256, Hi16_ZMM */

/* Intel SDM Vol. 2A "CPUID"; 0 for a leaf the CPU does not have. */
struct cpuid_words {
	uint32_t l0_ebx, l0_ecx;  /* leaf 0: the vendor string's first and last words */
	uint32_t l1_ecx;          /* leaf 1 */
	uint32_t l7_ebx, l7_ecx;  /* leaf 7, subleaf 0 */
	uint32_t l71_eax;         /* leaf 7, subleaf 1 */
	uint64_t xcr0;            /* XGETBV(0); ignored unless leaf 1 ECX.OSXSAVE */
};

/* The features a program may use: the CPU has them (CPUID) and the OS or
 * kernel has enabled their register state (XCR0). */
uint32_t cpuid_features(const struct cpuid_words *w);

#endif
