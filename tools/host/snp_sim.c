/*
 * tools/host/snp_sim.c — the simulated SEV-SNP firmware's SNP_GUEST_REQUEST
 * (tools/host/snp_sim.h says what it is and is not).
 *
 * Checks a message the way the firmware ABI's SNP_GUEST_REQUEST describes:
 * ALGO, HDR_VERSION, HDR_SIZE, MSG_TYPE and MSG_VERSION it knows, MSG_SIZE
 * the type's, MSG_VMPCK a key the launch has, MSG_SEQNO one past the last
 * number it used with that key, then the tag. A refused message gets no
 * response: the hypervisor hands the firmware's error back in SW_EXITINFO2.
 */
#include "snp_sim.h"

#include <string.h>

/* ATTESTATION_REPORT offsets ("ATTESTATION_REPORT Structure"). */
enum {
	REP_VERSION = 0x000, REP_GUEST_SVN = 0x004, REP_POLICY = 0x008, REP_FAMILY_ID = 0x010,
	REP_IMAGE_ID = 0x020, REP_VMPL = 0x030, REP_SIG_ALGO = 0x034, REP_CURRENT_TCB = 0x038,
	REP_PLATFORM_INFO = 0x040, REP_FLAGS = 0x048, REP_REPORT_DATA = 0x050,
	REP_MEASUREMENT = 0x090, REP_HOST_DATA = 0x0c0, REP_ID_KEY_DIGEST = 0x0e0,
	REP_AUTHOR_KEY_DIGEST = 0x110, REP_REPORT_ID = 0x140, REP_REPORT_ID_MA = 0x160,
	REP_REPORTED_TCB = 0x180, REP_CPUID_FAM = 0x188, REP_CHIP_ID = 0x1a0,
	REP_COMMITTED_TCB = 0x1e0, REP_CURRENT_BUILD = 0x1e8, REP_COMMITTED_BUILD = 0x1ec,
	REP_LAUNCH_TCB = 0x1f0, REP_LAUNCH_MIT = 0x1f8, REP_CURRENT_MIT = 0x200,
	REP_SIGNED = 0x2a0, REP_SIG_R = 0x2a0, REP_SIG_S = 0x2e8,
};
#define SIG_ALGO_ECDSA_P384_SHA384 1u
#define POLICY_RSVD1 (1ull << 17)

void snp_sim_config_default(struct snp_sim_config *c)
{
	memset(c, 0, sizeof *c);
	for (int i = 0; i < 32; i++)
		c->chip_seed[i] = (uint8_t)(0x5e + 3 * i);
	for (int i = 0; i < 48; i++)
		c->measurement[i] = (uint8_t)(0xc0 ^ i);
	c->policy = 0x30000; /* SMT allowed, reserved bit 17 */
	c->report_version = 3;
	/* bootloader 4, TEE 0, SNP 0x18, microcode 0xdb: a Milan's TCB_VERSION */
	c->tcb = 0xdb18000000000004ull;
	c->cpuid_fam = 0x19;
	c->cpuid_mod = 0x01;
	c->cpuid_step = 0x01;
	c->fw_build = 0x1d;
	c->fw_minor = 0x37;
	c->fw_major = 0x01;
	memcpy(c->product, "Milan", 6);
}

static void hmac384(const void *key, size_t kn, const void *a, size_t an, const void *b,
		    size_t bn, uint8_t out[48])
{
	br_hmac_key_context kc;
	br_hmac_context hc;
	br_hmac_key_init(&kc, &br_sha384_vtable, key, kn);
	br_hmac_init(&hc, &kc, 0);
	br_hmac_update(&hc, a, an);
	br_hmac_update(&hc, b, bn);
	br_hmac_out(&hc, out);
}

