/*
 * tools/verify/snp_evidence.c — an llmk evidence bundle from provider snp
 * (bundle.h): the common checks (bundle.c), then the SNP_REPORT record
 * verified exactly as `verifier snp --report` verifies a report
 * (snp_chain.c, snp_report.c), with the VCEK and ASK from the bundle's
 * SNP_CERTS table unless the user gives them, and the ARK always from the
 * user; then the report's REPORT_DATA must be the bundle's report data,
 * which binds the nonce, the model and the guest's key to the chip.
 */
#include "bundle.h"

#include <string.h>

/* The GUIDs of bundle.h, as bytes in RFC 4122 order. */
static const uint8_t guid_vcek[16] = {0x63, 0xda, 0x75, 0x8d, 0xe6, 0x64, 0x45, 0x64,
				      0xad, 0xc5, 0xf4, 0xb9, 0x3b, 0xe8, 0xac, 0xcd};
static const uint8_t guid_ask[16] = {0x4a, 0xb7, 0xb3, 0x79, 0xbb, 0xac, 0x4f, 0xe4,
				     0xa0, 0x2f, 0x05, 0xae, 0xf3, 0x27, 0xc7, 0x82};
static const uint8_t guid_ark[16] = {0xc0, 0xb4, 0x06, 0xa4, 0xa8, 0x03, 0x49, 0x52,
				     0x97, 0x43, 0x3f, 0xb6, 0x01, 0x4c, 0xd0, 0xae};

#define ENTRY 24u
#define MAX_ENTRIES 64u

int snp_cert_table_parse(const uint8_t *t, size_t n, struct snp_cert_table *out,
			 struct vfy_log *log)
{
	static const uint8_t zero[ENTRY];
	size_t list_end = 0;

	memset(out, 0, sizeof *out);
	/* the entry list, up to and including its zero entry */
	for (size_t o = 0;; o += ENTRY) {
		if (o / ENTRY == MAX_ENTRIES)
			return vfy_fail(log, LLMK_EFORMAT, "SNP_CERTS: more than %u entries",
					MAX_ENTRIES - 1);
		if (o > n || n - o < ENTRY)
			return vfy_fail(log, LLMK_EFORMAT, "SNP_CERTS: the entry list has no zero entry "
					"within its %zu bytes", n);
		if (!memcmp(t + o, zero, ENTRY)) {
			list_end = o + ENTRY;
			break;
		}
	}
	out->entries = (int)(list_end / ENTRY) - 1;
	for (int i = 0; i < out->entries; i++) {
		const uint8_t *e = t + (size_t)i * ENTRY;
		uint32_t off = vfy_le32(e + 16), len = vfy_le32(e + 20);
		struct pem_cert *slot = NULL;
		const char *name = "an unknown";
		if (!memcmp(e, guid_vcek, 16))
			slot = &out->vcek, name = "the VCEK";
		else if (!memcmp(e, guid_ask, 16))
			slot = &out->ask, name = "the ASK";
		else if (!memcmp(e, guid_ark, 16))
			slot = &out->ark, name = "the ARK";
		if (len == 0 || off < list_end || off > n || len > n - off)
			return vfy_fail(log, LLMK_EFORMAT, "SNP_CERTS: entry %d (%s GUID) names bytes "
					"%u..+%u, outside the %zu-byte table after its %zu-byte entry "
					"list", i, name, off, len, n, list_end);
		if (!slot)
			continue; /* another certificate (a VLEK, a host's own): not ours to use */
		if (slot->der)
			return vfy_fail(log, LLMK_EFORMAT, "SNP_CERTS: %s GUID appears twice", name);
		slot->der = t + off;
		slot->len = len;
	}
	return 0;
}

/* The VCEK and the ASK + ARK for snp_chain_verify: the user's first, the
 * table's VCEK and ASK when the user gave none; the ARK only from the user. */
static int pick_certs(const struct snp_evidence_expect *x, const struct snp_cert_table *tab,
		      struct pem_cert *vcek, struct pem_cert roots[2], struct vfy_log *log)
{
	struct x509_cert c;
	int ark = -1, ask = -1;

