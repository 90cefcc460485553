/*
 * shell/http/tls.c — a BearSSL TLS 1.2 server engine per connection
 * (tls.h), pumped by hand over kernel/net.h: records move between the
 * engine's buffers and the network only as far as the network takes them
 * now (BearSSL's "engine" API, bearssl_ssl.h: sendrec/recvrec/sendapp/
 * recvapp), so nothing here waits except tls_close's short flush.
 */
#include "tls.h"

#include "../../kernel/net.h"
#include "../../llm/seal.h"

static const uint16_t suites[] = {
	BR_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	BR_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	BR_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
};

/* The server profile: TLS 1.2, the three suites, ECDHE over BearSSL's
 * default curves, the key's ECDSA signatures over whichever SHA-2 hash the
 * client's signature_algorithms allow (RFC 5246 §7.4.1.4.1). */
static void profile(br_ssl_server_context *sc, const struct tls_key *k)
{
	static const struct {
		int id;
		const br_hash_class *vt;
	} hashes[] = {
		{br_sha1_ID, &br_sha1_vtable}, {br_sha224_ID, &br_sha224_vtable},
		{br_sha256_ID, &br_sha256_vtable}, {br_sha384_ID, &br_sha384_vtable},
		{br_sha512_ID, &br_sha512_vtable},
	};
	br_ssl_engine_context *e = &sc->eng;

	br_ssl_server_zero(sc);
	br_ssl_engine_set_versions(e, BR_TLS12, BR_TLS12);
	br_ssl_engine_set_suites(e, suites, sizeof suites / sizeof suites[0]);
	br_ssl_engine_set_default_ec(e);
	br_ssl_server_set_single_ec(sc, &k->chain, 1, &k->sk, BR_KEYTYPE_SIGN, BR_KEYTYPE_EC,
				    br_ssl_engine_get_ec(e), br_ecdsa_sign_asn1_get_default());
	for (size_t i = 0; i < sizeof hashes / sizeof hashes[0]; i++)
		br_ssl_engine_set_hash(e, hashes[i].id, hashes[i].vt);
	br_ssl_engine_set_prf_sha256(e, &br_tls12_sha256_prf);
	br_ssl_engine_set_prf_sha384(e, &br_tls12_sha384_prf);
	br_ssl_engine_set_default_aes_gcm(e);
	br_ssl_engine_set_default_chapol(e);
}

struct tls_conn *tls_open(const struct tls_key *k, int h)
{
	struct tls_conn *t = plat_alloc(sizeof *t, 64);
	uint8_t seed[32];

	if (!t)
		return NULL;
	memset(t, 0, sizeof *t);
	t->h = h;
	t->t_open = plat_time_ns();
	profile(&t->sc, k);
	br_ssl_engine_set_buffers_bidi(&t->sc.eng, t->ibuf, sizeof t->ibuf, t->obuf, sizeof t->obuf);
	/* the engine's randoms (server random, ECDHE key) come from the machine */
	if (plat_entropy(seed, sizeof seed)) {
		plat_free(t, sizeof *t);
		return NULL;
	}
	br_ssl_engine_inject_entropy(&t->sc.eng, seed, sizeof seed);
	seal_zeroize(seed, sizeof seed);
	if (!br_ssl_server_reset(&t->sc)) {
		plat_free(t, sizeof *t);
		return NULL;
	}
	return t;
}

/* Move records both ways as far as the network goes now. */
static void pump(struct tls_conn *t)
{
	br_ssl_engine_context *e = &t->sc.eng;

	while (!t->dead) {
		unsigned st = br_ssl_engine_current_state(e);
		size_t len;
		long k;

		if (st & BR_SSL_CLOSED)
			return;
		if (st & BR_SSL_SENDREC) {
			uint8_t *b = br_ssl_engine_sendrec_buf(e, &len);
			if ((k = net_write(t->h, b, len)) < 0)
				t->dead = true;
			else if (k > 0) {
				br_ssl_engine_sendrec_ack(e, (size_t)k);
				continue;
			}
		}
		if ((st & BR_SSL_RECVREC) && !t->eof && !t->dead) {
			uint8_t *b = br_ssl_engine_recvrec_buf(e, &len);
			k = net_read(t->h, b, len);
			if (k == NET_EOF)
				t->eof = true;
			else if (k < 0)
				t->dead = true;
			else if (k > 0) {
				br_ssl_engine_recvrec_ack(e, (size_t)k);
				continue;
			}
		}
		return;
	}
}

long tls_read(struct tls_conn *t, void *buf, size_t cap)
{
	br_ssl_engine_context *e = &t->sc.eng;
	unsigned st;

	tls_flush(t); /* what was written since: one record, sent now */
	st = br_ssl_engine_current_state(e);
	if (st & (BR_SSL_SENDAPP | BR_SSL_RECVAPP))
		t->up = true;
	if (st & BR_SSL_RECVAPP) {
		size_t len;
		uint8_t *b = br_ssl_engine_recvapp_buf(e, &len);
		if (len > cap)
			len = cap;
		memcpy(buf, b, len);
		br_ssl_engine_recvapp_ack(e, len);
		return (long)len;
	}
	if (st & BR_SSL_CLOSED)
		return br_ssl_engine_last_error(e) == BR_ERR_OK ? NET_EOF : -LLMK_EIO;
	if (t->dead || (!t->up && plat_time_ns() - t->t_open > TLS_HANDSHAKE_NS))
		return -LLMK_EIO;
	return t->eof ? NET_EOF : 0;
}

long tls_write(struct tls_conn *t, const void *p, size_t n)
{
	br_ssl_engine_context *e = &t->sc.eng;
	unsigned st;
	size_t len;

	pump(t);
	st = br_ssl_engine_current_state(e);
	if (t->dead || (st & BR_SSL_CLOSED))
		return -LLMK_EIO;
	if (!(st & BR_SSL_SENDAPP))
		return 0; /* handshake still running, or the record buffer waits for the network */
	uint8_t *b = br_ssl_engine_sendapp_buf(e, &len);
	if (len > n)
		len = n;
	memcpy(b, p, len);
	br_ssl_engine_sendapp_ack(e, len); /* a full buffer becomes a record by itself */
	pump(t);
	return (long)len;
}

void tls_flush(struct tls_conn *t)
{
	br_ssl_engine_flush(&t->sc.eng, 0);
	pump(t);
}

bool tls_pending(struct tls_conn *t)
{
	return (br_ssl_engine_current_state(&t->sc.eng) & BR_SSL_RECVAPP) != 0;
}

void tls_close(struct tls_conn *t)
{
	uint64_t deadline = plat_time_ns() + 1000000000ull;

	if (!t)
		return;
	br_ssl_engine_context *e = &t->sc.eng;
	br_ssl_engine_close(e);
	/* the last records and close_notify, unless the peer stops reading */
	for (;;) {
		pump(t);
		if (t->dead || !(br_ssl_engine_current_state(e) & BR_SSL_SENDREC) ||
		    plat_time_ns() > deadline)
			break;
		net_poll(1000000);
	}
	net_close(t->h);
	seal_zeroize(t, sizeof *t);
	plat_free(t, sizeof *t);
}
