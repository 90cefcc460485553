/*
 * llm/aesgcm.c — picks an llm/aesgcm.h implementation for the CPU. The
 * implementations live in the SIMD directories and are referenced only on
 * the architecture they are built for.
 */
#include "aesgcm.h"

#if defined(__x86_64__)
extern const struct aesgcm_ops aesgcm_vaes512; /* llm/kernels/avx512/gcm.c */
#endif

const struct aesgcm_ops *aesgcm_find(uint32_t cpu_features)
{
#if defined(__x86_64__)
	const uint32_t need = PLAT_CPU_AVX512F | PLAT_CPU_AVX512BW | PLAT_CPU_AVX512VL |
			      PLAT_CPU_AES | PLAT_CPU_PCLMUL | PLAT_CPU_VAES | PLAT_CPU_VPCLMUL;

	if ((cpu_features & need) == need)
		return &aesgcm_vaes512;
#endif
	(void)cpu_features;
	return NULL;
}

void aesgcm_zeroize(void *p, size_t n)
{
	if (!p)
		return;
	memset(p, 0, n);
	/* The asm claims to read the memory, so the stores cannot be dropped. */
	__asm__ __volatile__("" : : "r"(p) : "memory");
}
