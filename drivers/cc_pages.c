/*
 * drivers/cc_pages.c — the guest's kind and its pool of shared pages (see
 * drivers/cc_pages.h); kernel/x86_64/pgtable.c edits the identity map for
 * them. x86_64 only; elsewhere there is no confidential guest and DMA
 * memory is plat_alloc's.
 *
 *   detection  CPUID 0x21 "IntelTDX    " (TDX); CPUID 0x8000001F EAX bit 1
 *              (SEV) and only then SEV_STATUS (MSR 0xC001_0131, AMD APM
 *              Vol. 2 §15.34.10): bit 0 SEV, 1 SEV-ES, 2 SEV-SNP; the
 *              C-bit is CPUID 0x8000001F EBX[5:0]
 *   sharing    a 2 MiB block at a time, by the technology's own rules:
 *              SEV-SNP drivers/sev_snp.c (PVALIDATE rescind, page state
 *              change, C-bit cleared), TDX drivers/tdx.c (MapGPA, shared bit
 *              set), SEV and SEV-ES here (the C-bit cleared, after the
 *              block's cache lines are flushed: the hardware does not keep
 *              encrypted and plain lines of a page coherent, APM Vol. 2
 *              §15.34, "Page Flushing")
 *
 * The drivers it shares through (sev_snp.c, tdx.c) never call back here:
 * SEV-SNP's spare shared pages are taken from it (sev_snp_spare).
 */
#include "../kernel/kernel.h"
#include "cc_pages.h"

#if defined(__x86_64__)
#include "../kernel/x86_64/x86.h"
#include "../kernel/x86_64/pgtable.h"
#include "sev_snp.h"
#include "tdx.h"

#define MSR_SEV_STATUS 0xc0010131u
#define POOL_BLOCK (2ull << 20)

static struct {
	int kind;
	uint64_t cmask;   /* SEV, SEV-ES: the C-bit */
	uint8_t *next;    /* the pool: next free shared page ... */
	size_t left;      /* ... and the bytes after it */
	bool told;        /* the pool's failure was printed */
} cc;

static const char *const names[] = { "", "SEV", "SEV-ES", "SEV-SNP", "TDX" };

static int detect(void)
{
	struct cpuid m = cpuid(0, 0), t, f;
	uint64_t st;

	if (m.a >= 0x21) {
		t = cpuid(0x21, 0);
		if (t.b == 0x65746e49 && t.d == 0x5844546c && t.c == 0x20202020)
			return CC_TDX;
	}
	if (cpuid(0x80000000u, 0).a < 0x8000001fu)
		return CC_NONE;
	f = cpuid(0x8000001fu, 0);
	if (!(f.a & (1u << 1)))
		return CC_NONE;
	st = rdmsr(MSR_SEV_STATUS);
	cc.cmask = 1ull << (f.b & 63);
	return (st & 4) ? CC_SEV_SNP : (st & 2) ? CC_SEV_ES : (st & 1) ? CC_SEV : CC_NONE;
}

/* SEV and SEV-ES: no RMP, no hypervisor call; the C-bit alone decides. */
static int share_cbit(uint8_t *b)
{
	uint64_t mask = ((1ull << 52) - 1) & ~0xfffull & ~cc.cmask;
	int e;

	for (uint64_t a = 0; a < POOL_BLOCK; a += 64)
		__asm__ volatile("clflush (%0)" : : "r"(b + a) : "memory");
	__asm__ volatile("mfence" : : : "memory");
	for (uint64_t a = 0; a < POOL_BLOCK; a += PAGE_SIZE)
		if ((e = cc_page_remap((uintptr_t)b + a, cc.cmask, 0, cc.cmask, mask)))
			return e;
	memset(b, 0, POOL_BLOCK);
	return 0;
}

/* One more 2 MiB block for the pool. A block whose sharing failed half way
 * is left alone: some of its pages may already be the host's. */
