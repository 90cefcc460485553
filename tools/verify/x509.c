/*
 * tools/verify/x509.c — parsing X.509 v3 certificates (RFC 5280 §4.1) from
 * strict DER; see x509.h for what is accepted and why.
 */
#include "x509.h"

#include "der.h"

#include <bearssl.h>
#include <stdio.h>
#include <string.h>

/* OBJECT IDENTIFIER contents. */
static const uint8_t OID_RSA_ENCRYPTION[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01};
static const uint8_t OID_RSASSA_PSS[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0a};
static const uint8_t OID_MGF1[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x08};
static const uint8_t OID_SHA384[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02};
static const uint8_t OID_ECDSA_SHA256[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02};
static const uint8_t OID_ECDSA_SHA384[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03};
static const uint8_t OID_EC_PUBLIC_KEY[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01};
static const uint8_t OID_P256[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
static const uint8_t OID_P384[] = {0x2b, 0x81, 0x04, 0x00, 0x22};
static const uint8_t OID_CN[] = {0x55, 0x04, 0x03};
static const uint8_t OID_BASIC_CONSTRAINTS[] = {0x55, 0x1d, 0x13};
static const uint8_t OID_KEY_USAGE[] = {0x55, 0x1d, 0x0f};

#define OID(x) x, sizeof x

/* Dotted form of an OID's contents, for messages. */
static const char *oid_text(const uint8_t *p, size_t n, char *buf, size_t cap)
{
	size_t o = 0;
	uint64_t v = 0;
	int first = 1;
	buf[0] = 0;
	for (size_t i = 0; i < n && o + 24 < cap; i++) {
		v = v << 7 | (p[i] & 0x7f);
		if (p[i] & 0x80)
			continue;
		if (first)
			o += (size_t)snprintf(buf + o, cap - o, "%u.%llu", v < 80 ? (unsigned)(v / 40) : 2,
					      (unsigned long long)(v < 80 ? v % 40 : v - 80));
		else
			o += (size_t)snprintf(buf + o, cap - o, ".%llu", (unsigned long long)v);
		first = 0;
		v = 0;
	}
	return buf;
}

/* A BOOLEAN that DER allows where a DEFAULT FALSE one is present: TRUE (0xff). */
static int read_true(struct der *d, const struct der_tlv *t, const char *field)
{
	if (t->len != 1)
		return der_fail_at(d, t->hdr, LLMK_EFORMAT, field, "BOOLEAN not one byte");
	if (t->v[0] != 0xff)
		return der_fail_at(d, t->hdr, LLMK_EFORMAT, field,
				   t->v[0] ? "BOOLEAN TRUE not encoded as 0xff (DER)"
					   : "FALSE written out (DER omits a DEFAULT value)");
	return 0;
}

/* AlgorithmIdentifier { sha384, NULL or absent } (RFC 4055 §2.1). */
static int read_sha384_id(struct der *d, const char *field)
{
	struct der_tlv t, o;
	struct der in;
	int e = der_expect(d, DER_SEQUENCE, &t, field);
	if (e)
		return e;
	der_enter(d, &t, &in);
	if ((e = der_expect(&in, DER_OID, &o, field)))
		return e;
	if (!der_oid_is(&o, OID(OID_SHA384)))
		return der_fail_at(d, o.hdr, LLMK_ENOTSUP, field, "hash is not SHA-384");
	if (der_peek(&in) == DER_NULL) {
		struct der_tlv nul;
		if ((e = der_next(&in, &nul, field)))
			return e;
		if (nul.len)
			return der_fail_at(d, nul.hdr, LLMK_EFORMAT, field, "NULL with contents");
	}
	return der_end(&in, field);
}

/* [n] EXPLICIT wrapper: enter it. */
static int enter_ctx(struct der *d, int n, struct der *in, const char *field)
{
	struct der_tlv t;
	int e = der_expect(d, (uint8_t)(DER_CTX0 + n), &t, field);
	if (!e)
		der_enter(d, &t, in);
	return e;
}

/*
 * RSASSA-PSS-params (RFC 4055 §3.1) must be SHA-384, MGF1 with SHA-384,
 * salt 48, trailer 1: all that AMD signs with. The hash, MGF and salt have
 * defaults (SHA-1, 20) that we do not accept, so they must be written; the
 * trailer's default is accepted written or not (AMD's ARK writes it).
 */
static int read_pss_params(struct der *d, const struct der_tlv *t)
{
	struct der p, in, mgf;
	struct der_tlv x;
	uint32_t v;
	int e;

	if (t->tag != DER_SEQUENCE)
		return der_fail_at(d, t->hdr, LLMK_EFORMAT, "RSASSA-PSS parameters", "not a SEQUENCE");
	der_enter(d, t, &p);
	if ((e = enter_ctx(&p, 0, &in, "RSASSA-PSS hashAlgorithm")) ||
	    (e = read_sha384_id(&in, "RSASSA-PSS hashAlgorithm")) ||
	    (e = der_end(&in, "RSASSA-PSS hashAlgorithm")))
		return e;
	if ((e = enter_ctx(&p, 1, &in, "RSASSA-PSS maskGenAlgorithm")) ||
	    (e = der_expect(&in, DER_SEQUENCE, &x, "RSASSA-PSS maskGenAlgorithm")))
		return e;
	der_enter(&in, &x, &mgf);
	if ((e = der_expect(&mgf, DER_OID, &x, "RSASSA-PSS maskGenAlgorithm")))
		return e;
	if (!der_oid_is(&x, OID(OID_MGF1)))
		return der_fail_at(d, x.hdr, LLMK_ENOTSUP, "RSASSA-PSS maskGenAlgorithm", "not MGF1");
	if ((e = read_sha384_id(&mgf, "RSASSA-PSS MGF1 hash")) ||
	    (e = der_end(&mgf, "RSASSA-PSS maskGenAlgorithm")) ||
	    (e = der_end(&in, "RSASSA-PSS maskGenAlgorithm")))
		return e;
	if ((e = enter_ctx(&p, 2, &in, "RSASSA-PSS saltLength")) ||
	    (e = der_expect(&in, DER_INTEGER, &x, "RSASSA-PSS saltLength")) ||
	    (e = der_small_uint(&in, &x, "RSASSA-PSS saltLength", 4096, &v)) ||
	    (e = der_end(&in, "RSASSA-PSS saltLength")))
		return e;
	if (v != 48)
		return der_fail_at(d, x.hdr, LLMK_ENOTSUP, "RSASSA-PSS saltLength", "salt length is not 48");
	if (der_peek(&p) == DER_CTX0 + 3) {
		if ((e = enter_ctx(&p, 3, &in, "RSASSA-PSS trailerField")) ||
		    (e = der_expect(&in, DER_INTEGER, &x, "RSASSA-PSS trailerField")) ||
		    (e = der_small_uint(&in, &x, "RSASSA-PSS trailerField", 255, &v)) ||
		    (e = der_end(&in, "RSASSA-PSS trailerField")))
			return e;
		if (v != 1)
			return der_fail_at(d, x.hdr, LLMK_ENOTSUP, "RSASSA-PSS trailerField", "trailer is not 1");
	}
	return der_end(&p, "RSASSA-PSS parameters");
}

/* A signature AlgorithmIdentifier. */
static int read_sig_alg(struct der *d, const struct der_tlv *t, const char *field, enum x509_alg *alg)
{
	struct der in;
	struct der_tlv o, params;
	char buf[64], msg[128];
	int e;

	der_enter(d, t, &in);
	if ((e = der_expect(&in, DER_OID, &o, field)))
		return e;
	if (der_oid_is(&o, OID(OID_ECDSA_SHA256)) || der_oid_is(&o, OID(OID_ECDSA_SHA384))) {
		/* RFC 5758 §3.2: the parameters field is absent. */
		*alg = der_oid_is(&o, OID(OID_ECDSA_SHA256)) ? X509_ALG_ECDSA_SHA256 : X509_ALG_ECDSA_SHA384;
		return der_end(&in, field);
	}
	if (der_oid_is(&o, OID(OID_RSASSA_PSS))) {
		*alg = X509_ALG_RSA_PSS_SHA384;
		if ((e = der_next(&in, &params, "RSASSA-PSS parameters")) ||
		    (e = read_pss_params(&in, &params)))
			return e;
		return der_end(&in, field);
	}
	snprintf(msg, sizeof msg, "algorithm %s is not RSASSA-PSS or ECDSA",
		 oid_text(o.v, o.len, buf, sizeof buf));
	return der_fail_at(d, o.hdr, LLMK_ENOTSUP, field, msg);
}

/* Copy a directory string for messages, non-printable bytes as '?'. */
static void copy_text(char *out, size_t cap, const uint8_t *p, size_t n)
{
	size_t k = n < cap - 1 ? n : cap - 1;
	for (size_t i = 0; i < k; i++)
		out[i] = (p[i] >= 0x20 && p[i] < 0x7f) ? (char)p[i] : '?';
	out[k] = 0;
}

/* Name (§4.1.2.4): RDNSequence; its CN for messages. */
static int read_name(struct der *d, const struct der_tlv *t, const char *field, char *cn, size_t cap)
{
	struct der rdns, set, atv;
	struct der_tlv s, a, o, v;
	int e;

	snprintf(cn, cap, "(no CN)");
	der_enter(d, t, &rdns);
	while (der_peek(&rdns) >= 0) {
		if ((e = der_expect(&rdns, DER_SET, &s, field)))
			return e;
		der_enter(&rdns, &s, &set);
		if (der_peek(&set) < 0)
			return der_fail_at(d, s.hdr, LLMK_EFORMAT, field, "empty RelativeDistinguishedName");
		while (der_peek(&set) >= 0) {
			if ((e = der_expect(&set, DER_SEQUENCE, &a, field)))
				return e;
			der_enter(&set, &a, &atv);
			if ((e = der_expect(&atv, DER_OID, &o, field)) ||
			    (e = der_next(&atv, &v, field)) || (e = der_end(&atv, field)))
				return e;
			if (der_oid_is(&o, OID(OID_CN)))
				copy_text(cn, cap, v.v, v.len);
		}
	}
	return 0;
}

static int digits(const uint8_t *p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		*v = *v * 10 + (p[i] - '0');
	}
	return 0;
}

