/*
 * tests/unit/test_aesgcm.c — llm/aesgcm.c and its implementations: the
 * AES-256 test cases of the GCM specification (McGrew and Viega, "The
 * Galois/Counter Mode of Operation", test cases 13-16; 17 and 18 use IVs of
 * other than 96 bits, which llm/aesgcm.h does not take), and a comparison
 * with BearSSL's br_gcm over random keys, IVs, AAD (with and without a
 * prefix) and lengths 0 .. 70000, every kind of damage refused with the
 * buffer zeroed; each for every implementation the CPU runs (on an AVX-512
 * machine with VAES both the zmm and the ymm code). Then which one is
 * chosen for which CPU, and by the sealed reader.
 */
#include "test.h"

#include <bearssl.h>
#include <stdlib.h>

#include "../../llm/aesgcm.h"
#include "../../tools/writer/seal_write.h"

static const struct aesgcm_ops *fast(void)
{
	return aesgcm_find(plat_cpu_features());
}

/* Every implementation this CPU runs (not only the fastest), NULL-terminated. */
static const struct aesgcm_ops **impls(void)
{
	static const struct aesgcm_ops *list[8];
	size_t n = 0;

	while (n + 1 < sizeof list / sizeof list[0] &&
	       (list[n] = aesgcm_find_nth(plat_cpu_features(), n)))
		n++;
	list[n] = NULL;
	return list;
}

#define NEED_FAST(ops)                                                                   \
	do {                                                                             \
		if (!(ops))                                                              \
			SKIP_CPU("VAES+VPCLMULQDQ", "no fast AES-GCM for this CPU " \
				 "(needs AVX2 or AVX-512 with VAES, VPCLMULQDQ, AES-NI, " \
				 "PCLMULQDQ)");                                  \
	} while (0)

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;
	for (; s[0] && s[1]; s += 2)
		out[n++] = (uint8_t)strtoul((char[]){s[0], s[1], 0}, NULL, 16);
	return n;
}

/* McGrew and Viega, GCM revised spec, Appendix B: test cases 13-16 (AES-256). */
static const struct {
	const char *key, *iv, *plain, *aad, *cipher, *tag;
} gcm_spec[] = {
	{"0000000000000000000000000000000000000000000000000000000000000000",
	 "000000000000000000000000", "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"},
	{"0000000000000000000000000000000000000000000000000000000000000000",
	 "000000000000000000000000", "00000000000000000000000000000000", "",
	 "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"},
	{"feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
	 "cafebabefacedbaddecaf888",
	 "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	 "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
	 "",
	 "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	 "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
	 "b094dac5d93471bdec1a502270e3cc6c"},
	{"feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
	 "cafebabefacedbaddecaf888",
	 "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	 "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
	 "feedfacedeadbeeffeedfacedeadbeefabaddad2",
	 "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	 "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
	 "76fc6ece0f4e1768cddf8853bb2d551b"},
};

static bool all_zero(const uint8_t *p, size_t n);

/* Test case 13 + t through ops: the plaintext and the tag, then the same
 * with one bit of the tag wrong: refused, nothing left. */
static void spec_case(const struct aesgcm_ops *ops, size_t t)
{
	uint8_t key[32], iv[12], plain[64], aad[32], buf[64], tag[16];
	struct aesgcm_key k;
	int before = test_failed_checks;

	CHECK_EQ_INT(unhex(gcm_spec[t].key, key), 32);
	CHECK_EQ_INT(unhex(gcm_spec[t].iv, iv), 12);
	size_t n = unhex(gcm_spec[t].plain, plain), na = unhex(gcm_spec[t].aad, aad);
	CHECK_EQ_INT(unhex(gcm_spec[t].cipher, buf), n);
	CHECK_EQ_INT(unhex(gcm_spec[t].tag, tag), 16);
	ops->setkey(&k, key);
	CHECK_EQ_INT(ops->decrypt(&k, iv, NULL, aad, na, buf, n, tag), 1);
	CHECK(memcmp(buf, plain, n) == 0);
	unhex(gcm_spec[t].cipher, buf);
	tag[15] ^= 0x80;
	CHECK_EQ_INT(ops->decrypt(&k, iv, NULL, aad, na, buf, n, tag), 0);
	CHECK(all_zero(buf, n));
	aesgcm_zeroize(&k, sizeof k);
	if (test_failed_checks != before)
		fprintf(stderr, "  %s: test case %zu\n", ops->name, 13 + t);
}

