/*
 * shell/http/serve.h — the API server: connections polled through
 * kernel/net.h, HTTP/1.1 requests (http.h) routed to the OpenAI-compatible
 * endpoints (api.c), one generation at a time while the others wait in a
 * bounded queue (503 past it). No threads: generation's cancel callback
 * pumps the connections between tokens.
 */
#ifndef SHELL_HTTP_SERVE_H
#define SHELL_HTTP_SERVE_H

#include "../../kernel/net.h"
#include "../shell.h"
#include "http.h"
#include "json.h"

#define SRV_CONNS 64                 /* connections held at once; past it: 503 and close */
#define SRV_BUF (64u * 1024)         /* a connection's request bytes (head + body) */
#define SRV_BODY_MAX (SRV_BUF - HTTP_HEAD_MAX)
#define SRV_QUEUE 8                  /* engine requests waiting; past it: 503 */
#define SRV_HEAD_NS (10ull * 1000000000)  /* a request's bytes must all arrive in this */
#define SRV_IDLE_NS (60ull * 1000000000)  /* a keep-alive connection idle this long is closed */
#define SRV_SEND_NS (10ull * 1000000000)  /* a client that reads nothing this long is dropped */
#define SRV_NODES 4096               /* JSON values a request may hold */
#define SRV_OUT (256u * 1024)        /* a response body, and the generated text */
#define SRV_IDS 8192                 /* token ids /tokenize returns, /detokenize takes */

struct tls_conn;
struct tls_key;

struct srv_conn {
	int h;                  /* net handle; -1: the slot is free */
	struct tls_conn *tls;   /* the TLS engine over h (serve_io.c); NULL: plain */
	char *in;               /* SRV_BUF bytes */
	size_t in_len;
	uint64_t t_first;       /* when the current request's first byte came; 0: none yet */
	uint64_t t_idle;        /* last activity */
	uint64_t ticket;        /* a whole engine request waits (its place in line); 0: none */
	bool gone;              /* the peer closed or failed while its request ran */
	struct http_req req;
};

struct srv_metrics {
	uint64_t requests, errors, rejected;   /* answered, of them errors, 503s for a full queue */
	uint64_t prompt_tokens, gen_tokens, prompt_ns, gen_ns;
	uint64_t conns;                        /* accepted */
};

struct srv {
	struct shell *sh;
	const struct tls_key *tls; /* every connection speaks TLS with this key; NULL: plain */
	int listener;
	uint16_t port;
	struct srv_conn c[SRV_CONNS];
	uint64_t next_ticket;
	int n_queued;
	int running;            /* the connection whose request runs; -1 */
	struct srv_metrics m;
	struct json_node nodes[SRV_NODES];
	char store[SRV_BUF];
	char out[SRV_OUT];      /* response bodies */
	char gen[SRV_OUT];      /* the generated text of the running request */
	size_t gen_len;
	size_t sent;            /* streaming: bytes of gen sent (the rest: an unfinished UTF-8 sequence) */
	bool streaming, chat, head_sent, stop;
	char id[40];            /* the running completion's id */
	char model[80];         /* the loaded model's id */
	int32_t ids[SRV_IDS];   /* /tokenize, /detokenize */
};

/* Serve on port (0: any free one) until Ctrl-C, quit or the console's
 * end; lines typed meanwhile run between requests. Prints "serving on
 * 127.0.0.1:PORT" first (the kernel: "serving on port PORT"). tls: every
 * connection is TLS with this key (tls.h); NULL: plain HTTP, the host
 * build's only. One error line on failure. */
int srv_run(struct shell *sh, uint16_t port, const struct tls_key *tls);

/* ---- serve_io.c: the transport, plain or TLS, for serve.c and api.c ---- */
/* Take handle h into c (a TLS engine when s serves TLS); -LLMK_ENOMEM. */
int srv_io_open(struct srv *s, struct srv_conn *c, int h);
/* net_read / net_write / net_close (kernel/net.h) on c's stream. TLS
 * gathers writes into one record until srv_io_flush (srv_pump's end) or
 * the next srv_io_read. */
long srv_io_read(struct srv_conn *c, void *buf, size_t cap);
long srv_io_write(struct srv_conn *c, const void *p, size_t n);
void srv_io_flush(struct srv_conn *c);
void srv_io_close(struct srv_conn *c);

/* ---- serve.c, for api.c ---- */
/* The whole response: status line, headers, body; false if the client is gone. */
bool srv_respond(struct srv *s, struct srv_conn *c, int status, const char *ctype,
		 const char *body, size_t n);
/* An OpenAI error object with status. */
bool srv_error(struct srv *s, struct srv_conn *c, int status, const char *type,
	       const char *msg);
/* Raw bytes to c, waiting up to SRV_SEND_NS for room; false if it is gone. */
bool srv_send(struct srv *s, struct srv_conn *c, const char *p, size_t n);
/* Between tokens: accept, read and answer what needs no engine. */
void srv_pump(struct srv *s);

/* ---- api.c ---- */
/* Does this request need the engine (queued), or can it be answered now? */
bool api_needs_engine(const struct http_req *req);
/* Answer c's request (c->req); the engine's requests only when it is free. */
void api_handle(struct srv *s, struct srv_conn *c);

/* ---- api_attest.c: POST /v1/attestation and /v1/attestation/activate
 * (docs/tls.md), on TLS connections only ---- */
void api_attestation(struct srv *s, struct srv_conn *c);
void api_attestation_activate(struct srv *s, struct srv_conn *c);

#endif
