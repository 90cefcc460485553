/*
 * tests/unit/test_tls_client.c — the client of attested TLS
 * (tools/host/tls_client.c, tls_attest.c): its certificate class against a
 * BearSSL server holding a key made as the guest makes its own
 * (shell/http/tls_cert.c) on 127.0.0.1, the pin, certificates it refuses,
 * and the activation proof it expects against the guest's own.
 */
#define _GNU_SOURCE
#include "test.h"
#include "../../tools/host/tls_client.h"
#include "../../tools/host/snp_sim.h"

#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

struct server {
	const struct tls_key *key[2];   /* the certificates sent, in order */
	int n_certs;
	int lfd;
	uint16_t port;
	br_x509_certificate chain[2];
	br_ssl_server_context sc;
	uint8_t buf[BR_SSL_BUFSIZE_BIDI];
};

static int sread(void *ctx, unsigned char *b, size_t n)
{
	ssize_t k = read(*(int *)ctx, b, n);
	return k > 0 ? (int)k : -1;
}

static int swrite(void *ctx, const unsigned char *b, size_t n)
{
	ssize_t k = write(*(int *)ctx, b, n);
	return k > 0 ? (int)k : -1;
}

/* One connection: the handshake, then "pong" for whatever comes. */
static void *serve_one(void *arg)
{
	struct server *s = arg;
	br_sslio_context io;
	char in[16];
	int fd = accept(s->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	for (int i = 0; i < s->n_certs; i++)
		s->chain[i] = s->key[i]->chain;
	br_ssl_server_init_full_ec(&s->sc, s->chain, (size_t)s->n_certs, BR_KEYTYPE_EC,
				   &s->key[0]->sk);
	br_ssl_engine_set_versions(&s->sc.eng, BR_TLS12, BR_TLS12);
	br_ssl_engine_set_buffer(&s->sc.eng, s->buf, sizeof s->buf, 1);
	br_ssl_server_reset(&s->sc);
	br_sslio_init(&io, &s->sc.eng, sread, &fd, swrite, &fd);
	if (br_sslio_read(&io, in, 4) > 0) {
		br_sslio_write_all(&io, "pong", 4);
		br_sslio_flush(&io);
		br_sslio_close(&io);
	}
	close(fd);
	return NULL;
}

static void start(struct server *s, pthread_t *th)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;

	s->lfd = socket(AF_INET, SOCK_STREAM, 0);
	bind(s->lfd, (struct sockaddr *)&a, sizeof a);
	listen(s->lfd, 1);
	getsockname(s->lfd, (struct sockaddr *)&a, &al);
	s->port = ntohs(a.sin_port);
	pthread_create(th, NULL, serve_one, s);
}

/* Connect with pin; 0 or -1 (err). The server thread is joined. */
static int connect_to(struct server *s, struct tlsc_conn *t, const uint8_t *pin, char *err, size_t n)
{
	pthread_t th;
	char port[8];
	char pong[4];

	start(s, &th);
	snprintf(port, sizeof port, "%u", s->port);
	int r = tlsc_connect(t, "127.0.0.1", port, pin, 5000, err, n);
	if (r == 0 && (tlsc_write(t, "ping", 4) || tlsc_read(t, pong, 4) != 4 || memcmp(pong, "pong", 4)))
		r = -2;
	tlsc_close(t);
	pthread_join(th, NULL);
	close(s->lfd);
	return r;
}

static struct tls_key k1, k2;
static struct server srv;
static struct tlsc_conn conn;

TEST(tls_client_takes_the_guest_key_and_its_binding_k)
{
	char err[320];
	uint8_t k[32];

	CHECK_EQ_INT(tls_key_make(&k1), 0);
	CHECK_EQ_INT(tls_key_make(&k2), 0);
	srv.key[0] = &k1;
	srv.n_certs = 1;
	CHECK_EQ_INT(connect_to(&srv, &conn, NULL, err, sizeof err), 0);
	CHECK(conn.peer.have_key && !conn.peer.mismatch);
	CHECK(memcmp(conn.peer.k, k1.k, 32) == 0);
	tls_binding(k1.spki, k1.spki_len, k);   /* K of the SPKI the guest wrote */
	CHECK(memcmp(conn.peer.k, k, 32) == 0);
	CHECK(memcmp(conn.peer.point, k1.pub, 65) == 0);
}

TEST(tls_client_with_a_pin_takes_that_key_and_refuses_another)
{
	char err[320];

	srv.key[0] = &k1;
	srv.n_certs = 1;
	CHECK_EQ_INT(connect_to(&srv, &conn, k1.k, err, sizeof err), 0);
	CHECK_EQ_INT(connect_to(&srv, &conn, k2.k, err, sizeof err), -1);
	CHECK(conn.peer.mismatch);
	CHECK(strstr(err, "is not the attested one") != NULL);
	CHECK(memcmp(conn.peer.k, k1.k, 32) == 0); /* the key it saw, for re-attesting */
}

