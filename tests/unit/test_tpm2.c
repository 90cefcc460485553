/*
 * tests/unit/test_tpm2.c — drivers/tpm2*.c and drivers/tcg_log.c against a
 * real TPM: swtpm, started for this run from tools/tpm.sh in a scratch
 * directory (EK certificates made by swtpm_setup's local CA), or the one
 * $LLMK_VTPM names. Independent references: PCR extends computed in
 * software, the quote's ECDSA signature checked by BearSSL against the AK's
 * public key, the EK certificate parsed by BearSSL's X.509 decoder,
 * credentials made in software (tools/verify/tpm_credential.c) and by
 * tpm2-tools' tpm2_makecredential. swtpm is a dependency (make deps): its
 * absence is a data-kind skip, a failure under LLMK_REQUIRE_TESTDATA=1.
 */
#include "test.h"

#include <bearssl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../drivers/tcg_log.h"
#include "../../drivers/tpm2_attest.h"
#include "../../shell/evidence.h"
#include "../../kernel/attest.h"
#include "../../tools/host/host.h"
#include "../../tools/host/snp_sim.h"
#include "../../tools/host/tdx_sim.h"
#include "../../tools/verify/tpm_credential.h"
#include "vtpm.h"

static char vtpm_why[200];

/* A connection of our own (swtpm serves one client at a time: close it). */
static int vtpm_connect(struct tpm2 *t, int *fd)
{
	char err[200];
	const char *p = test_vtpm_path(vtpm_why, sizeof vtpm_why);
	if (!p)
		return -1;
	*fd = host_vtpm_connect(p, err, sizeof err);
	if (*fd < 0) {
		fprintf(stderr, "  %s\n", err);
		return -1;
	}
	tpm2_init(t, host_vtpm_xfer, fd);
	return 0;
}

#define NEED_VTPM(t, fd)                                                        \
	do {                                                                    \
		if (vtpm_connect(t, fd))                                        \
			SKIP("no swtpm: %s", vtpm_why[0] ? vtpm_why : "cannot connect"); \
	} while (0)

static struct tpm2 T; /* 8 KiB: not on the stack */

static void sha256(const void *p, size_t n, uint8_t out[32])
{
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, p, n);
	br_sha256_out(&c, out);
}

static void sw_extend(uint8_t pcr[32], const uint8_t d[32])
{
	uint8_t b[64];
	memcpy(b, pcr, 32);
	memcpy(b + 32, d, 32);
	sha256(b, 64, pcr);
}

static int make_key(struct tpm2 *t, enum tpm2_key k, struct tpm2_object *o)
{
	uint8_t tmpl[TPM2_PUB_MAX];
	int n = tpm2_template(k, tmpl, sizeof tmpl);
	if (n < 0)
		return n;
	return tpm2_create_primary(t, TPM2_RH_ENDORSEMENT, tmpl, (size_t)n, o);
}

/* ---- without a TPM ---- */
TEST(tpm2_rc_str_decodes_format_zero_and_format_one_codes)
{
	char b[80];
	CHECK_STR(tpm2_rc_str(0x2C4, b, sizeof b), "TPM_RC_VALUE (parameter 2)");
	CHECK_STR(tpm2_rc_str(0x18B, b, sizeof b), "TPM_RC_HANDLE (handle 1)");
	CHECK_STR(tpm2_rc_str(0x98E, b, sizeof b), "TPM_RC_AUTH_FAIL (session 1)");
	CHECK_STR(tpm2_rc_str(0x09F, b, sizeof b), "TPM_RC_INTEGRITY");
	CHECK_STR(tpm2_rc_str(0x100, b, sizeof b), "TPM_RC_INITIALIZE");
	CHECK_STR(tpm2_rc_str(0x14B, b, sizeof b), "TPM_RC_NV_SPACE");
	CHECK_STR(tpm2_rc_str(0x922, b, sizeof b), "TPM_RC_RETRY (warning)");
	CHECK_STR(tpm2_rc_str(0x902, b, sizeof b), "TPM_RC_OBJECT_MEMORY (warning)");
	CHECK_STR(tpm2_rc_str(0x01E, b, sizeof b), "TPM 1.2 response code 0x1e");
}

/* A transport that answers with canned bytes. */
struct canned {
	const uint8_t *rsp;
	size_t n;
};

static int canned_xfer(void *ctx, const uint8_t *cmd, size_t n, uint8_t *rsp, size_t cap,
		       size_t *rlen, char *err, size_t errn)
{
	struct canned *c = ctx;
	(void)cmd;
	(void)n;
	(void)err;
	(void)errn;
	if (c->n > cap)
		return -LLMK_ERANGE;
	memcpy(rsp, c->rsp, c->n);
	*rlen = c->n;
	return 0;
}

