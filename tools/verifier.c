/*
 * tools/verifier.c — build/host/verifier: check attestation evidence and
 * compute expected measurements offline. Each subcommand lives in its own
 * file under tools/verify/; this only dispatches.
 *
 *   verifier measure snp ...   the SEV-SNP launch digest (docs/measure-snp.md)
 */
#include <stdio.h>
#include <string.h>

#include "verify/cmd_measure_snp.h"

static const char usage[] =
	"usage: verifier measure snp --ovmf FILE --vcpus N --vcpu-sig SIG --guest-features F\n"
	"                            [--kernel FILE [--initrd FILE] [--append TEXT]]\n"
	"       verifier COMMAND --help\n";

int main(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "measure") && !strcmp(argv[2], "snp"))
		return verifier_measure_snp_main(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "measure"))
		fprintf(stderr, "error: unknown measurement '%s' (want: snp)\n",
			argc >= 3 ? argv[2] : "");
	else
		fprintf(stderr, "error: unknown command '%s' (verifier --help)\n",
			argc >= 2 ? argv[1] : "");
	return 1;
}
