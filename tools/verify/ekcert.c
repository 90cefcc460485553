/*
 * tools/verify/ekcert.c — the EK certificate from the TPM's NV (TCG EK
 * Credential Profile): it must chain to a CA the verifier trusts, and its
 * public key must be the EK the evidence names.
 *
 * BearSSL's X.509 "minimal" engine does the chain (signatures, validity at
 * the current time, basic constraints, critical extensions). EK certificates
 * name the TPM in a critical subjectAltName and have an empty or placeholder
 * subject, which the engine accepts (no server name is asked for). Every
 * certificate in the CA file is a trust anchor: swtpm_setup's local CA signs
 * EK certificates with its issuer certificate (issuercert.pem), so that one
 * (or a file with it and its root) is what --ek-ca names.
 */
#define _GNU_SOURCE /* memmem */
#include "verify.h"
#include "der.h"

#include <bearssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EK_MAX_CA 8

struct der_list {
	uint8_t *der[EK_MAX_CA];
	size_t len[EK_MAX_CA];
	int n;
};

/* Every CERTIFICATE object of a PEM text (RFC 7468 §2: the base64 body
 * between the BEGIN and END lines, whitespace ignored). */
static int ek_pem_certs(const char *pem, size_t n, struct der_list *l, char *err, size_t errn)
{
	static const char begin[] = "-----BEGIN CERTIFICATE-----", end[] = "-----END CERTIFICATE-----";
	const char *p = pem, *stop = pem + n;
	for (;;) {
		const char *b = memmem(p, (size_t)(stop - p), begin, sizeof begin - 1);
		if (!b)
			break;
		b += sizeof begin - 1;
		const char *e = memmem(b, (size_t)(stop - b), end, sizeof end - 1);
		if (!e) {
			snprintf(err, errn, "--ek-ca: a certificate has no END line");
			return -LLMK_EFORMAT;
		}
		if (l->n == EK_MAX_CA) {
			snprintf(err, errn, "--ek-ca: more than %d certificates", EK_MAX_CA);
			return -LLMK_ERANGE;
		}
		char *b64 = malloc((size_t)(e - b) + 1);
		size_t k = 0;
		if (!b64)
			return -LLMK_ENOMEM;
		for (const char *c = b; c < e; c++)
			if (*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r')
				b64[k++] = *c;
		l->der[l->n] = malloc(k / 4 * 3 + 3);
		long m = l->der[l->n] ? b64_decode(b64, k, l->der[l->n], k / 4 * 3 + 3) : -1;
		free(b64);
		if (m <= 0) {
			free(l->der[l->n]);
			snprintf(err, errn, "--ek-ca: certificate %d is not valid base64", l->n + 1);
			return -LLMK_EFORMAT;
		}
		l->len[l->n++] = (size_t)m;
		p = e + sizeof end - 1;
	}
	if (l->n == 0) {
		snprintf(err, errn, "--ek-ca: no CERTIFICATE in the PEM file");
		return -LLMK_EFORMAT;
	}
	return 0;
}

struct dn_buf {
	uint8_t b[1024];
	size_t n;
	bool overflow;
};

static void dn_append(void *ctx, const void *buf, size_t len)
{
	struct dn_buf *d = ctx;
	if (len > sizeof d->b - d->n) {
		d->overflow = true;
		return;
	}
	memcpy(d->b + d->n, buf, len);
	d->n += len;
}

/* A trust anchor from one CA certificate (its name and key, copied). */
static int make_anchor(const uint8_t *der, size_t len, br_x509_trust_anchor *ta, char *err,
		       size_t errn)
{
	static br_x509_decoder_context dc; /* large; one at a time */
	struct dn_buf dn = {{0}, 0, false};
	br_x509_decoder_init(&dc, dn_append, &dn);
	br_x509_decoder_push(&dc, der, len);
	const br_x509_pkey *pk = br_x509_decoder_get_pkey(&dc);
	if (!pk || dn.overflow) {
		snprintf(err, errn, "--ek-ca: a certificate does not decode (BearSSL error %d)",
			 br_x509_decoder_last_error(&dc));
		return -LLMK_EFORMAT;
	}
	memset(ta, 0, sizeof *ta);
	ta->dn.data = malloc(dn.n);
	ta->dn.len = dn.n;
	if (!ta->dn.data)
		return -LLMK_ENOMEM;
	memcpy(ta->dn.data, dn.b, dn.n);
	ta->flags = BR_X509_TA_CA;
	ta->pkey.key_type = pk->key_type;
	if (pk->key_type == BR_KEYTYPE_RSA) {
		br_rsa_public_key *k = &ta->pkey.key.rsa;
		k->n = malloc(pk->key.rsa.nlen);
		k->e = malloc(pk->key.rsa.elen);
		if (!k->n || !k->e)
			return -LLMK_ENOMEM;
		memcpy(k->n, pk->key.rsa.n, k->nlen = pk->key.rsa.nlen);
		memcpy(k->e, pk->key.rsa.e, k->elen = pk->key.rsa.elen);
	} else {
		br_ec_public_key *k = &ta->pkey.key.ec;
		k->curve = pk->key.ec.curve;
		k->q = malloc(pk->key.ec.qlen);
		if (!k->q)
			return -LLMK_ENOMEM;
		memcpy(k->q, pk->key.ec.q, k->qlen = pk->key.ec.qlen);
	}
	return 0;
}

static void free_anchor(br_x509_trust_anchor *ta)
{
	free(ta->dn.data);
	if (ta->pkey.key_type == BR_KEYTYPE_RSA) {
		free(ta->pkey.key.rsa.n);
		free(ta->pkey.key.rsa.e);
	} else {
		free(ta->pkey.key.ec.q);
	}
}

static const char *x509_error_name(unsigned e)
{
	switch (e) {
	case BR_ERR_X509_BAD_SIGNATURE: return "bad signature";
	case BR_ERR_X509_EXPIRED: return "expired or not yet valid";
	case BR_ERR_X509_NOT_TRUSTED: return "not signed by a CA in --ek-ca";
	case BR_ERR_X509_CRITICAL_EXTENSION: return "unsupported critical extension";
	case BR_ERR_X509_NOT_CA: return "issuer is not a CA";
	case BR_ERR_X509_UNSUPPORTED: return "unsupported algorithm";
	case BR_ERR_X509_WEAK_PUBLIC_KEY: return "weak public key";
	case BR_ERR_X509_TRUNCATED: return "truncated";
	default: return "malformed or refused";
	}
}

static const uint8_t *strip_zeros(const uint8_t *p, size_t *n)
{
	while (*n > 0 && *p == 0) {
		p++;
		(*n)--;
	}
	return p;
}

/* The certificate's key equals the EK's TPMT_PUBLIC unique field. */
static int same_key(const br_x509_pkey *pk, const struct tpm2_public *ek, char *err, size_t errn)
{
	if (ek->type == TPM_ALG_ECC) {
		uint8_t pt[1 + 2 * 66];
		size_t plen;
		int want = ek->curve == TPM_ECC_NIST_P256 ? BR_EC_secp256r1
			   : ek->curve == TPM_ECC_NIST_P384 ? BR_EC_secp384r1 : -1;
		if (pk->key_type != BR_KEYTYPE_EC || pk->key.ec.curve != want ||
		    tpm2_ecc_point(ek, pt, &plen) < 0 || plen != pk->key.ec.qlen ||
		    memcmp(pt, pk->key.ec.q, plen) != 0) {
			snprintf(err, errn, "EK certificate: its public key is not the EK_PUB record's "
				 "ECC key");
			return -LLMK_EAUTH;
		}
		return 0;
	}
	size_t nl = pk->key_type == BR_KEYTYPE_RSA ? pk->key.rsa.nlen : 0, el = nl ? pk->key.rsa.elen : 0;
	size_t tn = ek->n_len;
	const uint8_t *cn = nl ? strip_zeros(pk->key.rsa.n, &nl) : NULL;
	const uint8_t *tnp = strip_zeros(ek->n, &tn);
	uint8_t e[4] = {(uint8_t)(ek->rsa_exp >> 24), (uint8_t)(ek->rsa_exp >> 16),
			(uint8_t)(ek->rsa_exp >> 8), (uint8_t)ek->rsa_exp};
	size_t te = 4;
	const uint8_t *tep = strip_zeros(e, &te);
	const uint8_t *ce = el ? strip_zeros(pk->key.rsa.e, &el) : NULL;
	if (!cn || nl != tn || memcmp(cn, tnp, tn) != 0 || el != te || memcmp(ce, tep, te) != 0) {
		snprintf(err, errn, "EK certificate: its public key is not the EK_PUB record's RSA key");
		return -LLMK_EAUTH;
	}
	return 0;
}

/*
 * RFC 5280 §4.1.1.2 and §4.1.2.3: the outer signatureAlgorithm must equal
 * the signature field inside tbsCertificate. BearSSL's engine verifies with
 * the outer one and does not compare them, so a certificate whose outer
 * field was changed would still chain: the certificate is malleable
 * without this check.
 */
static int same_sig_alg(const uint8_t *cert, size_t n, char *err, size_t errn)
{
	static struct vfy_log log;
	struct der top, c, tbs;
	struct der_tlv t, tb, outer, inner;
	vfy_log_init(&log);
	der_init(&top, cert, n, "EK certificate", &log);
	int e = der_expect(&top, DER_SEQUENCE, &t, "Certificate");
	if (!e) {
		der_enter(&top, &t, &c);
		e = der_expect(&c, DER_SEQUENCE, &tb, "tbsCertificate");
	}
	if (!e)
		e = der_expect(&c, DER_SEQUENCE, &outer, "signatureAlgorithm");
	if (!e) {
		der_enter(&c, &tb, &tbs);
		if (der_peek(&tbs) == DER_CTX0)
			e = der_next(&tbs, &t, "version");
	}
	if (!e)
		e = der_expect(&tbs, DER_INTEGER, &t, "serialNumber");
	if (!e)
		e = der_expect(&tbs, DER_SEQUENCE, &inner, "signature");
	if (e) {
		snprintf(err, errn, "%s", log.err);
		return -LLMK_EFORMAT;
	}
	if (inner.total != outer.total || memcmp(inner.hdr, outer.hdr, inner.total) != 0) {
		snprintf(err, errn, "EK certificate: its signatureAlgorithm differs from the signature "
			 "algorithm inside tbsCertificate (RFC 5280 §4.1.1.2)");
		return -LLMK_EAUTH;
	}
	return 0;
}

int ekcert_verify(const uint8_t *cert, size_t cert_len, const char *ca_pem, size_t ca_len,
		  const struct tpm2_public *ek, char *err, size_t errn)
{
	struct der_list l;
	br_x509_trust_anchor ta[EK_MAX_CA];
	int nta = 0, r;
	static br_x509_minimal_context xc;

	memset(&l, 0, sizeof l);
	if ((r = same_sig_alg(cert, cert_len, err, errn)) < 0)
		return r;
	if ((r = ek_pem_certs(ca_pem, ca_len, &l, err, errn)) < 0)
		goto out;
	for (; nta < l.n; nta++)
		if ((r = make_anchor(l.der[nta], l.len[nta], &ta[nta], err, errn)) < 0)
			goto out;
	br_x509_minimal_init_full(&xc, ta, (size_t)nta);
	xc.vtable->start_chain(&xc.vtable, NULL);
	xc.vtable->start_cert(&xc.vtable, (uint32_t)cert_len);
	xc.vtable->append(&xc.vtable, cert, cert_len);
	xc.vtable->end_cert(&xc.vtable);
	/* 0 when the chain is trusted, else a BR_ERR_X509_* code */
	unsigned e = xc.vtable->end_chain(&xc.vtable);
	if (e != 0) {
		snprintf(err, errn, "EK certificate: does not chain to --ek-ca: %s (BearSSL X.509 error %u)",
			 x509_error_name(e), e);
		r = -LLMK_EAUTH;
		goto out;
	}
	r = same_key(xc.vtable->get_pkey(&xc.vtable, NULL), ek, err, errn);
out:
	for (int i = 0; i < nta; i++)
		free_anchor(&ta[i]);
	for (int i = 0; i < l.n; i++)
		free(l.der[i]);
	return r;
}
