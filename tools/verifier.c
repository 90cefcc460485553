/*
 * tools/verifier.c — build/host/verifier: checks attestation evidence from an
 * llmk guest (or real SEV-SNP / TDX evidence), computes expected measurements
 * offline, and releases model keys to attested guests (docs/attestation.md,
 * docs/verify-snp-tdx.md). One entry function per subcommand, each in
 * tools/verify/cmd_*.c; the checks are the library in tools/verify/.
 *
 * Exit 0 when everything checked out, 1 with one "error:" line (on stderr)
 * otherwise.
 */
#include <stdio.h>
#include <string.h>

#include "verify/cmd.h"
#include "verify/cmd_measure_snp.h"
#include "verify/verify.h"

static const struct {
	const char *name, *sub; /* sub: second word for `measure X` */
	int (*run)(int argc, char **argv);
	const char *help;
} verifier_cmds[] = {
	{"vtpm", NULL, verify_cmd_vtpm, "vtpm --evidence FILE --nonce HEX [--expect-pcr4 HEX] "
	 "[--expect-model SHA256] [--expect-config FILE|SHA256] [--ek-ca PEM] [--export DIR]"},
	{"wrap", NULL, verify_cmd_wrap, "wrap --evidence FILE --nonce HEX --key-file model.key "
	 "[--expect-model SHA256] [--expect-config FILE|SHA256] and, by provider, --expect-pcr4 HEX (vtpm), --expect-measurement "
	 "HEX --chain ARK.pem (snp), --expect-mrtd HEX --chain ROOT.pem (tdx)"},
	{"snp", NULL, verifier_snp_main, "snp --report report.bin --vcek vcek.der --chain "
	 "ask_ark.pem [...]   (an AMD SEV-SNP report; snp --help)"},
	{"snp", NULL, verifier_snp_main, "snp --evidence FILE --nonce HEX --chain ark.pem [...]   "
	 "(an llmk bundle from provider snp)"},
	{"tdx", NULL, verifier_tdx_main, "tdx --quote quote.bin --chain pck_chain.pem [...]   "
	 "(an Intel TDX quote v4; tdx --help)"},
	{"tdx", NULL, verifier_tdx_main, "tdx --evidence FILE --nonce HEX --chain ROOT.pem [...]   "
	 "(an llmk bundle from provider tdx)"},
	{"tls", NULL, verify_cmd_tls, "tls --connect HOST:PORT [--expect-pcr4 HEX --ek-ca PEM] "
	 "[--expect-model SHA256] [...]   (attested TLS with a guest's serve; tls --help)"},
	{"measure", "pcr4", verify_cmd_measure_pcr4, "measure pcr4 FILE.efi"},
	{"measure", "snp", verifier_measure_snp_main, "measure snp --ovmf OVMF.fd --vcpus N "
	 "--vcpu-sig 0x800F12 --guest-features 0x21 [--kernel FILE --initrd FILE --append TEXT]"},
};
#define N_CMDS (sizeof verifier_cmds / sizeof verifier_cmds[0])

static int usage(void)
{
	printf("usage:\n");
	for (size_t i = 0; i < N_CMDS; i++)
		printf("  verifier %s\n", verifier_cmds[i].help);
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
	for (size_t i = 0; i < N_CMDS; i++) {
		if (strcmp(argv[1], verifier_cmds[i].name) != 0)
			continue;
		if (!verifier_cmds[i].sub)
			return verifier_cmds[i].run(argc - 1, argv + 1);
		if (argc >= 3 && !strcmp(argv[2], verifier_cmds[i].sub))
			return verifier_cmds[i].run(argc - 2, argv + 2);
	}
	fprintf(stderr, "error: unknown command '%s%s%s' (verifier --help lists them)\n", argv[1],
	       argc >= 3 ? " " : "", argc >= 3 ? argv[2] : "");
	return 1;
}
