/*
 * shell/http/respond.c — bytes and answers to a client: raw sends (waiting
 * or not), a response with its head, an OpenAI error object. The API
 * (api.c), the batch (sched.c) and the connections (serve.c) all answer
 * through here; nothing here calls them back.
 */
#include "serve.h"

bool srv_send(struct srv *s, struct srv_conn *c, const char *p, size_t n)
{
	uint64_t deadline = plat_time_ns() + SRV_SEND_NS;

	while (n && !c->gone) {
		long k = srv_io_write(c, p, n);
		if (k < 0) {
			c->gone = true;
			break;
		}
		p += k, n -= (size_t)k;
		if (n && plat_time_ns() > deadline)
			c->gone = true;
		else if (n)
			net_poll(1000000);
	}
	return !c->gone;
}

long srv_send_some(struct srv *s, struct srv_conn *c, const char *p, size_t n)
{
	long k;

	if (c->gone)
		return -1;
	k = srv_io_write(c, p, n);
	if (k < 0) {
		c->gone = true;
		return -1;
	}
	return k;
}

/* JSON bodies end in spaces up to a multiple of SRV_PAD bytes (JSON allows
 * them), so the length the host sees of a record says little of the answer
 * (docs/tls.md, "Threat model"). */
static bool send_pad(struct srv *s, struct srv_conn *c, size_t n)
{
	static const char sp[64] = "                                                                ";

	while (n) {
		size_t k = n < sizeof sp ? n : sizeof sp;
		if (!srv_send(s, c, sp, k))
			return false;
		n -= k;
	}
	return true;
}

bool srv_respond(struct srv *s, struct srv_conn *c, int status, const char *ctype,
		 const char *body, size_t n)
{
	char head[256];
	size_t pad = strcmp(ctype, "application/json") == 0 ? (SRV_PAD - n % SRV_PAD) % SRV_PAD : 0;
	int k = plat_snprintf(head, sizeof head,
			      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			      "Connection: %s\r\n\r\n", status, http_reason(status), ctype, n + pad,
			      c->req.keep_alive ? "keep-alive" : "close");
	s->m.requests++;
	s->m.errors += status >= 400;
	return srv_send(s, c, head, (size_t)k) && srv_send(s, c, body, n) && send_pad(s, c, pad);
}

bool srv_error(struct srv *s, struct srv_conn *c, int status, const char *type,
	       const char *msg)
{
	char buf[512];
	struct json_out o;

	/* OpenAI's error object: {"error": {"message", "type", "param", "code"}} */
	json_out_init(&o, buf, sizeof buf);
	json_out_lit(&o, "{\"error\":{\"message\":");
	json_out_cstr(&o, msg);
	json_out_lit(&o, ",\"type\":");
	json_out_cstr(&o, type);
	json_out_lit(&o, ",\"param\":null,\"code\":");
	json_out_i64(&o, status);
	json_out_lit(&o, "}}");
	return srv_respond(s, c, status, "application/json", buf, o.len);
}
