/*
 * drivers/tpm2.c — TPM 2.0 commands (TCG TPM 2.0 Library rev 1.59, Part 2
 * structures, Part 3 commands), marshalled big-endian over the caller's
 * transport. See tpm2.h for the contract.
 *
 * A command is built in t->cmd by a writer that never writes past the
 * buffer (it records the overflow instead); the response is read by a
 * reader that never reads past what arrived (it records the first field
 * that did not fit). Part 1 §18: the response header (tag, size, code) is
 * checked before anything else; with TPM_ST_SESSIONS the handles come
 * first, then parameterSize bounds the parameters, then the session area,
 * which is not read (password and policy sessions return nothing we use).
 */
#include "tpm2.h"
#include "tpm2_marshal.h"

/* Part 2 §6.9 TPM_ST */
#define ST_NO_SESSIONS 0x8001
#define ST_SESSIONS 0x8002

/* Part 2 §6.5.2 TPM_CC */
enum {
	CC_PCR_RESET = 0x13D, CC_CREATE_PRIMARY = 0x131, CC_STARTUP = 0x144,
	CC_ACTIVATE_CREDENTIAL = 0x147, CC_NV_READ = 0x14E, CC_POLICY_SECRET = 0x151,
	CC_QUOTE = 0x158, CC_FLUSH_CONTEXT = 0x165, CC_NV_READ_PUBLIC = 0x169,
	CC_READ_PUBLIC = 0x173, CC_START_AUTH_SESSION = 0x176, CC_GET_CAPABILITY = 0x17A,
	CC_PCR_READ = 0x17E, CC_PCR_EXTEND = 0x182,
};

/* Part 2 §6.12 TPM_CAP */
#define CAP_HANDLES 1
#define CAP_TPM_PROPERTIES 6

/* Part 2 §8.4 TPMA_SESSION */
#define SESSION_CONTINUE 0x01

/* Part 2 §13.4 TPMA_NV read bits */
#define NV_PPREAD (1u << 16)
#define NV_OWNERREAD (1u << 17)
#define NV_AUTHREAD (1u << 18)
#define NV_WRITTEN (1u << 29)

#define RETRIES 20
#define RETRY_NS 10000000ull /* Part 1 §18.4: TPM_RC_RETRY and friends ask to resend */

void tpm2_init(struct tpm2 *t, tpm2_xfer_fn xfer, void *ctx)
{
	memset(t, 0, sizeof *t);
	t->xfer = xfer;
	t->ctx = ctx;
}

/* ---- one command ---- */
static void cmd_begin(struct tpm2 *t, struct wr *w, bool sessions, uint32_t cc)
{
	w->b = t->cmd;
	w->cap = sizeof t->cmd;
	w->n = 0;
	w->over = false;
	w_u16(w, sessions ? ST_SESSIONS : ST_NO_SESSIONS);
	w_u32(w, 0); /* commandSize, set when sent */
	w_u32(w, cc);
}

/* Part 1 §18.6 authorization area: authorizationSize, then per session
 * TPMS_AUTH_COMMAND: handle, empty nonceCaller, attributes, empty hmac
 * (the empty password; for a policy session without PolicyAuthValue or
 * PolicyPassword, no HMAC either). */
static void w_auths(struct wr *w, const uint32_t *handles, const uint8_t *attrs, int n)
{
	w_u32(w, 9u * (uint32_t)n);
	for (int i = 0; i < n; i++) {
		w_u32(w, handles[i]);
		w_u16(w, 0);
		w_u8(w, attrs[i]);
		w_u16(w, 0);
	}
}

static void w_pw(struct wr *w)
{
	static const uint32_t h = TPM2_RS_PW;
	static const uint8_t a = SESSION_CONTINUE;
	w_auths(w, &h, &a, 1);
}

static bool retryable(uint32_t rc)
{
	return rc == 0x908 /* YIELDED */ || rc == 0x90A /* TESTING */ || rc == TPM2_RC_RETRY;
}

