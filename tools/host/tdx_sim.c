/*
 * tools/host/tdx_sim.c — the simulated TDX module (RTMRs, TDREPORT) and
 * quoting enclave (quote v4, GetQuote). tdx_sim.h says what is simulated
 * and how; the layouts are in the order the specifications give them:
 *
 *   TDREPORT_STRUCT (1024)  REPORTMACSTRUCT (256): REPORTTYPE (type 0x81,
 *                           subtype 0, version 0), CPUSVN, TEE_TCB_INFO_HASH
 *                           = SHA-384(TEE_TCB_INFO), TEE_INFO_HASH =
 *                           SHA-384(TDINFO_STRUCT), REPORTDATA, MAC;
 *                           TEE_TCB_INFO (239) at 256: VALID 0x1ff (an
 *                           Intel SEAM module: MRSIGNERSEAM and ATTRIBUTES
 *                           zero), TEE_TCB_SVN, MRSEAM; TDINFO_STRUCT (512)
 *                           at 512
 *   quote v4                header (48), TD quote body (584), u32 signature
 *                           data length, signature data (tdx_sim.h)
 */
#include "tdx_sim.h"

#include <stdio.h>
#include <string.h>

/* Intel's SGX/TDX QE vendor ID (DCAP quote header, QE_VENDOR_ID) */
static const uint8_t qe_vendor_id[16] = { 0x93, 0x9a, 0x72, 0x33, 0xf7, 0x9c, 0x4c, 0xa9,
					  0x94, 0x0a, 0x0d, 0xb3, 0x95, 0x7f, 0x06, 0x07 };
/* The identity of Intel's TD quoting enclave (MRSIGNER, ISVPRODID 2): see
 * tdx_sim.h for why the simulated QE report carries it. */
static const uint8_t td_qe_mrsigner[32] = {
	0xdc, 0x9e, 0x2a, 0x7c, 0x6f, 0x94, 0x8f, 0x17, 0x47, 0x4e, 0x34, 0xa7, 0xfc, 0x43, 0xed, 0x03,
	0x0f, 0x7c, 0x15, 0x63, 0xf1, 0xba, 0xbd, 0xdf, 0x63, 0x40, 0xc8, 0x2e, 0x0e, 0x54, 0xa8, 0xc5,
};
#define TD_QE_ISVPRODID 2
#define QE_AUTH_DATA "llmk tdx-sim QE authentication data (32)"
#define QE_AUTH_LEN 32u

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void sha384(const void *a, size_t an, const void *b, size_t bn, uint8_t out[48])
{
	br_sha384_context c;
	br_sha384_init(&c);
	br_sha384_update(&c, a, an);
	if (bn)
		br_sha384_update(&c, b, bn);
	br_sha384_out(&c, out);
}

static void hmac256(const uint8_t *key, size_t kn, const void *a, size_t an, uint8_t out[32])
{
	br_hmac_key_context kc;
	br_hmac_context hc;
	br_hmac_key_init(&kc, &br_sha256_vtable, key, kn);
	br_hmac_init(&hc, &kc, 0);
	br_hmac_update(&hc, a, an);
	br_hmac_out(&hc, out);
}

static void label384(const char *label, uint8_t out[48])
{
	sha384(label, strlen(label), NULL, 0, out);
}

void tdx_sim_config_default(struct tdx_sim_config *c)
{
	memset(c, 0, sizeof *c);
	for (int i = 0; i < 32; i++)
		c->platform_seed[i] = (uint8_t)(0xd0 + i);
	label384("llmk tdx-sim MRTD (TDVF)", c->mrtd);
	label384("llmk tdx-sim RTMR0 (TDVF configuration)", c->rtmr[0]);
	label384("llmk tdx-sim RTMR1 (boot loader)", c->rtmr[1]);
	label384("llmk tdx-sim RTMR2 (OS)", c->rtmr[2]);
	label384("llmk tdx-sim MRSEAM", c->mrseam);
	c->td_attributes = 1ull << 28; /* SEPT_VE_DISABLE, not DEBUG */
	c->xfam = 0xe7;                /* x87, SSE, AVX, AVX-512 state */
	c->tee_tcb_svn[0] = 3;         /* TDX module SVN minor, major */
	c->tee_tcb_svn[1] = 1;
	for (int i = 0; i < 16; i++)
		c->cpusvn[i] = (uint8_t)(i < 4 ? 9 : 0);
	c->qe_svn = 8;
}

