/*
 * tools/host/tls_client.h — the client of attested TLS (docs/tls.md): the
 * host side of `llmctl proxy` and `verifier tls`, in four files:
 *
 *   tls_client.c   TCP, the BearSSL TLS 1.2 client, the peer's key (its own
 *                  br_x509_class: one certificate, its key taken, no chain)
 *   tls_attest.c   the attestation handshake over that connection
 *   http_msg.c     HTTP/1.1 heads and chunked bodies, as the proxy reads them
 *   proxy.c        `llmctl proxy`
 *
 * The binding: K = SHA-256("llmk tls v1" || the certificate's DER
 * SubjectPublicKeyInfo), the PUBKEY record of the guest's evidence
 * (tls_binding, shell/http/tls_cert.c).
 */
#ifndef TOOLS_HOST_TLS_CLIENT_H
#define TOOLS_HOST_TLS_CLIENT_H

#include <bearssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "connect.h"
#include "../verify/vfy.h"
#include "../../shell/http/tls.h" /* tls_binding, TLS_ACTIVATE_LABEL: the guest's own */

#define TLSC_CONNECT_MS 30000 /* TCP and the handshake, whatever the answers' timeout */
#define TLSC_CERT_MAX 4096 /* the guest's is a few hundred bytes (shell/http/tls.h) */

/*
 * The server's certificate, as BearSSL's engine hands it over: exactly one
 * certificate (a chain of more is refused), parsed strictly
 * (tools/verify/x509.c) and by br_x509_decoder, whose keys must agree; an
 * EC P-256 key only. With pin set, a key whose K differs fails the
 * handshake (mismatch set); without, any such key is taken (the caller
 * then attests it before anything else crosses). Nothing is trusted here:
 * the evidence is what vouches for the key.
 */
struct tlsc_peer {
	const br_x509_class *vtable;
	uint8_t pin[32];            /* the pinned K ... */
	bool pinned;                /* ... if set */
	uint8_t cert[TLSC_CERT_MAX];
	size_t cert_len;
	int n_certs;
	bool too_long;
	br_x509_decoder_context dec;
	uint8_t point[65];          /* 0x04 || X || Y */
	br_x509_pkey pkey;
	uint8_t k[32];              /* K of the certificate's key */
	bool have_key, mismatch;
	char err[200];              /* why the certificate was refused */
	struct vfy_log log;         /* the parser's */
};

/* The class ready for a handshake (tlsc_connect does it). */
void tlsc_peer_init(struct tlsc_peer *p, const uint8_t *pin);

struct tlsc_conn {
	int fd;
	int timeout_ms;             /* for each read or write; -1 forever */
	br_ssl_client_context cc;
	br_x509_minimal_context xm; /* what br_ssl_client_init_full wants; replaced by peer */
	struct tlsc_peer peer;
	br_sslio_context io;
	uint8_t iobuf[BR_SSL_BUFSIZE_BIDI];
	bool timed_out, eof;
};

/*
 * TCP to host:port, then the TLS 1.2 handshake (the three suites of
 * docs/tls.md) with pin as above (NULL: none), each within
 * TLSC_CONNECT_MS (or timeout_ms if shorter); then each read or write of
 * the connection may wait timeout_ms (-1: forever). 0 with t->peer.k the key's
 * K, or -1 with why in err (t->peer.mismatch: the key was not the pinned
 * one). t is large (the I/O buffer): not for the stack.
 */
int tlsc_connect(struct tlsc_conn *t, const char *host, const char *port, const uint8_t *pin,
		int timeout_ms, char *err, size_t errn);
/* Up to n bytes; the count, 0 at the server's end (close_notify or EOF),
 * -1 on an error or a timeout (t->timed_out). */
long tlsc_read(struct tlsc_conn *t, void *p, size_t n);
/* All of p[0..n), flushed; 0 or -1. */
int tlsc_write(struct tlsc_conn *t, const void *p, size_t n);
/* p[0..n) or n spaces into the engine, and out at the next flush (records
 * are whole buffers until then: what goes out together is one length on
 * the wire); 0 or -1. */
int tlsc_put(struct tlsc_conn *t, const void *p, size_t n);
int tlsc_put_spaces(struct tlsc_conn *t, size_t n);
int tlsc_flush(struct tlsc_conn *t);
void tlsc_close(struct tlsc_conn *t);
/* "TLS 1.2, ECDHE_ECDSA_WITH_AES_128_GCM_SHA256" into buf. */
const char *tlsc_describe(struct tlsc_conn *t, char *buf, size_t n);

/* "HOST:PORT" (HOST may be [v6]) into host and port; 0 or -1. */
int tlsc_split_hostport(const char *s, char *host, size_t hn, char *port, size_t pn);

/* ---- tls_attest.c ---- */
struct tlsc_attest_opts {
	struct connect_verify v;    /* the verifier's options */
	const char *provider;       /* "provider" of the request, or NULL */
};

/* What a successful attestation says, line by line for `verifier tls`. */
struct tlsc_attest_report {
	char tls[96];               /* protocol and suite */
	char key[160];              /* the certificate's key and K */
	char evidence[640];         /* connect_verify's summary */
	char binding[120];          /* PUBKEY = K */
	char activation[160];       /* vtpm: the proof; else why none */
	uint8_t nonce[32];          /* the attestation's nonce (a release names it) */
};

/*
 * The attestation of docs/tls.md on t, whose handshake is done: a fresh
 * nonce, POST /v1/attestation, every check of the verifier
 * (connect_verify), the evidence's PUBKEY equal to the K of t's
 * certificate, and for vtpm the credential, POST /v1/attestation/activate
 * and the proof checked in constant time. 0 with rep filled; else 1 after
 * one "error: " line on stderr. Not reentrant (connect_verify is not).
 */
int tlsc_attest(struct tlsc_conn *t, const struct tlsc_attest_opts *o, struct tlsc_attest_report *rep);

/*
 * After tlsc_attest on t, the release of docs/tls.md: POST /v1/keys
 * {"nonce", "key", "load"} with the 32-byte model key, over the attested
 * connection itself (the request's bytes wiped after). 0 with the guest's
 * answer summed up in what (key id, disk, loaded or not); else 1 after one
 * "error: " line on stderr.
 */
int tlsc_release(struct tlsc_conn *t, const uint8_t nonce[32], const uint8_t key[32], bool load,
		 char *what, size_t whatn);

/* The proof the guest owes: HMAC-SHA256(secret, "llmk tls v1 activate" || k || nonce). */
void tlsc_proof(const uint8_t secret[32], const uint8_t k[32], const uint8_t nonce[32],
		uint8_t proof[32]);

/*
 * One HTTP/1.1 request with a JSON body over t and its whole response
 * (Content-Length or chunked; at most cap bytes, NUL-terminated): the
 * status, or -1 with why in err.
 */
int tlsc_http_post(struct tlsc_conn *t, const char *path, const char *body, size_t n,
		  char *resp, size_t cap, size_t *resp_len, char *err, size_t errn);

#endif
