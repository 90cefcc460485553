/*
 * tests/unit/test_snp_sim.c — the SEV-SNP firmware simulator (tools/host/
 * snp_sim*.c) driven through the guest's message layer: reports of version
 * 3 and 5 at the ABI's offsets, signed by the VCEK; keys derived the same
 * across launches of the same image on the same chip and differently
 * otherwise; replayed and damaged messages refused; injected faults wipe
 * the guest's VMPCK; the test chain checked by openssl, independently.
 */
#define _GNU_SOURCE /* memmem */
#include "test.h"

#include <stdlib.h>

#include "../../tools/host/snp_sim.h"
#include "../../shell/evidence.h"

struct launch {
	struct snp_sim sim;
	struct snp_sim_link link;
	struct snp_guest g;
};

static int boot(struct launch *l, const struct snp_sim_config *c)
{
	if (snp_sim_init(&l->sim, c))
		return -1;
	snp_sim_link(&l->link, &l->sim, NULL);
	return snp_guest_init(&l->g, l->sim.secrets, c->vmpl, &l->link.t);
}

/* ECDSA P-384 over SHA-384 of bytes 0..0x29F, R and S little-endian. */
static bool report_verifies(const uint8_t *rep, const br_ec_public_key *pk)
{
	uint8_t h[48], sig[96];
	br_sha384_context c;
	br_sha384_init(&c);
	br_sha384_update(&c, rep, 0x2a0);
	br_sha384_out(&c, h);
	for (int i = 0; i < 48; i++) {
		sig[47 - i] = rep[0x2a0 + i];
		sig[95 - i] = rep[0x2e8 + i];
	}
	return br_ecdsa_i31_vrfy_raw(br_ec_get_default(), h, 48, pk, sig, 96) == 1;
}

TEST(snp_sim_reports_v3_carry_the_launch_and_verify_with_the_vcek)
{
	static struct launch l;
	struct snp_sim_config c;
	uint8_t rd[64], rep[SNP_REPORT_SIZE];
	snp_sim_config_default(&c);
	for (int i = 0; i < 64; i++)
		rd[i] = (uint8_t)(i * 7);
	CHECK_EQ_INT(boot(&l, &c), 0);
	CHECK_EQ_INT(snp_guest_report(&l.g, rd, 0, SNP_KEY_SEL_DEFAULT, rep, NULL, NULL), 0);
	CHECK_EQ_INT(snp_get32(rep + 0x000), 3);
	CHECK(snp_get64(rep + 0x008) == c.policy);
	CHECK_EQ_INT(snp_get32(rep + 0x034), 1); /* ECDSA P-384 with SHA-384 */
	CHECK(memcmp(rep + 0x050, rd, 64) == 0);
	CHECK(memcmp(rep + 0x090, c.measurement, 48) == 0);
	CHECK(snp_get64(rep + 0x180) == c.tcb);
	CHECK_EQ_INT(rep[0x188], 0x19);
	CHECK(memcmp(rep + 0x1a0, l.sim.chip_id, 64) == 0);
	CHECK(snp_get64(rep + 0x1f8) == 0); /* no mitigation vectors before v5 */
	CHECK(report_verifies(rep, &l.sim.vcek_pub));
	rep[0x90] ^= 1;
	CHECK(!report_verifies(rep, &l.sim.vcek_pub));
}

TEST(snp_sim_reports_v5_add_the_mitigation_vectors)
{
	static struct launch l;
	struct snp_sim_config c;
	uint8_t rd[64] = { 9 }, rep[SNP_REPORT_SIZE];
	snp_sim_config_default(&c);
	c.report_version = 5;
	c.launch_mit = 1;
	c.current_mit = 3;
	CHECK_EQ_INT(boot(&l, &c), 0);
	CHECK_EQ_INT(snp_guest_report(&l.g, rd, 0, 0, rep, NULL, NULL), 0);
	CHECK_EQ_INT(snp_get32(rep), 5);
	CHECK_EQ_INT(snp_get64(rep + 0x1f8), 1);
	CHECK_EQ_INT(snp_get64(rep + 0x200), 3);
	CHECK(report_verifies(rep, &l.sim.vcek_pub));
	/* a VCEK of another chip does not verify it */
	static struct launch other;
	c.chip_seed[0] ^= 1;
	CHECK_EQ_INT(boot(&other, &c), 0);
	CHECK(!report_verifies(rep, &other.sim.vcek_pub));
}

