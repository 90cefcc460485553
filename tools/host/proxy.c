/*
 * tools/host/proxy.c — `llmctl proxy`: attested TLS to an llmk guest's
 * `serve`, plain HTTP on this machine's loopback for any OpenAI client
 * (docs/tls.md, "The client").
 *
 *   llmctl proxy --connect HOST:PORT --listen 127.0.0.1:PORT [--expect-pcr4 HEX --ek-ca PEM]
 *                [--expect-model SHA256] [--expect-config FILE|SHA256] [--provider P]
 *                [--timeout S] [--allow-simulated] [-v] (snp, tdx: the verifier's options)
 *
 * At start the guest is attested (tls_attest.c) and its certificate key
 * pinned; then each local client gets a thread (at most PROXY_CONNS; past
 * that one 503) and its own TLS connection to the guest, made with the pin:
 * a guest that shows another key (it rebooted, or it is not the guest) is
 * attested again once on a fresh connection, and only a key that passes is
 * pinned; else the client gets a 502 (an OpenAI error object) and stderr
 * one "error:" line. Requests are read with the care of shell/http/http.c
 * (http_msg.c), bodies up to PROXY_BODY_MAX (chunked ones are decoded and
 * sent with a length: the guest takes lengths only), and answers pass
 * through as they come: a server-sent event stream reaches the client
 * event by event. Exits on SIGINT or SIGTERM.
 */
#define _GNU_SOURCE
#include "tls_client.h"
#include "http_msg.h"
#include "host.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROXY_CONNS 32                 /* local clients at once */
#define PROXY_BODY_MAX (1u << 20)      /* a request body */
#define PROXY_IN (HMSG_HEAD_MAX + 4096) /* a client's unparsed bytes */
/* A JSON body goes up in spaces to a multiple of PROXY_PAD bytes, as the
 * guest pads its answers (docs/tls.md, "Threat model"), while that stays
 * within what the guest takes (56 KiB): the host sees the prompt's length
 * in kilobytes, not in bytes. */
#define PROXY_PAD 1024
#define PROXY_PAD_MAX (48u * 1024)
#define PROXY_HEAD_MS 10000            /* a request head must arrive in this */
#define PROXY_IDLE_MS 60000            /* a kept-alive client idle this long is closed */
#define PROXY_SEND_MS 30000            /* a client that takes nothing this long is dropped */

static struct {
	char host[256], port[16], target[300];
	struct tlsc_attest_opts o;
	int timeout_ms;
	pthread_mutex_t lock;          /* the pin, attestations, the count */
	uint8_t pin[32];
	int active;
	bool verbose;
} px = {.lock = PTHREAD_MUTEX_INITIALIZER};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct client {
	int fd;
	char in[PROXY_IN];
	size_t in_len;
	struct tlsc_conn *up;
	bool up_open;
	char *body;                    /* the request's body */
	size_t body_len;
	char rbuf[16384];              /* the guest's bytes */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: llmctl proxy --connect HOST:PORT --listen 127.0.0.1:PORT\n"
		   "                    [--expect-pcr4 HEX --ek-ca PEM] [--expect-model SHA256]\n"
		   "                    [--expect-config FILE|SHA256] [--provider vtpm|snp|tdx]\n"
		   "                    [--timeout S] [--allow-simulated] [-v]\n"
		   "                    (snp: --expect-measurement HEX --chain ark.pem; tdx: --expect-mrtd\n"
		   "                    HEX --chain root.pem)\n"
		   "  attests the llmk guest serving attested TLS on HOST:PORT (the checks of\n"
		   "  `verifier tls`), then serves plain HTTP on the loopback address given, each\n"
		   "  request forwarded over TLS to the guest whose key was attested.\n"
		   "  --timeout S  how long the guest may stay silent in an answer (default 600)\n");
}

/* ---- the local side ---- */
static int send_all(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		struct pollfd pf = {.fd = fd, .events = POLLOUT};
		if (poll(&pf, 1, PROXY_SEND_MS) <= 0)
			return -1;
		ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return -1;
		b += k, n -= (size_t)k;
	}
	return 0;
}

