/*
 * tools/verify/tpm2.c — the TPM 2.0 structures a vtpm bundle carries, read
 * from their big-endian marshalled form (TPM 2.0 Library, Part 2:
 * Structures). Every length is checked against what is left before it is
 * used; a structure must end exactly where its record ends.
 */
#include "verify.h"

#include <stdio.h>
#include <string.h>

struct rd {
	const uint8_t *p;
	size_t n, off;
	const char *what; /* the field being read when it ran out */
	bool bad;
};

static bool need(struct rd *r, size_t k, const char *what)
{
	if (r->bad)
		return false;
	if (r->n - r->off < k) {
		r->bad = true;
		r->what = what;
		return false;
	}
	return true;
}

static uint8_t u8(struct rd *r, const char *what)
{
	if (!need(r, 1, what))
		return 0;
	return r->p[r->off++];
}

static uint16_t u16(struct rd *r, const char *what)
{
	if (!need(r, 2, what))
		return 0;
	uint16_t v = (uint16_t)(r->p[r->off] << 8 | r->p[r->off + 1]);
	r->off += 2;
	return v;
}

static uint32_t u32(struct rd *r, const char *what)
{
	uint32_t hi = u16(r, what);
	return hi << 16 | u16(r, what);
}

static uint64_t u64(struct rd *r, const char *what)
{
	uint64_t hi = u32(r, what);
	return hi << 32 | u32(r, what);
}

/* A TPM2B: u16 size, then size bytes (max: the largest the field may be). */
static const uint8_t *tpm2b(struct rd *r, uint16_t *len, size_t max, const char *what)
{
	*len = u16(r, what);
	if (r->bad)
		return NULL;
	if (*len > max) {
		r->bad = true;
		r->what = what;
		return NULL;
	}
	if (!need(r, *len, what))
		return NULL;
	const uint8_t *v = r->p + r->off;
	r->off += *len;
	return v;
}

static int finish(struct rd *r, const char *type, char *err, size_t errn)
{
	if (r->bad) {
		snprintf(err, errn, "%s: field %s runs past the end or is oversized (%zu bytes)", type,
			 r->what, r->n);
		return -LLMK_EFORMAT;
	}
	if (r->off != r->n) {
		snprintf(err, errn, "%s: %zu bytes left over after the structure (%zu bytes)", type,
			 r->n - r->off, r->n);
		return -LLMK_EFORMAT;
	}
	return 0;
}

const char *tpm2_alg_name(uint16_t alg)
{
	switch (alg) {
	case TPM_ALG_RSA: return "rsa";
	case TPM_ALG_SHA1: return "sha1";
	case TPM_ALG_SHA256: return "sha256";
	case TPM_ALG_SHA384: return "sha384";
	case TPM_ALG_SHA512: return "sha512";
	case TPM_ALG_NULL: return "null";
	case TPM_ALG_SM3_256: return "sm3_256";
	case TPM_ALG_RSASSA: return "rsassa";
	case TPM_ALG_ECDSA: return "ecdsa";
	case TPM_ALG_ECC: return "ecc";
	case TPM_ALG_AES: return "aes";
	case TPM_ALG_CFB: return "cfb";
	default: return "unknown";
	}
}

/* TPML_PCR_SELECTION (§10.9.7): u32 count, then TPMS_PCR_SELECTION (§10.6.2):
 * hash, sizeofSelect, pcrSelect[] (bit i of byte j: PCR 8j + i). */
static void skip_pcr_sel(struct rd *r)
{
	uint32_t count = u32(r, "pcrSelect.count");
	if (count > 16) {
		r->bad = true;
		r->what = "pcrSelect.count (more than 16 banks)";
		return;
	}
	for (uint32_t i = 0; i < count && !r->bad; i++) {
		u16(r, "pcrSelections.hash");
		uint8_t k = u8(r, "pcrSelections.sizeofSelect");
		if (need(r, k, "pcrSelections.pcrSelect"))
			r->off += k;
	}
}

