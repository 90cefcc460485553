/*
 * drivers/tcg_log.h — TCG event logs in the crypto-agile format (TCG PC
 * Client Platform Firmware Profile 1.05, §10.2): the firmware's, handed
 * over by UEFI, and the kernel's own records of what it measured.
 *
 * A firmware log starts with a TCG_PCR_EVENT (SHA-1 format, §10.2.1) that
 * carries the TCG_EfiSpecIDEvent (§10.4.5.1: which digests each record
 * holds and their sizes); TCG_PCR_EVENT2 records (§10.2.2) follow. The
 * kernel's records are TCG_PCR_EVENT2 alone, with one SHA-256 digest.
 * All fields little-endian. Portable (platform.h and BearSSL).
 */
#ifndef LLMK_TCG_LOG_H
#define LLMK_TCG_LOG_H

#include "../kernel/platform.h"

/* §10.4.1 event types */
#define TCG_EV_NO_ACTION 0x00000003u
#define TCG_EV_EVENT_TAG 0x00000006u

#define TCG_LOG_ALGS 8      /* digests a record may carry, at most */
#define TCG_LOG_PCRS 24

/* The Spec ID event's algorithm table. */
struct tcg_log_algs {
	int n;
	uint16_t id[TCG_LOG_ALGS];   /* TPM_ALG_ID */
	uint16_t size[TCG_LOG_ALGS]; /* bytes */
};

/* The header of a firmware log: its TCG_PCR_EVENT with a Spec ID event
 * (signature "Spec ID Event03"). *hdr_len: where the first
 * TCG_PCR_EVENT2 starts. -LLMK_EFORMAT with why in err. */
int tcg_log_header(const uint8_t *p, size_t n, struct tcg_log_algs *algs, size_t *hdr_len,
		   char *err, size_t errn);
/* The length of the TCG_PCR_EVENT2 at p (n bytes readable from p), each
 * digest sized by algs. -LLMK_EFORMAT if it does not fit or names an
 * algorithm algs lacks. */
int tcg_log_event_len(const uint8_t *p, size_t n, const struct tcg_log_algs *algs, size_t *len);
/* Append a TCG_PCR_EVENT2 with one SHA-256 digest and n bytes of event
 * data. -LLMK_ERANGE if it does not fit (buf unchanged). */
int tcg_log_append(uint8_t *buf, size_t cap, size_t *len, uint32_t pcr, uint32_t type,
		   const uint8_t digest[32], const void *data, size_t n);
/*
 * Replay the SHA-256 digests of records into pcrs (TCG_LOG_PCRS values,
 * the caller's starting state: zeros after a reset). With header, p starts
 * with a firmware log's header; without, it is bare TCG_PCR_EVENT2 records
 * with one SHA-256 digest each (the kernel's). EV_NO_ACTION records extend
 * nothing; a StartupLocality one (§10.4.5.3) sets PCR 0's starting value.
 * Returns the number of records, or -LLMK_EFORMAT with why in err.
 */
int tcg_log_replay(const uint8_t *p, size_t n, bool header, uint8_t pcrs[TCG_LOG_PCRS][32],
		   char *err, size_t errn);

#endif
