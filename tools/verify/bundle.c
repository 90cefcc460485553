/*
 * tools/verify/bundle.c — the checks every evidence bundle gets (bundle.h):
 * its form, its provider, whether it is simulated, the report data against
 * its inputs, the nonce, and (last, by the caller) the expected model.
 */
#include "bundle.h"

#include <stdio.h>
#include <string.h>

const char *bundle_rec_name(uint16_t t)
{
	switch (t) {
	case ATTEST_REC_PROVIDER: return "PROVIDER";
	case ATTEST_REC_REPORT_DATA: return "REPORT_DATA";
	case ATTEST_REC_NONCE: return "NONCE";
	case ATTEST_REC_MODEL_DIGEST: return "MODEL_DIGEST";
	case ATTEST_REC_PUBKEY: return "PUBKEY";
	case ATTEST_REC_BUILD_ID: return "BUILD_ID";
	case ATTEST_REC_SIMULATED: return "SIMULATED";
	case ATTEST_REC_MACHINE: return "MACHINE";
	case ATTEST_REC_CONFIG_DIGEST: return "CONFIG_DIGEST";
	case ATTEST_REC_TPM_QUOTE: return "TPM_QUOTE";
	case ATTEST_REC_TPM_SIG: return "TPM_SIG";
	case ATTEST_REC_TPM_AK_PUB: return "TPM_AK_PUB";
	case ATTEST_REC_TPM_PCR_SEL: return "TPM_PCR_SEL";
	case ATTEST_REC_TPM_PCRS: return "TPM_PCRS";
	case ATTEST_REC_TPM_EK_CERT: return "TPM_EK_CERT";
	case ATTEST_REC_TPM_EK_PUB: return "TPM_EK_PUB";
	case ATTEST_REC_TPM_LOG_FW: return "TPM_LOG_FW";
	case ATTEST_REC_TPM_LOG_KERNEL: return "TPM_LOG_KERNEL";
	case ATTEST_REC_SNP_REPORT: return "SNP_REPORT";
	case ATTEST_REC_SNP_CERTS: return "SNP_CERTS";
	case ATTEST_REC_TDX_QUOTE: return "TDX_QUOTE";
	case ATTEST_REC_TDX_REPORT: return "TDX_REPORT";
	default: return "unknown";
	}
}

/* The providers, indexed by PLAT_ATTEST_*; `none` is named so it can be refused. */
static const char *const providers[PLAT_ATTEST_KINDS] = {
	[PLAT_ATTEST_NONE] = "none",
	[PLAT_ATTEST_VTPM] = "vtpm",
	[PLAT_ATTEST_SNP] = "snp",
	[PLAT_ATTEST_TDX] = "tdx",
};

static int provider_of(const struct evidence_rec *r)
{
	if (!r)
		return -1;
	for (int k = 0; k < PLAT_ATTEST_KINDS; k++)
		if (r->len == strlen(providers[k]) && !memcmp(r->val, providers[k], r->len))
			return k;
	return -1;
}

const char *bundle_provider_name(int kind)
{
	return kind >= 0 && kind < PLAT_ATTEST_KINDS ? providers[kind] : "?";
}

int bundle_provider_kind(const uint8_t *bytes, size_t n)
{
	static struct evidence_rec rec[BUNDLE_MAX_RECS];
	char why[200];
	int nrec = evidence_parse(bytes, n, rec, BUNDLE_MAX_RECS, why, sizeof why);
	if (nrec < 0)
		return -1;
	return provider_of(evidence_find(rec, nrec, ATTEST_REC_PROVIDER, NULL));
}

int bundle_says_simulated(const uint8_t *bytes, size_t n)
{
	static struct evidence_rec rec[BUNDLE_MAX_RECS];
	char why[200];
	int nrec = evidence_parse(bytes, n, rec, BUNDLE_MAX_RECS, why, sizeof why);
	for (int i = 0; i < nrec; i++)
		if (rec[i].type == ATTEST_REC_SIMULATED)
			return 1;
	return 0;
}

const struct evidence_rec *bundle_need(const struct bundle *b, uint16_t t, uint32_t min,
				       uint32_t max, struct vfy_log *log)
{
	const struct evidence_rec *r = evidence_find(b->rec, b->nrec, t, NULL);
	if (!r) {
		vfy_fail(log, LLMK_EFORMAT, "bundle: no %s record (type 0x%04x)", bundle_rec_name(t), t);
		return NULL;
	}
	if (r->len < min || r->len > max) {
		vfy_fail(log, LLMK_EFORMAT, "bundle: %s record is %u bytes, expected %u..%u",
			 bundle_rec_name(t), r->len, min, max);
		return NULL;
	}
	return r;
}

