/*
 * drivers/pl011.c — the Arm PrimeCell UART (PL011), polled.
 *
 * Arm DDI 0183G (PL011 TRM) §3.2: DR at 0x00 (data, bits 7:0), FR at 0x18
 * (flags: TXFF bit 5, RXFE bit 4). The firmware's console is this UART and
 * it is already set up (baud rate, 8N1, FIFOs, enabled), so the driver only
 * uses DR and FR: the subset the SBSA generic UART (Arm DEN0094 §B) also
 * implements, so the same code drives both kinds SPCR can name.
 */
#include "../kernel/kernel.h"
#include "../kernel/arch.h"
#include "pl011.h"

enum { PL011_DR = 0x00, PL011_FR = 0x18 };
enum { PL011_FR_RXFE = 1u << 4, PL011_FR_TXFF = 1u << 5 };

static struct {
	uint64_t base;
} uart;

void pl011_init(uint64_t base)
{
	uart.base = base;
}

void pl011_putc(char c)
{
	if (!uart.base)
		return;
	while (mmio_read32(uart.base + PL011_FR) & PL011_FR_TXFF)
		arch_relax();
	mmio_write32(uart.base + PL011_DR, (uint8_t)c);
}

int pl011_getc(void)
{
	if (!uart.base || (mmio_read32(uart.base + PL011_FR) & PL011_FR_RXFE))
		return -1;
	return (int)(mmio_read32(uart.base + PL011_DR) & 0xff);
}