/* An ECDSA P-256 key from the platform seed and a label (deterministic). */
static int platform_key(const struct tdx_sim_config *c, const char *label, br_ec_private_key *sk,
			uint8_t x[32], br_ec_public_key *pk, uint8_t q[65])
{
	br_hmac_drbg_context drbg;
	uint8_t seed[32];

	hmac256(c->platform_seed, 32, label, strlen(label), seed);
	br_hmac_drbg_init(&drbg, &br_sha256_vtable, seed, sizeof seed);
	if (br_ec_keygen(&drbg.vtable, br_ec_get_default(), sk, x, BR_EC_secp256r1) != 32 ||
	    br_ec_compute_pub(br_ec_get_default(), pk, q, sk) != 65)
		return -LLMK_EIO;
	return 0;
}

int tdx_sim_init(struct tdx_sim *s, const struct tdx_sim_config *cfg)
{
	br_hmac_drbg_context drbg;
	uint8_t seed[32];
	int e;

	memset(s, 0, sizeof *s);
	s->cfg = *cfg;
	memcpy(s->rtmr, cfg->rtmr, sizeof cfg->rtmr);
	hmac256(cfg->platform_seed, 32, "llmk tdx-sim report MAC key", 27, s->mac_key);
	/* the QE makes its attestation key when it starts: fresh each boot */
	if ((e = plat_entropy(seed, sizeof seed)) < 0)
		return e;
	br_hmac_drbg_init(&drbg, &br_sha256_vtable, seed, sizeof seed);
	if (br_ec_keygen(&drbg.vtable, br_ec_get_default(), &s->ak, s->ak_x, BR_EC_secp256r1) != 32 ||
	    br_ec_compute_pub(br_ec_get_default(), &s->ak_pub, s->ak_q, &s->ak) != 65)
		return -LLMK_EIO;
	if ((e = platform_key(cfg, "llmk tdx-sim PCK", &s->pck, s->pck_x, &s->pck_pub, s->pck_q)) ||
	    (e = platform_key(cfg, "llmk tdx-sim platform CA", &s->ca, s->ca_x, &s->ca_pub, s->ca_q)) ||
	    (e = platform_key(cfg, "llmk tdx-sim root CA", &s->root, s->root_x, &s->root_pub,
			      s->root_q)))
		return e;
	return tdx_sim_chain_make(s);
}

void tdx_sim_fault(struct tdx_sim *s, enum tdx_sim_fault f, int count)
{
	s->fault = f;
	s->fault_count = count;
}

/* Whether the next answer gets fault f (and count it). */
static bool faulty(struct tdx_sim *s, enum tdx_sim_fault f)
{
	if (s->fault != f || s->fault_count <= 0)
		return false;
	if (--s->fault_count == 0)
		s->fault = TDX_SIM_FAULT_NONE;
	return true;
}

int tdx_sim_rtmr_extend(struct tdx_sim *s, unsigned index, const uint8_t data[48])
{
	uint8_t v[48];

	if (index > 3) {
		snprintf(s->err, sizeof s->err, "TDG.MR.RTMR.EXTEND: RTMR index %u (0..3)", index);
		return -LLMK_EINVAL;
	}
	sha384(s->rtmr[index], 48, data, 48, v);
	memcpy(s->rtmr[index], v, 48);
	return 0;
}

void tdx_sim_report(const struct tdx_sim *s, const uint8_t report_data[64],
		    uint8_t r[TDX_REPORT_SIZE])
{
	const struct tdx_sim_config *c = &s->cfg;
	uint8_t *tti = r + TDR_TEE_TCB_INFO, *tdi = r + TDR_TDINFO;

	memset(r, 0, TDX_REPORT_SIZE);
	r[TDR_REPORTTYPE] = 0x81; /* TEE type TDX; subtype 0, version 0 */
	memcpy(r + TDR_CPUSVN, c->cpusvn, 16);
	put64(tti + TTI_VALID, 0x1ff);
	memcpy(tti + TTI_TEE_TCB_SVN, c->tee_tcb_svn, 16);
	memcpy(tti + TTI_MRSEAM, c->mrseam, 48);
	put64(tdi + TDI_ATTRIBUTES, c->td_attributes);
	put64(tdi + TDI_XFAM, c->xfam);
	memcpy(tdi + TDI_MRTD, c->mrtd, 48);
	memcpy(tdi + TDI_MRCONFIGID, c->mrconfigid, 48);
	memcpy(tdi + TDI_MROWNER, c->mrowner, 48);
	memcpy(tdi + TDI_MROWNERCONFIG, c->mrownerconfig, 48);
	memcpy(tdi + TDI_RTMR0, s->rtmr, sizeof s->rtmr);
	sha384(tti, TDR_TEE_TCB_INFO_SIZE, NULL, 0, r + TDR_TEE_TCB_INFO_HASH);
	sha384(tdi, TDR_TDINFO_SIZE, NULL, 0, r + TDR_TEE_INFO_HASH);
	memcpy(r + TDR_REPORTDATA, report_data, 64);
	hmac256(s->mac_key, sizeof s->mac_key, r, TDR_MAC, r + TDR_MAC);
}

