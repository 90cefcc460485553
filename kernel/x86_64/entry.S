/*
 * kernel/x86_64/entry.S — exception entry stubs and the stack switch.
 *
 * Intel SDM Vol. 3A §6.13: vectors 8, 10-14, 17, 21, 29 and 30 push an error
 * code; for the others a zero is pushed so every frame looks the same:
 * [vector, error, rip, cs, rflags, rsp, ss]. Exceptions are fatal here (no
 * interrupts are ever enabled), so the handler never returns.
 *
 * Two exceptions are not faults but requests to emulate an instruction in a
 * confidential guest: #VE (vector 20, TDX: no error code) and #VC (vector
 * 29, SEV-ES/SNP: the exit code as error code). Their stubs save every
 * general register as struct trap_regs (kernel/x86_64/x86.h), call
 * trap_emulate(), which changes the registers and RIP as the instruction
 * would have, restore the registers and return with IRETQ.
 */
	.text

.macro TRAP_NOERR n
	.align 16
trap_\n:
	pushq $0
	pushq $\n
	jmp trap_common
.endm

.macro TRAP_ERR n
	.align 16
trap_\n:
	pushq $\n
	jmp trap_common
.endm

.macro TRAP_EMUL n, err
	.align 16
trap_\n:
	.if \err == 0
	pushq $0
	.endif
	pushq $\n
	jmp emul_common
.endm

TRAP_NOERR 0
TRAP_NOERR 1
TRAP_NOERR 2
TRAP_NOERR 3
TRAP_NOERR 4
TRAP_NOERR 5
TRAP_NOERR 6
TRAP_NOERR 7
TRAP_ERR 8
TRAP_NOERR 9
TRAP_ERR 10
TRAP_ERR 11
TRAP_ERR 12
TRAP_ERR 13
TRAP_ERR 14
TRAP_NOERR 15
TRAP_NOERR 16
TRAP_ERR 17
TRAP_NOERR 18
TRAP_NOERR 19
TRAP_EMUL 20, 0
TRAP_ERR 21
TRAP_NOERR 22
TRAP_NOERR 23
TRAP_NOERR 24
TRAP_NOERR 25
TRAP_NOERR 26
TRAP_NOERR 27
TRAP_NOERR 28
TRAP_EMUL 29, 1
TRAP_ERR 30
TRAP_NOERR 31

trap_common:
	movq %rsp, %rdi
	andq $-16, %rsp
	call trap_handler
1:	cli
	hlt
	jmp 1b

/* gpr[0] (RAX) ends lowest: push R15 first. RSP's slot is a placeholder
 * (the interrupted RSP is in the CPU's frame). RBP keeps our stack pointer
 * across the call, which is free to align the stack; the SysV ABI wants
 * DF clear on entry, which the interrupted code may not have left. */
emul_common:
	pushq %r15
	pushq %r14
	pushq %r13
	pushq %r12
	pushq %r11
	pushq %r10
	pushq %r9
	pushq %r8
	pushq %rdi
	pushq %rsi
	pushq %rbp
	pushq $0
	pushq %rbx
	pushq %rdx
	pushq %rcx
	pushq %rax
	movq %rsp, %rdi
	movq %rsp, %rbp
	andq $-16, %rsp
	cld
	call trap_emulate
	movq %rbp, %rsp
	popq %rax
	popq %rcx
	popq %rdx
	popq %rbx
	addq $8, %rsp
	popq %rbp
	popq %rsi
	popq %rdi
	popq %r8
	popq %r9
	popq %r10
	popq %r11
	popq %r12
	popq %r13
	popq %r14
	popq %r15
	addq $16, %rsp /* vector, error code */
	iretq

/* Stub addresses, vector order, for trap_init(). */
	.section .data.rel.ro, "aw"
	.align 8
	.globl trap_stubs
	.hidden trap_stubs
trap_stubs:
	.irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.quad trap_\n
	.endr

/* void arch_run_on_stack(void (*fn)(void *), void *arg, void *top) */
	.text
	.globl arch_run_on_stack
	.hidden arch_run_on_stack
arch_run_on_stack:
	movq %rdi, %rax
	movq %rsi, %rdi
	movq %rdx, %rsp
	xorl %ebp, %ebp
	call *%rax
	ud2

	.section .note.GNU-stack, "", @progbits