/* UTCTime (YYMMDDHHMMSSZ) or GeneralizedTime (YYYYMMDDHHMMSSZ), §4.1.2.5. */
static int read_time(struct der *d, const char *field, char *out, size_t cap)
{
	struct der_tlv t;
	int y, mo, da, h, mi, s, e;
	const uint8_t *p;

	if ((e = der_next(d, &t, field)))
		return e;
	p = t.v;
	if (t.tag == DER_UTC_TIME && t.len == 13) {
		if (digits(p, 2, &y))
			goto bad;
		y += y < 50 ? 2000 : 1900;
		p += 2;
	} else if (t.tag == DER_GENERALIZED_TIME && t.len == 15) {
		if (digits(p, 4, &y))
			goto bad;
		p += 4;
	} else {
		return der_fail_at(d, t.hdr, LLMK_EFORMAT, field, "not a UTCTime or GeneralizedTime in "
				   "the form ...HHMMSSZ");
	}
	if (digits(p, 2, &mo) || digits(p + 2, 2, &da) || digits(p + 4, 2, &h) ||
	    digits(p + 6, 2, &mi) || digits(p + 8, 2, &s) || p[10] != 'Z' || mo < 1 || mo > 12 ||
	    da < 1 || da > 31 || h > 23 || mi > 59 || s > 59)
		goto bad;
	snprintf(out, cap, "%04d-%02d-%02d %02d:%02d:%02d", y, mo, da, h, mi, s);
	return 0;
bad:
	return der_fail_at(d, t.hdr, LLMK_EFORMAT, field, "malformed time");
}