/* Text from the bundle, for a terminal: printable ASCII, the rest '?'. */
static void printable(const uint8_t *p, size_t n, char *out, size_t cap)
{
	size_t k = n < cap - 1 ? n : cap - 1;
	for (size_t i = 0; i < k; i++)
		out[i] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	out[k] = 0;
}

/* The form, each record type at most once, the provider, SIMULATED. */
static int check_form(const uint8_t *bytes, size_t n, int kind, const struct bundle_expect *x,
		      struct bundle *b, struct vfy_log *log)
{
	char why[200];
	b->nrec = evidence_parse(bytes, n, b->rec, BUNDLE_MAX_RECS, why, sizeof why);
	if (b->nrec < 0)
		return vfy_fail(log, -b->nrec, "bundle: %s", why);
	for (int i = 0; i < b->nrec; i++)
		for (int j = i + 1; j < b->nrec; j++)
			if (b->rec[i].type == b->rec[j].type)
				return vfy_fail(log, LLMK_EFORMAT,
						"bundle: record %s (type 0x%04x) appears more than once",
						bundle_rec_name(b->rec[i].type), b->rec[i].type);
	const struct evidence_rec *prov = evidence_find(b->rec, b->nrec, ATTEST_REC_PROVIDER, NULL);
	const struct evidence_rec *sim = evidence_find(b->rec, b->nrec, ATTEST_REC_SIMULATED, NULL);
	/* Every record is one some check covers: the report data's inputs, the
	 * provider's evidence, the SIMULATED label. Anything else (a MACHINE
	 * text, an unknown type) is bytes the host could change at will and a
	 * reader could take for checked: refused. */
	for (int i = 0; i < b->nrec; i++) {
		uint16_t t = b->rec[i].type;
		if ((t >= ATTEST_REC_PROVIDER && t <= ATTEST_REC_BUILD_ID) ||
		    t == ATTEST_REC_SIMULATED || t == ATTEST_REC_CONFIG_DIGEST ||
		    (t >= ATTEST_REC_TPM_QUOTE && t <= ATTEST_REC_TPM_LOG_KERNEL) ||
		    t == ATTEST_REC_SNP_REPORT || t == ATTEST_REC_SNP_CERTS ||
		    t == ATTEST_REC_TDX_QUOTE || t == ATTEST_REC_TDX_REPORT)
			continue;
		return vfy_fail(log, LLMK_EFORMAT, "bundle: record %s (type 0x%04x) is covered by no "
				"signature and no report data; refused", bundle_rec_name(t), t);
	}
	if (!prov || prov->len == 0 || prov->len > 16)
		return vfy_fail(log, LLMK_EFORMAT, "bundle: no PROVIDER record");
	int p = provider_of(prov);
	if (p < 0) {
		printable(prov->val, prov->len, why, sizeof why);
		return vfy_fail(log, LLMK_ENOTSUP, "provider '%s': not one this verifier knows (vtpm, "
				"snp, tdx)", why);
	}
	if (p == PLAT_ATTEST_NONE)
		return vfy_fail(log, LLMK_EAUTH, "provider none: the guest had no attestation device, "
				"so this evidence proves nothing; refused");
	if (kind != BUNDLE_ANY_PROVIDER && p != kind)
		return vfy_fail(log, LLMK_EINVAL, "provider '%s': this verifier checks %s evidence "
				"(`verifier %s` checks this bundle)", providers[p],
				bundle_provider_name(kind), providers[p]);
	b->kind = p;
	b->provider = providers[p];
	if (sim) {
		printable(sim->val, sim->len, b->simulated_by, sizeof b->simulated_by);
		if (!x->allow_simulated)
			return vfy_fail(log, LLMK_EAUTH, "simulated evidence (%s): not hardware; refused "
					"(--allow-simulated accepts it, for tests and demos)",
					b->simulated_by);
		b->simulated = true;
	}
	vfy_ok(log, "bundle: %d records, provider %s, each record once", b->nrec, b->provider);
	if (b->simulated)
		vfy_ok(log, "bundle: SIMULATED evidence (%s), accepted by --allow-simulated: it proves "
		       "nothing about hardware", b->simulated_by);
	return 0;
}

