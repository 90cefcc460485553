/*
 * kernel/x86_64/ve.c — the #VE handler of a TDX guest (Intel TDX Module v1.5
 * ABI Specification, "#VE" and TDG.VP.VEINFO.GET; Intel TDX GHCI v1.5, the
 * TDG.VP.VMCALL<Instruction.*> and <#VE.RequestMMIO> sub-functions).
 *
 * In a TD the TDX module turns the instructions the VMM must see (CPUID
 * leaves it does not virtualize itself, port I/O, most MSRs, HLT) and any
 * access to a shared page the VMM left unmapped (MMIO) into #VE (vector
 * 20). The handler first reads what happened with TDG.VP.VEINFO.GET (TDCALL
 * leaf 3: RCX exit reason, RDX exit qualification, R8 linear and R9
 * physical address, R10[31:0] instruction length); until it does, another
 * #VE would be a double fault, so nothing comes before it. Then it asks the
 * VMM to do the work through TDG.VP.VMCALL:
 *
 *   CPUID (10)          R12 = EAX, R13 = ECX -> R12..R15 = EAX, EBX, ECX, EDX
 *   HLT (12)            R12 = 1 when interrupts are blocked (always, here)
 *   IO (30)             R12 = size, R13 = 1 for OUT, R14 = port, R15 = data;
 *                       size, direction and port from the exit qualification
 *                       (SDM Vol. 3C §28.2.1, "Exit Qualification
 *                       for I/O Instructions"); IN's data in R11
 *   RDMSR/WRMSR (31/32) R12 = ECX (R13 = EDX:EAX) -> R11
 *   EPT violation (48)  MMIO: only at a shared GPA (the shared bit, GPA bit
 *                       GPAW-1 from TDG.VP.INFO); the instruction decoded
 *                       (insn.c) for size, direction and register;
 *                       #VE.RequestMMIO R12 = size, R13 = 1 for a write,
 *                       R14 = GPA, R15 = data -> R11
 *
 * and steps RIP over the instruction: by the reported length, or for MMIO
 * (whose length the TDX module does not report) the decoded one.
 *
 * The TDCALLs are tdcall.h's; tests/unit/test_ve.c replaces them with a
 * simulated TDX module and VMM and drives this file on the host.
 */
#include "../kernel.h"
#include "x86.h"
#include "insn.h"
#include "tdcall.h"

#define RFLAGS_IF (1ull << 9)
#define QUAL_IN (1u << 3)
#define QUAL_STRING (1u << 4)

static struct {
	uint64_t shared; /* the GPA's shared bit, 0 until the first #VE */
} ve;

/* TDG.VP.INFO (TDCALL leaf 1): RCX[5:0] = GPAW, the shared bit is GPAW-1. */
static uint64_t shared_bit(void)
{
	uint64_t rcx = 0, rdx = 0, r8 = 0;

	if (tdcall(TDCALL_VP_INFO, &rcx, &rdx, &r8) || (rcx & 63) < 32)
		plat_panic("#VE: TDG.VP.INFO failed or gave GPAW %llu", (unsigned long long)(rcx & 63));
	return 1ull << ((rcx & 63) - 1);
}

static uint64_t vmm(const struct trap_regs *r, const char *what, uint64_t fn, uint64_t a,
		    uint64_t b, uint64_t c, uint64_t d, struct tdvmcall *out)
{
	struct tdvmcall t = { 0, fn, a, b, c, d };
	uint64_t st = tdvmcall(&t);

	if (st || t.r10)
		plat_panic("#VE: TDG.VP.VMCALL<%s> for rip %#llx failed: TDCALL %#llx, VMM %#llx", what,
			   (unsigned long long)r->rip, (unsigned long long)st,
			   (unsigned long long)t.r10);
	if (out)
		*out = t;
	return t.r11;
}

static void do_io(struct trap_regs *r, const struct tdx_ve_info *v)
{
	struct insn in = { 0 };
	uint64_t data;
	bool is_in = (v->qual & QUAL_IN) != 0;

	if (v->qual & QUAL_STRING)
		plat_panic("#VE at rip %#llx: string port I/O is not emulated", (unsigned long long)r->rip);
	/* the IN/OUT operand as the decoder would describe it: AL, AX or EAX */
	in.op = is_in ? INSN_IN : INSN_OUT;
	in.size = in.reg_size = (uint8_t)((v->qual & 7) + 1);
	in.reg = INSN_RAX;
	if (in.size != 1 && in.size != 2 && in.size != 4)
		plat_panic("#VE at rip %#llx: port I/O of %u bytes", (unsigned long long)r->rip, in.size);
	data = vmm(r, "Instruction.IO", TDVMCALL_IO, in.size, is_in ? 0 : 1, v->qual >> 16 & 0xffff,
		   is_in ? 0 : insn_src_value(&in, r->gpr), NULL);
	if (is_in)
		insn_dst_write(&in, r->gpr, data);
	r->rip += v->len;
}