/* SubjectPublicKeyInfo (§4.1.2.7): RSA (RFC 3279 §2.3.1) or EC (RFC 5480). */
static int read_spki(struct der *d, const struct der_tlv *t, struct x509_cert *c)
{
	struct der spki, alg, key;
	struct der_tlv a, o, p, bits, k, n, ex;
	int e;

	der_enter(d, t, &spki);
	if ((e = der_expect(&spki, DER_SEQUENCE, &a, "subjectPublicKeyInfo.algorithm")) ||
	    (e = der_expect(&spki, DER_BIT_STRING, &bits, "subjectPublicKey")) ||
	    (e = der_end(&spki, "subjectPublicKeyInfo")))
		return e;
	if (bits.len < 2 || bits.v[0] != 0)
		return der_fail_at(d, bits.hdr, LLMK_EFORMAT, "subjectPublicKey", "BIT STRING with unused bits");
	der_enter(&spki, &a, &alg);
	if ((e = der_expect(&alg, DER_OID, &o, "subjectPublicKeyInfo.algorithm")) ||
	    (e = der_next(&alg, &p, "subjectPublicKeyInfo.parameters")) ||
	    (e = der_end(&alg, "subjectPublicKeyInfo.algorithm")))
		return e;
	if (der_oid_is(&o, OID(OID_RSA_ENCRYPTION))) {
		const uint8_t *m;
		size_t ml;
		if (p.tag != DER_NULL || p.len)
			return der_fail_at(d, p.hdr, LLMK_EFORMAT, "rsaEncryption parameters", "not NULL");
		key.base = d->base;
		key.p = bits.v + 1;
		key.end = bits.v + bits.len;
		key.what = d->what;
		key.log = d->log;
		if ((e = der_expect(&key, DER_SEQUENCE, &k, "RSAPublicKey")) ||
		    (e = der_end(&key, "RSAPublicKey")))
			return e;
		der_enter(&key, &k, &key);
		if ((e = der_expect(&key, DER_INTEGER, &n, "RSAPublicKey.modulus")) ||
		    (e = der_expect(&key, DER_INTEGER, &ex, "RSAPublicKey.publicExponent")) ||
		    (e = der_end(&key, "RSAPublicKey")))
			return e;
		if ((e = der_uint(&key, &n, "RSAPublicKey.modulus", &m, &ml)))
			return e;
		c->rsa_n = (struct x509_span){m, ml};
		if (ml < 256 || ml > 512 || !(m[ml - 1] & 1))
			return der_fail_at(d, n.hdr, LLMK_ENOTSUP, "RSAPublicKey.modulus",
					   "not an odd modulus of 2048 to 4096 bits");
		if ((e = der_uint(&key, &ex, "RSAPublicKey.publicExponent", &m, &ml)))
			return e;
		c->rsa_e = (struct x509_span){m, ml};
		if (ml > 4 || !(m[ml - 1] & 1) || (ml == 1 && m[0] < 3))
			return der_fail_at(d, ex.hdr, LLMK_ENOTSUP, "RSAPublicKey.publicExponent",
					   "not an odd exponent from 3 to 2^32-1");
		c->key_type = X509_KEY_RSA;
		return 0;
	}
	if (der_oid_is(&o, OID(OID_EC_PUBLIC_KEY))) {
		size_t field;
		if (der_oid_is(&p, OID(OID_P256))) {
			c->ec_curve = BR_EC_secp256r1;
			field = 32;
		} else if (der_oid_is(&p, OID(OID_P384))) {
			c->ec_curve = BR_EC_secp384r1;
			field = 48;
		} else {
			return der_fail_at(d, p.hdr, LLMK_ENOTSUP, "EC parameters", "curve is not P-256 or P-384");
		}
		/* RFC 5480 §2.2: the ECPoint; we take the uncompressed form only. */
		if (bits.len != 2 + 2 * field || bits.v[1] != 0x04)
			return der_fail_at(d, bits.hdr, LLMK_ENOTSUP, "subjectPublicKey",
					   "not an uncompressed point of the curve's size");
		c->ec_point = (struct x509_span){bits.v + 1, bits.len - 1};
		c->key_type = X509_KEY_EC;
		return 0;
	}
	char buf[64], msg[96];
	snprintf(msg, sizeof msg, "key algorithm %s is not RSA or EC", oid_text(o.v, o.len, buf, sizeof buf));
	return der_fail_at(d, o.hdr, LLMK_ENOTSUP, "subjectPublicKeyInfo.algorithm", msg);
}

