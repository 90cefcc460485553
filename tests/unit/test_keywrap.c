/*
 * tests/unit/test_keywrap.c — shell/keywrap.c: round trip, every byte of the
 * blob refused when changed, the wrong key pair refused; and the primitives
 * it stands on checked against their RFCs through the same BearSSL calls
 * (X25519: RFC 7748 §5.2 and §6.1; HKDF-SHA-256: RFC 5869 test case 1).
 */
#include "test.h"

#include <bearssl.h>

#include "../../shell/keywrap.h"

static void unhex(const char *h, uint8_t *out)
{
	for (size_t i = 0; h[2 * i]; i++) {
		unsigned v;
		sscanf(h + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
}

static void fill(uint8_t *p, size_t n, uint8_t start)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(start + 7 * i);
}

TEST(x25519_matches_rfc7748_section_6_1_alice_and_bob)
{
	uint8_t a[32], b[32], apub[32], bpub[32], want[32], k1[32], k2[32];
	unhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a", a);
	unhex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb", b);
	CHECK_EQ_INT(keywrap_public(a, apub), 0);
	CHECK_EQ_INT(keywrap_public(b, bpub), 0);
	unhex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a", want);
	CHECK(memcmp(apub, want, 32) == 0);
	unhex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f", want);
	CHECK(memcmp(bpub, want, 32) == 0);
	CHECK_EQ_INT(keywrap_x25519(k1, a, bpub), 0);
	CHECK_EQ_INT(keywrap_x25519(k2, b, apub), 0);
	unhex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742", want);
	CHECK(memcmp(k1, want, 32) == 0);
	CHECK(memcmp(k2, want, 32) == 0);
}

TEST(x25519_matches_rfc7748_section_5_2_and_clamps_the_scalar)
{
	uint8_t k[32], u[32], out[32], want[32];
	unhex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4", k);
	unhex("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c", u);
	unhex("c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552", want);
	CHECK_EQ_INT(keywrap_x25519(out, k, u), 0);
	CHECK(memcmp(out, want, 32) == 0);
	/* the bits clamping sets or clears do not change the result */
	k[0] ^= 7;
	k[31] ^= 0xc0;
	CHECK_EQ_INT(keywrap_x25519(out, k, u), 0);
	CHECK(memcmp(out, want, 32) == 0);
	/* u = 0 has small order: all-zero output, refused */
	memset(u, 0, 32);
	CHECK_EQ_INT(keywrap_x25519(out, k, u), -LLMK_EINVAL);
}

TEST(hkdf_sha256_matches_rfc5869_test_case_1)
{
	uint8_t ikm[22], salt[13], info[10], okm[42], want[42];
	memset(ikm, 0x0b, sizeof ikm);
	unhex("000102030405060708090a0b0c", salt);
	unhex("f0f1f2f3f4f5f6f7f8f9", info);
	unhex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
	      want);
	br_hkdf_context h;
	br_hkdf_init(&h, &br_sha256_vtable, salt, sizeof salt);
	br_hkdf_inject(&h, ikm, sizeof ikm);
	br_hkdf_flip(&h);
	br_hkdf_produce(&h, info, sizeof info, okm, sizeof okm);
	CHECK(memcmp(okm, want, sizeof okm) == 0);
}

struct wrap_case {
	uint8_t priv[32], pub[32], rd[64], key[32], seed[32], blob[KEYWRAP_SIZE];
};

static void make_case(struct wrap_case *c)
{
	fill(c->priv, 32, 1);
	fill(c->rd, 64, 2);
	fill(c->key, 32, 3);
	fill(c->seed, 32, 4);
	CHECK_EQ_INT(keywrap_public(c->priv, c->pub), 0);
	CHECK_EQ_INT(keywrap_wrap(c->pub, c->rd, c->key, c->seed, c->blob), 0);
}

