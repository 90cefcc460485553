/*
 * tools/host/tls_client.c — TCP and the BearSSL TLS 1.2 client of attested
 * TLS (tls_client.h): the peer's certificate is not checked against any
 * authority; its key is taken, and the guest's evidence (tls_attest.c) is
 * what vouches for it.
 */
#define _GNU_SOURCE
#include "tls_client.h"
#include "../verify/x509.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* docs/tls.md: the guest's suites, nothing else offered. */
static const uint16_t suites[] = {
	BR_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	BR_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	BR_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
};

/* ---- the peer's certificate (br_x509_class) ---- */
static struct tlsc_peer *peer_of(const br_x509_class **ctx)
{
	return (struct tlsc_peer *)(void *)ctx;
}

static void peer_start_chain(const br_x509_class **ctx, const char *server_name)
{
	struct tlsc_peer *p = peer_of(ctx);

	(void)server_name;
	p->cert_len = 0;
	p->n_certs = 0;
	p->too_long = false;
	p->have_key = false;
	p->mismatch = false;
	p->err[0] = 0;
}

static void peer_start_cert(const br_x509_class **ctx, uint32_t length)
{
	struct tlsc_peer *p = peer_of(ctx);

	p->n_certs++;
	if (p->n_certs == 1 && length > sizeof p->cert)
		p->too_long = true;
}

static void peer_append(const br_x509_class **ctx, const unsigned char *buf, size_t len)
{
	struct tlsc_peer *p = peer_of(ctx);

	if (p->n_certs != 1 || p->too_long)
		return;
	if (len > sizeof p->cert - p->cert_len) {
		p->too_long = true;
		return;
	}
	memcpy(p->cert + p->cert_len, buf, len);
	p->cert_len += len;
}

static void peer_end_cert(const br_x509_class **ctx)
{
	(void)ctx;
}

/* The one certificate's key: both parsers agree on an EC P-256 point. */
static unsigned peer_take(struct tlsc_peer *p)
{
	struct vfy_log *log = &p->log;
	struct x509_cert c;
	char hk[65];

	if (p->n_certs != 1) {
		snprintf(p->err, sizeof p->err, "the server sent %d certificates (want exactly one, "
			 "its own)", p->n_certs);
		return BR_ERR_X509_NOT_TRUSTED;
	}
	if (p->too_long) {
		snprintf(p->err, sizeof p->err, "the server's certificate is longer than %d bytes",
			 TLSC_CERT_MAX);
		return BR_ERR_X509_LIMIT_EXCEEDED;
	}
	vfy_log_init(log);
	if (x509_parse(&c, p->cert, p->cert_len, "the server's certificate", log)) {
		snprintf(p->err, sizeof p->err, "%s", log->err);
		return BR_ERR_X509_BAD_DN;
	}
	if (c.key_type != X509_KEY_EC || c.ec_curve != BR_EC_secp256r1 || c.ec_point.n != 65) {
		char kn[40];
		snprintf(p->err, sizeof p->err, "the server's certificate key is %s (want EC P-256)",
			 x509_key_name(&c, kn, sizeof kn));
		return BR_ERR_X509_WRONG_KEY_TYPE;
	}
	br_x509_decoder_init(&p->dec, NULL, NULL);
	br_x509_decoder_push(&p->dec, p->cert, p->cert_len);
	const br_x509_pkey *k = br_x509_decoder_get_pkey(&p->dec);
	if (!k || k->key_type != BR_KEYTYPE_EC || k->key.ec.curve != BR_EC_secp256r1 ||
	    k->key.ec.qlen != 65 || memcmp(k->key.ec.q, c.ec_point.p, 65)) {
		snprintf(p->err, sizeof p->err, "the server's certificate does not decode the same "
			 "with BearSSL (error %d)", br_x509_decoder_last_error(&p->dec));
		return BR_ERR_X509_INVALID_VALUE;
	}
	memcpy(p->point, c.ec_point.p, 65);
	p->pkey.key_type = BR_KEYTYPE_EC;
	p->pkey.key.ec.curve = BR_EC_secp256r1;
	p->pkey.key.ec.q = p->point;
	p->pkey.key.ec.qlen = 65;
	tls_binding(c.spki.p, c.spki.n, p->k);
	p->have_key = true;
	if (p->pinned && memcmp(p->pin, p->k, 32)) {
		p->mismatch = true;
		snprintf(p->err, sizeof p->err, "the server's key (K %s) is not the attested one",
			 vfy_hex(p->k, 32, hk));
		return BR_ERR_X509_NOT_TRUSTED;
	}
	return 0;
}

