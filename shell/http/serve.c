/*
 * shell/http/serve.c — the API server's connections (serve.h): accept,
 * read, parse, queue, answer, close; the timeouts that keep a slow or
 * silent client from holding a slot; the loop `serve` runs.
 *
 * Memory is bounded up front: SRV_CONNS slots of SRV_BUF bytes each,
 * taken at accept and given back at close, and one struct srv.
 */
#include "serve.h"

#include "../../llm/engine.h"

static void conn_close(struct srv *s, struct srv_conn *c)
{
	if (c->h < 0)
		return;
	srv_io_close(c);
	if (c->ticket)
		s->n_queued--;
	plat_free(c->in, SRV_BUF);
	memset(c, 0, sizeof *c);
	c->h = -1;
}

/* An error for bytes that are not a request we take: answered, then closed. */
static void refuse(struct srv *s, struct srv_conn *c, int status)
{
	char msg[96];

	c->req.keep_alive = false;
	plat_snprintf(msg, sizeof msg, "%s", http_reason(status));
	srv_error(s, c, status, status == 503 ? "server_error" : "invalid_request_error", msg);
	conn_close(s, c);
}

static void conn_step(struct srv *s, int i);

static struct srv_conn *free_slot(struct srv *s)
{
	for (int i = 0; i < SRV_CONNS; i++)
		if (s->c[i].h < 0)
			return &s->c[i];
	return NULL;
}

static void accept_all(struct srv *s)
{
	int h;

	while (net_accept(s->listener, &h) == 1) {
		struct srv_conn *c = free_slot(s);
		/* every slot taken: first close those whose peers left */
		for (int i = 0; i < SRV_CONNS && !c; i++)
			if (s->c[i].h >= 0)
				conn_step(s, i);
		if (!c)
			c = free_slot(s);
		s->m.conns++;
		char *in = c ? plat_alloc(SRV_BUF, 64) : NULL;
		if (!in) {
			/* no slot: one 503 and close, never a wait */
			static const char body[] = "{\"error\":{\"message\":\"too many connections\","
				"\"type\":\"server_error\",\"param\":null,\"code\":503}}";
			char head[160];
			int k = plat_snprintf(head, sizeof head, "HTTP/1.1 503 Service Unavailable\r\n"
					      "Content-Type: application/json\r\nContent-Length: %zu\r\n"
					      "Connection: close\r\n\r\n", sizeof body - 1);
			/* (not for TLS: no engine was made for this one) */
			if (!s->tls && net_write(h, head, (size_t)k) == k)
				net_write(h, body, sizeof body - 1);
			net_close(h);
			s->m.rejected++;
			continue;
		}
		memset(c, 0, sizeof *c);
		if (srv_io_open(s, c, h)) {
			plat_free(in, SRV_BUF);
			net_close(h);
			c->h = -1;
			s->m.rejected++;
			continue;
		}
		c->in = in;
		c->t_idle = plat_time_ns();
	}
}

/* c's request is answered: its bytes consumed, the connection closed
 * unless kept alive. */
static void srv_done(struct srv *s, struct srv_conn *c)
{
	c->busy = false;
	c->in_len -= c->req.total;
	memmove(c->in, c->in + c->req.total, c->in_len);
	c->t_first = c->in_len ? plat_time_ns() : 0;
	c->t_idle = plat_time_ns();
	if (!c->req.keep_alive || c->gone)
		conn_close(s, c);
}

/* Read what c has sent; then a whole request is answered or queued. */
static void conn_step(struct srv *s, int i)
{
	struct srv_conn *c = &s->c[i];
	uint64_t now = plat_time_ns();

	if (c->in_len < SRV_BUF) {
		long k = srv_io_read(c, c->in + c->in_len, SRV_BUF - c->in_len);
		if (k == NET_EOF || k < 0) {
			if (c->busy)
				c->gone = true;
			else
				conn_close(s, c);
			return;
		}
		if (k > 0) {
			if (!c->in_len)
				c->t_first = now;
			c->in_len += (size_t)k;
			c->t_idle = now;
		}
	}
	if (c->ticket || c->busy)
		return; /* the next request on this connection waits for this one */
	if (!c->in_len) {
		if (now - c->t_idle > SRV_IDLE_NS)
			conn_close(s, c);
		return;
	}
	int r = http_parse(c->in, c->in_len, SRV_BODY_MAX, &c->req);
	if (r < 0) {
		refuse(s, c, -r);
		return;
	}
	if (r == 0) {
		if (now - c->t_first > SRV_HEAD_NS)
			refuse(s, c, 408);
		return;
	}
	if (api_needs_engine(&c->req)) {
		if (s->n_queued >= SRV_QUEUE) {
			s->m.rejected++;
			srv_error(s, c, 503, "server_error", "the request queue is full; try again");
			c->in_len -= c->req.total;
			memmove(c->in, c->in + c->req.total, c->in_len);
			if (!c->req.keep_alive || c->gone)
				conn_close(s, c);
			return;
		}
		c->ticket = ++s->next_ticket;
		s->n_queued++;
		return;
	}
	api_handle(s, c);
	c->in_len -= c->req.total;
	memmove(c->in, c->in + c->req.total, c->in_len);
	c->t_first = c->in_len ? now : 0;
	if (!c->req.keep_alive || c->gone)
		conn_close(s, c);
}