TEST(tpm2_refuses_responses_whose_lengths_do_not_add_up)
{
	static struct tpm2 t;
	struct canned c;
	uint32_t v;

	/* responseSize 12 but 10 bytes arrive */
	static const uint8_t short_hdr[] = {0x80, 0x01, 0, 0, 0, 12, 0, 0, 0, 0};
	c = (struct canned){short_hdr, sizeof short_hdr};
	tpm2_init(&t, canned_xfer, &c);
	CHECK_EQ_INT(tpm2_get_property(&t, TPM2_PT_MANUFACTURER, &v), -LLMK_EIO);
	CHECK(strstr(t.err, "TPM2_GetCapability: responseSize 12 but 10 bytes arrived") != NULL);
	/* fewer than a header */
	c.n = 6;
	CHECK_EQ_INT(tpm2_get_property(&t, TPM2_PT_MANUFACTURER, &v), -LLMK_EIO);
	CHECK(strstr(t.err, "shorter than its 10-byte header") != NULL);
	/* a success whose property list claims 2 entries but holds 1 */
	static const uint8_t cut[] = {0x80, 0x01, 0, 0, 0, 28, 0, 0, 0, 0, 0, 0, 0, 0, 6,
				      0, 0, 0, 2, 0, 0, 1, 5, 0x49, 0x42, 0x4d, 0};
	c = (struct canned){cut, sizeof cut};
	c.n = 27; /* one byte short of its own size field: caught first */
	CHECK_EQ_INT(tpm2_get_property(&t, TPM2_PT_MANUFACTURER, &v), -LLMK_EIO);
	static uint8_t cut2[27];
	memcpy(cut2, cut, 27);
	cut2[5] = 27;
	c = (struct canned){cut2, sizeof cut2};
	CHECK_EQ_INT(tpm2_get_property(&t, TPM2_PT_MANUFACTURER, &v), -LLMK_EIO);
	CHECK(strstr(t.err, "end inside TPML_TAGGED_TPM_PROPERTY") != NULL);
	/* a session command whose parameterSize points past the end */
	static const uint8_t ps[] = {0x80, 0x02, 0, 0, 0, 14, 0, 0, 0, 0, 0, 0, 0, 9};
	c = (struct canned){ps, sizeof ps};
	uint8_t d[32] = {0};
	CHECK_EQ_INT(tpm2_pcr_extend(&t, 23, d), -LLMK_EIO);
	CHECK(strstr(t.err, "TPM2_PCR_Extend: parameterSize 9 past the response's end") != NULL);
	/* an error code is decoded, with the command's name */
	static const uint8_t bad[] = {0x80, 0x01, 0, 0, 0, 10, 0, 0, 0x02, 0xC4};
	c = (struct canned){bad, sizeof bad};
	CHECK_EQ_INT(tpm2_get_property(&t, TPM2_PT_MANUFACTURER, &v), -LLMK_EIO);
	CHECK_STR(t.err, "TPM2_GetCapability: TPM_RC_VALUE (parameter 2)");
	CHECK_EQ_INT(t.rc, 0x2C4);
}

TEST(tpm2_public_parse_reads_each_template_and_refuses_a_cut_or_longer_one)
{
	uint8_t b[TPM2_PUB_MAX];
	struct tpm2_pub p;
	char err[160];

	int n = tpm2_template(TPM2_KEY_AK_ECC, b, sizeof b);
	CHECK(n > 0);
	CHECK_EQ_INT(tpm2_public_parse(b, (size_t)n, &p, err, sizeof err), 0);
	CHECK_EQ_INT(p.type, TPM2_ALG_ECC);
	CHECK_EQ_INT(p.scheme, TPM2_ALG_ECDSA);
	CHECK_EQ_INT(p.scheme_hash, TPM2_ALG_SHA256);
	CHECK_EQ_INT(p.curve, TPM2_ECC_NIST_P256);
	CHECK(p.attrs & TPM2_OA_RESTRICTED && p.attrs & TPM2_OA_SIGN && p.attrs & TPM2_OA_FIXED_TPM);
	CHECK_EQ_INT(tpm2_public_parse(b, (size_t)n - 1, &p, err, sizeof err), -LLMK_EFORMAT);
	CHECK(strstr(err, "ends inside unique.y") != NULL);
	b[n] = 0;
	CHECK_EQ_INT(tpm2_public_parse(b, (size_t)n + 1, &p, err, sizeof err), -LLMK_EFORMAT);

	n = tpm2_template(TPM2_KEY_EK_RSA, b, sizeof b);
	CHECK_EQ_INT(tpm2_public_parse(b, (size_t)n, &p, err, sizeof err), 0);
	CHECK_EQ_INT(p.type, TPM2_ALG_RSA);
	CHECK_EQ_INT(p.rsa_bits, 2048);
	CHECK_EQ_INT(p.n_len, 256);
	CHECK_EQ_INT(p.attrs, 0x000300B2); /* EK Credential Profile, template L-1 */
	CHECK_EQ_INT(p.policy_len, 32);
	n = tpm2_template(TPM2_KEY_EK_ECC, b, sizeof b);
	CHECK_EQ_INT(tpm2_public_parse(b, (size_t)n, &p, err, sizeof err), 0);
	CHECK_EQ_INT(p.x_len, 32);
	CHECK_EQ_INT(tpm2_template(TPM2_KEY_EK_RSA, b, 100), -LLMK_ERANGE);
}

