/*
 * kernel/net_none.c — kernel/net.h without a network device: every call
 * says so. The virtio-net driver and lwIP (drivers/) replace this file.
 */
#include "net.h"

int net_listen(uint16_t port, int *handle, uint16_t *bound)
{
	return -LLMK_ENOTSUP;
}

int net_accept(int listener, int *conn)
{
	return -LLMK_ENOTSUP;
}

long net_read(int conn, void *buf, size_t cap)
{
	return -LLMK_ENOTSUP;
}

long net_write(int conn, const void *buf, size_t n)
{
	return -LLMK_ENOTSUP;
}

void net_close(int handle)
{
}

int net_poll(uint64_t timeout_ns)
{
	return 0;
}

bool net_loopback_only(void)
{
	return false;
}
