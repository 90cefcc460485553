/*
 * llm/aesgcm.h — a fast AES-256-GCM decrypt-and-verify (NIST SP 800-38D) for
 * the sealed model reader's bulk chunks (llm/seal.c).
 *
 * BearSSL stays the implementation of record: it seals, derives keys, checks
 * the header tag, and decrypts whenever this module has nothing for the CPU.
 * This module only adds a faster path for one operation, decrypting a buffer
 * in place and checking its tag, with implementations chosen by CPU feature:
 *
 *   "vaes512+vpclmul"  llm/kernels/avx512/gcm.c: AES-NI on zmm (VAES, four
 *                      blocks an instruction) for CTR, VPCLMULQDQ for GHASH;
 *                      needs AVX-512 F/BW/VL, VAES, VPCLMULQDQ, AES-NI and
 *                      PCLMULQDQ.
 *   "vaes256+vpclmul"  llm/kernels/avx2/gcm.c: the same on ymm (two blocks an
 *                      instruction), for CPUs with VAES but no AVX-512 (AMD
 *                      Zen 3, the most common SEV-SNP hosts); needs AVX2,
 *                      VAES, VPCLMULQDQ, AES-NI and PCLMULQDQ.
 * aesgcm_find() takes the first of these the CPU has.
 *
 * Contracts (every implementation):
 *   - 96-bit IVs only (J0 = IV || 0^31 || 1, SP 800-38D §7.2 step 2).
 *   - a key is set once (setkey) and then only read: any number of threads
 *     may decrypt with one key at once.
 *   - no data-dependent branches or memory indices on keys or data; the tag
 *     is compared in constant time; on a mismatch the buffer is zeroed, so
 *     unauthenticated plaintext is never handed back.
 *   - the caller zeroizes the key (aesgcm_zeroize) when it is done with it.
 */
#ifndef LLM_AESGCM_H
#define LLM_AESGCM_H

#include "../kernel/platform.h"

#define AESGCM_KEY_SIZE 32u
#define AESGCM_IV_SIZE 12u
#define AESGCM_TAG_SIZE 16u
#define AESGCM_ROUNDS 14u /* AES-256, FIPS 197 §5 */
#define AESGCM_HPOW 32u   /* room for this many powers of the hash key */
/* Largest plaintext of one call: the 32-bit block counter starts at 2
 * (SP 800-38D §5.2.1.1: at most 2^32 - 2 blocks). */
#define AESGCM_MAX_LEN ((((uint64_t)1 << 32) - 2) * 16)

/* An expanded key. The layout of h belongs to the implementation that set it. */
struct aesgcm_key {
	uint8_t rk[AESGCM_ROUNDS + 1][16]; /* round keys (FIPS 197 §5.2) */
	uint8_t h[AESGCM_HPOW][16];        /* powers of H and such, in the implementation's form */
};

/*
 * GHASH over an AAD prefix whose length is a multiple of 16 bytes, to start
 * many messages that share it from (the sealed header). Zeroed = no prefix.
 */
struct aesgcm_prefix {
	uint8_t x[16]; /* the GHASH state, in the implementation's form */
	uint64_t len;  /* AAD bytes it holds */
};

struct aesgcm_ops {
	const char *name;       /* "vaes512+vpclmul", "vaes256+vpclmul" */
	const char *aes_name;   /* its halves, for `unseal --verify`, `seal inspect`: */
	const char *ghash_name; /* "aes_vaes512", "ghash_vpclmul512" */
	uint32_t need;          /* the PLAT_CPU_* features it runs on, all of them */
	/* Expand a 256-bit key. */
	void (*setkey)(struct aesgcm_key *k, const uint8_t key[AESGCM_KEY_SIZE]);
	/* Absorb n more bytes of AAD into pre (n and pre->len multiples of 16). */
	void (*prefix)(const struct aesgcm_key *k, struct aesgcm_prefix *pre, const void *aad,
		       size_t n);
	/*
	 * Decrypt buf[0, len) in place with iv, the AAD being pre's (NULL: none)
	 * followed by aad[0, aad_len), and check tag. 1 if authentic; 0 if not
	 * (buf zeroed) or len > AESGCM_MAX_LEN.
	 */
	int (*decrypt)(const struct aesgcm_key *k, const uint8_t iv[AESGCM_IV_SIZE],
		       const struct aesgcm_prefix *pre, const void *aad, size_t aad_len,
		       void *buf, size_t len, const uint8_t tag[AESGCM_TAG_SIZE]);
};

/* The fastest implementation the CPU features (plat_cpu_features()) allow,
 * or NULL when there is none: then use BearSSL. */
const struct aesgcm_ops *aesgcm_find(uint32_t cpu_features);
/* The i-th implementation the CPU features allow, fastest first (i = 0 is
 * aesgcm_find's), NULL past the last: tests and benchmarks of every path. */
const struct aesgcm_ops *aesgcm_find_nth(uint32_t cpu_features, size_t i);
/* Overwrite a key (or anything else secret) so that the compiler keeps the stores. */
void aesgcm_zeroize(void *p, size_t n);

#endif
