/*
 * tools/verify/vtpm.c — every check of a vtpm evidence bundle
 * (docs/attestation.md), in the order that makes each one mean something:
 * the bundle's form, the provider, the report data against its inputs and
 * the verifier's nonce (those four are bundle.c's, shared with snp and
 * tdx), the AK's kind, the quote's signature by the AK, the
 * quote's fields (extraData binds the report data), the quoted PCR values
 * against the quote's digest, the event logs against those values, then the
 * verifier's expectations (PCR4: the image; the model) and the EK
 * certificate. The first failure stops with its own reason.
 *
 * Structures: TPM 2.0 Library Part 2 (tpm2.c); logs: TCG PC Client PFP
 * (eventlog.c); EK certificate: ekcert.c.
 */
#include "verify.h"
#include "tpm_credential.h"

#include <bearssl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errn, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errn, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errn, fmt, ap);
	va_end(ap);
	return code;
}

static void ok(struct vtpm_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(struct vtpm_result *res, const char *fmt, ...)
{
	if (res->nlines == VTPM_MAX_LINES)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = snprintf(res->line[res->nlines], sizeof res->line[0], "ok   ");
	vsnprintf(res->line[res->nlines] + k, sizeof res->line[0] - (size_t)k, fmt, ap);
	va_end(ap);
	res->nlines++;
}

static void sha256(const void *p, size_t n, uint8_t out[32])
{
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, p, n);
	br_sha256_out(&c, out);
}

static void pcr_list(uint32_t mask, char *out, size_t cap)
{
	size_t o = 0;
	out[0] = 0;
	for (int i = 0; i < TPM_PCRS; i++)
		if (mask >> i & 1)
			o += (size_t)snprintf(out + o, cap - o, "%s%d", o ? "," : "", i);
}

/* The record of type t, exactly once, with a length in [min, max]. */
static int need_rec(struct vtpm_result *res, uint16_t t, uint32_t min, uint32_t max,
		    const struct evidence_rec **out, char *err, size_t errn)
{
	static struct vfy_log log;
	vfy_log_init(&log);
	if (!(*out = bundle_need(&res->b, t, min, max, &log)))
		return fail(err, errn, -LLMK_EFORMAT, "%s", log.err);
	return 0;
}

/* bundle.c's checks (form, provider, simulated, report data, nonce), their
 * lines and reason moved into res and err. */
static int check_bundle(const uint8_t *bundle, size_t n, const struct vtpm_expect *x,
			struct vtpm_result *res, char *err, size_t errn)
{
	static struct vfy_log log;
	vfy_log_init(&log);
	int r = bundle_verify(bundle, n, PLAT_ATTEST_VTPM, &x->b, &res->b, &log);
	for (int i = 0; i < log.n; i++)
		ok(res, "%s", log.line[i]);
	return r < 0 ? fail(err, errn, r, "%s", log.err) : 0;
}

