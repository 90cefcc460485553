/*
 * kernel/aarch64/machine.c — the aarch64 machine pieces: the PL011 console
 * named by ACPI SPCR, the generic timer's frequency, and PSCI poweroff and
 * reset through the conduit the FADT names.
 */
#include "../kernel.h"
#include "../arch.h"
#include "../../drivers/acpi.h"
#include "../../drivers/pl011.h"
#include "aarch64.h"

/*
 * The console is whatever SPCR (Microsoft "Serial Port Console Redirection
 * Table") names: on QEMU's virt that is the PL011 the firmware printed
 * through, so the kernel keeps talking to the same terminal. Without an
 * SPCR there is no console to fall back to (no fixed address on Arm).
 */
void arch_console_init(void)
{
	struct acpi_uart u;

	if (acpi_spcr(&u) == 0 && u.type == ACPI_UART_PL011 && !u.io && u.addr)
		pl011_init(u.addr);
}

void arch_console_putc(char c)
{
	pl011_putc(c);
}

int arch_console_getc(void)
{
	return pl011_getc();
}

/* CNTFRQ_EL0 (DDI 0487 D19.10.1) holds the system counter's frequency; the
 * firmware must have set it (UEFI 2.10 §2.3.6.4 requires the generic timer
 * to be programmed), so it is read, not measured. */
uint64_t arch_counter_calibrate(void)
{
	return read_sysreg(cntfrq_el0) & 0xffffffffu;
}

/*
 * PSCI (Arm DEN0022D §5.1.9-§5.1.10): SYSTEM_OFF 0x84000008 and SYSTEM_RESET
 * 0x84000009, SMC32 calling convention, through HVC or SMC. ACPI 6.5 §5.2.9
 * Table 5.9: the FADT's ARM_BOOT_ARCH field (offset 129) says whether the
 * machine is PSCI-compliant (bit 0) and whether the conduit is HVC (bit 1).
 */
#define PSCI_SYSTEM_OFF 0x84000008u
#define PSCI_SYSTEM_RESET 0x84000009u
#define FADT_ARM_BOOT_ARCH 129
#define ARM_BOOT_PSCI_COMPLIANT (1u << 0)
#define ARM_BOOT_PSCI_USE_HVC (1u << 1)

/* 1: HVC, 0: SMC, or -LLMK_ENOENT (no FADT) / -LLMK_ENOTSUP (not PSCI). */
int psci_conduit(void)
{
	const uint8_t *f = acpi_table("FACP", 0);
	uint32_t len;
	unsigned flags;

	if (!f)
		return -LLMK_ENOENT;
	memcpy(&len, f + 4, 4);
	if (len < FADT_ARM_BOOT_ARCH + 2)
		return -LLMK_ENOTSUP;
	flags = f[FADT_ARM_BOOT_ARCH] | (unsigned)f[FADT_ARM_BOOT_ARCH + 1] << 8;
	if (!(flags & ARM_BOOT_PSCI_COMPLIANT))
		return -LLMK_ENOTSUP;
	return (flags & ARM_BOOT_PSCI_USE_HVC) ? 1 : 0;
}

/* PSCI's return value (DEN0022D §5.2.2: 0 or a negative PSCI error), or our
 * -LLMK_* when there is no conduit. */
int64_t psci_call(uint32_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
	int conduit = psci_conduit();

	if (conduit < 0)
		return conduit;
	/* Set only now: a call in between may reuse x0-x3 (GCC's local register
	 * variables are guaranteed only at the asm that uses them). */
	register uint64_t x0 __asm__("x0") = fn;
	register uint64_t x1 __asm__("x1") = a1;
	register uint64_t x2 __asm__("x2") = a2;
	register uint64_t x3 __asm__("x3") = a3;
	if (conduit)
		__asm__ volatile("hvc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
	else
		__asm__ volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
	return (int64_t)x0;
}

static __attribute__((noreturn)) void psci_failed(const char *what, int64_t r)
{
	int c = psci_conduit();

	if (c < 0)
		plat_panic("%s: no PSCI conduit in the ACPI FADT ARM_BOOT_ARCH (%s)", what,
			   plat_strerror(c));
	plat_panic("%s: PSCI call via %s returned %lld", what, c ? "HVC" : "SMC", (long long)r);
}

void arch_poweroff(void)
{
	psci_failed("poweroff", psci_call(PSCI_SYSTEM_OFF, 0, 0, 0));
}

void arch_reboot(void)
{
	psci_failed("reboot", psci_call(PSCI_SYSTEM_RESET, 0, 0, 0));
}