static int rc_error(uint32_t rc)
{
	if (!(rc & 0x080))
		return -LLMK_EIO;
	switch (rc & 0x3f) {
	case 0x00E: /* AUTH_FAIL */
	case 0x01B: /* SIGNATURE */
	case 0x01D: /* POLICY_FAIL */
	case 0x01F: /* INTEGRITY */
	case 0x022: /* BAD_AUTH */
		return -LLMK_EAUTH;
	}
	return -LLMK_EIO;
}

/*
 * Send the command in w, check the response's header and return its
 * parameters in *params (after n_handles response handles, stored in
 * handles). name names the command in errors.
 */
static int exec(struct tpm2 *t, struct wr *w, const char *name, int n_handles,
		uint32_t *handles, struct rd *params)
{
	char why[160], rcs[64];
	size_t n;
	int e;

	t->rc = 0;
	t->err[0] = 0;
	if (w->over) {
		plat_snprintf(t->err, sizeof t->err, "%s: command larger than %zu bytes", name,
			      sizeof t->cmd);
		return -LLMK_ERANGE;
	}
	t->cmd[2] = (uint8_t)(w->n >> 24);
	t->cmd[3] = (uint8_t)(w->n >> 16);
	t->cmd[4] = (uint8_t)(w->n >> 8);
	t->cmd[5] = (uint8_t)w->n;
	bool sessions = t->cmd[1] == (ST_SESSIONS & 0xff);
	for (int tries = 0;; tries++) {
		why[0] = 0;
		n = 0;
		if ((e = t->xfer(t->ctx, t->cmd, w->n, t->rsp, sizeof t->rsp, &n, why, sizeof why))) {
			plat_snprintf(t->err, sizeof t->err, "%s: %s", name,
				      why[0] ? why : plat_strerror(e));
			return e;
		}
		t->rsp_len = n;
		/* Part 1 §18.8: tag, responseSize, responseCode */
		if (n < 10) {
			plat_snprintf(t->err, sizeof t->err, "%s: response of %zu bytes, shorter than "
				      "its 10-byte header", name, n);
			return -LLMK_EIO;
		}
		uint16_t tag = (uint16_t)(t->rsp[0] << 8 | t->rsp[1]);
		uint32_t size = (uint32_t)t->rsp[2] << 24 | (uint32_t)t->rsp[3] << 16 |
				(uint32_t)t->rsp[4] << 8 | t->rsp[5];
		uint32_t rc = (uint32_t)t->rsp[6] << 24 | (uint32_t)t->rsp[7] << 16 |
			      (uint32_t)t->rsp[8] << 8 | t->rsp[9];
		if (size != n) {
			plat_snprintf(t->err, sizeof t->err, "%s: responseSize %u but %zu bytes arrived",
				      name, size, n);
			return -LLMK_EIO;
		}
		if (tag != ST_NO_SESSIONS && tag != ST_SESSIONS) {
			plat_snprintf(t->err, sizeof t->err, "%s: response tag %#x", name, tag);
			return -LLMK_EIO;
		}
		t->rc = rc;
		if (rc && retryable(rc) && tries < RETRIES) {
			for (uint64_t t0 = plat_time_ns(); plat_time_ns() - t0 < RETRY_NS;)
				;
			continue;
		}
		if (rc) {
			plat_snprintf(t->err, sizeof t->err, "%s: %s", name, tpm2_rc_str(rc, rcs, sizeof rcs));
			return rc_error(rc);
		}
		/* Part 1 §18.8: a successful response has the command's tag */
		if (tag != (sessions ? ST_SESSIONS : ST_NO_SESSIONS)) {
			plat_snprintf(t->err, sizeof t->err, "%s: response tag %#x for a %s command", name,
				      tag, sessions ? "session" : "sessionless");
			return -LLMK_EIO;
		}
		break;
	}
	struct rd r = {t->rsp, n, 10, "handles", NULL};
	for (int i = 0; i < n_handles; i++)
		handles[i] = r_u32(&r);
	size_t end = n;
	if (sessions) {
		r.field = "parameterSize";
		uint32_t ps = r_u32(&r);
		if (!r.failed && ps > n - r.off) {
			plat_snprintf(t->err, sizeof t->err, "%s: parameterSize %u past the response's "
				      "end (%zu bytes left)", name, ps, n - r.off);
			return -LLMK_EIO;
		}
		end = r.off + ps;
	}
	if (r.failed) {
		plat_snprintf(t->err, sizeof t->err, "%s: response of %zu bytes ends inside %s", name,
			      n, r.failed);
		return -LLMK_EIO;
	}
	params->b = t->rsp;
	params->n = end;
	params->off = r.off;
	params->field = "parameters";
	params->failed = NULL;
	return 0;
}