int tpm2_parse_pcr_sel(const uint8_t *p, size_t n, struct tpm2_pcr_sel *sel, int max, char *err,
		       size_t errn)
{
	struct rd r = {p, n, 0, NULL, false};
	uint32_t count = u32(&r, "count");
	if (!r.bad && (count == 0 || count > (uint32_t)max)) {
		snprintf(err, errn, "TPML_PCR_SELECTION: %u banks, expected 1..%d", count, max);
		return -LLMK_EFORMAT;
	}
	for (uint32_t i = 0; i < count && !r.bad; i++) {
		sel[i].hash = u16(&r, "hash");
		uint8_t k = u8(&r, "sizeofSelect");
		sel[i].mask = 0;
		if (!r.bad && (k < 3 || k > 4)) {
			snprintf(err, errn, "TPML_PCR_SELECTION: sizeofSelect %u, expected 3 or 4 (24 PCRs)",
				 k);
			return -LLMK_EFORMAT;
		}
		for (uint8_t j = 0; j < k && !r.bad; j++)
			sel[i].mask |= (uint32_t)u8(&r, "pcrSelect") << (8 * j);
		if (!r.bad && (sel[i].mask >> TPM_PCRS)) {
			snprintf(err, errn, "TPML_PCR_SELECTION: PCR beyond 23 selected (mask 0x%x)",
				 sel[i].mask);
			return -LLMK_EFORMAT;
		}
	}
	int e = finish(&r, "TPML_PCR_SELECTION", err, errn);
	return e < 0 ? e : (int)count;
}

int tpm2_parse_quote(const uint8_t *p, size_t n, struct tpm2_quote *q, char *err, size_t errn)
{
	struct rd r = {p, n, 0, NULL, false};
	memset(q, 0, sizeof *q);
	q->magic = u32(&r, "magic");
	q->type = u16(&r, "type");
	q->signer = tpm2b(&r, &q->signer_len, 2 + 64, "qualifiedSigner");
	q->extra = tpm2b(&r, &q->extra_len, 64, "extraData");
	q->clock = u64(&r, "clockInfo.clock");
	q->reset_count = u32(&r, "clockInfo.resetCount");
	q->restart_count = u32(&r, "clockInfo.restartCount");
	q->safe = u8(&r, "clockInfo.safe");
	q->firmware = u64(&r, "firmwareVersion");
	/* attested: TPMS_QUOTE_INFO for TPM_ST_ATTEST_QUOTE; other types are
	 * refused by the caller from q->type, so stop here for them */
	if (!r.bad && q->type != TPM_ST_ATTEST_QUOTE)
		return 0;
	size_t s0 = r.off;
	skip_pcr_sel(&r);
	q->sel = p + s0;
	q->sel_len = r.off - s0;
	q->digest = tpm2b(&r, &q->digest_len, 64, "pcrDigest");
	return finish(&r, "TPMS_ATTEST", err, errn);
}

/* parameters of TPMT_PUBLIC (§12.2.3.5 TPMU_PUBLIC_PARMS) */
static void sym_def(struct rd *r, struct tpm2_public *pub)
{
	pub->sym = u16(r, "symmetric.algorithm");  /* TPMT_SYM_DEF_OBJECT */
	if (!r->bad && pub->sym != TPM_ALG_NULL) {
		pub->sym_bits = u16(r, "symmetric.keyBits");
		pub->sym_mode = u16(r, "symmetric.mode");
	}
}

static void scheme(struct rd *r, struct tpm2_public *pub)
{
	pub->scheme = u16(r, "scheme.scheme");
	if (!r->bad && pub->scheme != TPM_ALG_NULL)
		pub->scheme_hash = u16(r, "scheme.details.hashAlg");
}

