/*
 * shell/http/serve.h — the API server: connections polled through
 * kernel/net.h, HTTP/1.1 requests (http.h) routed to the OpenAI-compatible
 * endpoints (api.c); generations decode together in a batch (sched.c,
 * llm/engine_batch.h) while the others wait in a bounded queue (503 past
 * it). No threads: the loop reads and answers connections and the console
 * between the batch's passes.
 */
#ifndef SHELL_HTTP_SERVE_H
#define SHELL_HTTP_SERVE_H

#include "../../kernel/net.h"
#include "../shell.h"
#include "http.h"
#include "json.h"

struct engine_gen;
struct chat_msg;

#define SRV_CONNS 64                 /* connections held at once; past it: 503 and close */
#define SRV_BUF (64u * 1024)         /* a connection's request bytes (head + body) */
#define SRV_BODY_MAX (SRV_BUF - HTTP_HEAD_MAX)
#define SRV_QUEUE 32                 /* generations waiting for a slot; past it: 503 */
#define SRV_HEAD_NS (10ull * 1000000000)  /* a request's bytes must all arrive in this */
#define SRV_IDLE_NS (60ull * 1000000000)  /* a keep-alive connection idle this long is closed */
#define SRV_SEND_NS (10ull * 1000000000)  /* a client that reads nothing this long is dropped */
#define SRV_NODES 4096               /* JSON values a request may hold */
#define SRV_OUT (256u * 1024)        /* a response body, and the generated text */
#define SRV_IDS 8192                 /* token ids /tokenize returns, /detokenize takes */
#define SRV_PAD 1024                 /* JSON bodies: a multiple of this many bytes */
#define SRV_SSE_PAD 512              /* a streamed event's chunk: a multiple of this */

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
	bool busy;              /* its request is in the batch (sched.c) */
	bool done;              /* the batch answered it: the next srv_pump ends it */
	struct http_req req;
};

struct srv_metrics {
	uint64_t requests, errors, rejected;   /* answered, of them errors, 503s for a full queue */
	uint64_t prompt_tokens, gen_tokens, prompt_ns, gen_ns;
	uint64_t conns;                        /* accepted */
};

struct sched;

struct srv {
	struct shell *sh;
	const struct tls_key *tls; /* every connection speaks TLS with this key; NULL: plain */
	int listener;
	uint16_t port;
	struct srv_conn c[SRV_CONNS];
	uint64_t next_ticket;
	int n_queued;
	struct sched *sched;    /* the batch and its requests (sched.c) */
	uint32_t slots;         /* generations together at most (serve --slots) */
	struct srv_metrics m;
	struct json_node nodes[SRV_NODES];
	char store[SRV_BUF];
	char out[SRV_OUT];      /* response bodies */
	char gen[SRV_OUT];      /* /detokenize's text */
	bool stop;
	int32_t ids[SRV_IDS];   /* /tokenize, /detokenize */
};

/* Serve on port (0: any free one) until Ctrl-C, quit or the console's
 * end; lines typed meanwhile run between requests. Prints "serving on
 * 127.0.0.1:PORT" first (the kernel: "serving on port PORT"). tls: every
 * connection is TLS with this key (tls.h); NULL: plain HTTP, the host
 * build's only. Up to slots generations decode together (sched.c). One
 * error line on failure. */
int srv_run(struct shell *sh, uint16_t port, const struct tls_key *tls, uint32_t slots);
#define SRV_SLOTS 8             /* serve's default --slots */

/* ---- serve_io.c: the transport, plain or TLS, for serve.c and api.c ---- */
/* Take handle h into c (a TLS engine when s serves TLS); -LLMK_ENOMEM. */
int srv_io_open(struct srv *s, struct srv_conn *c, int h);
/* net_read / net_write / net_close (kernel/net.h) on c's stream. TLS
 * gathers writes into one record until srv_io_flush (srv_pump's end) or
 * the next srv_io_read. */
long srv_io_read(struct srv_conn *c, void *buf, size_t cap);
long srv_io_write(struct srv_conn *c, const void *p, size_t n);
void srv_io_flush(struct srv_conn *c);
/* Bytes c has sent wait decrypted in its TLS engine (any pump of it, a
 * flush or a write, reads records too): the socket looks empty, so the
 * loop must not sleep on it. */
bool srv_io_pending(struct srv_conn *c);
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
/* Up to n bytes to c without waiting: the count taken (0: no room now), or
 * -1 when it is gone. */
long srv_send_some(struct srv *s, struct srv_conn *c, const char *p, size_t n);
/* Between passes: accept, read and answer what needs no engine. True when
 * a connection's bytes wait in its TLS engine for the next srv_pump (the
 * loop then goes on without sleeping in net_poll). */
bool srv_pump(struct srv *s);

/* ---- api.c ---- */
/* Does this request need the engine (queued), or can it be answered now? */
bool api_needs_engine(const struct http_req *req);
/* Answer c's request (c->req); the engine's requests only when it is free:
 * a generation joins the batch (sched_join) and is answered as it runs. */
void api_handle(struct srv *s, struct srv_conn *c);

/* ---- api_attest.c: POST /v1/attestation and /v1/attestation/activate
 * (docs/tls.md), on TLS connections only ---- */
void api_attestation(struct srv *s, struct srv_conn *c);
void api_attestation_activate(struct srv *s, struct srv_conn *c);

/* ---- api_keys.c: POST /v1/keys, a sealed model's key released over the
 * attested connection (docs/tls.md), on TLS connections only ---- */
struct tls_release_req {
	uint8_t nonce[64];      /* the attestation it is made against */
	size_t nonce_len;
	uint8_t key[32];        /* the model key */
	bool load;              /* then `load` the disk it opens */
};
/* {"nonce": HEX, "key": BASE64 of 32 bytes, "load": bool (optional)}, no
 * other member and none twice, parsed into d (the caller's nodes and
 * store) and r: 0, or 400 with why (r wiped). */
int api_keys_parse(struct json_doc *d, const char *body, size_t n, struct tls_release_req *r,
		   char *why, size_t whyn);
void api_keys(struct srv *s, struct srv_conn *c);

/* ---- sched.c: the batch of generations ---- */
/* A parsed request (g's strings may point into the request's JSON: they
 * are copied or used before this returns) joins the batch: true, and the
 * request owns fmt (tools: its reply parsed for calls at the end; freed
 * with the request). False after answering with an error: fmt is still
 * the caller's. c->busy while it runs. */
struct api_fmt;
bool sched_join(struct srv *s, struct srv_conn *c, bool chat, bool stream, const char *model,
		const char *prompt, const struct chat_msg *msgs, size_t n, struct engine_gen *g,
		struct api_fmt *fmt);
/* Queued requests join while slots are free; one pass; finished requests
 * answered. False when there was nothing to do. */
bool sched_run(struct srv *s);
/* Whether a slot is free for a queued request to join. */
bool sched_room(struct srv *s);
/* Every request ends (answered as cancelled), the batch freed. */
void sched_stop(struct srv *s);
/* /metrics lines of the batch into buf: its length. */
size_t sched_metrics(struct srv *s, char *buf, size_t cap);

#endif