/* After the parameters were read: all of them, and nothing cut short. */
static int done(struct tpm2 *t, struct rd *r, const char *name)
{
	if (r->failed) {
		plat_snprintf(t->err, sizeof t->err, "%s: response parameters end inside %s (%zu "
			      "bytes)", name, r->failed, r->n);
		return -LLMK_EIO;
	}
	if (r->off != r->n) {
		plat_snprintf(t->err, sizeof t->err, "%s: %zu unexpected bytes after the response "
			      "parameters", name, r->n - r->off);
		return -LLMK_EIO;
	}
	return 0;
}

/* ---- Part 3 §9.3 TPM2_Startup(TPM_SU_CLEAR) ---- */
int tpm2_startup(struct tpm2 *t)
{
	struct wr w;
	struct rd r;

	cmd_begin(t, &w, false, CC_STARTUP);
	w_u16(&w, 0);
	int e = exec(t, &w, "TPM2_Startup", 0, NULL, &r);
	if (e && t->rc == TPM2_RC_INITIALIZE) { /* already started */
		t->err[0] = 0;
		return 0;
	}
	return e ? e : done(t, &r, "TPM2_Startup");
}

/* ---- Part 3 §30.2 TPM2_GetCapability ---- */
static int get_capability(struct tpm2 *t, uint32_t cap, uint32_t prop, uint32_t count,
			  struct rd *r)
{
	struct wr w;

	cmd_begin(t, &w, false, CC_GET_CAPABILITY);
	w_u32(&w, cap);
	w_u32(&w, prop);
	w_u32(&w, count);
	int e = exec(t, &w, "TPM2_GetCapability", 0, NULL, r);
	if (e)
		return e;
	r->field = "moreData";
	r_u8(r);
	r->field = "capability";
	if (r_u32(r) != cap && !r->failed) {
		plat_snprintf(t->err, sizeof t->err, "TPM2_GetCapability: asked for capability %u, "
			      "got another", cap);
		return -LLMK_EIO;
	}
	return 0;
}

int tpm2_get_property(struct tpm2 *t, uint32_t prop, uint32_t *val)
{
	struct rd r;
	int e = get_capability(t, CAP_TPM_PROPERTIES, prop, 1, &r);
	if (e)
		return e;
	/* Part 2 §10.9.8 TPML_TAGGED_TPM_PROPERTY: count, then (property, value) */
	r.field = "TPML_TAGGED_TPM_PROPERTY";
	uint32_t n = r_u32(&r);
	bool found = false;
	for (uint32_t i = 0; i < n && !r.failed; i++) {
		uint32_t p = r_u32(&r), v = r_u32(&r);
		if (p == prop && !r.failed) {
			*val = v;
			found = true;
		}
	}
	if ((e = done(t, &r, "TPM2_GetCapability")))
		return e;
	if (!found) {
		plat_snprintf(t->err, sizeof t->err, "TPM2_GetCapability: the TPM does not report "
			      "property %#x", prop);
		return -LLMK_ENOENT;
	}
	return 0;
}

int tpm2_get_handles(struct tpm2 *t, uint32_t first, uint32_t *out, int max, int *n)
{
	struct rd r;
	int e = get_capability(t, CAP_HANDLES, first, (uint32_t)max, &r);
	if (e)
		return e;
	r.field = "TPML_HANDLE";
	uint32_t cnt = r_u32(&r);
	if (!r.failed && cnt > (uint32_t)max) {
		plat_snprintf(t->err, sizeof t->err, "TPM2_GetCapability: %u handles for %d asked",
			      cnt, max);
		return -LLMK_EIO;
	}
	for (uint32_t i = 0; i < cnt && !r.failed; i++)
		out[i] = r_u32(&r);
	*n = (int)cnt;
	return done(t, &r, "TPM2_GetCapability");
}

