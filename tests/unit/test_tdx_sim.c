/*
 * tests/unit/test_tdx_sim.c — the TDX simulator (tools/host/tdx_sim*.c) and
 * the host `tdx` provider: RTMR extension against SHA-384 values computed
 * elsewhere (Python's hashlib), the TDREPORT's structure and MAC, quote v4
 * parsed by this file's own reader (which reads Intel's real quote in the
 * test data the same way), its signatures checked with BearSSL (the PCK's
 * key taken out of the quote's PEM chain by BearSSL's X.509 decoder, the
 * chain validated by BearSSL's X.509 engine and by openssl), and every
 * injected fault caught.
 */
#define _GNU_SOURCE /* memmem */
#include "test.h"

#include <stdlib.h>

#include "../../tools/host/tdx_sim.h"
#include "../../kernel/attest.h"
#include "../../shell/evidence.h"

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void hex(const char *h, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned b;
		sscanf(h + 2 * i, "%2x", &b);
		out[i] = (uint8_t)b;
	}
}

/* ---- a quote v4 reader, written from the DCAP layout (Appendix A.3) ---- */
struct parts {
	const uint8_t *q;
	size_t end;
	const uint8_t *sig, *ak, *qe_report, *qe_sig, *auth, *pem;
	size_t auth_len, pem_len;
};

static bool parse(const uint8_t *q, size_t n, struct parts *p)
{
	size_t o = 48 + 584, sd;
	memset(p, 0, sizeof *p);
	p->q = q;
	if (n < o + 4 || le16(q) != 4 || le16(q + 2) != 2 || le32(q + 4) != 0x81)
		return false;
	sd = le32(q + o);
	o += 4;
	if (sd > n - o || sd < 128 + 6)
		return false;
	p->end = o + sd;
	p->sig = q + o;
	p->ak = q + o + 64;
	o += 128;
	if (le16(q + o) != 6 || le32(q + o + 2) != sd - 128 - 6)
		return false;
	o += 6;
	p->qe_report = q + o;
	p->qe_sig = q + o + 384;
	o += 384 + 64;
	p->auth_len = le16(q + o);
	p->auth = q + o + 2;
	o += 2 + p->auth_len;
	if (o + 6 > p->end || le16(q + o) != 5 || le32(q + o + 2) != p->end - o - 6)
		return false;
	p->pem = q + o + 6;
	p->pem_len = le32(q + o + 2);
	return true;
}

static void sha256(const void *a, size_t an, const void *b, size_t bn, uint8_t out[32])
{
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, a, an);
	br_sha256_update(&c, b, bn);
	br_sha256_out(&c, out);
}

/* ECDSA P-256 over SHA-256(msg), the signature raw r || s, the key x || y. */
static bool p256_ok(const uint8_t *msg, size_t n, const uint8_t sig[64], const uint8_t xy[64])
{
	uint8_t h[32], q[65] = { 4 };
	br_ec_public_key pk = { BR_EC_secp256r1, q, 65 };
	memcpy(q + 1, xy, 64);
	sha256(msg, n, NULL, 0, h);
	return br_ecdsa_i31_vrfy_raw(br_ec_get_default(), h, 32, &pk, sig, 64) == 1;
}

/* The n-th certificate of a PEM chain, DER-decoded. */
static long pem_cert(const struct parts *p, int n, uint8_t *der, size_t cap)
{
	static char b64[8192];
	const char *s = (const char *)p->pem, *end = s + p->pem_len;
	size_t m = 0;

	for (int k = 0; k <= n; k++) {
		const char *b = memmem(s, (size_t)(end - s), "-----BEGIN CERTIFICATE-----\n", 28);
		if (!b)
			return -1;
		s = b + 28;
	}
	while (s < end && *s != '-') {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl || m + (size_t)(nl - s) >= sizeof b64)
			return -1;
		memcpy(b64 + m, s, (size_t)(nl - s));
		m += (size_t)(nl - s);
		s = nl + 1;
	}
	return b64_decode(b64, m, der, cap);
}

struct dn {
	uint8_t b[512];
	size_t n;
};

static void dn_append(void *ctx, const void *buf, size_t len)
{
	struct dn *d = ctx;
	if (d->n + len <= sizeof d->b)
		memcpy(d->b + d->n, buf, len), d->n += len;
}