TEST(tls_client_refuses_a_chain_of_two_certificates)
{
	char err[320];

	srv.key[0] = &k1;
	srv.key[1] = &k2;
	srv.n_certs = 2;
	CHECK_EQ_INT(connect_to(&srv, &conn, NULL, err, sizeof err), -1);
	CHECK(strstr(err, "the server sent 2 certificates") != NULL);
	CHECK(!conn.peer.have_key);
}

/* The class alone, fed a certificate as the engine feeds it. */
static unsigned feed(struct tlsc_peer *p, const uint8_t *der, size_t n, size_t piece)
{
	const br_x509_class *vt = p->vtable;

	vt->start_chain(&p->vtable, NULL);
	vt->start_cert(&p->vtable, (uint32_t)n);
	for (size_t o = 0; o < n; o += piece)
		vt->append(&p->vtable, der + o, n - o < piece ? n - o : piece);
	vt->end_cert(&p->vtable);
	return vt->end_chain(&p->vtable);
}

TEST(tls_client_refuses_keys_other_than_p256_and_damaged_certificates)
{
	static struct snp_sim sim;
	static struct snp_sim_chain ch;
	static uint8_t bad[TLSC_CERT_MAX];
	struct snp_sim_config cfg;
	struct tlsc_peer *p = &conn.peer;
	unsigned usages;


	tlsc_peer_init(p, NULL);
	CHECK_EQ_INT(feed(p, k1.cert, k1.cert_len, 7), 0);
	CHECK(p->vtable->get_pkey(&p->vtable, &usages) != NULL && usages == BR_KEYTYPE_SIGN);

	snp_sim_config_default(&cfg);
	CHECK_EQ_INT(snp_sim_init(&sim, &cfg), 0);
	CHECK_EQ_INT(snp_sim_chain_make(&ch, &sim, 2048), 0);
	CHECK(feed(p, ch.vcek, ch.vcek_len, 100) != 0);       /* EC P-384 */
	CHECK(strstr(p->err, "want EC P-256") != NULL);
	CHECK(p->vtable->get_pkey(&p->vtable, &usages) == NULL);
	CHECK(feed(p, ch.ark, ch.ark_len, 100) != 0);         /* RSA */
	CHECK(strstr(p->err, "want EC P-256") != NULL);

	memcpy(bad, k1.cert, k1.cert_len);
	const uint8_t *spki = memmem(k1.cert, k1.cert_len, k1.spki, k1.spki_len);
	CHECK(spki != NULL);
	for (size_t i = 0; spki && i < k1.cert_len; i += 3) { /* every third byte broken in turn */
		uint8_t want[32];
		bad[i] ^= 0x55;
		unsigned r = feed(p, bad, k1.cert_len, 64);
		/* whatever is taken, K binds exactly the SPKI bytes that came */
		tls_binding(bad + (spki - k1.cert), k1.spki_len, want);
		CHECK(r != 0 || memcmp(p->k, want, 32) == 0);
		bad[i] ^= 0x55;
	}
	CHECK(feed(p, k1.cert, k1.cert_len - 1, 64) != 0);    /* cut short */
	static uint8_t big[TLSC_CERT_MAX + 1];
	CHECK_EQ_INT(feed(p, big, sizeof big, 1000), BR_ERR_X509_LIMIT_EXCEEDED);
}

TEST(tls_client_expects_the_proof_the_guest_computes)
{
	uint8_t secret[32], k[32], nonce[32], guest[32], ours[32];

	for (int i = 0; i < 32; i++)
		secret[i] = (uint8_t)i, k[i] = (uint8_t)(0x80 + i), nonce[i] = (uint8_t)(0xf0 - i);
	tls_activate_proof(secret, 32, k, nonce, 32, guest);
	tlsc_proof(secret, k, nonce, ours);
	CHECK(memcmp(guest, ours, 32) == 0);
	nonce[0] ^= 1;
	tlsc_proof(secret, k, nonce, ours);
	CHECK(memcmp(guest, ours, 32) != 0);
}

TEST(tls_client_splits_host_and_port)
{
	char h[64], p[8];

	CHECK_EQ_INT(tlsc_split_hostport("127.0.0.1:8443", h, sizeof h, p, sizeof p), 0);
	CHECK_STR(h, "127.0.0.1");
	CHECK_STR(p, "8443");
	CHECK_EQ_INT(tlsc_split_hostport("[::1]:80", h, sizeof h, p, sizeof p), 0);
	CHECK_STR(h, "::1");
	CHECK_EQ_INT(tlsc_split_hostport("localhost", h, sizeof h, p, sizeof p), -1);
	CHECK_EQ_INT(tlsc_split_hostport("a:", h, sizeof h, p, sizeof p), -1);
	CHECK_EQ_INT(tlsc_split_hostport(":80", h, sizeof h, p, sizeof p), -1);
	CHECK_EQ_INT(tlsc_split_hostport("a:8x", h, sizeof h, p, sizeof p), -1);
	CHECK_EQ_INT(tlsc_split_hostport("a:123456789", h, sizeof h, p, sizeof p), -1);
}