/* A firmware log: the Spec ID header (SHA-1 and SHA-256), a StartupLocality
 * event, two events with both digests. */
static size_t fw_log(uint8_t *b, const uint8_t d1[32], const uint8_t d2[32])
{
	size_t o = 0;
#define P32(v) do { uint32_t v_ = (v); memcpy(b + o, &v_, 4); o += 4; } while (0)
#define P16(v) do { uint16_t v_ = (v); memcpy(b + o, &v_, 2); o += 2; } while (0)
	P32(0);
	P32(TCG_EV_NO_ACTION);
	memset(b + o, 0, 20);
	o += 20;
	P32(16 + 4 + 4 + 4 + 2 * 4 + 1);
	memcpy(b + o, "Spec ID Event03", 16);
	o += 16;
	P32(0);             /* platformClass */
	b[o++] = 0;         /* minor */
	b[o++] = 2;         /* major */
	b[o++] = 0;         /* errata */
	b[o++] = 2;         /* uintnSize */
	P32(2);
	P16(0x0004);
	P16(20);
	P16(0x000B);
	P16(32);
	b[o++] = 0;         /* vendorInfoSize */
	/* StartupLocality 3 */
	P32(0);
	P32(TCG_EV_NO_ACTION);
	P32(1);
	P16(0x000B);
	memset(b + o, 0, 32);
	o += 32;
	P32(17);
	memcpy(b + o, "StartupLocality", 16);
	o += 16;
	b[o++] = 3;
	const uint8_t *ds[2] = {d1, d2};
	for (int i = 0; i < 2; i++) {
		P32(i == 0 ? 0 : 4);
		P32(0x80000003);
		P32(2);
		P16(0x0004);
		memset(b + o, 0xaa, 20);
		o += 20;
		P16(0x000B);
		memcpy(b + o, ds[i], 32);
		o += 32;
		P32(3);
		memcpy(b + o, "abc", 3);
		o += 3;
	}
#undef P32
#undef P16
	return o;
}

TEST(tcg_log_replays_a_firmware_log_and_the_kernel_records)
{
	uint8_t log[1024], d1[32], d2[32], pcrs[TCG_LOG_PCRS][32], want0[32] = {0}, want4[32] = {0};
	char err[160];

	for (int i = 0; i < 32; i++) {
		d1[i] = (uint8_t)i;
		d2[i] = (uint8_t)(100 + i);
	}
	size_t n = fw_log(log, d1, d2);
	memset(pcrs, 0, sizeof pcrs);
	CHECK_EQ_INT(tcg_log_replay(log, n, true, pcrs, err, sizeof err), 3);
	want0[31] = 3; /* started at locality 3 */
	sw_extend(want0, d1);
	sw_extend(want4, d2);
	CHECK(memcmp(pcrs[0], want0, 32) == 0);
	CHECK(memcmp(pcrs[4], want4, 32) == 0);
	/* the kernel's own records (no header) on top */
	size_t k = 0;
	uint8_t klog[256], d3[32] = {7}, want23[32] = {0};
	CHECK_EQ_INT(tcg_log_append(klog, sizeof klog, &k, 23, TCG_EV_EVENT_TAG, d3, "x", 2), 0);
	CHECK_EQ_INT(k, 52);
	CHECK_EQ_INT(tcg_log_replay(klog, k, false, pcrs, err, sizeof err), 1);
	sw_extend(want23, d3);
	CHECK(memcmp(pcrs[23], want23, 32) == 0);
	CHECK_EQ_INT(tcg_log_append(klog, 60, &k, 23, TCG_EV_EVENT_TAG, d3, "x", 2), -LLMK_ERANGE);
	/* every cut of the log is refused, never read past */
	for (size_t cut = 1; cut < n; cut++) {
		uint8_t *c = malloc(cut);
		memcpy(c, log, cut);
		memset(pcrs, 0, sizeof pcrs);
		int r = tcg_log_replay(c, cut, true, pcrs, err, sizeof err);
		free(c);
		/* cuts at a record boundary are shorter logs, the rest errors */
		if (r >= 0)
			CHECK(cut == 69 || cut == 136 || cut == 211);
	}
	memset(pcrs, 0, sizeof pcrs);
	CHECK_EQ_INT(tcg_log_replay(log, n - 1, true, pcrs, err, sizeof err), -LLMK_EFORMAT);
	CHECK(strstr(err, "record 2 at byte 211") != NULL);
}

