/*
 * shell/cmd_attest.h — `attest`, and what the other commands ask of it:
 * the measurement of a loaded model (`load`, shell/attest_measure.c), the
 * unwrapping of a model key released against attestation (`unseal
 * --wrapped`, shell/attest_unwrap.c), evidence for a key pair not attest's
 * own (shell_attest_bundle), and forgetting the guest's ephemeral key pair
 * (`reboot`, `poweroff`).
 *
 * The key pair (X25519) is made from plat_entropy() the first time it is
 * needed; its public half goes into every report data (shell/evidence.h),
 * its private half never leaves this module and is zeroized when replaced.
 */
#ifndef SHELL_CMD_ATTEST_H
#define SHELL_CMD_ATTEST_H

#include "shell.h"

/*
 * The loaded model's measurement (shell/attest_measure.c). Before a `load`
 * (shell_attest_model_loading): the engine is told to report the model's
 * digest (cfg->on_measured; a sealed image's header digest, else SHA-256 of
 * the GGUF's bytes as the engine read them, llm/measure.h), which is then
 * extended into the attestation service (plat_attest_extend, "llmk model
 * <hex>") and kept for `attest`. A streamed plain model the engine measures
 * with its first pass is extended as that pass completes it, or when
 * `attest` asks for it first (engine_measure). After a successful load
 * (shell_attest_measure_model): a refused extend's error, or a GGUF with no
 * tensor data hashed from its disk and extended. Each prints one error
 * line and returns -LLMK_E* on failure.
 */
struct engine_config;
int shell_attest_model_loading(struct shell *sh, struct engine_config *cfg);
int shell_attest_measure_model(struct shell *sh);

/*
 * The model key in a key-wrap blob (docs/attestation.md, "Key release"),
 * accepted only if its report data is one `attest` produced with the
 * current key pair and a provider other than none. The release is measured
 * ("llmk key-release <provider> key-id <hex>"), then the key pair is
 * replaced, so the same blob is never accepted twice. how gets what
 * released it ("vtpm", "vtpm, simulated"). -LLMK_EFORMAT / -LLMK_EAUTH /
 * -LLMK_ENOENT / -LLMK_ENOTSUP with why in err (no "error:"); key zeroed.
 */
int shell_attest_unwrap(struct shell *sh, const uint8_t *blob, size_t n, uint8_t key[32],
			char *how, size_t hown, char *err, size_t errn);

/*
 * Evidence for a key pair that is not attest's own (a confidential
 * session's, shell/session.c): in->nonce, nonce_len and pubkey are the
 * caller's; the model digest (as `attest` reports it, src says whence), the
 * build id and the config digest (sh->config_digest) are filled in. Provider `provider`, or the default when
 * NULL; info says which. On success *buf (EVIDENCE_MAX bytes from
 * plat_alloc, the caller plat_frees it) holds *len bytes and rd the report
 * data. On failure one error line starting "what: ", and -LLMK_E*.
 */
struct evidence_inputs;
struct plat_attest_info;
int shell_attest_bundle(struct shell *sh, const char *what, const char *provider,
			struct evidence_inputs *in, struct plat_attest_info *info, uint8_t **buf,
			size_t *len, uint8_t rd[64], char *src, size_t srcn);

/* The line "  config       <hex> (...)" of attest's and session's summaries. */
void shell_attest_print_config(struct shell *sh);

/* Zeroize the key pair and what was issued with it (before a reset). */
void shell_attest_forget(struct shell *sh);

#endif