	for (int i = 0; i < x->n_chain; i++) {
		if (x509_parse(&c, x->chain[i].der, x->chain[i].len, "--chain certificate", log))
			return -LLMK_EFORMAT;
		int *slot = x509_self_issued(&c) ? &ark : &ask;
		if (*slot >= 0)
			return vfy_fail(log, LLMK_EINVAL, "--chain: two %s certificates; want AMD's ARK "
					"and optionally its ASK", slot == &ark ? "self-issued (ARK)" :
					"non-root (ASK)");
		*slot = i;
	}
	if (ark < 0)
		return vfy_fail(log, LLMK_EINVAL, "--chain holds no ARK (self-issued) certificate: trust "
				"starts at a root the user gives, never at one the evidence carries");
	roots[0] = x->chain[ark];
	if (ask >= 0)
		roots[1] = x->chain[ask];
	else if (tab->ask.der)
		roots[1] = tab->ask;
	else
		return vfy_fail(log, LLMK_EFORMAT, "no ASK: --chain has none and the SNP_CERTS table "
				"has no ASK entry (GUID %s)", SNP_GUID_ASK);
	if (x->vcek)
		*vcek = (struct pem_cert){x->vcek, x->vcek_len};
	else if (tab->vcek.der)
		*vcek = tab->vcek;
	else
		return vfy_fail(log, LLMK_EFORMAT, "no VCEK: --vcek was not given and the SNP_CERTS "
				"table has no VCEK entry (GUID %s)", SNP_GUID_VCEK);
	vfy_ok(log, "certificates: VCEK from %s, ASK from %s, ARK from --chain",
	       x->vcek ? "--vcek" : "the SNP_CERTS table", ask >= 0 ? "--chain" : "the SNP_CERTS table");
	return 0;
}

int snp_evidence_verify(const uint8_t *bytes, size_t n, const struct snp_evidence_expect *x,
			struct snp_evidence *ev, struct vfy_log *log)
{
	struct snp_cert_table tab;
	struct pem_cert vcek = {0}, roots[2] = {{0}};
	struct snp_expect rx = x->report;
	const struct evidence_rec *rep, *certs;
	char h1[129], h2[129];
	int e;

	memset(ev, 0, sizeof *ev);
	if ((e = bundle_verify(bytes, n, PLAT_ATTEST_SNP, &x->b, &ev->b, log)))
		return e;
	if (!(rep = bundle_need(&ev->b, ATTEST_REC_SNP_REPORT, SNP_REPORT_SIZE, SNP_REPORT_SIZE, log)))
		return -LLMK_EFORMAT;
	ev->report = rep->val;
	memset(&tab, 0, sizeof tab);
	certs = evidence_find(ev->b.rec, ev->b.nrec, ATTEST_REC_SNP_CERTS, NULL);
	if (certs && (e = snp_cert_table_parse(certs->val, certs->len, &tab, log)))
		return e;
	if ((e = pick_certs(x, &tab, &vcek, roots, log)))
		return e;
	/* only evidence that names itself simulated, and that the user allowed,
	 * may end at a root that is not AMD's */
	if ((e = snp_chain_verify_opt(&ev->ch, vcek.der, vcek.len, roots, 2, ev->b.simulated, log)))
		return e;
	rx.report_data = NULL; /* the bundle's, below, with its own reason */
	if ((e = snp_report_verify(&ev->ch, rep->val, rep->len, &rx, &ev->r, log)))
		return e;
	if (memcmp(rep->val + SNP_REPORT_DATA, ev->b.report_data, 64))
		return vfy_fail(log, LLMK_EAUTH, "report data: the report's REPORT_DATA is not the "
				"bundle's report data: the report was made for other evidence (report "
				"%.32s..., bundle %.32s...)", vfy_hex(rep->val + SNP_REPORT_DATA, 64, h1),
				vfy_hex(ev->b.report_data, 64, h2));
	vfy_ok(log, "report data: the report's REPORT_DATA is the bundle's (nonce, model, guest "
	       "key, build id)");
	return bundle_check_model(&ev->b, &x->b, log);
}