/* ---- Part 3 §22.4 TPM2_PCR_Read ---- */

/* Read a TPML_PCR_SELECTION; the SHA-256 bank's mask (other banks must be empty). */
static uint32_t r_pcr_sel(struct rd *r, bool *bad)
{
	uint32_t mask = 0, cnt = r_u32(r);
	if (cnt > 8)
		*bad = true;
	for (uint32_t i = 0; i < cnt && !r->failed && !*bad; i++) {
		uint16_t hash = r_u16(r);
		uint8_t sz = r_u8(r);
		const uint8_t *p;
		if (sz > 4 || !r_take(r, sz, &p)) {
			*bad = true;
			break;
		}
		uint32_t m = 0;
		for (int k = 0; k < sz; k++)
			m |= (uint32_t)p[k] << (8 * k);
		if (hash == TPM2_ALG_SHA256)
			mask |= m;
		else if (m)
			*bad = true;
	}
	return mask;
}

static int pcr_read_once(struct tpm2 *t, uint32_t want, uint32_t *got, uint32_t *counter,
			 uint8_t out[TPM2_PCRS][32])
{
	struct wr w;
	struct rd r;
	bool bad = false;

	cmd_begin(t, &w, false, CC_PCR_READ);
	w_pcr_sel(&w, want);
	int e = exec(t, &w, "TPM2_PCR_Read", 0, NULL, &r);
	if (e)
		return e;
	r.field = "pcrUpdateCounter";
	*counter = r_u32(&r);
	r.field = "pcrSelectionOut";
	uint32_t m = r_pcr_sel(&r, &bad);
	r.field = "pcrValues";
	uint32_t cnt = r_u32(&r);
	if (!r.failed && (bad || (m & ~want) || cnt != (uint32_t)__builtin_popcount(m) ||
			  (m >> TPM2_PCRS))) {
		plat_snprintf(t->err, sizeof t->err, "TPM2_PCR_Read: asked for PCRs %#x, got "
			      "selection %#x with %u digests", want, m, cnt);
		return -LLMK_EIO;
	}
	for (int i = 0; i < TPM2_PCRS && !r.failed; i++) {
		if (!(m & (1u << i)))
			continue;
		uint16_t len;
		const uint8_t *d = r_2b(&r, &len);
		if (d && len != 32) {
			plat_snprintf(t->err, sizeof t->err, "TPM2_PCR_Read: PCR %d's SHA-256 digest "
				      "has %u bytes", i, len);
			return -LLMK_EIO;
		}
		if (d)
			memcpy(out[i], d, 32);
	}
	*got = m;
	return done(t, &r, "TPM2_PCR_Read");
}

int tpm2_pcr_read(struct tpm2 *t, uint32_t mask, uint8_t out[TPM2_PCRS][32])
{
	mask &= (1u << TPM2_PCRS) - 1;
	/* Part 3 §22.4.1: a TPM returns as many as fit (8 digests here), with
	 * the update counter; if it moves between reads, start again. */
	for (int attempt = 0; attempt < 3; attempt++) {
		uint32_t left = mask, c0 = 0;
		bool moved = false;
		for (int round = 0; left; round++) {
			uint32_t got = 0, c;
			int e = pcr_read_once(t, left, &got, &c, out);
			if (e)
				return e;
			if (!got) {
				plat_snprintf(t->err, sizeof t->err, "TPM2_PCR_Read: the TPM returned "
					      "none of PCRs %#x (is the SHA-256 bank active?)", left);
				return -LLMK_ENOTSUP;
			}
			if (round == 0)
				c0 = c;
			else if (c != c0)
				moved = true;
			left &= ~got;
		}
		if (!moved)
			return 0;
	}
	plat_snprintf(t->err, sizeof t->err, "TPM2_PCR_Read: PCRs kept changing during the read");
	return -LLMK_EBUSY;
}