/* ---- against swtpm ---- */
TEST(tpm2_pcr_extend_matches_an_extend_computed_in_software)
{
	int fd;
	uint8_t pcrs[TPM2_PCRS][32], want[32] = {0}, d[32];
	NEED_VTPM(&T, &fd);
	CHECK_EQ_INT(tpm2_pcr_reset(&T, 23), 0);
	CHECK_EQ_INT(tpm2_pcr_read(&T, 1u << 23, pcrs), 0);
	CHECK(memcmp(pcrs[23], want, 32) == 0);
	for (int i = 0; i < 3; i++) {
		sha256(&i, sizeof i, d);
		CHECK_EQ_INT(tpm2_pcr_extend(&T, 23, d), 0);
		sw_extend(want, d);
	}
	CHECK_EQ_INT(tpm2_pcr_read(&T, 1u << 23, pcrs), 0);
	CHECK(memcmp(pcrs[23], want, 32) == 0);
	CHECK_EQ_INT(tpm2_pcr_reset(&T, 23), 0);
	close(fd);
}

TEST(tpm2_pcr_read_of_nine_pcrs_takes_two_responses_and_agrees_with_single_reads)
{
	int fd;
	static uint8_t all[TPM2_PCRS][32], one[TPM2_PCRS][32];
	uint8_t d[32] = {1, 2, 3};
	NEED_VTPM(&T, &fd);
	CHECK_EQ_INT(tpm2_pcr_extend(&T, 23, d), 0);
	CHECK_EQ_INT(tpm2_pcr_read(&T, TPM2_ATTEST_PCRS, all), 0);
	for (int i = 0; i < TPM2_PCRS; i++) {
		if (!(TPM2_ATTEST_PCRS & (1u << i)))
			continue;
		CHECK_EQ_INT(tpm2_pcr_read(&T, 1u << i, one), 0);
		CHECK(memcmp(all[i], one[i], 32) == 0);
	}
	CHECK(memcmp(all[23], (uint8_t[32]){0}, 32) != 0);
	CHECK_EQ_INT(tpm2_pcr_reset(&T, 23), 0);
	close(fd);
}

/* Check a quote the way a verifier does: TPMS_ATTEST fields, the PCR
 * digest, and the ECDSA P-256 signature with the AK's public point. */
static void check_quote(const uint8_t *q, size_t qn, const uint8_t *sig, size_t sn,
			const uint8_t *akpub, size_t akn, const uint8_t qdata[32],
			const uint8_t *vals, size_t nvals)
{
	struct tpm2_pub ak;
	char err[160];
	CHECK_EQ_INT(tpm2_public_parse(akpub, akn, &ak, err, sizeof err), 0);
	/* Part 2 §10.12.8 TPMS_ATTEST: magic, type, qualifiedSigner, extraData,
	 * clockInfo (17), firmwareVersion (8), TPMS_QUOTE_INFO */
	CHECK(qn > 10 && memcmp(q, "\xff\x54\x43\x47\x80\x18", 6) == 0);
	size_t o = 6;
	o += 2 + (size_t)(q[o] << 8 | q[o + 1]);
	CHECK_EQ_INT(q[o] << 8 | q[o + 1], 32);
	CHECK(memcmp(q + o + 2, qdata, 32) == 0);
	o += 2 + 32 + 17 + 8;
	/* pcrSelect: count 1, sha256, 3, ff 00 80 */
	CHECK(memcmp(q + o, "\0\0\0\1\0\x0b\3\xff\0\x80", 10) == 0);
	o += 10;
	CHECK_EQ_INT(q[o] << 8 | q[o + 1], 32);
	uint8_t pd[32];
	sha256(vals, nvals, pd);
	CHECK(memcmp(q + o + 2, pd, 32) == 0);
	CHECK_EQ_INT(o + 34, qn);
	/* TPMT_SIGNATURE: ECDSA, SHA-256, r, s */
	CHECK(sn == 2 + 2 + 2 + 32 + 2 + 32 && sig[1] == 0x18 && sig[3] == 0x0b);
	uint8_t rs[64], pt[65], h[32];
	memcpy(rs, sig + 6, 32);
	memcpy(rs + 32, sig + 40, 32);
	pt[0] = 4;
	memcpy(pt + 1, ak.x, 32);
	memcpy(pt + 33, ak.y, 32);
	br_ec_public_key pk = {BR_EC_secp256r1, pt, 65};
	sha256(q, qn, h);
	CHECK(br_ecdsa_i31_vrfy_raw(&br_ec_p256_m31, h, 32, &pk, rs, 64) == 1);
	h[0] ^= 1;
	CHECK(br_ecdsa_i31_vrfy_raw(&br_ec_p256_m31, h, 32, &pk, rs, 64) == 0);
}

