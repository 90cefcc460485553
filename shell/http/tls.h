/*
 * shell/http/tls.h — attested TLS for the API server (docs/tls.md): the
 * guest's key and self-signed certificate (tls_cert.c), made the first time
 * `serve` starts in a boot, and a BearSSL server engine per connection
 * (tls.c) pumped over kernel/net.h without ever waiting, like the rest of
 * serve.c.
 *
 * TLS 1.2 only, ECDHE_ECDSA with AES-128-GCM, AES-256-GCM or
 * ChaCha20-Poly1305. The certificate's key is bound into the evidence:
 * K = SHA-256("llmk tls v1" || its DER SubjectPublicKeyInfo) is the PUBKEY
 * of the evidence inputs (shell/evidence.h), so a client that checks the
 * evidence for its nonce and K knows the TLS peer is the measured guest.
 */
#ifndef SHELL_HTTP_TLS_H
#define SHELL_HTTP_TLS_H

#include "../../kernel/platform.h"
#include <bearssl.h>

#define TLS_CERT_MAX 512   /* the certificate: ~330 bytes for P-256 */
#define TLS_SPKI_MAX 96    /* a P-256 SubjectPublicKeyInfo: 91 bytes */
#define TLS_LABEL "llmk tls v1"
#define TLS_ACTIVATE_LABEL "llmk tls v1 activate"
#define TLS_RELEASE_LABEL "llmk tls v1 release"
/* Per connection: a whole record in (RFC 5246 §6.2: 2^14 + overhead), and
 * records of up to 8 KiB out (BearSSL cuts them to the buffer). */
#define TLS_IBUF BR_SSL_BUFSIZE_INPUT
#define TLS_OBUF (8192 + 85)
#define TLS_HANDSHAKE_NS (10ull * 1000000000) /* a handshake not done in this: dropped */

/* The guest's TLS identity, one per boot; the private key never leaves it. */
struct tls_key {
	br_ec_private_key sk;
	uint8_t x[BR_EC_KBUF_PRIV_MAX_SIZE];    /* sk.x points here */
	uint8_t pub[BR_EC_KBUF_PUB_MAX_SIZE];   /* the uncompressed point */
	size_t pub_len;
	uint8_t spki[TLS_SPKI_MAX];
	size_t spki_len;
	uint8_t cert[TLS_CERT_MAX];
	size_t cert_len;
	br_x509_certificate chain;              /* the one certificate */
	uint8_t k[32];                          /* the binding K */
};

/*
 * A fresh P-256 key pair from plat_entropy and its certificate: X.509 v3,
 * ECDSA with SHA-256, subject and issuer CN=llmk, a random 16-byte serial,
 * valid 2026-01-01 to 2099-12-31 (clients do not take time from the
 * guest), key usage digitalSignature. 0, or -LLMK_EIO (no entropy) /
 * -LLMK_ERANGE (did not fit), with k wiped.
 */
int tls_key_make(struct tls_key *k);
/* Zeroize the key (reboot, poweroff). */
void tls_key_wipe(struct tls_key *k);
/* K = SHA-256("llmk tls v1" || spki[0..n)). */
void tls_binding(const uint8_t *spki, size_t n, uint8_t k[32]);
/* The DER SubjectPublicKeyInfo of an uncompressed P-256 point (65 bytes):
 * its length, or 0 when out is too small. */
size_t tls_spki_p256(const uint8_t *pub, size_t pub_len, uint8_t *out, size_t cap);

/* What /v1/attestation left on a connection for /v1/attestation/activate. */
struct tls_attest {
	bool pending;           /* a vtpm attestation waits for one activation attempt */
	/* The latest attestation is complete (snp, tdx: answered; vtpm:
	 * activated) and no release (POST /v1/keys, api_keys.c) has spent it. */
	bool ready;
	bool simulated;         /* its evidence came from a simulator */
	int kind;               /* its provider, PLAT_ATTEST_* */
	uint8_t nonce[64];
	size_t nonce_len;
	uint8_t model[32];      /* the model digest its evidence bound */
};

/* api_attest.c: the proof for /v1/attestation/activate, HMAC-SHA256(key =
 * the activated secret, "llmk tls v1 activate" || K || nonce). */
void tls_activate_proof(const uint8_t *secret, size_t n, const uint8_t k[32],
			const uint8_t *nonce, size_t nonce_len, uint8_t proof[32]);
/* Open the client's credential (plat_attest_activate, vtpm) for the
 * attestation pending in a: 200 and the proof, and a is ready for a release;
 * 409 none pending; 403 the credential did not open (why says). One attempt:
 * a is no longer pending whatever happens, and forgotten unless it is 200. */
int tls_activate(struct tls_attest *a, const uint8_t k[32], const uint8_t *cred, size_t n,
		 uint8_t proof[32], char *why, size_t whyn);

/* One TLS connection over a net handle. */
struct tls_conn {
	br_ssl_server_context sc;
	int h;
	uint64_t t_open;
	bool up;                /* the handshake has finished */
	bool eof, dead;         /* the peer closed its side; the transport failed */
	struct tls_attest att;
	uint8_t ibuf[TLS_IBUF], obuf[TLS_OBUF];
};

/* A server engine for handle h with key k (which must outlive it); NULL
 * when memory is short (h is left open). */
struct tls_conn *tls_open(const struct tls_key *k, int h);
/* As net_read and net_write (kernel/net.h) but on the decrypted stream:
 * read first sends what was written (tls_flush), then gives application
 * bytes (> 0), 0 none yet, NET_EOF the peer closed, -LLMK_EIO a broken
 * record, a failed or late handshake, a reset; write takes up to n bytes
 * into the record being filled (0: the handshake is not done, or records
 * wait for the network) and sends the records that are full. */
long tls_read(struct tls_conn *t, void *buf, size_t cap);
long tls_write(struct tls_conn *t, const void *p, size_t n);
/* What was written since the last flush as one record, and send what the
 * network takes now: a response, or a streamed event, is one record. */
void tls_flush(struct tls_conn *t);
/* Decrypted bytes wait in the engine for tls_read: the socket they came in
 * on is empty, so a poll on it would not wake for them. */
bool tls_pending(struct tls_conn *t);
/* close_notify, what is still queued sent for up to a second, the handle
 * closed, the connection's state zeroized and freed. */
void tls_close(struct tls_conn *t);

#endif