/* ---- Part 3 §22.2 TPM2_PCR_Extend, §22.8 TPM2_PCR_Reset ---- */
int tpm2_pcr_extend(struct tpm2 *t, uint32_t pcr, const uint8_t digest[32])
{
	struct wr w;
	struct rd r;

	cmd_begin(t, &w, true, CC_PCR_EXTEND);
	w_u32(&w, pcr);
	w_pw(&w);
	w_u32(&w, 1); /* TPML_DIGEST_VALUES: one TPMT_HA */
	w_u16(&w, TPM2_ALG_SHA256);
	w_bytes(&w, digest, 32);
	int e = exec(t, &w, "TPM2_PCR_Extend", 0, NULL, &r);
	return e ? e : done(t, &r, "TPM2_PCR_Extend");
}

int tpm2_pcr_reset(struct tpm2 *t, uint32_t pcr)
{
	struct wr w;
	struct rd r;

	cmd_begin(t, &w, true, CC_PCR_RESET);
	w_u32(&w, pcr);
	w_pw(&w);
	int e = exec(t, &w, "TPM2_PCR_Reset", 0, NULL, &r);
	return e ? e : done(t, &r, "TPM2_PCR_Reset");
}

/* A TPM2B_PUBLIC from a response into out. */
static int r_object(struct tpm2 *t, struct rd *r, const char *name, struct tpm2_object *out)
{
	uint16_t len;
	r->field = "outPublic";
	const uint8_t *pub = r_2b(r, &len);
	if (pub && len > sizeof out->pub) {
		plat_snprintf(t->err, sizeof t->err, "%s: public area of %u bytes (at most %zu)", name,
			      len, sizeof out->pub);
		return -LLMK_ERANGE;
	}
	if (pub) {
		memcpy(out->pub, pub, len);
		out->pub_len = len;
	}
	return 0;
}

static int r_name(struct tpm2 *t, struct rd *r, const char *name, struct tpm2_object *out)
{
	uint16_t len;
	r->field = "name";
	const uint8_t *nm = r_2b(r, &len);
	if (nm && len > sizeof out->name) {
		plat_snprintf(t->err, sizeof t->err, "%s: name of %u bytes", name, len);
		return -LLMK_EIO;
	}
	if (nm) {
		memcpy(out->name, nm, len);
		out->name_len = len;
	}
	return 0;
}

/* ---- Part 3 §24.1 TPM2_CreatePrimary ---- */
int tpm2_create_primary(struct tpm2 *t, uint32_t hierarchy, const uint8_t *tmpl, size_t n,
			struct tpm2_object *out)
{
	static const char name[] = "TPM2_CreatePrimary";
	struct wr w;
	struct rd r;
	uint16_t len;

	memset(out, 0, sizeof *out);
	cmd_begin(t, &w, true, CC_CREATE_PRIMARY);
	w_u32(&w, hierarchy);
	w_pw(&w);
	w_u16(&w, 4); /* TPM2B_SENSITIVE_CREATE: empty userAuth, empty data */
	w_u16(&w, 0);
	w_u16(&w, 0);
	w_2b(&w, tmpl, n);
	w_2b(&w, NULL, 0); /* outsideInfo */
	w_u32(&w, 0);      /* creationPCR: none */
	int e = exec(t, &w, name, 1, &out->handle, &r);
	if (e)
		return e;
	if ((e = r_object(t, &r, name, out)))
		goto flush;
	r.field = "creationData";
	r_2b(&r, &len);
	r.field = "creationHash";
	r_2b(&r, &len);
	r.field = "creationTicket";
	r_u16(&r);
	r_u32(&r);
	r_2b(&r, &len);
	if ((e = r_name(t, &r, name, out)) || (e = done(t, &r, name)))
		goto flush;
	return 0;
flush:;
	/* the object exists in the TPM: do not leak its slot */
	char keep[sizeof t->err];
	memcpy(keep, t->err, sizeof keep);
	tpm2_flush(t, out->handle);
	memcpy(t->err, keep, sizeof keep);
	return e;
}

