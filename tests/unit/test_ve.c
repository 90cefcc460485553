/*
 * tests/unit/test_ve.c — the #VE handler (kernel/x86_64/ve.c) on the host,
 * against a simulated TDX module and VMM.
 *
 * ve.c reaches the machine only through tdcall.h's TDCALLs: TDG.VP.VEINFO.GET,
 * TDG.VP.INFO and TDG.VP.VMCALL. Here they are functions of this file: the
 * #VE information is what each test sets, the VMCALL records its registers
 * and answers as a VMM would. A panic returns to the test. What this does
 * not show: that a real TDX module and VMM agree (no TDX here).
 */
#include "test.h"

#if defined(__x86_64__)
#include <setjmp.h>
#include <stdarg.h>

#include "../../kernel/kernel.h"
#include "../../kernel/x86_64/x86.h"
#include "../../kernel/x86_64/tdcall.h"

#define SHARED (1ull << 51) /* GPAW 52 */

static struct {
	struct tdx_ve_info ve;
	struct tdvmcall last;  /* the last VMCALL's registers, as the VMM saw them */
	int vmcalls, veinfos;
	uint64_t answer, status, tdcall_status;
	jmp_buf jb;
	char panic[256];
} td;

static uint64_t sim_veinfo(struct tdx_ve_info *v)
{
	td.veinfos++;
	*v = td.ve;
	return 0;
}

static uint64_t sim_tdcall(uint64_t leaf, uint64_t *rcx, uint64_t *rdx, uint64_t *r8)
{
	(void)rdx, (void)r8;
	if (leaf != TDCALL_VP_INFO)
		return 1;
	*rcx = 52;
	return 0;
}

static uint64_t sim_tdvmcall(struct tdvmcall *a)
{
	td.vmcalls++;
	td.last = *a;
	a->r10 = td.status;
	if (a->r11 == TDVMCALL_CPUID) {
		a->r12 = 0x11, a->r13 = 0x22, a->r14 = 0x33, a->r15 = 0x44;
	} else {
		a->r11 = td.answer;
	}
	return td.tdcall_status;
}

__attribute__((noreturn)) static void sim_panic(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(td.panic, sizeof td.panic, fmt, ap);
	va_end(ap);
	longjmp(td.jb, 1);
}

#define tdcall_veinfo_get(v) sim_veinfo(v)
#define tdcall(l, c, d, r) sim_tdcall(l, c, d, r)
#define tdvmcall(a) sim_tdvmcall(a)
#define plat_panic(...) sim_panic(__VA_ARGS__)
#include "../../kernel/x86_64/ve.c"
#undef plat_panic

/* One #VE of reason/qualification/GPA/length at insn: 0 handled, 1 panicked. */
static int vexc(struct trap_regs *r, uint32_t reason, uint64_t qual, uint64_t gpa, uint32_t len,
		const uint8_t *insn)
{
	td.ve = (struct tdx_ve_info){ reason, qual, 0, gpa, len };
	td.panic[0] = 0;
	r->vector = 20;
	r->rip = (uintptr_t)insn;
	if (setjmp(td.jb) == 0) {
		ve_handle(r);
		return 0;
	}
	return 1;
}

static void fresh(struct trap_regs *r)
{
	memset(&td, 0, sizeof td);
	memset(&ve, 0, sizeof ve);
	memset(r, 0, sizeof *r);
}

TEST(ve_cpuid_hlt_and_msrs_become_ghci_instruction_calls)
{
	static const uint8_t code[16] = { 0x0f, 0xa2 };
	struct trap_regs r;

	fresh(&r);
	r.gpr[0] = 0xffffffff00000007ull, r.gpr[1] = 1;
	CHECK_EQ_INT(vexc(&r, 10, 0, 0, 2, code), 0);
	CHECK(td.last.r10 == 0 && td.last.r11 == 10 && td.last.r12 == 7 && td.last.r13 == 1);
	CHECK(r.gpr[0] == 0x11 && r.gpr[3] == 0x22 && r.gpr[1] == 0x33 && r.gpr[2] == 0x44);
	CHECK(r.rip == (uintptr_t)code + 2);
	/* HLT with interrupts off says they are blocked */
	CHECK_EQ_INT(vexc(&r, 12, 0, 0, 1, code), 0);
	CHECK(td.last.r11 == 12 && td.last.r12 == 1);
	r.rflags = 1u << 9;
	CHECK_EQ_INT(vexc(&r, 12, 0, 0, 1, code), 0);
	CHECK(td.last.r12 == 0);
	/* RDMSR: EDX:EAX from R11; WRMSR: R13 = EDX:EAX */
	r.gpr[1] = 0x1b;
	td.answer = 0x00000002fee00900ull;
	CHECK_EQ_INT(vexc(&r, 31, 0, 0, 2, code), 0);
	CHECK(td.last.r11 == 31 && td.last.r12 == 0x1b);
	CHECK(r.gpr[0] == 0xfee00900 && r.gpr[2] == 2);
	r.gpr[1] = 0x830, r.gpr[0] = 0xffffffff00000500ull, r.gpr[2] = 9;
	CHECK_EQ_INT(vexc(&r, 32, 0, 0, 2, code), 0);
	CHECK(td.last.r11 == 32 && td.last.r12 == 0x830 && td.last.r13 == (9ull << 32 | 0x500));
	/* the #VE information is read once per #VE, first */
	CHECK_EQ_INT(td.veinfos, 5);
}

