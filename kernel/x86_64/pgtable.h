/*
 * kernel/x86_64/pgtable.h — the identity map the kernel runs on, read and
 * edited in place (kernel/x86_64/pgtable.c; Intel SDM Vol. 3A §4.5, AMD APM
 * Vol. 2 §5.3): for the pages a confidential guest shares with its host
 * (drivers/cc_pages.c, sev_snp.c, tdx.c) and the #VC handler's check that
 * an MMIO address is shared (vc.c). It calls none of them.
 */
#ifndef KERNEL_X86_64_PGTABLE_H
#define KERNEL_X86_64_PGTABLE_H

#include <stdint.h>

/* For the 4 KiB page at va (identity-mapped): clear the bits in clear and
 * set those in set in its page-table entry (splitting 1 GiB / 2 MiB pages
 * on the way, the new tables private: table_bits is set in every entry that
 * points at one), then flush it from the TLB. addr_mask: the bits of an
 * entry that are the physical address. -LLMK_ENOMEM when a table cannot be
 * allocated, -LLMK_EINVAL when va is not mapped. */
int cc_page_remap(uint64_t va, uint64_t clear, uint64_t set, uint64_t table_bits,
		  uint64_t addr_mask);
/* The page-table entry that maps va (at whatever level), and the size of
 * the page it maps; -LLMK_EINVAL when va is not mapped. Reads only. */
int cc_page_entry(uint64_t va, uint64_t addr_mask, uint64_t *pte, uint64_t *page_size);

#endif
