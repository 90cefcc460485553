/*
 * tools/writer/forge_vtpm.c — the forgery of forge_vtpm.h: TPM 2.0 Part 2
 * structures written by hand (TPMT_PUBLIC §12.2.4, TPMS_ATTEST §10.12.12,
 * TPMT_SIGNATURE §11.3.4), BearSSL for the key and the signature.
 */
#include "forge_vtpm.h"

#include <bearssl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../drivers/tpm2.h"
#include "../../shell/evidence.h"

static int fail(char *err, size_t errn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errn, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errn, fmt, ap);
	va_end(ap);
	return -1;
}

static void sha256(const void *a, size_t an, const void *b, size_t bn, uint8_t out[32])
{
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, a, an);
	br_sha256_update(&c, b, bn);
	br_sha256_out(&c, out);
}

static void put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The AK template with the software key's point as unique. */
static int ak_public(const br_ec_public_key *pk, uint8_t *out, size_t cap)
{
	int t = tpm2_template(TPM2_KEY_AK_ECC, out, cap);
	/* the template ends with two empty TPM2B_ECC_PARAMETERs (unique.x, .y) */
	if (t < 4 || (size_t)t + 64 > cap || pk->qlen != 65)
		return -1;
	size_t o = (size_t)t - 4;
	put16(out + o, 32);
	memcpy(out + o + 2, pk->q + 1, 32);
	put16(out + o + 34, 32);
	memcpy(out + o + 36, pk->q + 33, 32);
	return (int)(o + 68);
}