TEST(ve_port_io_takes_size_direction_and_port_from_the_exit_qualification)
{
	static const uint8_t code[16] = { 0xee };
	struct trap_regs r;

	fresh(&r);
	/* OUT of a byte to 0x3f8: size-1 = 0, direction 0 */
	r.gpr[0] = 0x1241;
	CHECK_EQ_INT(vexc(&r, 30, 0x3f8ull << 16, 0, 1, code), 0);
	CHECK(td.last.r11 == 30 && td.last.r12 == 1 && td.last.r13 == 1);
	CHECK(td.last.r14 == 0x3f8 && td.last.r15 == 0x41);
	CHECK(r.rip == (uintptr_t)code + 1);
	/* IN of a word from 0x3fd keeps RAX's other bits */
	r.gpr[0] = 0xaaaaaaaaaaaaaaaaull;
	td.answer = 0xbeef;
	CHECK_EQ_INT(vexc(&r, 30, 0x3fdull << 16 | 8 | 1, 0, 2, code), 0);
	CHECK(td.last.r12 == 2 && td.last.r13 == 0 && td.last.r14 == 0x3fd);
	CHECK(r.gpr[0] == 0xaaaaaaaaaaaabeefull);
	/* IN of a dword clears bits 63:32 */
	td.answer = 0x12345678;
	CHECK_EQ_INT(vexc(&r, 30, 0xcfcull << 16 | 8 | 3, 0, 1, code), 0);
	CHECK(r.gpr[0] == 0x12345678);
	/* string I/O and odd sizes are refused */
	CHECK_EQ_INT(vexc(&r, 30, 0x3f8ull << 16 | 16, 0, 1, code), 1);
	CHECK(strstr(td.panic, "string") != NULL);
	CHECK_EQ_INT(vexc(&r, 30, 0x3f8ull << 16 | 2, 0, 1, code), 1);
}

TEST(ve_mmio_at_shared_gpas_is_decoded_and_requested_from_the_vmm)
{
	static const uint8_t st16[16] = { 0x66, 0x44, 0x89, 0x60, 0x18 },
			     ld8s[16] = { 0x0f, 0xbe, 0x40, 0x0e }, bad[16] = { 0xf3, 0x6c };
	struct trap_regs r;
	uint64_t gpa = SHARED | 0xfe000018;

	fresh(&r);
	r.gpr[12] = 0x9999abcd;
	CHECK_EQ_INT(vexc(&r, 48, 0, gpa, 0, st16), 0);
	CHECK(td.last.r11 == 48 && td.last.r12 == 2 && td.last.r13 == 1);
	CHECK(td.last.r14 == gpa && td.last.r15 == 0xabcd);
	CHECK(r.rip == (uintptr_t)st16 + 5);
	/* movsbl: the byte read sign-extends into EAX */
	r.gpr[0] = ~0ull;
	td.answer = 0x80;
	CHECK_EQ_INT(vexc(&r, 48, 0, SHARED | 0xb000000e, 0, ld8s), 0);
	CHECK(td.last.r12 == 1 && td.last.r13 == 0);
	CHECK(r.gpr[0] == 0xffffff80);
	CHECK(r.rip == (uintptr_t)ld8s + 4);
	/* a private GPA is never MMIO */
	CHECK_EQ_INT(vexc(&r, 48, 0, 0xfe000018, 0, st16), 1);
	CHECK(strstr(td.panic, "private GPA") != NULL);
	/* an instruction the decoder refuses: named with its bytes */
	CHECK_EQ_INT(vexc(&r, 48, 0, gpa, 0, bad), 1);
	CHECK(strstr(td.panic, "f3 6c") != NULL && strstr(td.panic, "REP") != NULL);
}

TEST(ve_vmm_failures_and_unknown_reasons_stop_with_one_message)
{
	static const uint8_t code[16] = { 0x0f, 0xa2 };
	struct trap_regs r;

	fresh(&r);
	td.status = 0x8000000000000000ull; /* TDG.VP.VMCALL_INVALID_OPERAND */
	CHECK_EQ_INT(vexc(&r, 10, 0, 0, 2, code), 1);
	CHECK(strstr(td.panic, "Instruction.CPUID") != NULL);
	CHECK(r.rip == (uintptr_t)code); /* not stepped over */
	td.status = 0;
	td.tdcall_status = 1;
	CHECK_EQ_INT(vexc(&r, 31, 0, 0, 2, code), 1);
	CHECK(strstr(td.panic, "Instruction.RDMSR") != NULL);
	td.tdcall_status = 0;
	CHECK_EQ_INT(vexc(&r, 55, 0, 0, 3, code), 1);
	CHECK(strstr(td.panic, "exit reason 55") != NULL);
}

#else

TEST(ve_handler_is_tested_on_x86_64_hosts_only)
{
	SKIP_CPU("x86_64", "the #VE handler is x86_64 code");
}

#endif
