/*
 * tests/unit/test_snp_guest_msg.c — drivers/snp_guest_msg.c: the known-answer
 * vector (usbarmory/tamago's MSG_REPORT_REQ under VMPCK1), the header and
 * payload layouts, and the guest's rules against a scripted firmware:
 * sequence numbers advance by 2 a round trip, and any bad response wipes
 * the VMPCK so no number is ever used twice.
 */
#include "test.h"

#include <stdlib.h>

#include "../../drivers/snp_guest_msg.h"

static void *kat_file(const char *name, size_t *n)
{
	char path[512];
	const char *d = testdata_dir();
	if (!d)
		return NULL;
	snprintf(path, sizeof path, "%s/attest/snp-guest-msg/%s", d, name);
	return test_read_file(path, n);
}

TEST(snp_guest_msg_encrypts_the_known_answer_vector_byte_for_byte)
{
	size_t nk, np, ne;
	uint8_t *key = kat_file("vmpck1.key", &nk);
	uint8_t *plain = kat_file("msg_report_req.plain.bin", &np);
	uint8_t *enc = kat_file("msg_report_req.enc.bin", &ne);
	if (!key || !plain || !enc) {
		free(key), free(plain), free(enc);
		SKIP("attest/snp-guest-msg not in the test data");
	}
	CHECK_EQ_INT(nk, 32);
	CHECK_EQ_INT(np, 96);
	CHECK_EQ_INT(ne, 192);
	struct snp_msg_hdr h = { .seqno = 1, .algo = 1, .hdr_version = 1, .hdr_size = 0x60,
				 .type = SNP_MSG_REPORT_REQ, .version = 1, .size = 0x60,
				 .vmpck = 1 };
	uint8_t out[192];
	CHECK_EQ_INT(snp_msg_seal(key, &h, plain, out, sizeof out), 0);
	CHECK(memcmp(out, enc, 192) == 0);

	/* and the builder makes the same payload: report data zero, VMPL 1, VCEK-or-VLEK */
	uint8_t rd[64] = { 0 }, req[SNP_REPORT_REQ_SIZE];
	snp_report_req_build(req, rd, 1, SNP_KEY_SEL_DEFAULT);
	CHECK(memcmp(req, plain, 96) == 0);

	/* opening it gives the plaintext back; one flipped bit anywhere is refused */
	uint8_t pay[96];
	struct snp_msg_hdr g;
	CHECK_EQ_INT(snp_msg_open(key, enc, ne, &g, pay, sizeof pay), 0);
	CHECK(memcmp(pay, plain, 96) == 0);
	CHECK_EQ_INT(g.seqno, 1);
	CHECK_EQ_INT(g.vmpck, 1);
	int refused = 0;
	for (size_t bit = 0; bit < 192 * 8; bit += 7) {
		size_t i = bit / 8;
		if (i >= 0x10 && i < 0x20)
			continue; /* AUTHTAG bytes 16..31 are not part of the tag */
		if (i >= 0x28 && i < 0x30)
			continue; /* reserved, outside the AAD */
		memcpy(out, enc, 192);
		out[i] ^= (uint8_t)(1u << (bit % 8));
		if (snp_msg_open(key, out, 192, &g, pay, sizeof pay) != 0)
			refused++;
		else
			fprintf(stderr, "  flipped bit %zu accepted\n", bit);
	}
	int tried = 0;
	for (size_t bit = 0; bit < 192 * 8; bit += 7) {
		size_t i = bit / 8;
		if (!((i >= 0x10 && i < 0x20) || (i >= 0x28 && i < 0x30)))
			tried++;
	}
	CHECK_EQ_INT(refused, tried);
	free(key), free(plain), free(enc);
}

