/*
 * llm/aesgcm.c — picks an llm/aesgcm.h implementation for the CPU. The
 * implementations live in the SIMD directories and are referenced only on
 * the architecture they are built for; each names the features it needs.
 */
#include "aesgcm.h"

#if defined(__x86_64__)
extern const struct aesgcm_ops aesgcm_vaes512; /* llm/kernels/avx512/gcm.c */
extern const struct aesgcm_ops aesgcm_vaes256; /* llm/kernels/avx2/gcm.c */
#endif

/* Fastest first. */
static const struct aesgcm_ops *const aesgcm_impls[] = {
#if defined(__x86_64__)
	&aesgcm_vaes512,
	&aesgcm_vaes256,
#endif
	NULL,
};

const struct aesgcm_ops *aesgcm_find_nth(uint32_t cpu_features, size_t i)
{
	for (const struct aesgcm_ops *const *o = aesgcm_impls; *o; o++)
		if (((*o)->need & cpu_features) == (*o)->need && i-- == 0)
			return *o;
	return NULL;
}

const struct aesgcm_ops *aesgcm_find(uint32_t cpu_features)
{
	return aesgcm_find_nth(cpu_features, 0);
}

void aesgcm_zeroize(void *p, size_t n)
{
	if (!p)
		return;
	memset(p, 0, n);
	/* The asm claims to read the memory, so the stores cannot be dropped. */
	__asm__ __volatile__("" : : "r"(p) : "memory");
}
