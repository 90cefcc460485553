/*
 * shell/http/api_keys.c — POST /v1/keys (docs/tls.md, "Releasing a sealed
 * model's key"): a sealed model's key sent by a client over the very TLS
 * connection it has just attested (api_attest.c), optionally followed by
 * `load` of the disk it opens. TLS connections only: on a plain one it is
 * an unknown path (404).
 *
 * What makes it a release and not a typed key:
 *   - the connection's latest attestation is complete (snp, tdx: answered;
 *     vtpm: its credential activated) and the request names its nonce, so
 *     the key goes to the evidence the client verified and to nothing older;
 *   - one release per attestation: the request spends it, whatever comes;
 *   - the key must open a sealed disk whose plaintext digest is the model
 *     digest that evidence bound (the model the client's --expect-model
 *     named), else nothing changes;
 *   - the release is measured ("llmk key-release <provider>-tls key-id <hex>
 *     release <sha256 hex>") before the key is used, as `unseal --wrapped`
 *     measures its own (attest_unwrap.c).
 * The key belongs to the boot, as a console release does (docs/tls.md says
 * why): it outlives the connection and goes with `unseal --forget`, reboot
 * or poweroff. The request's bytes (the raw body and the parser's copy of
 * its strings) are wiped before the answer, the key zeroized after use, and
 * only its key id is printed.
 *
 * In the engine's lane (api_needs_engine): `load` needs the engine free.
 */
#include "serve.h"
#include "tls.h"
#include "../cmd_seal.h"
#include "../cmd_model.h"
#include "../../kernel/attest.h"

#include "../../llm/codec.h"
#include "../../llm/seal.h"

static const char JSON_TYPE[] = "application/json";

static int why400(char *why, size_t whyn, const char *msg)
{
	plat_snprintf(why, whyn, "%s", msg);
	return 400;
}

int api_keys_parse(struct json_doc *d, const char *body, size_t n, struct tls_release_req *r,
		   char *why, size_t whyn)
{
	static const char *const known[] = {"nonce", "key", "load"};
	const struct json_node *m[3] = {0};
	uint8_t raw[48];
	char err[128];

	memset(r, 0, sizeof *r);
	int e = json_parse(d, body, n, err, sizeof err);
	if (e || d->nodes[0].type != JSON_OBJECT) {
		plat_snprintf(why, whyn, "the body is not a JSON object: %s", e ? err : "another value");
		return 400;
	}
	/* every member known (json_parse refuses a key given twice, so a second
	 * "key" cannot hide behind the first) */
	for (const struct json_node *x = json_first(d, &d->nodes[0]); x; x = json_next(d, x)) {
		size_t k = 0;
		while (k < 3 && strcmp(x->key, known[k]))
			k++;
		if (k == 3) {
			plat_snprintf(why, whyn, "unknown member '%.40s' (a release takes \"nonce\", "
				      "\"key\" and \"load\")", x->key);
			return 400;
		}
		m[k] = x;
	}
	const struct json_node *nn = m[0];
	if (!nn || nn->type != JSON_STRING || nn->len < 2 || nn->len > 2 * sizeof r->nonce ||
	    nn->len % 2)
		return why400(why, whyn, "'nonce' must be the nonce of this connection's attestation: "
			      "2 to 128 hex digits");
	for (size_t i = 0; i < nn->len; i += 2) {
		int a = hex_digit(nn->str[i]), b = hex_digit(nn->str[i + 1]);
		if (a < 0 || b < 0)
			return why400(why, whyn, "'nonce' must be hex digits");
		r->nonce[i / 2] = (uint8_t)(a << 4 | b);
	}
	r->nonce_len = nn->len / 2;
	long k = -1;
	if (m[1] && m[1]->type == JSON_STRING && m[1]->len <= 4 * sizeof raw / 3)
		k = b64_decode(m[1]->str, m[1]->len, raw, sizeof raw);
	if (k == SEAL_KEY_SIZE)
		memcpy(r->key, raw, SEAL_KEY_SIZE);
	seal_zeroize(raw, sizeof raw);
	if (k != SEAL_KEY_SIZE) {
		seal_zeroize(r, sizeof *r);
		return why400(why, whyn, "'key' must be base64 of the 32-byte model key (RFC 4648, "
			      "padded: 44 characters)");
	}
	if (m[2] && m[2]->type != JSON_TRUE && m[2]->type != JSON_FALSE) {
		seal_zeroize(r, sizeof *r);
		return why400(why, whyn, "'load' must be true or false");
	}
	r->load = m[2] && m[2]->type == JSON_TRUE;
	return 0;
}

/* The sealed disk holding the attested model (its header's plaintext
 * digest) that key opens (key id and header tag): its number, or -1. */
