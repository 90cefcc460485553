/*
 * shell/attest_state.c — the attestation commands' shared state
 * (shell/attest_state.h): allocated on first use; the key pair made, and
 * dropped with what was issued with it.
 */
#include "attest_state.h"
#include "cmd_attest.h"

#include <bearssl.h>

#include "../llm/seal.h"

struct attest_shell *shell_attest_state(struct shell *sh)
{
	if (!sh->attest)
		sh->attest = plat_alloc(sizeof(struct attest_shell), 64);
	return sh->attest;
}

void shell_attest_drop_pair(struct attest_shell *s)
{
	seal_zeroize(s->priv, sizeof s->priv);
	seal_zeroize(s->issued, sizeof s->issued);
	s->n_issued = 0;
	s->have_pair = false;
}

void shell_attest_forget(struct shell *sh)
{
	if (sh->attest)
		shell_attest_drop_pair(sh->attest);
}

/* RFC 7748 §6.1: private key 32 random bytes (X25519 clamps them), public
 * key X25519(private, 9). */
int shell_attest_pair(struct attest_shell *s)
{
	const br_ec_impl *ec = br_ec_get_default();

	if (s->have_pair)
		return 0;
	if (!(ec->supported_curves & (1u << BR_EC_curve25519)) || plat_entropy(s->priv, 32))
		return -LLMK_EIO;
	if (ec->mulgen(s->pub, s->priv, 32, BR_EC_curve25519) != 32) {
		seal_zeroize(s->priv, sizeof s->priv);
		return -LLMK_EIO;
	}
	s->have_pair = true;
	return 0;
}