/* BearSSL's decoder: the certificate's key (P-256 x || y) and subject DN. */
static bool cert_key(const uint8_t *der, size_t n, uint8_t xy[64], struct dn *dn)
{
	br_x509_decoder_context dc;
	br_x509_pkey *pk;
	dn->n = 0;
	br_x509_decoder_init(&dc, dn_append, dn);
	br_x509_decoder_push(&dc, der, n);
	pk = br_x509_decoder_get_pkey(&dc);
	if (!pk || pk->key_type != BR_KEYTYPE_EC || pk->key.ec.curve != BR_EC_secp256r1 ||
	    pk->key.ec.qlen != 65)
		return false;
	memcpy(xy, pk->key.ec.q + 1, 64);
	return true;
}

/* Everything a verifier checks but the root pin, for quote q. */
static bool quote_verifies(const uint8_t *q, size_t n, struct parts *p)
{
	uint8_t der[2048], pck[64], h[32], zero[32] = { 0 };
	struct dn dn;
	long dl;

	if (!parse(q, n, p) || !p256_ok(q, 48 + 584, p->sig, p->ak))
		return false;
	if ((dl = pem_cert(p, 0, der, sizeof der)) <= 0 || !cert_key(der, (size_t)dl, pck, &dn))
		return false;
	if (!p256_ok(p->qe_report, 384, p->qe_sig, pck))
		return false;
	sha256(p->ak, 64, p->auth, p->auth_len, h);
	return !memcmp(p->qe_report + 320, h, 32) && !memcmp(p->qe_report + 352, zero, 32);
}

static struct tdx_sim sim;

static void boot(void)
{
	struct tdx_sim_config c;
	tdx_sim_config_default(&c);
	CHECK_EQ_INT(tdx_sim_init(&sim, &c), 0);
}

/* ---- tests ---- */

TEST(tdx_sim_real_quote_reads_and_verifies_with_this_files_reader)
{
	char path[512];
	uint8_t *q;
	struct parts p;
	size_t n;

	if (!testdata_dir())
		SKIP("no ../shared/testdata (attest/tdx/quote_v4.bin)");
	snprintf(path, sizeof path, "%s/attest/tdx/quote_v4.bin", testdata_dir());
	if (!(q = test_read_file(path, &n)))
		SKIP("attest/tdx/quote_v4.bin missing");
	/* The reader and the checks below are the ones the simulated quotes go
	 * through: on Intel's quote they must hold, or they test nothing. */
	CHECK(quote_verifies(q, n, &p));
	CHECK_EQ_INT(p.pem_len, 3677);
	q[0x238] ^= 1; /* REPORT_DATA */
	CHECK(!quote_verifies(q, n, &p));
	free(q);
}

TEST(tdx_sim_rtmr_extend_is_sha384_of_the_old_value_and_the_data)
{
	uint8_t zero[48] = { 0 }, data[48], want[48];

	boot();
	CHECK(memcmp(sim.rtmr[3], zero, 48) == 0);
	CHECK_EQ_INT(tdx_sim_rtmr_extend(&sim, 3, zero), 0);
	/* hashlib.sha384(bytes(96)) */
	hex("f57bb7ed82c6ae4a29e6c9879338c592c7d42a39135583e8ccbe3940f2344b0eb6eb8503db0ffd6a39ddd00cd07d8317",
	    want, 48);
	CHECK(memcmp(sim.rtmr[3], want, 48) == 0);
	for (int i = 0; i < 48; i++)
		data[i] = (uint8_t)i;
	CHECK_EQ_INT(tdx_sim_rtmr_extend(&sim, 3, data), 0);
	/* hashlib.sha384(previous + bytes(range(48))) */
	hex("f04ff55fcae86cdcf505f7d54a7f26b6e40975f0f14f066be12701014959cd8916308273de28eab6e44b795a0bed0754",
	    want, 48);
	CHECK(memcmp(sim.rtmr[3], want, 48) == 0);
	/* the other RTMRs kept their launch values; an index past 3 is refused */
	CHECK(memcmp(sim.rtmr[0], sim.cfg.rtmr[0], 48) == 0);
	CHECK_EQ_INT(tdx_sim_rtmr_extend(&sim, 4, data), -LLMK_EINVAL);
}

