/*
 * kernel/x86_64/machine.c — the x86_64 PC pieces: the COM1 console, TSC
 * calibration against the ACPI PM timer, ACPI S5 poweroff and reset.
 */
#include "../kernel.h"
#include "../arch.h"
#include "../../drivers/acpi.h"
#include "../../drivers/uart16550.h"
#include "x86.h"

#define COM1 0x3f8
#define CALIBRATE_MS 50

void arch_console_init(void)
{
	/* OVMF's own console is COM1 too (QEMU -serial stdio), so the kernel
	 * keeps talking to the same terminal. SPCR, when a machine has one,
	 * names the port instead. */
	struct acpi_uart u;

	if (acpi_spcr(&u) == 0 && u.type == ACPI_UART_16550 && u.io)
		uart16550_init((uint16_t)u.addr);
	else
		uart16550_init(COM1);
}

void arch_console_putc(char c)
{
	uart16550_putc(c);
}

int arch_console_getc(void)
{
	return uart16550_getc();
}

/*
 * Count TSC ticks across CALIBRATE_MS of the ACPI PM timer (ACPI 6.5 §4.8.3.3:
 * 3.579545 MHz, 24 or 32 bits, wraps). Without a PM timer (hardware-reduced
 * ACPI), the hypervisor's timing leaf 0x40000010 (EAX = TSC kHz, the
 * VMware/KVM convention), CPUID leaf 0x15 (Intel SDM Vol. 2A: TSC/crystal
 * ratio) or 0x16 (base MHz) is the fallback.
 */
uint64_t arch_counter_calibrate(void)
{
	uint32_t mask = acpi_pm_timer_mask(), prev, now;
	uint64_t want = ACPI_PM_TIMER_HZ / 1000 * CALIBRATE_MS, ticks = 0, t0, t1;
	struct cpuid r;

	if (mask) {
		prev = acpi_pm_timer_read();
		t0 = arch_counter();
		while (ticks < want) {
			now = acpi_pm_timer_read();
			ticks += (now - prev) & mask;
			prev = now;
		}
		t1 = arch_counter();
		return (t1 - t0) * ACPI_PM_TIMER_HZ / ticks;
	}
	if ((cpuid(1, 0).c & (1u << 31)) && cpuid(0x40000000, 0).a >= 0x40000010 &&
	    (r = cpuid(0x40000010, 0)).a)
		return (uint64_t)r.a * 1000;
	if (cpuid(0, 0).a >= 0x15) {
		r = cpuid(0x15, 0);
		if (r.a && r.b && r.c)
			return (uint64_t)r.c * r.b / r.a;
	}
	if (cpuid(0, 0).a >= 0x16 && (r = cpuid(0x16, 0)).a)
		return (uint64_t)r.a * 1000000;
	plat_panic("time: no ACPI PM timer and no CPUID TSC frequency to calibrate against");
}

void arch_poweroff(void)
{
	int err = acpi_poweroff();

	plat_panic("poweroff: ACPI S5 failed (%s)", plat_strerror(err));
}

/* Reset through the FADT RESET_REG when it has one, else the PCI reset
 * control register 0xCF9 (Intel ICH9 datasheet §13.7.5: 0x02 then 0x06 =
 * hard reset), else a triple fault. */
void arch_reboot(void)
{
	static const struct { uint16_t limit; uint64_t base; } __attribute__((packed)) none = { 0, 0 };

	acpi_reset();
	outb(0xcf9, 0x02);
	outb(0xcf9, 0x06);
	for (volatile int i = 0; i < 1000000; i++)
		;
	__asm__ volatile("lidt %0; int3" : : "m"(none));
	arch_halt();
}