TEST(tpm2_quote_verifies_with_bearssl_against_the_ak_public_key)
{
	int fd;
	static struct tpm2_object ak;
	static uint8_t pcrs[TPM2_PCRS][32], vals[9 * 32];
	uint8_t q[1024], sig[600], qdata[32];
	size_t qn = 0, sn = 0;
	NEED_VTPM(&T, &fd);
	sha256("nonce", 5, qdata);
	CHECK_EQ_INT(make_key(&T, TPM2_KEY_AK_ECC, &ak), 0);
	CHECK_EQ_INT(tpm2_pcr_read(&T, TPM2_ATTEST_PCRS, pcrs), 0);
	CHECK_EQ_INT(tpm2_quote(&T, ak.handle, qdata, 32, TPM2_ATTEST_PCRS, q, sizeof q, &qn, sig,
				sizeof sig, &sn), 0);
	for (int i = 0; i < 8; i++)
		memcpy(vals + 32 * i, pcrs[i], 32);
	memcpy(vals + 256, pcrs[23], 32);
	check_quote(q, qn, sig, sn, ak.pub, ak.pub_len, qdata, vals, sizeof vals);
	/* a quote too large for the caller's buffer is refused, not cut */
	CHECK_EQ_INT(tpm2_quote(&T, ak.handle, qdata, 32, TPM2_ATTEST_PCRS, q, 16, &qn, sig,
				sizeof sig, &sn), -LLMK_ERANGE);
	CHECK_EQ_INT(tpm2_flush(&T, ak.handle), 0);
	close(fd);
}

TEST(tpm2_ak_is_the_same_key_each_time_and_its_name_is_computed_right)
{
	int fd;
	static struct tpm2_object a, b, rp;
	uint8_t name[34];
	NEED_VTPM(&T, &fd);
	CHECK_EQ_INT(make_key(&T, TPM2_KEY_AK_ECC, &a), 0);
	CHECK_EQ_INT(make_key(&T, TPM2_KEY_AK_ECC, &b), 0);
	CHECK(a.pub_len == b.pub_len && memcmp(a.pub, b.pub, a.pub_len) == 0);
	CHECK_EQ_INT(tpm2_read_public(&T, a.handle, &rp), 0);
	CHECK(rp.pub_len == a.pub_len && memcmp(rp.pub, a.pub, a.pub_len) == 0);
	CHECK_EQ_INT(tpm_credential_name(a.pub, a.pub_len, name), 0);
	CHECK(a.name_len == 34 && memcmp(a.name, name, 34) == 0);
	CHECK(rp.name_len == 34 && memcmp(rp.name, name, 34) == 0);
	CHECK_EQ_INT(tpm2_flush(&T, a.handle), 0);
	CHECK_EQ_INT(tpm2_flush(&T, b.handle), 0);
	close(fd);
}

TEST(tpm2_nv_read_of_the_ek_certificate_parses_as_x509_holding_the_ek_made_from_template_l1)
{
	int fd;
	static uint8_t cert[TPM2_EK_CERT_MAX];
	static struct tpm2_object ek;
	size_t n = 0;
	struct tpm2_pub p;
	char err[160];
	NEED_VTPM(&T, &fd);
	CHECK_EQ_INT(tpm2_nv_read(&T, TPM2_NV_EK_CERT_RSA, cert, sizeof cert, &n), 0);
	CHECK(n > 500);
	br_x509_decoder_context dc;
	br_x509_decoder_init(&dc, NULL, NULL);
	br_x509_decoder_push(&dc, cert, n);
	const br_x509_pkey *pk = br_x509_decoder_get_pkey(&dc);
	CHECK(pk != NULL && pk->key_type == BR_KEYTYPE_RSA);
	CHECK_EQ_INT(make_key(&T, TPM2_KEY_EK_RSA, &ek), 0);
	CHECK_EQ_INT(tpm2_public_parse(ek.pub, ek.pub_len, &p, err, sizeof err), 0);
	if (pk) {
		CHECK_EQ_INT(pk->key.rsa.nlen, p.n_len);
		CHECK(memcmp(pk->key.rsa.n, p.n, p.n_len) == 0);
	}
	CHECK_EQ_INT(tpm2_flush(&T, ek.handle), 0);
	/* a buffer too small is refused; an index that does not exist is ENOENT */
	CHECK_EQ_INT(tpm2_nv_read(&T, TPM2_NV_EK_CERT_RSA, cert, 100, &n), -LLMK_ERANGE);
	CHECK_EQ_INT(tpm2_nv_read(&T, 0x01c0ffff, cert, sizeof cert, &n), -LLMK_ENOENT);
	close(fd);
}