TEST(snp_sim_refuses_bad_report_requests_with_a_status)
{
	static struct launch l;
	struct snp_sim_config c;
	uint8_t rd[64] = { 0 }, rep[SNP_REPORT_SIZE];
	snp_sim_config_default(&c);
	c.vmpl = 1;
	CHECK_EQ_INT(boot(&l, &c), 0);
	CHECK_EQ_INT(snp_guest_report(&l.g, rd, 0, 0, rep, NULL, NULL), -LLMK_EIO);
	CHECK(strstr(snp_guest_error(&l.g), "INVALID_PARAM") != NULL);
	CHECK_EQ_INT(snp_guest_report(&l.g, rd, 1, SNP_KEY_SEL_VLEK, rep, NULL, NULL), -LLMK_EIO);
	CHECK(strstr(snp_guest_error(&l.g), "INVALID_KEY") != NULL);
	CHECK_EQ_INT(snp_guest_report(&l.g, rd, 1, SNP_KEY_SEL_VCEK, rep, NULL, NULL), 0);
	CHECK_EQ_INT(snp_get32(rep + 0x30), 1);
}

TEST(snp_sim_derived_keys_follow_the_chip_and_the_selected_fields)
{
	static struct launch a, b;
	struct snp_sim_config c;
	struct snp_key_req r = { .root_key = SNP_ROOT_KEY_VCEK,
				 .fields = SNP_FIELD_MEASUREMENT | SNP_FIELD_POLICY };
	uint8_t k1[32], k2[32];
	snp_sim_config_default(&c);
	CHECK_EQ_INT(boot(&a, &c), 0);
	CHECK_EQ_INT(snp_guest_derive_key(&a.g, &r, k1), 0);
	/* a reboot: new VMPCKs, the same key */
	CHECK_EQ_INT(boot(&b, &c), 0);
	CHECK(memcmp(a.sim.vmpck, b.sim.vmpck, sizeof a.sim.vmpck) != 0);
	CHECK_EQ_INT(snp_guest_derive_key(&b.g, &r, k2), 0);
	CHECK(memcmp(k1, k2, 32) == 0);
	/* another image: another key */
	c.measurement[47] ^= 1;
	CHECK_EQ_INT(boot(&b, &c), 0);
	CHECK_EQ_INT(snp_guest_derive_key(&b.g, &r, k2), 0);
	CHECK(memcmp(k1, k2, 32) != 0);
	/* ... unless the measurement is not mixed in */
	r.fields = SNP_FIELD_POLICY;
	CHECK_EQ_INT(snp_guest_derive_key(&a.g, &r, k1), 0);
	CHECK_EQ_INT(snp_guest_derive_key(&b.g, &r, k2), 0);
	CHECK(memcmp(k1, k2, 32) == 0);
	/* another policy, another chip: another key */
	snp_sim_config_default(&c);
	c.policy |= 1ull << 19;
	CHECK_EQ_INT(boot(&b, &c), 0);
	CHECK_EQ_INT(snp_guest_derive_key(&b.g, &r, k2), 0);
	CHECK(memcmp(k1, k2, 32) != 0);
	snp_sim_config_default(&c);
	c.chip_seed[31] ^= 0x80;
	CHECK_EQ_INT(boot(&b, &c), 0);
	CHECK_EQ_INT(snp_guest_derive_key(&b.g, &r, k2), 0);
	CHECK(memcmp(k1, k2, 32) != 0);
	/* the message layer's key equals the simulator's own derivation */
	uint8_t k3[32];
	CHECK_EQ_INT(snp_sim_derive(&b.sim, &r, k3), 0);
	CHECK(memcmp(k2, k3, 32) == 0);
}