int snp_sim_init(struct snp_sim *s, const struct snp_sim_config *cfg)
{
	br_hmac_drbg_context drbg;
	uint8_t seed[48], tcb[8];
	int e;

	memset(s, 0, sizeof *s);
	s->cfg = *cfg;
	if (cfg->report_version != 3 && cfg->report_version != 5)
		return -LLMK_EINVAL;
	/* A launch: four fresh VMPCKs in the secrets page ("Secrets Page
	 * Format": VERSION 3, then the VMPCKs at 0x20). */
	if ((e = plat_entropy(s->vmpck, sizeof s->vmpck)) < 0)
		return e;
	snp_put32(s->secrets + SNP_SECRETS_VERSION, 3);
	snp_put32(s->secrets + 0x008, (uint32_t)cfg->cpuid_step | (uint32_t)(cfg->cpuid_mod & 15) << 4 |
					      0xfu << 8 | (uint32_t)(cfg->cpuid_mod >> 4) << 16 |
					      (uint32_t)(cfg->cpuid_fam - 0xf) << 20);
	memcpy(s->secrets + SNP_SECRETS_VMPCK0, s->vmpck, sizeof s->vmpck);
	if ((e = plat_entropy(s->report_id, sizeof s->report_id)) < 0)
		return e;

	/* The chip: CHIP_ID and a VCEK for this TCB, both from the seed. */
	uint8_t id[48];
	hmac384(cfg->chip_seed, 32, "llmk snp-sim CHIP_ID", 20, "0", 1, id);
	memcpy(s->chip_id, id, 48);
	hmac384(cfg->chip_seed, 32, "llmk snp-sim CHIP_ID", 20, "1", 1, id);
	memcpy(s->chip_id + 48, id, 16);
	snp_put64(tcb, cfg->tcb);
	hmac384(cfg->chip_seed, 32, "llmk snp-sim VCEK", 17, tcb, 8, seed);
	br_hmac_drbg_init(&drbg, &br_sha384_vtable, seed, sizeof seed);
	if (!br_ec_keygen(&drbg.vtable, br_ec_get_default(), &s->vcek, s->vcek_x, BR_EC_secp384r1))
		return -LLMK_EIO;
	if (!br_ec_compute_pub(br_ec_get_default(), &s->vcek_pub, s->vcek_q, &s->vcek))
		return -LLMK_EIO;
	return 0;
}

void snp_sim_fault(struct snp_sim *s, enum snp_sim_fault f, int count)
{
	s->fault = f;
	s->fault_count = count;
}

static bool faulty(struct snp_sim *s, enum snp_sim_fault f)
{
	return s->fault == f && s->fault_count > 0;
}

/* TCB_VERSION components are bytes 0 (boot loader), 1 (TEE), 6 (SNP), 7
 * (microcode); a requested TCB may not exceed the committed one in any. */
static bool tcb_le(uint64_t a, uint64_t b)
{
	static const int parts[] = { 0, 1, 6, 7 };
	for (int i = 0; i < 4; i++)
		if ((uint8_t)(a >> (8 * parts[i])) > (uint8_t)(b >> (8 * parts[i])))
			return false;
	return true;
}

