/*
 * tools/verify/tdx_evidence.c — an llmk evidence bundle from provider tdx
 * (bundle.h): the common checks (bundle.c), then the TDX_QUOTE record
 * verified exactly as `verifier tdx --quote` verifies a quote
 * (tdx_quote.c), its root from the user's --chain; then the quote's
 * REPORTDATA must be the bundle's report data. A TDX_REPORT record (the
 * guest's TDREPORT) is not checked: its MAC is keyed inside the CPU, and
 * the quote signs the same body.
 */
#include "bundle.h"

#include <string.h>

/* A quote v4 with its PCK chain is a few KiB; buffers are often padded. */
#define TDX_QUOTE_MAX (64u << 10)

int tdx_evidence_verify(const uint8_t *bytes, size_t n, const struct tdx_evidence_expect *x,
			struct tdx_evidence *ev, struct vfy_log *log)
{
	const struct evidence_rec *quote;
	struct tdx_expect qx = x->quote;
	char h1[129], h2[129];
	int e;

	memset(ev, 0, sizeof *ev);
	if ((e = bundle_verify(bytes, n, PLAT_ATTEST_TDX, &x->b, &ev->b, log)))
		return e;
	if (!(quote = bundle_need(&ev->b, ATTEST_REC_TDX_QUOTE, TDX_HEADER_SIZE + TDX_BODY_SIZE,
				  TDX_QUOTE_MAX, log)))
		return -LLMK_EFORMAT;
	/* only evidence that names itself simulated, and that the user allowed,
	 * may end at a root that is not Intel's */
	qx.allow_test_root = ev->b.simulated;
	qx.report_data = NULL; /* the bundle's, below, with its own reason */
	if ((e = tdx_quote_verify(quote->val, quote->len, x->chain, x->n_chain,
				  x->chain_what ? x->chain_what : "--chain", &qx, &ev->q, log)))
		return e;
	if (memcmp(quote->val + TDX_REPORT_DATA, ev->b.report_data, 64))
		return vfy_fail(log, LLMK_EAUTH, "report data: the quote's REPORTDATA is not the "
				"bundle's report data: the quote was made for other evidence (quote "
				"%.32s..., bundle %.32s...)", vfy_hex(quote->val + TDX_REPORT_DATA, 64, h1),
				vfy_hex(ev->b.report_data, 64, h2));
	vfy_ok(log, "report data: the quote's REPORTDATA is the bundle's (nonce, model, guest key, "
	       "build id)");
	return bundle_check_model(&ev->b, &x->b, log);
}
