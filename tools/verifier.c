/*
 * tools/verifier.c — build/host/verifier: checks attestation evidence on a
 * trusted host. One subcommand per kind of evidence, each in
 * tools/verify/cmd_<name>.c with one entry point (tools/verify/cmd.h); the
 * checks themselves are the library in tools/verify/.
 *
 *   verifier snp --report report.bin --vcek vcek.der --chain ask_ark.pem ...
 *   verifier tdx --quote quote.bin --chain pck_chain.pem ...
 *
 * Exit 0 only when the evidence verified; otherwise one "error:" line.
 */
#include <stdio.h>
#include <string.h>

#include "verify/cmd.h"

static const struct {
	const char *name, *what;
	int (*main)(int argc, char **argv);
} commands[] = {
	{"snp", "verify an AMD SEV-SNP attestation report (VCEK, ASK, ARK)", verifier_snp_main},
	{"tdx", "verify an Intel TDX quote, version 4 (PCK chain, QE report)", verifier_tdx_main},
};

static int usage(void)
{
	puts("usage: verifier COMMAND [ARGS]   (verifier COMMAND --help for its options)");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		printf("  %-8s %s\n", commands[i].name, commands[i].what);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "error: no command given (verifier --help lists them)\n");
		return 1;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
		return usage();
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].main(argc - 1, argv + 1);
	fprintf(stderr, "error: unknown command '%s' (verifier --help lists them)\n", argv[1]);
	return 1;
}
