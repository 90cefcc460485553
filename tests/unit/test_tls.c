/*
 * tests/unit/test_tls.c — shell/http/tls_cert.c and the attested TLS
 * binding (docs/tls.md): BearSSL's own X.509 decoder and ECDSA verifier
 * read the certificate the guest writes; K against a value computed
 * outside (Python's hashlib over the same bytes); the evidence's PUBKEY is
 * K; /v1/attestation/activate's refusals and, with swtpm, its proof against
 * an HMAC computed here from the secret the client's credential carries.
 */
#include "test.h"
#include "shell_fixture.h"

#include <stdlib.h>

#include "../../shell/cmd_attest.h"
#include "../../kernel/attest.h"
#include "../../shell/evidence.h"
#include "../../shell/http/tls.h"
#include "../../shell/shell.h"
#include "../../tools/host/host.h"
#include "../../tools/verify/verify.h"
#include "vtpm.h"

static const uint8_t *find(const uint8_t *hay, size_t n, const void *needle, size_t m)
{
	for (size_t i = 0; i + m <= n; i++)
		if (!memcmp(hay + i, needle, m))
			return hay + i;
	return NULL;
}

/* The length of the DER element at p (header included), short or long form. */
static size_t der_len(const uint8_t *p, size_t *hdr)
{
	if (p[1] < 0x80) {
		*hdr = 2;
		return 2 + p[1];
	}
	size_t l = 0, k = p[1] & 0x7f;
	for (size_t i = 0; i < k; i++)
		l = l << 8 | p[2 + i];
	*hdr = 2 + k;
	return 2 + k + l;
}

TEST(tls_cert_is_read_by_bearssl_with_the_key_and_its_own_signature)
{
	struct tls_key *k = calloc(1, sizeof *k), *k2 = calloc(1, sizeof *k2);
	br_x509_decoder_context dc;
	const br_ec_impl *ec = br_ec_get_default();

	CHECK_EQ_INT(tls_key_make(k), 0);
	CHECK(k->cert_len > 200 && k->cert_len <= TLS_CERT_MAX);
	br_x509_decoder_init(&dc, NULL, NULL);
	br_x509_decoder_push(&dc, k->cert, k->cert_len);
	CHECK_EQ_INT(br_x509_decoder_last_error(&dc), 0);
	br_x509_pkey *pk = br_x509_decoder_get_pkey(&dc);
	CHECK(pk && pk->key_type == BR_KEYTYPE_EC && pk->key.ec.curve == BR_EC_secp256r1);
	CHECK(pk && pk->key.ec.qlen == 65 && !memcmp(pk->key.ec.q, k->pub, 65));
	CHECK(!br_x509_decoder_isCA(&dc));
	CHECK_EQ_INT(br_x509_decoder_get_signer_key_type(&dc), BR_KEYTYPE_EC);
	/* the private key is the certificate's: what it signs, the certified key verifies */
	uint8_t h[32], sig[80];
	memset(h, 0x5a, sizeof h);
	size_t sn = br_ecdsa_sign_asn1_get_default()(ec, &br_sha256_vtable, h, &k->sk, sig);
	CHECK(sn > 0 && pk && br_ecdsa_vrfy_asn1_get_default()(ec, h, 32, &pk->key.ec, sig, sn) == 1);
	/* self-signed: SHA-256 of the TBSCertificate, the signature BIT STRING at the end */
	size_t hdr, thdr, tlen;
	CHECK_EQ_INT(der_len(k->cert, &hdr), k->cert_len);
	const uint8_t *tbs = k->cert + hdr;
	tlen = der_len(tbs, &thdr);
	const uint8_t *alg = tbs + tlen, *bits = alg + 2 + alg[1];
	CHECK(bits[0] == 0x03 && bits[2] == 0 && bits + 2 + bits[1] == k->cert + k->cert_len);
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, tbs, tlen);
	br_sha256_out(&c, h);
	CHECK(pk && br_ecdsa_vrfy_asn1_get_default()(ec, h, 32, &pk->key.ec, bits + 3,
						       bits[1] - 1u) == 1);
	/* CN=llmk, the fixed validity, a 16-byte positive serial */
	CHECK(find(k->cert, k->cert_len, "\x0c\x04llmk", 6));
	CHECK(find(k->cert, k->cert_len, "\x17\x0d" "260101000000Z", 15));
	CHECK(find(k->cert, k->cert_len, "\x18\x0f" "20991231235959Z", 17));
	const uint8_t *ser = tbs + thdr + 5; /* after [0] { INTEGER 2 } */
	CHECK(ser[0] == 0x02 && ser[1] == 16 && (ser[2] & 0xc0) == 0x40);
	/* K is over the SPKI as it stands in the certificate */
	CHECK(find(k->cert, k->cert_len, k->spki, k->spki_len));
	uint8_t want[32];
	tls_binding(k->spki, k->spki_len, want);
	CHECK(!memcmp(want, k->k, 32));
	/* every make is a new key and serial */
	CHECK_EQ_INT(tls_key_make(k2), 0);
	CHECK(memcmp(k->pub, k2->pub, 65) && memcmp(k->k, k2->k, 32) &&
	      memcmp(ser + 2, k2->cert + (ser + 2 - k->cert), 16));
	tls_key_wipe(k);
	static const uint8_t zero[sizeof *k];
	CHECK(!memcmp(k, zero, sizeof *k));
	free(k);
	free(k2);
}

