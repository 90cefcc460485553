/*
 * drivers/cc_pages.h — which confidential computing this guest runs under,
 * and the pages it shares with its host (drivers/cc_pages.c, x86_64).
 *
 * In an SEV or TDX guest memory is private by default: a device (the host's
 * virtio emulation) reads and writes only pages the guest shared, through
 * their guest-physical address with the C-bit clear (SEV; SEV-SNP also
 * changes the page's RMP state) or the shared bit set (TDX, after MapGPA).
 * The identity map the firmware left is kept, and the one 4 KiB entry of
 * each shared page is edited in place, larger pages being split first
 * (kernel/x86_64/pgtable.h).
 *
 * On a machine that is not confidential nothing here changes anything:
 * cc_dma_alloc is plat_alloc and no bounce buffer is used.
 */
#ifndef LLMK_CC_PAGES_H
#define LLMK_CC_PAGES_H

#include "../kernel/platform.h"

enum cc_kind {
	CC_NONE = 0,
	CC_SEV,     /* SEV_STATUS bit 0: memory encrypted */
	CC_SEV_ES,  /* bit 1: registers too (#VC) */
	CC_SEV_SNP, /* bit 2: and the RMP (page validation, SNP guest requests) */
	CC_TDX,     /* CPUID 0x21 "IntelTDX    " */
};

/* After mem_init, before the devices: detect, bring up the technology's
 * guest driver (drivers/sev_snp.c: the GHCB; drivers/tdx.c: the shared
 * bit) and print one "cc:" line saying what this guest is (nothing when it
 * is not confidential). */
void cc_init(void);
int cc_kind(void);          /* enum cc_kind; CC_NONE before cc_init */
const char *cc_name(void);  /* "SEV-SNP", ..., "" for CC_NONE */

/*
 * Memory a device reads or writes (virtqueues, request headers, bounce
 * buffers), page-aligned and zeroed. A normal machine: plat_alloc(size,
 * PAGE_SIZE). A confidential guest: pages shared with the host, from a pool
 * that grows by 2 MiB blocks made shared as a whole and is never given back
 * (devices keep their rings for the whole boot). NULL when out of memory,
 * when size is over 2 MiB, or when this guest cannot share pages (cc_init
 * said why).
 */
void *cc_dma_alloc(size_t size);
/* True when devices may only touch cc_dma_alloc'd memory, so data buffers
 * go through a bounce buffer. False on a normal machine. */
bool cc_dma_bounce(void);
/* Whether device registers at [addr, addr + len) are shared with the host
 * in the page tables we keep: every page mapped at its own address with
 * the C-bit clear (SEV) or the shared bit set (TDX), as the firmware maps
 * MMIO. An address the host gave that our tables map private would make
 * every store there a write into private memory, without a trap. True on
 * a machine that is not confidential; false for a range of more than
 * 64 Ki pages. */
bool cc_mmio_shared(uint64_t addr, uint64_t len);
#endif