/* The AK: a restricted signing ECC P-256 key that never left its TPM. */
static int check_ak(struct vtpm_result *res, char *err, size_t errn)
{
	char why[200];
	int r = need_rec(res, ATTEST_REC_TPM_AK_PUB, 1, 4096, &res->ak, err, errn);
	if (r < 0)
		return r;
	struct tpm2_public *ak = &res->ak_pub;
	if ((r = tpm2_parse_public(res->ak->val, res->ak->len, ak, why, sizeof why)) < 0)
		return fail(err, errn, r, "AK: %s", why);
	if (ak->type != TPM_ALG_ECC || ak->curve != TPM_ECC_NIST_P256)
		return fail(err, errn, -LLMK_EAUTH, "AK: type 0x%04x curve 0x%04x, expected ECC NIST "
			    "P-256 (0x0023, 0x0003)", ak->type, ak->curve);
	if (ak->name_alg != TPM_ALG_SHA256)
		return fail(err, errn, -LLMK_EAUTH, "AK: nameAlg %s (0x%04x), expected sha256",
			    tpm2_alg_name(ak->name_alg), ak->name_alg);
	/* the guest's template (docs/attestation.md, drivers/tpm2_public.c), bit
	 * for bit: restricted signing, fixedTPM, fixedParent, sensitiveDataOrigin,
	 * userWithAuth, noDA and nothing else; no policy, no symmetric, ECDSA
	 * with SHA-256, no KDF. The name credential activation checks covers all
	 * of it too. */
	const uint32_t want = TPMA_FIXED_TPM | TPMA_FIXED_PARENT | TPMA_SENSITIVE_DATA_ORIGIN |
			      TPMA_USER_WITH_AUTH | TPMA_NO_DA | TPMA_RESTRICTED | TPMA_SIGN;
	if (ak->attrs != want)
		return fail(err, errn, -LLMK_EAUTH,
			    "AK: objectAttributes 0x%08x, expected 0x%08x (restricted, sign, fixedTPM, "
			    "fixedParent, sensitiveDataOrigin, userWithAuth, noDA, nothing else)",
			    ak->attrs, want);
	if (ak->policy_len || ak->sym != TPM_ALG_NULL || ak->kdf != TPM_ALG_NULL)
		return fail(err, errn, -LLMK_EAUTH, "AK: authPolicy of %u bytes, symmetric %s, kdf %s; "
			    "the AK template has none of them", ak->policy_len,
			    tpm2_alg_name(ak->sym), tpm2_alg_name(ak->kdf));
	if (ak->scheme != TPM_ALG_ECDSA || ak->scheme_hash != TPM_ALG_SHA256)
		return fail(err, errn, -LLMK_EAUTH, "AK: scheme %s/%s, expected ECDSA with SHA-256",
			    tpm2_alg_name(ak->scheme), tpm2_alg_name(ak->scheme_hash));
	if (tpm_credential_name(res->ak->val, res->ak->len, res->ak_name) < 0)
		return fail(err, errn, -LLMK_EAUTH, "AK: no SHA-256 name");
	ok(res, "AK: restricted signing ECC P-256 key, fixedTPM, generated in the TPM (attributes "
	   "0x%08x)", ak->attrs);
	return 0;
}

/* The quote's signature, by the AK (TPM 2.0 Part 3 §18.4: ECDSA over the
 * digest of the TPMS_ATTEST bytes). */
static int check_signature(struct vtpm_result *res, char *err, size_t errn)
{
	char why[200];
	struct tpm2_sig sig;
	int r;
	if ((r = need_rec(res, ATTEST_REC_TPM_QUOTE, 1, 4096, &res->quote, err, errn)) < 0 ||
	    (r = need_rec(res, ATTEST_REC_TPM_SIG, 1, 1024, &res->sig, err, errn)) < 0)
		return r;
	if ((r = tpm2_parse_sig(res->sig->val, res->sig->len, &sig, why, sizeof why)) < 0)
		return fail(err, errn, r, "quote signature: %s", why);
	if (sig.hash != TPM_ALG_SHA256)
		return fail(err, errn, -LLMK_EAUTH, "quote signature: hash %s, expected sha256",
			    tpm2_alg_name(sig.hash));
	if (sig.r_len > 32 || sig.s_len > 32)
		return fail(err, errn, -LLMK_EAUTH, "quote signature: R or S longer than 32 bytes");
	uint8_t raw[64] = {0}, h[32], q[65];
	size_t qlen;
	memcpy(raw + 32 - sig.r_len, sig.r, sig.r_len);
	memcpy(raw + 64 - sig.s_len, sig.s, sig.s_len);
	sha256(res->quote->val, res->quote->len, h);
	tpm2_ecc_point(&res->ak_pub, q, &qlen);
	br_ec_public_key pk = {BR_EC_secp256r1, q, qlen};
	if (!br_ecdsa_i31_vrfy_raw(br_ec_get_default(), h, sizeof h, &pk, raw, sizeof raw))
		return fail(err, errn, -LLMK_EAUTH,
			    "quote signature: does not verify with the AK (ECDSA P-256, SHA-256)");
	ok(res, "quote signature: ECDSA P-256 / SHA-256 by the AK");
	return 0;
}

