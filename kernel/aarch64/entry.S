/*
 * kernel/aarch64/entry.S — the exception vector table and the stack switch.
 *
 * DDI 0487 D1.10.2: VBAR_ELx points at 16 entries of 128 bytes (current EL
 * with SP_EL0, current EL with SP_ELx, lower EL AArch64, lower EL AArch32;
 * each Synchronous, IRQ, FIQ, SError), aligned to 2 KiB. Nothing here ever
 * enables interrupts, so any entry is fatal: every entry saves the interrupted
 * x0-x30, sp and its own index into a frame and calls trap_handler(), which
 * panics with ESR, ELR and FAR. The frame and the handler live on a stack of
 * their own, so a fault caused by the stack (an overflow) still gets told.
 * TPIDR_EL1 and TPIDR_EL0 (unused otherwise: no threads, no TLS) hold x0 and
 * x1 while the frame is built.
 */
	.text

.macro VECTOR n
	.balign 128
vector_\n:
	msr tpidr_el1, x0        /* free x0 to build the frame */
	mov x0, #\n
	b trap_entry
.endm

	.balign 2048
	.globl trap_vectors
	.hidden trap_vectors
trap_vectors:
	.irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	VECTOR \n
	.endr

/* Frame: x0..x30 at 8*i, sp at 248, vector index at 256 (struct trap_frame). */
trap_entry:
	msr tpidr_el0, x1
	adrp x1, trap_stack_top
	add x1, x1, :lo12:trap_stack_top
	sub x1, x1, #272
	stp x2, x3, [x1, #16]
	mov x2, sp
	str x2, [x1, #248]
	str x0, [x1, #256]
	mrs x0, tpidr_el1
	mrs x2, tpidr_el0
	stp x0, x2, [x1, #0]
	mov sp, x1
	stp x4, x5, [sp, #32]
	stp x6, x7, [sp, #48]
	stp x8, x9, [sp, #64]
	stp x10, x11, [sp, #80]
	stp x12, x13, [sp, #96]
	stp x14, x15, [sp, #112]
	stp x16, x17, [sp, #128]
	stp x18, x19, [sp, #144]
	stp x20, x21, [sp, #160]
	stp x22, x23, [sp, #176]
	stp x24, x25, [sp, #192]
	stp x26, x27, [sp, #208]
	stp x28, x29, [sp, #224]
	str x30, [sp, #240]
	mov x0, sp
	bl trap_handler
1:	msr daifset, #0xf
	wfi
	b 1b

/* void arch_run_on_stack(void (*fn)(void *), void *arg, void *top) */
	.globl arch_run_on_stack
	.hidden arch_run_on_stack
arch_run_on_stack:
	mov x3, x0
	mov x0, x1
	and x2, x2, #~15         /* AAPCS64 §6.4.5.1: sp 16-byte aligned */
	mov sp, x2
	mov x29, #0
	mov x30, #0
	blr x3
	brk #0

/*
 * A secondary CPU's first instructions (PSCI CPU_ON entry point, DEN0022D
 * §6.4: EL1, MMU and caches off, x0 = the context id, here the address of
 * a struct smp_start in kernel/aarch64/smp.c). Load the boot CPU's
 * translation regime and system control, turn the MMU on (the code runs at
 * the same address before and after: the firmware's map is an identity
 * map), take a stack and call entry(cpu). Only aligned 64-bit loads before
 * the MMU is on: memory is Device there (DDI 0487 D8.2.10).
 */
	.globl smp_entry
	.hidden smp_entry
	.balign 8
smp_entry:
	msr daifset, #0xf
	ldr x1, [x0, #0]
	msr mair_el1, x1
	ldr x1, [x0, #8]
	msr tcr_el1, x1
	ldr x1, [x0, #16]
	msr ttbr0_el1, x1
	ldr x1, [x0, #24]
	msr ttbr1_el1, x1
	ldr x1, [x0, #40]
	msr vbar_el1, x1
	ldr x1, [x0, #48]
	msr cpacr_el1, x1
	isb
	tlbi vmalle1
	dsb nsh
	isb
	ldr x1, [x0, #32]
	msr sctlr_el1, x1
	isb
	ldr x1, [x0, #56]
	mov sp, x1
	ldr x2, [x0, #64]
	ldr x0, [x0, #72]
	mov x29, #0
	mov x30, #0
	blr x2
	brk #0

	/* Emergency stack for trap_entry: one fault's frame plus the panic
	 * path (plat_vsnprintf, the console). */
	.bss
	.balign 16
trap_stack:
	.skip 16384
trap_stack_top:

	.section .note.GNU-stack, "", @progbits