TEST(tdx_sim_tdreport_has_the_abi_layout_and_a_mac_over_reportmacstruct)
{
	uint8_t rd[64], r[TDX_REPORT_SIZE], h[48], mac[32];
	br_sha384_context c;
	br_hmac_key_context kc;
	br_hmac_context hc;

	boot();
	for (int i = 0; i < 64; i++)
		rd[i] = (uint8_t)(0xa0 ^ i);
	tdx_sim_report(&sim, rd, r);
	CHECK_EQ_INT(r[0], 0x81);
	CHECK_EQ_INT(r[1] | r[2] | r[3], 0);
	CHECK(memcmp(r + 128, rd, 64) == 0);
	CHECK_EQ_INT(le32(r + 256), 0x1ff); /* TEE_TCB_INFO.VALID */
	CHECK(memcmp(r + 256 + 24, sim.cfg.mrseam, 48) == 0);
	CHECK(memcmp(r + 512 + 16, sim.cfg.mrtd, 48) == 0);
	CHECK(memcmp(r + 512 + 208, sim.cfg.rtmr[0], 48) == 0);
	CHECK_EQ_INT(le32(r + 512 + 3), 0x10000000 >> 24); /* ATTRIBUTES bit 28 */
	br_sha384_init(&c);
	br_sha384_update(&c, r + 256, 239);
	br_sha384_out(&c, h);
	CHECK(memcmp(r + 32, h, 48) == 0);
	br_sha384_init(&c);
	br_sha384_update(&c, r + 512, 512);
	br_sha384_out(&c, h);
	CHECK(memcmp(r + 80, h, 48) == 0);
	br_hmac_key_init(&kc, &br_sha256_vtable, sim.mac_key, 32);
	br_hmac_init(&hc, &kc, 0);
	br_hmac_update(&hc, r, 224);
	br_hmac_out(&hc, mac);
	CHECK(memcmp(r + 224, mac, 32) == 0);
}

TEST(tdx_sim_quote_v4_carries_the_td_and_its_signatures_verify)
{
	static uint8_t q[TDX_SIM_QUOTE_MAX];
	uint8_t rd[64], r[TDX_REPORT_SIZE], data[48] = { 7 };
	struct parts p;
	size_t n;

	boot();
	for (int i = 0; i < 64; i++)
		rd[i] = (uint8_t)i;
	CHECK_EQ_INT(tdx_sim_rtmr_extend(&sim, 3, data), 0);
	tdx_sim_report(&sim, rd, r);
	CHECK_EQ_INT(tdx_sim_quote(&sim, r, q, sizeof q, &n), 0);
	CHECK(quote_verifies(q, n, &p));
	CHECK_EQ_INT(p.end, n);
	/* the header: Intel's QE vendor ID; the body at the DCAP offsets */
	CHECK_EQ_INT(q[12], 0x93);
	CHECK_EQ_INT(q[27], 0x07);
	CHECK(memcmp(q + 0x040, sim.cfg.mrseam, 48) == 0);
	CHECK_EQ_INT(le32(q + 0x0a8 + 3), 0x10);
	CHECK_EQ_INT(q[0x0b0], 0xe7);
	CHECK(memcmp(q + 0x0b8, sim.cfg.mrtd, 48) == 0);
	CHECK(memcmp(q + 0x178, sim.cfg.rtmr[0], 48) == 0);
	CHECK(memcmp(q + 0x178 + 3 * 48, sim.rtmr[3], 48) == 0);
	CHECK(memcmp(q + 0x238, rd, 64) == 0);
	/* the attestation key is the QE's; the QE report names Intel's TD QE */
	CHECK(memcmp(p.ak, sim.ak_q + 1, 64) == 0);
	CHECK_EQ_INT(p.qe_report[128], 0xdc);
	CHECK_EQ_INT(le16(p.qe_report + 256), 2);
	CHECK_EQ_INT(p.qe_report[48] & 0xfb, 0x11);
	/* one flipped bit anywhere signed breaks a signature */
	q[0x0b8] ^= 0x80;
	CHECK(!quote_verifies(q, n, &p));
	q[0x0b8] ^= 0x80;
	q[(size_t)(p.qe_report - q) + 300] ^= 1;
	CHECK(!quote_verifies(q, n, &p));
}

