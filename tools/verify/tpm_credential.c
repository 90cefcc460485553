/*
 * tools/verify/tpm_credential.c — TPM2_MakeCredential in software (TPM 2.0
 * Part 1 §24, KDFs of Part 1 §11.4.10); see tpm_credential.h.
 */
#include "tpm_credential.h"

#include <bearssl.h>
#include <string.h>

#include "../../drivers/tpm2.h"

static void be16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int tpm_credential_name(const uint8_t *pub, size_t n, uint8_t name[34])
{
	if (n < 4 || (pub[2] << 8 | pub[3]) != TPM2_ALG_SHA256)
		return -LLMK_ENOTSUP;
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, pub, n);
	be16(name, TPM2_ALG_SHA256);
	br_sha256_out(&c, name + 2);
	return 0;
}

/*
 * Part 1 §11.4.10.2 KDFa, SP 800-108 counter mode with HMAC-SHA-256: block
 * i = HMAC(key, i || label || 0 || contextU || contextV || bits), counter
 * and bits big-endian u32, the label with its terminating NUL.
 */
static void kdfa(const uint8_t *key, size_t klen, const char *label, const uint8_t *u,
		 size_t ulen, uint32_t bits, uint8_t *out)
{
	br_hmac_key_context kc;
	br_hmac_context hc;
	uint8_t blk[32], b[4];
	size_t want = bits / 8;

	br_hmac_key_init(&kc, &br_sha256_vtable, key, klen);
	for (uint32_t i = 1; want; i++) {
		size_t k = want < 32 ? want : 32;
		br_hmac_init(&hc, &kc, 0);
		be32(b, i);
		br_hmac_update(&hc, b, 4);
		br_hmac_update(&hc, label, strlen(label) + 1);
		br_hmac_update(&hc, u, ulen);
		be32(b, bits);
		br_hmac_update(&hc, b, 4);
		br_hmac_out(&hc, blk);
		memcpy(out, blk, k);
		out += k;
		want -= k;
	}
	memset(blk, 0, sizeof blk);
}

/* Part 1 §11.4.10.3 KDFe, SP 800-56A concatenation with SHA-256: one block
 * = H(1 || Z || label || 0 || partyU || partyV), 256 bits. */
static void kdfe(const uint8_t z[32], const char *label, const uint8_t u[32], const uint8_t v[32],
		 uint8_t out[32])
{
	br_sha256_context c;
	uint8_t b[4];

	br_sha256_init(&c);
	be32(b, 1);
	br_sha256_update(&c, b, 4);
	br_sha256_update(&c, z, 32);
	br_sha256_update(&c, label, strlen(label) + 1);
	br_sha256_update(&c, u, 32);
	br_sha256_update(&c, v, 32);
	br_sha256_out(&c, out);
}

/* AES-128 CFB with a zero IV (Part 1 §24: the credential's symmetric key
 * is derived for this one message): c_i = p_i ^ E(c_{i-1}). E(x) of a block x
 * is BearSSL's CTR keystream with x as nonce and counter. */
static void cfb_encrypt(const uint8_t key[16], uint8_t *p, size_t n)
{
	br_aes_ct_ctr_keys k;
	uint8_t prev[16] = {0};

	br_aes_ct_ctr_init(&k, key, 16);
	for (size_t off = 0; off < n; off += 16) {
		size_t m = n - off < 16 ? n - off : 16;
		uint32_t cc = (uint32_t)prev[12] << 24 | (uint32_t)prev[13] << 16 |
			      (uint32_t)prev[14] << 8 | prev[15];
		br_aes_ct_ctr_run(&k, prev, cc, p + off, m);
		if (m == 16)
			memcpy(prev, p + off, 16);
	}
	memset(&k, 0, sizeof k);
}

/* The seed and the encrypted secret for an RSA 2048 EK: OAEP(SHA-256,
 * label "IDENTITY\0") of 32 random bytes (Part 1 §B.10.3). */
static int seed_rsa(const struct tpm2_pub *ek, const uint8_t rnd[64], uint8_t seed[32],
		    uint8_t *sec, size_t cap, size_t *slen, char *err, size_t errn)
{
	static const uint8_t e65537[3] = {1, 0, 1};
	uint8_t ebuf[4];
	br_rsa_public_key pk = {(unsigned char *)ek->n, ek->n_len, (unsigned char *)e65537, 3};
	br_hmac_drbg_context drbg;

	if (ek->exponent) {
		be32(ebuf, ek->exponent);
		pk.e = ebuf;
		pk.elen = 4;
	}
	memcpy(seed, rnd, 32);
	br_hmac_drbg_init(&drbg, &br_sha256_vtable, rnd + 32, 32);
	size_t n = br_rsa_oaep_encrypt_get_default()(&drbg.vtable, &br_sha256_vtable, "IDENTITY", 9,
						     &pk, sec, cap, seed, 32);
	if (!n) {
		plat_snprintf(err, errn, "RSA-OAEP to the EK's %u-byte modulus failed", ek->n_len);
		return -LLMK_EINVAL;
	}
	*slen = n;
	return 0;
}

/* For an ECC P-256 EK: an ephemeral key pair from rnd, Z = x(d_e * Q_EK),
 * seed = KDFe(Z, "IDENTITY", Q_e.x, Q_EK.x); the secret sent is Q_e as a
 * TPMS_ECC_POINT (Part 1 §C.6.4). */
