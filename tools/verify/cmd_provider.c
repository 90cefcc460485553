/*
 * tools/verify/cmd_provider.c — the options and checks of whichever
 * provider a bundle names (verify.h): `verifier wrap` and `llmctl
 * --connect` read the PROVIDER record first, then take that provider's
 * options and run its checks, as `verifier vtpm`, `snp --evidence` or
 * `tdx --evidence` would.
 */
#include "verify.h"

#include <stdlib.h>

int provider_cli_opt(struct provider_cli *o, int kind, int argc, char **argv, int *i)
{
	switch (kind) {
	case PLAT_ATTEST_VTPM:
		return vtpm_cli_opt(&o->vtpm, argc, argv, i);
	case PLAT_ATTEST_SNP:
		return snp_cli_opt(&o->snp, argc, argv, i);
	default:
		return tdx_cli_opt(&o->tdx, argc, argv, i);
	}
}

int provider_cli_verify(const struct provider_cli *o, int kind, struct bundle *b)
{
	static struct vtpm_result res;
	uint8_t *bytes = NULL;
	int r;

	switch (kind) {
	case PLAT_ATTEST_VTPM:
		r = vtpm_cli_verify(&o->vtpm, &bytes, &res);
		*b = res.b;
		free(bytes);
		return r;
	case PLAT_ATTEST_SNP:
		return snp_cli_evidence(&o->snp, b);
	default:
		return tdx_cli_evidence(&o->tdx, b);
	}
}

const struct bundle_cli *provider_cli_bundle(const struct provider_cli *o, int kind)
{
	return kind == PLAT_ATTEST_VTPM ? &o->vtpm.b : kind == PLAT_ATTEST_SNP ? &o->snp.b
									       : &o->tdx.b;
}
