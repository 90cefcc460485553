/*
 * kernel/x86_64/pgtable.c — reading and editing the identity map the
 * kernel runs on (pgtable.h): the one owner of the page tables, for the
 * confidential guests' shared pages (drivers/cc_pages.c, sev_snp.c, tdx.c)
 * and the #VC handler's MMIO check (vc.c).
 *
 * The firmware's page tables may be read-only (edk2 protects its page table
 * pool when NX or heap guard is on), so CR0.WP is cleared around the
 * writes. Only the boot CPU's TLB is flushed: a confidential guest runs on
 * the boot CPU alone (kernel/x86_64/smp.c starts no APs there).
 */
#include "../kernel.h"
#include "x86.h"
#include "pgtable.h"

#define PTE_P (1ull << 0)
#define PTE_RW (1ull << 1)
#define PTE_US (1ull << 2)
#define PTE_PS (1ull << 7)   /* in a PDPTE / PDE: a 1 GiB / 2 MiB page */
#define PTE_PAT_4K (1ull << 7)
#define PTE_PAT_BIG (1ull << 12)
#define PTE_NX (1ull << 63)
#define CR0_WP (1ull << 16)
#define CR4_PGE (1ull << 7)
#define CR4_LA57 (1ull << 12)

static uint64_t read_cr3(void)
{
	uint64_t v;
	__asm__ volatile("mov %%cr3, %0" : "=r"(v));
	return v;
}

static void flush_all(void)
{
	uint64_t cr4 = read_cr4();
	if (cr4 & CR4_PGE) {
		write_cr4(cr4 & ~CR4_PGE); /* SDM §4.10.4.1: also drops global entries */
		write_cr4(cr4);
	} else {
		__asm__ volatile("mov %0, %%cr3" : : "r"(read_cr3()) : "memory");
	}
}

/* Replace the large page *e (size bytes, level's child size sub) by a table
 * of 512 children with the same attributes. */
static int split(uint64_t *e, uint64_t sub, uint64_t table_bits, uint64_t addr_mask)
{
	uint64_t old = *e, base = old & addr_mask & ~(sub * 512 - 1);
	uint64_t *t = plat_alloc(PAGE_SIZE, PAGE_SIZE);
	/* attributes: the low flags, NX, and whatever else is not address (the
	 * C-bit or the shared bit); PAT moves from bit 12 to bit 7 for 4 KiB */
	uint64_t attr = old & ~addr_mask & ~PTE_PAT_BIG;

	if (!t)
		return -LLMK_ENOMEM;
	if (sub == PAGE_SIZE) {
		attr &= ~PTE_PS;
		if (old & PTE_PAT_BIG)
			attr |= PTE_PAT_4K;
	} else if (old & PTE_PAT_BIG) {
		attr |= PTE_PAT_BIG;
	}
	for (uint64_t i = 0; i < 512; i++)
		t[i] = (base + i * sub) | attr;
	*e = ((uint64_t)(uintptr_t)t & addr_mask) | PTE_P | PTE_RW | (old & PTE_US) | table_bits;
	return 0;
}

/* The top level's shift: PML5 (bits 56:48) with 5-level paging, else PML4. */
static int top_shift(void)
{
	return (read_cr4() & CR4_LA57) ? 48 : 39;
}

int cc_page_entry(uint64_t va, uint64_t addr_mask, uint64_t *pte, uint64_t *page_size)
{
	const uint64_t *tab = (const uint64_t *)(uintptr_t)(read_cr3() & addr_mask);

	for (int shift = top_shift(); shift >= 12; shift -= 9) {
		uint64_t e = tab[(va >> shift) & 511];
		if (!(e & PTE_P))
			return -LLMK_EINVAL;
		if (shift == 12 || ((shift == 30 || shift == 21) && (e & PTE_PS))) {
			*pte = e;
			*page_size = 1ull << shift;
			return 0;
		}
		tab = (const uint64_t *)(uintptr_t)(e & addr_mask);
	}
	return -LLMK_EINVAL;
}

int cc_page_remap(uint64_t va, uint64_t clear, uint64_t set, uint64_t table_bits,
		  uint64_t addr_mask)
{
	uint64_t cr0 = read_cr0(), *tab = (uint64_t *)(uintptr_t)(read_cr3() & addr_mask);
	bool split_any = false;
	int e = 0;

	write_cr0(cr0 & ~CR0_WP);
	/* levels: (PML5,) PML4 (bits 47:39), PDPT (38:30), PD (29:21), PT (20:12) */
	for (int shift = top_shift(); shift >= 12; shift -= 9) {
		uint64_t *ent = &tab[(va >> shift) & 511];
		if (!(*ent & PTE_P)) {
			e = -LLMK_EINVAL;
			break;
		}
		if (shift == 12) {
			*ent = (*ent & ~clear) | set;
			break;
		}
		if ((shift == 30 || shift == 21) && (*ent & PTE_PS)) {
			if ((e = split(ent, 1ull << (shift - 9), table_bits, addr_mask)))
				break;
			split_any = true;
		}
		tab = (uint64_t *)(uintptr_t)(*ent & addr_mask);
	}
	write_cr0(cr0);
	if (split_any)
		flush_all();
	__asm__ volatile("invlpg (%0)" : : "r"(va) : "memory");
	return e;
}
