/*
 * tests/unit/test_evidence.c — shell/evidence.c: the report data against a
 * SHA-512 computed independently (Python's hashlib over the documented
 * layout), the bundle's records, and base64 against RFC 4648 §10.
 */
#include "test.h"

#include "../../shell/evidence.h"

static void inputs(struct evidence_inputs *in)
{
	memset(in, 0, sizeof *in);
	memcpy(in->nonce, "abc", 3);
	in->nonce_len = 3;
	for (int i = 0; i < 32; i++) {
		in->model_digest[i] = (uint8_t)i;
		in->pubkey[i] = (uint8_t)(32 + i);
	}
	strcpy(in->build_id, "0123456789abcdef");
	evidence_config_digest("seed 42\n", 8, in->config_digest);
}

static void hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

TEST(evidence_report_data_is_sha512_of_the_documented_layout)
{
	struct evidence_inputs in;
	inputs(&in);
	uint8_t rd[64];
	char h[129];
	CHECK_EQ_INT(evidence_report_data(&in, rd), 0);
	hex(rd, 64, h);
	/* python3: hashlib.sha512(b'LLMK-REPORT-V2\0\0' + bytes([3]) + b'abc' + bytes(61)
	 *   + bytes(range(32)) + bytes(range(32, 64)) + b'0123456789abcdef'
	 *   + hashlib.sha256(b'seed 42\n').digest()) */
	CHECK_STR(h, "678327259a1a101c5a7e2c17d620c8ed1a4fa6466ef93f865f084aefadfb4e89"
		     "7a47a5419182ce07fba4ae7c96f834a55a9ad24765732aed1b77a7cb93c42949");
	/* every input moves it */
	uint8_t rd2[64];
	in.nonce[63] = 1; /* past the nonce's length: padding must stay zero */
	in.nonce_len = 64;
	CHECK_EQ_INT(evidence_report_data(&in, rd2), 0);
	CHECK(memcmp(rd, rd2, 64) != 0);
	inputs(&in);
	in.model_digest[31] ^= 1;
	evidence_report_data(&in, rd2);
	CHECK(memcmp(rd, rd2, 64) != 0);
	inputs(&in);
	in.build_id[15] = 'e';
	evidence_report_data(&in, rd2);
	CHECK(memcmp(rd, rd2, 64) != 0);
	/* what the guest was told: another configuration, another report data */
	inputs(&in);
	evidence_config_digest("seed 43\n", 8, in.config_digest);
	evidence_report_data(&in, rd2);
	CHECK(memcmp(rd, rd2, 64) != 0);
	inputs(&in);
	in.nonce_len = 0;
	CHECK_EQ_INT(evidence_report_data(&in, rd2), -LLMK_EINVAL);
	in.nonce_len = 65;
	CHECK_EQ_INT(evidence_report_data(&in, rd2), -LLMK_EINVAL);
}

/* The bundle carries the config digest the report data binds. */
static void r_cfg_is_the_inputs(const struct evidence_rec *recs, int n,
				const struct evidence_inputs *in)
{
	const struct evidence_rec *c = evidence_find(recs, n, ATTEST_REC_CONFIG_DIGEST, NULL);
	CHECK(c && c->len == 32 && memcmp(c->val, in->config_digest, 32) == 0);
}

TEST(evidence_bundle_round_trips_and_refuses_bad_records)
{
	struct evidence_inputs in;
	inputs(&in);
	uint8_t buf[1024], rd[64];
	size_t len = 0;
	CHECK_EQ_INT(evidence_begin(buf, sizeof buf, &len, "none", &in, rd), 0);
	CHECK_EQ_INT(attest_rec_put(buf, sizeof buf, &len, ATTEST_REC_TPM_QUOTE, "quote", 5), 0);
	struct evidence_rec recs[16];
	char err[128];
	int n = evidence_parse(buf, len, recs, 16, err, sizeof err);
	CHECK_EQ_INT(n, 8);
	r_cfg_is_the_inputs(recs, n, &in);
	bool dup;
	const struct evidence_rec *r = evidence_find(recs, n, ATTEST_REC_REPORT_DATA, &dup);
	CHECK(r && r->len == 64 && memcmp(r->val, rd, 64) == 0 && !dup);
	r = evidence_find(recs, n, ATTEST_REC_PROVIDER, &dup);
	CHECK(r && r->len == 4 && memcmp(r->val, "none", 4) == 0);
	CHECK(evidence_find(recs, n, ATTEST_REC_SNP_REPORT, &dup) == NULL && !dup);
	/* a second record of a type is ambiguous */
	size_t l2 = len;
	CHECK_EQ_INT(attest_rec_put(buf, sizeof buf, &l2, ATTEST_REC_TPM_QUOTE, "x", 1), 0);
	n = evidence_parse(buf, l2, recs, 16, err, sizeof err);
	CHECK(evidence_find(recs, n, ATTEST_REC_TPM_QUOTE, &dup) == NULL && dup);
	/* truncated anywhere inside the last record, or a bad magic or flags: refused */
	for (size_t cut = len - 12; cut < len; cut++)
		CHECK_EQ_INT(evidence_parse(buf, cut, recs, 16, err, sizeof err), -LLMK_EFORMAT);
	buf[0] ^= 1;
	CHECK_EQ_INT(evidence_parse(buf, len, recs, 16, err, sizeof err), -LLMK_EFORMAT);
	CHECK(strstr(err, "magic") != NULL);
	buf[0] ^= 1;
	buf[EVIDENCE_MAGIC_LEN + 2] = 1;
	CHECK_EQ_INT(evidence_parse(buf, len, recs, 16, err, sizeof err), -LLMK_EFORMAT);
	CHECK(strstr(err, "flags") != NULL);
	buf[EVIDENCE_MAGIC_LEN + 2] = 0;
	CHECK_EQ_INT(evidence_parse(buf, len, recs, 3, err, sizeof err), -LLMK_EFORMAT);
	/* a record that does not fit is not written */
	size_t l3 = 0;
	CHECK_EQ_INT(attest_rec_put(buf, 10, &l3, ATTEST_REC_NONCE, "abc", 3), -LLMK_ERANGE);
	CHECK_EQ_INT(l3, 0);
}

