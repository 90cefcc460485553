/*
 * shell/http/api_attest.c — POST /v1/attestation and
 * /v1/attestation/activate (docs/tls.md): evidence for the TLS key, made
 * exactly as `session open` makes its own (shell_attest_bundle) with K
 * (tls.h) as the public key, and for a vTPM the proof that the client's
 * credential opened in this TPM. TLS connections only: on a plain one both
 * are unknown paths (404).
 *
 * Both run in the engine's lane (api_needs_engine): the model digest the
 * evidence binds may need the engine's first pass, which must not start
 * between another request's tokens.
 */
#include "serve.h"
#include "tls.h"
#include "../cmd_attest.h"
#include "../evidence.h"
#include "../../kernel/attest.h"

#include "../../llm/seal.h"

#define CRED_MAX 2048 /* a TPM credential: ~330 bytes for an RSA 2048 EK (as `session activate`) */

static const char JSON_TYPE[] = "application/json";

void tls_activate_proof(const uint8_t *secret, size_t n, const uint8_t k[32],
			const uint8_t *nonce, size_t nonce_len, uint8_t proof[32])
{
	br_hmac_key_context kc;
	br_hmac_context hc;

	br_hmac_key_init(&kc, &br_sha256_vtable, secret, n);
	br_hmac_init(&hc, &kc, 0);
	br_hmac_update(&hc, TLS_ACTIVATE_LABEL, sizeof TLS_ACTIVATE_LABEL - 1);
	br_hmac_update(&hc, k, 32);
	br_hmac_update(&hc, nonce, nonce_len);
	br_hmac_out(&hc, proof);
	seal_zeroize(&kc, sizeof kc);
	seal_zeroize(&hc, sizeof hc);
}

int tls_activate(struct tls_attest *a, const uint8_t k[32], const uint8_t *cred, size_t n,
		 uint8_t proof[32], char *why, size_t whyn)
{
	uint8_t nonce[64], secret[64];
	size_t nonce_len = a->nonce_len, secret_n = 0;
	bool was = a->pending;

	/* one attempt per attestation, whatever comes of it */
	memcpy(nonce, a->nonce, sizeof nonce);
	a->pending = false;
	if (!was) {
		seal_zeroize(a, sizeof *a);
		plat_snprintf(why, whyn, "no vtpm attestation on this connection waits for a credential "
			      "(POST /v1/attestation first; one activation each)");
		return 409;
	}
	int e = plat_attest_activate(PLAT_ATTEST_VTPM, cred, n, secret, sizeof secret, &secret_n);
	if (e || secret_n != 32) {
		plat_snprintf(why, whyn, "the credential did not open in this TPM: %s",
			      e ? plat_attest_error() : "not a 32-byte secret");
		seal_zeroize(secret, sizeof secret);
		seal_zeroize(a, sizeof *a);
		return 403;
	}
	tls_activate_proof(secret, 32, k, nonce, nonce_len, proof);
	seal_zeroize(secret, sizeof secret);
	a->ready = true; /* the quoting key is in the certified TPM: a release may follow */
	return 200;
}

/* The body as a JSON object in s->nodes; false after answering 400. */
static bool body(struct srv *s, struct srv_conn *c, struct json_doc *d)
{
	char err[128], msg[192];

	*d = (struct json_doc){s->nodes, SRV_NODES, 0, s->store, sizeof s->store, 0, 8, SRV_BODY_MAX};
	int r = json_parse(d, c->req.body, c->req.body_len, err, sizeof err);
	if (r == 0 && d->nodes[0].type == JSON_OBJECT)
		return true;
	plat_snprintf(msg, sizeof msg, "the body is not a JSON object: %s", r ? err : "another value");
	srv_error(s, c, 400, "invalid_request_error", msg);
	return false;
}

static bool tls_only(struct srv *s, struct srv_conn *c)
{
	if (c->tls)
		return true;
	srv_error(s, c, 404, "invalid_request_error", "no such endpoint");
	return false;
}

/* The nonce's hex (1..64 bytes) into out; false after answering 400. */
static bool nonce_of(struct srv *s, struct srv_conn *c, const struct json_node *n, uint8_t *out,
		     size_t *len)
{
	if (!n || n->type != JSON_STRING || n->len < 2 || n->len > 2 * EVIDENCE_NONCE_MAX ||
	    n->len % 2) {
		srv_error(s, c, 400, "invalid_request_error",
			  "'nonce' must be a string of 2 to 128 hex digits (1 to 64 bytes)");
		return false;
	}
	for (size_t i = 0; i < n->len; i += 2) {
		int a = hex_digit(n->str[i]), b = hex_digit(n->str[i + 1]);
		if (a < 0 || b < 0) {
			srv_error(s, c, 400, "invalid_request_error", "'nonce' must be hex digits");
			return false;
		}
		out[i / 2] = (uint8_t)(a << 4 | b);
	}
	*len = n->len / 2;
	return true;
}

