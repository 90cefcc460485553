/*
 * kernel/net.h — the network seam beside kernel/platform.h: TCP listen,
 * accept, read, write, close, every call non-blocking and polled.
 *
 * llm/ and shell/ have no threads and the kernel has no interrupts, so
 * nothing here waits: a server calls net_poll between rounds over its
 * listener and connections, and each call does what can be done now.
 * The kernel implements it over virtio-net + lwIP (drivers/, NO_SYS raw
 * API, polled); tools/host/net.c over sockets bound to 127.0.0.1 only.
 * Without a network device every call returns -LLMK_ENOTSUP.
 *
 * Handles are small non-negative ints, one namespace for listeners and
 * connections. Functions return 0 or a negative LLMK_E* code unless stated.
 */
#ifndef LLMK_NET_H
#define LLMK_NET_H

#include "platform.h"

/* The most handles open at once (listeners + connections); past it
 * net_accept leaves new connections waiting in the backlog. */
#define NET_MAX_HANDLES 128

/* Listen for TCP on port (0: any free port); *handle the listener, *bound
 * the port it got. The host binds 127.0.0.1 only. -LLMK_ENOTSUP: no network
 * device; -LLMK_EBUSY: the port is taken; -LLMK_ENOMEM: no handle free. */
int net_listen(uint16_t port, int *handle, uint16_t *bound);
/* One waiting connection, if any: 1 and *conn set, 0 when none waits. */
int net_accept(int listener, int *conn);
/*
 * Read what has arrived, up to cap bytes: the count (> 0), 0 when nothing
 * is waiting, NET_EOF when the peer has closed its side and everything it
 * sent was read, or -LLMK_EIO (reset).
 */
#define NET_EOF (-1000)
long net_read(int conn, void *buf, size_t cap);
/* Queue up to n bytes for sending: the count taken (0: the send buffer is
 * full, try after net_poll), or -LLMK_EIO (the peer is gone). */
long net_write(int conn, const void *buf, size_t n);
/* Close a connection or listener: unsent bytes are still sent (lingering is
 * the stack's), the handle is free at once. */
void net_close(int handle);
/*
 * Wait at most timeout_ns for something to do: a connection to accept,
 * bytes to read, room to write on a connection with unsent bytes, or a
 * console byte. The host sleeps in poll(2); the kernel runs the driver
 * and the stack's timers and returns. Spurious returns are allowed.
 * Returns 0, or NET_EOF when the console's input has ended (host stdin at
 * end of file: a server run from a script stops there; a serial console
 * never ends).
 */
int net_poll(uint64_t timeout_ns);

/* True where the network is the host's loopback (the host build): only
 * there may a server speak plain HTTP; the kernel serves attested TLS. */
bool net_loopback_only(void);

#endif