TEST(snp_sim_refuses_keys_the_guest_may_not_have)
{
	static struct launch l;
	struct snp_sim_config c;
	uint8_t k[32];
	snp_sim_config_default(&c);
	c.guest_svn = 2;
	CHECK_EQ_INT(boot(&l, &c), 0);
	struct snp_key_req r = { .root_key = SNP_ROOT_KEY_VMRK };
	CHECK_EQ_INT(snp_guest_derive_key(&l.g, &r, k), -LLMK_EIO);
	CHECK(strstr(snp_guest_error(&l.g), "INVALID_KEY") != NULL); /* no VMRK */
	r = (struct snp_key_req){ .fields = SNP_FIELD_GUEST_SVN, .guest_svn = 3 };
	CHECK_EQ_INT(snp_guest_derive_key(&l.g, &r, k), -LLMK_EIO);
	r.guest_svn = 2;
	CHECK_EQ_INT(snp_guest_derive_key(&l.g, &r, k), 0);
	r = (struct snp_key_req){ .fields = SNP_FIELD_TCB_VERSION, .tcb_version = c.tcb + 1 };
	CHECK_EQ_INT(snp_guest_derive_key(&l.g, &r, k), -LLMK_EIO);
	r.tcb_version = c.tcb - 1; /* an older boot loader SPL: allowed */
	CHECK_EQ_INT(snp_guest_derive_key(&l.g, &r, k), 0);
	/* with a VMRK the VMRK root works and differs from the VCEK's */
	c.have_vmrk = true;
	memset(c.vmrk, 0x42, 32);
	CHECK_EQ_INT(boot(&l, &c), 0);
	uint8_t kv[32];
	r = (struct snp_key_req){ .root_key = SNP_ROOT_KEY_VMRK };
	CHECK_EQ_INT(snp_guest_derive_key(&l.g, &r, k), 0);
	r.root_key = SNP_ROOT_KEY_VCEK;
	CHECK_EQ_INT(snp_guest_derive_key(&l.g, &r, kv), 0);
	CHECK(memcmp(k, kv, 32) != 0);
}

TEST(snp_sim_refuses_replayed_and_damaged_requests)
{
	static struct launch l;
	struct snp_sim_config c;
	uint8_t rd[64] = { 0 }, rep[SNP_REPORT_SIZE], saved[SNP_PAGE], resp[SNP_PAGE];
	uint64_t info2;
	snp_sim_config_default(&c);
	CHECK_EQ_INT(boot(&l, &c), 0);
	CHECK_EQ_INT(snp_guest_report(&l.g, rd, 0, 0, rep, NULL, NULL), 0);
	memcpy(saved, l.link.req, SNP_PAGE);
	/* the same message again: its sequence number is used */
	snp_sim_request(&l.sim, saved, resp, &info2);
	CHECK_EQ_INT(info2, SNP_STATUS_INVALID_PARAM);
	CHECK(strstr(l.sim.err, "MSG_SEQNO 1, want 3") != NULL);
	/* a fresh number with a damaged tag */
	CHECK_EQ_INT(snp_guest_report(&l.g, rd, 0, 0, rep, NULL, NULL), 0);
	memcpy(saved, l.link.req, SNP_PAGE);
	snp_put64(saved + 0x20, 5);
	snp_sim_request(&l.sim, saved, resp, &info2);
	CHECK_EQ_INT(info2, SNP_STATUS_INVALID_PARAM);
	CHECK(strstr(l.sim.err, "tag") != NULL);
	/* a size that is not the type's */
	saved[0x36] = 0x20;
	snp_sim_request(&l.sim, saved, resp, &info2);
	CHECK(strstr(l.sim.err, "MSG_SIZE 32") != NULL);
}

