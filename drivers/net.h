/*
 * drivers/net.h — the network door's kernel side: lwIP over virtio-net
 * (drivers/lwip/), polled, and a small TCP interface over lwIP's raw API
 * (drivers/lwip/net_tcp.c) for the services above it.
 *
 * Everything is polled from one CPU: vnet_poll() takes frames from the
 * device into lwIP and runs its timers; call it from every idle loop.
 */
#ifndef LLMK_NET_H
#define LLMK_NET_H

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

/*
 * TCP, non-blocking: every call returns at once. Handles are small ints.
 * listen: a handle, or -LLMK_EBUSY when every slot is taken.
 * accept: a connection handle, -LLMK_EBUSY when none is waiting.
 * read: bytes read (> 0), 0 at end of stream, -LLMK_EBUSY when nothing is
 *       waiting, -LLMK_EIO when the connection was reset.
 * write: bytes taken (possibly fewer than len, -LLMK_EBUSY for none).
 * close: release the handle (a connection is closed gracefully).
 */
int net_tcp_listen(uint16_t port);
int net_tcp_accept(int listener);
int net_tcp_read(int conn, void *buf, size_t len);
int net_tcp_write(int conn, const void *buf, size_t len);
int net_tcp_close(int handle);

/* RFC 862 echo on a port, served from vnet_poll: the link check the QEMU
 * test uses. */
int net_echo_start(uint16_t port);
void net_echo_poll(void); /* vnet_poll's: serve the echo connections */

#endif