/* TPMS_ATTEST: made by a TPM, a quote, over our report data. */
static int check_quote(struct vtpm_result *res, struct tpm2_quote *q, char *err, size_t errn)
{
	char why[200];
	int r = tpm2_parse_quote(res->quote->val, res->quote->len, q, why, sizeof why);
	if (r < 0)
		return fail(err, errn, r, "quote: %s", why);
	if (q->magic != TPM_GENERATED_VALUE)
		return fail(err, errn, -LLMK_EAUTH, "quote: magic 0x%08x, expected "
			    "TPM_GENERATED_VALUE 0xff544347", q->magic);
	if (q->type != TPM_ST_ATTEST_QUOTE)
		return fail(err, errn, -LLMK_EAUTH, "quote: type 0x%04x, expected TPM_ST_ATTEST_QUOTE "
			    "0x8018", q->type);
	/* Part 1 §16.6: the qualified name of a primary key is H(hierarchy
	 * handle || name); the AK is a primary of TPM_RH_ENDORSEMENT. */
	uint8_t qn_in[4 + 34], qn[34];
	qn_in[0] = 0x40, qn_in[1] = 0x00, qn_in[2] = 0x00, qn_in[3] = 0x0b;
	memcpy(qn_in + 4, res->ak_name, 34);
	qn[0] = 0x00, qn[1] = 0x0b;
	sha256(qn_in, sizeof qn_in, qn + 2);
	if (q->signer_len != sizeof qn || memcmp(q->signer, qn, sizeof qn) != 0)
		return fail(err, errn, -LLMK_EAUTH, "quote: qualifiedSigner (%u bytes) is not the "
			    "qualified name of the AK under the endorsement hierarchy: another key "
			    "signed it", q->signer_len);
	uint8_t want[32];
	sha256(res->b.report_data, 64, want);
	if (q->extra_len != 32 || memcmp(q->extra, want, 32) != 0)
		return fail(err, errn, -LLMK_EAUTH, "quote: extraData (%u bytes) is not SHA-256 of the "
			    "report data: the quote was not made for this evidence", q->extra_len);
	ok(res, "quote: TPM_GENERATED_VALUE, TPM_ST_ATTEST_QUOTE, signed by the AK (qualifiedSigner), "
	   "extraData = SHA-256(report data), resetCount %u", q->reset_count);
	return 0;
}

/* The PCR values the bundle carries are the ones the quote's digest covers. */
static int check_pcrs(struct vtpm_result *res, const struct tpm2_quote *q, char *err, size_t errn)
{
	char why[200], list[80];
	struct tpm2_pcr_sel sel[4];
	int r;
	if ((r = need_rec(res, ATTEST_REC_TPM_PCR_SEL, 1, 256, &res->sel, err, errn)) < 0 ||
	    (r = need_rec(res, ATTEST_REC_TPM_PCRS, 32, 32 * TPM_PCRS, &res->pcrs, err, errn)) < 0)
		return r;
	if (res->sel->len != q->sel_len || memcmp(res->sel->val, q->sel, q->sel_len) != 0)
		return fail(err, errn, -LLMK_EAUTH,
			    "PCR selection: the TPM_PCR_SEL record is not the selection the quote signed");
	int nb = tpm2_parse_pcr_sel(q->sel, q->sel_len, sel, 4, why, sizeof why);
	if (nb < 0)
		return fail(err, errn, nb, "PCR selection: %s", why);
	if (nb != 1 || sel[0].hash != TPM_ALG_SHA256 || sel[0].mask == 0)
		return fail(err, errn, -LLMK_ENOTSUP,
			    "PCR selection: %d banks, first %s; expected the SHA-256 bank alone", nb,
			    tpm2_alg_name(sel[0].hash));
	res->pcr_mask = sel[0].mask;
	unsigned count = (unsigned)__builtin_popcount(res->pcr_mask);
	if (res->pcrs->len != 32 * count)
		return fail(err, errn, -LLMK_EFORMAT,
			    "PCR values: TPM_PCRS record is %u bytes for %u selected PCRs (32 each)",
			    res->pcrs->len, count);
	/* Part 3 §18.4.1: pcrDigest = H(PCR values in selection order) */
	uint8_t d[32];
	sha256(res->pcrs->val, res->pcrs->len, d);
	pcr_list(res->pcr_mask, list, sizeof list);
	if (q->digest_len != 32 || memcmp(q->digest, d, 32) != 0)
		return fail(err, errn, -LLMK_EAUTH,
			    "PCR digest: SHA-256 over the TPM_PCRS values (PCRs %s) is not the quote's "
			    "pcrDigest: the values were changed", list);
	ok(res, "PCR digest: the quote covers sha256 PCRs %s, whose values the bundle carries", list);
	return 0;
}