TEST(snp_guest_msg_key_request_has_the_abi_layout)
{
	struct snp_key_req r = { .root_key = SNP_ROOT_KEY_VMRK, .key_sel = SNP_KEY_SEL_VCEK,
				 .fields = SNP_FIELD_MEASUREMENT | SNP_FIELD_POLICY, .vmpl = 2,
				 .guest_svn = 7, .tcb_version = 0xdb18000000000004ull };
	uint8_t p[SNP_KEY_REQ_SIZE];
	char err[128];
	CHECK_EQ_INT(snp_key_req_build(p, &r, err, sizeof err), 0);
	CHECK_EQ_INT(snp_get32(p), 1 | 1 << 1);
	CHECK_EQ_INT(snp_get32(p + 4), 0);
	CHECK_EQ_INT(snp_get64(p + 8), 9);
	CHECK_EQ_INT(snp_get32(p + 0x10), 2);
	CHECK_EQ_INT(snp_get32(p + 0x14), 7);
	CHECK(snp_get64(p + 0x18) == 0xdb18000000000004ull);
	struct snp_key_req b;
	CHECK_EQ_INT(snp_key_req_parse(p, sizeof p, &b), 0);
	CHECK(memcmp(&b, &r, sizeof r) == 0);
	r.fields = 1u << 6;
	CHECK_EQ_INT(snp_key_req_build(p, &r, err, sizeof err), -LLMK_EINVAL);
	CHECK(strstr(err, "field select") != NULL);
	r.fields = 0;
	r.vmpl = 4;
	CHECK_EQ_INT(snp_key_req_build(p, &r, err, sizeof err), -LLMK_EINVAL);
	CHECK(strstr(err, "VMPL 4") != NULL);
}

/* ---- a scripted firmware: answers with what the test says ---- */
enum fw_mode { FW_OK, FW_BAD_TYPE, FW_BAD_SEQNO, FW_BAD_TAG, FW_BIG_SIZE, FW_HV_ERROR,
	       FW_STATUS, FW_BUSY_ONCE, FW_SHORT_CERTS };
struct fw {
	uint8_t key[32];
	uint8_t req[SNP_PAGE], resp[SNP_PAGE];
	enum fw_mode mode;
	int calls, ext_calls;
	uint64_t seen_seqno;
};

static int fw_send(void *ctx, uint8_t *req_page, uint8_t *resp_page, uint8_t *certs,
		   uint32_t *certs_pages, uint64_t *info2)
{
	struct fw *f = ctx;
	struct snp_msg_hdr q, r;
	uint8_t in[SNP_PAGE], out[SNP_REPORT_RSP_SIZE] = { 0 };

	f->calls++;
	*info2 = 0;
	if (certs) {
		f->ext_calls++;
		if (f->mode == FW_SHORT_CERTS) {
			*certs_pages = 4;
			*info2 = (uint64_t)SNP_HV_ERR_INVALID_LEN << 32;
			return 0;
		}
		*certs_pages = 0;
	}
	if (f->mode == FW_HV_ERROR) {
		*info2 = 0x16;
		return 0;
	}
	if (f->mode == FW_BUSY_ONCE && f->calls == 1) {
		*info2 = (uint64_t)SNP_HV_ERR_BUSY << 32;
		return 0;
	}
	if (snp_msg_open(f->key, req_page, SNP_PAGE, &q, in, sizeof in))
		return -LLMK_EIO;
	f->seen_seqno = q.seqno;
	r = q;
	r.type = q.type + 1;
	r.seqno = q.seqno + 1;
	r.size = SNP_REPORT_RSP_SIZE;
	snp_put32(out + 4, SNP_REPORT_SIZE);
	memcpy(out + 0x20 + 0x50, in, 64); /* REPORT_DATA */
	if (f->mode == FW_BAD_TYPE)
		r.type = q.type;
	if (f->mode == FW_BAD_SEQNO)
		r.seqno = q.seqno + 3;
	if (f->mode == FW_STATUS)
		snp_put32(out, SNP_STATUS_INVALID_PARAM);
	snp_msg_seal(f->key, &r, out, resp_page, SNP_PAGE);
	if (f->mode == FW_BAD_TAG)
		resp_page[3] ^= 0x40;
	if (f->mode == FW_BIG_SIZE)
		resp_page[0x37] = 0x10; /* MSG_SIZE 0x1000 + header > a page */
	return 0;
}