TEST(tdx_sim_pck_chain_validates_with_bearssls_x509_engine)
{
	static uint8_t q[TDX_SIM_QUOTE_MAX];
	uint8_t rd[64] = { 1 }, r[TDX_REPORT_SIZE], der[3][2048], key[3][64], rq[65] = { 4 };
	struct dn dn[3];
	struct parts p;
	long len[3];
	size_t n;
	br_x509_minimal_context xc;
	br_x509_trust_anchor ta;
	const br_x509_class **vt = &xc.vtable;

	boot();
	tdx_sim_report(&sim, rd, r);
	CHECK_EQ_INT(tdx_sim_quote(&sim, r, q, sizeof q, &n), 0);
	CHECK(parse(q, n, &p));
	for (int i = 0; i < 3; i++) {
		len[i] = pem_cert(&p, i, der[i], sizeof der[i]);
		CHECK(len[i] > 0 && cert_key(der[i], (size_t)len[i], key[i], &dn[i]));
	}
	CHECK(memcmp(key[0], sim.pck_q + 1, 64) == 0);
	CHECK(memcmp(key[2], sim.root_q + 1, 64) == 0);
	/* BearSSL's X.509 engine, anchored at the root, on PCK <- platform CA */
	memcpy(rq + 1, key[2], 64);
	ta = (br_x509_trust_anchor){ { dn[2].b, dn[2].n }, BR_X509_TA_CA,
				     { BR_KEYTYPE_EC, { .ec = { BR_EC_secp256r1, rq, 65 } } } };
	br_x509_minimal_init(&xc, &br_sha256_vtable, &ta, 1);
	br_x509_minimal_set_hash(&xc, br_sha256_ID, &br_sha256_vtable);
	br_x509_minimal_set_ecdsa(&xc, br_ec_get_default(), br_ecdsa_i31_vrfy_asn1);
	br_x509_minimal_set_time(&xc, 719528 + 20454, 0); /* 2026-01-01 */
	(*vt)->start_chain(vt, NULL);
	for (int i = 0; i < 2; i++) {
		(*vt)->start_cert(vt, (uint32_t)len[i]);
		(*vt)->append(vt, der[i], (size_t)len[i]);
		(*vt)->end_cert(vt);
	}
	CHECK_EQ_INT((*vt)->end_chain(vt), 0);
	/* and refuses it when the platform CA's signature on the PCK is broken */
	der[0][len[0] - 3] ^= 1;
	(*vt)->start_chain(vt, NULL);
	for (int i = 0; i < 2; i++) {
		(*vt)->start_cert(vt, (uint32_t)len[i]);
		(*vt)->append(vt, der[i], (size_t)len[i]);
		(*vt)->end_cert(vt);
	}
	CHECK((*vt)->end_chain(vt) != 0);
}

TEST(tdx_sim_pck_chain_verifies_with_openssl)
{
	static uint8_t q[TDX_SIM_QUOTE_MAX];
	static const char *const names[3] = { "pck", "ca", "root" };
	uint8_t rd[64] = { 1 }, r[TDX_REPORT_SIZE], der[2048];
	const char *dir = test_tmpdir();
	char cmd[1024], path[512];
	struct parts p;
	size_t n;

	if (system("openssl version >/dev/null 2>&1") != 0)
		SKIP("openssl is not installed (the independent check of the chain)");
	boot();
	tdx_sim_report(&sim, rd, r);
	CHECK_EQ_INT(tdx_sim_quote(&sim, r, q, sizeof q, &n), 0);
	CHECK(parse(q, n, &p));
	for (int i = 0; i < 3; i++) {
		long len = pem_cert(&p, i, der, sizeof der);
		FILE *f;
		CHECK(len > 0);
		snprintf(path, sizeof path, "%s/tdxsim-%s.der", dir, names[i]);
		CHECK((f = fopen(path, "wb")) != NULL);
		if (!f || len <= 0)
			return;
		fwrite(der, 1, (size_t)len, f);
		fclose(f);
		snprintf(cmd, sizeof cmd, "openssl x509 -inform der -in %s/tdxsim-%s.der -out "
			 "%s/tdxsim-%s.pem 2>/dev/null", dir, names[i], dir, names[i]);
		CHECK_EQ_INT(system(cmd), 0);
	}
	/* at 2026-01-01, inside the certificates' validity */
	snprintf(cmd, sizeof cmd, "openssl verify -attime 1767225600 -CAfile %s/tdxsim-root.pem "
		 "-untrusted %s/tdxsim-ca.pem %s/tdxsim-pck.pem >/dev/null 2>&1", dir, dir, dir);
	CHECK_EQ_INT(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "openssl x509 -in %s/tdxsim-pck.pem -noout -text 2>/dev/null | "
		 "grep -q 'Digital Signature'", dir);
	CHECK_EQ_INT(system(cmd), 0);
	/* the PCK against the wrong CA: refused */
	snprintf(cmd, sizeof cmd, "openssl verify -attime 1767225600 -CAfile %s/tdxsim-root.pem "
		 "%s/tdxsim-pck.pem >/dev/null 2>&1", dir, dir);
	CHECK(system(cmd) != 0);
}

