/*
 * tools/host/snp_sim_cert.c — the simulator's test chain: ARK -> ASK -> VCEK
 * as X.509 v3 DER (RFC 5280 §4.1), signed RSASSA-PSS with SHA-384 as AMD's
 * (RFC 8017 §8.1 and §9.1.1, written here on BearSSL's raw RSA private
 * operation: Debian's BearSSL 0.6 has no PSS), and the extended guest
 * request's certificate table. Not AMD's: the names say "llmk snp-sim".
 */
#include "snp_sim.h"
#include "der_write.h"

#include <string.h>

static void sha384_alg(struct der *d)
{
	size_t s = der_open(d, 0x30);
	DER_OID(d, 2, 16, 840, 1, 101, 3, 4, 2, 2);
	der_prim(d, 0x05, NULL, 0);
	der_close(d, s);
}

/* RFC 4055 §3.1: RSASSA-PSS-params {SHA-384, MGF1 with SHA-384, salt 48}. */
static void pss_alg(struct der *d)
{
	size_t s = der_open(d, 0x30), p, t, m;
	DER_OID(d, 1, 2, 840, 113549, 1, 1, 10);
	p = der_open(d, 0x30);
	t = der_open(d, 0xa0);
	sha384_alg(d);
	der_close(d, t);
	t = der_open(d, 0xa1);
	m = der_open(d, 0x30);
	DER_OID(d, 1, 2, 840, 113549, 1, 1, 8);
	sha384_alg(d);
	der_close(d, m);
	der_close(d, t);
	t = der_open(d, 0xa2);
	der_small_int(d, 48);
	der_close(d, t);
	der_close(d, p);
	der_close(d, s);
}

static void rsa_spki(struct der *d, const br_rsa_public_key *pk)
{
	size_t s = der_open(d, 0x30), a = der_open(d, 0x30), b, k;
	DER_OID(d, 1, 2, 840, 113549, 1, 1, 1);
	der_prim(d, 0x05, NULL, 0);
	der_close(d, a);
	b = der_open(d, 0x03);
	der_put1(d, 0);
	k = der_open(d, 0x30);
	der_integer(d, pk->n, pk->nlen);
	der_integer(d, pk->e, pk->elen);
	der_close(d, k);
	der_close(d, b);
	der_close(d, s);
}

static void ca_extensions(struct der *d)
{
	size_t t = der_open(d, 0xa3), s = der_open(d, 0x30);
	der_x509_basic_ca(d, -1);
	der_x509_key_usage(d, 0x01, 0x06); /* keyCertSign, cRLSign */
	der_close(d, s);
	der_close(d, t);
}

/* AMD's VCEK extensions (1.3.6.1.4.1.3704.1.*), each value DER in the OCTET STRING. */
static void amd_ext_int(struct der *d, uint32_t sub, int subsub, uint32_t v)
{
	uint8_t buf[16];
	struct der in = { buf, 0, sizeof buf, false };
	size_t e = der_open(d, 0x30);
	if (subsub < 0)
		DER_OID(d, 1, 3, 6, 1, 4, 1, 3704, 1, sub);
	else {
		uint32_t arcs[] = { 1, 3, 6, 1, 4, 1, 3704, 1, sub, (uint32_t)subsub };
		der_oid(d, arcs, 10);
	}
	der_small_int(&in, v);
	der_prim(d, 0x04, buf, in.n);
	der_close(d, e);
}

static void vcek_extensions(struct der *d, const struct snp_sim *s)
{
	const struct snp_sim_config *c = &s->cfg;
	uint8_t pn[20];
	struct der in = { pn, 0, sizeof pn, false };
	size_t t = der_open(d, 0xa3), q = der_open(d, 0x30), e;

	amd_ext_int(d, 1, -1, 0); /* structVersion */
	e = der_open(d, 0x30);
	DER_OID(d, 1, 3, 6, 1, 4, 1, 3704, 1, 2); /* productName, IA5String */
	der_prim(&in, 0x16, c->product, strlen(c->product));
	der_prim(d, 0x04, pn, in.n);
	der_close(d, e);
	amd_ext_int(d, 3, 1, (uint8_t)c->tcb);         /* blSPL */
	amd_ext_int(d, 3, 2, (uint8_t)(c->tcb >> 8));  /* teeSPL */
	amd_ext_int(d, 3, 3, (uint8_t)(c->tcb >> 48)); /* snpSPL */
	amd_ext_int(d, 3, 8, (uint8_t)(c->tcb >> 56)); /* ucodeSPL */
	e = der_open(d, 0x30);
	DER_OID(d, 1, 3, 6, 1, 4, 1, 3704, 1, 4); /* hwID: CHIP_ID, raw */
	der_prim(d, 0x04, s->chip_id, 64);
	der_close(d, e);
	der_close(d, q);
	der_close(d, t);
}