static const uint8_t *pcr_value(const struct vtpm_result *res, int pcr)
{
	if (!(res->pcr_mask >> pcr & 1))
		return NULL;
	int k = __builtin_popcount(res->pcr_mask & ((1u << pcr) - 1));
	return res->pcrs->val + 32 * k;
}

/* Both logs replay every quoted PCR. */
static int check_logs(struct vtpm_result *res, char *err, size_t errn)
{
	static struct evlog_replay rp;
	int r = need_rec(res, ATTEST_REC_TPM_LOG_FW, 32, EVIDENCE_MAX, &res->log_fw, err, errn);
	if (r < 0)
		return r;
	res->log_kernel = evidence_find(res->b.rec, res->b.nrec, ATTEST_REC_TPM_LOG_KERNEL, NULL);
	evlog_init(&rp);
	if ((r = evlog_replay_firmware(&rp, res->log_fw->val, res->log_fw->len, err, errn)) < 0)
		return r;
	res->fw_used = rp.used;
	int fw_events = rp.events;
	res->kernel_used = 0;
	if (res->log_kernel) {
		rp.kernel = true;
		if ((r = evlog_replay_events(&rp, res->log_kernel->val, res->log_kernel->len,
					     "kernel event log", err, errn)) < 0)
			return r;
		res->kernel_used = rp.used;
	}
	for (int i = 0; i < TPM_PCRS; i++) {
		const uint8_t *v = pcr_value(res, i);
		if (v && memcmp(v, rp.pcr[i], 32) != 0) {
			char a[65], b[65];
			verify_hex(rp.pcr[i], 32, a);
			verify_hex(v, 32, b);
			return fail(err, errn, -LLMK_EAUTH,
				    "event logs: PCR %d replays to %s but the quote has %s (an event was "
				    "changed, removed or added)", i, a, b);
		}
	}
	res->first23 = rp.first23;
	res->first23_len = rp.first23_len;
	memcpy(res->first23_digest, rp.first23_digest, 32);
	ok(res, "event logs: %d firmware + %d kernel events replay every quoted PCR", fw_events,
	   rp.events - fw_events);
	return 0;
}

/* The kernel measures its configuration before anything else into PCR 23
 * ("llmk config <hex>", shell/shell.c): the replayed log must open PCR 23
 * with that event, over the digest the report data binds. */
static int check_config_event(struct vtpm_result *res, char *err, size_t errn)
{
	char want[16 + 64 + 1], hex[65];
	if (!(res->pcr_mask >> 23 & 1))
		return fail(err, errn, -LLMK_EAUTH, "config: PCR 23 is not in the quote, so the "
			    "configuration's measurement is not attested");
	verify_hex(res->b.config, 32, hex);
	snprintf(want, sizeof want, "llmk config %s", hex);
	size_t n = strlen(want) + 1;
	if (!res->first23 || res->first23_len != n || memcmp(res->first23, want, n) != 0 ||
	    memcmp(res->first23_digest, res->b.config, 32) != 0)
		return fail(err, errn, -LLMK_EAUTH, "config: PCR 23's first event is not \"%s\" over "
			    "that digest (the configuration was not measured before it was used)",
			    want);
	ok(res, "config: PCR 23 opens with \"llmk config %.16s...\", the CONFIG_DIGEST", hex);
	return 0;
}

static int check_expect(struct vtpm_result *res, const struct vtpm_expect *x, char *err,
			size_t errn)
{
	char a[65], b[65];
	if (x->have_pcr4) {
		const uint8_t *v = pcr_value(res, 4);
		if (!v)
			return fail(err, errn, -LLMK_EAUTH, "PCR4: not in the quote, so the image is not "
				    "attested");
		verify_hex(v, 32, a);
		if (memcmp(v, x->pcr4, 32) != 0) {
			verify_hex(x->pcr4, 32, b);
			return fail(err, errn, -LLMK_EAUTH, "PCR4: %s, expected %s (another boot image)",
				    a, b);
		}
		ok(res, "PCR4: %s, the expected image", a);
	}
	static struct vfy_log log;
	vfy_log_init(&log);
	int r = bundle_check_model(&res->b, &x->b, &log);
	for (int i = 0; i < log.n; i++)
		ok(res, "%s", log.line[i]);
	if (r < 0)
		return fail(err, errn, r, "%s", log.err);
	return check_config_event(res, err, errn);
}

