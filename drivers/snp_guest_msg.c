/*
 * drivers/snp_guest_msg.c — SEV-SNP guest messages: the header, AES-256-GCM
 * under a VMPCK, the request and response payloads, and the guest's
 * sequence numbers (drivers/snp_guest_msg.h has the layout and the rules).
 *
 * AES is BearSSL's constant-time ct64 and GHASH its ctmul64: messages are a
 * page at most and a few a boot, and both run on every target (the kernel's
 * drivers are built without vector registers).
 */
#include "snp_guest_msg.h"

#include <bearssl.h>

#define SNP_GCM_TAG 16u
#define SNP_BUSY_RETRIES 8

static void wipe(void *p, size_t n)
{
	volatile uint8_t *v = p;
	while (n--)
		*v++ = 0;
}

static void gcm_start(br_aes_ct64_ctr_keys *aes, br_gcm_context *gcm,
		      const uint8_t key[SNP_VMPCK_SIZE], uint64_t seqno, const uint8_t *hdr)
{
	uint8_t iv[12] = { 0 };

	snp_put64(iv, seqno); /* IV = MSG_SEQNO little-endian, then zeros */
	br_aes_ct64_ctr_init(aes, key, SNP_VMPCK_SIZE);
	br_gcm_init(gcm, &aes->vtable, br_ghash_ctmul64);
	br_gcm_reset(gcm, iv, sizeof iv);
	br_gcm_aad_inject(gcm, hdr + SNP_MSG_AAD_OFF, SNP_MSG_HDR_SIZE - SNP_MSG_AAD_OFF);
	br_gcm_flip(gcm);
}

static void hdr_write(uint8_t *p, const struct snp_msg_hdr *h)
{
	memset(p, 0, SNP_MSG_HDR_SIZE);
	snp_put64(p + 0x20, h->seqno);
	p[0x30] = h->algo;
	p[0x31] = h->hdr_version;
	p[0x32] = (uint8_t)h->hdr_size;
	p[0x33] = (uint8_t)(h->hdr_size >> 8);
	p[0x34] = h->type;
	p[0x35] = h->version;
	p[0x36] = (uint8_t)h->size;
	p[0x37] = (uint8_t)(h->size >> 8);
	p[0x3c] = h->vmpck;
}

int snp_msg_hdr_parse(const uint8_t *msg, size_t n, struct snp_msg_hdr *h)
{
	if (n < SNP_MSG_HDR_SIZE)
		return -LLMK_EFORMAT;
	h->seqno = snp_get64(msg + 0x20);
	h->algo = msg[0x30];
	h->hdr_version = msg[0x31];
	h->hdr_size = (uint16_t)(msg[0x32] | msg[0x33] << 8);
	h->type = msg[0x34];
	h->version = msg[0x35];
	h->size = (uint16_t)(msg[0x36] | msg[0x37] << 8);
	h->vmpck = msg[0x3c];
	return 0;
}

int snp_msg_seal(const uint8_t key[SNP_VMPCK_SIZE], const struct snp_msg_hdr *h,
		 const void *payload, uint8_t *out, size_t cap)
{
	br_aes_ct64_ctr_keys aes;
	br_gcm_context gcm;

	if (h->size > SNP_MSG_PAYLOAD_MAX || cap < SNP_MSG_HDR_SIZE + (size_t)h->size)
		return -LLMK_ERANGE;
	hdr_write(out, h);
	memmove(out + SNP_MSG_HDR_SIZE, payload, h->size);
	gcm_start(&aes, &gcm, key, h->seqno, out);
	br_gcm_run(&gcm, 1, out + SNP_MSG_HDR_SIZE, h->size);
	br_gcm_get_tag(&gcm, out); /* AUTHTAG bytes 0..15; 16..31 stay zero */
	wipe(&aes, sizeof aes);
	wipe(&gcm, sizeof gcm);
	return 0;
}

int snp_msg_open(const uint8_t key[SNP_VMPCK_SIZE], const uint8_t *msg, size_t n,
		 struct snp_msg_hdr *h, uint8_t *payload, size_t cap)
{
	br_aes_ct64_ctr_keys aes;
	br_gcm_context gcm;
	uint32_t ok;