bool srv_pump(struct srv *s)
{
	bool more = false;

	accept_all(s);
	for (int i = 0; i < SRV_CONNS; i++) {
		if (s->c[i].h >= 0 && s->c[i].done) {
			s->c[i].done = false;
			srv_done(s, &s->c[i]);
		}
		if (s->c[i].h >= 0)
			conn_step(s, i);
	}
	for (int i = 0; i < SRV_CONNS; i++) { /* what was answered goes out now */
		struct srv_conn *c = &s->c[i];
		if (c->h < 0)
			continue;
		srv_io_flush(c);
		/* the flush (or a write) may have read the request's next record
		 * into the engine, where net_poll cannot see it: a request split
		 * over records (python's http.client sends head and body apart)
		 * would otherwise wait out the poll's 20 ms */
		more |= c->in_len < SRV_BUF && srv_io_pending(c);
	}
	return more;
}

/* The oldest waiting engine request joins the batch (or, not a generation,
 * is answered). False when none waits or no slot is free. */
static bool run_next(struct srv *s)
{
	struct srv_conn *c = NULL;

	if (!sched_room(s))
		return false;
	for (int i = 0; i < SRV_CONNS; i++)
		if (s->c[i].h >= 0 && s->c[i].ticket && (!c || s->c[i].ticket < c->ticket))
			c = &s->c[i];
	if (!c)
		return false;
	c->ticket = 0;
	s->n_queued--;
	api_handle(s, c);
	if (!c->busy)
		srv_done(s, c);
	return true;
}

/* A line typed on the console while serving runs between requests (the
 * shell stays usable); Ctrl-C, or quit, ends serving. */
static void console(struct srv *s)
{
	struct shell *sh = s->sh;
	enum shell_line_event ev = SHELL_LINE_MORE;
	int c;

	if (shell_poll_cancel(sh)) {
		s->stop = true;
		return;
	}
	if (!shell_typeahead_line(sh))
		return;
	shell_line_reset(&sh->line);
	while (ev == SHELL_LINE_MORE && (c = shell_getc(sh)) >= 0)
		ev = shell_line_feed(sh, c);
	if (ev == SHELL_LINE_DONE) {
		const char *w = sh->line.buf;
		while (*w == ' ' || *w == '\t')
			w++;
		if (strncmp(w, "serve", 5) == 0 && (w[5] == 0 || w[5] == ' ' || w[5] == '\t'))
			shell_err(sh, -LLMK_EBUSY, "serve: already serving on port %u", s->port);
		else
			shell_exec_line(sh, sh->line.buf);
	}
	if (ev == SHELL_LINE_CANCEL || sh->quit)
		s->stop = true;
	else if (sh->prompt)
		plat_write(SHELL_PROMPT, sizeof SHELL_PROMPT - 1);
}

int srv_run(struct shell *sh, uint16_t port, const struct tls_key *tls, uint32_t slots)
{
	struct srv *s = plat_alloc(sizeof *s, 64);
	int r;

	if (!s)
		return shell_err(sh, -LLMK_ENOMEM, "serve: out of memory (%zu bytes)", sizeof *s);
	s->sh = sh;
	s->tls = tls;
	s->slots = slots;
	for (int i = 0; i < SRV_CONNS; i++)
		s->c[i].h = -1;
	r = net_listen(port, &s->listener, &s->port);
	if (r) {
		plat_free(s, sizeof *s);
		if (r == -LLMK_ENOTSUP)
			return shell_err(sh, r, "serve: no network device");
		return shell_err(sh, r, "serve: cannot listen on port %u: %s", port, plat_strerror(r));
	}
	if (net_loopback_only())
		plat_printf("serving on 127.0.0.1:%u (%scommands still run; Ctrl-C or end of input "
			    "stops)\n", s->port, tls ? "https, attested TLS; " : "");
	else
		plat_printf("serving on port %u (https, attested TLS; commands still run; Ctrl-C "
			    "stops)\n", s->port);
	for (;;) {
		console(s);
		if (s->stop)
			break;
		bool more = srv_pump(s), joined = false;
		while (run_next(s)) /* every free slot taken before the pass */
			joined = true;
		if (sched_run(s) || joined || more)
			continue;
		/* at the input's end, the lines it brought run first */
		if (net_poll(20000000) == NET_EOF && !shell_typeahead_line(sh))
			break;
	}
	sched_stop(s);
	for (int i = 0; i < SRV_CONNS; i++)
		conn_close(s, &s->c[i]);
	net_close(s->listener);
	plat_printf("serve: stopped after %llu requests\n", (unsigned long long)s->m.requests);
	plat_free(s, sizeof *s);
	return 0;
}