static int find_disk(const uint8_t model[32], const uint8_t key[SEAL_KEY_SIZE],
		     const uint8_t id[SEAL_KEY_ID_SIZE], char *why, size_t whyn)
{
	static uint8_t head[SEAL_HEADER_SIZE];
	struct seal_keysrc ks;
	char err[200];

	seal_keysrc_raw(&ks, key, "the key released over TLS", false);
	for (int d = 0; d < plat_disk_count(); d++) {
		struct seal_header h;
		struct plat_disk_info in;
		if (plat_disk_info(d, &in) || in.capacity < sizeof head ||
		    plat_disk_read(d, 0, head, sizeof head) ||
		    seal_header_parse(head, sizeof head, &h, err, sizeof err) ||
		    memcmp(h.plain_sha256, model, 32) || memcmp(h.key_id, id, SEAL_KEY_ID_SIZE))
			continue;
		/* the key id matches: the header's tag must verify under it too */
		struct llm_mem mem;
		struct llm_reader rd;
		struct seal_ctx c;
		llm_mem_init(&mem, 0);
		llm_reader_disk(&rd, d);
		int e = seal_open(&c, &rd, &ks, &mem, err, sizeof err);
		if (!e) {
			seal_close(&c);
			seal_zeroize(&ks, sizeof ks);
			return d;
		}
		plat_snprintf(why, whyn, "disk %d: %s", d, err);
	}
	seal_zeroize(&ks, sizeof ks);
	return -1;
}

/* The release's digest: SHA-256("llmk tls v1 release" || K || nonce || key id). */
static void release_digest(const uint8_t k[32], const struct tls_attest *a,
			   const uint8_t id[SEAL_KEY_ID_SIZE], uint8_t out[32])
{
	br_sha256_context h;

	br_sha256_init(&h);
	br_sha256_update(&h, TLS_RELEASE_LABEL, sizeof TLS_RELEASE_LABEL - 1);
	br_sha256_update(&h, k, 32);
	br_sha256_update(&h, a->nonce, a->nonce_len);
	br_sha256_update(&h, id, SEAL_KEY_ID_SIZE);
	br_sha256_out(&h, out);
}

/* `load N` as the console runs it (measured the same way), without the
 * console's session check: the release just authorized it. */
static int load_disk(struct shell *sh, int disk)
{
	char a0[] = "load", a1[16];
	char *argv[] = {a0, a1, NULL};
	const struct shell_cmd *cmd = shell_find("load");

	plat_snprintf(a1, sizeof a1, "%d", disk);
	return cmd ? cmd->fn(sh, 2, argv) : -LLMK_ENOENT;
}

/* The release itself, on a parsed request r against attestation a:
 * the status, the answer's body in out (200) or why. */
static int release(struct srv *s, const struct tls_attest *a, const struct tls_release_req *r,
		   struct json_out *o, char *why, size_t whyn)
{
	struct shell *sh = s->sh;
	struct engine_info info;
	struct plat_attest_info pi;
	uint8_t id[SEAL_KEY_ID_SIZE], have[SEAL_KEY_ID_SIZE], dg[32];
	char idh[2 * SEAL_KEY_ID_SIZE + 1], hh[65], mh[65], what[160], from[96], note[200];
	char prov[24];