	if (snp_msg_hdr_parse(msg, n, h))
		return -LLMK_EFORMAT;
	if (h->algo != SNP_MSG_ALGO_AES_256_GCM || h->hdr_version != SNP_MSG_HDR_VERSION ||
	    h->hdr_size != SNP_MSG_HDR_SIZE)
		return -LLMK_EFORMAT;
	if (h->size > SNP_MSG_PAYLOAD_MAX || n - SNP_MSG_HDR_SIZE < h->size || cap < h->size)
		return -LLMK_ERANGE;
	memcpy(payload, msg + SNP_MSG_HDR_SIZE, h->size);
	gcm_start(&aes, &gcm, key, h->seqno, msg);
	br_gcm_run(&gcm, 0, payload, h->size);
	ok = br_gcm_check_tag_trunc(&gcm, msg, SNP_GCM_TAG);
	wipe(&aes, sizeof aes);
	wipe(&gcm, sizeof gcm);
	if (!ok) {
		wipe(payload, h->size);
		return -LLMK_EAUTH;
	}
	return 0;
}

/* ---- payloads ---- */

void snp_report_req_build(uint8_t out[SNP_REPORT_REQ_SIZE], const uint8_t report_data[64],
			  uint32_t vmpl, uint32_t key_sel)
{
	memset(out, 0, SNP_REPORT_REQ_SIZE);
	memcpy(out, report_data, 64);
	snp_put32(out + 0x40, vmpl);
	snp_put32(out + 0x44, key_sel & 3u);
}

static const char *status_name(uint32_t s)
{
	switch (s) {
	case SNP_STATUS_INVALID_PARAM:
		return "INVALID_PARAM";
	case SNP_STATUS_INVALID_KEY:
		return "INVALID_KEY";
	default:
		return "unknown status";
	}
}

int snp_report_rsp_parse(const uint8_t *rsp, size_t n, const uint8_t **report, char *err,
			 size_t errn)
{
	uint32_t status, size;

	if (n < 8) {
		plat_snprintf(err, errn, "MSG_REPORT_RSP of %zu bytes has no status", n);
		return -LLMK_EFORMAT;
	}
	status = snp_get32(rsp);
	size = snp_get32(rsp + 4);
	if (status) {
		plat_snprintf(err, errn, "MSG_REPORT_RSP status %#x (%s)", (unsigned)status,
			      status_name(status));
		return -LLMK_EIO;
	}
	if (size != SNP_REPORT_SIZE || n < 0x20u + SNP_REPORT_SIZE) {
		plat_snprintf(err, errn,
			      "MSG_REPORT_RSP report size %u in %zu bytes (want %u in %u)",
			      (unsigned)size, n, SNP_REPORT_SIZE, SNP_REPORT_RSP_SIZE);
		return -LLMK_EFORMAT;
	}
	*report = rsp + 0x20;
	return 0;
}

int snp_key_req_build(uint8_t out[SNP_KEY_REQ_SIZE], const struct snp_key_req *r, char *err,
		      size_t errn)
{
	if (r->root_key > SNP_ROOT_KEY_VMRK || r->key_sel > SNP_KEY_SEL_VLEK) {
		plat_snprintf(err, errn, "MSG_KEY_REQ root key %u / key select %u out of range",
			      (unsigned)r->root_key, (unsigned)r->key_sel);
		return -LLMK_EINVAL;
	}
	if (r->fields & ~(uint64_t)SNP_FIELD_ALL) {
		plat_snprintf(err, errn, "MSG_KEY_REQ guest field select %#llx has unknown bits",
			      (unsigned long long)r->fields);
		return -LLMK_EINVAL;
	}
	if (r->vmpl > 3) {
		plat_snprintf(err, errn, "MSG_KEY_REQ VMPL %u out of range 0..3", (unsigned)r->vmpl);
		return -LLMK_EINVAL;
	}
	memset(out, 0, SNP_KEY_REQ_SIZE);
	snp_put32(out, r->root_key | r->key_sel << 1);
	snp_put64(out + 0x08, r->fields);
	snp_put32(out + 0x10, r->vmpl);
	snp_put32(out + 0x14, r->guest_svn);
	snp_put64(out + 0x18, r->tcb_version);
	return 0;
}