TEST(tpm2_errors_name_the_command_and_the_tpms_code)
{
	int fd;
	uint8_t d[32] = {0};
	NEED_VTPM(&T, &fd);
	CHECK_EQ_INT(tpm2_pcr_extend(&T, 30, d), -LLMK_EIO);
	CHECK_STR(T.err, "TPM2_PCR_Extend: TPM_RC_VALUE (handle 1)");
	CHECK(tpm2_flush(&T, 0x80ffffff) < 0);
	CHECK(strncmp(T.err, "TPM2_FlushContext: TPM_RC_", 26) == 0);
	/* a quote by a key that does not exist */
	uint8_t q[64], s[64];
	size_t qn, sn;
	CHECK(tpm2_quote(&T, 0x80000002, d, 32, 1, q, sizeof q, &qn, s, sizeof s, &sn) < 0);
	CHECK_STR(T.err, "TPM2_Quote: TPM_RC_REFERENCE_H0 (warning)"); /* not loaded */
	/* the connection still works after errors */
	uint32_t man;
	CHECK_EQ_INT(tpm2_get_property(&T, TPM2_PT_MANUFACTURER, &man), 0);
	close(fd);
}

/* The provider context over our own connection. */
static struct tpm2_attest A;

static int activate_with(enum tpm2_key ek_kind, const uint8_t *secret, size_t sn,
			 const uint8_t *name_override, uint8_t *out, size_t *on, uint8_t flip)
{
	static struct tpm2_object ak, ek;
	uint8_t cred[TPM_CREDENTIAL_MAX], rnd[64], name[34];
	char err[200];

	if (make_key(&A.tpm, TPM2_KEY_AK_ECC, &ak) || make_key(&A.tpm, ek_kind, &ek))
		return -100;
	tpm2_flush(&A.tpm, ak.handle);
	tpm2_flush(&A.tpm, ek.handle);
	A.have_ek = true;
	A.ek_kind = ek_kind;
	memcpy(A.ek_pub, ek.pub, ek.pub_len);
	A.ek_pub_len = ek.pub_len;
	for (int i = 0; i < 64; i++)
		rnd[i] = (uint8_t)(i * 7 + 1);
	tpm_credential_name(ak.pub, ak.pub_len, name);
	int n = tpm_credential_make(ek.pub, ek.pub_len, name_override ? name_override : name, 34,
				    secret, sn, rnd, cred, sizeof cred, err, sizeof err);
	if (n < 0) {
		fprintf(stderr, "  tpm_credential_make: %s\n", err);
		return -101;
	}
	if (flip)
		cred[flip] ^= 1;
	return tpm2_attest_activate(&A, cred, (size_t)n, out, 64, on);
}

TEST(tpm2_activate_credential_recovers_a_secret_made_in_software_for_the_rsa_and_ecc_eks)
{
	int fd;
	uint8_t out[64];
	size_t on = 0;
	static const uint8_t secret[] = "the verifier's 32-byte secret!!";
	NEED_VTPM(&A.tpm, &fd);
	CHECK_EQ_INT(activate_with(TPM2_KEY_EK_RSA, secret, 32, NULL, out, &on, 0), 0);
	CHECK(on == 32 && memcmp(out, secret, 32) == 0);
	on = 0;
	CHECK_EQ_INT(activate_with(TPM2_KEY_EK_ECC, secret, 20, NULL, out, &on, 0), 0);
	CHECK(on == 20 && memcmp(out, secret, 20) == 0);
	/* no objects or sessions left behind */
	uint32_t h[8];
	int n = -1;
	CHECK_EQ_INT(tpm2_get_handles(&A.tpm, 0x80000000, h, 8, &n), 0);
	CHECK_EQ_INT(n, 0);
	CHECK_EQ_INT(tpm2_get_handles(&A.tpm, 0x03000000, h, 8, &n), 0);
	CHECK_EQ_INT(n, 0);
	close(fd);
}

TEST(tpm2_activate_credential_refuses_one_made_for_another_key_or_altered)
{
	int fd;
	uint8_t out[64], other[34];
	size_t on = 0;
	NEED_VTPM(&A.tpm, &fd);
	memset(other, 0x5a, sizeof other);
	other[0] = 0;
	other[1] = 0x0b;
	CHECK_EQ_INT(activate_with(TPM2_KEY_EK_RSA, (const uint8_t *)"s", 1, other, out, &on, 0),
		     -LLMK_EAUTH);
	CHECK(strstr(A.tpm.err, "TPM2_ActivateCredential: TPM_RC_INTEGRITY") != NULL);
	CHECK(activate_with(TPM2_KEY_EK_RSA, (const uint8_t *)"s", 1, NULL, out, &on, 20) < 0);
	/* the seed: the TPM cannot decrypt it to anything that passes */
	CHECK(activate_with(TPM2_KEY_EK_RSA, (const uint8_t *)"s", 1, NULL, out, &on, 100) < 0);
	/* not a credential file at all */
	CHECK_EQ_INT(tpm2_attest_activate(&A, (const uint8_t *)"garbage!", 8, out, 64, &on),
		     -LLMK_EFORMAT);
	CHECK(strstr(A.tpm.err, "tpm2_makecredential's format") != NULL);
	uint32_t h[8];
	int n = -1;
	CHECK_EQ_INT(tpm2_get_handles(&A.tpm, 0x80000000, h, 8, &n), 0);
	CHECK_EQ_INT(n, 0);
	CHECK_EQ_INT(tpm2_get_handles(&A.tpm, 0x03000000, h, 8, &n), 0);
	CHECK_EQ_INT(n, 0);
	close(fd);
}

