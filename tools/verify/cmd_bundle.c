/*
 * tools/verify/cmd_bundle.c — the options every evidence bundle takes
 * (--evidence FILE --nonce HEX [--expect-model SHA256] [--allow-simulated]),
 * shared by `verifier vtpm`, `snp`, `tdx` and `wrap` (cmd.h).
 */
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bundle_cli_opt(struct bundle_cli *o, int argc, char **argv, int *i)
{
	static const struct cmd_opt opts[] = {
		{"--evidence", offsetof(struct bundle_cli, evidence)},
		{"--nonce", offsetof(struct bundle_cli, nonce)},
		{"--expect-model", offsetof(struct bundle_cli, model)},
	};
	if (!strcmp(argv[*i], "--allow-simulated")) {
		o->allow_simulated = 1;
		return 1;
	}
	return cmd_opt_take(opts, sizeof opts / sizeof opts[0], o, argc, argv, i);
}

int bundle_cli_load(const struct bundle_cli *o, struct bundle_expect *x, uint8_t **buf,
		    size_t *n)
{
	char err[400];
	const char *form;
	size_t k;

	memset(x, 0, sizeof *x);
	*buf = NULL;
	if (!o->evidence || !o->nonce)
		return cmd_fail("--evidence FILE and --nonce HEX are required");
	if (verify_parse_hex(o->nonce, x->nonce, EVIDENCE_NONCE_MAX, &x->nonce_len) < 0)
		return cmd_fail("--nonce: want 2 to 128 hex digits (1..64 bytes), got '%.140s'",
				o->nonce);
	if (o->model) {
		if (verify_parse_hex(o->model, x->model, 32, &k) < 0 || k != 32)
			return cmd_fail("--expect-model: want 64 hex digits (a SHA-256), got '%.80s'",
					o->model);
		x->have_model = true;
	}
	x->allow_simulated = o->allow_simulated != 0;
	if (verify_read_evidence(o->evidence, buf, n, &form, err, sizeof err) < 0)
		return cmd_fail("%s", err);
	cmd_set_simulated(bundle_says_simulated(*buf, *n));
	cmd_printf("evidence: %zu bytes, read as %s\n", *n, form);
	return 0;
}

int bundle_cli_check(const struct bundle_cli *o, const char *cmd, const char *what,
		     bool has_what, bool has_report_data, bool has_chain)
{
	if (o->evidence) {
		if (has_what)
			return cmd_fail("%s: --%s and --evidence: give one (the bundle carries its %s)",
					cmd, what, what);
		if (has_report_data)
			return cmd_fail("%s: --expect-report-data with --evidence: the bundle's nonce, "
					"model, key and build id give the report data", cmd);
		if (!o->nonce || !has_chain)
			return cmd_fail("%s: --evidence needs --nonce and --chain (verifier %s --help)",
					cmd, cmd);
		return 0;
	}
	if (o->nonce || o->model || o->allow_simulated)
		return cmd_fail("%s: --nonce, --expect-model and --allow-simulated go with --evidence "
				"(verifier %s --help)", cmd, cmd);
	return 0;
}

void bundle_cli_summary(const struct bundle *b, const struct bundle_expect *x, char *out,
			size_t cap)
{
	char m[65], k[65];
	verify_hex(b->model, 32, m);
	verify_hex(b->pubkey, 32, k);
	snprintf(out, cap, "model %s (%s), guest key %s", m,
		 x->have_model ? "as expected" : "not checked: no --expect-model", k);
}
