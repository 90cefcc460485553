/*
 * tests/unit/test_verify_x509.c — the verification library's readers:
 * tools/verify/der.c (strict DER), pem.c (strict PEM), x509.c and
 * x509_chain.c (certificates, one chain link), sig.c (RSASSA-PSS against
 * AMD's real signatures) and roots.c (the pinned vendor keys).
 */
#include "test.h"

#include <stdlib.h>

#include "../../tools/verify/der.h"
#include "../../tools/verify/pem.h"
#include "../../tools/verify/roots.h"
#include "../../tools/verify/sig.h"
#include "../../tools/verify/x509.h"

#include <bearssl.h>

static int der_read(const uint8_t *p, size_t n, struct der_tlv *t, struct vfy_log *log)
{
	struct der d;
	vfy_log_init(log);
	der_init(&d, p, n, "test", log);
	int e = der_next(&d, t, "value");
	return e ? e : der_end(&d, "value");
}

TEST(der_reader_refuses_every_non_canonical_encoding)
{
	struct der_tlv t;
	struct vfy_log log;
	struct der d;
	uint32_t v;
	const uint8_t ok[] = {0x30, 0x03, 0x02, 0x01, 0x05};
	const uint8_t long_short[] = {0x30, 0x81, 0x03, 0x02, 0x01, 0x05};
	const uint8_t indefinite[] = {0x30, 0x80, 0x02, 0x01, 0x05, 0x00, 0x00};
	const uint8_t lead_zero_len[] = {0x04, 0x82, 0x00, 0x81};
	const uint8_t past_end[] = {0x30, 0x04, 0x02, 0x01, 0x05};
	const uint8_t trailing[] = {0x30, 0x03, 0x02, 0x01, 0x05, 0x00};
	const uint8_t high_tag[] = {0x1f, 0x22, 0x00};

	CHECK_EQ_INT(der_read(ok, sizeof ok, &t, &log), 0);
	CHECK_EQ_INT(t.len, 3);
	CHECK_EQ_INT(der_read(long_short, sizeof long_short, &t, &log), -LLMK_EFORMAT);
	CHECK(strstr(log.err, "fewest") != NULL);
	CHECK_EQ_INT(der_read(indefinite, sizeof indefinite, &t, &log), -LLMK_EFORMAT);
	CHECK(strstr(log.err, "indefinite") != NULL);
	CHECK_EQ_INT(der_read(lead_zero_len, sizeof lead_zero_len, &t, &log), -LLMK_EFORMAT);
	CHECK_EQ_INT(der_read(past_end, sizeof past_end, &t, &log), -LLMK_EFORMAT);
	CHECK(strstr(log.err, "past the end") != NULL);
	CHECK_EQ_INT(der_read(trailing, sizeof trailing, &t, &log), -LLMK_EFORMAT);
	CHECK_EQ_INT(der_read(high_tag, sizeof high_tag, &t, &log), -LLMK_EFORMAT);

	/* INTEGERs: minimal, non-negative. */
	const uint8_t five[] = {0x02, 0x01, 0x05}, padded[] = {0x02, 0x02, 0x00, 0x05},
		      negative[] = {0x02, 0x01, 0x80}, big[] = {0x02, 0x02, 0x00, 0x80};
	struct {
		const uint8_t *p;
		size_t n;
		int want;
	} ints[] = {{five, 3, 0}, {padded, 4, -LLMK_EFORMAT}, {negative, 3, -LLMK_EFORMAT}, {big, 4, 0}};
	for (int i = 0; i < 4; i++) {
		vfy_log_init(&log);
		der_init(&d, ints[i].p, ints[i].n, "test", &log);
		CHECK_EQ_INT(der_next(&d, &t, "int"), 0);
		CHECK_EQ_INT(der_small_uint(&d, &t, "int", 1000, &v), ints[i].want);
	}
	vfy_log_init(&log);
	der_init(&d, big, 4, "test", &log);
	der_next(&d, &t, "int");
	CHECK_EQ_INT(der_small_uint(&d, &t, "int", 100, &v), -LLMK_EFORMAT); /* 128 > 100 */
}

static uint8_t *read_pem(const char *name, size_t *n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/attest/%s", testdata_dir(), name);
	return test_read_file(path, n);
}

