/*
 * drivers/tpm2_attest.c — the vtpm provider's portable half: the TPM's
 * identity, the AK's quote as evidence records, credential activation.
 * See tpm2_attest.h.
 */
#include "tpm2_attest.h"
#include "tpm2_marshal.h"

#include <bearssl.h>

#define QUOTE_MAX 1024 /* TPMS_ATTEST of a quote: ~150 bytes + the signer's name */
#define SIG_MAX 600    /* TPMT_SIGNATURE: ECDSA P-256 ~72 bytes, RSA 2048 ~262 */

/* Flush without letting it overwrite the error being reported. */
static void flush_quiet(struct tpm2 *t, uint32_t h)
{
	char keep[sizeof t->err];
	uint32_t rc = t->rc;

	memcpy(keep, t->err, sizeof keep);
	tpm2_flush(t, h);
	memcpy(t->err, keep, sizeof keep);
	t->rc = rc;
}

/* Four ASCII characters of a TPM_PT vendor property (big-endian). */
static void prop_chars(uint32_t v, char *out)
{
	for (int i = 0; i < 4; i++) {
		char c = (char)(v >> (24 - 8 * i));
		out[i] = c >= 0x20 && c < 0x7f ? c : ' ';
	}
}

int tpm2_attest_probe(struct tpm2_attest *a)
{
	uint32_t man, fw1 = 0, fw2 = 0, v;
	char vs[17] = "", m[5] = "";
	int e;

	/* Part 2 §6.13: TPM_PT_MANUFACTURER, TPM_PT_VENDOR_STRING_1..4,
	 * TPM_PT_FIRMWARE_VERSION_1..2 */
	if ((e = tpm2_get_property(&a->tpm, TPM2_PT_MANUFACTURER, &man)))
		return e;
	prop_chars(man, m);
	for (int i = 0; i < 4; i++)
		if (!tpm2_get_property(&a->tpm, TPM2_PT_VENDOR_STRING_1 + (uint32_t)i, &v))
			prop_chars(v, vs + 4 * i);
	tpm2_get_property(&a->tpm, TPM2_PT_FIRMWARE_VERSION_1, &fw1);
	tpm2_get_property(&a->tpm, TPM2_PT_FIRMWARE_VERSION_2, &fw2);
	for (int i = 15; i >= 0 && (vs[i] == ' ' || vs[i] == 0); i--)
		vs[i] = 0;
	for (int i = 3; i >= 0 && (m[i] == ' ' || m[i] == 0); i--)
		m[i] = 0;
	plat_snprintf(a->vendor, sizeof a->vendor, "%s %s, firmware %08x.%08x", m, vs, fw1, fw2);
	a->tpm.err[0] = 0;
	return 0;
}

/* The EK whose certificate NV holds: its kind, public area and certificate. */
static int find_ek(struct tpm2_attest *a)
{
	struct tpm2 *t = &a->tpm;
	struct tpm2_nv_public nv;
	struct tpm2_object ek;
	uint8_t tmpl[TPM2_PUB_MAX];
	int e;

	if (a->have_ek)
		return 0;
	a->ek_kind = TPM2_KEY_EK_RSA;
	a->ek_cert_index = 0;
	a->ek_cert_len = 0;
	if ((e = tpm2_nv_read_public(t, TPM2_NV_EK_CERT_ECC, &nv)) == 0) {
		a->ek_kind = TPM2_KEY_EK_ECC;
		a->ek_cert_index = TPM2_NV_EK_CERT_ECC;
	} else if (e == -LLMK_ENOENT) {
		if ((e = tpm2_nv_read_public(t, TPM2_NV_EK_CERT_RSA, &nv)) == 0)
			a->ek_cert_index = TPM2_NV_EK_CERT_RSA;
		else if (e != -LLMK_ENOENT)
			return e;
	} else {
		return e;
	}
	if (a->ek_cert_index &&
	    (e = tpm2_nv_read(t, a->ek_cert_index, a->ek_cert, sizeof a->ek_cert, &a->ek_cert_len)))
		return e;
	int n = tpm2_template(a->ek_kind, tmpl, sizeof tmpl);
	if (n < 0)
		return n;
	if ((e = tpm2_create_primary(t, TPM2_RH_ENDORSEMENT, tmpl, (size_t)n, &ek)))
		return e;
	flush_quiet(t, ek.handle);
	memcpy(a->ek_pub, ek.pub, ek.pub_len);
	a->ek_pub_len = ek.pub_len;
	a->have_ek = true;
	return 0;
}

static int create_key(struct tpm2 *t, enum tpm2_key k, struct tpm2_object *o)
{
	uint8_t tmpl[TPM2_PUB_MAX];
	int n = tpm2_template(k, tmpl, sizeof tmpl);
	if (n < 0)
		return n;
	return tpm2_create_primary(t, TPM2_RH_ENDORSEMENT, tmpl, (size_t)n, o);
}