struct rig {
	uint8_t secrets[SNP_PAGE];
	struct fw fw;
	struct snp_transport t;
	struct snp_guest g;
};

static void rig_init(struct rig *r, enum fw_mode mode)
{
	memset(r, 0, sizeof *r);
	for (int i = 0; i < 32; i++)
		r->fw.key[i] = (uint8_t)(0xa0 + i);
	memcpy(r->secrets + SNP_SECRETS_VMPCK0 + 32 * 2, r->fw.key, 32);
	r->fw.mode = mode;
	r->t = (struct snp_transport){ fw_send, &r->fw, r->fw.req, r->fw.resp };
}

static bool vmpck2_wiped(const struct rig *r)
{
	static const uint8_t zero[32];
	return memcmp(r->secrets + SNP_SECRETS_VMPCK0 + 64, zero, 32) == 0;
}

TEST(snp_guest_sequence_numbers_advance_by_two_per_round_trip)
{
	static struct rig r;
	uint8_t rd[64], rep[SNP_REPORT_SIZE];
	rig_init(&r, FW_OK);
	memset(rd, 0x5a, sizeof rd);
	CHECK_EQ_INT(snp_guest_init(&r.g, r.secrets, 2, &r.t), 0);
	CHECK_EQ_INT(snp_guest_next_seqno(&r.g), 1);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_INT(snp_guest_report(&r.g, rd, 0, 0, rep, NULL, NULL), 0);
		CHECK_EQ_INT(r.fw.seen_seqno, 1 + 2 * i);
	}
	CHECK_EQ_INT(snp_get32(r.secrets + SNP_SECRETS_OS_AREA + 8), 6);
	CHECK_EQ_INT(snp_guest_next_seqno(&r.g), 7);
	CHECK(memcmp(rep + 0x50, rd, 64) == 0);
	CHECK(!vmpck2_wiped(&r));
	/* a VMPCK that is all zeros is refused up front */
	CHECK_EQ_INT(snp_guest_init(&r.g, r.secrets, 3, &r.t), -LLMK_ENOENT);
	CHECK(strstr(snp_guest_error(&r.g), "VMPCK3") != NULL);
}

TEST(snp_guest_wipes_the_vmpck_on_any_bad_response)
{
	static struct rig r;
	static const struct {
		enum fw_mode mode;
		int err;
		const char *why;
	} cases[] = {
		{ FW_BAD_TYPE, -LLMK_EAUTH, "MSG_TYPE" },
		{ FW_BAD_SEQNO, -LLMK_EAUTH, "MSG_SEQNO 4 to request 1 (want 2)" },
		{ FW_BAD_TAG, -LLMK_EAUTH, "tag" },
		{ FW_BIG_SIZE, -LLMK_EFORMAT, "MSG_SIZE" },
		{ FW_HV_ERROR, -LLMK_EIO, "firmware 0x16" },
	};
	uint8_t rd[64] = { 1 }, rep[SNP_REPORT_SIZE];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		rig_init(&r, cases[i].mode);
		CHECK_EQ_INT(snp_guest_init(&r.g, r.secrets, 2, &r.t), 0);
		CHECK_EQ_INT(snp_guest_report(&r.g, rd, 0, 0, rep, NULL, NULL), cases[i].err);
		CHECK(strstr(snp_guest_error(&r.g), cases[i].why) != NULL);
		CHECK(strstr(snp_guest_error(&r.g), "VMPCK2 wiped") != NULL);
		CHECK(vmpck2_wiped(&r));
		/* the sequence number did not move, and nothing more is sent */
		CHECK_EQ_INT(snp_guest_next_seqno(&r.g), 1);
		int calls = r.fw.calls;
		CHECK_EQ_INT(snp_guest_report(&r.g, rd, 0, 0, rep, NULL, NULL), -LLMK_ENOENT);
		CHECK_EQ_INT(r.fw.calls, calls);
	}
}

