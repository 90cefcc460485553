/*
 * tools/verify/release.c — what a verifier adds to anything it releases to
 * a guest whose evidence verified (a wrapped model key, a session's keys):
 * for vtpm evidence, a TPM credential (TPM 2.0 Part 1 §24) made for the
 * certified EK and the name of the AK that signed the quote, over a fresh
 * secret that goes into the release's key schedule. A quote proves only
 * that the key in the bundle signed it; the credential opens only in a TPM
 * that holds both that AK and the EK its certificate names, so a software
 * key with the AK's template gets nothing. SEV-SNP and TDX reports are
 * signed by the hardware's own chain: nothing to add.
 */
#include "verify.h"
#include "tpm_credential.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

int release_credential(const struct bundle *b, uint8_t *cred, size_t cap, size_t *cred_n,
		       uint8_t secret[RELEASE_SECRET], size_t *secret_n)
{
	uint8_t rnd[64];
	char err[300];

	*cred_n = *secret_n = 0;
	if (b->kind != PLAT_ATTEST_VTPM)
		return 0;
	if (!b->tpm_ek_pub_len)
		return cmd_fail("vtpm evidence: --ek-ca is required to release anything: only a "
				"certified EK proves the AK lives in a TPM (credential activation)");
	if (getrandom(secret, RELEASE_SECRET, 0) != RELEASE_SECRET ||
	    getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return cmd_fail("no randomness from getrandom: %s", strerror(errno));
	int n = tpm_credential_make(b->tpm_ek_pub, b->tpm_ek_pub_len, b->tpm_ak_name,
				    sizeof b->tpm_ak_name, secret, RELEASE_SECRET, rnd, cred, cap,
				    err, sizeof err);
	memset(rnd, 0, sizeof rnd);
	if (n < 0) {
		memset(secret, 0, RELEASE_SECRET);
		return cmd_fail("credential for the AK: %s", err);
	}
	*cred_n = (size_t)n;
	*secret_n = RELEASE_SECRET;
	return 0;
}