int tpm2_attest_evidence(struct tpm2_attest *a, const uint8_t report_data[64],
			 const uint8_t *fw_log, size_t fw_log_len, const uint8_t *kernel_log,
			 size_t kernel_log_len, uint8_t *buf, size_t cap, size_t *len)
{
	struct tpm2 *t = &a->tpm;
	static struct tpm2_object ak; /* ~600 bytes; one quote at a time */
	uint8_t qdata[32], quote[QUOTE_MAX], sig[SIG_MAX], sel[10];
	uint8_t pcrs[TPM2_PCRS][32], vals[TPM2_PCRS * 32];
	size_t qlen = 0, slen = 0, nvals = 0, at = *len;
	int e;

	/* docs/attestation.md: qualifying data = SHA-256(report data) */
	br_sha256_context h;
	br_sha256_init(&h);
	br_sha256_update(&h, report_data, 64);
	br_sha256_out(&h, qdata);

	if ((e = find_ek(a)) || (e = create_key(t, TPM2_KEY_AK_ECC, &ak)))
		return e;
	e = tpm2_pcr_read(t, TPM2_ATTEST_PCRS, pcrs);
	if (!e)
		e = tpm2_quote(t, ak.handle, qdata, sizeof qdata, TPM2_ATTEST_PCRS, quote, sizeof quote,
			       &qlen, sig, sizeof sig, &slen);
	flush_quiet(t, ak.handle);
	if (e)
		return e;

	struct wr w = {sel, 0, sizeof sel, false};
	w_pcr_sel(&w, TPM2_ATTEST_PCRS);
	for (int i = 0; i < TPM2_PCRS; i++)
		if (TPM2_ATTEST_PCRS & (1u << i)) {
			memcpy(vals + nvals, pcrs[i], 32);
			nvals += 32;
		}
	if ((e = attest_rec_put(buf, cap, &at, ATTEST_REC_TPM_AK_PUB, ak.pub, ak.pub_len)) ||
	    (e = attest_rec_put(buf, cap, &at, ATTEST_REC_TPM_PCR_SEL, sel, w.n)) ||
	    (e = attest_rec_put(buf, cap, &at, ATTEST_REC_TPM_PCRS, vals, nvals)) ||
	    (e = attest_rec_put(buf, cap, &at, ATTEST_REC_TPM_QUOTE, quote, qlen)) ||
	    (e = attest_rec_put(buf, cap, &at, ATTEST_REC_TPM_SIG, sig, slen)) ||
	    (e = attest_rec_put(buf, cap, &at, ATTEST_REC_TPM_EK_PUB, a->ek_pub, a->ek_pub_len)) ||
	    (a->ek_cert_len &&
	     (e = attest_rec_put(buf, cap, &at, ATTEST_REC_TPM_EK_CERT, a->ek_cert, a->ek_cert_len))) ||
	    (fw_log_len &&
	     (e = attest_rec_put(buf, cap, &at, ATTEST_REC_TPM_LOG_FW, fw_log, fw_log_len))) ||
	    (e = attest_rec_put(buf, cap, &at, ATTEST_REC_TPM_LOG_KERNEL, kernel_log, kernel_log_len))) {
		plat_snprintf(t->err, sizeof t->err, "evidence does not fit its %zu-byte buffer", cap);
		return e;
	}
	*len = at;
	return 0;
}

/* tpm2-tools' credential file (lib/files.c): magic, version, then the two
 * TPM2B structures TPM2_MakeCredential returns, big-endian. */
static int parse_cred(struct tpm2 *t, const uint8_t *p, size_t n, const uint8_t **blob,
		      uint16_t *blen, const uint8_t **sec, uint16_t *slen)
{
	struct rd r = {p, n, 0, "magic", NULL};
	uint32_t magic = r_u32(&r);
	r.field = "version";
	uint32_t ver = r_u32(&r);
	if (!r.failed && (magic != TPM2_CRED_MAGIC || ver != TPM2_CRED_VERSION)) {
		plat_snprintf(t->err, sizeof t->err, "credential: magic %#x version %u, expected %#x "
			      "version %u (tpm2_makecredential's format)", magic, ver,
			      TPM2_CRED_MAGIC, TPM2_CRED_VERSION);
		return -LLMK_EFORMAT;
	}
	r.field = "credentialBlob";
	*blob = r_2b(&r, blen);
	r.field = "secret";
	*sec = r_2b(&r, slen);
	if (r.failed) {
		plat_snprintf(t->err, sizeof t->err, "credential of %zu bytes ends inside %s", n,
			      r.failed);
		return -LLMK_EFORMAT;
	}
	if (r.off != n) {
		plat_snprintf(t->err, sizeof t->err, "credential: %zu bytes after the secret",
			      n - r.off);
		return -LLMK_EFORMAT;
	}
	return 0;
}

int tpm2_attest_activate(struct tpm2_attest *a, const uint8_t *cred, size_t n, uint8_t *out,
			 size_t cap, size_t *olen)
{
	struct tpm2 *t = &a->tpm;
	static struct tpm2_object ak, ek;
	const uint8_t *blob, *sec;
	uint16_t blen, slen;
	uint32_t session = 0;
	int e;

	if ((e = parse_cred(t, cred, n, &blob, &blen, &sec, &slen)))
		return e;
	if ((e = find_ek(a)) || (e = create_key(t, TPM2_KEY_AK_ECC, &ak)))
		return e;
	if ((e = create_key(t, a->ek_kind, &ek))) {
		flush_quiet(t, ak.handle);
		return e;
	}
	/* TCG EK Credential Profile §B.6: the EK's policy A is
	 * PolicySecret(TPM_RH_ENDORSEMENT) */
	e = tpm2_start_policy_session(t, &session);
	if (!e)
		e = tpm2_policy_secret(t, TPM2_RH_ENDORSEMENT, session);
	if (!e)
		e = tpm2_activate_credential(t, ak.handle, ek.handle, session, blob, blen, sec, slen,
					     out, cap, olen);
	/* a successful activation ended the session (continueSession clear) */
	if (e && session)
		flush_quiet(t, session);
	flush_quiet(t, ak.handle);
	flush_quiet(t, ek.handle);
	return e;
}