static bool grow(void)
{
	uint8_t *b = plat_alloc(POOL_BLOCK, POOL_BLOCK);
	const char *why = "no free 2 MiB block";
	int e = -LLMK_ENOMEM;

	if (b) {
		if (cc.kind == CC_SEV_SNP)
			why = (e = sev_snp_share(b)) ? sev_snp_error() : "";
		else if (cc.kind == CC_TDX)
			why = (e = tdx_share(b, POOL_BLOCK)) ? tdx_error() : "";
		else
			why = (e = share_cbit(b)) ? "cannot clear the C-bit in the page tables" : "";
	}
	if (e) {
		if (!cc.told)
			plat_printf("cc: no shared memory for device DMA: %s\n", why);
		cc.told = true;
		return false;
	}
	cc.next = b;
	cc.left = POOL_BLOCK;
	return true;
}

/* Shared pages a driver made itself (sev_snp.c's block beyond its own). */
static void cc_pool_give(void *p, size_t n)
{
	if (n > cc.left) {
		cc.next = p;
		cc.left = n;
	}
}

void *cc_dma_alloc(size_t size)
{
	uint64_t sz = ALIGN_UP((uint64_t)size ? size : 1, PAGE_SIZE);
	void *p;

	if (cc.kind == CC_NONE)
		return plat_alloc(size, PAGE_SIZE);
	if (sz > POOL_BLOCK || (cc.left < sz && !grow()))
		return NULL;
	p = cc.next;
	cc.next += sz;
	cc.left -= sz;
	return p;
}

bool cc_mmio_shared(uint64_t addr, uint64_t len)
{
	uint64_t tdx_bit = cc.kind == CC_TDX ? tdx_shared_bit() : 0;
	uint64_t mask = ((1ull << 52) - 1) & ~0xfffull & ~cc.cmask & ~tdx_bit;
	uint64_t a = addr & ~(PAGE_SIZE - 1), end = addr + len;

	if (cc.kind == CC_NONE)
		return true;
	if (end < addr || (end - a) / PAGE_SIZE > 65536)
		return false;
	while (a < end) {
		uint64_t pte, size;
		if (cc_page_entry(a, mask, &pte, &size))
			return false;
		if (cc.kind == CC_TDX ? !(pte & tdx_bit) : (pte & cc.cmask) != 0)
			return false;
		if ((pte & mask & ~(size - 1)) != (a & ~(size - 1)))
			return false;
		a = (a & ~(size - 1)) + size;
	}
	return true;
}

bool cc_dma_bounce(void)
{
#ifdef LLMK_TEST_DMA_BOUNCE
	return true; /* a test build: the bounce path on any machine (mk/cc.mk) */
#else
	return cc.kind != CC_NONE;
#endif
}

int cc_kind(void)
{
	return cc.kind;
}

const char *cc_name(void)
{
	return names[cc.kind];
}

void cc_init(void)
{
	struct plat_attest_info ai;
	const char *what = "pages shared by clearing the C-bit";

	cc.kind = detect();
#ifdef LLMK_TEST_DMA_BOUNCE
	plat_printf("cc: a test build: device DMA is bounced on any machine (LLMK_TEST_DMA_BOUNCE)\n");
#endif
	if (cc.kind == CC_NONE)
		return;
	if (cc.kind == CC_SEV_SNP) {
		sev_snp_probe(&ai);
		what = ai.detail;
	} else if (cc.kind == CC_TDX) {
		tdx_probe(&ai);
		what = ai.detail;
	}
	plat_printf("cc: %s guest: %s\n", cc_name(), what);
	if (cc.kind == CC_SEV_SNP) { /* the driver's block's pages it does not use */
		void *p;
		size_t n = sev_snp_spare(&p);
		if (n)
			cc_pool_give(p, n);
	}
	if (cc.kind == CC_SEV_ES || cc.kind == CC_SEV_SNP)
		plat_printf("cc: %s\n", vc_cpuid_source());
}

#else

void cc_init(void)
{
}

int cc_kind(void)
{
	return CC_NONE;
}

const char *cc_name(void)
{
	return "";
}

void *cc_dma_alloc(size_t size)
{
	return plat_alloc(size, PAGE_SIZE);
}

bool cc_mmio_shared(uint64_t addr, uint64_t len)
{
	(void)addr, (void)len;
	return true;
}

bool cc_dma_bounce(void)
{
	return false;
}

#endif
