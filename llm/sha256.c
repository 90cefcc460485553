/*
 * llm/sha256.c — SHA-256 with the x86 SHA extensions where the CPU has them,
 * else BearSSL (llm/sha256.h). The padding and length encoding are
 * FIPS 180-4 §5.1.1; the block function is the only part that differs.
 */
#include "sha256.h"

static bool use_ni(void)
{
#if defined(__x86_64__)
	static int ni_state = -1; /* unknown, 0, 1 */

	if (ni_state < 0)
		ni_state = (plat_cpu_features() & PLAT_CPU_SHA) != 0;
	return ni_state == 1;
#else
	return false;
#endif
}

const char *llm_sha256_impl(void)
{
	return use_ni() ? "sha-ni" : "bearssl";
}

void llm_sha256_init(struct llm_sha256 *c)
{
	static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
				       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

	c->ni = use_ni();
	c->total = 0;
	if (c->ni)
		memcpy(c->h, iv, sizeof iv);
	else
		br_sha256_init(&c->br);
}

#if defined(__x86_64__)
void llm_sha256_update(struct llm_sha256 *c, const void *p, size_t n)
{
	const uint8_t *q = p;
	size_t have = (size_t)(c->total % 64);

	if (!c->ni) {
		br_sha256_update(&c->br, p, n);
		return;
	}
	c->total += n;
	if (have) {
		size_t take = 64 - have < n ? 64 - have : n;
		memcpy(c->buf + have, q, take);
		q += take;
		n -= take;
		if (have + take < 64)
			return;
		sha256_ni_blocks(c->h, c->buf, 1);
	}
	if (n >= 64) {
		sha256_ni_blocks(c->h, q, n / 64);
		q += n / 64 * 64;
		n %= 64;
	}
	memcpy(c->buf, q, n);
}

void llm_sha256_out(const struct llm_sha256 *c, uint8_t out[32])
{
	uint8_t last[128];
	uint32_t h[8];
	size_t have = (size_t)(c->total % 64), len;
	uint64_t bits = c->total * 8;

	if (!c->ni) {
		br_sha256_out(&c->br, out);
		return;
	}
	memcpy(h, c->h, sizeof h);
	memcpy(last, c->buf, have);
	last[have] = 0x80;
	len = have < 56 ? 64 : 128;
	memset(last + have + 1, 0, len - have - 1 - 8);
	for (int i = 0; i < 8; i++)
		last[len - 1 - i] = (uint8_t)(bits >> (8 * i));
	sha256_ni_blocks(h, last, len / 64);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(h[i] >> 8);
		out[4 * i + 3] = (uint8_t)h[i];
	}
}
#else
void llm_sha256_update(struct llm_sha256 *c, const void *p, size_t n)
{
	br_sha256_update(&c->br, p, n);
}

void llm_sha256_out(const struct llm_sha256 *c, uint8_t out[32])
{
	br_sha256_out(&c->br, out);
}
#endif
