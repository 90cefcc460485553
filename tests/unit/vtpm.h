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

#endif