/* basicConstraints (§4.2.1.9): SEQUENCE { cA DEFAULT FALSE, pathLen OPTIONAL }. */
static int read_basic_constraints(struct der *d, const struct x509_ext *x, struct x509_cert *c)
{
	struct der v, s;
	struct der_tlv t;
	uint32_t pl;
	int e;

	der_init(&v, x->value.p, x->value.n, d->what, d->log);
	v.base = d->base;
	if ((e = der_expect(&v, DER_SEQUENCE, &t, "basicConstraints")) || (e = der_end(&v, "basicConstraints")))
		return e;
	der_enter(&v, &t, &s);
	if (der_peek(&s) == DER_BOOLEAN) {
		if ((e = der_next(&s, &t, "basicConstraints.cA")) || (e = read_true(&s, &t, "basicConstraints.cA")))
			return e;
		c->is_ca = 1;
	}
	if (der_peek(&s) == DER_INTEGER) {
		if ((e = der_next(&s, &t, "basicConstraints.pathLenConstraint")) ||
		    (e = der_small_uint(&s, &t, "basicConstraints.pathLenConstraint", 255, &pl)))
			return e;
		if (!c->is_ca)
			return der_fail_at(d, t.hdr, LLMK_EFORMAT, "basicConstraints",
					   "pathLenConstraint without cA");
		c->path_len = (int)pl;
	}
	return der_end(&s, "basicConstraints");
}