int snp_key_req_parse(const uint8_t *p, size_t n, struct snp_key_req *r)
{
	if (n < SNP_KEY_REQ_SIZE)
		return -LLMK_EFORMAT;
	uint32_t sel = snp_get32(p);
	r->root_key = sel & 1u;
	r->key_sel = (sel >> 1) & 3u;
	r->fields = snp_get64(p + 0x08);
	r->vmpl = snp_get32(p + 0x10);
	r->guest_svn = snp_get32(p + 0x14);
	r->tcb_version = snp_get64(p + 0x18);
	/* reserved bits and bytes must be zero */
	if ((sel & ~7u) || snp_get32(p + 4))
		return -LLMK_EINVAL;
	return 0;
}

int snp_key_rsp_parse(const uint8_t *rsp, size_t n, uint8_t key[32], char *err, size_t errn)
{
	if (n < SNP_KEY_RSP_SIZE) {
		plat_snprintf(err, errn, "MSG_KEY_RSP of %zu bytes (want %u)", n, SNP_KEY_RSP_SIZE);
		return -LLMK_EFORMAT;
	}
	uint32_t status = snp_get32(rsp);
	if (status) {
		plat_snprintf(err, errn, "MSG_KEY_RSP status %#x (%s)", (unsigned)status,
			      status_name(status));
		return -LLMK_EIO;
	}
	memcpy(key, rsp + 0x20, 32);
	return 0;
}

/* ---- the guest's side ---- */

static uint8_t *vmpck_of(const struct snp_guest *g)
{
	return g->secrets + SNP_SECRETS_VMPCK0 + SNP_VMPCK_SIZE * g->vmpck;
}

static uint8_t *seqno_of(const struct snp_guest *g)
{
	return g->secrets + SNP_SECRETS_OS_AREA + 4 * g->vmpck;
}

static bool vmpck_present(const struct snp_guest *g)
{
	const uint8_t *k = vmpck_of(g);
	uint8_t any = 0;
	for (unsigned i = 0; i < SNP_VMPCK_SIZE; i++)
		any |= k[i];
	return any != 0;
}

void snp_guest_disable(struct snp_guest *g, const char *why)
{
	wipe(vmpck_of(g), SNP_VMPCK_SIZE);
	if (why)
		plat_snprintf(g->err, sizeof g->err, "%s; VMPCK%u wiped for the rest of this boot",
			      why, g->vmpck);
}

const char *snp_guest_error(const struct snp_guest *g)
{
	return g->err;
}

uint64_t snp_guest_next_seqno(const struct snp_guest *g)
{
	return (uint64_t)snp_get32(seqno_of(g)) + 1;
}

int snp_guest_init(struct snp_guest *g, uint8_t *secrets, unsigned vmpck,
		   const struct snp_transport *t)
{
	memset(g, 0, sizeof *g);
	g->secrets = secrets;
	g->vmpck = vmpck;
	g->t = t;
	if (vmpck >= SNP_VMPCKS) {
		plat_snprintf(g->err, sizeof g->err, "VMPCK%u does not exist (0..3)", vmpck);
		return -LLMK_EINVAL;
	}
	if (!vmpck_present(g)) {
		plat_snprintf(g->err, sizeof g->err,
			      "VMPCK%u is all zeros (not given to this VMPL, or wiped)", vmpck);
		return -LLMK_ENOENT;
	}
	if (snp_guest_next_seqno(g) + 1 > 0xffffffffu) {
		plat_snprintf(g->err, sizeof g->err, "VMPCK%u's sequence numbers are used up",
			      vmpck);
		return -LLMK_ERANGE;
	}
	return 0;
}

