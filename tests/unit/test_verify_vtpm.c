/*
 * tests/unit/test_verify_vtpm.c — tools/verify/vtpm.c against evidence from
 * a software "TPM" built here: a BearSSL P-256 key as the AK, a TPMS_ATTEST
 * marshalled by hand from TPM 2.0 Part 2, a firmware event log with OVMF's
 * shape and a kernel log, an EK certificate from a CA made here (DER written
 * by hand). The expected PCR values come from this file's own replay, not
 * eventlog.c. Every check fails on its own tampered variant, with its own
 * reason; Debian's tpm2_checkquote accepts the exported files (and refuses
 * them once a PCR value is changed).
 */
#include "test.h"

#include <bearssl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../../tools/verify/verify.h"

/* ---- small marshalling helpers ---- */
struct buf {
	uint8_t b[16384];
	size_t n;
};
static void be16(struct buf *o, uint16_t v)
{
	o->b[o->n++] = (uint8_t)(v >> 8);
	o->b[o->n++] = (uint8_t)v;
}
static void be32(struct buf *o, uint32_t v)
{
	be16(o, (uint16_t)(v >> 16));
	be16(o, (uint16_t)v);
}
static void le32(struct buf *o, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		o->b[o->n++] = (uint8_t)(v >> (8 * i));
}
static void bytes(struct buf *o, const void *p, size_t n)
{
	memcpy(o->b + o->n, p, n);
	o->n += n;
}
static void sha(const void *p, size_t n, uint8_t out[32])
{
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, p, n);
	br_sha256_out(&c, out);
}
static void extend(uint8_t pcr[32], const uint8_t d[32])
{
	uint8_t t[64];
	memcpy(t, pcr, 32);
	memcpy(t + 32, d, 32);
	sha(t, 64, pcr);
}

/* ---- keys: deterministic, from an HMAC-DRBG ---- */
struct eckey {
	br_ec_private_key sk;
	br_ec_public_key pk;
	uint8_t kb[BR_EC_KBUF_PRIV_MAX_SIZE], pb[BR_EC_KBUF_PUB_MAX_SIZE];
};
static void keygen(struct eckey *k, const char *seed)
{
	br_hmac_drbg_context rng;
	br_hmac_drbg_init(&rng, &br_sha256_vtable, seed, strlen(seed));
	const br_ec_impl *ec = br_ec_get_default();
	br_ec_keygen(&rng.vtable, ec, &k->sk, k->kb, BR_EC_secp256r1);
	br_ec_compute_pub(ec, &k->pk, k->pb, &k->sk);
}

/* TPMT_PUBLIC of an ECC P-256 key (Part 2 §12.2.4) */
/* TCG EK Credential Profile §B.6 policy A, PolicySecret(TPM_RH_ENDORSEMENT) */
static const uint8_t ek_policy_a[32] = {
	0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc, 0x8d, 0x46, 0xa5, 0xd7, 0x24,
	0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52, 0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa,
};

/* An AK (scheme ECDSA, no policy, no symmetric: policy NULL) or an EK
 * (template L-2: policy A, AES-128 CFB, no scheme). */
static void tpmt_public(struct buf *o, const struct eckey *k, uint32_t attrs, uint16_t scheme,
			const uint8_t *policy)
{
	be16(o, TPM_ALG_ECC);
	be16(o, TPM_ALG_SHA256);
	be32(o, attrs);
	be16(o, policy ? 32 : 0); /* authPolicy */
	if (policy)
		bytes(o, policy, 32);
	if (policy) {             /* symmetric: AES-128 CFB */
		be16(o, 0x0006);
		be16(o, 128);
		be16(o, 0x0043);
	} else {
		be16(o, TPM_ALG_NULL);
	}
	be16(o, scheme);
	if (scheme != TPM_ALG_NULL)
		be16(o, TPM_ALG_SHA256);
	be16(o, TPM_ECC_NIST_P256);
	be16(o, TPM_ALG_NULL);    /* kdf */
	be16(o, 32);
	bytes(o, k->pk.q + 1, 32);
	be16(o, 32);
	bytes(o, k->pk.q + 33, 32);
}

/* ---- a tiny DER writer for the EK certificate and its CA ---- */
static size_t der(uint8_t *out, uint8_t tag, const uint8_t *c, size_t n)
{
	size_t h = 0;
	out[h++] = tag;
	if (n < 128) {
		out[h++] = (uint8_t)n;
	} else if (n < 256) {
		out[h++] = 0x81;
		out[h++] = (uint8_t)n;
	} else {
		out[h++] = 0x82;
		out[h++] = (uint8_t)(n >> 8);
		out[h++] = (uint8_t)n;
	}
	memmove(out + h, c, n);
	return h + n;
}
static size_t name_cn(uint8_t *out, const char *cn)
{
	uint8_t a[512], b[512], c[512];
	size_t n = 0;
	static const uint8_t oid_cn[] = {0x06, 0x03, 0x55, 0x04, 0x03};
	memcpy(a, oid_cn, sizeof oid_cn);
	n = sizeof oid_cn + der(a + sizeof oid_cn, 0x0c, (const uint8_t *)cn, strlen(cn));
	n = der(b, 0x30, a, n);
	n = der(c, 0x31, b, n);
	return der(out, 0x30, c, n);
}
static const uint8_t alg_ecdsa_sha256[] = {0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48,
					   0xce, 0x3d, 0x04, 0x03, 0x02};
