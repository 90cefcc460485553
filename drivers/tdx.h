/*
 * drivers/tdx.h — the Intel TDX guest (drivers/tdx.c): detection, TDREPORT,
 * RTMR3 extension and GetQuote. Entry points for kernel/attest.c.
 */
#ifndef LLMK_TDX_H
#define LLMK_TDX_H

#include "../kernel/attest.h"

/* Fill out (kind PLAT_ATTEST_TDX): present when CPUID leaf 0x21 says
 * "IntelTDX    "; detail says what, or why not (the CPUID result). */
int tdx_probe(struct plat_attest_info *out);
/* TDX_REPORT (TDG.MR.REPORT over report_data) and TDX_QUOTE (GetQuote
 * through the host's quoting service; left out with a note in tdx_error()
 * when the host has none) appended as records. -LLMK_ENOENT when absent. */
int tdx_evidence(const uint8_t report_data[64], uint8_t *buf, size_t cap, size_t *len);
/* TDG.MR.RTMR.EXTEND of a SHA-256 digest (zero-padded to 48 bytes) into RTMR3. */
int tdx_extend_rtmr3(const uint8_t digest[32]);
/* Make [p, p + n) (page-aligned) shared with the VMM (MapGPA, the shared
 * bit set in the page tables) and zero it: for drivers/cc_pages.c's DMA
 * pool and the GetQuote buffer. -LLMK_EINVAL when this is not a TD. */
int tdx_share(void *p, size_t n);
/* The shared bit (GPA bit GPAW-1), 0 when this is not a TD. */
uint64_t tdx_shared_bit(void);
const char *tdx_error(void);

#endif