/* The response's header against the request in flight. */
static int check_response(struct snp_guest *g, const struct snp_msg_hdr *q,
			  const struct snp_msg_hdr *r)
{
	if (r->type != q->type + 1)
		plat_snprintf(g->err, sizeof g->err, "response MSG_TYPE %u to request type %u",
			      r->type, q->type);
	else if (r->seqno != q->seqno + 1)
		plat_snprintf(g->err, sizeof g->err,
			      "response MSG_SEQNO %llu to request %llu (want %llu)",
			      (unsigned long long)r->seqno, (unsigned long long)q->seqno,
			      (unsigned long long)q->seqno + 1);
	else if (r->version != q->version)
		plat_snprintf(g->err, sizeof g->err, "response MSG_VERSION %u to request %u",
			      r->version, q->version);
	else if (r->vmpck != q->vmpck)
		plat_snprintf(g->err, sizeof g->err, "response MSG_VMPCK %u to request %u",
			      r->vmpck, q->vmpck);
	else if (r->algo != q->algo || r->hdr_version != q->hdr_version ||
		 r->hdr_size != q->hdr_size)
		plat_snprintf(g->err, sizeof g->err,
			      "response header ALGO %u HDR_VERSION %u HDR_SIZE %#x (want 1 1 0x60)",
			      r->algo, r->hdr_version, r->hdr_size);
	else
		return 0;
	return -LLMK_EAUTH;
}

/* One exchange with BUSY retried (the firmware has not seen the message). */
static int exchange(struct snp_guest *g, uint8_t *certs, uint32_t *certs_pages,
		    uint64_t *info2)
{
	uint32_t want = certs_pages ? *certs_pages : 0;
	int e = 0;

	for (int i = 0; i < SNP_BUSY_RETRIES; i++) {
		if (certs_pages)
			*certs_pages = want;
		e = g->t->send(g->t->ctx, g->t->req_page, g->t->resp_page, certs, certs_pages,
			       info2);
		if (e || *info2 >> 32 != SNP_HV_ERR_BUSY)
			break;
	}
	return e;
}

int snp_guest_request(struct snp_guest *g, uint8_t type, const void *req, size_t n,
		      uint8_t *rsp, size_t cap, size_t *rsp_len, uint8_t *certs,
		      uint32_t *certs_pages)
{
	struct snp_msg_hdr q = { 0 }, r;
	uint64_t info2 = 0;
	int e;

	if (!vmpck_present(g)) {
		plat_snprintf(g->err, sizeof g->err, "VMPCK%u is wiped or absent", g->vmpck);
		return -LLMK_ENOENT;
	}
	if (snp_guest_next_seqno(g) + 1 > 0xffffffffu) {
		plat_snprintf(g->err, sizeof g->err, "VMPCK%u's sequence numbers are used up",
			      g->vmpck);
		return -LLMK_ERANGE;
	}
	if (n > SNP_MSG_PAYLOAD_MAX) {
		plat_snprintf(g->err, sizeof g->err, "request payload of %zu bytes", n);
		return -LLMK_ERANGE;
	}
	q.seqno = snp_guest_next_seqno(g);
	q.algo = SNP_MSG_ALGO_AES_256_GCM;
	q.hdr_version = SNP_MSG_HDR_VERSION;
	q.hdr_size = SNP_MSG_HDR_SIZE;
	q.type = type;
	q.version = 1;
	q.size = (uint16_t)n;
	q.vmpck = (uint8_t)g->vmpck;
	/* Encrypt in private memory, then copy to the shared page: the
	 * hypervisor sees only the finished ciphertext. */
	memset(g->buf, 0, sizeof g->buf);
	e = snp_msg_seal(vmpck_of(g), &q, req, g->buf, sizeof g->buf);
	if (e) {
		plat_snprintf(g->err, sizeof g->err, "request does not fit a page");
		return e;
	}
	memcpy(g->t->req_page, g->buf, SNP_PAGE);
	memset(g->t->resp_page, 0, SNP_PAGE);

	e = exchange(g, certs, certs_pages, &info2);
	if (!e && certs && info2 >> 32 == SNP_HV_ERR_INVALID_LEN) {
		/* The hypervisor wants more certificate pages than we gave and did
		 * not pass the message on. Send the same message as a plain request
		 * so this sequence number is used for exactly this plaintext. */
		uint32_t wanted = *certs_pages;
		*certs_pages = 0;
		e = exchange(g, NULL, NULL, &info2);
		if (!e && !info2)
			plat_snprintf(g->err, sizeof g->err,
				      "no certificates: the hypervisor wants %u pages for them, "
				      "more than were given",
				      (unsigned)wanted);
	}
	if (e) {
		snp_guest_disable(g, "the guest request could not be sent");
		return e;
	}
	if (info2) {
		char why[96];
		plat_snprintf(why, sizeof why,
			      "guest request failed: SW_EXITINFO2 %#llx (hypervisor %#x, firmware %#x)",
			      (unsigned long long)info2, (unsigned)(info2 >> 32), (unsigned)info2);
		snp_guest_disable(g, why);
		return -LLMK_EIO;
	}
	/* A private copy before any check: the shared page can change under us. */
	memcpy(g->buf, g->t->resp_page, SNP_PAGE);
	if (snp_msg_hdr_parse(g->buf, SNP_PAGE, &r) || (e = check_response(g, &q, &r))) {
		char why[128];
		memcpy(why, g->err, sizeof why - 1);
		why[sizeof why - 1] = 0;
		snp_guest_disable(g, why);
		return -LLMK_EAUTH;
	}
	e = snp_msg_open(vmpck_of(g), g->buf, SNP_PAGE, &r, rsp, cap);
	wipe(g->buf, sizeof g->buf);
	if (e) {
		snp_guest_disable(g, e == -LLMK_EAUTH ? "response tag does not verify"
						      : "response MSG_SIZE does not fit");
		return e == -LLMK_EAUTH ? e : -LLMK_EFORMAT;
	}
	*rsp_len = r.size;
	/* Both numbers are used: the request's and the response's. */
	snp_put32(seqno_of(g), (uint32_t)(q.seqno + 1));
	return 0;
}

