/*
 * tests/unit/test_kmem.c — kernel/mem.c, the bare-metal page allocator, run on
 * the host over a fake UEFI memory map whose "physical" ranges are a host
 * buffer. The kernel's names are renamed so they do not meet the host
 * platform's plat_alloc.
 */
#include <stdlib.h>

#define plat_alloc kmem_alloc
#define plat_alloc_sparse kmem_alloc_sparse
#define plat_free kmem_free
#define plat_mem_stats kmem_stats
#define mem_init kmem_init
#define mem_is_ram kmem_is_ram
#include "../../kernel/mem.c"
#undef plat_alloc
#undef plat_alloc_sparse
#undef plat_free
#undef plat_mem_stats
#undef mem_init
#undef mem_is_ram

#include "test.h"

#if !defined(__x86_64__)
/* kernel/mem.c's mem_is_ram reads the boot hand-off; on x86_64
 * test_vc.c defines it (the #VC handler reads it too) */
const struct boot_info *kernel_boot;
#endif

#define MIB (1u << 20)

/* Conventional [0, 3 MiB), boot-services data [3, 4 MiB), conventional
 * [4, 8 MiB) of an 8 MiB buffer aligned to 2 MiB. */
static uint8_t *fake_map(struct boot_info *bi, struct boot_mem_desc d[3])
{
	uint8_t *buf = aligned_alloc(2 * MIB, 8 * MIB);
	uint64_t base = (uintptr_t)buf;

	memset(buf, 0xaa, 8 * MIB);
	memset(&pm, 0, sizeof pm);
	d[0] = (struct boot_mem_desc){ BOOT_MEM_CONVENTIONAL, 0, base, 0, 3 * MIB / 4096, 0 };
	d[1] = (struct boot_mem_desc){ BOOT_MEM_BS_DATA, 0, base + 3 * MIB, 0, MIB / 4096, 0 };
	d[2] = (struct boot_mem_desc){ BOOT_MEM_CONVENTIONAL, 0, base + 4 * MIB, 0, 4 * MIB / 4096, 0 };
	memset(bi, 0, sizeof *bi);
	bi->mmap = d;
	bi->mmap_size = 3 * sizeof d[0];
	bi->mmap_desc_size = sizeof d[0];
	kmem_init(bi);
	return buf;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

TEST(kmem_alloc_aligned_zeroed_and_counted)
{
	struct boot_info bi;
	struct boot_mem_desc d[3];
	struct kmem_stats st; /* platform.h's struct, renamed with the function */
	uint8_t *buf = fake_map(&bi, d);
	uint8_t *a = kmem_alloc(100, 1), *b = kmem_alloc(MIB, 2 * MIB);

	kmem_stats(&st);
	CHECK_EQ_INT(st.total, 7 * MIB);
	CHECK(a && b);
	CHECK_EQ_INT((uintptr_t)a % 4096, 0);
	CHECK_EQ_INT((uintptr_t)b % (2 * MIB), 0);
	CHECK(all_zero(a, 4096) && all_zero(b, MIB));
	CHECK_EQ_INT(st.used, 4096 + MIB);
	/* Neither lands in the boot-services range. */
	CHECK(!(a >= buf + 3 * MIB && a < buf + 4 * MIB));
	CHECK(!(b >= buf + 3 * MIB && b < buf + 4 * MIB));
	CHECK(a + 4096 <= b || b + MIB <= a);
	/* a sparse allocation is an ordinary one here: zeroed and counted */
	uint8_t *c = kmem_alloc_sparse(8192, 64);
	CHECK(c && all_zero(c, 8192));
	kmem_stats(&st);
	CHECK_EQ_INT(st.used, 4096 + MIB + 8192);
	kmem_free(c, 8192);
	kmem_free(a, 100);
	kmem_free(b, MIB);
	kmem_stats(&st);
	CHECK_EQ_INT(st.used, 0);
	CHECK_EQ_INT(st.used_peak, 4096 + MIB + 8192);
	CHECK_EQ_INT(pm.n, 2); /* freed pieces merged back into the two ranges */
	free(buf);
}

TEST(kmem_fills_ranges_exactly_then_fails)
{
	struct boot_info bi;
	struct boot_mem_desc d[3];
	uint8_t *buf = fake_map(&bi, d);
	uint8_t *big = kmem_alloc(4 * MIB, 4096), *mid = kmem_alloc(3 * MIB, 4096);
	struct kmem_stats st; /* platform.h's struct, renamed with the function */

	CHECK(big == buf + 4 * MIB);
	CHECK(mid == buf);
	CHECK(kmem_alloc(4096, 4096) == NULL);
	kmem_stats(&st);
	CHECK_EQ_INT(st.free, 0);
	kmem_free(big, 4 * MIB);
	CHECK(kmem_alloc(4 * MIB + 4096, 4096) == NULL); /* no range is that large */
	CHECK(kmem_alloc(4 * MIB, 2 * MIB) == buf + 4 * MIB); /* and the hole is whole again */
	free(buf);
}

TEST(kmem_many_small_allocations_do_not_overlap)
{
	struct boot_info bi;
	struct boot_mem_desc d[3];
	uint8_t *buf = fake_map(&bi, d), *p[64];

	for (int i = 0; i < 64; i++) {
		p[i] = kmem_alloc(4096 * (size_t)(1 + i % 5), 4096 << (i % 3));
		CHECK(p[i] != NULL);
		if (p[i])
			memset(p[i], i + 1, 4096 * (size_t)(1 + i % 5));
	}
	for (int i = 0; i < 64; i += 2)
		kmem_free(p[i], 4096 * (size_t)(1 + i % 5));
	for (int i = 1; i < 64; i += 2) {
		int ok = 1;
		for (size_t k = 0; k < 4096 * (size_t)(1 + i % 5); k++)
			ok &= p[i][k] == i + 1;
		CHECK(ok);
		kmem_free(p[i], 4096 * (size_t)(1 + i % 5));
	}
	CHECK_EQ_INT(pm.n, 2);
	CHECK_EQ_INT(pm.used, 0);
	free(buf);
}

/* Device registers may lie only where the map has MMIO or nothing: every
 * other type is somebody's RAM (issue 28: a BAR or CRB buffer there is
 * refused). */
TEST(kmem_is_ram_says_where_device_registers_may_not_be)
{
	struct boot_info bi;
	struct boot_mem_desc d[4];
	const struct boot_info *saved = kernel_boot;
	uint64_t mmio = 0xfe000000ull;

	memset(&bi, 0, sizeof bi);
	d[0] = (struct boot_mem_desc){ BOOT_MEM_CONVENTIONAL, 0, 0x100000, 0, 256, 0 };
	d[1] = (struct boot_mem_desc){ 0 /* reserved */, 0, 0x800000, 0, 16, 0 };
	d[2] = (struct boot_mem_desc){ BOOT_MEM_ACPI_RECLAIM, 0, 0x900000, 0, 1, 0 };
	d[3] = (struct boot_mem_desc){ BOOT_MEM_MMIO, 0, mmio, 0, 16, 0 };
	bi.mmap = d;
	bi.mmap_size = sizeof d;
	bi.mmap_desc_size = sizeof d[0];
	kernel_boot = &bi;
	CHECK(kmem_is_ram(0x100000, 4096));
	CHECK(kmem_is_ram(0xff000, 0x1001));      /* touches the first page */
	CHECK(!kmem_is_ram(0xff000, 0x1000));     /* ends where it begins */
	CHECK(kmem_is_ram(0x80f000, 4096));       /* reserved */
	CHECK(kmem_is_ram(0x900000, 1));          /* ACPI tables */
	CHECK(!kmem_is_ram(mmio, 0x10000));       /* MMIO */
	CHECK(!kmem_is_ram(0xc0000000, 0x4000));  /* not in the map */
	CHECK(kmem_is_ram(0xfffffffffffff000ull, 0x2000)); /* wraps */
	kernel_boot = saved;
}