	if (r->nonce_len != a->nonce_len || memcmp(r->nonce, a->nonce, a->nonce_len)) {
		plat_snprintf(why, whyn, "'nonce' is not the nonce of this connection's latest "
			      "attestation (only the latest counts; attest again)");
		return 409;
	}
	seal_key_id(r->key, id);
	seal_hex(id, sizeof id, idh);
	bool same = false;
	if (shell_seal_key_id(sh, have)) {
		if (memcmp(have, id, sizeof id)) {
			plat_snprintf(why, whyn, "a key (id %s) is already in place; a release does not "
				      "replace it (`unseal --forget` at the console first)",
				      seal_hex(have, sizeof have, hh));
			return 409;
		}
		same = true;
	}
	int disk = find_disk(a->model, r->key, id, why, whyn);
	if (disk < 0) {
		if (!why[0])
			plat_snprintf(why, whyn, "the key (id %s) opens no sealed disk holding the "
				      "attested model (sha256 %s)", idh, seal_hex(a->model, 32, mh));
		return 403;
	}
	bool loaded = sh->engine && engine_get_info(sh->engine, &info) == 0 && !info.vocab_only;
	if (r->load && loaded && !(info.sealed && info.disk == disk)) {
		plat_snprintf(why, whyn, "'load': disk %d holds a model already (`unload` at the "
			      "console first)", info.disk);
		return 409;
	}
	if (plat_attest_info(a->kind, &pi)) {
		plat_snprintf(why, whyn, "the attestation's provider is unknown");
		return 500;
	}
	plat_snprintf(prov, sizeof prov, "%s%s", pi.name, a->simulated ? ", simulated" : "");
	if (!same) {
		/* measured before the key is used, as every release is */
		release_digest(s->tls->k, a, id, dg);
		plat_snprintf(what, sizeof what, "llmk key-release %s-tls key-id %s release %s", pi.name,
			      idh, seal_hex(dg, 32, hh));
		if (plat_attest_extend(what, dg)) {
			plat_printf("error: serve: /v1/keys: measuring the release: %s\n",
				    plat_attest_error());
			plat_snprintf(why, whyn, "measuring the release failed (the guest's console says "
				      "why); nothing changed");
			return 500;
		}
		plat_snprintf(from, sizeof from, "POST /v1/keys over attested TLS (%s)", prov);
		plat_snprintf(note, sizeof note, "released over attested TLS (%s), key id %s; kept "
			      "until reboot or `unseal --forget`", prov, idh);
		if (shell_seal_set_key(sh, r->key, from, note, false)) {
			plat_snprintf(why, whyn, "no memory for the key");
			return 503;
		}
		plat_printf("serve: key id %s released over attested TLS (%s) for disk %d\n", idh, prov,
			    disk);
	}
	bool did_load = false;
	if (r->load && !loaded) {
		if (load_disk(sh, disk)) {
			plat_snprintf(why, whyn, "the key (id %s) is in place, but loading disk %d failed "
				      "(the guest's console says why)", idh, disk);
			return 500;
		}
		did_load = true;
	}
	loaded = sh->engine && engine_get_info(sh->engine, &info) == 0 && !info.vocab_only &&
		 info.sealed && info.disk == disk;
	json_out_lit(o, "{\"key_id\":");
	json_out_cstr(o, idh);
	json_out_lit(o, ",\"released\":");
	json_out_cstr(o, same ? "already in place" : "now");
	json_out_lit(o, ",\"source\":");
	json_out_cstr(o, shell_seal_key_note(sh));
	json_out_lit(o, ",\"disk\":");
	json_out_i64(o, disk);
	json_out_lit(o, ",\"model\":");
	json_out_cstr(o, seal_hex(a->model, 32, mh));
	json_out_lit(o, ",\"loaded\":");
	if (loaded)
		json_out_lit(o, "true");
	else
		json_out_lit(o, "false");
	json_out_lit(o, ",\"loaded_now\":");
	if (did_load)
		json_out_lit(o, "true}");
	else
		json_out_lit(o, "false}");
	return 200;
}

void api_keys(struct srv *s, struct srv_conn *c)
{
	struct tls_release_req r;
	struct tls_attest a;
	struct json_doc d;
	struct json_out o;
	char why[240];
	int st;

	if (!c->tls) { /* (api_handle routes it on TLS only) */
		srv_error(s, c, 404, "invalid_request_error", "no such endpoint");
		return;
	}
	/* one release per attestation, whatever comes of it */
	a = c->tls->att;
	seal_zeroize(&c->tls->att, sizeof c->tls->att);
	why[0] = 0;
	d = (struct json_doc){s->nodes, SRV_NODES, 0, s->store, sizeof s->store, 0, 8, SRV_BODY_MAX};
	if (!a.ready) {
		plat_snprintf(why, sizeof why, "no completed attestation on this connection (POST "
			      "/v1/attestation, and for vtpm /v1/attestation/activate, first; one "
			      "release each)");
		st = 409;
	} else {
		st = api_keys_parse(&d, c->req.body, c->req.body_len, &r, why, sizeof why);
	}
	/* the key's bytes go from the request and the parser's copy now */
	seal_zeroize((void *)c->req.body, c->req.body_len);
	seal_zeroize(s->store, sizeof s->store);
	if (st == 0) {
		json_out_init(&o, s->out, sizeof s->out);
		st = release(s, &a, &r, &o, why, sizeof why);
		seal_zeroize(&r, sizeof r);
	}
	seal_zeroize(&a, sizeof a);
	/* The record that carried the key may still sit decrypted in the TLS
	 * engine's buffer: the connection ends after the answer, and its close
	 * wipes the engine (tls_close). */
	c->req.keep_alive = false;
	if (st == 200 && !o.overflow)
		srv_respond(s, c, 200, JSON_TYPE, s->out, o.len);
	else
		srv_error(s, c, st == 200 ? 500 : st,
			  st == 403 ? "permission_error" : st >= 500 ? "server_error" :
			  "invalid_request_error", st == 200 ? "the answer did not fit" : why);
}
