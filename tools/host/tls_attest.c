/*
 * tools/host/tls_attest.c — the attestation handshake of attested TLS
 * (docs/tls.md), run on a TLS connection whose handshake is done and
 * before any request of the user crosses it:
 *
 *   1. a fresh 32-byte nonce; POST /v1/attestation {"nonce", "provider"}
 *   2. the bundle through every check of the verifier (connect_verify)
 *   3. its PUBKEY equal to K of the certificate this connection saw
 *   4. vtpm: the credential for its EK and AK, POST
 *      /v1/attestation/activate, and the proof HMAC-SHA256(secret,
 *      "llmk tls v1 activate" || K || nonce) compared in constant time:
 *      only the certified TPM could open the credential.
 */
#define _GNU_SOURCE
#include "tls_client.h"
#include "http_msg.h"
#include "../../shell/evidence.h"
#include "../../shell/http/json.h"
#include "../verify/verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define RESP_MAX (2u << 20) /* a bundle's base64 and the JSON round it */

/* Read until the response in raw[0..*n) is whole; its body into resp. */
static int read_response(struct tlsc_conn *t, char *raw, size_t rawcap, size_t *n, char *resp,
			 size_t cap, size_t *resp_len, char *err, size_t errn)
{
	struct hmsg m;
	struct hchunk ch = {0};
	size_t off = 0, out = 0;
	int r;

	for (;;) {
		r = hmsg_response(raw, *n, false, &m);
		if (r < 0) {
			snprintf(err, errn, "the server's response is not HTTP/1.1 (%d)", -r);
			return -1;
		}
		if (r == 1 && m.status >= 200)
			break;
		if (r == 1) { /* 1xx: skip it */
			memmove(raw, raw + m.head_len, *n - m.head_len);
			*n -= m.head_len;
			continue;
		}
		long k = *n < rawcap ? tlsc_read(t, raw + *n, rawcap - *n) : -1;
		if (k <= 0) {
			snprintf(err, errn, "the server %s before its response's head was whole",
				 k == 0 ? "closed the connection" : t->timed_out ? "went silent" : "failed");
			return -1;
		}
		*n += (size_t)k;
	}
	off = m.head_len;
	for (bool done = m.body == HMSG_NONE; !done;) {
		while (off < *n && !done) {
			size_t used, dn;
			const char *d;
			if (m.body == HMSG_CHUNKED) {
				int c = hchunk_feed(&ch, raw + off, *n - off, &used, &d, &dn);
				if (c < 0) {
					snprintf(err, errn, "the server's chunked body is malformed");
					return -1;
				}
				done = c == 1;
			} else {
				d = raw + off;
				dn = used = m.body == HMSG_LENGTH && *n - off > m.length - out ?
					(size_t)(m.length - out) : *n - off;
				done = m.body == HMSG_LENGTH && out + dn == m.length;
			}
			if (dn > cap - 1 - out) {
				snprintf(err, errn, "the server's response is longer than %zu bytes", cap - 1);
				return -1;
			}
			memcpy(resp + out, d, dn);
			out += dn;
			off += used;
		}
		if (done)
			break;
		off = *n = 0; /* all taken: read afresh */
		long k = tlsc_read(t, raw, rawcap);
		if (k == 0 && m.body == HMSG_CLOSE)
			break;
		if (k <= 0) {
			snprintf(err, errn, "the server %s in the middle of its response",
				 k == 0 ? "closed the connection" : t->timed_out ? "went silent" : "failed");
			return -1;
		}
		*n = (size_t)k;
	}
	resp[out] = 0;
	*resp_len = out;
	return m.status;
}

int tlsc_http_post(struct tlsc_conn *t, const char *path, const char *body, size_t n,
		  char *resp, size_t cap, size_t *resp_len, char *err, size_t errn)
{
	char head[256];
	size_t rawcap = 64 * 1024, rn = 0;
	int k = snprintf(head, sizeof head, "POST %s HTTP/1.1\r\nHost: llmk\r\nContent-Type: "
			 "application/json\r\nContent-Length: %zu\r\n\r\n", path, n);
	char *raw = malloc(rawcap);

	if (!raw) {
		snprintf(err, errn, "out of memory");
		return -1;
	}
	if (tlsc_write(t, head, (size_t)k) || tlsc_write(t, body, n)) {
		snprintf(err, errn, "the connection failed while sending POST %s", path);
		free(raw);
		return -1;
	}
	int r = read_response(t, raw, rawcap, &rn, resp, cap, resp_len, err, errn);
	free(raw);
	return r;
}