/* ---- Part 3 §12.4 TPM2_ReadPublic ---- */
int tpm2_read_public(struct tpm2 *t, uint32_t handle, struct tpm2_object *out)
{
	static const char name[] = "TPM2_ReadPublic";
	struct wr w;
	struct rd r;
	uint16_t len;

	memset(out, 0, sizeof *out);
	out->handle = handle;
	cmd_begin(t, &w, false, CC_READ_PUBLIC);
	w_u32(&w, handle);
	int e = exec(t, &w, name, 0, NULL, &r);
	if (e || (e = r_object(t, &r, name, out)) || (e = r_name(t, &r, name, out)))
		return e;
	r.field = "qualifiedName";
	r_2b(&r, &len);
	return done(t, &r, name);
}

/* ---- Part 3 §18.4 TPM2_Quote ---- */
int tpm2_quote(struct tpm2 *t, uint32_t key, const uint8_t *qdata, size_t qlen, uint32_t mask,
	       uint8_t *attest, size_t acap, size_t *alen, uint8_t *sig, size_t scap, size_t *slen)
{
	static const char name[] = "TPM2_Quote";
	struct wr w;
	struct rd r;
	uint16_t len;

	cmd_begin(t, &w, true, CC_QUOTE);
	w_u32(&w, key);
	w_pw(&w);
	w_2b(&w, qdata, qlen);
	w_u16(&w, TPM2_ALG_NULL); /* inScheme: the key's own (ECDSA SHA-256) */
	w_pcr_sel(&w, mask);
	int e = exec(t, &w, name, 0, NULL, &r);
	if (e)
		return e;
	r.field = "quoted";
	const uint8_t *q = r_2b(&r, &len);
	if (q && len > acap) {
		plat_snprintf(t->err, sizeof t->err, "%s: TPMS_ATTEST of %u bytes (room for %zu)", name,
			      len, acap);
		return -LLMK_ERANGE;
	}
	if (q) {
		memcpy(attest, q, len);
		*alen = len;
	}
	/* Part 2 §11.3.4 TPMT_SIGNATURE: sigAlg, then for ECDSA hash, r, s;
	 * for RSASSA/RSAPSS hash, sig. Parsed to find its end. */
	size_t s0 = r.off;
	r.field = "signature";
	uint16_t alg = r_u16(&r);
	r_u16(&r);
	if (alg == TPM2_ALG_ECDSA) {
		r_2b(&r, &len);
		r_2b(&r, &len);
	} else if (alg == TPM2_ALG_RSASSA || alg == 0x0016 /* RSAPSS */) {
		r_2b(&r, &len);
	} else if (!r.failed) {
		plat_snprintf(t->err, sizeof t->err, "%s: signature algorithm %#x", name, alg);
		return -LLMK_ENOTSUP;
	}
	if ((e = done(t, &r, name)))
		return e;
	if (r.off - s0 > scap) {
		plat_snprintf(t->err, sizeof t->err, "%s: TPMT_SIGNATURE of %zu bytes (room for %zu)",
			      name, r.off - s0, scap);
		return -LLMK_ERANGE;
	}
	memcpy(sig, t->rsp + s0, r.off - s0);
	*slen = r.off - s0;
	return 0;
}