uint32_t snp_sim_derive(const struct snp_sim *s, const struct snp_key_req *r, uint8_t key[32])
{
	const struct snp_sim_config *c = &s->cfg;
	br_hmac_key_context kc;
	br_hmac_context hc;
	uint8_t root[48], b[8], out[48];

	if (r->vmpl < c->vmpl || r->vmpl > 3)
		return SNP_STATUS_INVALID_PARAM;
	if ((r->fields & SNP_FIELD_GUEST_SVN) && r->guest_svn > c->guest_svn)
		return SNP_STATUS_INVALID_PARAM;
	if ((r->fields & SNP_FIELD_TCB_VERSION) && !tcb_le(r->tcb_version, c->tcb))
		return SNP_STATUS_INVALID_PARAM;
	if (r->fields & ~(uint64_t)SNP_FIELD_ALL)
		return SNP_STATUS_INVALID_PARAM;
	if (r->key_sel == SNP_KEY_SEL_VLEK || r->key_sel > SNP_KEY_SEL_VLEK)
		return r->key_sel == SNP_KEY_SEL_VLEK ? SNP_STATUS_INVALID_KEY
						      : SNP_STATUS_INVALID_PARAM;
	if (r->root_key == SNP_ROOT_KEY_VMRK && !c->have_vmrk)
		return SNP_STATUS_INVALID_KEY;

	/* The roots: the chip's (standing for the VCEK's secret) or the VMRK. */
	if (r->root_key == SNP_ROOT_KEY_VMRK)
		hmac384(c->vmrk, 32, "llmk snp-sim VMRK root", 22, "", 0, root);
	else
		hmac384(c->chip_seed, 32, "llmk snp-sim VCEK root", 22, "", 0, root);
	br_hmac_key_init(&kc, &br_sha384_vtable, root, sizeof root);
	br_hmac_init(&hc, &kc, 0);
	br_hmac_update(&hc, "llmk snp-sim derived key v1", 27);
	snp_put32(b, r->vmpl);
	br_hmac_update(&hc, b, 4);
	snp_put64(b, r->fields);
	br_hmac_update(&hc, b, 8);
	if (r->fields & SNP_FIELD_POLICY) {
		snp_put64(b, c->policy);
		br_hmac_update(&hc, b, 8);
	}
	if (r->fields & SNP_FIELD_IMAGE_ID)
		br_hmac_update(&hc, c->image_id, 16);
	if (r->fields & SNP_FIELD_FAMILY_ID)
		br_hmac_update(&hc, c->family_id, 16);
	if (r->fields & SNP_FIELD_MEASUREMENT)
		br_hmac_update(&hc, c->measurement, 48);
	if (r->fields & SNP_FIELD_GUEST_SVN) {
		snp_put32(b, r->guest_svn);
		br_hmac_update(&hc, b, 4);
	}
	if (r->fields & SNP_FIELD_TCB_VERSION) {
		snp_put64(b, r->tcb_version);
		br_hmac_update(&hc, b, 8);
	}
	br_hmac_out(&hc, out);
	memcpy(key, out, 32);
	memset(out, 0, sizeof out);
	memset(root, 0, sizeof root);
	return SNP_STATUS_SUCCESS;
}

/* The report, signed: ECDSA P-384 over SHA-384 of bytes 0..0x29F, R and S
 * little-endian in 72-byte fields ("Signature Format"). */
static void build_report(struct snp_sim *s, const uint8_t *req, uint8_t *rep)
{
	const struct snp_sim_config *c = &s->cfg;
	br_sha384_context h;
	uint8_t digest[48], sig[96];

	memset(rep, 0, SNP_REPORT_SIZE);
	snp_put32(rep + REP_VERSION, c->report_version);
	snp_put32(rep + REP_GUEST_SVN, c->guest_svn);
	snp_put64(rep + REP_POLICY, c->policy);
	memcpy(rep + REP_FAMILY_ID, c->family_id, 16);
	memcpy(rep + REP_IMAGE_ID, c->image_id, 16);
	snp_put32(rep + REP_VMPL, snp_get32(req + 0x40));
	snp_put32(rep + REP_SIG_ALGO, SIG_ALGO_ECDSA_P384_SHA384);
	snp_put64(rep + REP_CURRENT_TCB, c->tcb);
	snp_put64(rep + REP_PLATFORM_INFO, 1); /* SMT enabled */
	snp_put32(rep + REP_FLAGS, 0);          /* SIGNING_KEY 0: VCEK */
	memcpy(rep + REP_REPORT_DATA, req, 64);
	memcpy(rep + REP_MEASUREMENT, c->measurement, 48);
	memcpy(rep + REP_HOST_DATA, c->host_data, 32);
	memcpy(rep + REP_ID_KEY_DIGEST, c->id_key_digest, 48);
	memcpy(rep + REP_AUTHOR_KEY_DIGEST, c->author_key_digest, 48);
	memcpy(rep + REP_REPORT_ID, s->report_id, 32);
	memset(rep + REP_REPORT_ID_MA, 0xff, 32); /* no migration agent */
	snp_put64(rep + REP_REPORTED_TCB, c->tcb);
	rep[REP_CPUID_FAM] = c->cpuid_fam;
	rep[REP_CPUID_FAM + 1] = c->cpuid_mod;
	rep[REP_CPUID_FAM + 2] = c->cpuid_step;
	memcpy(rep + REP_CHIP_ID, s->chip_id, 64);
	snp_put64(rep + REP_COMMITTED_TCB, c->tcb);
	for (int i = 0; i < 2; i++) {
		uint8_t *v = rep + (i ? REP_COMMITTED_BUILD : REP_CURRENT_BUILD);
		v[0] = c->fw_build;
		v[1] = c->fw_minor;
		v[2] = c->fw_major;
	}
	snp_put64(rep + REP_LAUNCH_TCB, c->tcb);
	if (c->report_version >= 5) {
		snp_put64(rep + REP_LAUNCH_MIT, c->launch_mit);
		snp_put64(rep + REP_CURRENT_MIT, c->current_mit);
	}
	br_sha384_init(&h);
	br_sha384_update(&h, rep, REP_SIGNED);
	br_sha384_out(&h, digest);
	size_t n = br_ecdsa_i31_sign_raw(br_ec_get_default(), &br_sha384_vtable, digest, &s->vcek,
					 sig);
	if (n != 96)
		return; /* leaves the signature zero: no verifier accepts it */
	for (int i = 0; i < 48; i++) {
		rep[REP_SIG_R + i] = sig[47 - i];
		rep[REP_SIG_S + i] = sig[95 - i];
	}
	if (faulty(s, SNP_SIM_FAULT_REPORT_SIG))
		rep[REP_SIG_S] ^= 1;
}