int snp_guest_report(struct snp_guest *g, const uint8_t report_data[64], uint32_t vmpl,
		     uint32_t key_sel, uint8_t report[SNP_REPORT_SIZE], uint8_t *certs,
		     uint32_t *certs_pages)
{
	uint8_t req[SNP_REPORT_REQ_SIZE], rsp[SNP_REPORT_RSP_SIZE];
	const uint8_t *rep;
	size_t n = 0;
	char note[sizeof g->err];

	snp_report_req_build(req, report_data, vmpl, key_sel);
	g->err[0] = 0;
	int e = snp_guest_request(g, SNP_MSG_REPORT_REQ, req, sizeof req, rsp, sizeof rsp, &n,
				  certs, certs_pages);
	if (e)
		return e;
	memcpy(note, g->err, sizeof note); /* "the certificates need ..." survives */
	e = snp_report_rsp_parse(rsp, n, &rep, g->err, sizeof g->err);
	if (e)
		return e;
	memcpy(report, rep, SNP_REPORT_SIZE);
	memcpy(g->err, note, sizeof note);
	return 0;
}

size_t snp_certs_copy(uint8_t *dst, const uint8_t *shared, uint32_t pages, uint32_t max_pages)
{
	size_t n = (size_t)(pages < max_pages ? pages : max_pages) * SNP_PAGE, end = 0;

	memcpy(dst, shared, n);
	for (size_t o = 0; o + 24 <= n; o += 24) {
		uint32_t off = snp_get32(dst + o + 16), l = snp_get32(dst + o + 20);
		if (!off && !l && !snp_get64(dst + o) && !snp_get64(dst + o + 8))
			break;
		if ((uint64_t)off + l > end)
			end = (uint64_t)off + l > n ? n : (size_t)off + l;
	}
	return end;
}

int snp_guest_derive_key(struct snp_guest *g, const struct snp_key_req *r, uint8_t key[32])
{
	uint8_t req[SNP_KEY_REQ_SIZE], rsp[SNP_KEY_RSP_SIZE];
	size_t n = 0;
	int e;

	if ((e = snp_key_req_build(req, r, g->err, sizeof g->err)))
		return e;
	e = snp_guest_request(g, SNP_MSG_KEY_REQ, req, sizeof req, rsp, sizeof rsp, &n, NULL,
			      NULL);
	if (!e)
		e = snp_key_rsp_parse(rsp, n, key, g->err, sizeof g->err);
	wipe(rsp, sizeof rsp);
	return e;
}
