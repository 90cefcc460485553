/*
 * shell/http/serve_io.c — the transport under serve.c's connections:
 * kernel/net.h as it is (serve --plain, the host build only), or the
 * decrypted stream of a TLS engine over it (tls.h).
 */
#include "serve.h"
#include "tls.h"

int srv_io_open(struct srv *s, struct srv_conn *c, int h)
{
	c->h = h;
	c->tls = NULL;
	if (!s->tls)
		return 0;
	if (!(c->tls = tls_open(s->tls, h)))
		return -LLMK_ENOMEM;
	return 0;
}

long srv_io_read(struct srv_conn *c, void *buf, size_t cap)
{
	return c->tls ? tls_read(c->tls, buf, cap) : net_read(c->h, buf, cap);
}

long srv_io_write(struct srv_conn *c, const void *p, size_t n)
{
	return c->tls ? tls_write(c->tls, p, n) : net_write(c->h, p, n);
}

void srv_io_flush(struct srv_conn *c)
{
	if (c->tls)
		tls_flush(c->tls);
}

bool srv_io_pending(struct srv_conn *c)
{
	return c->tls && tls_pending(c->tls);
}

void srv_io_close(struct srv_conn *c)
{
	if (c->tls)
		tls_close(c->tls); /* closes the handle too */
	else
		net_close(c->h);
	c->tls = NULL;
}
