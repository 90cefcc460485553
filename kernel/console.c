/*
 * kernel/console.c — the serial console behind plat_write/plat_getc. The UART
 * itself is the arch's (16550 on x86_64, PL011 on aarch64). Output turns
 * "\n" into "\r\n" as a terminal expects; input is passed through raw.
 */
#include "kernel.h"
#include "arch.h"
#include "../drivers/net.h"

static plat_write_filter_fn write_filter;
static void *write_filter_ctx;

void plat_set_write_filter(plat_write_filter_fn fn, void *ctx)
{
	write_filter = fn;
	write_filter_ctx = ctx;
}

void plat_console_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			arch_console_putc('\r');
		arch_console_putc(s[i]);
	}
}

void plat_write(const char *s, size_t n)
{
	if (write_filter)
		write_filter(write_filter_ctx, s, n);
	else
		plat_console_write(s, n);
}

/* The kernel's own messages (boot, panic) bypass any filter: a panic inside
 * the filter must still reach the console. */
void console_puts(const char *s)
{
	plat_console_write(s, strlen(s));
}

/* A byte console_input_waiting took from the UART to see it; -1: none. */
static int peeked = -1;

static int take(void)
{
	int c = peeked;

	if (c >= 0) {
		peeked = -1;
		return c;
	}
	return arch_console_getc();
}

bool console_input_waiting(void)
{
	if (peeked < 0)
		peeked = arch_console_getc();
	return peeked >= 0;
}

int plat_getc(void)
{
	int c;

	/* The shell's idle loop: the network is served while it waits. */
	while ((c = take()) < 0) {
		vnet_poll();
		arch_relax();
	}
	return c;
}

int plat_trygetc(void)
{
	return take();
}
