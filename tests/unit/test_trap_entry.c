/*
 * tests/unit/test_trap_entry.c — kernel/x86_64/entry.S's emulating stubs
 * (#VE, vector 20; #VC, vector 29), assembled into the host test and run in
 * user mode: the test builds the frame the CPU would push (SS, RSP, RFLAGS,
 * CS, RIP, and #VC's error code), loads every register with a known value
 * and jumps to the stub from trap_stubs[]. trap_emulate (this file's) sees
 * the registers as struct trap_regs, changes some and RIP; the stub must
 * restore all of them and IRETQ (allowed at the same privilege level) to
 * the new RIP with the old RSP. This is the code every CPUID and port
 * access of a confidential guest goes through; it cannot run in one here.
 */
#include "test.h"

#include <stdlib.h>

#if defined(__x86_64__)
#include "../../kernel/x86_64/x86.h"

/* entry.S itself, as the kernel build assembles it (run from the repo root) */
__asm__(".include \"kernel/x86_64/entry.S\"\n\t.text");

extern const uint64_t trap_stubs[32];
void trap_handler(const void *frame);
void trap_emulate(struct trap_regs *r);
uint64_t entry_run(uint64_t stub, uint64_t error, uint64_t out[16]);
extern const char entry_resume[], entry_wrong[];

static struct {
	struct trap_regs seen;
	int calls;
} t;

void trap_handler(const void *frame)
{
	(void)frame;
	abort(); /* a fatal trap stub was taken: the test is broken */
}

void trap_emulate(struct trap_regs *r)
{
	t.seen = *r;
	t.calls++;
	r->gpr[0] = 0xaaaa;   /* RAX */
	r->gpr[3] = 0xbbbb;   /* RBX */
	r->gpr[15] = 0xcccc;  /* R15 */
	r->gpr[4] = 0xdead;   /* RSP's slot: must not reach RSP */
	r->rip = (uintptr_t)entry_resume;
}

/*
 * uint64_t entry_run(stub, error, out[16]): registers 0..15 (but RSP) get
 * 0x1111 * (n + 1), the frame is pushed, the stub entered; at entry_resume
 * every register is stored to out[] and the RSP it came back with returned.
 * error == ~0: no error code (vector 20's frame).
 */
__asm__(
	"	.text\n"
	"	.globl entry_run, entry_resume, entry_wrong\n"
	"entry_run:\n"
	"	push %rbx; push %rbp; push %r12; push %r13; push %r14; push %r15\n"
	"	mov %rdx, entry_out(%rip)\n"
	"	mov %rdi, entry_stub(%rip)\n"
	"	mov %rsp, entry_rsp(%rip)\n"
	"	mov %rsp, %rax\n"
	"	xor %ecx, %ecx; mov %ss, %ecx; push %rcx\n" /* SS */
	"	push %rax\n"                                 /* RSP */
	"	pushfq\n"                                    /* RFLAGS */
	"	mov %cs, %ecx; push %rcx\n"                  /* CS */
	"	lea entry_wrong(%rip), %rcx; push %rcx\n"    /* RIP */
	"	cmp $-1, %rsi; je 1f\n"
	"	push %rsi\n"                                 /* error code */
	"1:	mov $0x1111, %rax; mov $0x2222, %rcx; mov $0x3333, %rdx; mov $0x4444, %rbx\n"
	"	mov $0x6666, %rbp; mov $0x7777, %rsi; mov $0x8888, %rdi; mov $0x9999, %r8\n"
	"	mov $0xaaaa0, %r9; mov $0xbbbb0, %r10; mov $0xcccc0, %r11; mov $0xdddd0, %r12\n"
	"	mov $0xeeee0, %r13; mov $0xffff0, %r14; mov $0x10000, %r15\n"
	"	jmp *entry_stub(%rip)\n"
	"entry_wrong:\n"
	"	ud2\n"
	"entry_resume:\n"
	"	mov %rax, entry_tmp(%rip)\n"
	"	mov entry_out(%rip), %rax\n"
	"	mov %rcx, 8(%rax); mov %rdx, 16(%rax); mov %rbx, 24(%rax); mov %rsp, 32(%rax)\n"
	"	mov %rbp, 40(%rax); mov %rsi, 48(%rax); mov %rdi, 56(%rax); mov %r8, 64(%rax)\n"
	"	mov %r9, 72(%rax); mov %r10, 80(%rax); mov %r11, 88(%rax); mov %r12, 96(%rax)\n"
	"	mov %r13, 104(%rax); mov %r14, 112(%rax); mov %r15, 120(%rax)\n"
	"	mov entry_tmp(%rip), %rcx; mov %rcx, (%rax)\n"
	"	mov %rsp, %rax\n"
	"	sub entry_rsp(%rip), %rax\n" /* 0 when RSP came back as it was */
	"	pop %r15; pop %r14; pop %r13; pop %r12; pop %rbp; pop %rbx\n"
	"	ret\n"
	"	.data\n"
	"	.balign 8\n"
	"entry_out: .quad 0\nentry_stub: .quad 0\nentry_rsp: .quad 0\nentry_tmp: .quad 0\n"
	"	.text\n");

static void check_round_trip(int vector, uint64_t error)
{
	uint64_t out[16], want[16] = { 0xaaaa, 0x2222, 0x3333, 0xbbbb, 0, 0x6666, 0x7777, 0x8888,
				       0x9999, 0xaaaa0, 0xbbbb0, 0xcccc0, 0xdddd0, 0xeeee0, 0xffff0,
				       0xcccc };
	memset(&t, 0, sizeof t);
	CHECK(entry_run(trap_stubs[vector], error, out) == 0); /* the same RSP */
	CHECK_EQ_INT(t.calls, 1);
	CHECK_EQ_INT(t.seen.vector, vector);
	CHECK(t.seen.error == (error == ~0ull ? 0 : error));
	CHECK(t.seen.rip == (uintptr_t)entry_wrong);
	/* what the handler saw: every register in the SDM's order */
	static const uint64_t in[16] = { 0x1111, 0x2222, 0x3333, 0x4444, 0, 0x6666, 0x7777, 0x8888,
					 0x9999, 0xaaaa0, 0xbbbb0, 0xcccc0, 0xdddd0, 0xeeee0,
					 0xffff0, 0x10000 };
	for (int i = 0; i < 16; i++)
		if (i != 4)
			CHECK(t.seen.gpr[i] == in[i]);
	CHECK(t.seen.rsp != 0 && t.seen.ss != 0 && t.seen.cs != 0);
	/* what came back: the handler's changes, the rest untouched */
	for (int i = 0; i < 16; i++)
		if (i != 4)
			CHECK(out[i] == want[i]);
}

TEST(trap_entry_vc_stub_saves_every_register_and_irets_to_the_new_rip)
{
	check_round_trip(29, 0x7b);
}

TEST(trap_entry_ve_stub_pushes_no_error_code_and_irets_to_the_new_rip)
{
	check_round_trip(20, ~0ull);
}

#else

TEST(trap_entry_is_tested_on_x86_64_hosts_only)
{
	SKIP_CPU("x86_64", "kernel/x86_64/entry.S is x86_64 code");
}

#endif