static int pem_count(const char *text, size_t n, struct vfy_log *log)
{
	static uint8_t der[16384];
	struct pem_cert c[4];
	int count;
	vfy_log_init(log);
	int e = pem_certs((const uint8_t *)text, n, "test.pem", der, sizeof der, c, 4, &count, log);
	return e ? e : count;
}

TEST(pem_reader_takes_strict_blocks_with_lf_or_crlf_only)
{
	struct vfy_log log;
	size_t n, m;
	if (!testdata_dir())
		SKIP("no LLMK_TESTDATA (attest/snp/roots)");
	char *lf = (char *)read_pem("snp/roots/ark_milan.pem", &n);
	char *crlf = (char *)read_pem("snp/roots/ark_turin.pem", &m);
	if (!lf || !crlf) {
		CHECK(0);
		return;
	}
	CHECK_EQ_INT(pem_count(lf, n, &log), 1);
	CHECK_EQ_INT(pem_count(crlf, m, &log), 1);
	char *buf = malloc(2 * n + 64);

	/* Two blocks, empty lines between and after, one final NUL: accepted. */
	memcpy(buf, lf, n);
	memcpy(buf + n, "\n", 1);
	memcpy(buf + n + 1, lf, n);
	memcpy(buf + 2 * n + 1, "\n\n", 3);
	CHECK_EQ_INT(pem_count(buf, 2 * n + 4, &log), 2);

	/* Text before the block. */
	memcpy(buf, "subject=ARK\n", 12);
	memcpy(buf + 12, lf, n);
	CHECK_EQ_INT(pem_count(buf, n + 12, &log), -LLMK_EFORMAT);
	CHECK(strstr(log.err, "outside") != NULL);

	/* No END line. */
	CHECK_EQ_INT(pem_count(lf, n - 26, &log), -LLMK_EFORMAT);

	/* A 63-character line inside the body. */
	memcpy(buf, lf, n);
	memmove(buf + 40, buf + 41, n - 41);
	CHECK_EQ_INT(pem_count(buf, n - 1, &log), -LLMK_EFORMAT);

	/* Non-canonical padding: the last data character carries bits the
	 * padding says are unused ("Q==" decodes like "R=="). */
	memcpy(buf, lf, n);
	char *pad = strstr(buf, "==\n");
	CHECK(pad && pad[-1] == 'Q');
	if (pad) {
		pad[-1] = 'R';
		CHECK_EQ_INT(pem_count(buf, n, &log), -LLMK_EFORMAT);
		CHECK(strstr(log.err, "canonical") != NULL);
	}

	/* A lone CR inside a line is not a line end. */
	memcpy(buf, lf, n);
	buf[100] = '\r';
	CHECK_EQ_INT(pem_count(buf, n, &log), -LLMK_EFORMAT);
	free(buf);
	free(lf);
	free(crlf);
}

struct parsed {
	uint8_t der[8192];
	struct pem_cert c[4];
	int n;
	struct x509_cert x[4];
};

static int parse_file(const char *name, struct parsed *p)
{
	struct vfy_log log;
	size_t len;
	uint8_t *text = read_pem(name, &len);
	vfy_log_init(&log);
	if (!text || pem_certs(text, len, name, p->der, sizeof p->der, p->c, 4, &p->n, &log)) {
		free(text);
		return -1;
	}
	free(text);
	for (int i = 0; i < p->n; i++)
		if (x509_parse(&p->x[i], p->c[i].der, p->c[i].len, name, &log)) {
			fprintf(stderr, "  %s\n", log.err);
			return -1;
		}
	return 0;
}

TEST(rsa_pss_verifies_amds_signatures_and_nothing_else)
{
	static struct parsed ark;
	uint8_t h[48];
	br_sha384_context s;
	if (!testdata_dir())
		SKIP("no LLMK_TESTDATA (attest/snp/roots)");
	if (parse_file("snp/roots/ark_genoa.pem", &ark)) {
		CHECK(0);
		return;
	}
	const struct x509_cert *c = &ark.x[0];
	CHECK_EQ_INT(c->alg, X509_ALG_RSA_PSS_SHA384);
	br_sha384_init(&s);
	br_sha384_update(&s, c->tbs.p, c->tbs.n);
	br_sha384_out(&s, h);
	CHECK_EQ_INT(sig_rsa_pss_sha384_ok(c->rsa_n.p, c->rsa_n.n, c->rsa_e.p, c->rsa_e.n, h, c->sig.p,
					   c->sig.n), 1);
	h[47] ^= 1;
	CHECK_EQ_INT(sig_rsa_pss_sha384_ok(c->rsa_n.p, c->rsa_n.n, c->rsa_e.p, c->rsa_e.n, h, c->sig.p,
					   c->sig.n), 0);
	h[47] ^= 1;
	CHECK_EQ_INT(sig_rsa_pss_sha384_ok(c->rsa_n.p, c->rsa_n.n, c->rsa_e.p, c->rsa_e.n, h, c->sig.p,
					   c->sig.n - 1), 0);
}

