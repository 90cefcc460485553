/*
 * shell/attest_state.h — the state the attestation commands share: the
 * guest's ephemeral key pair and the report data issued with it (`attest`,
 * shell/cmd_attest.c; `unseal --wrapped`, shell/attest_unwrap.c), and the
 * loaded model's measurement (shell/attest_measure.c). Only those files
 * include it; the rest of the shell goes through shell/cmd_attest.h.
 */
#ifndef SHELL_ATTEST_STATE_H
#define SHELL_ATTEST_STATE_H

#include "shell.h"

#define ATTEST_ISSUED 8 /* report data remembered for `unseal --wrapped` */

struct attest_shell {
	bool have_pair;
	uint8_t priv[32], pub[32];
	/* report data `attest` produced with this pair, newest last */
	struct {
		uint8_t rd[64];
		int kind;
		bool simulated;
	} issued[ATTEST_ISSUED];
	int n_issued;
	/* the loaded model's measurement, as extended */
	bool measured;
	int disk;
	uint8_t digest[32];
	char source[80];
	/* a measurement the engine reported and the extend refused: its error */
	int extend_err;
	bool loading; /* inside `load` (the report names it) */
};

/* sh's state, allocated the first time; NULL when there is no memory. */
struct attest_shell *shell_attest_state(struct shell *sh);

/* Make the X25519 key pair if there is none (RFC 7748 §6.1); 0 or
 * -LLMK_EIO (no entropy). */
int shell_attest_pair(struct attest_shell *s);

/* Zeroize the pair and what was issued with it. */
void shell_attest_drop_pair(struct attest_shell *s);

/*
 * The digest `attest` reports: disk >= 0 that disk's (a sealed image's
 * header digest, else SHA-256 of the GGUF's bytes up to its extent), else
 * the loaded model's (its measurement completed first if the first pass has
 * not), else the first sealed disk's, else zeros; src says which. 0, or
 * one error line "attest: ..." and -LLMK_E*.
 */
int shell_attest_model_digest(struct shell *sh, int disk, uint8_t out[32], char *src,
			      size_t srcn);

#endif
