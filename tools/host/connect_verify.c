/*
 * tools/host/connect_verify.c — the guest's session evidence through the
 * verifier (tools/verify), the same checks as `verifier wrap`: the bundle's
 * PROVIDER record picks those of `verifier vtpm`, `snp --evidence` or `tdx
 * --evidence`, and the image's measurement must be named (a session is
 * worth only as much as the image it reaches). The verifier's functions
 * read the evidence from a file and print on stdout, which here carries the
 * guest's output alone: the bundle goes to a private temporary file and
 * stdout points at stderr (-v) or nowhere while they run.
 */
#define _GNU_SOURCE
#include "connect.h"
#include "../verify/verify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Options the verifier takes for some provider, and whether with a value. */
static const struct {
	const char *name;
	bool value;
} known[] = {
	{"--expect-pcr4", true}, {"--ek-ca", true},                      /* vtpm */
	{"--expect-measurement", true}, {"--chain", true}, {"--vcek", true}, /* snp (--chain: tdx too) */
	{"--expect-policy", true}, {"--expect-host-data", true},
	{"--expect-mrtd", true},                                          /* tdx */
	{"--expect-model", true}, {"--expect-config", true},             /* every provider */
	{"--allow-simulated", false},
};

int connect_verify_opt(struct connect_verify *v, int argc, char **argv, int *i)
{
	const char *a = argv[*i];

	if (!strcmp(a, "--allow-debug")) {
		fprintf(stderr, "error: --allow-debug: no session with a guest the host can debug (its "
			"memory is the host's to read)\n");
		return -1;
	}
	for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
		if (strcmp(a, known[k].name))
			continue;
		if (known[k].value && *i + 1 >= argc) {
			fprintf(stderr, "error: %s needs a value\n", a);
			return -1;
		}
		if (v->argc + 2 > (int)(sizeof v->argv / sizeof v->argv[0])) {
			fprintf(stderr, "error: too many verifier options\n");
			return -1;
		}
		v->argv[v->argc++] = a;
		if (known[k].value)
			v->argv[v->argc++] = argv[++*i];
		return 1;
	}
	return 0;
}

/* The bundle in a file only this user reads; its path in path. */
static int bundle_file(const uint8_t *b, size_t n, char *path, size_t pathn)
{
	const char *dir = getenv("TMPDIR");
	snprintf(path, pathn, "%s/llmctl-evidence-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return cmd_fail("session: a temporary file for the evidence: %s", strerror(errno));
	for (size_t o = 0; o < n;) {
		ssize_t k = write(fd, b + o, n - o);
		if (k <= 0) {
			close(fd);
			unlink(path);
			return cmd_fail("session: writing the evidence to %s: %s", path, strerror(errno));
		}
		o += (size_t)k;
	}
	close(fd);
	return 0;
}

/* The options of v, with --evidence and --nonce, for the provider kind. */
static int parse(struct provider_cli *o, int kind, const struct connect_verify *v,
		 const char *path, const char *nonce)
{
	char *argv[72];
	int argc = 0;

	argv[argc++] = (char *)"llmctl --connect";
	for (int i = 0; i < v->argc; i++)
		argv[argc++] = (char *)v->argv[i];
	argv[argc++] = (char *)"--evidence";
	argv[argc++] = (char *)path;
	argv[argc++] = (char *)"--nonce";
	argv[argc++] = (char *)nonce;
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		int t = provider_cli_opt(o, kind, argc, argv, &i);
		if (t < 0)
			return 1;
		if (t == 0)
			return cmd_fail("session: '%s' is not an option for %s evidence, which the guest "
					"sent", argv[i], bundle_provider_name(kind));
	}
	switch (kind) {
	case PLAT_ATTEST_VTPM:
		if (!o->vtpm.pcr4 || !o->vtpm.ek_ca)
			return cmd_fail("session: the guest sent vtpm evidence: --expect-pcr4 HEX (the "
					"image's PCR4, `verifier measure pcr4 llmk.efi`) and --ek-ca PEM "
					"(the TPM maker's CA: the session's keys open only in that TPM) are "
					"required");
		return 0;
	case PLAT_ATTEST_SNP:
		if (!o->snp.x.measurement || !o->snp.n_chain)
			return cmd_fail("session: the guest sent snp evidence: --expect-measurement HEX "
					"and --chain ark.pem are required");
		return 0;
	default:
		if (!o->tdx.x.mrtd || !o->tdx.chain)
			return cmd_fail("session: the guest sent tdx evidence: --expect-mrtd HEX and "
					"--chain root.pem are required");
		return 0;
	}
}

int connect_verify(const struct connect_verify *v, const uint8_t *bundle, size_t n,
		   const uint8_t *nonce, size_t nonce_len, uint8_t report_data[64],
		   uint8_t session_pub[32], uint8_t *cred, size_t cred_cap, size_t *cred_n,
		   uint8_t secret[32], size_t *secret_n, char *what, size_t whatn)
{
	static struct provider_cli o;
	static struct bundle b;
	char path[4096], hex[2 * EVIDENCE_NONCE_MAX + 1], m[65];
	int kind = bundle_provider_kind(bundle, n), r;

	if (kind == PLAT_ATTEST_NONE)
		return cmd_fail("session: the guest sent evidence of provider none, which proves nothing");
	if (kind < 0)
		return cmd_fail("session: the guest's evidence has no PROVIDER record naming vtpm, snp or "
				"tdx");
	verify_hex(nonce, nonce_len, hex);
	if (bundle_file(bundle, n, path, sizeof path))
		return 1;
	if (parse(&o, kind, v, path, hex)) {
		unlink(path);
		return 1;
	}
	fflush(stdout);
	int saved = v->to_stdout ? -1 : dup(1);
	int sink = v->to_stdout ? -1 : v->verbose ? dup(2) : open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (saved >= 0 && sink >= 0)
		dup2(sink, 1);
	memset(&b, 0, sizeof b);
	r = provider_cli_verify(&o, kind, &b);
	fflush(stdout);
	if (saved >= 0 && sink >= 0)
		dup2(saved, 1);
	if (saved >= 0)
		close(saved);
	if (sink >= 0)
		close(sink);
	cmd_set_simulated(0);
	unlink(path);
	if (r || release_credential(&b, cred, cred_cap, cred_n, secret, secret_n))
		return 1;
	memcpy(report_data, b.report_data, 64);
	memcpy(session_pub, b.pubkey, 32);
	const char *model = provider_cli_bundle(&o, kind)->model;
	verify_hex(b.model, 32, m);
	snprintf(what, whatn, "%s%s evidence verified (%s as expected), model %s (%s)%s; %s",
		 b.simulated ? "SIMULATED " : "", b.provider,
		 kind == PLAT_ATTEST_VTPM ? "PCR4" : kind == PLAT_ATTEST_SNP ? "MEASUREMENT" : "MRTD", m,
		 model ? "as expected" : "not checked: no --expect-model",
		 *cred_n ? ", keys bound to the certified TPM by a credential" : "", b.config_line);
	return 0;
}