static int run(const char *cmd)
{
	int rc = system(cmd);
	return rc;
}

TEST(tpm2_activate_credential_opens_what_tpm2_makecredential_made)
{
	int fd;
	static struct tpm2_object ak, ek;
	char dir[200], cmd[2000], hexname[69];
	uint8_t out[64];
	size_t on = 0, n;
	if (run("command -v tpm2_makecredential >/dev/null 2>&1") != 0)
		SKIP("tpm2_makecredential not installed (Debian tpm2-tools; make deps)");
	NEED_VTPM(&A.tpm, &fd);
	CHECK_EQ_INT(make_key(&A.tpm, TPM2_KEY_AK_ECC, &ak), 0);
	CHECK_EQ_INT(make_key(&A.tpm, TPM2_KEY_EK_RSA, &ek), 0);
	tpm2_flush(&A.tpm, ak.handle);
	tpm2_flush(&A.tpm, ek.handle);
	snprintf(dir, sizeof dir, "%s/mkcred-%d", test_tmpdir(), (int)getpid());
	mkdir(dir, 0700);
	/* tpm2-tools reads the EK as a TPM2B_PUBLIC file */
	snprintf(cmd, sizeof cmd, "%s/ek.pub", dir);
	FILE *f = fopen(cmd, "wb");
	uint8_t sz[2] = {(uint8_t)(ek.pub_len >> 8), (uint8_t)ek.pub_len};
	fwrite(sz, 1, 2, f);
	fwrite(ek.pub, 1, ek.pub_len, f);
	fclose(f);
	for (int i = 0; i < 34; i++)
		sprintf(hexname + 2 * i, "%02x", ak.name[i]);
	snprintf(cmd, sizeof cmd, "printf 'made by tpm2-tools' > %s/secret && "
		 "tpm2_makecredential -T none -u %s/ek.pub -s %s/secret -n %s -o %s/cred "
		 ">%s/log 2>&1", dir, dir, dir, hexname, dir, dir);
	CHECK_EQ_INT(run(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/cred", dir);
	uint8_t *cred = test_read_file(cmd, &n);
	CHECK(cred != NULL);
	if (cred) {
		A.have_ek = false; /* found again from NV: the RSA EK */
		CHECK_EQ_INT(tpm2_attest_activate(&A, cred, n, out, sizeof out, &on), 0);
		CHECK(on == 18 && memcmp(out, "made by tpm2-tools", 18) == 0);
		free(cred);
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	run(cmd);
	close(fd);
}

/* ---- the host provider (tools/host/attest.c) ---- */
/* The SNP and TDX simulators' switches, off for a test about which
 * providers there are (another test may have left one set), then back. */
struct sim_env {
	char *snp, *tdx;
};
static void sims_off(struct sim_env *e)
{
	e->snp = getenv("LLMK_SNP_SIM") ? strdup(getenv("LLMK_SNP_SIM")) : NULL;
	e->tdx = getenv("LLMK_TDX_SIM") ? strdup(getenv("LLMK_TDX_SIM")) : NULL;
	unsetenv("LLMK_SNP_SIM");
	unsetenv("LLMK_TDX_SIM");
	snp_sim_provider_reset(); /* each holds its launch for the process */
	tdx_sim_provider_reset();
}
static void sims_back(struct sim_env *e)
{
	if (e->snp)
		setenv("LLMK_SNP_SIM", e->snp, 1);
	if (e->tdx)
		setenv("LLMK_TDX_SIM", e->tdx, 1);
	free(e->snp);
	free(e->tdx);
	snp_sim_provider_reset();
	tdx_sim_provider_reset();
}

TEST(host_vtpm_evidence_replays_pcr_23_from_its_log_and_its_quote_verifies)
{
	const char *p = test_vtpm_path(vtpm_why, sizeof vtpm_why);
	if (!p)
		SKIP("no swtpm: %s", vtpm_why);
	char *old = getenv("LLMK_VTPM") ? strdup(getenv("LLMK_VTPM")) : NULL;
	struct sim_env sims;
	sims_off(&sims);
	setenv("LLMK_VTPM", p, 1);
	host_attest_reset();

	struct plat_attest_info in;
	CHECK_EQ_INT(plat_attest_info(PLAT_ATTEST_VTPM, &in), 0);
	CHECK(in.present && in.simulated);
	CHECK(strstr(in.detail, "host build, swtpm at") != NULL);
	CHECK_EQ_INT(plat_attest_default(), PLAT_ATTEST_VTPM);
	uint8_t d[32];
	sha256("model", 5, d);
	CHECK_EQ_INT(plat_attest_extend("llmk model test", d), 0);
	CHECK_EQ_INT(plat_attest_extend("llmk key-release test", d), 0);

	struct evidence_inputs ei = {.nonce = {1, 2, 3}, .nonce_len = 3};
	strcpy(ei.build_id, "0123456789abcdef");
	static uint8_t buf[EVIDENCE_MAX];
	uint8_t rd[64], qdata[32];
	size_t len = 0;
	CHECK_EQ_INT(evidence_begin(buf, sizeof buf, &len, "vtpm", &ei, rd), 0);
	CHECK_EQ_INT(plat_attest_evidence(PLAT_ATTEST_VTPM, rd, buf, sizeof buf, &len), 0);
	struct evidence_rec recs[32];
	char err[200];
	int n = evidence_parse(buf, len, recs, 32, err, sizeof err);
	CHECK(n > 10);
	bool dup;
	const struct evidence_rec *q = evidence_find(recs, n, ATTEST_REC_TPM_QUOTE, &dup),
				  *s = evidence_find(recs, n, ATTEST_REC_TPM_SIG, &dup),
				  *ak = evidence_find(recs, n, ATTEST_REC_TPM_AK_PUB, &dup),
				  *pc = evidence_find(recs, n, ATTEST_REC_TPM_PCRS, &dup),
				  *kl = evidence_find(recs, n, ATTEST_REC_TPM_LOG_KERNEL, &dup),
				  *ekc = evidence_find(recs, n, ATTEST_REC_TPM_EK_CERT, &dup);
	CHECK(q && s && ak && pc && kl && ekc);
	CHECK(evidence_find(recs, n, ATTEST_REC_TPM_LOG_FW, &dup) == NULL);
	if (q && s && ak && pc && kl) {
		sha256(rd, 64, qdata);
		CHECK_EQ_INT(pc->len, 9 * 32);
		check_quote(q->val, q->len, s->val, s->len, ak->val, ak->len, qdata, pc->val, pc->len);
		uint8_t pcrs[TCG_LOG_PCRS][32];
		memset(pcrs, 0, sizeof pcrs);
		CHECK_EQ_INT(tcg_log_replay(kl->val, kl->len, false, pcrs, err, sizeof err), 2);
		CHECK(memcmp(pcrs[23], pc->val + 8 * 32, 32) == 0);
		CHECK(kl->len > 60 && memcmp(kl->val + 50, "llmk model test", 16) == 0);
	}
	/* activation through the provider */
	uint8_t out[64];
	size_t on;
	CHECK_EQ_INT(plat_attest_activate(PLAT_ATTEST_VTPM, (const uint8_t *)"x", 1, out, 64, &on),
		     -LLMK_EFORMAT);
	CHECK(strstr(plat_attest_error(), "vtpm: credential of 1 bytes") != NULL);
	CHECK_EQ_INT(plat_attest_activate(PLAT_ATTEST_NONE, (const uint8_t *)"x", 1, out, 64, &on),
		     -LLMK_ENOTSUP);

	host_attest_reset(); /* close the provider's connection */
	if (old) {
		setenv("LLMK_VTPM", old, 1);
		free(old);
	} else {
		unsetenv("LLMK_VTPM");
	}
	sims_back(&sims);
}

TEST(host_providers_without_llmk_vtpm_say_why_and_none_adds_no_records)
{
	char *old = getenv("LLMK_VTPM") ? strdup(getenv("LLMK_VTPM")) : NULL;
	struct sim_env sims;
	sims_off(&sims);
	unsetenv("LLMK_VTPM");
	host_attest_reset();
	struct plat_attest_info in;
	CHECK_EQ_INT(plat_attest_info(PLAT_ATTEST_VTPM, &in), 0);
	CHECK(!in.present);
	CHECK(strstr(in.detail, "LLMK_VTPM is not set") != NULL);
	CHECK_EQ_INT(plat_attest_default(), PLAT_ATTEST_NONE);
	uint8_t rd[64] = {0}, buf[64];
	size_t len = 0;
	CHECK_EQ_INT(plat_attest_evidence(PLAT_ATTEST_NONE, rd, buf, sizeof buf, &len), 0);
	CHECK_EQ_INT(len, 0);
	CHECK_EQ_INT(plat_attest_evidence(PLAT_ATTEST_VTPM, rd, buf, sizeof buf, &len), -LLMK_ENOENT);
	CHECK(strstr(plat_attest_error(), "provider vtpm is absent: LLMK_VTPM is not set") != NULL);
	CHECK_EQ_INT(plat_attest_info(PLAT_ATTEST_KINDS, &in), -LLMK_EINVAL);
	/* the log grows even with no measuring provider */
	uint8_t d[32] = {0};
	CHECK_EQ_INT(plat_attest_extend("llmk model 00", d), 0);
	host_attest_reset();
	if (old) {
		setenv("LLMK_VTPM", old, 1);
		free(old);
	}
	sims_back(&sims);
}