/* ---- Part 3 §31.6 TPM2_NV_ReadPublic, §31.13 TPM2_NV_Read ---- */
int tpm2_nv_read_public(struct tpm2 *t, uint32_t index, struct tpm2_nv_public *out)
{
	static const char name[] = "TPM2_NV_ReadPublic";
	struct wr w;
	struct rd r;
	uint16_t len;

	cmd_begin(t, &w, false, CC_NV_READ_PUBLIC);
	w_u32(&w, index);
	int e = exec(t, &w, name, 0, NULL, &r);
	if (e) {
		/* format 1 TPM_RC_HANDLE: no such index */
		if ((t->rc & 0xbf) == TPM2_RC_HANDLE)
			return -LLMK_ENOENT;
		return e;
	}
	/* Part 2 §13.5 TPMS_NV_PUBLIC inside a TPM2B_NV_PUBLIC */
	r.field = "nvPublic";
	uint16_t size = r_u16(&r);
	size_t start = r.off;
	out->index = r_u32(&r);
	out->name_alg = r_u16(&r);
	out->attrs = r_u32(&r);
	r_2b(&r, &len);
	out->size = r_u16(&r);
	if (!r.failed && r.off - start != size) {
		plat_snprintf(t->err, sizeof t->err, "%s: TPM2B_NV_PUBLIC says %u bytes, holds %zu",
			      name, size, r.off - start);
		return -LLMK_EIO;
	}
	r.field = "nvName";
	r_2b(&r, &len);
	if ((e = done(t, &r, name)))
		return e;
	if (out->index != index) {
		plat_snprintf(t->err, sizeof t->err, "%s: asked for %#x, got %#x", name, index,
			      out->index);
		return -LLMK_EIO;
	}
	return 0;
}

int tpm2_nv_read(struct tpm2 *t, uint32_t index, uint8_t *out, size_t cap, size_t *len)
{
	static const char name[] = "TPM2_NV_Read";
	struct tpm2_nv_public pub;
	uint32_t chunk = 0, auth;
	int e;

	if ((e = tpm2_nv_read_public(t, index, &pub)))
		return e;
	if (!(pub.attrs & NV_WRITTEN)) {
		plat_snprintf(t->err, sizeof t->err, "%s: NV index %#x was never written", name, index);
		return -LLMK_ENOENT;
	}
	if (pub.size > cap) {
		plat_snprintf(t->err, sizeof t->err, "%s: NV index %#x holds %u bytes (room for %zu)",
			      name, index, pub.size, cap);
		return -LLMK_ERANGE;
	}
	/* Part 2 §13.4: which authorization may read it (all empty here) */
	if (pub.attrs & NV_AUTHREAD)
		auth = index;
	else if (pub.attrs & NV_OWNERREAD)
		auth = TPM2_RH_OWNER;
	else if (pub.attrs & NV_PPREAD)
		auth = TPM2_RH_PLATFORM;
	else {
		plat_snprintf(t->err, sizeof t->err, "%s: NV index %#x (attributes %#x) allows no "
			      "password read", name, index, pub.attrs);
		return -LLMK_ENOTSUP;
	}
	if (tpm2_get_property(t, TPM2_PT_NV_BUFFER_MAX, &chunk) || chunk == 0)
		chunk = 512;
	if (chunk > TPM2_BUF - 64)
		chunk = TPM2_BUF - 64;
	for (uint32_t off = 0; off < pub.size;) {
		uint32_t k = pub.size - off < chunk ? pub.size - off : chunk;
		struct wr w;
		struct rd r;
		uint16_t got;

		cmd_begin(t, &w, true, CC_NV_READ);
		w_u32(&w, auth);
		w_u32(&w, index);
		w_pw(&w);
		w_u16(&w, (uint16_t)k);
		w_u16(&w, (uint16_t)off);
		if ((e = exec(t, &w, name, 0, NULL, &r)))
			return e;
		r.field = "data";
		const uint8_t *d = r_2b(&r, &got);
		if ((e = done(t, &r, name)))
			return e;
		if (got != k) {
			plat_snprintf(t->err, sizeof t->err, "%s: asked for %u bytes at %u, got %u", name,
				      k, off, got);
			return -LLMK_EIO;
		}
		memcpy(out + off, d, k);
		off += k;
	}
	*len = pub.size;
	return 0;
}

/* ---- Part 3 §28.4 TPM2_FlushContext ---- */
int tpm2_flush(struct tpm2 *t, uint32_t handle)
{
	struct wr w;
	struct rd r;

	cmd_begin(t, &w, false, CC_FLUSH_CONTEXT);
	w_u32(&w, handle);
	int e = exec(t, &w, "TPM2_FlushContext", 0, NULL, &r);
	return e ? e : done(t, &r, "TPM2_FlushContext");
}