/* The "message" of an OpenAI error object in body, or the body's start. */
static void error_message(const char *body, size_t n, char *out, size_t outn)
{
	static struct json_node nodes[64];
	static char store[1024];
	struct json_doc d = {nodes, 64, 0, store, sizeof store, 0, 8, 65536};
	char e[80];

	if (!json_parse(&d, body, n, e, sizeof e)) {
		const struct json_node *er = json_get(&d, &d.nodes[0], "error");
		const struct json_node *m = er ? json_get(&d, er, "message") : NULL;
		if (m && m->type == JSON_STRING) {
			snprintf(out, outn, "%s", m->str);
			return;
		}
	}
	snprintf(out, outn, "%.*s", (int)(n > 120 ? 120 : n), body);
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
}

/* POST a JSON body; the 200 response's JSON in d, else one error line. */
static int post_json(struct tlsc_conn *t, const char *path, const char *body, char *resp,
		     size_t cap, struct json_doc *d)
{
	char err[256], msg[200];
	size_t n;
	int st = tlsc_http_post(t, path, body, strlen(body), resp, cap, &n, err, sizeof err);

	if (st < 0)
		return cmd_fail("tls: POST %s: %s", path, err);
	if (st != 200) {
		error_message(resp, n, msg, sizeof msg);
		return cmd_fail("tls: POST %s: the server answered %d: %s", path, st, msg);
	}
	if (json_parse(d, resp, n, err, sizeof err))
		return cmd_fail("tls: POST %s: the answer is not the JSON expected: %s", path, err);
	if (d->nodes[0].type != JSON_OBJECT)
		return cmd_fail("tls: POST %s: the answer is not a JSON object", path);
	return 0;
}

static const struct json_node *str_member(const struct json_doc *d, const char *key)
{
	const struct json_node *v = json_get(d, &d->nodes[0], key);
	return v && v->type == JSON_STRING ? v : NULL;
}

/* Constant time: the proof is a MAC. */
static bool same32(const uint8_t *a, const uint8_t *b)
{
	uint8_t x = 0;
	for (int i = 0; i < 32; i++)
		x |= a[i] ^ b[i];
	return x == 0;
}

void tlsc_proof(const uint8_t secret[32], const uint8_t k[32], const uint8_t nonce[32],
		uint8_t proof[32])
{
	br_hmac_key_context kc;
	br_hmac_context h;

	br_hmac_key_init(&kc, &br_sha256_vtable, secret, 32);
	br_hmac_init(&h, &kc, 0);
	br_hmac_update(&h, TLS_ACTIVATE_LABEL, sizeof TLS_ACTIVATE_LABEL - 1);
	br_hmac_update(&h, k, 32);
	br_hmac_update(&h, nonce, 32);
	br_hmac_out(&h, proof);
	explicit_bzero(&kc, sizeof kc);
	explicit_bzero(&h, sizeof h);
}

/* vtpm: the credential goes to the guest (it is encrypted to the EK); the
 * proof comes back keyed by the secret only that TPM recovers. */
static int activate(struct tlsc_conn *t, const uint8_t *cred, size_t cred_n,
		    const uint8_t secret[32], const uint8_t nonce[32], char *resp, size_t cap,
		    struct json_doc *d, struct tlsc_attest_report *rep)
{
	static char body[4096];
	uint8_t want[32], got[32];
	int k = snprintf(body, sizeof body, "{\"credential\":\"");
	long m = b64_encode(cred, cred_n, body + k, sizeof body - (size_t)k - 4);

	if (m < 0)
		return cmd_fail("tls: the credential (%zu bytes) does not fit its request", cred_n);
	strcat(body, "\"}");
	if (post_json(t, "/v1/attestation/activate", body, resp, cap, d))
		return 1;
	const struct json_node *p = str_member(d, "proof");
	if (!p || p->len != 64 || vfy_parse_hex(p->str, got, 32))
		return cmd_fail("tls: the activation's answer has no \"proof\" of 64 hex digits");
	tlsc_proof(secret, t->peer.k, nonce, want);
	bool ok = same32(want, got);
	explicit_bzero(want, sizeof want);
	if (!ok)
		return cmd_fail("tls: the activation proof is wrong: the guest did not open the "
				"credential (its quoting key is not in the certified TPM)");
	snprintf(rep->activation, sizeof rep->activation, "activation: the guest opened the "
		 "credential for the certified TPM's EK and AK (proof checked)");
	return 0;
}

