/*
 * tools/verify/cmd_tls.c — `verifier tls`: the attested TLS handshake of
 * docs/tls.md with a guest's `serve`, every check on a line of its own.
 *
 *   verifier tls --connect HOST:PORT [--expect-pcr4 HEX --ek-ca PEM] [--expect-model SHA256]
 *                [--expect-config FILE|SHA256] [--provider P] [--timeout S] [snp, tdx options]
 *
 * The handshake (tools/host/tls_client.c), the attestation over the same
 * connection (tools/host/tls_attest.c): the checks of `llmctl proxy`, which
 * then serves.
 */
#include "cmd.h"
#include "verify.h"
#include "../host/tls_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char tls_usage[] =
	"usage: verifier tls --connect HOST:PORT [--expect-pcr4 HEX --ek-ca PEM] [--expect-model SHA256]\n"
	"                    [--expect-config FILE|SHA256] [--provider vtpm|snp|tdx] [--timeout S]\n"
	"                    [--allow-simulated] [-v] (snp: --expect-measurement HEX --chain ark.pem;\n"
	"                    tdx: --expect-mrtd HEX --chain root.pem)\n"
	"  TLS with the guest's `serve`, its certificate key bound into fresh evidence (a nonce\n"
	"  of ours), every check of the verifier, and for vtpm the credential activated by the\n"
	"  certified TPM. One line per check; exit 0 when all pass. -v: the evidence's own\n"
	"  checks (those of `verifier vtpm`, `snp --evidence`, `tdx --evidence`) too.\n";

int verify_cmd_tls(int argc, char **argv)
{
	static struct tlsc_conn t;
	static struct tlsc_attest_opts o;
	struct tlsc_attest_report rep;
	const char *target = NULL;
	char host[256], port[16], err[320], hk[65];
	double secs = 30;

	memset(&o, 0, sizeof o);
	for (int i = 1; i < argc; i++) {
		int k = connect_verify_opt(&o.v, argc, argv, &i);
		if (k < 0)
			return 1;
		if (k)
			continue;
		if (!strcmp(argv[i], "-v")) {
			o.v.to_stdout = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(tls_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--connect") && i + 1 < argc) {
			target = argv[++i];
		} else if (!strcmp(argv[i], "--provider") && i + 1 < argc) {
			o.provider = argv[++i];
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			char *end;
			secs = strtod(argv[++i], &end);
			if (!*argv[i] || *end || !(secs > 0 && secs <= 3600))
				return cmd_fail("tls: --timeout: want seconds (up to 3600), got '%s'",
						argv[i]);
		} else {
			return cmd_fail("tls: unknown option '%s' (verifier tls --help)", argv[i]);
		}
	}
	if (!target)
		return cmd_fail("tls: --connect HOST:PORT is required (verifier tls --help)");
	if (tlsc_split_hostport(target, host, sizeof host, port, sizeof port))
		return cmd_fail("tls: --connect: want HOST:PORT, got '%s'", target);
	if (tlsc_connect(&t, host, port, NULL, (int)(secs * 1000), err, sizeof err))
		return cmd_fail("tls: %s", err);
	printf("ok: tls: %s with %s\n", tlsc_describe(&t, err, sizeof err), target);
	printf("ok: certificate: one, EC P-256 key, K %s\n", vfy_hex(t.peer.k, 32, hk));
	fflush(stdout);
	int r = tlsc_attest(&t, &o, &rep);
	tlsc_close(&t);
	if (r)
		return 1;
	printf("ok: evidence: %s\n", rep.evidence);
	printf("ok: %s\n", rep.binding);
	printf("ok: %s\n", rep.activation);
	printf("ok: %s is the attested guest\n", target);
	return 0;
}
