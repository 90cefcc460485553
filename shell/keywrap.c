/*
 * shell/keywrap.c — the model key wrap of shell/keywrap.h: X25519, HKDF-SHA-256,
 * AES-256-GCM, all from BearSSL. The GCM pieces are aes_ct64 and
 * ghash_ctmul64 (constant-time integer code on every target): 32 bytes are
 * wrapped once per release, so speed does not matter and no CPU feature test
 * is needed in the kernel.
 */
#include "keywrap.h"
#include "../llm/seal.h" /* seal_zeroize */

#include <bearssl.h>

static const char keywrap_info_label[16] = "llmk key wrap v2";
static const char keywrap_iv_label[] = "llmk key wrap iv v1";

enum { KW_MAGIC = 0, KW_RD = 8, KW_EPUB = 72, KW_IV = 104, KW_CLEN = 116, KW_CRED = 118 };
_Static_assert(KW_CRED == KEYWRAP_HDR, "wrap layout");

int keywrap_x25519(uint8_t out[32], const uint8_t scalar[32], const uint8_t u[32])
{
	const br_ec_impl *ec = br_ec_get_default();
	memcpy(out, u, 32);
	/* BearSSL's Curve25519 mul takes RFC 7748 encodings (little-endian u,
	 * the scalar as X25519's 32 bytes) and clamps the scalar itself. */
	uint32_t ok = ec->mul(out, 32, scalar, 32, BR_EC_curve25519);
	/* RFC 7748 §6.1: an all-zero result means u had small order. Which u
	 * does that is public, so the final branch leaks nothing secret. */
	uint32_t acc = 0;
	for (int i = 0; i < 32; i++)
		acc |= out[i];
	ok &= (acc + 0xffu) >> 8;
	return ok ? 0 : -LLMK_EINVAL;
}

int keywrap_public(const uint8_t priv[32], uint8_t pub[32])
{
	static const uint8_t base[32] = {9};
	return keywrap_x25519(pub, priv, base);
}

/* k = HKDF-SHA-256(salt = report data, IKM = shared || S, info = label || guest || verifier). */
static void wrap_key(const uint8_t shared[32], const uint8_t *secret, size_t secret_n,
		     const uint8_t rd[64], const uint8_t guest_pub[32], const uint8_t eph_pub[32],
		     uint8_t k[32])
{
	uint8_t info[sizeof keywrap_info_label + 64];
	br_hkdf_context h;

	memcpy(info, keywrap_info_label, sizeof keywrap_info_label);
	memcpy(info + 16, guest_pub, 32);
	memcpy(info + 48, eph_pub, 32);
	br_hkdf_init(&h, &br_sha256_vtable, rd, 64);
	br_hkdf_inject(&h, shared, 32);
	if (secret_n)
		br_hkdf_inject(&h, secret, secret_n);
	br_hkdf_flip(&h);
	br_hkdf_produce(&h, info, sizeof info, k, 32);
	seal_zeroize(&h, sizeof h);
}

/* One AES-256-GCM pass over the 32-byte key in place, AAD = blob[0..aad). */
static void wrap_gcm(const uint8_t k[32], const uint8_t *blob, size_t aad, uint8_t *data,
		     int encrypt, br_gcm_context *g, br_aes_ct64_ctr_keys *aes)
{
	br_aes_ct64_ctr_init(aes, k, 32);
	br_gcm_init(g, &aes->vtable, br_ghash_ctmul64);
	br_gcm_reset(g, blob + KW_IV, 12);
	br_gcm_aad_inject(g, blob, aad);
	br_gcm_flip(g);
	br_gcm_run(g, encrypt, data, 32);
}