/* REPORT_DATA = SHA-512 of its inputs (shell/evidence.h); the nonce is ours. */
static int check_report_data(const struct bundle_expect *x, struct bundle *b, struct vfy_log *log)
{
	const struct evidence_rec *rd, *nonce, *model, *pub, *bid, *cfg;
	if (!(rd = bundle_need(b, ATTEST_REC_REPORT_DATA, 64, 64, log)) ||
	    !(nonce = bundle_need(b, ATTEST_REC_NONCE, 1, EVIDENCE_NONCE_MAX, log)) ||
	    !(model = bundle_need(b, ATTEST_REC_MODEL_DIGEST, 32, 32, log)) ||
	    !(pub = bundle_need(b, ATTEST_REC_PUBKEY, 32, 32, log)) ||
	    !(bid = bundle_need(b, ATTEST_REC_BUILD_ID, 1, 16, log)) ||
	    !(cfg = bundle_need(b, ATTEST_REC_CONFIG_DIGEST, 32, 32, log)))
		return -LLMK_EFORMAT;
	/* The layout takes the build id up to its first NUL: one with a NUL or
	 * a control byte would be a second spelling of the same report data. */
	for (uint32_t i = 0; i < bid->len; i++)
		if (bid->val[i] < 0x21 || bid->val[i] > 0x7e)
			return vfy_fail(log, LLMK_EFORMAT, "bundle: BUILD_ID byte %u is 0x%02x, not "
					"printable ASCII", i, bid->val[i]);
	struct evidence_inputs in;
	uint8_t want[64];
	memset(&in, 0, sizeof in);
	memcpy(in.nonce, nonce->val, nonce->len);
	in.nonce_len = nonce->len;
	memcpy(in.model_digest, model->val, 32);
	memcpy(in.pubkey, pub->val, 32);
	memcpy(in.build_id, bid->val, bid->len);
	memcpy(in.config_digest, cfg->val, 32);
	evidence_report_data(&in, want);
	if (memcmp(want, rd->val, 64) != 0)
		return vfy_fail(log, LLMK_EAUTH, "report data: the REPORT_DATA record is not SHA-512 of "
				"the bundle's nonce, model digest, public key, build id and config "
				"digest (layout LLMK-REPORT-V2)");
	vfy_ok(log, "report data: SHA-512 of nonce, model digest, public key, build id '%s', "
	       "config digest", in.build_id);
	char h[2 * EVIDENCE_NONCE_MAX + 1], hx[2 * EVIDENCE_NONCE_MAX + 1];
	vfy_hex(nonce->val, nonce->len, h);
	if (nonce->len != x->nonce_len || memcmp(nonce->val, x->nonce, x->nonce_len) != 0)
		return vfy_fail(log, LLMK_EAUTH, "nonce: the evidence was made for nonce %s, not "
				"--nonce %s (stale or replayed evidence)", h,
				vfy_hex(x->nonce, x->nonce_len, hx));
	vfy_ok(log, "nonce: %s, as given", h);
	memcpy(b->report_data, rd->val, 64);
	memcpy(b->pubkey, pub->val, 32);
	memcpy(b->model, model->val, 32);
	memcpy(b->config, cfg->val, 32);
	memcpy(b->build_id, in.build_id, sizeof b->build_id);
	return 0;
}

int bundle_verify(const uint8_t *bytes, size_t n, int kind, const struct bundle_expect *x,
		  struct bundle *b, struct vfy_log *log)
{
	int e;
	memset(b, 0, sizeof *b);
	if ((e = check_form(bytes, n, kind, x, b, log)) || (e = check_report_data(x, b, log)))
		return e;
	return 0;
}

/* What the guest obeys from outside its image is bound in the report data:
 * it must be what the verifier's user says it was told (by default nothing). */
static int check_config(struct bundle *b, const struct bundle_expect *x, struct vfy_log *log)
{
	uint8_t want[32];
	char a[65], w[65];
	if (x->have_config)
		memcpy(want, x->config, 32);
	else
		evidence_config_digest("", 0, want);
	vfy_hex(b->config, 32, a);
	if (memcmp(b->config, want, 32) != 0)
		return vfy_fail(log, LLMK_EAUTH, "config: the guest was told configuration %s, expected "
				"%s (%s): the host gave it another llmk.cfg", a, vfy_hex(want, 32, w),
				x->have_config ? (x->told[0] ? x->told : "--expect-config")
					       : "the empty configuration; --expect-config FILE|SHA256 "
						 "names another");
	snprintf(b->config_line, sizeof b->config_line, "config: sha256 %s (%s)", a,
		 x->have_config ? (x->told[0] ? x->told : "as --expect-config")
				: "the empty configuration: the guest was told nothing");
	vfy_ok(log, "%s", b->config_line);
	return 0;
}

int bundle_check_model(struct bundle *b, const struct bundle_expect *x, struct vfy_log *log)
{
	char a[65], w[65];
	int e = check_config(b, x, log);
	if (e)
		return e;
	if (!x->have_model)
		return 0;
	vfy_hex(b->model, 32, a);
	if (memcmp(b->model, x->model, 32) != 0)
		return vfy_fail(log, LLMK_EAUTH, "model: the guest has model %s, expected %s", a,
				vfy_hex(x->model, 32, w));
	vfy_ok(log, "model: %s, as expected", a);
	return 0;
}
