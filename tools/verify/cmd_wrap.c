/*
 * tools/verify/cmd_wrap.c — `verifier wrap`: release a model key to a guest
 * whose evidence verifies, wrapped to the evidence's ephemeral X25519 key
 * (shell/keywrap.h). The bundle's PROVIDER record picks the checks: every
 * check of `verifier vtpm`, `verifier snp --evidence` or `verifier tdx
 * --evidence`, with the image's measurement required (PCR4, MEASUREMENT or
 * MRTD: a key goes only to an image the owner named).
 *
 *   verifier wrap --evidence FILE --nonce HEX --key-file model.key
 *                 --expect-model SHA256 [--allow-simulated]
 *                 vtpm: --expect-pcr4 HEX --ek-ca PEM (the key opens only in the TPM
 *                       the EK certificate names: release.c)
 *                 snp:  --expect-measurement HEX --chain FILE [--chain FILE] [--vcek FILE]
 *                       [--expect-policy HEX] [--expect-host-data HEX]
 *                 tdx:  --expect-mrtd HEX --chain FILE
 */
#include "verify.h"
#include "../../llm/seal.h"
#include "../../shell/keywrap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

static const char wrap_usage[] =
	"usage: verifier wrap --evidence FILE --nonce HEX --key-file model.key\n"
	"                     --expect-model SHA256 [--expect-config FILE|SHA256] [--allow-simulated]\n"
	"                     and, by the bundle's provider,\n"
	"         vtpm: --expect-pcr4 HEX --ek-ca PEM\n"
	"         snp:  --expect-measurement HEX --chain FILE [--chain FILE] [--vcek FILE]\n"
	"               [--expect-policy HEX] [--expect-host-data HEX]\n"
	"         tdx:  --expect-mrtd HEX --chain FILE\n";

/* The key file seal keygen writes: 64 hex digits, then only whitespace. */
static int read_key(const char *path, uint8_t key[32])
{
	uint8_t *text;
	size_t n;
	if (verify_read_file(path, &text, &n, 4096) < 0)
		return cmd_fail("--key-file '%s': %s", path, strerror(errno));
	int e = seal_key_parse_hex((const char *)text, n, key);
	seal_zeroize(text, n);
	free(text);
	if (e)
		return cmd_fail("--key-file '%s': want 64 hex digits (a 256-bit key), then only "
				   "whitespace", path);
	return 0;
}

/* Every provider's options; the bundle's kind picks one. */
struct wrap_cli {
	const char *key_file;
	struct provider_cli p;
};

/* The PROVIDER record of the --evidence file, before any other option is read. */
static int evidence_kind(int argc, char **argv)
{
	const char *path = NULL, *form;
	uint8_t *b;
	size_t n;
	char err[400];
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--evidence"))
			path = argv[i + 1];
	if (!path)
		return cmd_fail("wrap: --evidence FILE is required (verifier wrap --help)"), -1;
	if (verify_read_evidence(path, &b, &n, &form, err, sizeof err) < 0)
		return cmd_fail("%s", err), -1;
	int kind = bundle_provider_kind(b, n);
	free(b);
	if (kind == PLAT_ATTEST_NONE)
		return cmd_fail("provider none: the guest had no attestation device, so this evidence "
				"proves nothing; no key is released"), -1;
	if (kind < 0)
		return cmd_fail("wrap: '%s' has no PROVIDER record naming vtpm, snp or tdx (is it an "
				"llmk evidence bundle?)", path), -1;
	return kind;
}