int forge_vtpm(const uint8_t *genuine, size_t n, const uint8_t *nonce, size_t nonce_n,
	       const uint8_t attacker_pub[32], const void *seed, size_t seed_n, uint8_t *out,
	       size_t cap, size_t *out_n, char *err, size_t errn)
{
	static struct evidence_rec rec[64];
	char why[160];
	int nr = evidence_parse(genuine, n, rec, 64, why, sizeof why);
	if (nr < 0)
		return fail(err, errn, "genuine bundle: %s", why);
	const struct evidence_rec *md = evidence_find(rec, nr, ATTEST_REC_MODEL_DIGEST, NULL),
				  *bid = evidence_find(rec, nr, ATTEST_REC_BUILD_ID, NULL),
				  *quote = evidence_find(rec, nr, ATTEST_REC_TPM_QUOTE, NULL),
				  *cfg = evidence_find(rec, nr, ATTEST_REC_CONFIG_DIGEST, NULL);
	if (!md || md->len != 32 || !bid || bid->len > 16 || !quote || quote->len < 10 || !cfg ||
	    cfg->len != 32)
		return fail(err, errn, "genuine bundle: no MODEL_DIGEST, BUILD_ID, CONFIG_DIGEST or "
			    "TPM_QUOTE");
	if (nonce_n < 1 || nonce_n > EVIDENCE_NONCE_MAX)
		return fail(err, errn, "nonce of %zu bytes", nonce_n);

	/* the attacker's report data, by the guest's own layout */
	struct evidence_inputs in;
	uint8_t rd[64];
	memset(&in, 0, sizeof in);
	memcpy(in.nonce, nonce, nonce_n);
	in.nonce_len = nonce_n;
	memcpy(in.model_digest, md->val, 32);
	memcpy(in.pubkey, attacker_pub, 32);
	memcpy(in.build_id, bid->val, bid->len);
	memcpy(in.config_digest, cfg->val, 32);
	size_t len = 0;
	if (evidence_begin(out, cap, &len, "vtpm", &in, rd) < 0)
		return fail(err, errn, "output too small");

	/* a software key with the AK's template */
	br_hmac_drbg_context rng;
	br_ec_private_key sk;
	br_ec_public_key pk;
	uint8_t kb[BR_EC_KBUF_PRIV_MAX_SIZE], pb[BR_EC_KBUF_PUB_MAX_SIZE];
	const br_ec_impl *ec = br_ec_get_default();
	br_hmac_drbg_init(&rng, &br_sha256_vtable, seed, seed_n);
	if (!br_ec_keygen(&rng.vtable, ec, &sk, kb, BR_EC_secp256r1) ||
	    !br_ec_compute_pub(ec, &pk, pb, &sk))
		return fail(err, errn, "P-256 key generation");
	uint8_t akpub[256];
	int akn = ak_public(&pk, akpub, sizeof akpub);
	if (akn < 0)
		return fail(err, errn, "AK template");
	/* name = nameAlg || H(TPMT_PUBLIC); qualified name under the endorsement
	 * hierarchy = nameAlg || H(TPM_RH_ENDORSEMENT || name) (Part 1 §16.6) */
	uint8_t name[34], qn[34];
	static const uint8_t endorsement[4] = {0x40, 0x00, 0x00, 0x0b};
	name[0] = qn[0] = 0x00;
	name[1] = qn[1] = 0x0b;
	sha256(akpub, (size_t)akn, NULL, 0, name + 2);
	sha256(endorsement, 4, name, 34, qn + 2);

	/* the genuine quote with the forger's signer and extraData */
	const uint8_t *q = quote->val;
	size_t ql = quote->len, o = 6;
	size_t sl = (size_t)q[o] << 8 | q[o + 1];
	if (o + 2 + sl + 2 > ql)
		return fail(err, errn, "genuine quote: qualifiedSigner runs past its end");
	o += 2 + sl;
	size_t el = (size_t)q[o] << 8 | q[o + 1];
	if (o + 2 + el > ql)
		return fail(err, errn, "genuine quote: extraData runs past its end");
	o += 2 + el;
	static uint8_t fq[4096];
	size_t fl = 0;
	if (6 + 2 + 34 + 2 + 32 + (ql - o) > sizeof fq)
		return fail(err, errn, "genuine quote too long");
	memcpy(fq, q, 6);
	fl = 6;
	put16(fq + fl, 34);
	memcpy(fq + fl + 2, qn, 34);
	fl += 36;
	put16(fq + fl, 32);
	sha256(rd, 64, NULL, 0, fq + fl + 2);
	fl += 34;
	memcpy(fq + fl, q + o, ql - o);
	fl += ql - o;

	/* ECDSA P-256 over SHA-256 of TPMS_ATTEST (Part 3 §18.4) */
	uint8_t h[32], raw[64], sig[2 + 2 + 2 + 32 + 2 + 32];
	sha256(fq, fl, NULL, 0, h);
	if (br_ecdsa_i31_sign_raw(ec, &br_sha256_vtable, h, &sk, raw) != 64)
		return fail(err, errn, "ECDSA signature");
	put16(sig, 0x0018);
	put16(sig + 2, 0x000b);
	put16(sig + 4, 32);
	memcpy(sig + 6, raw, 32);
	put16(sig + 38, 32);
	memcpy(sig + 40, raw + 32, 32);

	/* the rest of the genuine bundle as it was, the AK and the quote replaced */
	for (int i = 0; i < nr; i++) {
		const struct evidence_rec *r = &rec[i];
		const void *v = r->val;
		size_t vl = r->len;
		switch (r->type) {
		case ATTEST_REC_PROVIDER: case ATTEST_REC_REPORT_DATA: case ATTEST_REC_NONCE:
		case ATTEST_REC_MODEL_DIGEST: case ATTEST_REC_PUBKEY: case ATTEST_REC_BUILD_ID:
		case ATTEST_REC_CONFIG_DIGEST:
			continue; /* evidence_begin wrote the attacker's */
		case ATTEST_REC_TPM_AK_PUB:
			v = akpub, vl = (size_t)akn;
			break;
		case ATTEST_REC_TPM_QUOTE:
			v = fq, vl = fl;
			break;
		case ATTEST_REC_TPM_SIG:
			v = sig, vl = sizeof sig;
			break;
		default:
			break;
		}
		if (attest_rec_put(out, cap, &len, r->type, v, vl) < 0)
			return fail(err, errn, "output too small");
	}
	memset(kb, 0, sizeof kb);
	*out_n = len;
	return 0;
}
