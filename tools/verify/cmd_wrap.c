/*
 * tools/verify/cmd_wrap.c — `verifier wrap`: release a model key to a guest
 * whose evidence verifies (every `verifier vtpm` check, with the image's PCR4
 * required), wrapped to the evidence's ephemeral X25519 key (shell/keywrap.h).
 *
 *   verifier wrap --evidence FILE --nonce HEX --expect-pcr4 HEX --key-file model.key
 *                 [--expect-model SHA256] [--ek-ca PEM]
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
	"usage: verifier wrap --evidence FILE --nonce HEX --expect-pcr4 HEX --key-file model.key\n"
	"                     [--expect-model SHA256] [--ek-ca PEM]\n";

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

int verify_cmd_wrap(int argc, char **argv)
{
	struct vtpm_cli o;
	static struct vtpm_result res;
	const char *key_file = NULL;
	uint8_t *bundle, key[32], seed[32], blob[KEYWRAP_SIZE];
	char b64[KEYWRAP_SIZE / 3 * 4 + 8];

	memset(&o, 0, sizeof o);
	for (int i = 1; i < argc; i++) {
		int t = vtpm_cli_opt(&o, argc, argv, &i);
		if (t < 0)
			return 1;
		if (t == 1 && o.export_dir)
			return cmd_fail("wrap: --export belongs to `verifier vtpm`");
		if (t == 1)
			continue;
		if (!strcmp(argv[i], "--key-file") && i + 1 < argc)
			key_file = argv[++i];
		else
			return cmd_fail("wrap: unknown argument or missing value '%s'\n%s", argv[i],
					   wrap_usage);
	}
	if (!o.evidence || !o.nonce || !o.pcr4 || !key_file)
		return cmd_fail("wrap: --evidence, --nonce, --expect-pcr4 and --key-file are "
				   "required: a key goes only to an attested image\n%s", wrap_usage);
	if (read_key(key_file, key))
		return 1;
	int r = vtpm_cli_verify(&o, &bundle, &res);
	if (r == 0) {
		if (getrandom(seed, sizeof seed, 0) != (ssize_t)sizeof seed)
			r = cmd_fail("wrap: no randomness from getrandom: %s", strerror(errno));
		else if (keywrap_wrap(res.pubkey, res.report_data, key, seed, blob) < 0)
			r = cmd_fail("wrap: the evidence's public key is a point of small order");
		else if (evidence_b64_encode(blob, sizeof blob, b64, sizeof b64) < 0)
			r = cmd_fail("wrap: internal: base64 buffer");
		else
			printf("wrapped: %s\n", b64);
	}
	seal_zeroize(key, sizeof key);
	seal_zeroize(seed, sizeof seed);
	free(bundle);
	return r;
}