TEST(snp_sim_injected_faults_reach_the_guest_as_errors)
{
	static struct launch l;
	static const struct {
		enum snp_sim_fault f;
		int err;
		const char *why;
		bool wiped;
	} cases[] = {
		{ SNP_SIM_FAULT_STATUS, -LLMK_EIO, "INVALID_PARAM", false },
		{ SNP_SIM_FAULT_SEQNO, -LLMK_EAUTH, "MSG_SEQNO", true },
		{ SNP_SIM_FAULT_TAG, -LLMK_EAUTH, "tag", true },
		{ SNP_SIM_FAULT_TYPE, -LLMK_EAUTH, "MSG_TYPE", true },
		{ SNP_SIM_FAULT_FW_ERROR, -LLMK_EIO, "firmware 0x16", true },
	};
	struct snp_sim_config c;
	uint8_t rd[64] = { 0 }, rep[SNP_REPORT_SIZE];
	snp_sim_config_default(&c);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		CHECK_EQ_INT(boot(&l, &c), 0);
		snp_sim_fault(&l.sim, cases[i].f, 1);
		CHECK_EQ_INT(snp_guest_report(&l.g, rd, 0, 0, rep, NULL, NULL), cases[i].err);
		CHECK(strstr(snp_guest_error(&l.g), cases[i].why) != NULL);
		int again = snp_guest_report(&l.g, rd, 0, 0, rep, NULL, NULL);
		CHECK_EQ_INT(again, cases[i].wiped ? -LLMK_ENOENT : 0);
	}
	/* a damaged report signature is the verifier's to find */
	CHECK_EQ_INT(boot(&l, &c), 0);
	snp_sim_fault(&l.sim, SNP_SIM_FAULT_REPORT_SIG, 1);
	CHECK_EQ_INT(snp_guest_report(&l.g, rd, 0, 0, rep, NULL, NULL), 0);
	CHECK(!report_verifies(rep, &l.sim.vcek_pub));
}

static int run(const char *cmd)
{
	int s = system(cmd);
	return s == -1 ? -1 : WEXITSTATUS(s);
}

static void write_pem(const char *dir, const char *name, const uint8_t *der, size_t n)
{
	char path[512], pem[4096];
	long m = snp_sim_pem(der, n, pem, sizeof pem);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f) {
		fwrite(pem, 1, m > 0 ? (size_t)m : 0, f);
		fclose(f);
	}
}

TEST(snp_sim_test_chain_verifies_with_openssl_and_names_the_chip)
{
	static struct launch l;
	static struct snp_sim_chain ch;
	struct snp_sim_config c;
	char cmd[1024];
	snp_sim_config_default(&c);
	CHECK_EQ_INT(boot(&l, &c), 0);
	CHECK_EQ_INT(snp_sim_chain_make(&ch, &l.sim, 2048), 0);
	/* the VCEK certificate carries the simulator's public key and CHIP_ID */
	CHECK(memmem(ch.vcek, ch.vcek_len, l.sim.vcek_q, 97) != NULL);
	CHECK(memmem(ch.vcek, ch.vcek_len, l.sim.chip_id, 64) != NULL);
	/* the table: three entries, a zero entry, the certificates */
	uint8_t table[4 * SNP_SIM_CERT_MAX];
	long n = snp_sim_cert_table(&ch, table, sizeof table);
	CHECK_EQ_INT(n, 96 + (long)(ch.ark_len + ch.ask_len + ch.vcek_len));
	CHECK_EQ_INT(snp_get32(table + 24 * 2 + 16), 96 + ch.ark_len + ch.ask_len);
	CHECK(memcmp(table + 96 + ch.ark_len + ch.ask_len, ch.vcek, ch.vcek_len) == 0);

	if (run("openssl version >/dev/null 2>&1") != 0)
		SKIP("openssl is not installed (the independent check of the chain)");
	const char *d = test_tmpdir();
	write_pem(d, "ark.pem", ch.ark, ch.ark_len);
	write_pem(d, "ask.pem", ch.ask, ch.ask_len);
	write_pem(d, "vcek.pem", ch.vcek, ch.vcek_len);
	snprintf(cmd, sizeof cmd,
		 "openssl verify -CAfile %s/ark.pem -untrusted %s/ask.pem %s/vcek.pem >/dev/null 2>&1",
		 d, d, d);
	CHECK_EQ_INT(run(cmd), 0);
	snprintf(cmd, sizeof cmd,
		 "openssl x509 -in %s/vcek.pem -noout -text 2>/dev/null | grep -q 'rsassaPss'", d);
	CHECK_EQ_INT(run(cmd), 0);
	/* one flipped byte in the VCEK's signature: refused */
	ch.vcek[ch.vcek_len - 10] ^= 1;
	write_pem(d, "vcek.pem", ch.vcek, ch.vcek_len);
	snprintf(cmd, sizeof cmd,
		 "openssl verify -CAfile %s/ark.pem -untrusted %s/ask.pem %s/vcek.pem >/dev/null 2>&1",
		 d, d, d);
	CHECK(run(cmd) != 0);
}