static const char *reason(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 408: return "Request Timeout";
	case 403: return "Forbidden";
	case 413: return "Content Too Large";
	case 417: return "Expectation Failed";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

/* An OpenAI error object (message: printable ASCII, quotes escaped). */
static int send_error(int fd, int status, const char *msg, bool keep)
{
	char body[640], head[256];
	size_t n = (size_t)snprintf(body, sizeof body, "{\"error\":{\"message\":\"");

	for (const char *m = msg; *m && n < sizeof body - 80; m++) {
		if (*m == '"' || *m == '\\')
			body[n++] = '\\';
		body[n++] = (unsigned char)*m >= 0x20 && (unsigned char)*m < 0x7f ? *m : ' ';
	}
	n += (size_t)snprintf(body + n, sizeof body - n, "\",\"type\":\"%s\",\"param\":null,"
			      "\"code\":%d}}", status >= 500 ? "server_error" : "invalid_request_error",
			      status);
	int k = snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\nConnection: %s\r\n\r\n", status, reason(status), n,
			 keep ? "keep-alive" : "close");
	return send_all(fd, head, (size_t)k) || send_all(fd, body, n) ? -1 : 0;
}

/* More bytes from the client into c->in; 1, 0 at its end or on timeout, -1 full. */
static int fill(struct client *c, int ms)
{
	if (c->in_len >= sizeof c->in)
		return -1;
	struct pollfd pf = {.fd = c->fd, .events = POLLIN};
	for (;;) {
		int r = poll(&pf, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		ssize_t k = recv(c->fd, c->in + c->in_len, sizeof c->in - c->in_len, 0);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return 0;
		c->in_len += (size_t)k;
		return 1;
	}
}

static void consume(struct client *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
}

/*
 * The next request's head (1; m), 0 when the client left or idled out, or
 * a negative status to refuse it with.
 */
static int read_head(struct client *c, struct hmsg *m)
{
	int64_t start = -1;

	for (;;) {
		int r = hmsg_request(c->in, c->in_len, PROXY_BODY_MAX, m);
		if (r)
			return r;
		int64_t now = conn_now_ms();
		if (c->in_len && start < 0)
			start = now;
		int ms = start < 0 ? PROXY_IDLE_MS : (int)(PROXY_HEAD_MS - (now - start));
		if (ms <= 0)
			return -408;
		r = fill(c, ms);
		if (r < 0)
			return -431;
		if (r == 0)
			return start < 0 ? 0 : -408;
	}
}

/* The body after the head (consumed with it) into c->body; 0 or a negative status. */
static int read_body(struct client *c, const struct hmsg *m)
{
	struct hchunk ch = {0};
	size_t cap = m->body == HMSG_LENGTH ? (size_t)m->length : 65536;
	int64_t start = conn_now_ms();

	consume(c, m->head_len);
	c->body_len = 0;
	if (m->body == HMSG_NONE)
		return 0;
	if (m->expect_continue && send_all(c->fd, "HTTP/1.1 100 Continue\r\n\r\n", 25))
		return -400;
	free(c->body);
	if (!(c->body = malloc(cap)))
		return -503;
	for (;;) {
		size_t off = 0;
		int done = 0;
		while (off < c->in_len && !done) {
			size_t used, dn;
			const char *d;
			if (m->body == HMSG_CHUNKED) {
				if ((done = hchunk_feed(&ch, c->in + off, c->in_len - off, &used, &d, &dn)) < 0)
					return -400;
			} else {
				d = c->in + off;
				dn = used = c->in_len - off < m->length - c->body_len ?
					c->in_len - off : (size_t)(m->length - c->body_len);
				done = c->body_len + dn == m->length;
			}
			if (dn > cap - c->body_len) {
				if (c->body_len + dn > PROXY_BODY_MAX)
					return -413;
				size_t nc = cap * 2 > PROXY_BODY_MAX ? PROXY_BODY_MAX : cap * 2;
				if (nc < c->body_len + dn)
					nc = PROXY_BODY_MAX;
				char *nb = realloc(c->body, nc);
				if (!nb)
					return -503;
				c->body = nb, cap = nc;
			}
			memcpy(c->body + c->body_len, d, dn);
			c->body_len += dn;
			off += used;
		}
		consume(c, off);
		if (done)
			return 0;
		int ms = (int)(PROXY_HEAD_MS - (conn_now_ms() - start));
		if (ms <= 0 || fill(c, ms) <= 0)
			return -408;
	}
}

/* ---- the guest's side ---- */
static void up_close(struct client *c)
{
	if (c->up_open)
		tlsc_close(c->up);
	c->up_open = false;
}

/*
 * A TLS connection to the guest whose key is the pinned one. Another key
 * is attested once (under the lock: one attestation at a time, and a key
 * another thread has just attested is taken as pinned). 0, or -1 after
 * one "error:" line.
 */
static int upstream(struct client *c)
{
	uint8_t pin[32];
	char err[320], hk[65];
	struct tlsc_attest_report rep;

	if (c->up_open)
		return 0;
	pthread_mutex_lock(&px.lock);
	memcpy(pin, px.pin, 32);
	pthread_mutex_unlock(&px.lock);
	if (!tlsc_connect(c->up, px.host, px.port, pin, px.timeout_ms, err, sizeof err)) {
		c->up_open = true;
		return 0;
	}
	if (!c->up->peer.mismatch) {
		fprintf(stderr, "error: proxy: %s\n", err);
		return -1;
	}
	pthread_mutex_lock(&px.lock);
	int r = -1;
	bool attest = true;
	if (memcmp(px.pin, pin, 32)) {
		/* re-pinned meanwhile by another client's attestation: that key, once */
		memcpy(pin, px.pin, 32);
		if (!tlsc_connect(c->up, px.host, px.port, pin, px.timeout_ms, err, sizeof err))
			r = 0, attest = false;
		else if (!c->up->peer.mismatch)
			fprintf(stderr, "error: proxy: %s\n", err), attest = false;
	}
	if (attest) {
		fprintf(stderr, "proxy: %s shows a key that is not the attested one; attesting it\n",
			px.target);
		if (tlsc_connect(c->up, px.host, px.port, NULL, px.timeout_ms, err, sizeof err)) {
			fprintf(stderr, "error: proxy: %s\n", err);
		} else if (tlsc_attest(c->up, &px.o, &rep)) {
			tlsc_close(c->up);
		} else {
			memcpy(px.pin, c->up->peer.k, 32);
			fprintf(stderr, "proxy: %s attested again (%s); key K %s pinned\n", px.target,
				rep.evidence, vfy_hex(px.pin, 32, hk));
			r = 0;
		}
	}
	pthread_mutex_unlock(&px.lock);
	c->up_open = r == 0;
	return r;
}

/* printf at out[n..cap): the new length, never past cap - 1 (a head that
 * does not fit is cut, and the guest refuses it). */
__attribute__((format(printf, 4, 5)))
static size_t append(char *out, size_t n, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (n >= cap - 1)
		return cap - 1;
	va_start(ap, fmt);
	int k = vsnprintf(out + n, cap - n, fmt, ap);
	va_end(ap);
	return k < 0 ? n : n + (size_t)k >= cap ? cap - 1 : n + (size_t)k;
}

/* The spaces after c's body: JSON (an object or an array) only. */
static size_t body_pad(const struct client *c)
{
	size_t i = 0, up;

	while (i < c->body_len && strchr(" \t\r\n", c->body[i]))
		i++;
	if (i == c->body_len || (c->body[i] != '{' && c->body[i] != '['))
		return 0;
	up = (c->body_len + PROXY_PAD - 1) / PROXY_PAD * PROXY_PAD;
	return up <= PROXY_PAD_MAX ? up - c->body_len : 0;
}

/* The request's head as the guest gets it: hop-by-hop fields replaced. */
static size_t up_head(const struct client *c, const char *head, const struct hmsg *m, char *out,
		      size_t cap)
{
	size_t pos = 0, nn, ln, n;
	const char *name, *line;
	bool host = false;

	n = append(out, 0, cap, "%s %.*s HTTP/1.1\r\n", m->method, (int)m->target_len,
		   head + m->target_off);
	while (hmsg_next_header(head, m->head_len, &pos, &name, &nn, &line, &ln)) {
		if (hmsg_hop_by_hop(name, nn))
			continue;
		host |= nn == 4 && !strncasecmp(name, "host", 4);
		if (n + ln + 2 < cap) {
			memcpy(out + n, line, ln);
			memcpy(out + n + ln, "\r\n", 2);
			n += ln + 2;
		}
	}
	if (!host)
		n = append(out, n, cap, "Host: %s\r\n", px.target);
	if (c->body_len || !strcmp(m->method, "POST") || !strcmp(m->method, "PUT"))
		n = append(out, n, cap, "Content-Length: %zu\r\n", c->body_len + body_pad(c));
	return append(out, n, cap, "\r\n");
}

/* The response's head for the client: the guest's, with our framing and connection. */
static size_t down_head(const char *head, const struct hmsg *r, bool chunked_through, bool keep,
			char *out, size_t cap)
{
	size_t pos = 0, nn, ln, n = 0;
	const char *name, *line;

	while (n < r->head_len && head[n] != '\n')
		n++;
	size_t sl = n - (n && head[n - 1] == '\r');
	memcpy(out, head, sl);
	memcpy(out + sl, "\r\n", 2);
	n = sl + 2;
	while (hmsg_next_header(head, r->head_len, &pos, &name, &nn, &line, &ln)) {
		if (hmsg_hop_by_hop(name, nn) && !(nn == 14 && !strncasecmp(name, "content-length", 14)))
			continue;
		if (n + ln + 2 < cap - 64) {
			memcpy(out + n, line, ln);
			memcpy(out + n + ln, "\r\n", 2);
			n += ln + 2;
		}
	}
	return append(out, n, cap, "%sConnection: %s\r\n\r\n",
		      chunked_through ? "Transfer-Encoding: chunked\r\n" : "", keep ? "keep-alive" : "close");
}

/* Why an exchange failed, for the client's 502 and our one error line. */
static int bad_gateway(struct client *c, const char *why, bool keep)
{
	fprintf(stderr, "error: proxy: %s: %s\n", px.target, why);
	up_close(c);
	send_error(c->fd, 502, why, keep);
	return keep ? 0 : -1;
}

/*
 * One request to the guest and its answer to the client. A kept TLS
 * connection the guest closed meanwhile is replaced once, if nothing of the
 * answer came. 0 to go on with the next request, -1 to close the client.
 */
static int exchange(struct client *c, const char *head, const struct hmsg *m)
{
	static const size_t HEAD_CAP = HMSG_HEAD_MAX + 256;
	char *uh = malloc(HEAD_CAP), *dh = malloc(HEAD_CAP);
	struct hmsg r;
	size_t n = 0;
	int res = -1;

	if (!uh || !dh) {
		free(uh), free(dh);
		return -1;
	}
	size_t uhn = up_head(c, head, m, uh, HEAD_CAP);
	bool head_req = !strcmp(m->method, "HEAD");
	for (int attempt = 0;; attempt++) {
		bool reused = c->up_open;
		if (upstream(c)) {
			send_error(c->fd, 502, "the guest is not reachable, or not the attested guest",
				   m->keep_alive);
			res = m->keep_alive ? 0 : -1;
			goto out;
		}
		int rr = 0;
		n = 0;
		if (!tlsc_put(c->up, uh, uhn) && !tlsc_put(c->up, c->body, c->body_len) &&
		    !tlsc_put_spaces(c->up, body_pad(c)) && !tlsc_flush(c->up)) {
			for (;;) {
				rr = hmsg_response(c->rbuf, n, head_req, &r);
				if (rr == 1 && r.status < 200) {
					/* an interim 1xx: not for our client (no Expect went upstream) */
					memmove(c->rbuf, c->rbuf + r.head_len, n - r.head_len);
					n -= r.head_len;
					continue;
				}
				if (rr || n >= sizeof c->rbuf)
					break;
				long k = tlsc_read(c->up, c->rbuf + n, sizeof c->rbuf - n);
				if (k <= 0)
					break;
				n += (size_t)k;
			}
		}
		if (rr == 1)
			break;
		if (rr < 0 || n || !reused || attempt) {
			char why[120];
			snprintf(why, sizeof why, rr < 0 ? "the guest's answer is not HTTP/1.1 (%d)" :
				 n ? "the guest's answer ended early" : "the guest did not answer", -rr);
			res = bad_gateway(c, why, m->keep_alive);
			goto out;
		}
		up_close(c); /* the kept connection had been closed by the guest: a new one */
	}
	/* the answer, as it comes */
	bool chunked = r.body == HMSG_CHUNKED, to_11 = m->minor >= 1;
	bool keep = m->keep_alive && r.body != HMSG_CLOSE && (!chunked || to_11);
	size_t dhn = down_head(c->rbuf, &r, chunked && to_11, keep, dh, HEAD_CAP);
	if (send_all(c->fd, dh, dhn))
		goto gone;
	size_t off = r.head_len;
	uint64_t left = r.body == HMSG_LENGTH ? r.length : 0;
	struct hchunk ch = {0};
	bool done = r.body == HMSG_NONE;
	while (!done) {
		while (off < n && !done) {
			size_t used, dn;
			const char *d;
			if (chunked) {
				int f = hchunk_feed(&ch, c->rbuf + off, n - off, &used, &d, &dn);
				if (f < 0) {
					fprintf(stderr, "error: proxy: %s: the guest's chunked answer is "
						"malformed\n", px.target);
					goto gone;
				}
				done = f == 1;
				if (to_11)
					d = c->rbuf + off, dn = used;
			} else {
				d = c->rbuf + off;
				dn = used = r.body == HMSG_LENGTH && n - off > left ? (size_t)left : n - off;
				left -= r.body == HMSG_LENGTH ? dn : 0;
				done = r.body == HMSG_LENGTH && !left;
			}
			if (dn && send_all(c->fd, d, dn))
				goto gone;
			off += used;
		}
		if (done)
			break;
		off = n = 0;
		long k = tlsc_read(c->up, c->rbuf, sizeof c->rbuf);
		if (k == 0 && r.body == HMSG_CLOSE)
			break;
		if (k <= 0) {
			fprintf(stderr, "error: proxy: %s: the guest's answer %s\n", px.target,
				k == 0 ? "ended early" : c->up->timed_out ? "stalled" : "failed");
			goto gone;
		}
		n = (size_t)k;
	}
	if (!r.keep_alive || off < n)
		up_close(c); /* (bytes past the answer: nothing we asked for) */
	res = keep ? 0 : -1;
	goto out;
gone:
	up_close(c); /* the guest sees the end and stops generating */
	res = -1;
out:
	free(uh), free(dh);
	return res;
}

/* A name of this machine's loopback, port or not: 127.x.y.z, localhost, [::1]. */
static bool loopback_name(const char *v, size_t n)
{
	char b[16];
	size_t e = 0;
	struct in_addr a;

	if (n >= 5 && !memcmp(v, "[::1]", 5))
		return n == 5 || v[5] == ':';
	while (e < n && v[e] != ':')
		e++;
	if (e == 9 && !strncasecmp(v, "localhost", 9))
		return true;
	if (e < 7 || e >= sizeof b || memcmp(v, "127.", 4))
		return false;
	memcpy(b, v, e);
	b[e] = 0;
	return inet_pton(AF_INET, b, &a) == 1;
}

/*
 * Requests only from this machine's own programs: a Host that is not a
 * loopback name is a web page that rebound a DNS name to 127.0.0.1, an
 * Origin that is not one a page posting across sites. Why it is refused,
 * or NULL.
 */
static const char *foreign(const char *head, const struct hmsg *m)
{
	size_t pos = 0, nn, ln;
	const char *name, *line;

	while (hmsg_next_header(head, m->head_len, &pos, &name, &nn, &line, &ln)) {
		bool host = nn == 4 && !strncasecmp(name, "host", 4);
		bool origin = nn == 6 && !strncasecmp(name, "origin", 6);
		if (!host && !origin)
			continue;
		const char *v = name + nn + 1, *e = line + ln;
		while (v < e && (*v == ' ' || *v == '\t'))
			v++;
		while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (origin && (size_t)(e - v) > 7 && !strncasecmp(v, "http://", 7))
			v += 7;
		if (!loopback_name(v, (size_t)(e - v)))
			return host ? "the proxy serves this machine's programs only: the Host is not "
				      "a loopback name" : "the proxy serves this machine's programs only: "
				      "a request from a web page of another origin";
	}
	return NULL;
}

/* Close after an answer the client may not have finished sending its
 * request for: our side shut, what it sends read away for a moment, so its
 * kernel does not meet a reset before it reads the answer. */
static void linger_close(int fd)
{
	char sink[4096];
	int64_t end = conn_now_ms() + 200;

	shutdown(fd, SHUT_WR);
	for (int64_t now; (now = conn_now_ms()) < end;) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		if (poll(&pf, 1, (int)(end - now)) <= 0 || recv(fd, sink, sizeof sink, MSG_DONTWAIT) <= 0)
			break;
	}
	close(fd);
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct hmsg m;
	bool refused = false;

	for (;;) {
		int r = read_head(c, &m);
		if (r == 0)
			break;
		if (r < 0) {
			send_error(c->fd, -r, reason(-r), false);
			refused = true;
			break;
		}
		char head[HMSG_HEAD_MAX];
		memcpy(head, c->in, m.head_len);
		const char *why = foreign(head, &m);
		if (why) {
			send_error(c->fd, 403, why, false);
			refused = true;
			break;
		}
		if ((r = read_body(c, &m)) < 0) {
			send_error(c->fd, -r, reason(-r), false);
			refused = true;
			break;
		}
		if (exchange(c, head, &m))
			break;
	}
	up_close(c);
	if (refused)
		linger_close(c->fd);
	else
		close(c->fd);
	free(c->body);
	free(c->up);
	free(c);
	pthread_mutex_lock(&px.lock);
	px.active--;
	pthread_mutex_unlock(&px.lock);
	return NULL;
}