/* keyUsage (§4.2.1.3): a BIT STRING of up to 9 named bits. */
static int read_key_usage(struct der *d, const struct x509_ext *x, struct x509_cert *c)
{
	struct der v;
	struct der_tlv t;
	int e;

	der_init(&v, x->value.p, x->value.n, d->what, d->log);
	v.base = d->base;
	if ((e = der_expect(&v, DER_BIT_STRING, &t, "keyUsage")) || (e = der_end(&v, "keyUsage")))
		return e;
	if (t.len < 2 || t.len > 3 || t.v[0] > 7 || (t.v[t.len - 1] & ((1u << t.v[0]) - 1)))
		return der_fail_at(d, t.hdr, LLMK_EFORMAT, "keyUsage", "malformed BIT STRING");
	c->key_usage = 0;
	for (int bit = 0; bit < 8 * (int)(t.len - 1); bit++)
		if (t.v[1 + bit / 8] & (0x80 >> (bit % 8)))
			c->key_usage |= 1 << bit;
	return 0;
}

/* extensions [3] (§4.2): each once; unknown critical ones refused. */
static int read_extensions(struct der *d, const struct der_tlv *t, struct x509_cert *c)
{
	struct der w, list, ext;
	struct der_tlv s, o, b, v;
	int e;

	der_enter(d, t, &w);
	if ((e = der_expect(&w, DER_SEQUENCE, &s, "extensions")) || (e = der_end(&w, "extensions")))
		return e;
	der_enter(&w, &s, &list);
	if (der_peek(&list) < 0)
		return der_fail_at(d, s.hdr, LLMK_EFORMAT, "extensions", "empty list");
	while (der_peek(&list) >= 0) {
		struct x509_ext *x;
		char buf[64], msg[128];
		if (c->n_ext == X509_MAX_EXT)
			return der_fail_at(d, list.p, LLMK_ENOTSUP, "extensions", "more than 16 extensions");
		if ((e = der_expect(&list, DER_SEQUENCE, &s, "extension")))
			return e;
		der_enter(&list, &s, &ext);
		if ((e = der_expect(&ext, DER_OID, &o, "extension.extnID")))
			return e;
		x = &c->ext[c->n_ext];
		x->oid = (struct x509_span){o.v, o.len};
		x->critical = 0;
		if (der_peek(&ext) == DER_BOOLEAN) {
			if ((e = der_next(&ext, &b, "extension.critical")) ||
			    (e = read_true(&ext, &b, "extension.critical")))
				return e;
			x->critical = 1;
		}
		if ((e = der_expect(&ext, DER_OCTET_STRING, &v, "extension.extnValue")) ||
		    (e = der_end(&ext, "extension")))
			return e;
		x->value = (struct x509_span){v.v, v.len};
		oid_text(o.v, o.len, buf, sizeof buf);
		if (x509_ext_find(c, o.v, o.len)) {
			snprintf(msg, sizeof msg, "extension %s appears twice", buf);
			return der_fail_at(d, o.hdr, LLMK_EFORMAT, "extensions", msg);
		}
		c->n_ext++;
		if (der_oid_is(&o, OID(OID_BASIC_CONSTRAINTS)))
			e = read_basic_constraints(d, x, c);
		else if (der_oid_is(&o, OID(OID_KEY_USAGE)))
			e = read_key_usage(d, x, c);
		else if (x->critical) {
			snprintf(msg, sizeof msg, "unknown critical extension %s", buf);
			e = der_fail_at(d, o.hdr, LLMK_ENOTSUP, "extensions", msg);
		}
		if (e)
			return e;
	}
	return 0;
}

/* TBSCertificate (§4.1.2) */
static int read_tbs(struct der *d, const struct der_tlv *tbs, const struct der_tlv *outer_alg,
		    struct x509_cert *c)
{
	struct der in, ver, val;
	struct der_tlv t, a;
	uint32_t v;
	const uint8_t *m;
	size_t ml;
	enum x509_alg inner;
	int e;

