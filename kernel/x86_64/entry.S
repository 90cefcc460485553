/*
 * kernel/x86_64/entry.S — exception entry stubs and the stack switch.
 *
 * Intel SDM Vol. 3A §6.13: vectors 8, 10-14, 17, 21, 29 and 30 push an error
 * code; for the others a zero is pushed so every frame looks the same:
 * [vector, error, rip, cs, rflags, rsp, ss]. Exceptions are fatal here (no
 * interrupts are ever enabled), so the handler never returns.
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
TRAP_NOERR 20
TRAP_ERR 21
TRAP_NOERR 22
TRAP_NOERR 23
TRAP_NOERR 24
TRAP_NOERR 25
TRAP_NOERR 26
TRAP_NOERR 27
TRAP_NOERR 28
TRAP_ERR 29
TRAP_ERR 30
TRAP_NOERR 31

trap_common:
	movq %rsp, %rdi
	andq $-16, %rsp
	call trap_handler
1:	cli
	hlt
	jmp 1b

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
