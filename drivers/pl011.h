/* drivers/pl011.h — polled Arm PL011 (or SBSA generic) UART in MMIO space. */
#ifndef LLMK_PL011_H
#define LLMK_PL011_H

#include <stdint.h>

void pl011_init(uint64_t base);
void pl011_putc(char c);
int pl011_getc(void); /* -1 when the receive FIFO is empty */

#endif
