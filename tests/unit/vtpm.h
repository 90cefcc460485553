/*
 * tests/unit/vtpm.h — the swtpm the unit tests share: $LLMK_VTPM if set,
 * else one started on first use by tools/tpm.sh (manufactured with EK
 * certificates) in a scratch directory and stopped at exit.
 */
#ifndef TEST_VTPM_H
#define TEST_VTPM_H

#include <stddef.h>

/* The path of swtpm's command socket, or NULL with why in why. swtpm serves
 * one client at a time: close a connection before the next test opens one. */
const char *test_vtpm_path(char *why, size_t n);

/* LLMK_VTPM set to value (NULL: unset), then the attestation provider
 * reset; what it was before, for vtpm_env_restore (malloc'd; NULL: unset). */
char *vtpm_env_set(const char *value);
void vtpm_env_restore(char *old);

/* The bytes of an output's "<label><base64>" line (malloc'd), or NULL. */
#include <stdint.h>
uint8_t *test_decode_line(const char *out, const char *label, size_t *n);

/* What a verifier keeps of a vtpm bundle that verified (tools/verify's
 * struct bundle: report data, guest key, the EK and the AK's name for
 * credential activation), taken from ev[0..n) without the checks (the host
 * build's evidence has no firmware log; test_verify_vtpm.c checks). 0 or -1. */
struct bundle;
int test_vtpm_bundle(const uint8_t *ev, size_t n, struct bundle *b);

#endif