/* The provider asked for (vtpm, snp, tdx) or the default; false after an error. */
static bool provider_of(struct srv *s, struct srv_conn *c, const struct json_node *n,
			const char **name, struct plat_attest_info *info)
{
	int kind = -1;
	char msg[192];

	if (n && n->type != JSON_NULL) {
		for (int k = 0; k < PLAT_ATTEST_KINDS && n->type == JSON_STRING; k++)
			if (!plat_attest_info(k, info) && k != PLAT_ATTEST_NONE &&
			    !strcmp(info->name, n->str))
				kind = k;
		if (kind < 0) {
			srv_error(s, c, 400, "invalid_request_error",
				  "'provider' must be \"vtpm\", \"snp\" or \"tdx\"");
			return false;
		}
	} else {
		kind = plat_attest_default();
	}
	if (plat_attest_info(kind, info) || kind == PLAT_ATTEST_NONE || !info->present) {
		plat_snprintf(msg, sizeof msg, "no attestation provider%s%s%s",
			      kind == PLAT_ATTEST_NONE ? "" : ": ",
			      kind == PLAT_ATTEST_NONE ? " in this machine" : info->name,
			      kind == PLAT_ATTEST_NONE ? "" : " is absent");
		srv_error(s, c, 503, "unavailable_error", msg);
		return false;
	}
	*name = info->name;
	return true;
}

void api_attestation(struct srv *s, struct srv_conn *c)
{
	struct tls_attest *a;
	struct evidence_inputs in;
	struct plat_attest_info info;
	struct json_doc d;
	const char *provider = NULL;
	uint8_t rd[64], *buf = NULL;
	char src[96];
	size_t len;

	if (!tls_only(s, c))
		return;
	/* only the latest attestation counts, even one that fails */
	a = &c->tls->att;
	seal_zeroize(a, sizeof *a);
	if (!body(s, c, &d))
		return;
	memset(&in, 0, sizeof in);
	if (!nonce_of(s, c, json_get(&d, &d.nodes[0], "nonce"), in.nonce, &in.nonce_len) ||
	    !provider_of(s, c, json_get(&d, &d.nodes[0], "provider"), &provider, &info))
		return;
	memcpy(in.pubkey, s->tls->k, 32);
	if (shell_attest_bundle(s->sh, "serve: /v1/attestation", provider, &in, &info, &buf, &len,
				rd, src, sizeof src)) {
		srv_error(s, c, 500, "server_error", "the attestation provider failed (the guest's "
			  "console says why)");
		return;
	}
	/* the last attestation on this connection is the one activate answers
	 * and a release (api_keys.c) is made against */
	a->pending = info.kind == PLAT_ATTEST_VTPM;
	a->ready = !a->pending;
	a->kind = info.kind;
	a->simulated = info.simulated;
	memcpy(a->nonce, in.nonce, in.nonce_len);
	a->nonce_len = in.nonce_len;
	memcpy(a->model, in.model_digest, 32);
	size_t cap = 4 * ((len + 2) / 3) + 96;
	char *out = plat_alloc(cap, 64);
	struct json_out o;
	if (!out) {
		plat_free(buf, EVIDENCE_MAX);
		srv_error(s, c, 503, "server_error", "no memory for the evidence's base64");
		return;
	}
	json_out_init(&o, out, cap);
	json_out_lit(&o, "{\"provider\":");
	json_out_cstr(&o, info.name);
	json_out_lit(&o, ",\"evidence\":\"");
	long m = b64_encode(buf, len, out + o.len, cap - o.len);
	plat_free(buf, EVIDENCE_MAX);
	if (m >= 0)
		o.len += (size_t)m;
	json_out_lit(&o, "\",\"activate\":");
	if (a->pending)
		json_out_lit(&o, "true}");
	else
		json_out_lit(&o, "false}");
	if (m < 0 || o.overflow)
		srv_error(s, c, 500, "server_error", "the evidence did not fit its answer");
	else
		srv_respond(s, c, 200, JSON_TYPE, out, o.len);
	plat_free(out, cap);
}

void api_attestation_activate(struct srv *s, struct srv_conn *c)
{
	static uint8_t cred[CRED_MAX];
	const struct json_node *n;
	struct json_doc d;
	uint8_t proof[32];
	char why[192], hex[65], res[96];
	long k = -1;

	if (!tls_only(s, c))
		return;
	if (!c->tls->att.pending) {
		tls_activate(&c->tls->att, s->tls->k, NULL, 0, proof, why, sizeof why);
		srv_error(s, c, 409, "invalid_request_error", why);
		return;
	}
	if (body(s, c, &d)) {
		n = json_get(&d, &d.nodes[0], "credential");
		if (n && n->type == JSON_STRING)
			k = b64_decode(n->str, n->len, cred, sizeof cred);
		if (k < 0)
			srv_error(s, c, 400, "invalid_request_error", "'credential' must be base64 of "
				  "a TPM credential (RFC 4648, padded, at most 2048 bytes)");
	}
	if (k < 0) {
		seal_zeroize(&c->tls->att, sizeof c->tls->att); /* the attempt is spent */
		return;
	}
	int st = tls_activate(&c->tls->att, s->tls->k, cred, (size_t)k, proof, why, sizeof why);
	seal_zeroize(cred, sizeof cred);
	if (st != 200) {
		srv_error(s, c, st, st == 403 ? "permission_error" : "invalid_request_error", why);
		return;
	}
	int r = plat_snprintf(res, sizeof res, "{\"proof\":\"%s\"}", seal_hex(proof, 32, hex));
	srv_respond(s, c, 200, JSON_TYPE, res, (size_t)r);
}