/* ---- RSASSA-PSS with SHA-384, salt 48 (RFC 8017 §9.1.1, §8.1.1) ---- */
static void mgf1_xor(uint8_t *out, size_t n, const uint8_t *seed, size_t sn)
{
	for (uint32_t ctr = 0; n; ctr++) {
		br_sha384_context h;
		uint8_t c[4] = { (uint8_t)(ctr >> 24), (uint8_t)(ctr >> 16), (uint8_t)(ctr >> 8),
				 (uint8_t)ctr }, t[48];
		br_sha384_init(&h);
		br_sha384_update(&h, seed, sn);
		br_sha384_update(&h, c, 4);
		br_sha384_out(&h, t);
		size_t k = n < 48 ? n : 48;
		for (size_t i = 0; i < k; i++)
			*out++ ^= t[i];
		n -= k;
	}
}

static int pss_sign(const br_rsa_private_key *sk, const br_prng_class **rng, const uint8_t *msg,
		    size_t n, uint8_t *sig, size_t *sig_len)
{
	size_t k = (sk->n_bitlen + 7) / 8, em_bits = sk->n_bitlen - 1, em_len = (em_bits + 7) / 8;
	uint8_t mhash[48], salt[48], h[48], em[512];
	br_sha384_context c;

	if (k > sizeof em || em_len < 48 + 48 + 2)
		return -LLMK_ERANGE;
	br_sha384_init(&c);
	br_sha384_update(&c, msg, n);
	br_sha384_out(&c, mhash);
	(*rng)->generate(rng, salt, sizeof salt);
	br_sha384_init(&c);
	br_sha384_update(&c, "\0\0\0\0\0\0\0\0", 8);
	br_sha384_update(&c, mhash, 48);
	br_sha384_update(&c, salt, 48);
	br_sha384_out(&c, h);
	/* EM = maskedDB || H || 0xbc, DB = zeros || 0x01 || salt */
	uint8_t *e = em + (k - em_len);
	memset(em, 0, k);
	size_t db = em_len - 48 - 1;
	e[db - 48 - 1] = 0x01;
	memcpy(e + db - 48, salt, 48);
	mgf1_xor(e, db, h, 48);
	e[0] &= (uint8_t)(0xff >> (8 * em_len - em_bits));
	memcpy(e + db, h, 48);
	e[em_len - 1] = 0xbc;
	if (!br_rsa_private_get_default()(em, sk))
		return -LLMK_EIO;
	memcpy(sig, em, k);
	*sig_len = k;
	return 0;
}

/* Certificate = SEQUENCE { tbs, PSS algorithm, BIT STRING signature }. */
static int sign_cert(const uint8_t *tbs, size_t tn, const br_rsa_private_key *sk,
		     const br_prng_class **rng, uint8_t *out, size_t cap, size_t *len)
{
	uint8_t sig[512];
	size_t sn;
	int e = pss_sign(sk, rng, tbs, tn, sig, &sn);
	if (e)
		return e;
	return der_x509_cert(tbs, tn, pss_alg, sig, sn, out, cap, len);
}

enum { KIND_ARK, KIND_ASK, KIND_VCEK };

static int tbs(struct der *d, int kind, const struct snp_sim *s, const br_rsa_public_key *rsa)
{
	char issuer[32], subject[32];
	const char *p = s->cfg.product;
	size_t t;

	plat_snprintf(issuer, sizeof issuer, "%s-%s", kind == KIND_VCEK ? "SEV" : "ARK", p);
	plat_snprintf(subject, sizeof subject, "%s-%s", kind == KIND_ARK ? "ARK" : "SEV", p);
	if (kind == KIND_VCEK)
		plat_snprintf(subject, sizeof subject, "SEV-VCEK");
	t = der_x509_tbs_open(d, (uint32_t)(kind + 1), pss_alg, "llmk snp-sim test chain (not AMD)",
			      issuer, subject);
	if (kind == KIND_VCEK) {
		der_x509_ec_spki(d, &s->vcek_pub);
		vcek_extensions(d, s);
	} else {
		rsa_spki(d, rsa);
		ca_extensions(d);
	}
	der_close(d, t);
	return d->over ? -LLMK_ERANGE : 0;
}

