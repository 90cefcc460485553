/*
 * tools/verify/cmd_tdx.c — `verifier tdx`: check an Intel TDX quote (v4)
 * against Intel's SGX Root CA (tdx_quote.h), alone or inside an llmk
 * evidence bundle (tdx_evidence.c).
 *
 *   verifier tdx --quote quote.bin --chain pck_chain.pem
 *                [--expect-mrtd HEX] [--expect-report-data HEX] [--allow-debug]
 *   verifier tdx --evidence FILE --nonce HEX --chain FILE [--expect-mrtd HEX]
 *                [--expect-model SHA256] [--allow-simulated] [--allow-debug]
 *
 * The root comes from --chain (its one self-issued certificate, whose key
 * must be Intel's); the PCK certificate and its CA come from the quote.
 */
#include "cmd.h"

#include "tdx_quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: verifier tdx --quote FILE --chain FILE [--expect-mrtd HEX]\n"
	"                    [--expect-report-data HEX] [--allow-debug]\n"
	"       verifier tdx --evidence FILE --nonce HEX --chain FILE [--expect-mrtd HEX]\n"
	"                    [--expect-model SHA256] [--expect-config FILE|SHA256] [--allow-simulated]\n"
	"                    [--allow-debug]\n"
	"  --quote    the TDX quote, version 4 (trailing zero padding allowed)\n"
	"  --evidence an llmk evidence bundle from provider tdx (attest's 'evidence:' line,\n"
	"             base64 or binary): its quote must carry the report data of the\n"
	"             bundle's nonce (--nonce), model, guest key and build id\n"
	"  --chain    PEM holding Intel's SGX Root CA (other certificates there are ignored:\n"
	"             the PCK chain is taken from the quote)\n"
	"  --expect-* values the quote must hold (48- and 64-byte hex); unchecked when absent\n"
	"  --allow-debug  accept a TD with TD_ATTRIBUTES.DEBUG set\n"
	"  --allow-simulated  accept a bundle that says it is simulated (tests, demos) and\n"
	"             a simulator's test root in --chain; every output line says SIMULATED\n";

int tdx_cli_opt(struct tdx_cli *a, int argc, char **argv, int *i)
{
	const char *f = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	int t = bundle_cli_opt(&a->b, argc, argv, i);
	if (t)
		return t;
	if (!strcmp(f, "--allow-debug")) {
		a->x.allow_debug = 1;
		return 1;
	}
	if (strcmp(f, "--quote") && strcmp(f, "--chain") && strcmp(f, "--expect-mrtd") &&
	    strcmp(f, "--expect-report-data"))
		return 0;
	if (!v) {
		cmd_fail("%s needs a value", f);
		return -1;
	}
	++*i;
	if (!strcmp(f, "--quote"))
		a->quote = v;
	else if (!strcmp(f, "--chain")) {
		if (a->chain)
			return cmd_fail("tdx: --chain given twice (one file holds the root)"), -1;
		a->chain = v;
	} else if (!strcmp(f, "--expect-mrtd")) {
		if (cmd_hex_arg(f, v, a->mrtd, 48))
			return -1;
		a->x.mrtd = a->mrtd;
	} else {
		if (cmd_hex_arg(f, v, a->report_data, 64))
			return -1;
		a->x.report_data = a->report_data;
	}
	return 1;
}

static int opt(void *a, int argc, char **argv, int *i)
{
	return tdx_cli_opt(a, argc, argv, i);
}

static int parse_args(int argc, char **argv, struct tdx_cli *a)
{
	memset(a, 0, sizeof *a);
	if (cmd_parse_args("tdx", usage, opt, a, argc, argv) ||
	    bundle_cli_check(&a->b, "tdx", "quote", a->quote, a->x.report_data, a->chain))
		return 1;
	if (!a->b.evidence && (!a->quote || !a->chain))
		return cmd_fail("tdx: --quote and --chain are required (verifier tdx --help)");
	return 0;
}