static unsigned peer_end_chain(const br_x509_class **ctx)
{
	return peer_take(peer_of(ctx));
}

static const br_x509_pkey *peer_get_pkey(const br_x509_class *const *ctx, unsigned *usages)
{
	struct tlsc_peer *p = (struct tlsc_peer *)(void *)ctx;

	if (usages)
		*usages = BR_KEYTYPE_SIGN; /* ECDHE_ECDSA: the key signs the key exchange */
	return p->have_key ? &p->pkey : NULL;
}

static const br_x509_class peer_vtable = {
	sizeof(struct tlsc_peer), peer_start_chain, peer_start_cert, peer_append,
	peer_end_cert, peer_end_chain, peer_get_pkey,
};

void tlsc_peer_init(struct tlsc_peer *p, const uint8_t *pin)
{
	p->vtable = &peer_vtable;
	p->pinned = pin != NULL;
	if (pin)
		memcpy(p->pin, pin, 32);
}

/* ---- the socket ---- */
static int wait_fd(struct tlsc_conn *t, short ev)
{
	struct pollfd pf = {.fd = t->fd, .events = ev};
	int r;

	do
		r = poll(&pf, 1, t->timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		t->timed_out = true;
	return r > 0 ? 0 : -1;
}

static int sock_read(void *ctx, unsigned char *buf, size_t len)
{
	struct tlsc_conn *t = ctx;

	for (;;) {
		if (wait_fd(t, POLLIN))
			return -1;
		ssize_t k = recv(t->fd, buf, len, 0);
		if (k > 0)
			return (int)k;
		if (k == 0) {
			t->eof = true;
			return -1;
		}
		if (errno != EINTR && errno != EAGAIN)
			return -1;
	}
}

static int sock_write(void *ctx, const unsigned char *buf, size_t len)
{
	struct tlsc_conn *t = ctx;

	for (;;) {
		if (wait_fd(t, POLLOUT))
			return -1;
		ssize_t k = send(t->fd, buf, len, MSG_NOSIGNAL);
		if (k > 0)
			return (int)k;
		if (k < 0 && errno != EINTR && errno != EAGAIN)
			return -1;
	}
}

int tlsc_split_hostport(const char *s, char *host, size_t hn, char *port, size_t pn)
{
	const char *c, *h = s;
	size_t l;

	if (*s == '[') {
		const char *e = strchr(s, ']');
		if (!e || e[1] != ':')
			return -1;
		h = s + 1;
		l = (size_t)(e - h);
		c = e + 1;
	} else {
		c = strrchr(s, ':');
		if (!c)
			return -1;
		l = (size_t)(c - s);
	}
	if (!l || l >= hn || !c[1] || strlen(c + 1) >= pn)
		return -1;
	for (const char *d = c + 1; *d; d++)
		if (*d < '0' || *d > '9')
			return -1;
	memcpy(host, h, l);
	host[l] = 0;
	strcpy(port, c + 1);
	return 0;
}

static int tcp_connect(const char *host, const char *port, int timeout_ms, char *err, size_t errn)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *a;
	int r = getaddrinfo(host, port, &hints, &res), fd = -1, e = 0;

	if (r) {
		snprintf(err, errn, "%s:%s: %s", host, port, gai_strerror(r));
		return -1;
	}
	for (a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			struct pollfd pf = {.fd = fd, .events = POLLOUT};
			socklen_t sl = sizeof e;
			if (poll(&pf, 1, timeout_ms) == 1 &&
			    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) == 0 && e == 0)
				break;
			if (!e)
				e = ETIMEDOUT;
		} else {
			e = errno;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errn, "cannot connect to %s:%s: %s", host, port, strerror(e));
		return -1;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

