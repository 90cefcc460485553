/*
 * tools/verify/x509_chain.c — one link of a certificate chain (RFC 5280
 * §6.1.3-6.1.4, the parts a fixed vendor chain needs): names, CA rights,
 * path length and the signature.
 */
#include "x509.h"

#include "der.h"
#include "sig.h"

#include <bearssl.h>
#include <stdio.h>
#include <string.h>

const char *x509_alg_name(enum x509_alg alg)
{
	switch (alg) {
	case X509_ALG_RSA_PSS_SHA384:
		return "RSASSA-PSS SHA-384";
	case X509_ALG_ECDSA_SHA256:
		return "ECDSA SHA-256";
	case X509_ALG_ECDSA_SHA384:
		return "ECDSA SHA-384";
	}
	return "?";
}

const char *x509_key_name(const struct x509_cert *c, char *buf, size_t n)
{
	if (c->key_type == X509_KEY_RSA) {
		unsigned bits = (unsigned)c->rsa_n.n * 8, top = c->rsa_n.p[0];
		for (unsigned b = 0x80; b && !(top & b); b >>= 1)
			bits--;
		snprintf(buf, n, "RSA-%u", bits);
	} else {
		snprintf(buf, n, "EC %s", c->ec_curve == BR_EC_secp256r1 ? "P-256" : "P-384");
	}
	return buf;
}

int x509_self_issued(const struct x509_cert *c)
{
	return c->issuer.n == c->subject.n && memcmp(c->issuer.p, c->subject.p, c->issuer.n) == 0;
}

void x509_spki_sha256(const struct x509_cert *c, uint8_t out[32])
{
	br_sha256_context h;
	br_sha256_init(&h);
	br_sha256_update(&h, c->spki.p, c->spki.n);
	br_sha256_out(&h, out);
}

/*
 * Ecdsa-Sig-Value (RFC 5480 §2.2 / RFC 3279 §2.2.3) as r || s, each padded
 * to the curve's size. Strict DER, so a signature has one encoding.
 */
static int ecdsa_sig_raw(const struct x509_cert *child, size_t field, uint8_t *rs, struct vfy_log *log)
{
	struct der d, in;
	struct der_tlv t, r, s;
	const uint8_t *m;
	size_t ml;
	int e;

	der_init(&d, child->sig.p, child->sig.n, child->what, log);
	d.base = child->der.p;
	if ((e = der_expect(&d, DER_SEQUENCE, &t, "signatureValue")) || (e = der_end(&d, "signatureValue")))
		return e;
	der_enter(&d, &t, &in);
	if ((e = der_expect(&in, DER_INTEGER, &r, "signatureValue.r")) ||
	    (e = der_expect(&in, DER_INTEGER, &s, "signatureValue.s")) ||
	    (e = der_end(&in, "signatureValue")))
		return e;
	memset(rs, 0, 2 * field);
	if ((e = der_uint(&in, &r, "signatureValue.r", &m, &ml)))
		return e;
	if (ml > field)
		return der_fail_at(&in, r.hdr, LLMK_EFORMAT, "signatureValue.r", "larger than the curve");
	memcpy(rs + field - ml, m, ml);
	if ((e = der_uint(&in, &s, "signatureValue.s", &m, &ml)))
		return e;
	if (ml > field)
		return der_fail_at(&in, s.hdr, LLMK_EFORMAT, "signatureValue.s", "larger than the curve");
	memcpy(rs + 2 * field - ml, m, ml);
	return 0;
}

int x509_check_issued(const struct x509_cert *child, const struct x509_cert *issuer,
		      int cas_below, struct vfy_log *log)
{
	char kb[32];
	uint8_t hash[48];
	int ok;

	if (child->issuer.n != issuer->subject.n ||
	    memcmp(child->issuer.p, issuer->subject.p, child->issuer.n))
		return vfy_fail(log, LLMK_EAUTH, "%s: issuer '%s' is not the %s ('%s')", child->what,
				child->issuer_cn, issuer->what, issuer->subject_cn);
	if (!issuer->is_ca)
		return vfy_fail(log, LLMK_EAUTH, "%s ('%s') is not a CA (basicConstraints cA), so it "
				"cannot issue the %s", issuer->what, issuer->subject_cn, child->what);
	if (issuer->key_usage >= 0 && !(issuer->key_usage & X509_KU_KEY_CERT_SIGN))
		return vfy_fail(log, LLMK_EAUTH, "%s ('%s'): keyUsage lacks keyCertSign", issuer->what,
				issuer->subject_cn);
	if (issuer->path_len >= 0 && cas_below > issuer->path_len)
		return vfy_fail(log, LLMK_EAUTH, "%s ('%s'): pathLenConstraint %d, but %d CA "
				"certificates below it", issuer->what, issuer->subject_cn,
				issuer->path_len, cas_below);
	if (child->alg == X509_ALG_RSA_PSS_SHA384) {
		br_sha384_context h;
		if (issuer->key_type != X509_KEY_RSA)
			goto wrong_key;
		br_sha384_init(&h);
		br_sha384_update(&h, child->tbs.p, child->tbs.n);
		br_sha384_out(&h, hash);
		ok = sig_rsa_pss_sha384_ok(issuer->rsa_n.p, issuer->rsa_n.n, issuer->rsa_e.p,
					   issuer->rsa_e.n, hash, child->sig.p, child->sig.n);
	} else {
		uint8_t rs[96];
		size_t hl = 32, field = issuer->ec_curve == BR_EC_secp256r1 ? 32 : 48;
		int e;
		if (issuer->key_type != X509_KEY_EC)
			goto wrong_key;
		if (child->alg == X509_ALG_ECDSA_SHA256) {
			br_sha256_context h;
			br_sha256_init(&h);
			br_sha256_update(&h, child->tbs.p, child->tbs.n);
			br_sha256_out(&h, hash);
		} else {
			br_sha384_context h;
			br_sha384_init(&h);
			br_sha384_update(&h, child->tbs.p, child->tbs.n);
			br_sha384_out(&h, hash);
			hl = 48;
		}
		if ((e = ecdsa_sig_raw(child, field, rs, log)))
			return e;
		ok = sig_ecdsa_ok(issuer->ec_curve, issuer->ec_point.p, issuer->ec_point.n, hash, hl,
				  rs, 2 * field);
	}
	if (!ok)
		return vfy_fail(log, LLMK_EAUTH, "%s ('%s'): the %s signature does not verify with the "
				"%s's %s key ('%s')", child->what, child->subject_cn,
				x509_alg_name(child->alg), issuer->what, x509_key_name(issuer, kb, sizeof kb),
				issuer->subject_cn);
	if (child == issuer)
		vfy_ok(log, "chain: %s '%s' is self-signed (%s, %s key)", child->what,
		       child->subject_cn, x509_alg_name(child->alg), x509_key_name(issuer, kb, sizeof kb));
	else
		vfy_ok(log, "chain: %s '%s' signed by %s '%s' (%s, %s key)", child->what,
		       child->subject_cn, issuer->what, issuer->subject_cn, x509_alg_name(child->alg),
		       x509_key_name(issuer, kb, sizeof kb));
	return 0;
wrong_key:
	return vfy_fail(log, LLMK_EAUTH, "%s: signed with %s, but the %s's key is %s", child->what,
			x509_alg_name(child->alg), issuer->what, x509_key_name(issuer, kb, sizeof kb));
}
