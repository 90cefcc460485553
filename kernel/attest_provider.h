/*
 * kernel/attest_provider.h — what kernel/attest_dispatch.c, which
 * implements kernel/attest.h once for both builds, needs from a build: its
 * providers as one const table (a row per PLAT_ATTEST_* kind: its name, its
 * place in the default order, its operations) and its run-time event log.
 * The kernel's are in kernel/attest.c (drivers/), the host build's in
 * tools/host/attest.c (swtpm, simulators); what `none` does (present, no
 * quote or report) is the dispatcher's own.
 *
 * Conventions as platform.h: 0 or a negative LLMK_E* code.
 */
#ifndef LLMK_ATTEST_PROVIDER_H
#define LLMK_ATTEST_PROVIDER_H

#include "attest.h"

struct tpm2_attest;

struct attest_provider {
	const char *name;  /* "none", "vtpm", "snp", "tdx": also the PROVIDER record */
	/* plat_attest_default's preference among the present providers, 1
	 * first; 0 never (none, the fallback) */
	int order;
	/* Fill out's present, simulated and detail (what it is, or why it is
	 * absent); out comes zeroed. 0 present, -LLMK_ENOENT absent. */
	int (*probe)(struct plat_attest_info *out);
	/* As plat_attest_evidence, for a present provider. */
	int (*evidence)(const uint8_t report_data[64], uint8_t *buf, size_t cap, size_t *len);
	/* The TPM 2.0 behind the provider (drivers/tpm2_attest.h), or NULL:
	 * credential activation, the PLAT_ATTEST_PCR extend and the reason of
	 * a failure go through it. */
	struct tpm2_attest *tpm;
	/* Without a TPM: extend a run-time measurement into the provider's
	 * measured register (NULL when it has none after launch), and why its
	 * last failing call failed (one line, no "error:"). */
	int (*extend)(const uint8_t digest[32]);
	const char *(*error)(void);
	/* As plat_attest_guest_key for this kind; NULL when it derives none. */
	int (*guest_key)(const struct plat_attest_key_req *req, uint8_t key[32], char *err,
			 size_t errn);
};

/* Rows without probe: none's (the dispatcher's own), or a kind the build
 * does not have. The rows' names and orders are the same in every build. */
#define ATTEST_ROW_NONE {"none", 0, NULL, NULL, NULL, NULL, NULL, NULL}

/* The build's row of kind (the table, indexed by PLAT_ATTEST_*); NULL for
 * a kind out of range. */
const struct attest_provider *attest_provider(int kind);

/* The run-time event log: TCG_PCR_EVENT2 records of the measurements
 * plat_attest_extend made (PLAT_ATTEST_PCR). */
struct attest_log {
	uint8_t *buf;
	size_t len, cap;
};
/* The build's log with room for n more bytes (grown where the build can):
 * 0 with *log set, or -LLMK_E* with why in err. */
int attest_log_room(size_t n, struct attest_log **log, char *err, size_t errn);

#endif
