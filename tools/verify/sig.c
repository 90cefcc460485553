/*
 * tools/verify/sig.c — RSASSA-PSS (RFC 8017) and ECDSA verification over
 * BearSSL (sig.h).
 */
#include "sig.h"

#include <bearssl.h>
#include <string.h>

/* MGF1 with SHA-384 (RFC 8017 §B.2.1), XORed into out[0..len). */
static void mgf1_sha384_xor(uint8_t *out, size_t len, const uint8_t *seed, size_t seed_len)
{
	uint8_t block[SIG_SHA384_LEN];
	for (uint32_t counter = 0; len; counter++) {
		br_sha384_context h;
		uint8_t c[4] = {(uint8_t)(counter >> 24), (uint8_t)(counter >> 16),
				(uint8_t)(counter >> 8), (uint8_t)counter};
		br_sha384_init(&h);
		br_sha384_update(&h, seed, seed_len);
		br_sha384_update(&h, c, 4);
		br_sha384_out(&h, block);
		size_t k = len < sizeof block ? len : sizeof block;
		for (size_t i = 0; i < k; i++)
			out[i] ^= block[i];
		out += k;
		len -= k;
	}
}

int sig_rsa_pss_sha384_ok(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
			  const uint8_t mhash[SIG_SHA384_LEN], const uint8_t *sig, size_t sig_len)
{
	enum { H = SIG_SHA384_LEN, S = SIG_PSS_SALT_LEN };
	uint8_t em[512];
	br_rsa_public_key pk;

	/* n without leading zeros; 2048..4096 bits (BearSSL's BR_MAX_RSA_SIZE). */
	while (n_len && n[0] == 0) {
		n++;
		n_len--;
	}
	if (n_len < 256 || n_len > sizeof em || e_len == 0 || e_len > 4)
		return 0;
	/* §8.1.2 step 1: the signature has exactly k = n_len bytes. */
	if (sig_len != n_len)
		return 0;
	unsigned top = n[0], mod_bits = (unsigned)(n_len - 1) * 8;
	while (top) {
		mod_bits++;
		top >>= 1;
	}
	/* Steps 2.a-c: m = s^e mod n (BearSSL refuses s >= n), EM = I2OSP(m, emLen). */
	memcpy(em, sig, sig_len);
	pk.n = (unsigned char *)n;
	pk.nlen = n_len;
	pk.e = (unsigned char *)e;
	pk.elen = e_len;
	if (!br_rsa_public_get_default()(em, sig_len, &pk))
		return 0;
	size_t em_bits = mod_bits - 1, em_len = (em_bits + 7) / 8;
	const uint8_t *p = em + (n_len - em_len); /* a leading zero byte when em_len < k */
	if (em_len < n_len && em[0] != 0)
		return 0;
	/* §9.1.2 EMSA-PSS-VERIFY, steps 3-14. */
	if (em_len < H + S + 2 || p[em_len - 1] != 0xbc)
		return 0;
	size_t db_len = em_len - H - 1;
	uint8_t db[512];
	const uint8_t *hh = p + db_len;
	uint8_t top_mask = (uint8_t)(0xff >> (8 * em_len - em_bits));
	if (p[0] & ~top_mask)
		return 0;
	memcpy(db, p, db_len);
	mgf1_sha384_xor(db, db_len, hh, H);
	db[0] &= top_mask;
	for (size_t i = 0; i < db_len - S - 1; i++)
		if (db[i] != 0)
			return 0;
	if (db[db_len - S - 1] != 0x01)
		return 0;
	/* M' = 8 zero bytes || mHash || salt; H' = Hash(M') must equal H. */
	uint8_t zeros[8] = {0}, h2[H];
	br_sha384_context h;
	br_sha384_init(&h);
	br_sha384_update(&h, zeros, 8);
	br_sha384_update(&h, mhash, H);
	br_sha384_update(&h, db + db_len - S, S);
	br_sha384_out(&h, h2);
	return memcmp(h2, hh, H) == 0;
}

int sig_ecdsa_ok(int curve, const uint8_t *q, size_t q_len, const uint8_t *hash, size_t hash_len,
		 const uint8_t *rs, size_t rs_len)
{
	size_t field = curve == BR_EC_secp256r1 ? 32 : curve == BR_EC_secp384r1 ? 48 : 0;
	br_ec_public_key pk;

	if (!field || q_len != 1 + 2 * field || q[0] != 0x04 || rs_len != 2 * field)
		return 0;
	pk.curve = curve;
	pk.q = (unsigned char *)q;
	pk.qlen = q_len;
	return br_ecdsa_i31_vrfy_raw(br_ec_get_default(), hash, hash_len, &pk, rs, rs_len) == 1;
}