static int make_rsa(const char *label, const struct snp_sim *s, unsigned bits,
		    br_rsa_private_key *sk, uint8_t *skb, br_rsa_public_key *pk, uint8_t *pkb)
{
	br_hmac_drbg_context drbg;
	uint8_t seed[48];
	br_hmac_key_context kc;
	br_hmac_context hc;

	br_hmac_key_init(&kc, &br_sha384_vtable, s->cfg.product, strlen(s->cfg.product));
	br_hmac_init(&hc, &kc, 0);
	br_hmac_update(&hc, "llmk snp-sim ", 13);
	br_hmac_update(&hc, label, strlen(label));
	br_hmac_out(&hc, seed);
	br_hmac_drbg_init(&drbg, &br_sha384_vtable, seed, sizeof seed);
	if (!br_rsa_keygen_get_default()(&drbg.vtable, sk, skb, pk, pkb, bits, 65537))
		return -LLMK_EIO;
	return 0;
}

int snp_sim_chain_make(struct snp_sim_chain *c, const struct snp_sim *s, unsigned rsa_bits)
{
	static uint8_t ark_sk[BR_RSA_KBUF_PRIV_SIZE(4096)], ark_pk[BR_RSA_KBUF_PUB_SIZE(4096)];
	static uint8_t ask_sk[BR_RSA_KBUF_PRIV_SIZE(4096)], ask_pk[BR_RSA_KBUF_PUB_SIZE(4096)];
	br_rsa_private_key ark, ask;
	br_rsa_public_key arkp, askp;
	br_hmac_drbg_context salt;
	uint8_t t[SNP_SIM_CERT_MAX];
	int e;

	if (rsa_bits < 2048 || rsa_bits > 4096)
		return -LLMK_EINVAL;
	memset(c, 0, sizeof *c);
	if ((e = make_rsa("ARK", s, rsa_bits, &ark, ark_sk, &arkp, ark_pk)) ||
	    (e = make_rsa("ASK", s, rsa_bits, &ask, ask_sk, &askp, ask_pk)))
		return e;
	br_hmac_drbg_init(&salt, &br_sha384_vtable, s->chip_id, 64);

	struct der d = { t, 0, sizeof t, false };
	if ((e = tbs(&d, KIND_ARK, s, &arkp)) ||
	    (e = sign_cert(t, d.n, &ark, &salt.vtable, c->ark, sizeof c->ark, &c->ark_len)))
		goto out;
	d = (struct der){ t, 0, sizeof t, false };
	if ((e = tbs(&d, KIND_ASK, s, &askp)) ||
	    (e = sign_cert(t, d.n, &ark, &salt.vtable, c->ask, sizeof c->ask, &c->ask_len)))
		goto out;
	d = (struct der){ t, 0, sizeof t, false };
	if ((e = tbs(&d, KIND_VCEK, s, NULL)) ||
	    (e = sign_cert(t, d.n, &ask, &salt.vtable, c->vcek, sizeof c->vcek, &c->vcek_len)))
		goto out;
out:
	memset(ark_sk, 0, sizeof ark_sk);
	memset(ask_sk, 0, sizeof ask_sk);
	return e;
}

/* GUIDs of the table's entries (GHCB spec §4.1.8.1), RFC 4122 byte order. */
static const uint8_t guid_ark[16] = { 0xc0, 0xb4, 0x06, 0xa4, 0xa8, 0x03, 0x49, 0x52,
				      0x97, 0x43, 0x3f, 0xb6, 0x01, 0x4c, 0xd0, 0xae };
static const uint8_t guid_ask[16] = { 0x4a, 0xb7, 0xb3, 0x79, 0xbb, 0xac, 0x4f, 0xe4,
				      0xa0, 0x2f, 0x05, 0xae, 0xf3, 0x27, 0xc7, 0x82 };
static const uint8_t guid_vcek[16] = { 0x63, 0xda, 0x75, 0x8d, 0xe6, 0x64, 0x45, 0x64,
				       0xad, 0xc5, 0xf4, 0xb9, 0x3b, 0xe8, 0xac, 0xcd };

long snp_sim_cert_table(const struct snp_sim_chain *c, uint8_t *out, size_t cap)
{
	const uint8_t *guid[3] = { guid_ark, guid_ask, guid_vcek };
	const uint8_t *der[3] = { c->ark, c->ask, c->vcek };
	size_t len[3] = { c->ark_len, c->ask_len, c->vcek_len };
	size_t off = 4 * 24, total = off + len[0] + len[1] + len[2];

	if (cap < total)
		return -LLMK_ERANGE;
	memset(out, 0, off);
	for (int i = 0; i < 3; i++) {
		memcpy(out + 24 * i, guid[i], 16);
		snp_put32(out + 24 * i + 16, (uint32_t)off);
		snp_put32(out + 24 * i + 20, (uint32_t)len[i]);
		memcpy(out + off, der[i], len[i]);
		off += len[i];
	}
	return (long)total;
}

long snp_sim_pem(const uint8_t *der, size_t n, char *out, size_t cap)
{
	return der_pem(der, n, "CERTIFICATE", out, cap);
}