/* every implementation the CPU runs, not only the one aesgcm_find picks */
TEST(aesgcm_every_implementation_passes_the_spec_vectors)
{
	const struct aesgcm_ops **list = impls();

	NEED_FAST(list[0]);
	for (; *list; list++)
		for (size_t t = 0; t < sizeof gcm_spec / sizeof gcm_spec[0]; t++)
			spec_case(*list, t);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible, the seed is printed on a failure */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void rnd_bytes(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(rnd() >> 56);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* BearSSL's encryption of plain into ct (tag into tag). */
static void br_seal(const uint8_t key[32], const uint8_t iv[12], const uint8_t *aad,
		    size_t na, uint8_t *ct, size_t n, uint8_t tag[16])
{
	br_aes_x86ni_ctr_keys x86;
	br_aes_ct64_ctr_keys ct64;
	br_gcm_context g;
	const br_block_ctr_class *vt = br_aes_x86ni_ctr_get_vtable();
	const br_block_ctr_class **kc = vt ? &x86.vtable : &ct64.vtable;

	if (!vt)
		vt = &br_aes_ct64_ctr_vtable;
	vt->init(kc, key, 32);
	br_gcm_init(&g, kc, br_ghash_ctmul64);
	br_gcm_reset(&g, iv, 12);
	br_gcm_aad_inject(&g, aad, na);
	br_gcm_flip(&g);
	br_gcm_run(&g, 1, ct, n);
	br_gcm_get_tag(&g, tag);
}

/*
 * One message of n bytes with na bytes of AAD: BearSSL seals, ops opens
 * (the AAD split into a prefix of pre bytes and the rest), then each kind of
 * damage must be refused with the buffer zeroed. Returns the failed checks.
 */
static int one_case(const struct aesgcm_ops *ops, size_t n, size_t na, size_t pre, size_t align)
{
	int before = test_failed_checks;
	uint8_t key[32], iv[12], tag[16], bad_tag[16];
	uint8_t *aad = malloc(na + 1), *plain = malloc(n + 1), *raw = malloc(n + 64);
	uint8_t *ct = malloc(n + 1), *buf = raw + align;
	struct aesgcm_key k;
	struct aesgcm_prefix px;

	rnd_bytes(key, sizeof key);
	rnd_bytes(iv, sizeof iv);
	rnd_bytes(aad, na);
	rnd_bytes(plain, n);
	memcpy(ct, plain, n);
	br_seal(key, iv, aad, na, ct, n, tag);
	ops->setkey(&k, key);
	memset(&px, 0, sizeof px);
	ops->prefix(&k, &px, aad, pre);

	memcpy(buf, ct, n);
	CHECK_EQ_INT(ops->decrypt(&k, iv, &px, aad + pre, na - pre, buf, n, tag), 1);
	CHECK(memcmp(buf, plain, n) == 0);
	memcpy(buf, ct, n);
	CHECK_EQ_INT(ops->decrypt(&k, iv, NULL, aad, na, buf, n, tag), 1);
	CHECK(memcmp(buf, plain, n) == 0);

	/* one bit of the ciphertext */
	if (n) {
		memcpy(buf, ct, n);
		buf[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
		CHECK_EQ_INT(ops->decrypt(&k, iv, &px, aad + pre, na - pre, buf, n, tag), 0);
		CHECK(all_zero(buf, n));
	}
	/* one bit of the tag */
	memcpy(bad_tag, tag, 16);
	bad_tag[rnd() % 16] ^= (uint8_t)(1u << (rnd() % 8));
	memcpy(buf, ct, n);
	CHECK_EQ_INT(ops->decrypt(&k, iv, &px, aad + pre, na - pre, buf, n, bad_tag), 0);
	CHECK(all_zero(buf, n));
	/* one bit of the AAD */
	if (na) {
		size_t i = rnd() % na;
		uint8_t bit = (uint8_t)(1u << (rnd() % 8));
		struct aesgcm_prefix px2 = {{0}, 0};
		aad[i] ^= bit;
		memcpy(buf, ct, n);
		CHECK_EQ_INT(ops->decrypt(&k, iv, NULL, aad, na, buf, n, tag), 0);
		CHECK(all_zero(buf, n));
		ops->prefix(&k, &px2, aad, pre);
		memcpy(buf, ct, n);
		CHECK_EQ_INT(ops->decrypt(&k, iv, &px2, aad + pre, na - pre, buf, n, tag), 0);
		CHECK(all_zero(buf, n));
		aad[i] ^= bit;
	}
	/* the IV */
	iv[rnd() % 12] ^= 1;
	memcpy(buf, ct, n);
	CHECK_EQ_INT(ops->decrypt(&k, iv, NULL, aad, na, buf, n, tag), 0);
	CHECK(all_zero(buf, n));

	aesgcm_zeroize(&k, sizeof k);
	free(aad);
	free(plain);
	free(raw);
	free(ct);
	return test_failed_checks - before;
}

/* BearSSL seals, ops opens: 1 if every case passed. */
static int matches_bearssl(const struct aesgcm_ops *ops)
{
	/* lengths around every boundary of the code: blocks, ymm (32), zmm (64),
	 * GHASH steps and ymm groups (256), zmm groups (512), a sealed chunk
	 * (65536) */
	static const size_t edge[] = {
		0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300,
		383, 384, 385, 511, 512, 513, 767, 768, 769, 1023, 1024, 1025, 1535, 1536,
		4095, 4096, 4097, 65535, 65536, 65537, 65536 + 500, 70000,
	};
	static const size_t aad_len[] = {0, 1, 4, 15, 16, 17, 255, 256, 257, 500, 513};
	int fails = 0;

	for (uint64_t seed = 1; seed <= 3 && !fails; seed++) {
		rng_state = seed * 0x9e3779b97f4a7c15ull;
		for (size_t i = 0; i < sizeof edge / sizeof edge[0] && !fails; i++) {
			size_t na = aad_len[rnd() % (sizeof aad_len / sizeof aad_len[0])];
			fails = one_case(ops, edge[i], na, 16 * (rnd() % (na / 16 + 1)), rnd() % 64);
			if (fails)
				fprintf(stderr, "  seed %llu: length %zu, aad %zu\n",
					(unsigned long long)seed, edge[i], na);
		}
	}
	rng_state = 0x5eed;
	for (int t = 0; t < 300 && !fails; t++) {
		size_t n = t < 150 ? rnd() % 2048 : rnd() % 70001, na = rnd() % 600;
		size_t pre = 16 * (rnd() % (na / 16 + 1));
		fails = one_case(ops, n, na, pre, rnd() % 64);
		if (fails)
			fprintf(stderr, "  case %d: length %zu, aad %zu, prefix %zu\n", t, n, na, pre);
	}
	if (fails)
		fprintf(stderr, "  (%s)\n", ops->name);
	return !fails;
}

/* every implementation the CPU runs, not only the one aesgcm_find picks */
TEST(aesgcm_matches_bearssl)
{
	const struct aesgcm_ops **list = impls();

	NEED_FAST(list[0]);
	for (; *list; list++)
		CHECK(matches_bearssl(*list));
}

#if defined(__x86_64__)
/* The choice by CPU class, whatever this CPU is: AVX-512 with VAES (Zen 4,
 * Ice Lake and later) takes the zmm code, VAES without AVX-512 (Zen 3) the
 * ymm code, no VAES or VPCLMULQDQ (Zen 2, Skylake) neither: BearSSL. */
TEST(aesgcm_find_picks_by_cpu_class)
{
	const uint32_t zen3 = PLAT_CPU_SSE42 | PLAT_CPU_AVX2 | PLAT_CPU_FMA | PLAT_CPU_F16C |
			      PLAT_CPU_RDRAND | PLAT_CPU_AES | PLAT_CPU_PCLMUL | PLAT_CPU_VAES |
			      PLAT_CPU_VPCLMUL | PLAT_CPU_SHA | PLAT_CPU_AMD;
	const uint32_t zen4 = zen3 | PLAT_CPU_AVX512F | PLAT_CPU_AVX512BW | PLAT_CPU_AVX512VL |
			      PLAT_CPU_AVX512DQ | PLAT_CPU_AVX512VNNI | PLAT_CPU_AVX512BF16 |
			      PLAT_CPU_GFNI;
	const struct aesgcm_ops *z4 = aesgcm_find(zen4), *z3 = aesgcm_find(zen3);

	CHECK(z4 && !strcmp(z4->name, "vaes512+vpclmul"));
	CHECK(z3 && !strcmp(z3->name, "vaes256+vpclmul"));
	CHECK(aesgcm_find_nth(zen4, 0) == z4);
	CHECK(aesgcm_find_nth(zen4, 1) == z3);
	CHECK(aesgcm_find_nth(zen4, 2) == NULL);
	CHECK(aesgcm_find_nth(zen3, 1) == NULL);
	CHECK(aesgcm_find(zen3 & ~(PLAT_CPU_VAES | PLAT_CPU_VPCLMUL)) == NULL);
	CHECK(aesgcm_find(zen3 & ~PLAT_CPU_VPCLMUL) == NULL);
	CHECK(aesgcm_find(zen3 & ~PLAT_CPU_AVX2) == NULL);
	CHECK(aesgcm_find(zen4 & ~PLAT_CPU_AES) == NULL);
	CHECK(aesgcm_find(zen4 & ~PLAT_CPU_AVX512BW) == z3);
}
#endif

/* seal_create chose ops for the chunks and names it, or BearSSL (ops NULL). */
static void check_seal_uses(const struct aesgcm_ops *ops)
{
	static const uint8_t key[SEAL_KEY_SIZE] = {7};
	uint8_t rnd_fields[SEAL_RANDOM_SIZE] = {1, 2, 3}, sha[32] = {0};
	struct seal_ctx c;
	char err[200];

	CHECK_EQ_INT(seal_create(&c, key, 3 * SEAL_CHUNK_MIN, sha, SEAL_CHUNK_MIN, rnd_fields,
				 err, sizeof err),
		     0);
	CHECK(c.fast == ops);
	if (ops) {
		CHECK_STR(c.aes_impl, ops->aes_name);
		CHECK_STR(c.ghash_impl, ops->ghash_name);
	} else {
		CHECK(strncmp(c.aes_impl, "aes_", 4) == 0 && strstr(c.aes_impl, "vaes") == NULL);
	}
	seal_close(&c);
}

/* The sealed reader takes the fast path when there is one and says so, and
 * BearSSL's otherwise. */
TEST(aesgcm_used_by_seal)
{
	check_seal_uses(fast());
}

/* With AVX-512 hidden (LLMK_CPU_MASK, as on a Zen 3) the sealed reader takes
 * the ymm code; with VAES and VPCLMULQDQ hidden too (a Zen 2), BearSSL. */
TEST(aesgcm_used_by_seal_without_avx512)
{
	const uint32_t avx512 = PLAT_CPU_AVX512F | PLAT_CPU_AVX512BW | PLAT_CPU_AVX512VL |
				PLAT_CPU_AVX512DQ | PLAT_CPU_AVX512VNNI | PLAT_CPU_AVX512BF16 |
				PLAT_CPU_GFNI;
	const struct aesgcm_ops *ymm = aesgcm_find(plat_cpu_features() & ~avx512);
	const char *env = getenv("LLMK_CPU_MASK");
	uint32_t mask = env && *env ? (uint32_t)strtoul(env, NULL, 16) : ~0u;
	char saved[64], hex[16];

	if (!ymm)
		SKIP_CPU("VAES+VPCLMULQDQ", "no ymm AES-GCM for this CPU (needs AVX2, VAES, "
			 "VPCLMULQDQ, AES-NI, PCLMULQDQ)");
	CHECK_STR(ymm->name, "vaes256+vpclmul");
	snprintf(saved, sizeof saved, "%s", env ? env : "");
	snprintf(hex, sizeof hex, "%x", mask & ~avx512);
	setenv("LLMK_CPU_MASK", hex, 1);
	check_seal_uses(ymm);
	snprintf(hex, sizeof hex, "%x", mask & ~avx512 & ~(PLAT_CPU_VAES | PLAT_CPU_VPCLMUL));
	setenv("LLMK_CPU_MASK", hex, 1);
	check_seal_uses(NULL);
	if (env)
		setenv("LLMK_CPU_MASK", saved, 1);
	else
		unsetenv("LLMK_CPU_MASK");
}
