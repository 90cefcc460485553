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

static void name(struct der *d, const char *common)
{
	static const char *const org = "llmk tdx-sim test chain (not Intel)";
	size_t s = der_open(d, 0x30), set, seq;

	set = der_open(d, 0x31), seq = der_open(d, 0x30);
	DER_OID(d, 2, 5, 4, 6);
	der_prim(d, 0x13, "US", 2);
	der_close(d, seq), der_close(d, set);
	set = der_open(d, 0x31), seq = der_open(d, 0x30);
	DER_OID(d, 2, 5, 4, 10);
	der_prim(d, 0x0c, org, strlen(org));
	der_close(d, seq), der_close(d, set);
	set = der_open(d, 0x31), seq = der_open(d, 0x30);
	DER_OID(d, 2, 5, 4, 3);
	der_prim(d, 0x0c, common, strlen(common));
	der_close(d, seq), der_close(d, set);
	der_close(d, s);
}

static void spki(struct der *d, const br_ec_public_key *pk)
{
	size_t s = der_open(d, 0x30), a = der_open(d, 0x30), b;
	DER_OID(d, 1, 2, 840, 10045, 2, 1);    /* id-ecPublicKey */
	DER_OID(d, 1, 2, 840, 10045, 3, 1, 7); /* prime256v1 */
	der_close(d, a);
	b = der_open(d, 0x03);
	der_put1(d, 0);
	der_put(d, pk->q, pk->qlen);
	der_close(d, b);
	der_close(d, s);
}

static void extensions(struct der *d, int kind)
{
	static const uint8_t crit[] = { 0x01, 0x01, 0xff };
	static const uint8_t ku_ca[] = { 0x03, 0x02, 0x01, 0x06 };  /* keyCertSign, cRLSign */
	static const uint8_t ku_pck[] = { 0x03, 0x02, 0x06, 0xc0 }; /* digitalSignature, nonRepudiation */
	size_t t = der_open(d, 0xa3), s = der_open(d, 0x30), e, o, b;

	if (kind != PCK) {
		e = der_open(d, 0x30);
		DER_OID(d, 2, 5, 29, 19); /* basicConstraints */
		der_put(d, crit, sizeof crit);
		o = der_open(d, 0x04);
		b = der_open(d, 0x30);
		der_prim(d, 0x01, "\xff", 1);
		der_small_int(d, kind == ROOT ? 1 : 0);
		der_close(d, b);
		der_close(d, o);
		der_close(d, e);
	}
	e = der_open(d, 0x30);
	DER_OID(d, 2, 5, 29, 15); /* keyUsage */
	der_put(d, crit, sizeof crit);
	if (kind == PCK)
		der_prim(d, 0x04, ku_pck, sizeof ku_pck);
	else
		der_prim(d, 0x04, ku_ca, sizeof ku_ca);
	der_close(d, e);
	der_close(d, s);
	der_close(d, t);
}

static void tbs(struct der *d, int kind, const br_ec_public_key *subject_key)
{
	size_t t = der_open(d, 0x30), v, val;

	v = der_open(d, 0xa0);
	der_small_int(d, 2); /* v3 */
	der_close(d, v);
	der_small_int(d, (uint32_t)(0x7d50 + kind));
	ecdsa_sha256(d);
	name(d, cn[kind == ROOT ? ROOT : kind + 1]);
	val = der_open(d, 0x30);
	der_prim(d, 0x17, "250101000000Z", 13);
	der_prim(d, 0x17, "491231235959Z", 13);
	der_close(d, val);
	name(d, cn[kind]);
	spki(d, subject_key);
	extensions(d, kind);
	der_close(d, t);
}

/* Certificate = SEQUENCE { tbs, ecdsa-with-SHA256, BIT STRING ECDSA-Sig-Value } */
static int sign(int kind, const br_ec_public_key *subject, const br_ec_private_key *issuer,
		uint8_t *out, size_t *len)
{
	uint8_t t[TDX_SIM_CERT_MAX], h[32], sig[80];
	struct der d = { t, 0, sizeof t, false }, c = { out, 0, TDX_SIM_CERT_MAX, false };
	br_sha256_context sc;
	size_t sn, s, b;

	tbs(&d, kind, subject);
	if (d.over)
		return -LLMK_ERANGE;
	br_sha256_init(&sc);
	br_sha256_update(&sc, t, d.n);
	br_sha256_out(&sc, h);
	sn = br_ecdsa_i31_sign_asn1(br_ec_get_default(), &br_sha256_vtable, h, issuer, sig);
	if (!sn)
		return -LLMK_EIO;
	s = der_open(&c, 0x30);
	der_put(&c, t, d.n);
	ecdsa_sha256(&c);
	b = der_open(&c, 0x03);
	der_put1(&c, 0);
	der_put(&c, sig, sn);
	der_close(&c, b);
	der_close(&c, s);
	if (c.over)
		return -LLMK_ERANGE;
	*len = c.n;
	return 0;
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