static int seed_ecc(const struct tpm2_pub *ek, const uint8_t rnd[64], uint8_t seed[32],
		    uint8_t *sec, size_t cap, size_t *slen, char *err, size_t errn)
{
	const br_ec_impl *ec = br_ec_get_default();
	br_hmac_drbg_context drbg;
	br_ec_private_key sk;
	br_ec_public_key pk;
	uint8_t kbuf[BR_EC_KBUF_PRIV_MAX_SIZE], pbuf[BR_EC_KBUF_PUB_MAX_SIZE], q[65];

	if (ek->curve != TPM2_ECC_NIST_P256 || ek->x_len != 32 || ek->y_len != 32) {
		plat_snprintf(err, errn, "EK: curve %#x with %u/%u-byte coordinates (only P-256 here)",
			 ek->curve, ek->x_len, ek->y_len);
		return -LLMK_ENOTSUP;
	}
	if (cap < 68)
		return -LLMK_ERANGE;
	br_hmac_drbg_init(&drbg, &br_sha256_vtable, rnd, 64);
	if (!br_ec_keygen(&drbg.vtable, ec, &sk, kbuf, BR_EC_secp256r1) ||
	    br_ec_compute_pub(ec, &pk, pbuf, &sk) != 65) {
		plat_snprintf(err, errn, "ephemeral P-256 key: BearSSL refused");
		return -LLMK_EINVAL;
	}
	q[0] = 4;
	memcpy(q + 1, ek->x, 32);
	memcpy(q + 33, ek->y, 32);
	if (!ec->mul(q, sizeof q, sk.x, sk.xlen, BR_EC_secp256r1)) {
		plat_snprintf(err, errn, "EK's public point is not on P-256");
		memset(kbuf, 0, sizeof kbuf);
		return -LLMK_EINVAL;
	}
	kdfe(q + 1, "IDENTITY", pk.q + 1, ek->x, seed);
	be16(sec, 32);
	memcpy(sec + 2, pk.q + 1, 32);
	be16(sec + 34, 32);
	memcpy(sec + 36, pk.q + 33, 32);
	*slen = 68;
	memset(kbuf, 0, sizeof kbuf);
	memset(q, 0, sizeof q);
	return 0;
}

int tpm_credential_make(const uint8_t *ek_pub, size_t ek_len, const uint8_t *name,
			size_t name_len, const uint8_t *secret, size_t secret_len,
			const uint8_t rnd[64], uint8_t *out, size_t cap, char *err, size_t errn)
{
	struct tpm2_pub ek;
	uint8_t seed[32], sym[16], hkey[32], ident[2 + 32], enc_sec[512];
	size_t slen = 0;
	int e;

	if ((e = tpm2_public_parse(ek_pub, ek_len, &ek, err, errn)))
		return e;
	if (ek.name_alg != TPM2_ALG_SHA256 || ek.sym_alg != TPM2_ALG_AES || ek.sym_bits != 128 ||
	    ek.sym_mode != TPM2_ALG_CFB || !(ek.attrs & TPM2_OA_DECRYPT) ||
	    !(ek.attrs & TPM2_OA_RESTRICTED)) {
		plat_snprintf(err, errn, "EK: not a restricted decryption key with SHA-256 and AES-128 CFB "
			 "(nameAlg %#x, symmetric %#x/%u/%#x, attributes %#x)", ek.name_alg, ek.sym_alg,
			 ek.sym_bits, ek.sym_mode, ek.attrs);
		return -LLMK_ENOTSUP;
	}
	if (name_len != 34 || secret_len < 1 || secret_len > 32) {
		plat_snprintf(err, errn, "name of %zu bytes (want 34), secret of %zu (want 1..32)", name_len,
			 secret_len);
		return -LLMK_EINVAL;
	}
	if (ek.type == TPM2_ALG_RSA)
		e = seed_rsa(&ek, rnd, seed, enc_sec, sizeof enc_sec, &slen, err, errn);
	else
		e = seed_ecc(&ek, rnd, seed, enc_sec, sizeof enc_sec, &slen, err, errn);
	if (e)
		return e;

	kdfa(seed, 32, "STORAGE", name, name_len, 128, sym);
	kdfa(seed, 32, "INTEGRITY", NULL, 0, 256, hkey);
	be16(ident, (uint32_t)secret_len);
	memcpy(ident + 2, secret, secret_len);
	size_t ilen = 2 + secret_len;
	cfb_encrypt(sym, ident, ilen);

	br_hmac_key_context kc;
	br_hmac_context hc;
	uint8_t mac[32];
	br_hmac_key_init(&kc, &br_sha256_vtable, hkey, 32);
	br_hmac_init(&hc, &kc, 0);
	br_hmac_update(&hc, ident, ilen);
	br_hmac_update(&hc, name, name_len);
	br_hmac_out(&hc, mac);

	size_t blob = 2 + 32 + ilen, total = 8 + 2 + blob + 2 + slen;
	if (total > cap) {
		plat_snprintf(err, errn, "credential of %zu bytes, room for %zu", total, cap);
		e = -LLMK_ERANGE;
	} else {
		uint8_t *p = out;
		be32(p, TPM2_CRED_MAGIC);
		be32(p + 4, TPM2_CRED_VERSION);
		be16(p + 8, (uint32_t)blob);
		be16(p + 10, 32);
		memcpy(p + 12, mac, 32);
		memcpy(p + 44, ident, ilen);
		be16(p + 44 + ilen, (uint32_t)slen);
		memcpy(p + 46 + ilen, enc_sec, slen);
		e = (int)total;
	}
	memset(seed, 0, sizeof seed);
	memset(sym, 0, sizeof sym);
	memset(hkey, 0, sizeof hkey);
	memset(&kc, 0, sizeof kc);
	memset(&hc, 0, sizeof hc);
	return e;
}
