/*
 * llm/sha256.h — SHA-256 (FIPS 180-4) for the model digests: the x86 SHA
 * extensions (llm/kernels/avx2/sha256_ni.c) when the CPU has them, BearSSL's
 * br_sha256 otherwise. Same digests either way (tests/unit/test_sha256.c).
 * A sealed model's load hashes every plaintext byte, and BearSSL's portable
 * rounds made that most of the load's time (docs/perf.md, "Remarks moved
 * from the code").
 */
#ifndef LLM_SHA256_H
#define LLM_SHA256_H

#include <bearssl.h>

#include "../kernel/platform.h"

struct llm_sha256 {
	br_sha256_context br; /* without the SHA extensions */
	uint32_t h[8];
	uint8_t buf[64];
	uint64_t total;       /* bytes fed */
	bool ni;
};

void llm_sha256_init(struct llm_sha256 *c);
void llm_sha256_update(struct llm_sha256 *c, const void *p, size_t n);
/* The digest of what was fed; c stays usable (more may be fed). */
void llm_sha256_out(const struct llm_sha256 *c, uint8_t out[32]);
/* "sha-ni" or "bearssl": what llm_sha256_init picks on this CPU. */
const char *llm_sha256_impl(void);

/* The SHA extensions' block function (x86_64 only): state h, n blocks. */
void sha256_ni_blocks(uint32_t h[8], const uint8_t *p, size_t n);

#endif