TEST(tdx_sim_get_quote_follows_the_ghci_buffer_and_refuses_bad_reports)
{
	static uint8_t buf[TDX_GQ_HEADER + TDX_SIM_QUOTE_MAX];
	uint8_t rd[64] = { 3 }, r[TDX_REPORT_SIZE];
	struct parts p;

	boot();
	tdx_sim_report(&sim, rd, r);
#define FILL()                                                                  \
	do {                                                                    \
		memset(buf, 0, sizeof buf);                                     \
		buf[0] = 1;                                                     \
		buf[16] = 0x00, buf[17] = 0x04; /* in_len 1024 */               \
		memcpy(buf + TDX_GQ_HEADER, r, sizeof r);                      \
	} while (0)
	FILL();
	tdx_sim_get_quote(&sim, buf, sizeof buf);
	CHECK_EQ_INT(le32(buf + 8) | le32(buf + 12), 0);
	CHECK(le32(buf + 20) > 1000);
	CHECK(quote_verifies(buf + TDX_GQ_HEADER, le32(buf + 20), &p));

	/* a TDREPORT changed after TDG.MR.REPORT: the MAC catches it */
	FILL();
	buf[TDX_GQ_HEADER + 128] ^= 1;
	tdx_sim_get_quote(&sim, buf, sizeof buf);
	CHECK_EQ_INT(le32(buf + 12), 0x80000000);
	CHECK_EQ_INT(le32(buf + 20), 0);
	CHECK(strstr(sim.err, "MAC") != NULL);
	/* the MAC itself damaged on the way */
	FILL();
	tdx_sim_fault(&sim, TDX_SIM_FAULT_REPORT_MAC, 1);
	tdx_sim_get_quote(&sim, buf, sizeof buf);
	CHECK_EQ_INT(le32(buf + 12), 0x80000000);
	/* the service unavailable */
	FILL();
	tdx_sim_fault(&sim, TDX_SIM_FAULT_UNAVAILABLE, 1);
	tdx_sim_get_quote(&sim, buf, sizeof buf);
	CHECK_EQ_INT(le32(buf + 8), 1);
	CHECK_EQ_INT(le32(buf + 12), 0x80000000);
	/* a buffer version other than 1, a buffer too small for the quote */
	FILL();
	buf[0] = 2;
	tdx_sim_get_quote(&sim, buf, sizeof buf);
	CHECK_EQ_INT(le32(buf + 12), 0x80000000);
	FILL();
	tdx_sim_get_quote(&sim, buf, TDX_GQ_HEADER + 2048);
	CHECK_EQ_INT(le32(buf + 12), 0x80000000);
	CHECK(strstr(sim.err, "does not fit") != NULL);
	/* and after the faults, quotes verify again */
	FILL();
	tdx_sim_get_quote(&sim, buf, sizeof buf);
	CHECK_EQ_INT(le32(buf + 12), 0);
	CHECK(quote_verifies(buf + TDX_GQ_HEADER, le32(buf + 20), &p));
#undef FILL
}

TEST(tdx_sim_injected_signature_faults_are_caught_by_the_checks)
{
	static uint8_t q[TDX_SIM_QUOTE_MAX];
	uint8_t rd[64] = { 5 }, r[TDX_REPORT_SIZE];
	static const enum tdx_sim_fault faults[] = { TDX_SIM_FAULT_QUOTE_SIG, TDX_SIM_FAULT_QE_SIG,
						     TDX_SIM_FAULT_QE_BINDING };
	struct parts p;
	size_t n;

	boot();
	tdx_sim_report(&sim, rd, r);
	for (unsigned i = 0; i < sizeof faults / sizeof faults[0]; i++) {
		tdx_sim_fault(&sim, faults[i], 1);
		CHECK_EQ_INT(tdx_sim_quote(&sim, r, q, sizeof q, &n), 0);
		CHECK(parse(q, n, &p));
		CHECK(!quote_verifies(q, n, &p));
		CHECK_EQ_INT(tdx_sim_quote(&sim, r, q, sizeof q, &n), 0);
		CHECK(quote_verifies(q, n, &p));
	}
}

