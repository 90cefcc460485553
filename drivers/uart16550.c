/*
 * drivers/uart16550.c — polled 16550A UART (TI PC16550D datasheet, §8
 * register map). No interrupts: transmit waits for THRE, receive checks DR.
 */
#include "../kernel/kernel.h"
#include "../kernel/arch.h"
#include "uart16550.h"

enum {
	RBR = 0, THR = 0, DLL = 0, /* DLL/DLM when LCR.DLAB = 1 */
	IER = 1, DLM = 1,
	FCR = 2,
	LCR = 3,
	MCR = 4,
	LSR = 5,
};
#define LCR_8N1 0x03
#define LCR_DLAB 0x80
#define FCR_ENABLE 0x01
#define FCR_CLEAR_TX 0x04
#define MCR_DTR_RTS 0x03
#define LSR_DR 0x01   /* data ready */
#define LSR_THRE 0x20 /* transmit holding register empty */

static struct {
	uint16_t port;
} uart;

static uint8_t rd(int reg)
{
	return (uint8_t)arch_io_in((uint16_t)(uart.port + reg), 1);
}

static void wr(int reg, uint8_t v)
{
	arch_io_out((uint16_t)(uart.port + reg), v, 1);
}

/* 115200 8N1, FIFOs on, interrupts off. The receive FIFO is not cleared:
 * bytes typed while the firmware handed over are kept. */
void uart16550_init(uint16_t port)
{
	uart.port = port;
	wr(IER, 0);
	wr(LCR, LCR_DLAB);
	wr(DLL, 1); /* 115200 = 1.8432 MHz / 16 / 1 */
	wr(DLM, 0);
	wr(LCR, LCR_8N1);
	wr(FCR, FCR_ENABLE | FCR_CLEAR_TX);
	wr(MCR, MCR_DTR_RTS);
}

void uart16550_putc(char c)
{
	while (!(rd(LSR) & LSR_THRE))
		arch_relax();
	wr(THR, (uint8_t)c);
}

int uart16550_getc(void)
{
	if (!(rd(LSR) & LSR_DR))
		return -1;
	return rd(RBR);
}