	der_enter(d, tbs, &in);
	if ((e = enter_ctx(&in, 0, &ver, "version")) || (e = der_expect(&ver, DER_INTEGER, &t, "version")) ||
	    (e = der_small_uint(&ver, &t, "version", 255, &v)) || (e = der_end(&ver, "version")))
		return e;
	if (v != 2)
		return der_fail_at(d, t.hdr, LLMK_ENOTSUP, "version", "not an X.509 v3 certificate");
	if ((e = der_expect(&in, DER_INTEGER, &t, "serialNumber")) ||
	    (e = der_uint(&in, &t, "serialNumber", &m, &ml)))
		return e;
	if (ml > 20)
		return der_fail_at(d, t.hdr, LLMK_EFORMAT, "serialNumber", "longer than 20 bytes");
	c->serial = (struct x509_span){t.v, t.len};
	/* §4.1.2.3: the same algorithm as the outer signatureAlgorithm. */
	if ((e = der_expect(&in, DER_SEQUENCE, &a, "signature")) ||
	    (e = read_sig_alg(&in, &a, "signature", &inner)))
		return e;
	if (a.total != outer_alg->total || memcmp(a.hdr, outer_alg->hdr, a.total))
		return der_fail_at(d, a.hdr, LLMK_EFORMAT, "signature",
				   "differs from the certificate's signatureAlgorithm");
	if ((e = der_expect(&in, DER_SEQUENCE, &t, "issuer")) ||
	    (e = read_name(&in, &t, "issuer", c->issuer_cn, sizeof c->issuer_cn)))
		return e;
	c->issuer = (struct x509_span){t.hdr, t.total};
	if ((e = der_expect(&in, DER_SEQUENCE, &t, "validity")))
		return e;
	der_enter(&in, &t, &val);
	if ((e = read_time(&val, "validity.notBefore", c->not_before, sizeof c->not_before)) ||
	    (e = read_time(&val, "validity.notAfter", c->not_after, sizeof c->not_after)) ||
	    (e = der_end(&val, "validity")))
		return e;
	if (strcmp(c->not_before, c->not_after) > 0)
		return der_fail_at(d, t.hdr, LLMK_EFORMAT, "validity", "notBefore is after notAfter");
	if ((e = der_expect(&in, DER_SEQUENCE, &t, "subject")) ||
	    (e = read_name(&in, &t, "subject", c->subject_cn, sizeof c->subject_cn)))
		return e;
	c->subject = (struct x509_span){t.hdr, t.total};
	if ((e = der_expect(&in, DER_SEQUENCE, &t, "subjectPublicKeyInfo")) || (e = read_spki(&in, &t, c)))
		return e;
	c->spki = (struct x509_span){t.hdr, t.total};
	int tag = der_peek(&in);
	if (tag == 0x81 || tag == 0x82 || tag == 0xa1 || tag == 0xa2)
		return der_fail_at(d, in.p, LLMK_ENOTSUP, "uniqueID", "unique identifiers are not supported");
	if (tag == DER_CTX0 + 3) {
		if ((e = der_next(&in, &t, "extensions")) || (e = read_extensions(&in, &t, c)))
			return e;
	}
	return der_end(&in, "tbsCertificate");
}

int x509_parse(struct x509_cert *c, const uint8_t *der, size_t n, const char *what,
	       struct vfy_log *log)
{
	struct der top, cert;
	struct der_tlv t, tbs, alg, sig;
	int e;

	memset(c, 0, sizeof *c);
	c->what = what;
	c->path_len = -1;
	c->key_usage = -1;
	der_init(&top, der, n, what, log);
	if ((e = der_expect(&top, DER_SEQUENCE, &t, "Certificate")) || (e = der_end(&top, "Certificate")))
		return e;
	c->der = (struct x509_span){der, n};
	der_enter(&top, &t, &cert);
	if ((e = der_expect(&cert, DER_SEQUENCE, &tbs, "tbsCertificate")) ||
	    (e = der_expect(&cert, DER_SEQUENCE, &alg, "signatureAlgorithm")) ||
	    (e = der_expect(&cert, DER_BIT_STRING, &sig, "signatureValue")) ||
	    (e = der_end(&cert, "Certificate")))
		return e;
	if ((e = read_sig_alg(&cert, &alg, "signatureAlgorithm", &c->alg)))
		return e;
	if (sig.len < 2 || sig.v[0] != 0)
		return der_fail_at(&cert, sig.hdr, LLMK_EFORMAT, "signatureValue",
				   "empty or with unused bits");
	c->sig = (struct x509_span){sig.v + 1, sig.len - 1};
	c->tbs = (struct x509_span){tbs.hdr, tbs.total};
	return read_tbs(&cert, &tbs, &alg, c);
}

const struct x509_ext *x509_ext_find(const struct x509_cert *c, const uint8_t *oid, size_t n)
{
	for (int i = 0; i < c->n_ext; i++)
		if (c->ext[i].oid.n == n && memcmp(c->ext[i].oid.p, oid, n) == 0)
			return &c->ext[i];
	return NULL;
}