/* ---- the command ---- */
static int listen_on(const char *spec, char *bound, size_t bn)
{
	char host[64], port[16];
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof a;
	int one = 1, fd;

	if (tlsc_split_hostport(spec, host, sizeof host, port, sizeof port) ||
	    inet_pton(AF_INET, host, &a.sin_addr) != 1 || atoi(port) > 65535) {
		fprintf(stderr, "error: proxy: --listen: want 127.0.0.1:PORT, got '%s'\n", spec);
		return -1;
	}
	if ((ntohl(a.sin_addr.s_addr) >> 24) != 127) {
		fprintf(stderr, "error: proxy: --listen %s: not a loopback address (plain HTTP "
			"stays on this machine: 127.0.0.1)\n", spec);
		return -1;
	}
	a.sin_port = htons((uint16_t)atoi(port));
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
	    bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&a, &al)) {
		fprintf(stderr, "error: proxy: --listen %s: %s\n", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(bound, bn, "%s:%u", host, ntohs(a.sin_port));
	return fd;
}

static int parse_args(int argc, char **argv, const char **listen_spec)
{
	double secs = 600;

	px.o.v.verbose = false;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;
		int t = connect_verify_opt(&px.o.v, argc, argv, &i);
		if (t < 0)
			return 2;
		if (t)
			continue;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--connect") && more) {
			snprintf(px.target, sizeof px.target, "%s", argv[++i]);
		} else if (!strcmp(a, "--listen") && more) {
			*listen_spec = argv[++i];
		} else if (!strcmp(a, "--provider") && more) {
			px.o.provider = argv[++i];
		} else if (!strcmp(a, "--timeout") && more) {
			char *end;
			secs = strtod(argv[++i], &end);
			if (!*argv[i] || *end || !(secs > 0 && secs <= 86400)) {
				fprintf(stderr, "error: proxy: --timeout: want seconds (up to 86400), got "
					"'%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(a, "-v")) {
			px.o.v.verbose = true;
		} else {
			fprintf(stderr, "llmctl: proxy: unknown argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	px.timeout_ms = (int)(secs * 1000);
	if (!px.target[0] || !*listen_spec) {
		usage(stderr);
		return 2;
	}
	if (tlsc_split_hostport(px.target, px.host, sizeof px.host, px.port, sizeof px.port)) {
		fprintf(stderr, "error: proxy: --connect: want HOST:PORT, got '%s'\n", px.target);
		return 2;
	}
	return 0;
}

int host_proxy_main(int argc, char **argv)
{
	const char *listen_spec = NULL;
	char bound[96], err[320];
	struct tlsc_attest_report rep;
	int r, lfd;

	if ((r = parse_args(argc, argv, &listen_spec)))
		return r;
	if ((lfd = listen_on(listen_spec, bound, sizeof bound)) < 0)
		return 1;
	struct tlsc_conn *t = calloc(1, sizeof *t);
	if (!t)
		return 1;
	if (tlsc_connect(t, px.host, px.port, NULL, px.timeout_ms, err, sizeof err)) {
		fprintf(stderr, "error: proxy: %s\n", err);
		return 1;
	}
	if (tlsc_attest(t, &px.o, &rep))
		return 1;
	memcpy(px.pin, t->peer.k, 32);
	tlsc_close(t);
	free(t);
	printf("proxy: %s attested (%s); serving http://%s\n", px.target, rep.evidence, bound);
	fflush(stdout);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	while (!stop) {
		struct pollfd pf = {.fd = lfd, .events = POLLIN};
		if (poll(&pf, 1, 250) <= 0)
			continue;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		pthread_mutex_lock(&px.lock);
		bool room = px.active < PROXY_CONNS;
		px.active += room;
		pthread_mutex_unlock(&px.lock);
		struct client *c = room ? calloc(1, sizeof *c) : NULL;
		if (c && !(c->up = calloc(1, sizeof *c->up))) {
			free(c);
			c = NULL;
		}
		pthread_t th;
		if (c) {
			c->fd = fd;
			if (pthread_create(&th, &attr, client_main, c) == 0)
				continue;
			free(c->up);
			free(c);
		}
		if (room) {
			pthread_mutex_lock(&px.lock);
			px.active--;
			pthread_mutex_unlock(&px.lock);
		}
		send_error(fd, 503, "too many connections to the proxy; try again", false);
		linger_close(fd);
	}
	close(lfd);
	fprintf(stderr, "proxy: stopped\n");
	return 0;
}