/* TCG EK Credential Profile 2.0 §B.3.3 templates L-1 (RSA 2048) and L-2
 * (ECC P-256), the ones the guest creates: credential activation encrypts
 * to this key with its nameAlg and symmetric algorithm, so each field is
 * what the profile says, and the policy is A, PolicySecret(TPM_RH_ENDORSEMENT). */
static int check_ek_template(const struct tpm2_public *ek, char *err, size_t errn)
{
	static const uint8_t policy_a[32] = {
		0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc,
		0x8d, 0x46, 0xa5, 0xd7, 0x24, 0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52,
		0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa,
	};
	const uint32_t want = TPMA_FIXED_TPM | TPMA_FIXED_PARENT | TPMA_SENSITIVE_DATA_ORIGIN |
			      TPMA_ADMIN_WITH_POLICY | TPMA_RESTRICTED | TPMA_DECRYPT;
	if (ek->attrs != want)
		return fail(err, errn, -LLMK_EAUTH, "EK: objectAttributes 0x%08x, expected 0x%08x "
			    "(the EK Credential Profile's template: restricted, decrypt, fixedTPM, "
			    "fixedParent, sensitiveDataOrigin, adminWithPolicy)", ek->attrs, want);
	if (ek->name_alg != TPM_ALG_SHA256 || ek->policy_len != 32 ||
	    memcmp(ek->policy, policy_a, 32) != 0)
		return fail(err, errn, -LLMK_EAUTH, "EK: nameAlg %s, authPolicy of %u bytes; expected "
			    "sha256 and policy A (PolicySecret(TPM_RH_ENDORSEMENT))",
			    tpm2_alg_name(ek->name_alg), ek->policy_len);
	if (ek->sym != TPM_ALG_AES || ek->sym_bits != 128 || ek->sym_mode != TPM_ALG_CFB ||
	    ek->scheme != TPM_ALG_NULL)
		return fail(err, errn, -LLMK_EAUTH, "EK: symmetric %s-%u mode %s, scheme %s; expected "
			    "AES-128 CFB and no scheme", tpm2_alg_name(ek->sym), ek->sym_bits,
			    tpm2_alg_name(ek->sym_mode), tpm2_alg_name(ek->scheme));
	if (ek->type == TPM_ALG_RSA ? ek->rsa_bits != 2048 || ek->rsa_exp != 65537 || ek->n_len != 256
				    : ek->curve != TPM_ECC_NIST_P256 || ek->kdf != TPM_ALG_NULL)
		return fail(err, errn, -LLMK_EAUTH, "EK: neither RSA 2048 (exponent 65537) nor ECC "
			    "NIST P-256 without a KDF");
	return 0;
}

static int check_ek(struct vtpm_result *res, const struct vtpm_expect *x, char *err, size_t errn)
{
	const struct evidence_rec *cert, *ekpub;
	struct tpm2_public ek;
	char why[200];
	int r;
	if (!x->ek_ca_pem)
		return 0;
	if ((r = need_rec(res, ATTEST_REC_TPM_EK_CERT, 1, 8192, &cert, err, errn)) < 0 ||
	    (r = need_rec(res, ATTEST_REC_TPM_EK_PUB, 1, 4096, &ekpub, err, errn)) < 0)
		return r;
	if ((r = tpm2_parse_public(ekpub->val, ekpub->len, &ek, why, sizeof why)) < 0)
		return fail(err, errn, r, "EK: %s", why);
	if ((r = check_ek_template(&ek, err, errn)) < 0)
		return r;
	if ((r = ekcert_verify(cert->val, cert->len, x->ek_ca_pem, x->ek_ca_len, &ek, err, errn)) < 0)
		return r;
	ok(res, "EK certificate: chains to --ek-ca, and its key is the EK_PUB record's (template %s)",
	   ek.type == TPM_ALG_RSA ? "L-1, RSA 2048" : "L-2, ECC P-256");
	if (ekpub->len > sizeof res->b.tpm_ek_pub)
		return fail(err, errn, -LLMK_EFORMAT, "EK: TPMT_PUBLIC of %u bytes", ekpub->len);
	memcpy(res->b.tpm_ek_pub, ekpub->val, ekpub->len);
	res->b.tpm_ek_pub_len = ekpub->len;
	memcpy(res->b.tpm_ak_name, res->ak_name, sizeof res->ak_name);
	return 0;
}

