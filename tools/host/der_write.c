/*
 * tools/host/der_write.c — the simulators' certificates' common X.509
 * parts and PEM text of a DER object (der_write.h); the DER writer itself
 * is shell/http/der.c.
 */
#include "der_write.h"

#include "../../kernel/platform.h"
#include "../../shell/evidence.h"

#include <stdlib.h>
#include <string.h>

long der_pem(const uint8_t *der, size_t n, const char *label, char *out, size_t cap)
{
	size_t bn = 4 * ((n + 2) / 3) + 1, o = 0;
	char *b64 = malloc(bn);
	long m = b64 ? b64_encode(der, n, b64, bn) : -LLMK_ENOMEM;

	if (m < 0) {
		free(b64);
		return m;
	}
	o += (size_t)plat_snprintf(out, cap, "-----BEGIN %s-----\n", label);
	for (long i = 0; i < m && o < cap; i += 64) {
		int k = (int)(m - i < 64 ? m - i : 64);
		o += (size_t)plat_snprintf(out + o, cap - o, "%.*s\n", k, b64 + i);
	}
	if (o < cap)
		o += (size_t)plat_snprintf(out + o, cap - o, "-----END %s-----\n", label);
	free(b64);
	return o < cap ? (long)o : -LLMK_ERANGE;
}

static void rdn(struct der *d, uint32_t attr, uint8_t tag, const char *v)
{
	size_t set = der_open(d, 0x31), seq = der_open(d, 0x30);
	DER_OID(d, 2, 5, 4, attr);
	der_prim(d, tag, v, strlen(v));
	der_close(d, seq);
	der_close(d, set);
}

void der_x509_name(struct der *d, const char *org, const char *cn)
{
	size_t s = der_open(d, 0x30);
	rdn(d, 6, 0x13, "US");
	rdn(d, 10, 0x0c, org);
	rdn(d, 3, 0x0c, cn);
	der_close(d, s);
}

size_t der_x509_tbs_open(struct der *d, uint32_t serial, der_alg_fn alg, const char *org,
			 const char *issuer, const char *subject)
{
	size_t t = der_open(d, 0x30), v, val;

	v = der_open(d, 0xa0);
	der_small_int(d, 2); /* v3 */
	der_close(d, v);
	der_small_int(d, serial);
	alg(d);
	der_x509_name(d, org, issuer);
	val = der_open(d, 0x30);
	der_prim(d, 0x17, "250101000000Z", 13);
	der_prim(d, 0x17, "491231235959Z", 13);
	der_close(d, val);
	der_x509_name(d, org, subject);
	return t;
}

void der_x509_ec_spki(struct der *d, const br_ec_public_key *pk)
{
	size_t s = der_open(d, 0x30), a = der_open(d, 0x30), b;
	DER_OID(d, 1, 2, 840, 10045, 2, 1); /* id-ecPublicKey */
	if (pk->curve == BR_EC_secp256r1)
		DER_OID(d, 1, 2, 840, 10045, 3, 1, 7); /* prime256v1 */
	else if (pk->curve == BR_EC_secp384r1)
		DER_OID(d, 1, 3, 132, 0, 34); /* secp384r1 */
	else
		d->over = true;
	der_close(d, a);
	b = der_open(d, 0x03);
	der_put1(d, 0);
	der_put(d, pk->q, pk->qlen);
	der_close(d, b);
	der_close(d, s);
}

static const uint8_t critical[] = { 0x01, 0x01, 0xff };

void der_x509_basic_ca(struct der *d, int path_len)
{
	size_t e = der_open(d, 0x30), o, b;
	DER_OID(d, 2, 5, 29, 19); /* basicConstraints */
	der_put(d, critical, sizeof critical);
	o = der_open(d, 0x04);
	b = der_open(d, 0x30);
	der_prim(d, 0x01, "\xff", 1); /* cA TRUE */
	if (path_len >= 0)
		der_small_int(d, (uint32_t)path_len);
	der_close(d, b);
	der_close(d, o);
	der_close(d, e);
}

void der_x509_key_usage(struct der *d, uint8_t unused, uint8_t bits)
{
	const uint8_t ku[] = { 0x03, 0x02, unused, bits };
	size_t e = der_open(d, 0x30);
	DER_OID(d, 2, 5, 29, 15); /* keyUsage */
	der_put(d, critical, sizeof critical);
	der_prim(d, 0x04, ku, sizeof ku);
	der_close(d, e);
}

int der_x509_cert(const uint8_t *tbs, size_t tn, der_alg_fn alg, const uint8_t *sig, size_t sn,
		  uint8_t *out, size_t cap, size_t *len)
{
	struct der d = { out, 0, cap, false };
	size_t s = der_open(&d, 0x30), b;

	der_put(&d, tbs, tn);
	alg(&d);
	b = der_open(&d, 0x03);
	der_put1(&d, 0);
	der_put(&d, sig, sn);
	der_close(&d, b);
	der_close(&d, s);
	if (d.over)
		return -LLMK_ERANGE;
	*len = d.n;
	return 0;
}