int tpm2_parse_public(const uint8_t *p, size_t n, struct tpm2_public *pub, char *err, size_t errn)
{
	struct rd r = {p, n, 0, NULL, false};
	uint16_t len;
	memset(pub, 0, sizeof *pub);
	pub->type = u16(&r, "type");
	pub->name_alg = u16(&r, "nameAlg");
	pub->attrs = u32(&r, "objectAttributes");
	const uint8_t *pol = tpm2b(&r, &len, sizeof pub->policy, "authPolicy");
	if (pol) {
		memcpy(pub->policy, pol, len);
		pub->policy_len = len;
	}
	if (r.bad)
		return finish(&r, "TPMT_PUBLIC", err, errn);
	if (pub->type == TPM_ALG_ECC) {
		sym_def(&r, pub);
		scheme(&r, pub);
		pub->curve = u16(&r, "curveID");
		uint16_t kdf = pub->kdf = u16(&r, "kdf.scheme");
		if (!r.bad && kdf != TPM_ALG_NULL)
			u16(&r, "kdf.details.hashAlg");
		const uint8_t *x = tpm2b(&r, &pub->x_len, sizeof pub->x, "unique.x");
		if (x)
			memcpy(pub->x, x, pub->x_len);
		const uint8_t *y = tpm2b(&r, &pub->y_len, sizeof pub->y, "unique.y");
		if (y)
			memcpy(pub->y, y, pub->y_len);
	} else if (pub->type == TPM_ALG_RSA) {
		sym_def(&r, pub);
		scheme(&r, pub);
		pub->rsa_bits = u16(&r, "keyBits");
		pub->rsa_exp = u32(&r, "exponent");
		if (pub->rsa_exp == 0)
			pub->rsa_exp = 65537; /* §12.2.3.5: zero means the default, 2^16 + 1 */
		const uint8_t *m = tpm2b(&r, &pub->n_len, sizeof pub->n, "unique.rsa");
		if (m)
			memcpy(pub->n, m, pub->n_len);
	} else {
		snprintf(err, errn, "TPMT_PUBLIC: type 0x%04x, expected ECC (0x0023) or RSA (0x0001)",
			 pub->type);
		return -LLMK_ENOTSUP;
	}
	return finish(&r, "TPMT_PUBLIC", err, errn);
}

int tpm2_parse_sig(const uint8_t *p, size_t n, struct tpm2_sig *sig, char *err, size_t errn)
{
	struct rd r = {p, n, 0, NULL, false};
	memset(sig, 0, sizeof *sig);
	sig->alg = u16(&r, "sigAlg");
	if (!r.bad && sig->alg != TPM_ALG_ECDSA) {
		snprintf(err, errn, "TPMT_SIGNATURE: sigAlg 0x%04x (%s), expected ECDSA (0x0018)",
			 sig->alg, tpm2_alg_name(sig->alg));
		return -LLMK_ENOTSUP;
	}
	sig->hash = u16(&r, "signature.ecdsa.hash");
	const uint8_t *v = tpm2b(&r, &sig->r_len, sizeof sig->r, "signatureR");
	if (v)
		memcpy(sig->r, v, sig->r_len);
	v = tpm2b(&r, &sig->s_len, sizeof sig->s, "signatureS");
	if (v)
		memcpy(sig->s, v, sig->s_len);
	return finish(&r, "TPMT_SIGNATURE", err, errn);
}

static size_t curve_bytes(uint16_t curve)
{
	return curve == TPM_ECC_NIST_P256 ? 32 : curve == TPM_ECC_NIST_P384 ? 48 : 0;
}

int tpm2_ecc_point(const struct tpm2_public *pub, uint8_t *out, size_t *len)
{
	size_t k = curve_bytes(pub->curve);
	if (pub->type != TPM_ALG_ECC || !k || pub->x_len > k || pub->y_len > k)
		return -LLMK_ENOTSUP;
	/* TPM2B_ECC_PARAMETER may drop leading zeros: pad back to the field size */
	out[0] = 4;
	memset(out + 1, 0, 2 * k);
	memcpy(out + 1 + k - pub->x_len, pub->x, pub->x_len);
	memcpy(out + 1 + 2 * k - pub->y_len, pub->y, pub->y_len);
	*len = 1 + 2 * k;
	return 0;
}

/* SubjectPublicKeyInfo for a P-256 key (RFC 5480 §2): a fixed DER prefix
 * (SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING }) then the
 * 65-byte point. */
static const uint8_t spki_p256_prefix[] = {
	0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
	0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
};

int tpm2_ecc_pem(const struct tpm2_public *pub, char *out, size_t cap)
{
	uint8_t der[sizeof spki_p256_prefix + 65];
	size_t plen;
	char b64[128];
	if (pub->curve != TPM_ECC_NIST_P256 || tpm2_ecc_point(pub, der + sizeof spki_p256_prefix,
							       &plen) < 0)
		return -LLMK_ENOTSUP;
	memcpy(der, spki_p256_prefix, sizeof spki_p256_prefix);
	if (b64_encode(der, sizeof der, b64, sizeof b64) < 0)
		return -LLMK_ERANGE;
	/* PEM lines of 64 characters (RFC 7468 §2) */
	int k = snprintf(out, cap, "-----BEGIN PUBLIC KEY-----\n%.64s\n%s\n-----END PUBLIC KEY-----\n",
			 b64, b64 + 64);
	return k < 0 || (size_t)k >= cap ? -LLMK_ERANGE : k;
}
