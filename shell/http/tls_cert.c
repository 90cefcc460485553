/*
 * shell/http/tls_cert.c — the guest's TLS key and its self-signed
 * certificate (tls.h), written with the DER writer (der.h) after RFC 5280
 * §4.1 and RFC 5480 (ECDSA P-256 keys and signatures).
 *
 * Nobody can check this certificate against an authority: the evidence is
 * what vouches for the key (K, tls.h). It is well formed so that stock
 * TLS stacks take it, nothing more.
 */
#include "tls.h"
#include "der.h"

#include "../../llm/seal.h"

/* RFC 5480 §2.1.1 id-ecPublicKey, secp256r1; RFC 5758 §3.2 ecdsa-with-SHA256 */
#define OID_EC_PUBLIC_KEY 1, 2, 840, 10045, 2, 1
#define OID_P256 1, 2, 840, 10045, 3, 1, 7
#define OID_ECDSA_SHA256 1, 2, 840, 10045, 4, 3, 2

void tls_binding(const uint8_t *spki, size_t n, uint8_t k[32])
{
	br_sha256_context c;

	br_sha256_init(&c);
	br_sha256_update(&c, TLS_LABEL, sizeof TLS_LABEL - 1);
	br_sha256_update(&c, spki, n);
	br_sha256_out(&c, k);
}

/* RFC 5480 §2: SEQUENCE { SEQUENCE { id-ecPublicKey, secp256r1 }, BIT STRING point } */
size_t tls_spki_p256(const uint8_t *pub, size_t pub_len, uint8_t *out, size_t cap)
{
	struct der d = {out, 0, cap, false};
	size_t spki = der_open(&d, 0x30), alg = der_open(&d, 0x30);

	DER_OID(&d, OID_EC_PUBLIC_KEY);
	DER_OID(&d, OID_P256);
	der_close(&d, alg);
	size_t bits = der_open(&d, 0x03);
	der_put1(&d, 0); /* no unused bits */
	der_put(&d, pub, pub_len);
	der_close(&d, bits);
	der_close(&d, spki);
	return d.over ? 0 : d.n;
}

/* Name ::= SEQUENCE { SET { SEQUENCE { id-at-commonName, UTF8String "llmk" } } } */
static void name_llmk(struct der *d)
{
	size_t name = der_open(d, 0x30), rdn = der_open(d, 0x31), atv = der_open(d, 0x30);

	DER_OID(d, 2, 5, 4, 3);
	der_prim(d, 0x0c, "llmk", 4);
	der_close(d, atv);
	der_close(d, rdn);
	der_close(d, name);
}

static void alg_ecdsa_sha256(struct der *d)
{
	size_t alg = der_open(d, 0x30);

	DER_OID(d, OID_ECDSA_SHA256); /* RFC 5758 §3.2: no parameters */
	der_close(d, alg);
}

/* TBSCertificate (RFC 5280 §4.1.2) into d. */
static void tbs(struct der *d, const struct tls_key *k, const uint8_t serial[16])
{
	size_t t = der_open(d, 0x30), v = der_open(d, 0xa0);

	der_small_int(d, 2); /* v3 */
	der_close(d, v);
	der_integer(d, serial, 16);
	alg_ecdsa_sha256(d);
	name_llmk(d);
	/* §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050 */
	size_t val = der_open(d, 0x30);
	der_prim(d, 0x17, "260101000000Z", 13);
	der_prim(d, 0x18, "20991231235959Z", 15);
	der_close(d, val);
	name_llmk(d);
	der_put(d, k->spki, k->spki_len);
	/* [3] { SEQUENCE { keyUsage (2.5.29.15), critical, digitalSignature } } */
	size_t ext = der_open(d, 0xa3), exts = der_open(d, 0x30), e = der_open(d, 0x30);
	DER_OID(d, 2, 5, 29, 15);
	der_prim(d, 0x01, "\xff", 1);
	size_t os = der_open(d, 0x04);
	der_prim(d, 0x03, "\x07\x80", 2); /* bit 0, seven unused bits */
	der_close(d, os);
	der_close(d, e);
	der_close(d, exts);
	der_close(d, ext);
	der_close(d, t);
}

int tls_key_make(struct tls_key *k)
{
	const br_ec_impl *ec = br_ec_get_default();
	br_hmac_drbg_context rng;
	br_ec_public_key pk;
	uint8_t seed[48], serial[16], h[32], sig[80];
	uint8_t tbuf[TLS_CERT_MAX];
	struct der t = {tbuf, 0, sizeof tbuf, false};

	memset(k, 0, sizeof *k);
	if (plat_entropy(seed, sizeof seed) || plat_entropy(serial, sizeof serial))
		return -LLMK_EIO;
	br_hmac_drbg_init(&rng, &br_sha256_vtable, seed, sizeof seed);
	seal_zeroize(seed, sizeof seed);
	size_t xn = br_ec_keygen(&rng.vtable, ec, &k->sk, k->x, BR_EC_secp256r1);
	seal_zeroize(&rng, sizeof rng);
	k->pub_len = xn ? br_ec_compute_pub(ec, &pk, k->pub, &k->sk) : 0;
	k->spki_len = k->pub_len ? tls_spki_p256(k->pub, k->pub_len, k->spki, sizeof k->spki) : 0;
	if (!k->spki_len) {
		tls_key_wipe(k);
		return -LLMK_EIO;
	}
	tls_binding(k->spki, k->spki_len, k->k);
	serial[0] = (uint8_t)((serial[0] & 0x7f) | 0x40); /* positive, all 16 bytes used */
	tbs(&t, k, serial);
	if (t.over) {
		tls_key_wipe(k);
		return -LLMK_ERANGE;
	}
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, t.p, t.n);
	br_sha256_out(&c, h);
	size_t sn = br_ecdsa_sign_asn1_get_default()(ec, &br_sha256_vtable, h, &k->sk, sig);
	/* Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue } */
	struct der d = {k->cert, 0, sizeof k->cert, false};
	size_t cert = der_open(&d, 0x30);
	der_put(&d, t.p, t.n);
	alg_ecdsa_sha256(&d);
	size_t bits = der_open(&d, 0x03);
	der_put1(&d, 0);
	der_put(&d, sig, sn);
	der_close(&d, bits);
	der_close(&d, cert);
	if (!sn || d.over) {
		tls_key_wipe(k);
		return sn ? -LLMK_ERANGE : -LLMK_EIO;
	}
	k->cert_len = d.n;
	k->chain.data = k->cert;
	k->chain.data_len = k->cert_len;
	return 0;
}

void tls_key_wipe(struct tls_key *k)
{
	seal_zeroize(k, sizeof *k);
}
