/*
 * kernel/x86_64/ap_boot.S — where an application processor starts.
 *
 * kernel/x86_64/smp.c copies ap_boot_start..ap_boot_end to a page below
 * 1 MiB and fills the data block (struct ap_boot_data, same offsets as the
 * AP_* constants below). A STARTUP IPI with vector V starts the AP in real
 * mode at CS = V << 8, IP = 0 (Intel SDM Vol. 3A §9.4.4.1). From there, the
 * SDM Vol. 3A §9.8.5 steps to IA-32e mode: protected mode with a flat GDT,
 * CR4.PAE, CR3 (the boot CPU's page tables), EFER.LME, CR0.PG, then a far
 * jump to a 64-bit code segment. In 64-bit mode the AP takes the boot CPU's
 * CR4, XCR0 (XSETBV is per CPU: AVX state must be enabled on each one),
 * GDT, IDT and segments, its own stack, and calls entry(arg).
 *
 * The copy runs at an address known only at run time: real-mode code uses
 * CS-relative offsets, 32-bit code addresses the data through %esi (the
 * page's base, computed from CS before leaving real mode).
 */
	.set AP_GDTR, 32     /* 16-bit limit, 32-bit base: the copy's own GDT */
	.set AP_FAR32, 48    /* 32-bit offset, 16-bit selector */
	.set AP_FAR64, 56
	.set AP_CR3, 64
	.set AP_CR4_32, 72   /* PAE (and LA57 if the boot CPU has it) */
	.set AP_EFER, 80
	.set AP_CR0, 88
	.set AP_CR4, 96
	.set AP_XCR0, 104
	.set AP_HAVE_XCR0, 112
	.set AP_MXCSR, 116
	.set AP_KGDTR, 120   /* 16-bit limit, 64-bit base */
	.set AP_KIDTR, 136
	.set AP_KCS, 152
	.set AP_KDS, 154
	.set AP_STACK, 160
	.set AP_ARG, 168
	.set AP_ENTRY, 176

	.set SEL_DATA, 0x10
	.set MSR_EFER, 0xc0000080

	.text
	.globl ap_boot_start, ap_boot_32, ap_boot_64, ap_boot_data, ap_boot_end
	.hidden ap_boot_start, ap_boot_32, ap_boot_64, ap_boot_data, ap_boot_end

	.code16
ap_boot_start:
	cli
	cld
	movw %cs, %ax
	movw %ax, %ds
	movzwl %ax, %esi
	shll $4, %esi
	lgdtl (ap_boot_data - ap_boot_start + AP_GDTR)
	movl %cr0, %eax
	orl $1, %eax                    /* CR0.PE */
	movl %eax, %cr0
	ljmpl *(ap_boot_data - ap_boot_start + AP_FAR32)

	.code32
ap_boot_32:
	movw $SEL_DATA, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movl (ap_boot_data - ap_boot_start + AP_CR4_32)(%esi), %eax
	movl %eax, %cr4
	movl (ap_boot_data - ap_boot_start + AP_CR3)(%esi), %eax
	movl %eax, %cr3
	movl $MSR_EFER, %ecx
	movl (ap_boot_data - ap_boot_start + AP_EFER)(%esi), %eax
	movl (ap_boot_data - ap_boot_start + AP_EFER + 4)(%esi), %edx
	wrmsr
	movl (ap_boot_data - ap_boot_start + AP_CR0)(%esi), %eax
	movl %eax, %cr0                 /* PG with EFER.LME: IA-32e mode */
	ljmpl *(ap_boot_data - ap_boot_start + AP_FAR64)(%esi)

	.code64
ap_boot_64:
	movl %esi, %esi                 /* upper halves are undefined after the switch */
	movq (ap_boot_data - ap_boot_start + AP_CR4)(%rsi), %rax
	movq %rax, %cr4
	cmpl $0, (ap_boot_data - ap_boot_start + AP_HAVE_XCR0)(%rsi)
	je 1f
	xorl %ecx, %ecx
	movl (ap_boot_data - ap_boot_start + AP_XCR0)(%rsi), %eax
	movl (ap_boot_data - ap_boot_start + AP_XCR0 + 4)(%rsi), %edx
	xsetbv
1:	lgdt (ap_boot_data - ap_boot_start + AP_KGDTR)(%rsi)
	lidt (ap_boot_data - ap_boot_start + AP_KIDTR)(%rsi)
	movw (ap_boot_data - ap_boot_start + AP_KDS)(%rsi), %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %fs
	movw %ax, %gs
	movw %ax, %ss
	movq (ap_boot_data - ap_boot_start + AP_STACK)(%rsi), %rsp
	movzwq (ap_boot_data - ap_boot_start + AP_KCS)(%rsi), %rax
	pushq %rax
	leaq 2f(%rip), %rax
	pushq %rax
	lretq                           /* CS: the boot CPU's code segment */
2:	fninit
	ldmxcsr (ap_boot_data - ap_boot_start + AP_MXCSR)(%rsi)
	movq (ap_boot_data - ap_boot_start + AP_ARG)(%rsi), %rdi
	movq (ap_boot_data - ap_boot_start + AP_ENTRY)(%rsi), %rax
	xorl %ebp, %ebp
	callq *%rax
	ud2

	.balign 16
ap_boot_data:
	.fill 184, 1, 0
ap_boot_end:

	.section .note.GNU-stack, "", @progbits