TEST(snp_guest_firmware_status_is_an_error_but_keeps_the_vmpck)
{
	static struct rig r;
	uint8_t rd[64] = { 0 }, rep[SNP_REPORT_SIZE];
	rig_init(&r, FW_STATUS);
	CHECK_EQ_INT(snp_guest_init(&r.g, r.secrets, 2, &r.t), 0);
	CHECK_EQ_INT(snp_guest_report(&r.g, rd, 0, 0, rep, NULL, NULL), -LLMK_EIO);
	CHECK(strstr(snp_guest_error(&r.g), "status 0x16 (INVALID_PARAM)") != NULL);
	/* the round trip itself was sound: both numbers are used, the key stays */
	CHECK(!vmpck2_wiped(&r));
	CHECK_EQ_INT(snp_guest_next_seqno(&r.g), 3);
}

TEST(snp_guest_busy_is_retried_and_short_certificate_space_resends_plain)
{
	static struct rig r;
	uint8_t rd[64] = { 0 }, rep[SNP_REPORT_SIZE], certs[SNP_PAGE];
	uint32_t pages = 1;
	rig_init(&r, FW_BUSY_ONCE);
	CHECK_EQ_INT(snp_guest_init(&r.g, r.secrets, 2, &r.t), 0);
	CHECK_EQ_INT(snp_guest_report(&r.g, rd, 0, 0, rep, NULL, NULL), 0);
	CHECK_EQ_INT(r.fw.calls, 2);

	rig_init(&r, FW_SHORT_CERTS);
	CHECK_EQ_INT(snp_guest_init(&r.g, r.secrets, 2, &r.t), 0);
	CHECK_EQ_INT(snp_guest_report(&r.g, rd, 0, 0, rep, certs, &pages), 0);
	CHECK_EQ_INT(r.fw.ext_calls, 1);
	CHECK_EQ_INT(r.fw.calls, 2);
	CHECK_EQ_INT(pages, 0);
	CHECK(strstr(snp_guest_error(&r.g), "wants 4 pages") != NULL);
	CHECK_EQ_INT(snp_guest_next_seqno(&r.g), 3);
}

/* Issue 28 #4: the page count the hypervisor returns is clamped to what
 * the guest gave, the table copied once and its extent taken from the copy
 * (never past it). Beyond the two pages given lies "private" memory. */
TEST(snp_certs_copy_clamps_the_hypervisors_page_count_and_parses_the_copy)
{
	uint8_t *shared = malloc(3 * SNP_PAGE), *dst = malloc(2 * SNP_PAGE + 64);
	uint8_t guid[16] = { 0x63, 0xda, 0x75, 0x8d };

	memset(shared, 0, 2 * SNP_PAGE);
	memset(shared + 2 * SNP_PAGE, 0x5a, SNP_PAGE);
	memset(dst, 0xee, 2 * SNP_PAGE + 64);
	memcpy(shared, guid, 16);
	snp_put32(shared + 16, 72);
	snp_put32(shared + 20, 1000);
	CHECK_EQ_INT(snp_certs_copy(dst, shared, 0xffffffffu, 2), 1072);
	CHECK(dst[2 * SNP_PAGE] == 0xee); /* nothing past what was given */
	CHECK(memcmp(dst, shared, 2 * SNP_PAGE) == 0);
	/* an entry naming bytes past the copy: the extent stops at the copy */
	snp_put32(shared + 24 + 16, 0xfffff000u);
	snp_put32(shared + 24 + 20, 0x2000);
	memcpy(shared + 24, guid, 16);
	CHECK_EQ_INT(snp_certs_copy(dst, shared, 2, 2), 2 * SNP_PAGE);
	/* no pages: no table; one page: the all-zero entry ends it */
	CHECK_EQ_INT(snp_certs_copy(dst, shared, 0, 2), 0);
	snp_put32(shared + 20, 8);
	memset(shared + 24, 0, 24);
	CHECK_EQ_INT(snp_certs_copy(dst, shared, 1, 2), 80);
	free(shared);
	free(dst);
}
