/*
 * drivers/cc_pages.h — pages a confidential guest shares with its host
 * (drivers/cc_pages.c, x86_64): the identity map the firmware left is kept,
 * and the one 4 KiB entry of each shared page is edited in place, larger
 * pages being split first (Intel SDM Vol. 3A §4.5, AMD APM Vol. 2 §5.3).
 * Used by drivers/sev_snp.c (clear the C-bit) and drivers/tdx.c (set the
 * shared GPA bit).
 */
#ifndef LLMK_CC_PAGES_H
#define LLMK_CC_PAGES_H

#include "../kernel/platform.h"

/* For the 4 KiB page at va (identity-mapped): clear the bits in clear and
 * set those in set in its page-table entry (splitting 1 GiB / 2 MiB pages
 * on the way, the new tables private: table_bits is set in every entry that
 * points at one), then flush it from the TLB. addr_mask: the bits of an
 * entry that are the physical address. -LLMK_ENOMEM when a table cannot be
 * allocated, -LLMK_EINVAL when va is not mapped. */
int cc_page_remap(uint64_t va, uint64_t clear, uint64_t set, uint64_t table_bits,
		  uint64_t addr_mask);

#endif