static bool same(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* What EVERIFYREPORT2 and the QE check: the MAC, and that the hashes in
 * REPORTMACSTRUCT are those of the structures that follow. */
static bool report_ok(const struct tdx_sim *s, const uint8_t *r)
{
	uint8_t mac[32], h[48];
	bool ok;

	hmac256(s->mac_key, sizeof s->mac_key, r, TDR_MAC, mac);
	ok = same(mac, r + TDR_MAC, 32);
	sha384(r + TDR_TEE_TCB_INFO, TDR_TEE_TCB_INFO_SIZE, NULL, 0, h);
	ok &= same(h, r + TDR_TEE_TCB_INFO_HASH, 48);
	sha384(r + TDR_TDINFO, TDR_TDINFO_SIZE, NULL, 0, h);
	ok &= same(h, r + TDR_TEE_INFO_HASH, 48);
	return ok && r[TDR_REPORTTYPE] == 0x81;
}

static void sign_p256(const br_ec_private_key *sk, const uint8_t *msg, size_t n, uint8_t sig[64])
{
	uint8_t h[32];
	br_sha256_context c;

	br_sha256_init(&c);
	br_sha256_update(&c, msg, n);
	br_sha256_out(&c, h);
	br_ecdsa_i31_sign_raw(br_ec_get_default(), &br_sha256_vtable, h, sk, sig);
}

/* The QE report: an SGX REPORT body (SGX SDM, REPORT) for Intel's TD QE
 * identity, REPORTDATA binding the attestation key and the auth data. */
static void qe_report(struct tdx_sim *s, const uint8_t *auth, uint8_t r[TDX_QE_REPORT])
{
	br_sha256_context c;

	memset(r, 0, TDX_QE_REPORT);
	memcpy(r + 0, s->cfg.cpusvn, 16);   /* CPUSVN */
	r[48] = 0x15;                        /* ATTRIBUTES: INIT, MODE64BIT, PROVISIONKEY */
	put64(r + 56, s->cfg.xfam);          /* ATTRIBUTES.XFRM */
	uint8_t mrenclave[48];
	label384("llmk tdx-sim QE MRENCLAVE", mrenclave);
	memcpy(r + 64, mrenclave, 32);       /* MRENCLAVE */
	memcpy(r + 128, td_qe_mrsigner, 32); /* MRSIGNER */
	put16(r + 256, TD_QE_ISVPRODID);
	put16(r + 258, s->cfg.qe_svn);
	br_sha256_init(&c);
	br_sha256_update(&c, s->ak_q + 1, 64);
	br_sha256_update(&c, auth, QE_AUTH_LEN);
	br_sha256_out(&c, r + 320);          /* REPORTDATA, then 32 zero bytes */
	if (faulty(s, TDX_SIM_FAULT_QE_BINDING))
		r[320] ^= 1;
}

int tdx_sim_quote(struct tdx_sim *s, const uint8_t tdreport[TDX_REPORT_SIZE], uint8_t *out,
		  size_t cap, size_t *len)
{
	const uint8_t *tti = tdreport + TDR_TEE_TCB_INFO, *tdi = tdreport + TDR_TDINFO;
	size_t sig_len = 64 + 64 + 6 + TDX_QE_REPORT + 64 + 2 + QE_AUTH_LEN + 6 + s->chain.pem_len;
	size_t total = TDX_QUOTE_HEADER + TDX_QUOTE_BODY + 4 + sig_len;
	uint8_t *b = out + TDX_QUOTE_HEADER, *sd = out + TDX_QUOTE_HEADER + TDX_QUOTE_BODY + 4, *p;
	uint8_t auth[QE_AUTH_LEN];

	if (!report_ok(s, tdreport)) {
		snprintf(s->err, sizeof s->err, "quoting enclave: the TDREPORT's MAC does not verify");
		return -LLMK_EAUTH;
	}
	if (cap < total) {
		snprintf(s->err, sizeof s->err, "quoting enclave: a %zu-byte quote does not fit in %zu",
			 total, cap);
		return -LLMK_ERANGE;
	}
	memset(out, 0, total);
	/* header */
	put16(out + 0, 4);      /* version */
	put16(out + 2, 2);      /* attestation key type: ECDSA-256-with-P-256 */
	put32(out + 4, 0x81);   /* TEE type: TDX */
	memcpy(out + 12, qe_vendor_id, 16);
	/* TD quote body, from the TDREPORT */
	memcpy(b + 0, tti + TTI_TEE_TCB_SVN, 16);
	memcpy(b + 16, tti + TTI_MRSEAM, 48);
	memcpy(b + 64, tti + TTI_MRSIGNERSEAM, 48);
	memcpy(b + 112, tti + TTI_ATTRIBUTES, 8);   /* SEAMATTRIBUTES */
	memcpy(b + 120, tdi + TDI_ATTRIBUTES, 16);  /* TDATTRIBUTES, XFAM */
	memcpy(b + 136, tdi + TDI_MRTD, 4 * 48);    /* MRTD, MRCONFIGID, MROWNER, MROWNERCONFIG */
	memcpy(b + 328, tdi + TDI_RTMR0, 4 * 48);   /* RTMR0..3 */
	memcpy(b + 520, tdreport + TDR_REPORTDATA, 64);
	put32(out + TDX_QUOTE_HEADER + TDX_QUOTE_BODY, (uint32_t)sig_len);
	/* signature data */
	sign_p256(&s->ak, out, TDX_QUOTE_HEADER + TDX_QUOTE_BODY, sd);
	if (faulty(s, TDX_SIM_FAULT_QUOTE_SIG))
		sd[5] ^= 0x40;
	memcpy(sd + 64, s->ak_q + 1, 64);
	p = sd + 128;
	put16(p, 6); /* certification data: QE report certification data */
	put32(p + 2, (uint32_t)(sig_len - 128 - 6));
	p += 6;
	memcpy(auth, QE_AUTH_DATA, QE_AUTH_LEN);
	qe_report(s, auth, p);
	sign_p256(&s->pck, p, TDX_QE_REPORT, p + TDX_QE_REPORT);
	if (faulty(s, TDX_SIM_FAULT_QE_SIG))
		p[TDX_QE_REPORT + 40] ^= 0x02;
	p += TDX_QE_REPORT + 64;
	put16(p, QE_AUTH_LEN);
	memcpy(p + 2, auth, QE_AUTH_LEN);
	p += 2 + QE_AUTH_LEN;
	put16(p, 5); /* certification data: the PCK certificate chain, PEM */
	put32(p + 2, (uint32_t)s->chain.pem_len);
	memcpy(p + 6, s->chain.pem, s->chain.pem_len);
	*len = total;
	s->quotes++;
	return 0;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void tdx_sim_get_quote(struct tdx_sim *s, uint8_t *buf, size_t size)
{
	uint8_t report[TDX_REPORT_SIZE];
	uint64_t status = TDX_GQ_ERROR;
	size_t n = 0;

	if (size < TDX_GQ_HEADER)
		return;
	put32(buf + 20, 0);
	if (faulty(s, TDX_SIM_FAULT_UNAVAILABLE)) {
		snprintf(s->err, sizeof s->err, "GetQuote: the quote generation service is unavailable");
		status = TDX_GQ_UNAVAILABLE;
	} else if (get64(buf) != 1 || get32(buf + 16) != TDX_REPORT_SIZE ||
		   size - TDX_GQ_HEADER < TDX_REPORT_SIZE) {
		snprintf(s->err, sizeof s->err, "GetQuote: buffer version %llu, in_len %u: not a TDREPORT",
			 (unsigned long long)get64(buf), get32(buf + 16));
	} else {
		/* the service reads the report out of the shared buffer once */
		memcpy(report, buf + TDX_GQ_HEADER, TDX_REPORT_SIZE);
		if (faulty(s, TDX_SIM_FAULT_REPORT_MAC))
			report[TDR_MAC] ^= 1;
		if (tdx_sim_quote(s, report, buf + TDX_GQ_HEADER, size - TDX_GQ_HEADER, &n) == 0) {
			status = TDX_GQ_SUCCESS;
			put32(buf + 20, (uint32_t)n);
		}
	}
	put64(buf + 8, status);
}
