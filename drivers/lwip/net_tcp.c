/*
 * drivers/lwip/net_tcp.c — kernel/net.h over lwIP's raw TCP API (lwIP 2.1
 * doc "Raw TCP/IP interface"): listen, accept, read, write, close, every
 * call non-blocking; net_poll drives the device and the stack's timers
 * (vnet_poll) until something is ready or a console byte waits, so the
 * shell on the serial line stays usable while serving.
 *
 * One static table of handles (listeners and connections, NET_TCP_SLOTS);
 * a connection's receive ring is taken from plat_alloc when lwIP hands it
 * over and given back at close, so memory is bounded by the table:
 * NET_TCP_SLOTS x NET_TCP_RING bytes at most. lwIP calls back from inside
 * vnet_poll: a new connection waits in its slot until accepted; received
 * data waits in the ring. The ring holds a whole receive window (TCP_WND),
 * and the window reopens only as the service reads (tcp_recved), so
 * arriving data always fits; if it ever does not, lwIP keeps it and offers
 * it again (ERR_MEM).
 */
#include "kernel/platform.h"
#include "kernel/arch.h"
#include "kernel/net.h"
#include "drivers/net.h"
#include "lwip/tcp.h"

#define NET_TCP_SLOTS 72   /* serve's 64 connections, its listener, and room to spare */
#define NET_TCP_RING 16384
_Static_assert(NET_TCP_RING >= TCP_WND, "a full receive window fits the ring");
_Static_assert(NET_TCP_SLOTS <= NET_MAX_HANDLES, "kernel/net.h's bound holds");
_Static_assert(MEMP_NUM_TCP_PCB >= NET_TCP_SLOTS, "a pcb for every slot");

enum { S_FREE = 0, S_LISTEN, S_PENDING, S_OPEN };

struct slot {
	int kind;
	int listener;          /* S_PENDING, S_OPEN: the listening handle it came from */
	struct tcp_pcb *pcb;   /* NULL once lwIP dropped it (tcp_err) */
	bool eof, reset;
	bool want_room;        /* a write found the send buffer full */
	uint32_t head, len;    /* ring contents */
	uint8_t *ring;         /* NET_TCP_RING bytes (connections) */
};

static struct {
	struct slot s[NET_TCP_SLOTS];
} tcp;

static struct slot *slot_of(int h, int kind)
{
	if (h < 0 || h >= NET_TCP_SLOTS || tcp.s[h].kind != kind)
		return NULL;
	return &tcp.s[h];
}

static int slot_new(void)
{
	for (int h = 0; h < NET_TCP_SLOTS; h++)
		if (tcp.s[h].kind == S_FREE)
			return h;
	return -1;
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	struct slot *c = &tcp.s[(intptr_t)arg];

	(void)pcb;
	if (!p) {
		c->eof = true;
		return ERR_OK;
	}
	if (err != ERR_OK) {
		pbuf_free(p);
		return ERR_OK;
	}
	if (p->tot_len > NET_TCP_RING - c->len)
		return ERR_MEM; /* lwIP holds it and offers it again */
	for (struct pbuf *q = p; q; q = q->next) {
		for (u16_t i = 0; i < q->len; i++)
			c->ring[(c->head + c->len++) % NET_TCP_RING] = ((const uint8_t *)q->payload)[i];
	}
	pbuf_free(p);
	return ERR_OK;
}

static void on_err(void *arg, err_t err)
{
	struct slot *c = &tcp.s[(intptr_t)arg];

	(void)err;
	c->pcb = NULL; /* lwIP has freed it */
	c->reset = true;
}

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
	uint8_t *ring;
	int h;

	if (err != ERR_OK || !pcb)
		return ERR_VAL;
	/* no slot or no memory: lwIP aborts (a reset); the client may retry */
	if ((h = slot_new()) < 0 || !(ring = plat_alloc(NET_TCP_RING, 64)))
		return ERR_MEM;
	tcp.s[h] = (struct slot){ .kind = S_PENDING, .listener = (int)(intptr_t)arg, .pcb = pcb,
				  .ring = ring };
	tcp_arg(pcb, (void *)(intptr_t)h);
	tcp_recv(pcb, on_recv);
	tcp_err(pcb, on_err);
	tcp_nagle_disable(pcb); /* responses go out as written, as the host's TCP_NODELAY */
	return ERR_OK;
}