/* MSG_REPORT_REQ's own checks; the STATUS to answer with. */
static uint32_t report_status(const struct snp_sim *s, const uint8_t *req)
{
	uint32_t vmpl = snp_get32(req + 0x40), sel = snp_get32(req + 0x44);
	if (vmpl < s->cfg.vmpl || vmpl > 3 || (sel & ~3u))
		return SNP_STATUS_INVALID_PARAM;
	for (unsigned i = 0x48; i < SNP_REPORT_REQ_SIZE; i++)
		if (req[i])
			return SNP_STATUS_INVALID_PARAM;
	if ((sel & 3u) == SNP_KEY_SEL_VLEK)
		return SNP_STATUS_INVALID_KEY; /* no VLEK is installed */
	if ((sel & 3u) == 3u)
		return SNP_STATUS_INVALID_PARAM;
	return SNP_STATUS_SUCCESS;
}

static bool refuse(struct snp_sim *s, uint64_t *exitinfo2, const char *why)
{
	plat_snprintf(s->err, sizeof s->err, "%s", why);
	*exitinfo2 = SNP_STATUS_INVALID_PARAM;
	return false;
}

/* The header and the key, before anything is decrypted. */
static bool accept_header(struct snp_sim *s, const struct snp_msg_hdr *q, uint64_t *exitinfo2)
{
	static const uint8_t zero[32];
	char why[120];

	if (q->algo != SNP_MSG_ALGO_AES_256_GCM || q->hdr_version != SNP_MSG_HDR_VERSION ||
	    q->hdr_size != SNP_MSG_HDR_SIZE)
		return refuse(s, exitinfo2, "header ALGO / HDR_VERSION / HDR_SIZE not 1 / 1 / 0x60");
	if (q->type != SNP_MSG_REPORT_REQ && q->type != SNP_MSG_KEY_REQ) {
		plat_snprintf(why, sizeof why, "MSG_TYPE %u is not a request this firmware takes",
			      q->type);
		return refuse(s, exitinfo2, why);
	}
	if (q->version != 1)
		return refuse(s, exitinfo2, "MSG_VERSION is not 1");
	if (q->size != (q->type == SNP_MSG_REPORT_REQ ? SNP_REPORT_REQ_SIZE : SNP_KEY_REQ_SIZE)) {
		plat_snprintf(why, sizeof why, "MSG_SIZE %u is not the size of type %u", q->size,
			      q->type);
		return refuse(s, exitinfo2, why);
	}
	if (q->vmpck >= SNP_VMPCKS || memcmp(s->vmpck[q->vmpck], zero, 32) == 0)
		return refuse(s, exitinfo2, "MSG_VMPCK names no key of this launch");
	if (q->seqno != s->last_seqno[q->vmpck] + 1) {
		plat_snprintf(why, sizeof why, "MSG_SEQNO %llu, want %llu",
			      (unsigned long long)q->seqno,
			      (unsigned long long)s->last_seqno[q->vmpck] + 1);
		return refuse(s, exitinfo2, why);
	}
	return true;
}