static int parse(struct wrap_cli *o, int kind, int argc, char **argv)
{
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--key-file") && i + 1 < argc) {
			o->key_file = argv[++i];
			continue;
		}
		/* a debuggable guest's memory is the host's to read: never a key there */
		if (!strcmp(a, "--allow-debug"))
			return cmd_fail("wrap: --allow-debug: a key is never released to a guest the host "
					"can debug");
		int t = provider_cli_opt(&o->p, kind, argc, argv, &i);
		if (t < 0)
			return 1;
		if (t == 0)
			return cmd_fail("wrap: '%s' is not an option for %s evidence, the bundle's "
					"provider (verifier wrap --help)", a, bundle_provider_name(kind));
	}
	if (!o->key_file)
		return cmd_fail("wrap: --key-file is required (verifier wrap --help)");
	/* a model key goes to a guest that runs that model, never to whatever
	 * model the evidence happens to name */
	if (!provider_cli_bundle(&o->p, kind)->model)
		return cmd_fail("wrap: --expect-model SHA256 is required: the key goes only to a guest "
				"whose evidence names the model it opens (verifier wrap --help)");
	switch (kind) {
	case PLAT_ATTEST_VTPM:
		if (o->p.vtpm.export_dir)
			return cmd_fail("wrap: --export belongs to `verifier vtpm`");
		if (!o->p.vtpm.b.nonce || !o->p.vtpm.pcr4 || !o->p.vtpm.ek_ca)
			return cmd_fail("wrap: vtpm evidence needs --nonce, --expect-pcr4 and --ek-ca: a "
					"key goes only to an attested image, and opens only in the TPM "
					"the EK certificate names (verifier wrap --help)");
		return 0;
	case PLAT_ATTEST_SNP:
		if (o->p.snp.report || o->p.snp.x.report_data)
			return cmd_fail("wrap: --report and --expect-report-data belong to `verifier snp`: "
					"the bundle carries the report and gives the report data");
		if (!o->p.snp.b.nonce || !o->p.snp.x.measurement || !o->p.snp.n_chain)
			return cmd_fail("wrap: snp evidence needs --nonce, --expect-measurement and --chain: "
					"a key goes only to an attested image (verifier wrap --help)");
		return 0;
	default:
		if (o->p.tdx.quote || o->p.tdx.x.report_data)
			return cmd_fail("wrap: --quote and --expect-report-data belong to `verifier tdx`: "
					"the bundle carries the quote and gives the report data");
		if (!o->p.tdx.b.nonce || !o->p.tdx.x.mrtd || !o->p.tdx.chain)
			return cmd_fail("wrap: tdx evidence needs --nonce, --expect-mrtd and --chain: a key "
					"goes only to an attested image (verifier wrap --help)");
		return 0;
	}
}

int verify_cmd_wrap(int argc, char **argv)
{
	static struct wrap_cli o;
	static struct bundle b;
	static uint8_t blob[KEYWRAP_MAX], cred[KEYWRAP_CRED_MAX];
	static char b64[KEYWRAP_MAX / 3 * 4 + 8];
	uint8_t key[32], seed[32], secret[RELEASE_SECRET];
	size_t n = 0, cred_n = 0, secret_n = 0;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(wrap_usage, stdout);
			return 0;
		}
	int kind = evidence_kind(argc, argv);
	if (kind < 0 || parse(&o, kind, argc, argv) || read_key(o.key_file, key))
		return 1;
	int r = provider_cli_verify(&o.p, kind, &b);
	if (r == 0)
		r = release_credential(&b, cred, sizeof cred, &cred_n, secret, &secret_n);
	if (r == 0) {
		if (getrandom(seed, sizeof seed, 0) != (ssize_t)sizeof seed)
			r = cmd_fail("wrap: no randomness from getrandom: %s", strerror(errno));
		else if (keywrap_wrap(b.pubkey, b.report_data, key, seed, cred, cred_n, secret,
				      secret_n, blob, sizeof blob, &n) < 0)
			r = cmd_fail("wrap: the evidence's public key is a point of small order");
		else if (b64_encode(blob, n, b64, sizeof b64) < 0)
			r = cmd_fail("wrap: internal: base64 buffer");
		else
			cmd_printf("wrapped: %s\n", b64);
	}
	seal_zeroize(key, sizeof key);
	seal_zeroize(seed, sizeof seed);
	seal_zeroize(secret, sizeof secret);
	return r;
}