static const uint8_t spki_p256[] = {0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02,
				    0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
/* ecdsa-with-SHA256 with a NULL parameter: the same algorithm, other bytes */
static const uint8_t alg_ecdsa_sha256_null[] = {0x30, 0x0c, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce,
						0x3d, 0x04, 0x03, 0x02, 0x05, 0x00};
static bool outer_alg_null;

/* An X.509 v3 certificate for subject's key, signed by issuer's. */
static size_t make_cert(uint8_t *out, const char *issuer, const struct eckey *ik,
			const char *subject, const struct eckey *sk, bool ca)
{
	uint8_t tbs[1024], t[1024];
	size_t n = 0, k;
	static const uint8_t ver[] = {0xa0, 0x03, 0x02, 0x01, 0x02}, serial[] = {0x02, 0x01, 0x05};
	memcpy(tbs + n, ver, sizeof ver);
	n += sizeof ver;
	memcpy(tbs + n, serial, sizeof serial);
	n += sizeof serial;
	memcpy(tbs + n, alg_ecdsa_sha256, sizeof alg_ecdsa_sha256);
	n += sizeof alg_ecdsa_sha256;
	n += name_cn(tbs + n, issuer);
	k = der(t, 0x17, (const uint8_t *)"200101000000Z", 13);
	k += der(t + k, 0x18, (const uint8_t *)"99991231235959Z", 15);
	n += der(tbs + n, 0x30, t, k);
	n += name_cn(tbs + n, subject);
	memcpy(t, spki_p256, sizeof spki_p256);
	uint8_t bit[66] = {0};
	memcpy(bit + 1, sk->pk.q, 65);
	k = sizeof spki_p256 + der(t + sizeof spki_p256, 0x03, bit, 66);
	n += der(tbs + n, 0x30, t, k);
	if (ca) { /* basicConstraints critical CA:TRUE */
		static const uint8_t ext[] = {0xa3, 0x12, 0x30, 0x10, 0x30, 0x0e, 0x06, 0x03, 0x55, 0x1d,
					      0x13, 0x01, 0x01, 0xff, 0x04, 0x04, 0x30, 0x02, 0x01,
					      0x01, 0xff};
		/* the inner BOOLEAN: 01 01 ff; fix the lengths by building it */
		(void)ext;
		uint8_t bc[8], os[16], e1[32], e2[40], e3[48];
		static const uint8_t t_bool[] = {0x01, 0x01, 0xff};
		size_t m = der(bc, 0x30, t_bool, 3);
		m = der(os, 0x04, bc, m);
		static const uint8_t oid_bc[] = {0x06, 0x03, 0x55, 0x1d, 0x13, 0x01, 0x01, 0xff};
		memcpy(e1, oid_bc, sizeof oid_bc);
		memcpy(e1 + sizeof oid_bc, os, m);
		m = der(e2, 0x30, e1, sizeof oid_bc + m);
		m = der(e3, 0x30, e2, m);
		n += der(tbs + n, 0xa3, e3, m);
	}
	n = der(t, 0x30, tbs, n);
	uint8_t h[32], sig[80], bs[81];
	sha(t, n, h);
	size_t sl = br_ecdsa_i31_sign_asn1(br_ec_get_default(), &br_sha256_vtable, h, &ik->sk, sig);
	bs[0] = 0;
	memcpy(bs + 1, sig, sl);
	uint8_t all[2048];
	memcpy(all, t, n);
	k = n;
	if (outer_alg_null) { /* changed after signing: outside what the signature covers */
		memcpy(all + k, alg_ecdsa_sha256_null, sizeof alg_ecdsa_sha256_null);
		k += sizeof alg_ecdsa_sha256_null;
	} else {
		memcpy(all + k, alg_ecdsa_sha256, sizeof alg_ecdsa_sha256);
		k += sizeof alg_ecdsa_sha256;
	}
	k += der(all + k, 0x03, bs, sl + 1);
	return der(out, 0x30, all, k);
}
static void pem_of(const uint8_t *d, size_t n, char *out)
{
	char b64[4096];
	b64_encode(d, n, b64, sizeof b64);
	size_t o = (size_t)sprintf(out, "-----BEGIN CERTIFICATE-----\n");
	for (size_t i = 0, n64 = strlen(b64); i < n64; i += 64)
		o += (size_t)sprintf(out + o, "%.64s\n", b64 + i);
	sprintf(out + o, "-----END CERTIFICATE-----\n");
}

/* ---- the software TPM's evidence ---- */
enum tamper {
	T_NONE, T_REPORT_DATA, T_EXTRA_DATA, T_SIG, T_QUOTE_BYTE, T_AK_ATTRS, T_AK_DECRYPT,
	T_MAGIC, T_TYPE, T_PCR_VALUE, T_PCR_SEL, T_LOG_CHANGED, T_LOG_REMOVED, T_LOG_ADDED,
	T_KLOG_CHANGED, T_PROVIDER_NONE, T_SIMULATED, T_DUPLICATE, T_EK_OTHER_CA, T_EK_OTHER_KEY,
	T_NO_LOG, T_NO_LOCALITY, T_SIGNER, T_AK_NODA, T_AK_POLICY, T_EK_TEMPLATE, T_FW_DATA,
	T_KLOG_TEXT, T_EK_OUTER_ALG, T_MACHINE, T_CONFIG_TOLD, T_CONFIG_UNLOGGED, T_CONFIG_AFTER_MODEL,
};

struct sim {
	struct eckey ak, ek, ca, other;
	struct evidence_inputs in;
	uint8_t pcr[TPM_PCRS][32];
	uint8_t pcr4_image[32]; /* the "authenticode" digest the log measures */
	char ca_pem[4096], other_pem[4096];
	uint8_t bundle[65536];
	size_t len;
};

/* PCRs 0-4 and 23: Debian's tpm2_checkquote 5.4 refused 8 and 9 PCR
 * values from a raw file here ("Something wrong, trying to print"); 6 pass */
static const uint32_t sim_mask = 0x80001fu;

static void fw_event(struct buf *log, struct sim *s, uint32_t pcr, uint32_t type, const void *data,
		     uint32_t n, const uint8_t *digest)
{
	uint8_t d[32];
	if (digest)
		memcpy(d, digest, 32);
	else
		sha(data, n, d);
	le32(log, pcr);
	le32(log, type);
	le32(log, 1);
	log->b[log->n++] = 0x0b;
	log->b[log->n++] = 0x00;
	bytes(log, d, 32);
	le32(log, n);
	bytes(log, data, n);
	if (type != EV_NO_ACTION)
		extend(s->pcr[pcr], d);
}

static void build(struct sim *s, enum tamper t)
{
	static struct buf fw, kl, q, ak, sig, sel, ekpub;
	uint8_t rd[64], h[32];
	fw.n = kl.n = q.n = ak.n = sig.n = sel.n = ekpub.n = 0;
	memset(s->pcr, 0, sizeof s->pcr);
	for (int i = 17; i <= 22; i++)
		memset(s->pcr[i], 0xff, 32);

	/* firmware log: Spec ID header (SHA-1 format), StartupLocality 0, then events */
	le32(&fw, 0);
	le32(&fw, EV_NO_ACTION);
	uint8_t z20[20] = {0};
	bytes(&fw, z20, 20);
	struct buf spec = {{0}, 0};
	bytes(&spec, "Spec ID Event03", 16);
	le32(&spec, 0);                                     /* platformClass */
	spec.b[spec.n++] = 0; spec.b[spec.n++] = 2; spec.b[spec.n++] = 0; spec.b[spec.n++] = 2;
	le32(&spec, 1);                                     /* one algorithm: SHA-256, 32 */
	spec.b[spec.n++] = 0x0b; spec.b[spec.n++] = 0; spec.b[spec.n++] = 32; spec.b[spec.n++] = 0;
	spec.b[spec.n++] = 0;                               /* vendorInfoSize */
	le32(&fw, (uint32_t)spec.n);
	bytes(&fw, spec.b, spec.n);
	uint8_t loc[17] = "StartupLocality";
	loc[16] = 0;
	if (t != T_NO_LOCALITY)
		fw_event(&fw, s, 0, EV_NO_ACTION, loc, 17, NULL);
	fw_event(&fw, s, 0, 0x00000008 /* EV_S_CRTM_VERSION */, "\0\0", 2, NULL);
	if (t == T_FW_DATA) { /* the digest OVMF extends, a text that says something else */
		uint8_t d[32];
		sha("Calling EFI Application from Boot Option", 40, d);
		fw_event(&fw, s, 4, EV_EFI_ACTION, "Calling EFI Application from Boot Optiom", 40, d);
	} else {
		fw_event(&fw, s, 4, EV_EFI_ACTION, "Calling EFI Application from Boot Option", 40,
			 NULL);
	}
	static const uint8_t zero4[4] = {0};
	for (uint32_t i = 0; i < 8; i++)
		fw_event(&fw, s, i, EV_SEPARATOR, zero4, 4, NULL);
	/* UEFI_IMAGE_LOAD_EVENT (PFP §10.4.4.2): location, length, link address,
	 * device path length, then the path (here only its end node) */
	static const uint8_t load[36] = {[0] = 0x00, [1] = 0x10, [9] = 0x20, [24] = 4,
					 [32] = 0x7f, [33] = 0xff, [34] = 4};
	fw_event(&fw, s, 4, EV_EFI_BOOT_SERVICES_APPLICATION, load, 36, s->pcr4_image);
	if (t == T_LOG_CHANGED) /* the log says another image, the TPM saw this one */
		fw.b[fw.n - 36 - 4 - 32] ^= 1;
	if (t == T_LOG_ADDED) { /* an event the TPM never saw */
		uint8_t save[32];
		memcpy(save, s->pcr[2], 32);
		fw_event(&fw, s, 2, EV_EFI_ACTION, "Exit Boot Services Invocation", 29, NULL);
		memcpy(s->pcr[2], save, 32);
	}
	size_t before_last = fw.n;
	fw_event(&fw, s, 3, EV_EFI_ACTION, "late", 4, NULL);
	if (t == T_LOG_REMOVED)
		fw.n = before_last;

	/* kernel log: the configuration (the empty one, or a host's llmk.cfg,
	 * consistently logged and bound), then the model measured into PCR 23 */
	if (t == T_CONFIG_TOLD)
		sha("seed 42\n", 8, s->in.config_digest);
	else
		sha("", 0, s->in.config_digest);
	char cfg[128] = "llmk config ";
	verify_hex(s->in.config_digest, 32, cfg + 12);
	if (t != T_CONFIG_UNLOGGED && t != T_CONFIG_AFTER_MODEL)
		fw_event(&kl, s, 23, EV_EVENT_TAG, cfg, (uint32_t)strlen(cfg) + 1,
			 s->in.config_digest);
	char what[128] = "llmk model ";
	verify_hex(s->in.model_digest, 32, what + 11);
	if (t == T_KLOG_TEXT) /* the text names another model than the one extended */
		what[11] = what[11] == '0' ? '1' : '0';
	fw_event(&kl, s, 23, EV_EVENT_TAG, what, (uint32_t)strlen(what) + 1, s->in.model_digest);
	if (t == T_CONFIG_AFTER_MODEL)
		fw_event(&kl, s, 23, EV_EVENT_TAG, cfg, (uint32_t)strlen(cfg) + 1,
			 s->in.config_digest);
	if (t == T_KLOG_CHANGED)
		kl.b[14] ^= 0x80;

	/* the AK: drivers/tpm2_public.c's template */
	uint32_t attrs = TPMA_FIXED_TPM | TPMA_FIXED_PARENT | TPMA_SENSITIVE_DATA_ORIGIN |
			 TPMA_USER_WITH_AUTH | TPMA_NO_DA | TPMA_RESTRICTED | TPMA_SIGN;
	if (t == T_AK_ATTRS)
		attrs &= ~TPMA_RESTRICTED;
	if (t == T_AK_DECRYPT)
		attrs |= TPMA_DECRYPT;
	if (t == T_AK_NODA)
		attrs &= ~TPMA_NO_DA;
	tpmt_public(&ak, &s->ak, attrs, TPM_ALG_ECDSA, t == T_AK_POLICY ? ek_policy_a : NULL);
	uint32_t ek_attrs = TPMA_FIXED_TPM | TPMA_FIXED_PARENT | TPMA_SENSITIVE_DATA_ORIGIN |
			    TPMA_ADMIN_WITH_POLICY | TPMA_RESTRICTED | TPMA_DECRYPT;
	if (t == T_EK_TEMPLATE)
		ek_attrs |= TPMA_USER_WITH_AUTH; /* usable without the policy */
	tpmt_public(&ekpub, t == T_EK_OTHER_KEY ? &s->other : &s->ek, ek_attrs, TPM_ALG_NULL,
		    ek_policy_a);

	/* PCR selection: SHA-256, PCRs 0-7 and 23 */
	be32(&sel, 1);
	be16(&sel, TPM_ALG_SHA256);
	sel.b[sel.n++] = 3;
	sel.b[sel.n++] = (uint8_t)sim_mask;
	sel.b[sel.n++] = (uint8_t)(sim_mask >> 8);
	sel.b[sel.n++] = (uint8_t)(sim_mask >> 16);
	uint8_t values[32 * TPM_PCRS];
	size_t nv = 0;
	for (int i = 0; i < TPM_PCRS; i++)
		if (sim_mask >> i & 1) {
			memcpy(values + nv, s->pcr[i], 32);
			nv += 32;
		}

	/* TPMS_ATTEST (Part 2 §10.12.12) with TPMS_QUOTE_INFO */
	evidence_report_data(&s->in, rd);
	be32(&q, t == T_MAGIC ? 0xff544348u : TPM_GENERATED_VALUE);
	be16(&q, t == T_TYPE ? 0x8017 : TPM_ST_ATTEST_QUOTE);
	/* qualifiedSigner: nameAlg || H(TPM_RH_ENDORSEMENT || name), Part 1 §16.6 */
	uint8_t qn_in[4 + 34] = {0x40, 0x00, 0x00, 0x0b, 0x00, 0x0b};
	sha(ak.b, ak.n, qn_in + 6);
	if (t == T_SIGNER) /* the name where the qualified name belongs */
		memcpy(h, qn_in + 6, 32);
	else
		sha(qn_in, sizeof qn_in, h);
	be16(&q, 34);
	be16(&q, TPM_ALG_SHA256);
	bytes(&q, h, 32);
	uint8_t extra[32];
	sha(rd, 64, extra);
	if (t == T_EXTRA_DATA)
		extra[0] ^= 1;
	be16(&q, 32);
	bytes(&q, extra, 32);
	be32(&q, 0); be32(&q, 123456); /* clock */
	be32(&q, 1); be32(&q, 0); q.b[q.n++] = 1;
	be32(&q, 0x20191023); be32(&q, 0);
	bytes(&q, sel.b, sel.n);
	sha(values, nv, h);
	be16(&q, 32);
	bytes(&q, h, 32);

	/* TPMT_SIGNATURE: ECDSA over SHA-256(TPMS_ATTEST) */
	uint8_t raw[64];
	sha(q.b, q.n, h);
	CHECK_EQ_INT(br_ecdsa_i31_sign_raw(br_ec_get_default(), &br_sha256_vtable, h, &s->ak.sk, raw),
		     64);
	if (t == T_SIG)
		raw[10] ^= 1;
	if (t == T_QUOTE_BYTE)
		q.b[q.n - 40] ^= 1; /* in the clock info, after signing */
	be16(&sig, TPM_ALG_ECDSA);
	be16(&sig, TPM_ALG_SHA256);
	be16(&sig, 32);
	bytes(&sig, raw, 32);
	be16(&sig, 32);
	bytes(&sig, raw + 32, 32);
	if (t == T_PCR_VALUE)
		values[32 * 4 + 3] ^= 1;
	if (t == T_PCR_SEL)
		sel.b[6] = 0x7f;

	/* the EK certificate */
	uint8_t cert[2048];
	outer_alg_null = t == T_EK_OUTER_ALG;
	size_t cl = make_cert(cert, t == T_EK_OTHER_CA ? "other CA" : "llmk test CA",
			      t == T_EK_OTHER_CA ? &s->other : &s->ca, "EK", &s->ek, false);
	outer_alg_null = false;

	/* the bundle */
	uint8_t rd2[64];
	size_t *n = &s->len, cap = sizeof s->bundle;
	CHECK_EQ_INT(evidence_begin(s->bundle, cap, n, t == T_PROVIDER_NONE ? "none" : "vtpm", &s->in,
				    rd2), 0);
	if (t == T_REPORT_DATA) /* the record no longer matches its inputs */
		s->bundle[8 + 8 + 4 + 8 + 5] ^= 1;
	attest_rec_put(s->bundle, cap, n, ATTEST_REC_TPM_QUOTE, q.b, q.n);
	attest_rec_put(s->bundle, cap, n, ATTEST_REC_TPM_SIG, sig.b, sig.n);
	attest_rec_put(s->bundle, cap, n, ATTEST_REC_TPM_AK_PUB, ak.b, ak.n);
	attest_rec_put(s->bundle, cap, n, ATTEST_REC_TPM_PCR_SEL, sel.b, sel.n);
	attest_rec_put(s->bundle, cap, n, ATTEST_REC_TPM_PCRS, values, nv);
	attest_rec_put(s->bundle, cap, n, ATTEST_REC_TPM_EK_CERT, cert, cl);
	attest_rec_put(s->bundle, cap, n, ATTEST_REC_TPM_EK_PUB, ekpub.b, ekpub.n);
	if (t != T_NO_LOG)
		attest_rec_put(s->bundle, cap, n, ATTEST_REC_TPM_LOG_FW, fw.b, fw.n);
	attest_rec_put(s->bundle, cap, n, ATTEST_REC_TPM_LOG_KERNEL, kl.b, kl.n);
	if (t == T_SIMULATED)
		attest_rec_put(s->bundle, cap, n, ATTEST_REC_SIMULATED, "swtpm-sim", 9);
	if (t == T_MACHINE) /* text nothing binds: a reader could take it for checked */
		attest_rec_put(s->bundle, cap, n, ATTEST_REC_MACHINE, "QEMU", 4);
	if (t == T_DUPLICATE)
		attest_rec_put(s->bundle, cap, n, ATTEST_REC_NONCE, s->in.nonce, s->in.nonce_len);
}

static struct sim *sim_new(void)
{
	struct sim *s = calloc(1, sizeof *s);
	keygen(&s->ak, "ak");
	keygen(&s->ek, "ek");
	keygen(&s->ca, "ca");
	keygen(&s->other, "other");
	memcpy(s->in.nonce, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	s->in.nonce_len = 8;
	for (int i = 0; i < 32; i++) {
		s->in.model_digest[i] = (uint8_t)(0xa0 + i);
		s->in.pubkey[i] = (uint8_t)(0x40 + i);
		s->pcr4_image[i] = (uint8_t)(0x11 * i);
	}
	strcpy(s->in.build_id, "00112233aabbccdd");
	uint8_t der_ca[2048], der_other[2048];
	pem_of(der_ca, make_cert(der_ca, "llmk test CA", &s->ca, "llmk test CA", &s->ca, true),
	       s->ca_pem);
	pem_of(der_other, make_cert(der_other, "other CA", &s->other, "other CA", &s->other, true),
	       s->other_pem);
	return s;
}

static void expect_all(struct sim *s, struct vtpm_expect *x)
{
	memset(x, 0, sizeof *x);
	memcpy(x->b.nonce, s->in.nonce, s->in.nonce_len);
	x->b.nonce_len = s->in.nonce_len;
	x->have_pcr4 = x->b.have_model = true;
	/* PCR4 as this file computes OVMF's sequence */
	uint8_t d[32];
	memset(x->pcr4, 0, 32);
	sha("Calling EFI Application from Boot Option", 40, d);
	extend(x->pcr4, d);
	sha("\0\0\0\0", 4, d);
	extend(x->pcr4, d);
	extend(x->pcr4, s->pcr4_image);
	memcpy(x->b.model, s->in.model_digest, 32);
	x->ek_ca_pem = s->ca_pem;
	x->ek_ca_len = strlen(s->ca_pem);
}

static struct vtpm_result res;

TEST(vtpm_verify_accepts_the_software_tpms_evidence_with_every_check)
{
	struct sim *s = sim_new();
	struct vtpm_expect x;
	char err[400] = "";
	build(s, T_NONE);
	expect_all(s, &x);
	int r = vtpm_verify(s->bundle, s->len, &x, &res, err, sizeof err);
	if (r)
		fprintf(stderr, "  %s\n", err);
	CHECK_EQ_INT(r, 0);
	CHECK_EQ_INT(res.nlines, 13);
	bool said = false;
	for (int i = 0; i < res.nlines; i++)
		said |= strstr(res.line[i], "config: sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934c"
				"a495991b7852b855 (the empty configuration: the guest was told "
				"nothing)") != NULL;
	CHECK(said);
	CHECK(strstr(res.summary, "PCRs 0,1,2,3,4,23") != NULL);
	CHECK(memcmp(res.b.pubkey, s->in.pubkey, 32) == 0);
	/* the same PCR4 from pe.c's OVMF replay */
	uint8_t p4[32];
	pe_pcr4_ovmf(s->pcr4_image, p4);
	CHECK(memcmp(p4, x.pcr4, 32) == 0);
	free(s);
}

TEST(vtpm_verify_refuses_each_tampered_field_with_its_own_reason)
{
	static const struct {
		enum tamper t;
		const char *reason;
	} cases[] = {
		{T_REPORT_DATA, "report data: the REPORT_DATA record is not SHA-512"},
		{T_EXTRA_DATA, "extraData (32 bytes) is not SHA-256 of the report data"},
		{T_SIG, "quote signature: does not verify with the AK"},
		{T_QUOTE_BYTE, "quote signature: does not verify with the AK"},
		{T_AK_ATTRS, "AK: objectAttributes"},
		{T_AK_DECRYPT, "AK: objectAttributes"},
		{T_MAGIC, "expected TPM_GENERATED_VALUE"},
		{T_TYPE, "expected TPM_ST_ATTEST_QUOTE"},
		{T_PCR_VALUE, "PCR digest: SHA-256 over the TPM_PCRS values"},
		{T_PCR_SEL, "PCR selection: the TPM_PCR_SEL record is not the selection the quote"},
		{T_LOG_CHANGED, "event logs: PCR 4 replays to"},
		{T_LOG_REMOVED, "event logs: PCR 3 replays to"},
		{T_LOG_ADDED, "event logs: PCR 2 replays to"},
		{T_KLOG_CHANGED, "its text does not end with its digest"},
		{T_KLOG_TEXT, "its text does not end with its digest"},
		{T_FW_DATA, "its SHA-256 digest is not the digest of its event data"},
		{T_SIGNER, "qualifiedSigner (34 bytes) is not the qualified name of the AK"},
		{T_AK_NODA, "AK: objectAttributes 0x00050072, expected 0x00050472"},
		{T_AK_POLICY, "AK: authPolicy of 32 bytes"},
		{T_EK_TEMPLATE, "EK: objectAttributes 0x000300f2, expected 0x000300b2"},
		{T_EK_OUTER_ALG, "its signatureAlgorithm differs from the signature algorithm inside"},
		{T_NO_LOG, "no TPM_LOG_FW record"},
		{T_PROVIDER_NONE, "provider none"},
		{T_SIMULATED, "simulated evidence (swtpm-sim): not hardware; refused"},
		{T_DUPLICATE, "record NONCE (type 0x0003) appears more than once"},
		{T_MACHINE, "record MACHINE (type 0x0008) is covered by no signature"},
		{T_EK_OTHER_CA, "EK certificate: does not chain to --ek-ca: not signed by a CA"},
		{T_EK_OTHER_KEY, "EK certificate: its public key is not the EK_PUB record's"},
		/* issue 27 item 2: a host that gives the guest an llmk.cfg (seed 42)
		 * is found, though the guest measured and bound it faithfully */
		{T_CONFIG_TOLD, "config: the guest was told configuration "
				"fe5c79ec0b734b209980fbb3846bd7b76e1e1882"},
		{T_CONFIG_UNLOGGED, "config: PCR 23's first event is not \"llmk config e3b0c442"},
		{T_CONFIG_AFTER_MODEL, "config: PCR 23's first event is not \"llmk config e3b0c442"},
	};
	struct sim *s = sim_new();
	struct vtpm_expect x;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char err[400] = "";
		build(s, cases[i].t);
		expect_all(s, &x);
		int r = vtpm_verify(s->bundle, s->len, &x, &res, err, sizeof err);
		CHECK(r < 0);
		if (!strstr(err, cases[i].reason)) {
			fprintf(stderr, "  case %zu: got \"%s\", want \"%s\"\n", i, err, cases[i].reason);
			test_failed_checks++;
		}
	}
	free(s);
}

TEST(vtpm_verify_refuses_a_wrong_nonce_pcr4_model_or_ca)
{
	struct sim *s = sim_new();
	struct vtpm_expect x;
	char err[400];
	build(s, T_NONE);

	expect_all(s, &x);
	x.b.nonce[7] ^= 1;
	CHECK(vtpm_verify(s->bundle, s->len, &x, &res, err, sizeof err) < 0);
	CHECK(strstr(err, "nonce: the evidence was made for nonce 0102030405060708, not --nonce "
			  "0102030405060709") != NULL);
	expect_all(s, &x);
	x.b.nonce_len = 7;
	CHECK(vtpm_verify(s->bundle, s->len, &x, &res, err, sizeof err) < 0);
	CHECK(strstr(err, "nonce:") != NULL);

	expect_all(s, &x);
	x.pcr4[31] ^= 1;
	CHECK(vtpm_verify(s->bundle, s->len, &x, &res, err, sizeof err) < 0);
	CHECK(strstr(err, "PCR4: ") && strstr(err, "(another boot image)"));

	expect_all(s, &x);
	x.b.model[0] ^= 1;
	CHECK(vtpm_verify(s->bundle, s->len, &x, &res, err, sizeof err) < 0);
	CHECK(strstr(err, "model: the guest has model a0a1") != NULL);

	expect_all(s, &x);
	x.ek_ca_pem = s->other_pem;
	x.ek_ca_len = strlen(s->other_pem);
	CHECK(vtpm_verify(s->bundle, s->len, &x, &res, err, sizeof err) < 0);
	CHECK(strstr(err, "EK certificate: does not chain") != NULL);

	/* a configuration expected but not told, and one told and expected */
	expect_all(s, &x);
	x.b.have_config = true;
	sha("seed 42\n", 8, x.b.config);
	CHECK(vtpm_verify(s->bundle, s->len, &x, &res, err, sizeof err) < 0);
	CHECK(strstr(err, "config: the guest was told configuration e3b0c442") != NULL);
	build(s, T_CONFIG_TOLD);
	strcpy(x.b.told, "8 bytes of llmk.cfg: seed 42");
	CHECK_EQ_INT(vtpm_verify(s->bundle, s->len, &x, &res, err, sizeof err), 0);
	bool said = false;
	for (int i = 0; i < res.nlines; i++)
		said |= strstr(res.line[i], "config: sha256 fe5c79ec") &&
			strstr(res.line[i], "(8 bytes of llmk.cfg: seed 42)");
	CHECK(said);
	build(s, T_NONE);

	/* without the optional expectations it verifies, and says what it left out */
	expect_all(s, &x);
	x.have_pcr4 = x.b.have_model = false;
	x.ek_ca_pem = NULL;
	CHECK_EQ_INT(vtpm_verify(s->bundle, s->len, &x, &res, err, sizeof err), 0);
	CHECK(strstr(res.summary, "PCR4 not checked") && strstr(res.summary, "EK certificate not "
								       "checked"));
	free(s);
}

TEST(vtpm_verify_refuses_every_truncation_of_the_bundle_without_crashing)
{
	struct sim *s = sim_new();
	struct vtpm_expect x;
	char err[400];
	build(s, T_NONE);
	expect_all(s, &x);
	for (size_t n = 0; n < s->len; n += 1 + n / 64)
		CHECK(vtpm_verify(s->bundle, n, &x, &res, err, sizeof err) < 0);
	/* any byte changed in a record the checks cover is never accepted (the
	 * logs' event data is descriptive: their digests are covered, and the
	 * log cases above change those; the key records are checked field by
	 * field in the tampered cases) */
	struct evidence_rec recs[64];
	int nrec = evidence_parse(s->bundle, s->len, recs, 64, err, sizeof err);
	CHECK(nrec > 0);
	for (int k = 0; k < nrec; k++) {
		/* the keys' TPMT_PUBLIC: attribute bits no check needs may change */
		if (recs[k].type == ATTEST_REC_TPM_LOG_FW || recs[k].type == ATTEST_REC_TPM_LOG_KERNEL ||
		    recs[k].type == ATTEST_REC_TPM_AK_PUB || recs[k].type == ATTEST_REC_TPM_EK_PUB)
			continue;
		size_t start = (size_t)(recs[k].val - s->bundle) - ATTEST_REC_HDR;
		for (size_t i = start; i < start + ATTEST_REC_HDR + recs[k].len; i++) {
			s->bundle[i] ^= 0x20;
			int r = vtpm_verify(s->bundle, s->len, &x, &res, err, sizeof err);
			if (r == 0)
				fprintf(stderr, "  record 0x%04x byte %zu changed, still accepted\n",
					recs[k].type, i - start);
			CHECK(r < 0);
			s->bundle[i] ^= 0x20;
		}
	}
	free(s);
}

TEST(verifier_reads_evidence_as_binary_base64_or_an_evidence_line)
{
	struct sim *s = sim_new();
	build(s, T_NONE);
	char path[256], b64[90000], err[300];
	const char *form;
	uint8_t *b;
	size_t n;
	b64_encode(s->bundle, s->len, b64, sizeof b64);
	const char *forms[3] = {"binary bundle", "base64", "'evidence:' line"};
	for (int k = 0; k < 3; k++) {
		snprintf(path, sizeof path, "%s/ev%d", test_tmpdir(), k);
		FILE *f = fopen(path, "wb");
		if (k == 0)
			fwrite(s->bundle, 1, s->len, f);
		else if (k == 1)
			fprintf(f, "%s\n", b64);
		else
			fprintf(f, "llm> attest --nonce 0102030405060708\nprovider vtpm\nevidence: %s\r\n"
				   "llm> ", b64);
		fclose(f);
		CHECK_EQ_INT(verify_read_evidence(path, &b, &n, &form, err, sizeof err), 0);
		CHECK_STR(form, forms[k]);
		CHECK(n == s->len && memcmp(b, s->bundle, n) == 0);
		free(b);
	}
	FILE *f = fopen(path, "wb");
	fprintf(f, "evidence: not*base64\n");
	fclose(f);
	CHECK(verify_read_evidence(path, &b, &n, &form, err, sizeof err) < 0);
	free(s);
}

/* Debian's tpm2_checkquote, an independent implementation, on the export. */
static int checkquote(const char *dir)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "cd %s && tpm2_checkquote -u ak.pem -m quote.msg -s quote.sig -f pcrs.bin "
		 "-l $(cat pcrs.list) -g sha256 -q qualification.bin -e eventlog.bin "
		 ">checkquote.out 2>&1", dir);
	return system(cmd);
}