TEST(x509_refuses_an_unknown_critical_extension)
{
	static struct parsed ask;
	struct x509_cert c;
	struct vfy_log log;
	static const uint8_t key_usage[] = {0x06, 0x03, 0x55, 0x1d, 0x0f, 0x01, 0x01, 0xff};
	if (!testdata_dir())
		SKIP("no LLMK_TESTDATA (attest/snp/roots)");
	if (parse_file("snp/roots/ask_milan.pem", &ask)) {
		CHECK(0);
		return;
	}
	CHECK(ask.x[0].key_usage & X509_KU_KEY_CERT_SIGN);
	/* keyUsage (critical) renamed 2.5.29.16: a critical extension we do not know. */
	uint8_t *d = (uint8_t *)ask.c[0].der;
	uint8_t *at = NULL;
	for (size_t i = 0; i + sizeof key_usage <= ask.c[0].len; i++)
		if (!memcmp(d + i, key_usage, sizeof key_usage))
			at = d + i;
	CHECK(at != NULL);
	if (!at)
		return;
	at[4] = 0x10;
	vfy_log_init(&log);
	CHECK_EQ_INT(x509_parse(&c, d, ask.c[0].len, "ASK", &log), -LLMK_ENOTSUP);
	CHECK(strstr(log.err, "unknown critical extension 2.5.29.16") != NULL);
}

TEST(x509_link_checks_names_path_length_and_signature)
{
	static struct parsed intel;
	struct vfy_log log;
	if (!testdata_dir())
		SKIP("no LLMK_TESTDATA (attest/tdx)");
	if (parse_file("tdx/pck_chain.pem", &intel) || intel.n != 3) {
		CHECK(0);
		return;
	}
	struct x509_cert *pck = &intel.x[0], *ca = &intel.x[1], *root = &intel.x[2];
	vfy_log_init(&log);
	CHECK_EQ_INT(x509_check_issued(ca, root, 0, &log), 0);
	CHECK_EQ_INT(x509_check_issued(pck, ca, 0, &log), 0);
	/* The root did not issue the PCK certificate. */
	CHECK_EQ_INT(x509_check_issued(pck, root, 0, &log), -LLMK_EAUTH);
	CHECK(strstr(log.err, "is not the") != NULL);
	/* The platform CA has pathLenConstraint 0: no CA may sit below it. */
	vfy_log_init(&log);
	CHECK_EQ_INT(x509_check_issued(pck, ca, 1, &log), -LLMK_EAUTH);
	CHECK(strstr(log.err, "pathLenConstraint") != NULL);
	CHECK(x509_self_issued(root) && !x509_self_issued(ca));
}

TEST(vfy_roots_pin_amds_arks_and_intels_root_only)
{
	static struct parsed p;
	const char *files[] = {"snp/roots/ark_milan.pem", "snp/roots/ark_genoa.pem", "snp/roots/ark_turin.pem"};
	const char *products[] = {"Milan", "Genoa", "Turin"};
	if (!testdata_dir())
		SKIP("no LLMK_TESTDATA (attest)");
	for (int i = 0; i < 3; i++) {
		if (parse_file(files[i], &p)) {
			CHECK(0);
			continue;
		}
		const struct vfy_root *r = vfy_root_find(&p.x[0]);
		CHECK(r && !strcmp(r->product, products[i]) && !strcmp(r->vendor, "AMD"));
	}
	if (!parse_file("snp/roots/ask_milan.pem", &p))
		CHECK(vfy_root_find(&p.x[0]) == NULL);
	if (!parse_file("tdx/pck_chain.pem", &p)) {
		CHECK(vfy_root_find(&p.x[0]) == NULL);
		CHECK(vfy_root_find(&p.x[1]) == NULL);
		const struct vfy_root *r = vfy_root_find(&p.x[2]);
		CHECK(r && !strcmp(r->vendor, "Intel"));
	}
}