void snp_sim_request(struct snp_sim *s, const uint8_t *req, uint8_t *resp, uint64_t *exitinfo2)
{
	struct snp_msg_hdr q, r;
	uint8_t in[SNP_MSG_PAYLOAD_MAX], out[SNP_REPORT_RSP_SIZE];
	struct snp_key_req kr;
	size_t n;

	*exitinfo2 = 0;
	s->requests++;
	s->err[0] = 0;
	if (faulty(s, SNP_SIM_FAULT_FW_ERROR)) {
		s->fault_count--;
		refuse(s, exitinfo2, "injected firmware error");
		return;
	}
	snp_msg_hdr_parse(req, SNP_PAGE, &q);
	if (!accept_header(s, &q, exitinfo2))
		return;
	if (snp_msg_open(s->vmpck[q.vmpck], req, SNP_PAGE, &q, in, sizeof in)) {
		refuse(s, exitinfo2, "the request's tag does not verify");
		return;
	}
	/* The number is used whatever the payload says. */
	s->last_seqno[q.vmpck] = q.seqno + 1;

	memset(out, 0, sizeof out);
	if (q.type == SNP_MSG_REPORT_REQ) {
		uint32_t st = report_status(s, in);
		snp_put32(out, st);
		if (st == SNP_STATUS_SUCCESS) {
			snp_put32(out + 4, SNP_REPORT_SIZE);
			build_report(s, in, out + 0x20);
		}
		n = SNP_REPORT_RSP_SIZE;
	} else {
		uint32_t st = snp_key_req_parse(in, q.size, &kr) ? SNP_STATUS_INVALID_PARAM
								 : snp_sim_derive(s, &kr, out + 0x20);
		snp_put32(out, st);
		if (st)
			memset(out + 0x20, 0, 32);
		n = SNP_KEY_RSP_SIZE;
	}
	if (faulty(s, SNP_SIM_FAULT_STATUS)) {
		memset(out, 0, n);
		snp_put32(out, SNP_STATUS_INVALID_PARAM);
	}
	r = q;
	r.type = (uint8_t)(q.type + 1);
	r.seqno = q.seqno + 1;
	r.size = (uint16_t)n;
	if (faulty(s, SNP_SIM_FAULT_SEQNO))
		r.seqno++;
	if (faulty(s, SNP_SIM_FAULT_TYPE))
		r.type = q.type;
	memset(resp, 0, SNP_PAGE);
	snp_msg_seal(s->vmpck[q.vmpck], &r, out, resp, SNP_PAGE);
	memset(out, 0, sizeof out);
	if (faulty(s, SNP_SIM_FAULT_TAG))
		resp[5] ^= 0x10;
	if (s->fault != SNP_SIM_FAULT_NONE && s->fault_count > 0 &&
	    --s->fault_count == 0)
		s->fault = SNP_SIM_FAULT_NONE;
}

/* ---- a transport straight into the simulator ---- */

static int link_send(void *ctx, uint8_t *req_page, uint8_t *resp_page, uint8_t *certs,
		     uint32_t *certs_pages, uint64_t *exitinfo2)
{
	struct snp_sim_link *l = ctx;

	if (certs) {
		/* GHCB spec §4.1.8.1: the hypervisor fills the certificate
		 * table, or says how many pages it needs and forwards nothing. */
		uint8_t table[4 * SNP_SIM_CERT_MAX];
		long n = l->chain ? snp_sim_cert_table(l->chain, table, sizeof table) : 0;
		uint32_t need = (uint32_t)((n + SNP_PAGE - 1) / SNP_PAGE);
		if (n < 0)
			return (int)n;
		if (need > *certs_pages) {
			*certs_pages = need;
			*exitinfo2 = (uint64_t)SNP_HV_ERR_INVALID_LEN << 32;
			return 0;
		}
		memset(certs, 0, (size_t)*certs_pages * SNP_PAGE);
		memcpy(certs, table, (size_t)n);
		*certs_pages = need;
	}
	snp_sim_request(l->sim, req_page, resp_page, exitinfo2);
	return 0;
}

void snp_sim_link(struct snp_sim_link *l, struct snp_sim *s, const struct snp_sim_chain *chain)
{
	memset(l, 0, sizeof *l);
	l->sim = s;
	l->chain = chain;
	l->t = (struct snp_transport){ link_send, l, l->req, l->resp };
}