TEST(snp_sim_provider_is_absent_unless_asked_and_names_itself)
{
	static uint8_t buf[16384];
	struct evidence_rec recs[8];
	uint8_t rd[64] = { 3 };
	size_t len = 0;
	char err[128];

	unsetenv("LLMK_SNP_SIM");
	snp_sim_provider_reset();
	CHECK(snp_sim_provider_why_absent() != NULL);
	CHECK(strstr(snp_sim_provider_why_absent(), "LLMK_SNP_SIM") != NULL);
	CHECK_EQ_INT(snp_sim_provider_evidence(rd, buf, sizeof buf, &len), -LLMK_ENOENT);

	setenv("LLMK_SNP_SIM", "1", 1);
	snp_sim_provider_reset();
	CHECK(snp_sim_provider_why_absent() == NULL);
	memcpy(buf, EVIDENCE_MAGIC, 8);
	len = 8;
	CHECK_EQ_INT(snp_sim_provider_evidence(rd, buf, sizeof buf, &len), 0);
	int n = evidence_parse(buf, len, recs, 8, err, sizeof err);
	CHECK_EQ_INT(n, 3);
	bool dup;
	const struct evidence_rec *r = evidence_find(recs, n, ATTEST_REC_SNP_REPORT, &dup);
	CHECK(r && r->len == SNP_REPORT_SIZE && memcmp(r->val + 0x50, rd, 64) == 0);
	CHECK(r && report_verifies(r->val, &snp_sim_provider_sim()->vcek_pub));
	r = evidence_find(recs, n, ATTEST_REC_SIMULATED, &dup);
	CHECK(r && r->len > 7 && memcmp(r->val, "snp-sim", 7) == 0);
	r = evidence_find(recs, n, ATTEST_REC_SNP_CERTS, &dup);
	CHECK(r && r->len > 96);

	/* a config file: bad lines are refused with the line named */
	char path[512];
	snprintf(path, sizeof path, "%s/snp-sim.cfg", test_tmpdir());
	FILE *f = fopen(path, "w");
	fprintf(f, "# a Genoa-like launch\nreport-version 5\nproduct Genoa\nvmpl 9\n");
	fclose(f);
	setenv("LLMK_SNP_SIM", path, 1);
	snp_sim_provider_reset();
	CHECK(snp_sim_provider_why_absent() != NULL);
	CHECK(strstr(snp_sim_provider_why_absent(), "line 4: bad value '9' for vmpl") != NULL);
	unsetenv("LLMK_SNP_SIM");
	snp_sim_provider_reset();
}
