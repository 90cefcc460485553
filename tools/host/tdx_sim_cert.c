/*
 * tools/host/tdx_sim_cert.c — the TDX simulator's test chain, shaped as
 * Intel's PCK chain (root CA -> PCK platform CA -> PCK certificate), X.509
 * v3 DER (RFC 5280 §4.1) signed ECDSA P-256 with SHA-256 (RFC 5758 §3.2:
 * ecdsa-with-SHA256, no parameters; the signature an ECDSA-Sig-Value), keys
 * on P-256 (RFC 5480). The CAs: basicConstraints cA (path length 1 for the
 * root, 0 below it) and keyUsage keyCertSign, cRLSign, both critical; the
 * PCK: keyUsage digitalSignature, nonRepudiation, critical, and no
 * basicConstraints (cA FALSE is the DEFAULT, so DER leaves it out). Not
 * Intel's: the names say "llmk tdx-sim test chain (not Intel)", and there
 * is no SGX extension (1.2.840.113741.1.13.1: FMSPC, TCB levels), which
 * only TCB appraisal against Intel's collateral would read.
 */
#include "tdx_sim.h"
#include "der_write.h"

#include <string.h>

enum { PCK, CA, ROOT };
static const char *const cn[3] = { "llmk tdx-sim test PCK Certificate",
				   "llmk tdx-sim test PCK Platform CA",
				   "llmk tdx-sim test Root CA" };

static void ecdsa_sha256(struct der *d)
{
	size_t s = der_open(d, 0x30);
	DER_OID(d, 1, 2, 840, 10045, 4, 3, 2);
	der_close(d, s);
}

static void extensions(struct der *d, int kind)
{
	size_t t = der_open(d, 0xa3), s = der_open(d, 0x30);

	if (kind == PCK) {
		der_x509_key_usage(d, 0x06, 0xc0); /* digitalSignature, nonRepudiation */
	} else {
		der_x509_basic_ca(d, kind == ROOT ? 1 : 0);
		der_x509_key_usage(d, 0x01, 0x06); /* keyCertSign, cRLSign */
	}
	der_close(d, s);
	der_close(d, t);
}

static void tbs(struct der *d, int kind, const br_ec_public_key *subject_key)
{
	size_t t = der_x509_tbs_open(d, (uint32_t)(0x7d50 + kind), ecdsa_sha256,
				     "llmk tdx-sim test chain (not Intel)",
				     cn[kind == ROOT ? ROOT : kind + 1], cn[kind]);
	der_x509_ec_spki(d, subject_key);
	extensions(d, kind);
	der_close(d, t);
}

/* Certificate = SEQUENCE { tbs, ecdsa-with-SHA256, BIT STRING ECDSA-Sig-Value } */
static int sign(int kind, const br_ec_public_key *subject, const br_ec_private_key *issuer,
		uint8_t *out, size_t *len)
{
	uint8_t t[TDX_SIM_CERT_MAX], h[32], sig[80];
	struct der d = { t, 0, sizeof t, false };
	br_sha256_context sc;
	size_t sn;

	tbs(&d, kind, subject);
	if (d.over)
		return -LLMK_ERANGE;
	br_sha256_init(&sc);
	br_sha256_update(&sc, t, d.n);
	br_sha256_out(&sc, h);
	sn = br_ecdsa_i31_sign_asn1(br_ec_get_default(), &br_sha256_vtable, h, issuer, sig);
	if (!sn)
		return -LLMK_EIO;
	return der_x509_cert(t, d.n, ecdsa_sha256, sig, sn, out, TDX_SIM_CERT_MAX, len);
}

int tdx_sim_chain_make(struct tdx_sim *s)
{
	struct tdx_sim_chain *c = &s->chain;
	const br_ec_public_key *subject[3] = { &s->pck_pub, &s->ca_pub, &s->root_pub };
	const br_ec_private_key *issuer[3] = { &s->ca, &s->root, &s->root };
	long n;
	int e;

	memset(c, 0, sizeof *c);
	for (int k = 0; k < 3; k++) {
		if ((e = sign(k, subject[k], issuer[k], c->der[k], &c->len[k])))
			return e;
		n = der_pem(c->der[k], c->len[k], "CERTIFICATE", c->pem + c->pem_len,
			    sizeof c->pem - c->pem_len);
		if (n < 0)
			return (int)n;
		c->pem_len += (size_t)n;
	}
	return 0;
}