TEST(keywrap_round_trip_gives_back_the_key_and_the_report_data)
{
	struct wrap_case c;
	uint8_t rd[64], key[32];
	make_case(&c);
	CHECK(memcmp(c.blob, KEYWRAP_MAGIC, 8) == 0);
	CHECK(memcmp(c.blob + 8, c.rd, 64) == 0);
	/* the key is not in the blob in the clear */
	for (size_t i = 0; i + 32 <= KEYWRAP_SIZE; i++)
		CHECK(memcmp(c.blob + i, c.key, 32) != 0);
	CHECK_EQ_INT(keywrap_unwrap(c.priv, c.pub, c.blob, sizeof c.blob, rd, key), 0);
	CHECK(memcmp(key, c.key, 32) == 0);
	CHECK(memcmp(rd, c.rd, 64) == 0);
	/* another seed: another verifier key, IV and ciphertext, the same key inside */
	uint8_t blob2[KEYWRAP_SIZE];
	c.seed[0] ^= 0x80;
	CHECK_EQ_INT(keywrap_wrap(c.pub, c.rd, c.key, c.seed, blob2), 0);
	CHECK(memcmp(blob2 + 72, c.blob + 72, 32) != 0);
	CHECK(memcmp(blob2 + 104, c.blob + 104, 12) != 0);
	CHECK(memcmp(blob2 + 116, c.blob + 116, 32) != 0);
	CHECK_EQ_INT(keywrap_unwrap(c.priv, c.pub, blob2, sizeof blob2, rd, key), 0);
	CHECK(memcmp(key, c.key, 32) == 0);
}

TEST(keywrap_refuses_every_changed_byte_of_the_blob)
{
	struct wrap_case c;
	uint8_t rd[64], key[32];
	make_case(&c);
	for (size_t i = 0; i < KEYWRAP_SIZE; i++) {
		for (int bit = 0; bit < 8; bit += 7) {
			uint8_t b[KEYWRAP_SIZE];
			memcpy(b, c.blob, sizeof b);
			b[i] ^= (uint8_t)(1u << bit);
			int want = i < 8 ? -LLMK_EFORMAT : -LLMK_EAUTH;
			int r = keywrap_unwrap(c.priv, c.pub, b, sizeof b, rd, key);
			if (r != want)
				fprintf(stderr, "  byte %zu bit %d: %d\n", i, bit, r);
			CHECK_EQ_INT(r, want);
			/* nothing is handed out on failure */
			uint8_t z[64] = {0};
			CHECK(memcmp(key, z, 32) == 0 && memcmp(rd, z, 64) == 0);
		}
	}
}

TEST(keywrap_refuses_the_wrong_key_pair_and_wrong_sizes)
{
	struct wrap_case c;
	uint8_t rd[64], key[32], other[32], other_pub[32];
	make_case(&c);
	memcpy(other, c.priv, 32);
	other[5] ^= 1;
	CHECK_EQ_INT(keywrap_public(other, other_pub), 0);
	CHECK_EQ_INT(keywrap_unwrap(other, other_pub, c.blob, sizeof c.blob, rd, key), -LLMK_EAUTH);
	/* the right private key with another public key: the HKDF info differs */
	CHECK_EQ_INT(keywrap_unwrap(c.priv, other_pub, c.blob, sizeof c.blob, rd, key), -LLMK_EAUTH);
	CHECK_EQ_INT(keywrap_unwrap(c.priv, c.pub, c.blob, sizeof c.blob - 1, rd, key), -LLMK_EFORMAT);
	uint8_t longer[KEYWRAP_SIZE + 1] = {0};
	memcpy(longer, c.blob, KEYWRAP_SIZE);
	CHECK_EQ_INT(keywrap_unwrap(c.priv, c.pub, longer, sizeof longer, rd, key), -LLMK_EFORMAT);
	/* a small-order guest key is refused at wrap time, and the output is zeroed */
	uint8_t zero_pub[32] = {0}, blob[KEYWRAP_SIZE];
	CHECK_EQ_INT(keywrap_wrap(zero_pub, c.rd, c.key, c.seed, blob), -LLMK_EINVAL);
	for (size_t i = 0; i < KEYWRAP_SIZE; i++)
		CHECK(blob[i] == 0);
}
