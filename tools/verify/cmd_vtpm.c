/*
 * tools/verify/cmd_vtpm.c — `verifier vtpm`: check a vtpm evidence bundle
 * (vtpm.c does the checks) and optionally export it for tpm2_checkquote.
 *
 *   verifier vtpm --evidence FILE --nonce HEX [--expect-pcr4 HEX]
 *                 [--expect-model SHA256] [--ek-ca PEM] [--export DIR]
 */
#include "verify.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char vtpm_usage[] =
	"usage: verifier vtpm --evidence FILE --nonce HEX [--expect-pcr4 HEX] [--expect-model SHA256]\n"
	"                     [--expect-config FILE|SHA256] [--ek-ca PEM] [--export DIR]\n"
	"                     [--allow-simulated]\n"
	"  --expect-config: the llmk.cfg the guest was given, or its SHA-256 (default: none,\n"
	"        the empty configuration)\n"
	"  FILE: the guest's 'evidence: <base64>' line (a whole transcript is fine), bare base64,\n"
	"        or the binary bundle\n";

int vtpm_cli_opt(struct vtpm_cli *o, int argc, char **argv, int *i)
{
	static const struct cmd_opt opts[] = {
		{"--expect-pcr4", offsetof(struct vtpm_cli, pcr4)},
		{"--ek-ca", offsetof(struct vtpm_cli, ek_ca)},
		{"--export", offsetof(struct vtpm_cli, export_dir)},
	};
	int t = bundle_cli_opt(&o->b, argc, argv, i);
	if (t)
		return t;
	return cmd_opt_take(opts, sizeof opts / sizeof opts[0], o, argc, argv, i);
}

static int hex32(const char *opt, const char *s, uint8_t out[32])
{
	size_t n;
	if (verify_parse_hex(s, out, 32, &n) < 0 || n != 32)
		return cmd_fail("%s: want 64 hex digits (a SHA-256), got '%s'", opt, s);
	return 0;
}

int vtpm_cli_verify(const struct vtpm_cli *o, uint8_t **bundle, struct vtpm_result *res)
{
	static struct vtpm_expect x;
	char err[400];
	size_t n;
	uint8_t *pem = NULL;

	memset(&x, 0, sizeof x);
	*bundle = NULL;
	if (o->pcr4 && hex32("--expect-pcr4", o->pcr4, x.pcr4))
		return 1;
	x.have_pcr4 = o->pcr4 != NULL;
	if (o->ek_ca) {
		size_t len;
		if (verify_read_file(o->ek_ca, &pem, &len, 1 << 20) < 0)
			return cmd_fail("--ek-ca '%s': %s", o->ek_ca, strerror(errno));
		x.ek_ca_pem = (const char *)pem;
		x.ek_ca_len = len;
	}
	if (bundle_cli_load(&o->b, &x.b, bundle, &n)) {
		free(pem);
		return 1;
	}
	int r = vtpm_verify(*bundle, n, &x, res, err, sizeof err);
	free(pem);
	for (int i = 0; i < res->nlines; i++)
		cmd_printf("%s\n", res->line[i]);
	if (r < 0)
		return cmd_fail("%s", err);
	cmd_printf("%s\n", res->summary);
	return 0;
}

int verify_cmd_vtpm(int argc, char **argv)
{
	struct vtpm_cli o;
	static struct vtpm_result res;
	uint8_t *bundle;
	char err[300];

	memset(&o, 0, sizeof o);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(vtpm_usage, stdout);
			return 0;
		}
		int t = vtpm_cli_opt(&o, argc, argv, &i);
		if (t < 0)
			return 1;
		if (t == 0)
			return cmd_fail("vtpm: unknown argument '%s' (verifier vtpm --help)", argv[i]);
	}
	if (!o.b.evidence || !o.b.nonce)
		return cmd_fail("vtpm: --evidence FILE and --nonce HEX are required (verifier vtpm "
				"--help)");
	int r = vtpm_cli_verify(&o, &bundle, &res);
	if (r == 0 && o.export_dir) {
		if (mkdir(o.export_dir, 0755) < 0 && errno != EEXIST)
			r = cmd_fail("--export '%s': %s", o.export_dir, strerror(errno));
		else if (vtpm_export(&res, o.export_dir, err, sizeof err) < 0)
			r = cmd_fail("%s", err);
		else
			cmd_printf("exported to %s: quote.msg quote.sig ak.pem pcrs.bin pcrs.list "
			       "qualification.bin eventlog.bin\n", o.export_dir);
	}
	free(bundle);
	return r;
}