int keywrap_wrap(const uint8_t guest_pub[32], const uint8_t report_data[64], const uint8_t key[32],
		 const uint8_t eph_seed[32], const uint8_t *cred, size_t cred_n,
		 const uint8_t *secret, size_t secret_n, uint8_t *out, size_t cap, size_t *n)
{
	uint8_t shared[32], k[32], iv[32];
	br_sha256_context s;
	br_gcm_context g;
	br_aes_ct64_ctr_keys aes;
	int r;

	*n = 0;
	if ((cred_n == 0) != (secret_n == 0) || cred_n > KEYWRAP_CRED_MAX ||
	    secret_n > KEYWRAP_SECRET_MAX)
		return -LLMK_EINVAL;
	size_t ct = KEYWRAP_HDR + cred_n, total = ct + 48;
	if (cap < total)
		return -LLMK_ERANGE;
	memcpy(out + KW_MAGIC, KEYWRAP_MAGIC, 8);
	memcpy(out + KW_RD, report_data, 64);
	out[KW_CLEN] = (uint8_t)cred_n;
	out[KW_CLEN + 1] = (uint8_t)(cred_n >> 8);
	if (cred_n)
		memcpy(out + KW_CRED, cred, cred_n);
	if ((r = keywrap_public(eph_seed, out + KW_EPUB)) < 0 ||
	    (r = keywrap_x25519(shared, eph_seed, guest_pub)) < 0)
		goto out;
	br_sha256_init(&s);
	br_sha256_update(&s, keywrap_iv_label, sizeof keywrap_iv_label - 1);
	br_sha256_update(&s, eph_seed, 32);
	br_sha256_out(&s, iv);
	memcpy(out + KW_IV, iv, 12);
	wrap_key(shared, secret, secret_n, report_data, guest_pub, out + KW_EPUB, k);
	memcpy(out + ct, key, 32);
	wrap_gcm(k, out, ct, out + ct, 1, &g, &aes);
	br_gcm_get_tag(&g, out + ct + 32);
	*n = total;
out:
	if (r < 0)
		memset(out, 0, total);
	seal_zeroize(shared, sizeof shared);
	seal_zeroize(k, sizeof k);
	seal_zeroize(iv, sizeof iv);
	seal_zeroize(&s, sizeof s);
	seal_zeroize(&g, sizeof g);
	seal_zeroize(&aes, sizeof aes);
	return r;
}

int keywrap_parse(const uint8_t *blob, size_t n, uint8_t report_data[64], const uint8_t **cred,
		  size_t *cred_n)
{
	memset(report_data, 0, 64);
	*cred = NULL;
	*cred_n = 0;
	if (n < KEYWRAP_MIN || n > KEYWRAP_MAX || memcmp(blob, KEYWRAP_MAGIC, 8) != 0)
		return -LLMK_EFORMAT;
	size_t c = (size_t)blob[KW_CLEN] | (size_t)blob[KW_CLEN + 1] << 8;
	if (c > KEYWRAP_CRED_MAX || n != KEYWRAP_MIN + c)
		return -LLMK_EFORMAT;
	memcpy(report_data, blob + KW_RD, 64);
	*cred = c ? blob + KW_CRED : NULL;
	*cred_n = c;
	return 0;
}

int keywrap_unwrap(const uint8_t priv[32], const uint8_t pub[32], const uint8_t *blob, size_t n,
		   const uint8_t *secret, size_t secret_n, uint8_t report_data_out[64],
		   uint8_t key_out[32])
{
	uint8_t shared[32], k[32], pt[32], rd[64];
	const uint8_t *cred;
	size_t cred_n;
	br_gcm_context g;
	br_aes_ct64_ctr_keys aes;
	int r;

	memset(key_out, 0, 32);
	memset(report_data_out, 0, 64);
	if ((r = keywrap_parse(blob, n, rd, &cred, &cred_n)) < 0)
		return r;
	r = -LLMK_EAUTH;
	/* a credential needs its secret, and no secret goes where none was made */
	if ((cred_n == 0) != (secret_n == 0) || secret_n > KEYWRAP_SECRET_MAX)
		goto out;
	/* a small-order verifier key gives no shared secret: refused like a bad tag */
	if (keywrap_x25519(shared, priv, blob + KW_EPUB) < 0)
		goto out;
	size_t ct = KEYWRAP_HDR + cred_n;
	wrap_key(shared, secret, secret_n, rd, pub, blob + KW_EPUB, k);
	memcpy(pt, blob + ct, 32);
	wrap_gcm(k, blob, ct, pt, 0, &g, &aes);
	if (br_gcm_check_tag(&g, blob + ct + 32)) { /* constant-time compare inside */
		memcpy(key_out, pt, 32);
		memcpy(report_data_out, rd, 64);
		r = 0;
	}
out:
	seal_zeroize(shared, sizeof shared);
	seal_zeroize(k, sizeof k);
	seal_zeroize(pt, sizeof pt);
	seal_zeroize(&g, sizeof g);
	seal_zeroize(&aes, sizeof aes);
	return r;
}