int tlsc_attest(struct tlsc_conn *t, const struct tlsc_attest_opts *o, struct tlsc_attest_report *rep)
{
	static struct json_node nodes[64];
	static char store[EVIDENCE_MAX / 3 * 4 + 64];
	static uint8_t bundle[EVIDENCE_MAX], cred[2048];
	struct json_doc d = {nodes, 64, 0, store, sizeof store, 0, 8, RESP_MAX};
	uint8_t nonce[32], rd[64], spub[32], secret[32];
	size_t cred_n = 0, secret_n = 0;
	char nh[65], body[256], hk[65], hp[65];
	char *resp = malloc(RESP_MAX);
	int r = 1;

	memset(rep, 0, sizeof *rep);
	if (!resp)
		return cmd_fail("tls: out of memory");
	if (getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce) {
		free(resp);
		return cmd_fail("tls: no randomness from getrandom: %s", strerror(errno));
	}
	tlsc_describe(t, rep->tls, sizeof rep->tls);
	snprintf(rep->key, sizeof rep->key, "certificate: EC P-256 key, K %s",
		 vfy_hex(t->peer.k, 32, hk));
	verify_hex(nonce, 32, nh);
	if (o->provider)
		snprintf(body, sizeof body, "{\"nonce\":\"%s\",\"provider\":\"%.16s\"}", nh, o->provider);
	else
		snprintf(body, sizeof body, "{\"nonce\":\"%s\"}", nh);
	if (post_json(t, "/v1/attestation", body, resp, RESP_MAX, &d))
		goto out;
	const struct json_node *ev = str_member(&d, "evidence");
	if (!ev) {
		cmd_fail("tls: the attestation's answer has no \"evidence\" string");
		goto out;
	}
	long bn = b64_decode(ev->str, ev->len, bundle, sizeof bundle);
	if (bn < 0) {
		cmd_fail("tls: the attestation's \"evidence\" is not base64 of at most %u bytes",
			 EVIDENCE_MAX);
		goto out;
	}
	if (connect_verify(&o->v, bundle, (size_t)bn, nonce, sizeof nonce, rd, spub, cred,
			   sizeof cred, &cred_n, secret, &secret_n, rep->evidence,
			   sizeof rep->evidence))
		goto out;
	/* the evidence's key is the one this connection's certificate holds */
	if (!same32(spub, t->peer.k)) {
		cmd_fail("tls: the evidence binds key K %s, but the TLS peer's certificate key is K %s: "
			 "not the attested guest", vfy_hex(spub, 32, hp), hk);
		goto out;
	}
	snprintf(rep->binding, sizeof rep->binding, "binding: the evidence's PUBKEY is K of the "
		 "TLS peer's key");
	memcpy(rep->nonce, nonce, sizeof nonce);
	if (cred_n) {
		if (secret_n != 32) {
			cmd_fail("tls: the credential's secret is %zu bytes (want 32)", secret_n);
			goto out;
		}
		if (activate(t, cred, cred_n, secret, nonce, resp, RESP_MAX, &d, rep))
			goto out;
	} else {
		snprintf(rep->activation, sizeof rep->activation, "activation: none needed (the "
			 "hardware's signature chain vouches for the key)");
	}
	r = 0;
out:
	explicit_bzero(secret, sizeof secret);
	free(resp);
	return r;
}

int tlsc_release(struct tlsc_conn *t, const uint8_t nonce[32], const uint8_t key[32], bool load,
		 char *what, size_t whatn)
{
	static struct json_node nodes[64];
	static char store[4096];
	struct json_doc d = {nodes, 64, 0, store, sizeof store, 0, 8, 65536};
	char body[256], nh[65], resp[4096];
	size_t n = (size_t)snprintf(body, sizeof body, "{\"nonce\":\"%s\",\"key\":\"",
				    vfy_hex(nonce, 32, nh));
	long m = b64_encode(key, 32, body + n, sizeof body - n);

	if (m < 0)
		return cmd_fail("tls: the key does not fit its request");
	n += (size_t)m;
	n += (size_t)snprintf(body + n, sizeof body - n, "\",\"load\":%s}", load ? "true" : "false");
	int r = post_json(t, "/v1/keys", body, resp, sizeof resp, &d);
	explicit_bzero(body, sizeof body);
	if (r)
		return 1;
	const struct json_node *id = str_member(&d, "key_id"), *rel = str_member(&d, "released");
	const struct json_node *disk = json_get(&d, &d.nodes[0], "disk");
	const struct json_node *ld = json_get(&d, &d.nodes[0], "loaded");
	if (!id || !rel || !disk || disk->type != JSON_NUMBER || !ld)
		return cmd_fail("tls: POST /v1/keys: the answer lacks key_id, released, disk or loaded");
	snprintf(what, whatn, "key id %.32s %s for disk %.0f; the model %s", id->str,
		 strcmp(rel->str, "now") ? "was already in place" : "released", disk->num,
		 ld->type == JSON_TRUE ? "is loaded" : "is not loaded");
	return 0;
}