static void print_quote(const struct tdx_quote *q)
{
	const uint8_t *b = q->raw, *qe = q->raw + q->qe_report;
	char h[160];

	cmd_printf("quote:\n");
	cmd_printf("  %-16s %s\n", "tee_tcb_svn", vfy_hex(b + TDX_TEE_TCB_SVN, 16, h));
	cmd_printf("  %-16s %s\n", "mrseam", vfy_hex(b + TDX_MRSEAM, 48, h));
	cmd_printf("  %-16s %s\n", "mrsignerseam", vfy_hex(b + TDX_MRSIGNERSEAM, 48, h));
	cmd_printf("  %-16s 0x%016llx: %s\n", "td_attributes", (unsigned long long)q->td_attributes,
	           tdx_td_attributes_text(q->td_attributes, h, sizeof h));
	cmd_printf("  %-16s 0x%016llx\n", "xfam", (unsigned long long)q->xfam);
	cmd_printf("  %-16s %s\n", "mrtd", vfy_hex(b + TDX_MRTD, 48, h));
	cmd_printf("  %-16s %s\n", "mrconfigid", vfy_hex(b + TDX_MRCONFIGID, 48, h));
	cmd_printf("  %-16s %s\n", "mrowner", vfy_hex(b + TDX_MROWNER, 48, h));
	cmd_printf("  %-16s %s\n", "mrownerconfig", vfy_hex(b + TDX_MROWNERCONFIG, 48, h));
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof name, "rtmr%d", i);
		cmd_printf("  %-16s %s\n", name, vfy_hex(b + TDX_RTMR0 + 48 * i, 48, h));
	}
	cmd_printf("  %-16s %s\n", "report_data", vfy_hex(b + TDX_REPORT_DATA, 64, h));
	cmd_printf("  %-16s isvsvn %u, cpusvn %s\n", "qe", vfy_le16(qe + SGX_ISVSVN),
	           vfy_hex(qe + SGX_CPUSVN, 16, h));
}

int tdx_cli_evidence(const struct tdx_cli *o, struct bundle *b)
{
	static uint8_t der[16384];
	static struct tdx_evidence_expect x;
	static struct tdx_evidence ev;
	static struct vfy_log log;
	struct pem_cert certs[8];
	uint8_t *bytes = NULL;
	size_t n, used = 0;
	int n_certs = 0;
	char sum[300];

	memset(&x, 0, sizeof x);
	if (cmd_read_pem_certs(o->chain, der, sizeof der, &used, certs, 8, &n_certs) ||
	    bundle_cli_load(&o->b, &x.b, &bytes, &n))
		return 1;
	x.quote = o->x;
	x.chain = certs;
	x.n_chain = n_certs;
	x.chain_what = o->chain;
	vfy_log_init(&log);
	int e = tdx_evidence_verify(bytes, n, &x, &ev, &log);
	if (cmd_print_log(&log, e)) {
		free(bytes);
		return 1;
	}
	cmd_printf("--   TCB status: not checked (Intel PCS TCB info, QE identity SVNs and CRLs are "
		   "collateral this verifier does not fetch)\n");
	print_quote(&ev.q);
	bundle_cli_summary(&ev.b, &x.b, sum, sizeof sum);
	cmd_printf("verified: %sTDX quote version 4, for this bundle: nonce as given, %s\n",
		   ev.b.simulated ? "SIMULATED " : "", sum);
	*b = ev.b;
	free(bytes);
	return 0;
}

int verifier_tdx_main(int argc, char **argv)
{
	static struct tdx_cli a;
	static uint8_t der[16384];
	static struct vfy_log log;
	static struct bundle b;
	struct pem_cert certs[8];
	struct tdx_quote q;
	uint8_t *quote = NULL;
	size_t len, used = 0;
	int n = 0, e;

	if (parse_args(argc, argv, &a))
		return 1;
	if (a.b.evidence)
		return tdx_cli_evidence(&a, &b);
	if (cmd_read_pem_certs(a.chain, der, sizeof der, &used, certs, 8, &n) ||
	    cmd_read_file(a.quote, 1u << 20, &quote, &len))
		return 1;
	vfy_log_init(&log);
	e = tdx_quote_verify(quote, len, certs, n, a.chain, &a.x, &q, &log);
	if (cmd_print_log(&log, e)) {
		free(quote);
		return 1;
	}
	if (!a.x.report_data)
		printf("--   report_data: not checked (no --expect-report-data): freshness is the "
		       "caller's to check\n");
	printf("--   TCB status: not checked (Intel PCS TCB info, QE identity SVNs and CRLs are "
	       "collateral this verifier does not fetch)\n");
	print_quote(&q);
	printf("verified: TDX quote version 4\n");
	free(quote);
	return 0;
}