int net_listen(uint16_t port, int *handle, uint16_t *bound)
{
	struct tcp_pcb *pcb, *l;
	int h;

	if (!net_ready())
		return -LLMK_ENOTSUP;
	if ((h = slot_new()) < 0)
		return -LLMK_ENOMEM;
	if (!(pcb = tcp_new_ip_type(IPADDR_TYPE_V4)))
		return -LLMK_ENOMEM;
	if (tcp_bind(pcb, IP4_ADDR_ANY, port) != ERR_OK) {
		tcp_close(pcb);
		return -LLMK_EBUSY;
	}
	if (!(l = tcp_listen(pcb))) {
		tcp_close(pcb);
		return -LLMK_ENOMEM;
	}
	tcp.s[h] = (struct slot){ .kind = S_LISTEN, .pcb = l };
	tcp_arg(l, (void *)(intptr_t)h);
	tcp_accept(l, on_accept);
	*handle = h;
	*bound = l->local_port;
	return 0;
}

int net_accept(int listener, int *conn)
{
	if (!slot_of(listener, S_LISTEN))
		return -LLMK_EINVAL;
	for (int h = 0; h < NET_TCP_SLOTS; h++) {
		if (tcp.s[h].kind == S_PENDING && tcp.s[h].listener == listener) {
			tcp.s[h].kind = S_OPEN;
			*conn = h;
			return 1;
		}
	}
	return 0;
}

long net_read(int conn, void *buf, size_t cap)
{
	struct slot *c = slot_of(conn, S_OPEN);
	uint32_t n;

	if (!c)
		return -LLMK_EINVAL;
	if (c->len == 0)
		return c->reset ? -LLMK_EIO : c->eof ? NET_EOF : 0;
	n = cap < c->len ? (uint32_t)cap : c->len;
	for (uint32_t i = 0; i < n; i++)
		((uint8_t *)buf)[i] = c->ring[(c->head + i) % NET_TCP_RING];
	c->head = (c->head + n) % NET_TCP_RING;
	c->len -= n;
	if (c->pcb)
		tcp_recved(c->pcb, (u16_t)n); /* n <= NET_TCP_RING < 65536 */
	return (long)n;
}

long net_write(int conn, const void *buf, size_t len)
{
	struct slot *c = slot_of(conn, S_OPEN);
	size_t n;

	if (!c)
		return -LLMK_EINVAL;
	if (!c->pcb || c->reset)
		return -LLMK_EIO;
	n = tcp_sndbuf(c->pcb);
	if (n > len)
		n = len;
	if (n > 0xffff)
		n = 0xffff;
	/* a full send buffer, or lwIP's heap or segment pool for now: later */
	if (n == 0 || tcp_write(c->pcb, buf, (u16_t)n, TCP_WRITE_FLAG_COPY) != ERR_OK) {
		c->want_room = true;
		return 0;
	}
	c->want_room = false;
	tcp_output(c->pcb);
	return (long)n;
}

void net_close(int h)
{
	struct slot *c;

	if (h < 0 || h >= NET_TCP_SLOTS || tcp.s[h].kind == S_FREE)
		return;
	c = &tcp.s[h];
	if (c->kind == S_LISTEN) /* what waits unaccepted goes with its listener */
		for (int i = 0; i < NET_TCP_SLOTS; i++)
			if (tcp.s[i].kind == S_PENDING && tcp.s[i].listener == h)
				net_close(i);
	if (c->pcb) {
		tcp_arg(c->pcb, NULL);
		if (c->kind == S_LISTEN) {
			tcp_accept(c->pcb, NULL);
		} else {
			tcp_recv(c->pcb, NULL);
			tcp_err(c->pcb, NULL);
		}
		/* graceful: what was queued is still sent (RFC 793 CLOSE) */
		if (tcp_close(c->pcb) != ERR_OK)
			tcp_abort(c->pcb);
	}
	if (c->ring)
		plat_free(c->ring, NET_TCP_RING);
	*c = (struct slot){ .kind = S_FREE };
}

/* Something for a server to do: a connection to accept, bytes or an end to
 * read, room where a write found none. */
static bool ready(void)
{
	for (int h = 0; h < NET_TCP_SLOTS; h++) {
		const struct slot *c = &tcp.s[h];
		if (c->kind == S_PENDING)
			return true;
		if (c->kind == S_OPEN && (c->len || c->eof || c->reset ||
					  (c->want_room && c->pcb && tcp_sndbuf(c->pcb))))
			return true;
	}
	return false;
}

int net_poll(uint64_t timeout_ns)
{
	uint64_t end = plat_time_ns() + timeout_ns;

	do {
		vnet_poll();
		if (ready() || console_input_waiting())
			return 0;
		arch_relax();
	} while (plat_time_ns() < end);
	return 0;
}

bool net_loopback_only(void)
{
	return false;
}