int tlsc_connect(struct tlsc_conn *t, const char *host, const char *port, const uint8_t *pin,
		int timeout_ms, char *err, size_t errn)
{
	/* the connection and the handshake: at most TLSC_CONNECT_MS; answers: timeout_ms */
	int hs_ms = timeout_ms < 0 || timeout_ms > TLSC_CONNECT_MS ? TLSC_CONNECT_MS : timeout_ms;

	memset(t, 0, sizeof *t);
	t->timeout_ms = hs_ms;
	t->fd = tcp_connect(host, port, hs_ms, err, errn);
	if (t->fd < 0)
		return -1;
	br_ssl_client_init_full(&t->cc, &t->xm, NULL, 0);
	br_ssl_engine_set_versions(&t->cc.eng, BR_TLS12, BR_TLS12);
	/* no renegotiation: the key attested is the connection's for its life */
	br_ssl_engine_add_flags(&t->cc.eng, BR_OPT_NO_RENEGOTIATION);
	br_ssl_engine_set_suites(&t->cc.eng, suites, sizeof suites / sizeof suites[0]);
	tlsc_peer_init(&t->peer, pin);
	br_ssl_engine_set_x509(&t->cc.eng, &t->peer.vtable);
	br_ssl_engine_set_buffer(&t->cc.eng, t->iobuf, sizeof t->iobuf, 1);
	if (!br_ssl_client_reset(&t->cc, NULL, 0)) {
		snprintf(err, errn, "TLS: the client would not start (BearSSL error %d)",
			 br_ssl_engine_last_error(&t->cc.eng));
		tlsc_close(t);
		return -1;
	}
	br_sslio_init(&t->io, &t->cc.eng, sock_read, t, sock_write, t);
	/* the handshake runs to its end before the first byte of ours goes */
	if (br_sslio_flush(&t->io) != 0) {
		int e = br_ssl_engine_last_error(&t->cc.eng);
		if (t->peer.err[0])
			snprintf(err, errn, "TLS with %s:%s: %s", host, port, t->peer.err);
		else if (t->timed_out)
			snprintf(err, errn, "TLS with %s:%s: no answer within %d ms", host, port,
				 t->timeout_ms);
		else
			snprintf(err, errn, "TLS with %s:%s failed (BearSSL error %d%s)", host, port, e,
				 e == BR_ERR_OK ? ": the server closed the connection" :
				 e >= BR_ERR_RECV_FATAL_ALERT ? ": the server sent an alert" : "");
		tlsc_close(t);
		return -1;
	}
	t->timeout_ms = timeout_ms;
	return 0;
}

long tlsc_read(struct tlsc_conn *t, void *p, size_t n)
{
	int k = br_sslio_read(&t->io, p, n > 65536 ? 65536 : n);

	if (k > 0)
		return k;
	/* a clean end is the server's close_notify; a bare EOF counts as one
	 * too here: every message read has its own length */
	unsigned st = br_ssl_engine_current_state(&t->cc.eng);
	if ((st & BR_SSL_CLOSED) && br_ssl_engine_last_error(&t->cc.eng) == BR_ERR_OK)
		return 0;
	if (t->eof && br_ssl_engine_last_error(&t->cc.eng) == BR_ERR_IO)
		return 0;
	return -1;
}

int tlsc_put(struct tlsc_conn *t, const void *p, size_t n)
{
	return br_sslio_write_all(&t->io, p, n) != 0 ? -1 : 0;
}

int tlsc_put_spaces(struct tlsc_conn *t, size_t n)
{
	static const char sp[64] = "                                                                ";

	for (size_t k; n; n -= k) {
		k = n < sizeof sp ? n : sizeof sp;
		if (tlsc_put(t, sp, k))
			return -1;
	}
	return 0;
}

int tlsc_flush(struct tlsc_conn *t)
{
	return br_sslio_flush(&t->io) != 0 ? -1 : 0;
}

int tlsc_write(struct tlsc_conn *t, const void *p, size_t n)
{
	return tlsc_put(t, p, n) || tlsc_flush(t) ? -1 : 0;
}

void tlsc_close(struct tlsc_conn *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

const char *tlsc_describe(struct tlsc_conn *t, char *buf, size_t n)
{
	br_ssl_session_parameters sp;
	const char *s = "?";

	br_ssl_engine_get_session_parameters(&t->cc.eng, &sp);
	switch (sp.cipher_suite) {
	case BR_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:
		s = "ECDHE_ECDSA_WITH_AES_128_GCM_SHA256";
		break;
	case BR_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:
		s = "ECDHE_ECDSA_WITH_AES_256_GCM_SHA384";
		break;
	case BR_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256:
		s = "ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256";
		break;
	}
	snprintf(buf, n, "TLS 1.%d, %s", sp.version == BR_TLS12 ? 2 : sp.version & 0xff, s);
	return buf;
}