/* ---- Part 3 §11.1 TPM2_StartAuthSession ---- */
int tpm2_start_policy_session(struct tpm2 *t, uint32_t *session)
{
	static const char name[] = "TPM2_StartAuthSession";
	uint8_t nonce[32];
	struct wr w;
	struct rd r;
	uint16_t len;

	/* §11.1.1: nonceCaller of 16 bytes up to the hash's size */
	if (plat_entropy(nonce, sizeof nonce)) {
		plat_snprintf(t->err, sizeof t->err, "%s: no entropy for nonceCaller", name);
		return -LLMK_EIO;
	}
	cmd_begin(t, &w, false, CC_START_AUTH_SESSION);
	w_u32(&w, TPM2_RH_NULL); /* tpmKey: unsalted */
	w_u32(&w, TPM2_RH_NULL); /* bind: unbound */
	w_2b(&w, nonce, sizeof nonce);
	w_2b(&w, NULL, 0);        /* encryptedSalt */
	w_u8(&w, 1);              /* TPM_SE_POLICY */
	w_u16(&w, TPM2_ALG_NULL); /* symmetric: no parameter encryption */
	w_u16(&w, TPM2_ALG_SHA256);
	int e = exec(t, &w, name, 1, session, &r);
	if (e)
		return e;
	r.field = "nonceTPM";
	r_2b(&r, &len);
	if ((e = done(t, &r, name))) {
		tpm2_flush(t, *session);
		return e;
	}
	return 0;
}

/* ---- Part 3 §23.4 TPM2_PolicySecret ---- */
int tpm2_policy_secret(struct tpm2 *t, uint32_t auth, uint32_t session)
{
	static const char name[] = "TPM2_PolicySecret";
	struct wr w;
	struct rd r;
	uint16_t len;

	cmd_begin(t, &w, true, CC_POLICY_SECRET);
	w_u32(&w, auth);
	w_u32(&w, session);
	w_pw(&w);          /* authorizes auth; the session handle needs none */
	w_2b(&w, NULL, 0); /* nonceTPM: not bound to this session's nonce */
	w_2b(&w, NULL, 0); /* cpHashA */
	w_2b(&w, NULL, 0); /* policyRef */
	w_u32(&w, 0);      /* expiration: none */
	int e = exec(t, &w, name, 0, NULL, &r);
	if (e)
		return e;
	r.field = "timeout";
	r_2b(&r, &len);
	r.field = "policyTicket";
	r_u16(&r);
	r_u32(&r);
	r_2b(&r, &len);
	return done(t, &r, name);
}

/* ---- Part 3 §12.5 TPM2_ActivateCredential ---- */
int tpm2_activate_credential(struct tpm2 *t, uint32_t activate, uint32_t key, uint32_t session,
			     const uint8_t *blob, size_t blen, const uint8_t *secret, size_t slen,
			     uint8_t *out, size_t cap, size_t *olen)
{
	static const char name[] = "TPM2_ActivateCredential";
	/* activateHandle: the ADMIN role, the empty password (the AK has no
	 * adminWithPolicy); keyHandle: the EK, USER role through its policy. */
	const uint32_t handles[2] = {TPM2_RS_PW, session};
	const uint8_t attrs[2] = {SESSION_CONTINUE, 0};
	struct wr w;
	struct rd r;
	uint16_t len;

	cmd_begin(t, &w, true, CC_ACTIVATE_CREDENTIAL);
	w_u32(&w, activate);
	w_u32(&w, key);
	w_auths(&w, handles, attrs, 2);
	w_2b(&w, blob, blen);
	w_2b(&w, secret, slen);
	int e = exec(t, &w, name, 0, NULL, &r);
	if (e)
		return e;
	r.field = "certInfo";
	const uint8_t *c = r_2b(&r, &len);
	if ((e = done(t, &r, name)))
		return e;
	if (len > cap) {
		plat_snprintf(t->err, sizeof t->err, "%s: credential of %u bytes (room for %zu)", name,
			      len, cap);
		return -LLMK_ERANGE;
	}
	memcpy(out, c, len);
	*olen = len;
	return 0;
}