TEST(vtpm_export_writes_files_tpm2_checkquote_accepts)
{
	if (system("command -v tpm2_checkquote >/dev/null 2>&1") != 0)
		SKIP("tpm2_checkquote (Debian tpm2-tools) is not installed: make deps");
	struct sim *s = sim_new();
	struct vtpm_expect x;
	char err[400], dir[256];
	/* tpm2_checkquote 5.4 replayed PCR 0 wrongly from a log with a StartupLocality
	 * event (locality 0) here; OVMF under QEMU starts from locality 0 too */
	build(s, T_NO_LOCALITY);
	expect_all(s, &x);
	CHECK_EQ_INT(vtpm_verify(s->bundle, s->len, &x, &res, err, sizeof err), 0);
	snprintf(dir, sizeof dir, "%s/export", test_tmpdir());
	mkdir(dir, 0755);
	CHECK_EQ_INT(vtpm_export(&res, dir, err, sizeof err), 0);
	int r = checkquote(dir);
	if (r != 0) {
		char p[300];
		snprintf(p, sizeof p, "%s/checkquote.out", dir);
		char *out = test_read_file(p, NULL);
		fprintf(stderr, "  tpm2_checkquote: %s\n", out ? out : "?");
		free(out);
	}
	CHECK_EQ_INT(r, 0);
	/* a changed PCR value is refused by it too: the check is not vacuous */
	char p[300];
	snprintf(p, sizeof p, "%s/pcrs.bin", dir);
	FILE *f = fopen(p, "r+b");
	fseek(f, 32 * 4, SEEK_SET);
	fputc(0x5a, f);
	fclose(f);
	CHECK(checkquote(dir) != 0);
	free(s);
}
