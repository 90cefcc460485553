/*
 * tools/verify/cmd_tls.c — `verifier tls`: the attested TLS handshake of
 * docs/tls.md with a guest's `serve`, every check on a line of its own.
 *
 *   verifier tls --connect HOST:PORT [--expect-pcr4 HEX --ek-ca PEM] [--expect-model SHA256]
 *                [--expect-config FILE|SHA256] [--provider P] [--timeout S] [snp, tdx options]
 *                [--release-key-file model.key [--load]]
 *
 * The handshake (tools/host/tls_client.c), the attestation over the same
 * connection (tools/host/tls_attest.c): the checks of `llmctl proxy`, which
 * then serves. With --release-key-file, and only once every check passed,
 * the model key goes to the guest over that same connection (POST /v1/keys,
 * docs/tls.md): like `verifier wrap`, only with --expect-model.
 */
#include "cmd.h"
#include "verify.h"
#include "../host/tls_client.h"

#include "../../llm/seal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char tls_usage[] =
	"usage: verifier tls --connect HOST:PORT [--expect-pcr4 HEX --ek-ca PEM] [--expect-model SHA256]\n"
	"                    [--expect-config FILE|SHA256] [--provider vtpm|snp|tdx] [--timeout S]\n"
	"                    [--allow-simulated] [-v] (snp: --expect-measurement HEX --chain ark.pem;\n"
	"                    tdx: --expect-mrtd HEX --chain root.pem)\n"
	"                    [--release-key-file model.key [--load]]\n"
	"  TLS with the guest's `serve`, its certificate key bound into fresh evidence (a nonce\n"
	"  of ours), every check of the verifier, and for vtpm the credential activated by the\n"
	"  certified TPM. One line per check; exit 0 when all pass. -v: the evidence's own\n"
	"  checks (those of `verifier vtpm`, `snp --evidence`, `tdx --evidence`) too.\n"
	"  --release-key-file: after every check, send the sealed model's key (64 hex digits,\n"
	"  as `seal keygen` writes) over that same connection (POST /v1/keys; --expect-model\n"
	"  required); --load: the guest then loads the disk it opens.\n";

/* The key file seal keygen writes: 64 hex digits, then only whitespace. */
static int read_key(const char *path, uint8_t key[32])
{
	uint8_t *text;
	size_t n;
	if (verify_read_file(path, &text, &n, 4096) < 0)
		return cmd_fail("tls: --release-key-file '%s': %s", path, strerror(errno));
	int e = seal_key_parse_hex((const char *)text, n, key);
	seal_zeroize(text, n);
	free(text);
	if (e)
		return cmd_fail("tls: --release-key-file '%s': want 64 hex digits (a 256-bit key), "
				"then only whitespace", path);
	return 0;
}

static bool has_opt(const struct connect_verify *v, const char *name)
{
	for (int i = 0; i < v->argc; i++)
		if (!strcmp(v->argv[i], name))
			return true;
	return false;
}

int verify_cmd_tls(int argc, char **argv)
{
	static struct tlsc_conn t;
	static struct tlsc_attest_opts o;
	struct tlsc_attest_report rep;
	const char *target = NULL, *key_file = NULL;
	bool load = false;
	uint8_t key[32];
	char host[256], port[16], err[320], hk[65], what[320];
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
		} else if (!strcmp(argv[i], "--release-key-file") && i + 1 < argc) {
			key_file = argv[++i];
		} else if (!strcmp(argv[i], "--load")) {
			load = true;
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
	if (load && !key_file)
		return cmd_fail("tls: --load goes with --release-key-file (verifier tls --help)");
	/* a model key goes to a guest that runs that model, never to whatever
	 * model the evidence happens to name (as `verifier wrap`) */
	if (key_file && !has_opt(&o.v, "--expect-model"))
		return cmd_fail("tls: --release-key-file needs --expect-model SHA256: the key goes only "
				"to a guest whose evidence names the model it opens");
	if (key_file && read_key(key_file, key))
		return 1;
	if (tlsc_split_hostport(target, host, sizeof host, port, sizeof port))
		return cmd_fail("tls: --connect: want HOST:PORT, got '%s'", target);
	if (tlsc_connect(&t, host, port, NULL, (int)(secs * 1000), err, sizeof err))
		return cmd_fail("tls: %s", err);
	printf("ok: tls: %s with %s\n", tlsc_describe(&t, err, sizeof err), target);
	printf("ok: certificate: one, EC P-256 key, K %s\n", vfy_hex(t.peer.k, 32, hk));
	fflush(stdout);
	int r = tlsc_attest(&t, &o, &rep);
	if (r) {
		explicit_bzero(key, sizeof key);
		tlsc_close(&t);
		return 1;
	}
	printf("ok: evidence: %s\n", rep.evidence);
	printf("ok: %s\n", rep.binding);
	printf("ok: %s\n", rep.activation);
	printf("ok: %s is the attested guest\n", target);
	if (key_file) {
		fflush(stdout);
		r = tlsc_release(&t, rep.nonce, key, load, what, sizeof what);
		if (!r)
			printf("ok: release: %s\n", what);
	}
	explicit_bzero(key, sizeof key);
	tlsc_close(&t);
	return r ? 1 : 0;
}
