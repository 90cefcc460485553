/*
 * drivers/lwip/net_tcp.c — listen, accept, read, write, close over lwIP's
 * raw TCP API (lwIP 2.1 doc "Raw TCP/IP interface"), non-blocking, for
 * services that poll (drivers/net.h). One static table of handles.
 *
 * lwIP calls back from inside vnet_poll: a new connection waits in its slot
 * until accepted; received data waits in the slot's ring. The ring holds
 * more than the receive window (TCP_WND), and the window reopens only as
 * the service reads (tcp_recved), so arriving data always fits.
 */
#include "kernel/platform.h"
#include "drivers/net.h"
#include "lwip/tcp.h"

#define TCP_SLOTS 8
#define RING 16384
_Static_assert(RING >= TCP_WND, "a full receive window fits the ring");

enum { S_FREE = 0, S_LISTEN, S_PENDING, S_OPEN };

struct slot {
	int kind;
	int listener;          /* S_PENDING, S_OPEN: the listening handle it came from */
	struct tcp_pcb *pcb;   /* NULL once lwIP dropped it (tcp_err) */
	bool eof, reset;
	uint32_t head, len;    /* ring contents */
	uint8_t ring[RING];
};

static struct {
	struct slot s[TCP_SLOTS];
	int echo;              /* listening handle of the echo service, or -1 */
	bool echo_on;
} tcp;

static struct slot *slot_of(int h, int kind)
{
	if (h < 0 || h >= TCP_SLOTS || tcp.s[h].kind != kind)
		return NULL;
	return &tcp.s[h];
}

static int slot_new(void)
{
	for (int h = 0; h < TCP_SLOTS; h++)
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
	if (err != ERR_OK || p->tot_len > RING - c->len) {
		pbuf_free(p);
		return ERR_OK;
	}
	for (struct pbuf *q = p; q; q = q->next) {
		for (u16_t i = 0; i < q->len; i++)
			c->ring[(c->head + c->len++) % RING] = ((const uint8_t *)q->payload)[i];
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
	int h;

	if (err != ERR_OK || !pcb)
		return ERR_VAL;
	if ((h = slot_new()) < 0)
		return ERR_MEM; /* lwIP aborts the connection */
	tcp.s[h] = (struct slot){ .kind = S_PENDING, .listener = (int)(intptr_t)arg, .pcb = pcb };
	tcp_arg(pcb, (void *)(intptr_t)h);
	tcp_recv(pcb, on_recv);
	tcp_err(pcb, on_err);
	return ERR_OK;
}

int net_tcp_listen(uint16_t port)
{
	struct tcp_pcb *pcb, *l;
	int h = slot_new();

	if (h < 0)
		return -LLMK_EBUSY;
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
	return h;
}

int net_tcp_accept(int listener)
{
	if (!slot_of(listener, S_LISTEN))
		return -LLMK_EINVAL;
	for (int h = 0; h < TCP_SLOTS; h++) {
		if (tcp.s[h].kind == S_PENDING && tcp.s[h].listener == listener) {
			tcp.s[h].kind = S_OPEN;
			return h;
		}
	}
	return -LLMK_EBUSY;
}

int net_tcp_read(int conn, void *buf, size_t len)
{
	struct slot *c = slot_of(conn, S_OPEN);
	uint32_t n;

	if (!c)
		return -LLMK_EINVAL;
	if (c->len == 0)
		return c->reset ? -LLMK_EIO : c->eof ? 0 : -LLMK_EBUSY;
	n = len < c->len ? (uint32_t)len : c->len;
	if (n > INT32_MAX)
		n = INT32_MAX;
	for (uint32_t i = 0; i < n; i++)
		((uint8_t *)buf)[i] = c->ring[(c->head + i) % RING];
	c->head = (c->head + n) % RING;
	c->len -= n;
	if (c->pcb)
		tcp_recved(c->pcb, (u16_t)n);
	return (int)n;
}

int net_tcp_write(int conn, const void *buf, size_t len)
{
	struct slot *c = slot_of(conn, S_OPEN);
	size_t n;

	if (!c)
		return -LLMK_EINVAL;
	if (!c->pcb)
		return -LLMK_EIO;
	n = tcp_sndbuf(c->pcb);
	if (n > len)
		n = len;
	if (n > 0xffff)
		n = 0xffff;
	if (n == 0)
		return -LLMK_EBUSY;
	if (tcp_write(c->pcb, buf, (u16_t)n, TCP_WRITE_FLAG_COPY) != ERR_OK)
		return -LLMK_EBUSY;
	tcp_output(c->pcb);
	return (int)n;
}

int net_tcp_close(int h)
{
	struct slot *c;

	if (h < 0 || h >= TCP_SLOTS || tcp.s[h].kind == S_FREE)
		return -LLMK_EINVAL;
	c = &tcp.s[h];
	if (c->pcb) {
		tcp_arg(c->pcb, NULL);
		if (c->kind == S_LISTEN) {
			tcp_accept(c->pcb, NULL);
		} else {
			tcp_recv(c->pcb, NULL);
			tcp_err(c->pcb, NULL);
		}
		if (tcp_close(c->pcb) != ERR_OK)
			tcp_abort(c->pcb);
	}
	c->kind = S_FREE;
	c->pcb = NULL;
	return 0;
}

int net_echo_start(uint16_t port)
{
	int h = net_tcp_listen(port);

	if (h < 0)
		return h;
	tcp.echo = h;
	tcp.echo_on = true;
	plat_printf("net: echo service on tcp port %u\n", port);
	return 0;
}

/* RFC 862: send back what came in, never more than the send buffer takes
 * (so nothing waits here). Called from vnet_poll. */
void net_echo_poll(void)
{
	uint8_t buf[1024];
	int c;

	if (!tcp.echo_on)
		return;
	while (net_tcp_accept(tcp.echo) >= 0)
		;
	for (c = 0; c < TCP_SLOTS; c++) {
		struct slot *s = slot_of(c, S_OPEN);
		int n;

		if (!s || s->listener != tcp.echo)
			continue;
		size_t room = s->pcb ? tcp_sndbuf(s->pcb) : 0;
		if (room > sizeof buf)
			room = sizeof buf;
		if (room == 0 && s->pcb)
			continue;
		n = net_tcp_read(c, buf, room ? room : sizeof buf);
		if (n > 0)
			net_tcp_write(c, buf, (size_t)n);
		else if (n == 0 || n == -LLMK_EIO)
			net_tcp_close(c);
	}
}
