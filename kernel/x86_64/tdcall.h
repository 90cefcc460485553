/*
 * kernel/x86_64/tdcall.h — the two ways a TDX guest talks out: TDCALL to the
 * TDX module (Intel TDX Module v1.5 ABI Specification, "TDCALL leaves":
 * RAX = leaf, RCX/RDX/R8 in and out, RAX = status) and TDG.VP.VMCALL (leaf
 * 0) to the host VMM (Intel TDX Guest-Hypervisor Communication Interface
 * v1.5, "TDG.VP.VMCALL Interface": RCX = the bitmap of registers the
 * VMM may see, R10 = 0 for the GHCI's own calls, R11 = the sub-function,
 * R12..R15 its arguments; R10 = the VMM's status on return, R11..R15 its
 * results). Used by kernel/x86_64/ve.c and drivers/tdx.c.
 */
#ifndef LLMK_X86_TDCALL_H
#define LLMK_X86_TDCALL_H

#include <stdint.h>

#define TDCALL_VP_VMCALL 0ull
#define TDCALL_VP_INFO 1ull
#define TDCALL_MR_RTMR_EXTEND 2ull
#define TDCALL_VP_VEINFO_GET 3ull
#define TDCALL_MR_REPORT 4ull

/* GHCI sub-functions: the VMX exit reason of the instruction emulated
 * (SDM Vol. 3C Appendix C), or the GHCI's own numbers. */
#define TDVMCALL_CPUID 10ull
#define TDVMCALL_HLT 12ull
#define TDVMCALL_IO 30ull
#define TDVMCALL_RDMSR 31ull
#define TDVMCALL_WRMSR 32ull
#define TDVMCALL_MMIO 48ull
#define TDVMCALL_MAP_GPA 0x10001ull
#define TDVMCALL_GET_QUOTE 0x10002ull
#define TDVMCALL_STATUS_RETRY 1ull /* GHCI: TDG.VP.VMCALL_RETRY */

/* TDCALL 66 0F 01 CC: RAX = leaf; in/out RCX, RDX, R8; R9..R11 may change. */
static inline uint64_t tdcall(uint64_t leaf, uint64_t *rcx, uint64_t *rdx, uint64_t *r8)
{
	register uint64_t r8_ __asm__("r8") = *r8;
	uint64_t rax = leaf;
	__asm__ volatile(".byte 0x66, 0x0f, 0x01, 0xcc"
			 : "+a"(rax), "+c"(*rcx), "+d"(*rdx), "+r"(r8_)
			 :
			 : "r9", "r10", "r11", "memory");
	*r8 = r8_;
	return rax;
}

/* TDG.VP.VEINFO.GET (leaf 3): what the last #VE was (TDX Module ABI,
 * "TDG.VP.VEINFO.GET": RCX exit reason, RDX exit qualification, R8 guest
 * linear and R9 guest physical address, R10[31:0] instruction length). */
struct tdx_ve_info {
	uint32_t reason;
	uint64_t qual, gla, gpa;
	uint32_t len;
};

static inline uint64_t tdcall_veinfo_get(struct tdx_ve_info *v)
{
	register uint64_t r8 __asm__("r8");
	register uint64_t r9 __asm__("r9");
	register uint64_t r10 __asm__("r10");
	uint64_t rax = TDCALL_VP_VEINFO_GET, rcx, rdx;

	__asm__ volatile(".byte 0x66, 0x0f, 0x01, 0xcc"
			 : "+a"(rax), "=c"(rcx), "=d"(rdx), "=r"(r8), "=r"(r9), "=r"(r10)
			 :
			 : "r11", "memory");
	v->reason = (uint32_t)rcx;
	v->qual = rdx;
	v->gla = r8;
	v->gpa = r9;
	v->len = (uint32_t)r10;
	return rax;
}

struct tdvmcall {
	uint64_t r10, r11, r12, r13, r14, r15;
};

/* TDG.VP.VMCALL exposing R10..R15 (RCX bits 10..15). Returns the TDCALL
 * status: 0 when the call reached the VMM, whose own status is then in
 * a->r10 and whose results are in a->r11..r15. */
static inline uint64_t tdvmcall(struct tdvmcall *a)
{
	register uint64_t r10 __asm__("r10") = a->r10;
	register uint64_t r11 __asm__("r11") = a->r11;
	register uint64_t r12 __asm__("r12") = a->r12;
	register uint64_t r13 __asm__("r13") = a->r13;
	register uint64_t r14 __asm__("r14") = a->r14;
	register uint64_t r15 __asm__("r15") = a->r15;
	uint64_t rax = TDCALL_VP_VMCALL, rcx = 0xfc00;
	__asm__ volatile(".byte 0x66, 0x0f, 0x01, 0xcc"
			 : "+a"(rax), "+c"(rcx), "+r"(r10), "+r"(r11), "+r"(r12), "+r"(r13),
			   "+r"(r14), "+r"(r15)
			 :
			 : "rdx", "rbx", "rsi", "rdi", "r8", "r9", "memory");
	a->r10 = r10, a->r11 = r11, a->r12 = r12, a->r13 = r13, a->r14 = r14, a->r15 = r15;
	return rax;
}

#endif
