/*
 * drivers/net.h — the network door's kernel side: lwIP over virtio-net
 * (drivers/lwip/), polled; kernel/net.h (TCP for the API server) over
 * lwIP's raw API in drivers/lwip/net_tcp.c.
 *
 * Everything is polled from one CPU: vnet_poll() takes frames from the
 * device into lwIP and runs its timers; call it from every idle loop.
 */
#ifndef LLMK_DRIVERS_NET_H
#define LLMK_DRIVERS_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Start the first virtio-net device and lwIP on it, DHCP asking for an
 * address; prints one line per step. -LLMK_ENOENT when there is no device. */
int net_init(void);
/* Receive, hand to lwIP, run its timers. Cheap when there is no device;
 * does nothing when called from inside itself. */
void vnet_poll(void);
/* The IPv4 address, "" before DHCP bound one (buf >= 16 bytes). */
void net_addr(char *buf, size_t len);

/* True once net_init started a device: kernel/net.h's calls work. */
bool net_ready(void);

/* kernel/console.c: does a console byte wait? (It stays for plat_getc and
 * plat_trygetc.) net_poll returns for it, so a server leaves the shell on
 * the serial line usable. */
bool console_input_waiting(void);

/* kernel/net.h is implemented over lwIP's raw TCP API in
 * drivers/lwip/net_tcp.c (its handles, its poll). */

#endif
