/*
 * tools/gcmbench.c — build/host/gcmbench: per-core speed of AES-256-GCM
 * decrypt-and-verify, each llm/aesgcm.h implementation this CPU runs
 * (LLMK_CPU_MASK hides some) against BearSSL's generic GCM over AES-NI and
 * PCLMULQDQ (what llm/seal.c uses when there is none), in this thread's CPU
 * time, so other processes taking turns on the cores do not count.
 *
 *   gcmbench [MIB]     default 64
 *
 * Two cases, both in chunks of the sealed format's default size
 * (SEAL_CHUNK_DEFAULT) with its 4-byte AAD, decrypted in place:
 *   chunk   one chunk again and again, in L2: the cipher's own speed;
 *   slot    MIB of chunks in turn, as a streamer slot larger than the
 *           caches: with the memory traffic.
 * Each pass decrypts with tags made for it: CTR is its own inverse, so the
 * buffer turns from ciphertext to plaintext and back, every tag checked.
 * The best of several windows is printed.
 */
#include <bearssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../llm/aesgcm.h"
#include "../llm/seal.h"

#define CHUNK SEAL_CHUNK_DEFAULT
#define WINDOWS 5

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Chunk i's nonce (base || be32(i)); its AAD is the last 4 bytes. */
static void nonce_of(uint8_t nonce[12], uint32_t i)
{
	memset(nonce, 0x5a, 8);
	nonce[8] = (uint8_t)(i >> 24);
	nonce[9] = (uint8_t)(i >> 16);
	nonce[10] = (uint8_t)(i >> 8);
	nonce[11] = (uint8_t)i;
}

/* BearSSL as llm/seal.c sets it up for the chunks. */
struct br {
	br_aes_x86ni_ctr_keys aes;
	br_gcm_context gcm;
};

static int br_setup(struct br *b, const uint8_t key[32])
{
	const br_block_ctr_class *aes = br_aes_x86ni_ctr_get_vtable();
	br_ghash gh = br_ghash_pclmul_get();

	if (!aes || !gh)
		return -1;
	aes->init(&b->aes.vtable, key, 32);
	br_gcm_init(&b->gcm, &b->aes.vtable, gh);
	return 0;
}

/* BearSSL over chunk i: encrypt (tag of the output) or decrypt-and-check. */
static int br_chunk(const struct br *b, uint32_t i, uint8_t *p, int encrypt, uint8_t tag[16])
{
	br_gcm_context g = b->gcm;
	uint8_t nonce[12];

	nonce_of(nonce, i);
	br_gcm_reset(&g, nonce, 12);
	br_gcm_aad_inject(&g, nonce + 8, 4);
	br_gcm_flip(&g);
	br_gcm_run(&g, encrypt, p, CHUNK);
	if (encrypt) {
		br_gcm_get_tag(&g, tag);
		return 1;
	}
	return (int)br_gcm_check_tag(&g, tag);
}

/* Decrypts n chunks at buf in place with tags[pass parity]: 1 if all were
 * authentic. ops NULL: BearSSL. */
static int pass(const struct aesgcm_ops *ops, const struct aesgcm_key *k, const struct br *b,
		uint8_t *buf, size_t n, uint8_t (*tags)[2][16], int parity)
{
	int ok = 1;

	for (size_t i = 0; i < n; i++) {
		uint8_t nonce[12], *p = buf + i * CHUNK;
		const uint8_t *tag = tags[i][parity];
		nonce_of(nonce, (uint32_t)i);
		if (ops)
			ok &= ops->decrypt(k, nonce, NULL, nonce + 8, 4, p, CHUNK, tag);
		else
			ok &= br_chunk(b, (uint32_t)i, p, 0, (uint8_t *)tag);
	}
	return ok;
}

/* GB/s of n chunks at buf (ciphertext before and after), the best of
 * WINDOWS windows; 0 if a tag failed. */
static double speed(const struct aesgcm_ops *ops, const struct aesgcm_key *k, const struct br *b,
		    uint8_t *buf, size_t n, uint8_t (*tags)[2][16])
{
	double best = 0;
	int parity = 0;

	for (int w = 0; w < WINDOWS; w++) {
		double t0 = cpu_s(), t;
		size_t bytes = 0;
		do {
			if (!pass(ops, k, b, buf, n, tags, parity))
				return 0;
			parity ^= 1;
			bytes += n * CHUNK;
			t = cpu_s() - t0;
		} while (t < 0.2);
		double gbs = (double)bytes / t * 1e-9;
		best = gbs > best ? gbs : best;
	}
	if (parity && !pass(ops, k, b, buf, n, tags, parity))
		return 0;
	return best;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 0) : 64;
	size_t n = mib * (1u << 20) / CHUNK;
	uint8_t key[32];
	struct br b;

	if (!n) {
		fprintf(stderr, "gcmbench: %s MiB: want at least one %u-byte chunk\n", argv[1],
			CHUNK);
		return 2;
	}
	for (size_t i = 0; i < sizeof key; i++)
		key[i] = (uint8_t)(i * 37 + 11);
	if (br_setup(&b, key)) {
		fprintf(stderr, "gcmbench: BearSSL has no AES-NI/PCLMULQDQ code for this CPU\n");
		return 1;
	}
	uint8_t *buf = aligned_alloc(64, n * CHUNK);
	uint8_t(*tags)[2][16] = malloc(n * sizeof *tags);
	if (!buf || !tags)
		return 1;
	/* tags[i][0] for the ciphertext, tags[i][1] for the plaintext read as
	 * ciphertext (encrypting the ciphertext gives the plaintext back) */
	for (size_t i = 0; i < n * CHUNK; i++)
		buf[i] = (uint8_t)(i * 131 >> 3);
	for (size_t i = 0; i < n; i++) {
		br_chunk(&b, (uint32_t)i, buf + i * CHUNK, 1, tags[i][0]);
		br_chunk(&b, (uint32_t)i, buf + i * CHUNK, 1, tags[i][1]);
		br_chunk(&b, (uint32_t)i, buf + i * CHUNK, 1, tags[i][0]);
	}

	printf("AES-256-GCM decrypt + verify, per core, CPU time, %u-byte chunks, best of %d\n",
	       CHUNK, WINDOWS);
	printf("| implementation        | chunk in L2 GB/s | %zu MiB slot GB/s |\n", mib);
	printf("| --------------------- | ---------------- | ---------------- |\n");
	for (size_t i = 0;; i++) {
		const struct aesgcm_ops *ops = aesgcm_find_nth(plat_cpu_features(), i);
		struct aesgcm_key k;
		char name[64];

		if (ops)
			ops->setkey(&k, key);
		snprintf(name, sizeof name, "%s", ops ? ops->name : "BearSSL x86ni+pclmul");
		double c = speed(ops, &k, &b, buf, 1, tags);
		double s = speed(ops, &k, &b, buf, n, tags);
		printf("| %-21s | %16.2f | %16.2f |\n", name, c, s);
		if (c == 0 || s == 0)
			fprintf(stderr, "gcmbench: %s: a tag failed\n", name);
		aesgcm_zeroize(&k, sizeof k);
		if (!ops)
			break;
	}
	free(buf);
	free(tags);
	return 0;
}
