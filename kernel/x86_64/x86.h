/*
 * kernel/x86_64/x86.h — instructions the x86_64 arch files share.
 */
#ifndef LLMK_X86_H
#define LLMK_X86_H

#include <stdint.h>

struct cpuid {
	uint32_t a, b, c, d;
};

static inline struct cpuid cpuid(uint32_t leaf, uint32_t sub)
{
	struct cpuid r;
	__asm__ volatile("cpuid" : "=a"(r.a), "=b"(r.b), "=c"(r.c), "=d"(r.d)
			 : "a"(leaf), "c"(sub));
	return r;
}

static inline uint64_t read_cr0(void)
{
	uint64_t v;
	__asm__ volatile("mov %%cr0, %0" : "=r"(v));
	return v;
}

static inline void write_cr0(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr0" : : "r"(v) : "memory");
}

static inline uint64_t read_cr4(void)
{
	uint64_t v;
	__asm__ volatile("mov %%cr4, %0" : "=r"(v));
	return v;
}

static inline void write_cr4(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr4" : : "r"(v) : "memory");
}

static inline uint64_t xgetbv(uint32_t idx)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(idx));
	return (uint64_t)hi << 32 | lo;
}

static inline void xsetbv(uint32_t idx, uint64_t v)
{
	__asm__ volatile("xsetbv" : : "c"(idx), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
			 : "memory");
}

/* VMGEXIT is VMMCALL with a REP prefix (AMD GHCB spec §2.3). */
static inline void vmgexit(void)
{
	__asm__ volatile("rep; vmmcall" : : : "memory");
}

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

/* kernel/x86_64/trap.c */
void trap_init(void);

/* What entry.S saves for an exception the kernel handles and returns from
 * (#VE, #VC): the general registers in the SDM's numbering (gpr[4], RSP,
 * is a copy of rsp below, filled in by the handler; writing it has no
 * effect), then the CPU's frame (SDM Vol. 3A §6.14.1). */
struct trap_regs {
	uint64_t gpr[16];
	uint64_t vector, error, rip, cs, rflags, rsp, ss;
};

/* kernel/x86_64/vc.c: #VC in an SEV-ES / SEV-SNP guest */
void vc_handle(struct trap_regs *r);
/* From now on exchange through this GHCB (registered by drivers/sev_snp.c). */
void vc_use_ghcb(void *ghcb);
/* Where CPUID answers come from ("" before the first #VC), and the C-bit. */
const char *vc_cpuid_source(void);
uint64_t vc_cbit(void);
/* kernel/x86_64/ve.c: #VE in a TDX guest */
void ve_handle(struct trap_regs *r);

#endif
