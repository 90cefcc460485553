/*
 * kernel/mem.c — the page allocator.
 *
 * Manages the EfiConventionalMemory ranges of the UEFI memory map (UEFI 2.10
 * §7.2: free memory the OS may use after ExitBootServices). Boot-services
 * memory is left alone: it still holds the firmware's GDT, page tables and
 * the TCG2 event log. The identity map UEFI set up stays, so an address is
 * both what the CPU uses and what a device DMAs to.
 *
 * Free memory is a sorted array of disjoint extents; allocation is first fit
 * with alignment, free merges neighbours. Models are few, large allocations,
 * so this stays small and predictable.
 */
#include "kernel.h"

#define MAX_EXTENTS 2048
#define LOW_LIMIT 0x100000ull /* below 1 MiB: legacy areas and page 0 */

struct extent {
	uint64_t start, end;
};

static struct {
	struct extent ex[MAX_EXTENTS];
	int n;
	uint64_t total, used, peak;
} pm;

static void remove_at(int i)
{
	memmove(&pm.ex[i], &pm.ex[i + 1], (size_t)(pm.n - i - 1) * sizeof pm.ex[0]);
	pm.n--;
}

static void insert_at(int i, uint64_t start, uint64_t end)
{
	if (pm.n == MAX_EXTENTS)
		plat_panic("mem: free list full (%d extents) freeing %#llx..%#llx", pm.n,
			   (unsigned long long)start, (unsigned long long)end);
	memmove(&pm.ex[i + 1], &pm.ex[i], (size_t)(pm.n - i) * sizeof pm.ex[0]);
	pm.ex[i].start = start;
	pm.ex[i].end = end;
	pm.n++;
}

/* Give [start, end) back, keeping the array sorted and merged. */
static void add_free(uint64_t start, uint64_t end)
{
	int i = 0;

	while (i < pm.n && pm.ex[i].start < start)
		i++;
	if (i > 0 && pm.ex[i - 1].end > start)
		plat_panic("mem: double free of %#llx", (unsigned long long)start);
	if (i < pm.n && end > pm.ex[i].start)
		plat_panic("mem: double free of %#llx", (unsigned long long)start);
	if (i > 0 && pm.ex[i - 1].end == start) {
		pm.ex[i - 1].end = end;
		if (i < pm.n && pm.ex[i].start == end) {
			pm.ex[i - 1].end = pm.ex[i].end;
			remove_at(i);
		}
		return;
	}
	if (i < pm.n && pm.ex[i].start == end) {
		pm.ex[i].start = start;
		return;
	}
	insert_at(i, start, end);
}

void mem_init(const struct boot_info *bi)
{
	const uint8_t *p = bi->mmap;

	for (uint64_t off = 0; off + bi->mmap_desc_size <= bi->mmap_size;
	     off += bi->mmap_desc_size) {
		const struct boot_mem_desc *d = (const void *)(p + off);
		uint64_t start = d->phys, end = d->phys + d->pages * PAGE_SIZE;

		if (d->type != BOOT_MEM_CONVENTIONAL)
			continue;
		if (start < LOW_LIMIT)
			start = LOW_LIMIT;
		if (start >= end)
			continue;
		add_free(start, end);
		pm.total += end - start;
	}
}

/* UEFI 2.10 §7.2: EfiMemoryMappedIO and EfiMemoryMappedIOPortSpace are the
 * only descriptors that are not memory; every other type is RAM of some
 * owner (ours, the firmware's, ACPI's, reserved: under SEV-SNP the secrets
 * and CPUID pages are reserved private pages). */
bool mem_is_ram(uint64_t addr, uint64_t len)
{
	const struct boot_info *bi = kernel_boot;
	const uint8_t *p = bi->mmap;

	if (addr + len < addr)
		return true;
	for (uint64_t off = 0; off + bi->mmap_desc_size <= bi->mmap_size;
	     off += bi->mmap_desc_size) {
		const struct boot_mem_desc *d = (const void *)(p + off);
		uint64_t end = d->phys + d->pages * PAGE_SIZE;

		if (d->type == BOOT_MEM_MMIO || d->type == BOOT_MEM_MMIO_PORT)
			continue;
		if (addr < end && addr + len > d->phys)
			return true;
	}
	return false;
}

void *plat_alloc(size_t size, size_t align)
{
	uint64_t sz = ALIGN_UP((uint64_t)size ? size : 1, PAGE_SIZE);

	if (align < PAGE_SIZE)
		align = PAGE_SIZE;
	if (align & (align - 1))
		return NULL;
	for (int i = 0; i < pm.n; i++) {
		struct extent *e = &pm.ex[i];
		uint64_t a = ALIGN_UP(e->start, align);

		if (a < e->start || a + sz > e->end || a + sz < a)
			continue;
		if (a == e->start && a + sz == e->end)
			remove_at(i);
		else if (a == e->start)
			e->start += sz;
		else if (a + sz == e->end)
			e->end = a;
		else {
			uint64_t end = e->end;
			e->end = a;
			insert_at(i + 1, a + sz, end);
		}
		pm.used += sz;
		if (pm.used > pm.peak)
			pm.peak = pm.used;
		memset((void *)(uintptr_t)a, 0, sz);
		return (void *)(uintptr_t)a;
	}
	return NULL;
}

/* every page here is backed: nothing to leave for a first touch */
void *plat_alloc_sparse(size_t size, size_t align)
{
	return plat_alloc(size, align);
}

void plat_free(void *p, size_t size)
{
	uint64_t a = (uintptr_t)p, sz = ALIGN_UP((uint64_t)size ? size : 1, PAGE_SIZE);

	if (!p)
		return;
	if (a & (PAGE_SIZE - 1))
		plat_panic("mem: free of unaligned %p", p);
	add_free(a, a + sz);
	pm.used -= sz;
}

void plat_mem_stats(struct plat_mem_stats *st)
{
	st->total = pm.total;
	st->used = pm.used;
	st->free = pm.total - pm.used;
	st->used_peak = pm.peak;
}
