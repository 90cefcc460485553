/*
 * shell/attest_unwrap.c — the key release behind `unseal --wrapped`
 * (shell/cmd_attest.h, docs/attestation.md "Key release"): a key-wrap blob
 * opens only against report data `attest` issued with this boot's current
 * key pair (shell/attest_state.h), and only once.
 */
#include "attest_state.h"
#include "cmd_attest.h"
#include "../kernel/attest.h"

#include <bearssl.h>

#include "../llm/seal.h"
#include "keywrap.h"

int shell_attest_unwrap(struct shell *sh, const uint8_t *blob, size_t n, uint8_t key[32],
			char *how, size_t hown, char *err, size_t errn)
{
	struct attest_shell *s = shell_attest_state(sh);

	memset(key, 0, 32);
	if (!s) {
		plat_snprintf(err, errn, "no memory for the attestation state");
		return -LLMK_ENOMEM;
	}
	uint8_t rd[64], id[SEAL_KEY_ID_SIZE], h[32];
	char what[160], idhex[2 * SEAL_KEY_ID_SIZE + 1], pname[16], hhex[65];
	int i, e;

	if (!s->have_pair || s->n_issued == 0) {
		plat_snprintf(err, errn, "no evidence was produced with this boot's key pair since the "
			      "last release (run attest first)");
		return -LLMK_ENOENT;
	}
	const uint8_t *cred;
	size_t cred_n;
	if (keywrap_parse(blob, n, rd, &cred, &cred_n)) {
		plat_snprintf(err, errn, "not a key-wrap blob (%u to %u bytes, magic %s)",
			      KEYWRAP_MIN, KEYWRAP_MAX, KEYWRAP_MAGIC);
		return -LLMK_EFORMAT;
	}
	/* which evidence it claims to be for (nothing is trusted before the tag) */
	for (i = s->n_issued - 1; i >= 0; i--)
		if (memcmp(s->issued[i].rd, rd, 64) == 0)
			break;
	if (i < 0) {
		plat_snprintf(err, errn, "refused: made for report data this key pair's attest never "
			      "produced");
		return -LLMK_EAUTH;
	}
	/* vtpm evidence: the key opens only with the credential's secret, which
	 * this TPM gives only if the AK the verifier named lives in it beside the
	 * certified EK (a quote by any other key gets nothing) */
	uint8_t secret[KEYWRAP_SECRET_MAX];
	size_t secret_n = 0;
	if (s->issued[i].kind == PLAT_ATTEST_VTPM) {
		if (!cred_n) {
			plat_snprintf(err, errn, "refused: vtpm evidence needs a TPM credential in the "
				      "blob (a verifier that did not activate the AK)");
			return -LLMK_EAUTH;
		}
		if ((e = plat_attest_activate(PLAT_ATTEST_VTPM, cred, cred_n, secret, sizeof secret,
					      &secret_n))) {
			seal_zeroize(secret, sizeof secret);
			plat_snprintf(err, errn, "refused: the credential does not open in this TPM (%s)",
				      plat_attest_error());
			return -LLMK_EAUTH;
		}
	} else if (cred_n) {
		plat_snprintf(err, errn, "refused: a TPM credential for %s evidence",
			      s->issued[i].kind == PLAT_ATTEST_SNP ? "snp" : "tdx");
		return -LLMK_EAUTH;
	}
	e = keywrap_unwrap(s->priv, s->pub, blob, n, secret, secret_n, rd, key);
	seal_zeroize(secret, sizeof secret);
	if (e) {
		plat_snprintf(err, errn, "refused: it does not open with this boot's current key pair "
			      "(made for another boot or an earlier pair, or altered)");
		return e;
	}
	struct plat_attest_info info;
	if (s->issued[i].kind == PLAT_ATTEST_NONE || plat_attest_info(s->issued[i].kind, &info)) {
		seal_zeroize(key, 32);
		plat_snprintf(err, errn, "refused: made for evidence of provider none, which attests "
			      "nothing");
		return -LLMK_EAUTH;
	}
	plat_snprintf(pname, sizeof pname, "%s", info.name);
	seal_key_id(key, id);
	seal_hex(id, sizeof id, idhex);
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, blob, n);
	br_sha256_out(&c, h);
	/* every kernel event's text ends with its digest, so a verifier can
	 * check that what the log says is what was extended */
	plat_snprintf(what, sizeof what, "llmk key-release %s key-id %s blob %s", pname, idhex,
		      seal_hex(h, 32, hhex));
	if ((e = plat_attest_extend(what, h))) {
		seal_zeroize(key, 32);
		plat_snprintf(err, errn, "measuring the release: %s", plat_attest_error());
		return e;
	}
	plat_snprintf(how, hown, "%s%s", pname, s->issued[i].simulated ? ", simulated" : "");
	shell_attest_drop_pair(s); /* a new pair at the next attest: this blob never opens again */
	return 0;
}
