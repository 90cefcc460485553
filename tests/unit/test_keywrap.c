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

/* A blob without a credential (snp, tdx) when cred_n is 0, else with a
 * stand-in credential of cred_n bytes whose "secret" is c->secret. */
struct wrap_case {
	uint8_t priv[32], pub[32], rd[64], key[32], seed[32], secret[32], cred[64];
	size_t cred_n, n;
	uint8_t blob[KEYWRAP_MAX];
};

static void make_case(struct wrap_case *c, size_t cred_n)
{
	fill(c->priv, 32, 1);
	fill(c->rd, 64, 2);
	fill(c->key, 32, 3);
	fill(c->seed, 32, 4);
	fill(c->secret, 32, 5);
	fill(c->cred, sizeof c->cred, 6);
	c->cred_n = cred_n;
	CHECK_EQ_INT(keywrap_public(c->priv, c->pub), 0);
	CHECK_EQ_INT(keywrap_wrap(c->pub, c->rd, c->key, c->seed, c->cred, cred_n, c->secret,
				  cred_n ? 32 : 0, c->blob, sizeof c->blob, &c->n), 0);
	CHECK_EQ_INT((int)c->n, (int)(KEYWRAP_MIN + cred_n));
}

static int unwrap(const struct wrap_case *c, const uint8_t *blob, size_t n, uint8_t rd[64],
		  uint8_t key[32])
{
	return keywrap_unwrap(c->priv, c->pub, blob, n, c->secret, c->cred_n ? 32 : 0, rd, key);
}

TEST(keywrap_round_trip_gives_back_the_key_and_the_report_data)
{
	static struct wrap_case c, d;
	uint8_t rd[64], key[32];
	for (size_t cred_n = 0; cred_n <= 40; cred_n += 40) {
		make_case(&c, cred_n);
		CHECK(memcmp(c.blob, KEYWRAP_MAGIC, 8) == 0);
		CHECK(memcmp(c.blob + 8, c.rd, 64) == 0);
		/* the key is not in the blob in the clear */
		for (size_t i = 0; i + 32 <= c.n; i++)
			CHECK(memcmp(c.blob + i, c.key, 32) != 0);
		CHECK_EQ_INT(unwrap(&c, c.blob, c.n, rd, key), 0);
		CHECK(memcmp(key, c.key, 32) == 0);
		CHECK(memcmp(rd, c.rd, 64) == 0);
		const uint8_t *cred;
		size_t cn;
		CHECK_EQ_INT(keywrap_parse(c.blob, c.n, rd, &cred, &cn), 0);
		CHECK(cn == cred_n && (!cn || memcmp(cred, c.cred, cn) == 0));
		/* another seed: another verifier key, IV and ciphertext, the same key inside */
		d = c;
		d.seed[0] ^= 0x80;
		CHECK_EQ_INT(keywrap_wrap(d.pub, d.rd, d.key, d.seed, d.cred, cred_n, d.secret,
					  cred_n ? 32 : 0, d.blob, sizeof d.blob, &d.n), 0);
		CHECK(memcmp(d.blob + 72, c.blob + 72, 32) != 0);
		CHECK(memcmp(d.blob + 104, c.blob + 104, 12) != 0);
		CHECK(memcmp(d.blob + KEYWRAP_HDR + cred_n, c.blob + KEYWRAP_HDR + cred_n, 32) != 0);
		CHECK_EQ_INT(unwrap(&d, d.blob, d.n, rd, key), 0);
		CHECK(memcmp(key, c.key, 32) == 0);
	}
}

/* What the forged-AK attacker holds: the X25519 key the evidence named,
 * not the TPM that alone recovers the credential's secret. */
TEST(keywrap_with_a_credential_does_not_open_without_its_secret)
{
	static struct wrap_case c;
	uint8_t rd[64], key[32], wrong[32];
	make_case(&c, 40);
	CHECK_EQ_INT(keywrap_unwrap(c.priv, c.pub, c.blob, c.n, NULL, 0, rd, key), -LLMK_EAUTH);
	memcpy(wrong, c.secret, 32);
	wrong[31] ^= 1;
	CHECK_EQ_INT(keywrap_unwrap(c.priv, c.pub, c.blob, c.n, wrong, 32, rd, key), -LLMK_EAUTH);
	/* and a secret where none was made does not open one without a credential */
	make_case(&c, 0);
	CHECK_EQ_INT(keywrap_unwrap(c.priv, c.pub, c.blob, c.n, c.secret, 32, rd, key), -LLMK_EAUTH);
	/* a credential needs its secret at wrap time too */
	CHECK_EQ_INT(keywrap_wrap(c.pub, c.rd, c.key, c.seed, c.cred, 40, NULL, 0, c.blob,
				  sizeof c.blob, &c.n), -LLMK_EINVAL);
}

TEST(keywrap_refuses_every_changed_byte_of_the_blob)
{
	static struct wrap_case c;
	static uint8_t b[KEYWRAP_MAX];
	uint8_t rd[64], key[32];
	make_case(&c, 40);
	for (size_t i = 0; i < c.n; i++) {
		for (int bit = 0; bit < 8; bit += 7) {
			memcpy(b, c.blob, c.n);
			b[i] ^= (uint8_t)(1u << bit);
			/* the magic and the credential's length are form; the rest is authenticated */
			int want = i < 8 || i == 116 || i == 117 ? -LLMK_EFORMAT : -LLMK_EAUTH;
			int r = unwrap(&c, b, c.n, rd, key);
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
	static struct wrap_case c;
	uint8_t rd[64], key[32], other[32], other_pub[32];
	make_case(&c, 0);
	memcpy(other, c.priv, 32);
	other[5] ^= 1;
	CHECK_EQ_INT(keywrap_public(other, other_pub), 0);
	CHECK_EQ_INT(keywrap_unwrap(other, other_pub, c.blob, c.n, NULL, 0, rd, key), -LLMK_EAUTH);
	/* the right private key with another public key: the HKDF info differs */
	CHECK_EQ_INT(keywrap_unwrap(c.priv, other_pub, c.blob, c.n, NULL, 0, rd, key), -LLMK_EAUTH);
	CHECK_EQ_INT(keywrap_unwrap(c.priv, c.pub, c.blob, c.n - 1, NULL, 0, rd, key), -LLMK_EFORMAT);
	CHECK_EQ_INT(keywrap_unwrap(c.priv, c.pub, c.blob, c.n + 1, NULL, 0, rd, key), -LLMK_EFORMAT);
	/* a small-order guest key is refused at wrap time, and the output is zeroed */
	uint8_t zero_pub[32] = {0};
	static uint8_t blob[KEYWRAP_MAX];
	size_t n;
	CHECK_EQ_INT(keywrap_wrap(zero_pub, c.rd, c.key, c.seed, NULL, 0, NULL, 0, blob, sizeof blob,
				  &n), -LLMK_EINVAL);
	for (size_t i = 0; i < KEYWRAP_MIN; i++)
		CHECK(blob[i] == 0);
}
