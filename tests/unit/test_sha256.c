/* tests/unit/test_sha256.c — llm/sha256.c: FIPS 180-2 example digests, and
 * the same digest as BearSSL for every length and split of random input. */
#include "test.h"

#include <stdlib.h>

#include "../../llm/sha256.h"

static void hex(const uint8_t *d, char *out)
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

TEST(sha256_matches_the_known_answers)
{
	static const struct {
		const char *msg, *want;
	} kat[] = {
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	};
	char got[65];
	uint8_t d[32];

	fprintf(stderr, "  implementation: %s\n", llm_sha256_impl());
	for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
		struct llm_sha256 c;
		llm_sha256_init(&c);
		llm_sha256_update(&c, kat[i].msg, strlen(kat[i].msg));
		llm_sha256_out(&c, d);
		hex(d, got);
		CHECK(strcmp(got, kat[i].want) == 0);
	}
	/* a million 'a' (FIPS 180-2 appendix B.3), fed in odd pieces */
	{
		struct llm_sha256 c;
		char a[997];
		size_t left = 1000000;
		memset(a, 'a', sizeof a);
		llm_sha256_init(&c);
		while (left) {
			size_t k = left < sizeof a ? left : sizeof a;
			llm_sha256_update(&c, a, k);
			left -= k;
		}
		llm_sha256_out(&c, d);
		hex(d, got);
		CHECK(strcmp(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
	}
}

TEST(sha256_same_as_bearssl_any_length_and_split)
{
	uint8_t *buf = malloc(70000);
	uint64_t seed = 5;

	for (size_t i = 0; i < 70000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		buf[i] = (uint8_t)(seed >> 56);
	}
	for (size_t n = 0; n < 70000; n = n < 300 ? n + 1 : n * 5 / 4 + 7) {
		struct llm_sha256 c;
		br_sha256_context b;
		uint8_t d1[32], d2[32], d3[32];
		size_t cut = n * 3 / 7;
		llm_sha256_init(&c);
		llm_sha256_update(&c, buf, cut);
		llm_sha256_out(&c, d3); /* mid-way: c stays usable */
		llm_sha256_update(&c, buf + cut, n - cut);
		llm_sha256_out(&c, d1);
		br_sha256_init(&b);
		br_sha256_update(&b, buf, n);
		br_sha256_out(&b, d2);
		if (memcmp(d1, d2, 32)) {
			fprintf(stderr, "  length %zu (cut at %zu) differs from BearSSL\n", n, cut);
			CHECK(0);
			break;
		}
		br_sha256_init(&b);
		br_sha256_update(&b, buf, cut);
		br_sha256_out(&b, d2);
		CHECK(memcmp(d3, d2, 32) == 0);
	}
	free(buf);
}
