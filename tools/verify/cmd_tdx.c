/*
 * tools/verify/cmd_tdx.c — `verifier tdx`: check an Intel TDX quote (v4)
 * against Intel's SGX Root CA (tdx_quote.h).
 *
 *   verifier tdx --quote quote.bin --chain pck_chain.pem
 *                [--expect-mrtd HEX] [--expect-report-data HEX] [--allow-debug]
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
	"  --quote    the TDX quote, version 4 (trailing zero padding allowed)\n"
	"  --chain    PEM holding Intel's SGX Root CA (other certificates there are ignored:\n"
	"             the PCK chain is taken from the quote)\n"
	"  --expect-* values the quote must hold (48- and 64-byte hex); unchecked when absent\n"
	"  --allow-debug  accept a TD with TD_ATTRIBUTES.DEBUG set\n";

struct tdx_args {
	const char *quote, *chain;
	uint8_t mrtd[48], report_data[64];
	struct tdx_expect x;
};

static int parse_args(int argc, char **argv, struct tdx_args *a)
{
	memset(a, 0, sizeof *a);
	for (int i = 1; i < argc; i++) {
		const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(f, "--allow-debug")) {
			a->x.allow_debug = 1;
			continue;
		}
		if (!strcmp(f, "-h") || !strcmp(f, "--help")) {
			fputs(usage, stdout);
			exit(0);
		}
		if (!v || f[0] != '-')
			return cmd_fail("tdx: %s '%s' (verifier tdx --help)", v ? "unexpected argument" :
					"missing value or unknown option", f);
		i++;
		if (!strcmp(f, "--quote"))
			a->quote = v;
		else if (!strcmp(f, "--chain"))
			a->chain = v;
		else if (!strcmp(f, "--expect-mrtd")) {
			if (cmd_hex_arg(f, v, a->mrtd, 48))
				return 1;
			a->x.mrtd = a->mrtd;
		} else if (!strcmp(f, "--expect-report-data")) {
			if (cmd_hex_arg(f, v, a->report_data, 64))
				return 1;
			a->x.report_data = a->report_data;
		} else {
			return cmd_fail("tdx: unknown option '%s' (verifier tdx --help)", f);
		}
	}
	if (!a->quote || !a->chain)
		return cmd_fail("tdx: --quote and --chain are required (verifier tdx --help)");
	return 0;
}

static void print_quote(const struct tdx_quote *q)
{
	const uint8_t *b = q->raw, *qe = q->raw + q->qe_report;
	char h[160];

	printf("quote:\n");
	printf("  %-16s %s\n", "tee_tcb_svn", vfy_hex(b + TDX_TEE_TCB_SVN, 16, h));
	printf("  %-16s %s\n", "mrseam", vfy_hex(b + TDX_MRSEAM, 48, h));
	printf("  %-16s %s\n", "mrsignerseam", vfy_hex(b + TDX_MRSIGNERSEAM, 48, h));
	printf("  %-16s 0x%016llx: %s\n", "td_attributes", (unsigned long long)q->td_attributes,
	       tdx_td_attributes_text(q->td_attributes, h, sizeof h));
	printf("  %-16s 0x%016llx\n", "xfam", (unsigned long long)q->xfam);
	printf("  %-16s %s\n", "mrtd", vfy_hex(b + TDX_MRTD, 48, h));
	printf("  %-16s %s\n", "mrconfigid", vfy_hex(b + TDX_MRCONFIGID, 48, h));
	printf("  %-16s %s\n", "mrowner", vfy_hex(b + TDX_MROWNER, 48, h));
	printf("  %-16s %s\n", "mrownerconfig", vfy_hex(b + TDX_MROWNERCONFIG, 48, h));
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof name, "rtmr%d", i);
		printf("  %-16s %s\n", name, vfy_hex(b + TDX_RTMR0 + 48 * i, 48, h));
	}
	printf("  %-16s %s\n", "report_data", vfy_hex(b + TDX_REPORT_DATA, 64, h));
	printf("  %-16s isvsvn %u, cpusvn %s\n", "qe", vfy_le16(qe + SGX_ISVSVN),
	       vfy_hex(qe + SGX_CPUSVN, 16, h));
}

int verifier_tdx_main(int argc, char **argv)
{
	static struct tdx_args a;
	static uint8_t der[16384];
	static struct vfy_log log;
	struct pem_cert certs[8];
	struct tdx_quote q;
	uint8_t *quote = NULL;
	size_t len, used = 0;
	int n = 0, e;

	if (parse_args(argc, argv, &a))
		return 1;
	if (cmd_read_pem_certs(a.chain, der, sizeof der, &used, certs, 8, &n) ||
	    cmd_read_file(a.quote, 1u << 20, &quote, &len))
		return 1;
	vfy_log_init(&log);
	e = tdx_quote_verify(quote, len, certs, n, a.chain, &a.x, &q, &log);
	cmd_print_ok(&log);
	if (e) {
		free(quote);
		return cmd_fail("%s", log.err);
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