int vtpm_verify(const uint8_t *bundle, size_t n, const struct vtpm_expect *x,
		struct vtpm_result *res, char *err, size_t errn)
{
	struct tpm2_quote q;
	int r;
	memset(res, 0, sizeof *res);
	if ((r = check_bundle(bundle, n, x, res, err, errn)) < 0 || (r = check_ak(res, err, errn)) < 0 ||
	    (r = check_signature(res, err, errn)) < 0 || (r = check_quote(res, &q, err, errn)) < 0 ||
	    (r = check_pcrs(res, &q, err, errn)) < 0 || (r = check_logs(res, err, errn)) < 0 ||
	    (r = check_expect(res, x, err, errn)) < 0 || (r = check_ek(res, x, err, errn)) < 0)
		return r;
	char list[80], m[65], k[65];
	pcr_list(res->pcr_mask, list, sizeof list);
	verify_hex(res->b.model, 32, m);
	verify_hex(res->b.pubkey, 32, k);
	snprintf(res->summary, sizeof res->summary,
		 "verified: %svtpm quote over sha256 PCRs %s%s%s; model %s; guest key %s%s",
		 res->b.simulated ? "SIMULATED " : "", list,
		 x->have_pcr4 ? ", PCR4 the expected image" : ", PCR4 not checked (no --expect-pcr4)",
		 x->b.have_model ? "" : " (model not checked: no --expect-model)", m, k,
		 x->ek_ca_pem ? "; EK certificate chains to --ek-ca (a key released to this "
				"evidence opens only in that TPM, by credential activation)"
			      : "; EK certificate not checked (no --ek-ca: nothing can be released)");
	return 0;
}

/* ---- --export DIR: the files Debian's tpm2_checkquote reads ---- */
int vtpm_export(const struct vtpm_result *res, const char *dir, char *err, size_t errn)
{
	char pem[512], list[96];
	uint8_t qual[32];
	struct tpm2_quote q;
	char why[200];
	if (tpm2_parse_quote(res->quote->val, res->quote->len, &q, why, sizeof why) < 0 ||
	    q.extra_len != 32 || tpm2_ecc_pem(&res->ak_pub, pem, sizeof pem) < 0)
		return fail(err, errn, -LLMK_EINVAL, "export: the evidence was not verified");
	memcpy(qual, q.extra, 32);
	int k = snprintf(list, sizeof list, "sha256:");
	pcr_list(res->pcr_mask, list + k, sizeof list - (size_t)k);
	strcat(list, "\n");
	/* the firmware log as handed over, then the kernel's records: every
	 * quoted PCR replays from one file (zero padding dropped) */
	size_t ln = res->fw_used + res->kernel_used;
	uint8_t *log = malloc(ln ? ln : 1);
	if (!log)
		return -LLMK_ENOMEM;
	memcpy(log, res->log_fw->val, res->fw_used);
	if (res->kernel_used)
		memcpy(log + res->fw_used, res->log_kernel->val, res->kernel_used);
	int r = 0;
	const char *failed = NULL;
	if (verify_write_file(dir, "quote.msg", res->quote->val, res->quote->len) < 0)
		failed = "quote.msg";
	else if (verify_write_file(dir, "quote.sig", res->sig->val, res->sig->len) < 0)
		failed = "quote.sig";
	else if (verify_write_file(dir, "ak.pem", pem, strlen(pem)) < 0)
		failed = "ak.pem";
	else if (verify_write_file(dir, "pcrs.bin", res->pcrs->val, res->pcrs->len) < 0)
		failed = "pcrs.bin";
	else if (verify_write_file(dir, "pcrs.list", list, strlen(list)) < 0)
		failed = "pcrs.list";
	else if (verify_write_file(dir, "qualification.bin", qual, sizeof qual) < 0)
		failed = "qualification.bin";
	else if (verify_write_file(dir, "eventlog.bin", log, ln) < 0)
		failed = "eventlog.bin";
	free(log);
	if (failed)
		r = fail(err, errn, -LLMK_EIO, "export: cannot write %s/%s", dir, failed);
	return r;
}
