/*
 * tools/verify/cmd_bundle.c — the options every evidence bundle takes
 * (--evidence FILE --nonce HEX [--expect-model SHA256] [--expect-config
 * FILE|SHA256] [--allow-simulated]),
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
		{"--expect-config", offsetof(struct bundle_cli, config)},
	};
	if (!strcmp(argv[*i], "--allow-simulated")) {
		o->allow_simulated = 1;
		return 1;
	}
	return cmd_opt_take(opts, sizeof opts / sizeof opts[0], o, argc, argv, i);
}

/* "N bytes of FILE: KEY VALUE; KEY VALUE" (comments and blank lines left
 * out, controls as '?', cut at cap): what the guest was told, in one line. */
static void config_told(const char *path, const uint8_t *p, size_t n, char *out, size_t cap)
{
	size_t o = (size_t)snprintf(out, cap, "%zu bytes of %.60s", n, path);
	const char *sep = ": ";
	for (size_t i = 0; i < n && o + 8 < cap;) {
		size_t e = i;
		while (e < n && p[e] != '\n')
			e++;
		size_t a = i, z = e;
		while (a < z && (p[a] == ' ' || p[a] == '\t'))
			a++;
		while (z > a && (p[z - 1] == ' ' || p[z - 1] == '\t' || p[z - 1] == '\r'))
			z--;
		if (a < z && p[a] != '#') {
			o += (size_t)snprintf(out + o, cap - o, "%s", sep);
			for (size_t k = a; k < z && o + 4 < cap; k++)
				out[o++] = p[k] >= 0x20 && p[k] < 0x7f ? (char)p[k] : '?';
			out[o] = 0;
			sep = "; ";
		}
		i = e + 1;
	}
	if (o + 4 >= cap)
		strcpy(out + cap - 4, "...");
}

/* --expect-config: 64 hex digits are the digest; anything else names the
 * file the guest was given as its llmk.cfg. */
static int config_load(const char *arg, struct bundle_expect *x)
{
	uint8_t *text;
	size_t k, n;
	if (strlen(arg) == 64 && verify_parse_hex(arg, x->config, 32, &k) == 0 && k == 32) {
		x->have_config = true;
		return 0;
	}
	if (verify_read_file(arg, &text, &n, 1u << 20) < 0)
		return cmd_fail("--expect-config: '%.200s' is neither 64 hex digits (a SHA-256) nor a "
				"file this verifier can read", arg);
	evidence_config_digest(text, n, x->config);
	if (n)
		config_told(arg, text, n, x->told, sizeof x->told);
	else
		snprintf(x->told, sizeof x->told, "0 bytes of %.100s: the empty configuration", arg);
	free(text);
	x->have_config = true;
	return 0;
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
	if (o->config && config_load(o->config, x))
		return 1;
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
	if (o->nonce || o->model || o->config || o->allow_simulated)
		return cmd_fail("%s: --nonce, --expect-model, --expect-config and --allow-simulated go "
				"with --evidence "
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
