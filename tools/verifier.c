/*
 * tools/verifier.c — build/host/verifier: checks attestation evidence from an
 * llmk guest, computes expected measurements offline, and releases model
 * keys to attested guests (docs/attestation.md). One entry function per
 * subcommand, each in tools/verify/cmd_*.c.
 *
 *   verifier vtpm --evidence FILE --nonce HEX [...]     a vTPM quote bundle
 *   verifier wrap --evidence FILE --nonce HEX ...       verify, then wrap a model key
 *   verifier measure pcr4 FILE.efi                      the PCR4 OVMF makes of an image
 *
 * Exit 0 when everything checked out, 1 with one "error:" line otherwise.
 */
#include <stdio.h>
#include <string.h>

#include "verify/verify.h"

static const struct {
	const char *name, *sub; /* sub: second word for `measure X` */
	int (*run)(int argc, char **argv);
	const char *help;
} verifier_cmds[] = {
	{"vtpm", NULL, verify_cmd_vtpm, "vtpm --evidence FILE --nonce HEX [--expect-pcr4 HEX] "
	 "[--expect-model SHA256] [--ek-ca PEM] [--export DIR]"},
	{"wrap", NULL, verify_cmd_wrap, "wrap --evidence FILE --nonce HEX --expect-pcr4 HEX "
	 "--key-file model.key [--expect-model SHA256] [--ek-ca PEM]"},
	{"measure", "pcr4", verify_cmd_measure_pcr4, "measure pcr4 FILE.efi"},
};

static int usage(void)
{
	printf("usage:\n");
	for (size_t i = 0; i < sizeof verifier_cmds / sizeof verifier_cmds[0]; i++)
		printf("  verifier %s\n", verifier_cmds[i].help);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help"))
		return usage();
	for (size_t i = 0; i < sizeof verifier_cmds / sizeof verifier_cmds[0]; i++) {
		if (strcmp(argv[1], verifier_cmds[i].name) != 0)
			continue;
		if (!verifier_cmds[i].sub)
			return verifier_cmds[i].run(argc - 1, argv + 1);
		if (argc >= 3 && !strcmp(argv[2], verifier_cmds[i].sub))
			return verifier_cmds[i].run(argc - 2, argv + 2);
	}
	printf("error: unknown subcommand '%s%s%s'\n", argv[1], argc >= 3 ? " " : "",
	       argc >= 3 ? argv[2] : "");
	usage();
	return 1;
}