TEST(tdx_sim_provider_is_absent_unless_asked_and_its_evidence_names_itself)
{
	static uint8_t buf[16384];
	struct evidence_rec recs[8];
	const struct evidence_rec *rep, *quote, *simrec;
	uint8_t rd[64], digest[32], data[48] = { 0 }, rtmr3[48];
	struct parts p;
	bool dup;
	size_t len = 0;
	int n;

	unsetenv("LLMK_TDX_SIM");
	tdx_sim_provider_reset();
	CHECK(tdx_sim_provider_why_absent() != NULL);
	CHECK(strstr(tdx_sim_provider_why_absent(), "LLMK_TDX_SIM") != NULL);
	CHECK_EQ_INT(tdx_sim_provider_evidence(rd, buf, sizeof buf, &len), -LLMK_ENOENT);
	CHECK_EQ_INT(tdx_sim_provider_extend_rtmr3(digest), -LLMK_ENOENT);

	setenv("LLMK_TDX_SIM", "1", 1);
	tdx_sim_provider_reset();
	CHECK(tdx_sim_provider_why_absent() == NULL);
	for (int i = 0; i < 32; i++)
		digest[i] = (uint8_t)(0x40 + i);
	CHECK_EQ_INT(tdx_sim_provider_extend_rtmr3(digest), 0);
	for (int i = 0; i < 64; i++)
		rd[i] = (uint8_t)(255 - i);
	memcpy(buf, EVIDENCE_MAGIC, EVIDENCE_MAGIC_LEN);
	len = EVIDENCE_MAGIC_LEN;
	CHECK_EQ_INT(tdx_sim_provider_evidence(rd, buf, sizeof buf, &len), 0);
	char err[160];
	n = evidence_parse(buf, len, recs, 8, err, sizeof err);
	CHECK_EQ_INT(n, 3);
	rep = evidence_find(recs, n, ATTEST_REC_TDX_REPORT, &dup);
	quote = evidence_find(recs, n, ATTEST_REC_TDX_QUOTE, &dup);
	simrec = evidence_find(recs, n, ATTEST_REC_SIMULATED, &dup);
	CHECK(rep && rep->len == TDX_REPORT_SIZE && !memcmp(rep->val + 128, rd, 64));
	CHECK(quote && quote_verifies(quote->val, quote->len, &p));
	CHECK(quote && !memcmp(quote->val + 0x238, rd, 64));
	CHECK(simrec && simrec->len > 7 && !memcmp(simrec->val, "tdx-sim", 7));
	/* RTMR3 = SHA-384(zeros || digest zero-padded to 48), in the quote */
	br_sha384_context c;
	memcpy(data, digest, 32);
	br_sha384_init(&c);
	br_sha384_update(&c, (uint8_t[48]){ 0 }, 48);
	br_sha384_update(&c, data, 48);
	br_sha384_out(&c, rtmr3);
	CHECK(quote && !memcmp(quote->val + 0x178 + 3 * 48, rtmr3, 48));
	/* a buffer too small leaves it as it was */
	size_t before = len;
	CHECK_EQ_INT(tdx_sim_provider_evidence(rd, buf, len + 100, &len), -LLMK_ERANGE);
	CHECK_EQ_INT(len, before);
	/* the service failing: one error line, nothing appended */
	tdx_sim_fault(tdx_sim_provider_sim(), TDX_SIM_FAULT_UNAVAILABLE, 1);
	CHECK_EQ_INT(tdx_sim_provider_evidence(rd, buf, sizeof buf, &len), -LLMK_EIO);
	CHECK(strstr(tdx_sim_provider_error(), "unavailable") != NULL);
	CHECK_EQ_INT(len, before);
	unsetenv("LLMK_TDX_SIM");
	tdx_sim_provider_reset();
}
