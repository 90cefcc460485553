/* drivers/uart16550.h — polled 16550 UART in port I/O space. */
#ifndef LLMK_UART16550_H
#define LLMK_UART16550_H

#include <stdint.h>

void uart16550_init(uint16_t port);
void uart16550_putc(char c);
int uart16550_getc(void); /* -1 when the receive buffer is empty */

#endif
