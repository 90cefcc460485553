/*
 * drivers/sev_snp.h — the SEV-SNP guest (drivers/sev_snp.c): detection, the
 * GHCB, and SNP guest requests through drivers/snp_guest_msg.c. Entry
 * points for the kernel's attestation dispatch (kernel/attest.c).
 */
#ifndef LLMK_SEV_SNP_H
#define LLMK_SEV_SNP_H

#include "../kernel/attest.h"

/* Fill out (kind PLAT_ATTEST_SNP): present only when CPUID 0x8000001F and
 * SEV_STATUS say SNP is active, the CC blob names a secrets page and the
 * GHCB is set up; detail says what, or why not. Sets up the driver on the
 * first call (after mem_init). Returns 0 when present, -LLMK_ENOENT when
 * not. Safe on any x86_64 (SEV_STATUS is read only when CPUID says SEV). */
int sev_snp_probe(struct plat_attest_info *out);
/* SNP_REPORT (extended request: SNP_CERTS when the host has them) over
 * report_data, appended as records. -LLMK_ENOENT when absent. */
int sev_snp_evidence(const uint8_t report_data[64], uint8_t *buf, size_t cap, size_t *len);
/* Make a 2 MiB-aligned 2 MiB block of private memory shared with the host
 * (PVALIDATE rescind, page state change, C-bit cleared) and zero it: for
 * drivers/cc_pages.c's DMA pool. -LLMK_EINVAL when this is not an SEV-SNP
 * guest; on other errors part of the block may be shared already. */
int sev_snp_share(void *block);
/* The shared pages of the driver's own block it does not use, handed over
 * once (the DMA pool takes them, drivers/cc_pages.c); 0 when none. */
size_t sev_snp_spare(void **p);
/* plat_attest_guest_key for SEV-SNP (MSG_KEY_REQ), through
 * kernel/attest.c's provider table. */
int sev_snp_guest_key(const struct plat_attest_key_req *req, uint8_t key[32], char *err,
		      size_t errn);
/* Why the last call failed (one line). */
const char *sev_snp_error(void);

#endif