TEST(tls_binding_k_is_sha256_of_the_label_and_the_spki)
{
	uint8_t pub[65], spki[TLS_SPKI_MAX], kk[32];
	static const uint8_t head[] = {0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce,
				       0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d,
				       0x03, 0x01, 0x07, 0x03, 0x42, 0x00};
	/* python3: sha256(b"llmk tls v1" + head + bytes([4]) + bytes(range(1, 65))) */
	static const char want[] = "1844eb1cd892dc192bada741dc999493a477685c6914cea18accb3bc8a67be37";
	char hex[65];

	pub[0] = 4;
	for (int i = 1; i < 65; i++)
		pub[i] = (uint8_t)i;
	size_t n = tls_spki_p256(pub, sizeof pub, spki, sizeof spki);
	CHECK_EQ_INT(n, 91);
	CHECK(!memcmp(spki, head, sizeof head) && !memcmp(spki + sizeof head, pub, 65));
	tls_binding(spki, n, kk);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", kk[i]);
	CHECK_STR(hex, want);
	CHECK_EQ_INT(tls_spki_p256(pub, sizeof pub, spki, 90), 0);
}

TEST(tls_activate_refuses_without_attestation_and_after_one_attempt)
{
	struct tls_attest a;
	uint8_t k[32] = {1}, proof[32], cred[64] = {0};
	char why[192];
	char *old = vtpm_env_set(NULL); /* no TPM: a credential never opens */

	memset(&a, 0, sizeof a);
	CHECK_EQ_INT(tls_activate(&a, k, cred, sizeof cred, proof, why, sizeof why), 409);
	CHECK(strstr(why, "POST /v1/attestation first") != NULL);
	a.pending = true;
	a.nonce_len = 8;
	memset(a.nonce, 7, 8);
	CHECK_EQ_INT(tls_activate(&a, k, cred, sizeof cred, proof, why, sizeof why), 403);
	CHECK(strstr(why, "did not open") != NULL);
	static const struct tls_attest zero;
	CHECK(!memcmp(&a, &zero, sizeof a));
	CHECK_EQ_INT(tls_activate(&a, k, cred, sizeof cred, proof, why, sizeof why), 409);
	host_attest_reset();
	vtpm_env_restore(old);
}

TEST(tls_attestation_binds_k_and_activate_proves_the_credential_opened)
{
	char why[240];
	const char *vt = test_vtpm_path(why, sizeof why);
	if (!vt)
		SKIP("no swtpm: %s", why);
	char *old = vtpm_env_set(vt);
	struct shell_fixture fx;
	struct tls_key *key = calloc(1, sizeof *key);
	struct evidence_inputs in;
	struct plat_attest_info info;
	struct evidence_rec recs[64];
	static uint8_t cred[2048];
	uint8_t rd[64], *buf = NULL, secret[32], proof[32], want[32];
	size_t len = 0, cn = 0, sn = 0;
	char src[96], err[128];

	CHECK_EQ_INT(fixture_open(&fx, NULL, NULL), 0);
	CHECK_EQ_INT(tls_key_make(key), 0);
	memset(&in, 0, sizeof in);
	in.nonce_len = 32;
	memset(in.nonce, 0x3c, 32);
	memcpy(in.pubkey, key->k, 32);
	CHECK_EQ_INT(shell_attest_bundle(fx.sh, "test", "vtpm", &in, &info, &buf, &len, rd, src,
					 sizeof src), 0);
	int n = buf ? evidence_parse(buf, len, recs, 64, err, sizeof err) : -1;
	const struct evidence_rec *pub = n > 0 ? evidence_find(recs, n, ATTEST_REC_PUBKEY, NULL) : NULL;
	CHECK(pub && pub->len == 32 && !memcmp(pub->val, key->k, 32));
	struct bundle *b = calloc(1, sizeof *b);
	CHECK_EQ_INT(test_vtpm_bundle(buf, len, b), 0);
	CHECK_EQ_INT(release_credential(b, cred, sizeof cred, &cn, secret, &sn), 0);
	CHECK(cn > 0 && sn == 32);

	struct tls_attest a = {.pending = true, .nonce_len = 32};
	memset(a.nonce, 0x3c, 32);
	CHECK_EQ_INT(tls_activate(&a, key->k, cred, cn, proof, why, sizeof why), 200);
	CHECK(a.ready && !a.pending); /* a release (POST /v1/keys) may follow */
	/* HMAC-SHA256(secret, "llmk tls v1 activate" || K || nonce), by BearSSL's HMAC here */
	br_hmac_key_context kc;
	br_hmac_context hc;
	br_hmac_key_init(&kc, &br_sha256_vtable, secret, 32);
	br_hmac_init(&hc, &kc, 0);
	br_hmac_update(&hc, "llmk tls v1 activate", 20);
	br_hmac_update(&hc, key->k, 32);
	br_hmac_update(&hc, in.nonce, 32);
	br_hmac_out(&hc, want);
	CHECK(!memcmp(proof, want, 32));
	/* the same credential again: the attestation is spent */
	CHECK_EQ_INT(tls_activate(&a, key->k, cred, cn, proof, why, sizeof why), 409);
	free(b);
	plat_free(buf, EVIDENCE_MAX);
	free(key);
	fixture_close(&fx);
	host_attest_reset();
	vtpm_env_restore(old);
}