static void do_mmio(struct trap_regs *r, const struct tdx_ve_info *v)
{
	const uint8_t *code = (const uint8_t *)(uintptr_t)r->rip;
	struct insn in;
	uint64_t val;

	/* A private GPA is never MMIO; emulating it would let the VMM read or
	 * feed memory that is the TD's own. */
	if (!(v->gpa & ve.shared))
		plat_panic("#VE at rip %#llx: EPT violation at private GPA %#llx, not MMIO",
			   (unsigned long long)r->rip, (unsigned long long)v->gpa);
	if (insn_decode(code, INSN_MAX_LEN, &in) ||
	    (in.op != INSN_MMIO_READ && in.op != INSN_MMIO_WRITE))
		plat_panic("#VE MMIO at GPA %#llx: cannot emulate the instruction at rip %#llx (%02x %02x "
			   "%02x %02x): %s", (unsigned long long)v->gpa, (unsigned long long)r->rip,
			   code[0], code[1], code[2], code[3], in.why ? in.why : "not an MMIO move");
	if (in.op == INSN_MMIO_WRITE) {
		vmm(r, "#VE.RequestMMIO", TDVMCALL_MMIO, in.size, 1, v->gpa, insn_src_value(&in, r->gpr),
		    NULL);
	} else {
		val = vmm(r, "#VE.RequestMMIO", TDVMCALL_MMIO, in.size, 0, v->gpa, 0, NULL);
		insn_dst_write(&in, r->gpr, val);
	}
	r->rip += in.len;
}

void ve_handle(struct trap_regs *r)
{
	struct tdx_ve_info v;
	struct tdvmcall t;
	uint64_t st = tdcall_veinfo_get(&v);

	if (st)
		plat_panic("#VE at rip %#llx: TDG.VP.VEINFO.GET failed (%#llx)",
			   (unsigned long long)r->rip, (unsigned long long)st);
	if (!ve.shared)
		ve.shared = shared_bit();
	switch (v.reason) {
	case TDVMCALL_CPUID:
		vmm(r, "Instruction.CPUID", TDVMCALL_CPUID, (uint32_t)r->gpr[0], (uint32_t)r->gpr[1], 0, 0,
		    &t);
		r->gpr[0] = (uint32_t)t.r12, r->gpr[3] = (uint32_t)t.r13;
		r->gpr[1] = (uint32_t)t.r14, r->gpr[2] = (uint32_t)t.r15;
		r->rip += v.len;
		break;
	case TDVMCALL_HLT:
		vmm(r, "Instruction.HLT", TDVMCALL_HLT, (r->rflags & RFLAGS_IF) ? 0 : 1, 0, 0, 0, NULL);
		r->rip += v.len;
		break;
	case TDVMCALL_IO:
		do_io(r, &v);
		break;
	case TDVMCALL_RDMSR: {
		uint64_t x = vmm(r, "Instruction.RDMSR", TDVMCALL_RDMSR, (uint32_t)r->gpr[1], 0, 0, 0, NULL);
		r->gpr[0] = (uint32_t)x;
		r->gpr[2] = x >> 32;
		r->rip += v.len;
		break;
	}
	case TDVMCALL_WRMSR:
		vmm(r, "Instruction.WRMSR", TDVMCALL_WRMSR, (uint32_t)r->gpr[1],
		    (r->gpr[2] << 32) | (uint32_t)r->gpr[0], 0, 0, NULL);
		r->rip += v.len;
		break;
	case TDVMCALL_MMIO:
		do_mmio(r, &v);
		break;
	default:
		plat_panic("#VE at rip %#llx: exit reason %u (qualification %#llx, GPA %#llx) is not one "
			   "the kernel emulates", (unsigned long long)r->rip, v.reason,
			   (unsigned long long)v.qual, (unsigned long long)v.gpa);
	}
}
