/*
 * tests/fuzz/fuzz_ghcb.c — fuzz_drivers' mode 6: the hypervisor's answers
 * to kernel/x86_64/vc.c (GHCB specification #56421). vc.c is compiled as
 * it is, with RDMSR, WRMSR and VMGEXIT replaced as tests/unit/test_vc.c
 * replaces them, by a hypervisor that XORs the input onto well-formed
 * answers (all zeros: the good one): the MSR protocol's SEV information
 * and CPUID responses, and each NAE event's results in the GHCB (RAX, RBX,
 * RCX, RDX, SW_EXITINFO1/2, the valid bitmap, the shared buffer). One
 * SEV-ES guest per input takes CPUID, IN, RDMSR, RDTSC and MMIO reads and
 * writes; a panic or termination ends an exit, as in the kernel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>

#include "../../kernel/kernel.h"
#include "../../kernel/arch.h"
#include "../../kernel/x86_64/x86.h"
#include "../../drivers/cc_pages.h"

#define PAGE4K __attribute__((aligned(4096)))

static uint8_t fw_ghcb[4096] PAGE4K, mmio[4096] PAGE4K;

static struct {
	const uint8_t *d;
	size_t n, at;
	uint64_t msr;
	jmp_buf jb;
} hv;

static uint64_t next64(void)
{
	uint64_t v = 0;

	for (int i = 0; i < 8 && hv.at < hv.n; i++)
		v |= (uint64_t)hv.d[hv.at++] << (8 * i);
	return v;
}

static void put(uint8_t *g, unsigned off, uint64_t v)
{
	memcpy(g + off, &v, 8);
}

static void sim_vmgexit(void)
{
	uint64_t req = hv.msr;

	if (req & 0xfff) { /* the MSR protocol (§2.3.1) */
		if ((req & 0xfff) == 0x002)
			hv.msr = 0x001 | 51ull << 24 | 1ull << 32 | 2ull << 48;
		else if ((req & 0xfff) == 0x004)
			hv.msr = 0x005 | (uint64_t)0x1b << 32;
		else
			hv.msr = 0;
		hv.msr ^= next64();
		return;
	}
	if (!req)
		return;
	uint8_t *g = (uint8_t *)(uintptr_t)req;
	put(g, 0x1f8, 0x8000001full ^ next64()); /* also CPUID 0x80000000: SEV leaves there */
	put(g, 0x318, 51 ^ next64());
	put(g, 0x308, next64());
	put(g, 0x310, next64());
	put(g, 0x398, next64());
	put(g, 0x3a0, next64());
	put(g, 0x3f0, ~0ull ^ next64());
	put(g, 0x3f8, ~0ull ^ next64());
	put(g, 0x800, next64());
}

static uint64_t sim_rdmsr(uint32_t msr)
{
	return msr == 0xc0010130u ? hv.msr : msr == 0xc0010131u ? 3 : 0;
}

static void sim_wrmsr(uint32_t msr, uint64_t v)
{
	if (msr == 0xc0010130u)
		hv.msr = v;
}

__attribute__((noreturn)) static void sim_panic(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	longjmp(hv.jb, 1);
}

void arch_halt(void)
{
	longjmp(hv.jb, 2);
}

/* The page tables: the GHCB and the MMIO page shared, nothing else mapped. */
int cc_page_entry(uint64_t va, uint64_t addr_mask, uint64_t *pte, uint64_t *size)
{
	(void)addr_mask;
	if ((va & ~0xfffull) != (uintptr_t)fw_ghcb && (va & ~0xfffull) != (uintptr_t)mmio)
		return -LLMK_EINVAL;
	*pte = (va & ~0xfffull) | 3;
	*size = 4096;
	return 0;
}

static struct boot_info bi;
static const struct boot_info *vc_boot = &bi;
#define kernel_boot vc_boot
#define rdmsr(m) sim_rdmsr(m)
#define wrmsr(m, v) sim_wrmsr(m, v)
#define vmgexit() sim_vmgexit()
#define read_cr4() (1ull << 18)
#define xgetbv(i) (7ull)
#define plat_panic(...) sim_panic(__VA_ARGS__)
#include "../../kernel/x86_64/vc.c"
#undef plat_panic

void fuzz_ghcb(const uint8_t *d, size_t n);
void fuzz_ghcb(const uint8_t *d, size_t n)
{
	static const uint8_t cpuid[16] = { 0x0f, 0xa2 }, in_dx[16] = { 0xec },
			     rd_msr[16] = { 0x0f, 0x32 }, tsc[16] = { 0x0f, 0x31 },
			     ld32[16] = { 0x8b, 0x42, 0x14 }, st8[16] = { 0x88, 0x42, 0x14 };
	static const struct {
		uint64_t code;
		const uint8_t *insn;
	} exits[] = { { 0x72, cpuid }, { 0x72, cpuid }, { 0x7b, in_dx }, { 0x7c, rd_msr },
		      { 0x6e, tsc }, { 0x400, ld32 }, { 0x400, st8 } };
	struct trap_regs r;

	memset(&vc, 0, sizeof vc);
	memset(&hv, 0, sizeof hv);
	memset(fw_ghcb, 0, sizeof fw_ghcb);
	hv.d = d;
	hv.n = n;
	hv.msr = (uintptr_t)fw_ghcb;
	for (size_t i = 0; i < sizeof exits / sizeof exits[0]; i++) {
		memset(&r, 0, sizeof r);
		r.gpr[0] = i == 1 ? 1 : 0x80000000u;
		r.gpr[INSN_RDX] = (uintptr_t)mmio;
		r.gpr[INSN_RCX] = 0x10;
		r.error = exits[i].code;
		r.vector = 29;
		r.rip = (uintptr_t)exits[i].insn;
		if (setjmp(hv.jb) == 0)
			vc_handle(&r);
		vc.depth = 0;
	}
}
