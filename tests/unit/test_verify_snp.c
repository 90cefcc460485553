/*
 * tests/unit/test_verify_snp.c — tools/verify/snp_report.c and snp_chain.c
 * on the real SEV-SNP evidence in $LLMK_TESTDATA/attest/snp: every report
 * verifies with its product's chain; a flipped bit in every field region of
 * every report, and across every certificate (header, TBS, extension
 * values, signature), is refused with one reason; other products' chains,
 * other chips' VCEKs and wrong expected values are refused.
 *
 * The flips are a deterministic sample (first and last byte of each report
 * field, a stride through each certificate). LLMK_VERIFY_EXHAUSTIVE=1 flips
 * every bit of every report and a bit of every certificate byte instead
 * (minutes, not for make test).
 */
#include "test.h"

#include <stdlib.h>

#include "../../tools/verify/snp_report.h"

struct snp_case {
	const char *dir;      /* attest/snp/<dir> */
	const char *product;  /* roots/ark_<product>.pem */
	enum snp_product want;
	uint32_t version;
	int debug;            /* its policy allows DEBUG */
};

static const struct snp_case cases[] = {
	{"milan-v2", "milan", SNP_MILAN, 2, 1},
	{"milan-v2-b", "milan", SNP_MILAN, 2, 0},
	{"milan-v3", "milan", SNP_MILAN, 3, 0},
	{"genoa-v5", "genoa", SNP_GENOA, 5, 0},
	{"turin-v5", "turin", SNP_TURIN, 5, 0},
};
#define N_CASES (int)(sizeof cases / sizeof cases[0])

struct evidence {
	uint8_t *report, *vcek;
	size_t report_len, vcek_len;
	uint8_t der[8192];   /* ASK then ARK */
	struct pem_cert roots[2];
	int n_roots;
};

static void *read_attest(const char *rel, size_t *n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/attest/snp/%s", testdata_dir(), rel);
	void *p = test_read_file(path, n);
	if (!p)
		fprintf(stderr, "  cannot read %s\n", path);
	return p;
}

/* The AMD ASK and ARK of a product, from the strict PEM reader. */
static int load_roots(const char *product, uint8_t *der, size_t cap, struct pem_cert *roots, int *n)
{
	struct vfy_log log;
	const char *kind[2] = {"ask", "ark"};
	size_t used = 0;
	*n = 0;
	vfy_log_init(&log);
	for (int k = 0; k < 2; k++) {
		char rel[64];
		size_t len;
		int got;
		snprintf(rel, sizeof rel, "roots/%s_%s.pem", kind[k], product);
		uint8_t *text = read_attest(rel, &len);
		if (!text)
			return -1;
		int e = pem_certs(text, len, rel, der + used, cap - used, roots + *n, 2 - *n, &got, &log);
		free(text);
		if (e) {
			fprintf(stderr, "  %s\n", log.err);
			return -1;
		}
		used += roots[*n].len;
		*n += got;
	}
	return 0;
}

static int load(const struct snp_case *c, struct evidence *ev)
{
	char rel[64];
	memset(ev, 0, sizeof *ev);
	snprintf(rel, sizeof rel, "%s/report.bin", c->dir);
	ev->report = read_attest(rel, &ev->report_len);
	snprintf(rel, sizeof rel, "%s/vcek.der", c->dir);
	ev->vcek = read_attest(rel, &ev->vcek_len);
	if (!ev->report || !ev->vcek)
		return -1;
	return load_roots(c->product, ev->der, sizeof ev->der, ev->roots, &ev->n_roots);
}

static void unload(struct evidence *ev)
{
	free(ev->report);
	free(ev->vcek);
}

/* Chain and report in one go, as the verifier does. */
static int verify_all(const struct evidence *ev, const uint8_t *report, const uint8_t *vcek,
		      const struct snp_expect *x, struct vfy_log *log)
{
	static struct snp_chain ch;
	struct snp_report r;
	int e;
	vfy_log_init(log);
	e = snp_chain_verify(&ch, vcek, ev->vcek_len, ev->roots, ev->n_roots, log);
	if (!e)
		e = snp_report_verify(&ch, report, ev->report_len, x, &r, log);
	return e;
}

/* A refusal is a negative code and one line of reason. */
static int refused_with_one_reason(int e, const struct vfy_log *log)
{
	return e < 0 && log->err[0] && !strchr(log->err, '\n');
}

static int bit_for(size_t off)
{
	return (int)((off * 7 + 3) % 8);
}

#define NEED_TESTDATA()                                                         \
	do {                                                                    \
		if (!testdata_dir())                                            \
			SKIP("no LLMK_TESTDATA (attest/snp)");                  \
	} while (0)

TEST(snp_every_real_report_verifies_with_its_products_chain)
{
	NEED_TESTDATA();
	for (int i = 0; i < N_CASES; i++) {
		static struct evidence ev;
		static struct snp_chain ch;
		struct snp_expect x = {0};
		struct snp_report r;
		struct vfy_log log;
		if (load(&cases[i], &ev)) {
			CHECK(0);
			continue;
		}
		x.allow_debug = cases[i].debug;
		vfy_log_init(&log);
		int e = snp_chain_verify(&ch, ev.vcek, ev.vcek_len, ev.roots, ev.n_roots, &log);
		if (!e)
			e = snp_report_verify(&ch, ev.report, ev.report_len, &x, &r, &log);
		if (e)
			fprintf(stderr, "  %s: %s\n", cases[i].dir, log.err);
		CHECK_EQ_INT(e, 0);
		CHECK_EQ_INT(ch.product, cases[i].want);
		CHECK_EQ_INT(r.version, cases[i].version);
		CHECK(log.n >= 9); /* root, 3 links, product, format, 2 bindings, signature, policy */
		unload(&ev);
	}
}

TEST(snp_debug_policy_is_refused_unless_allowed)
{
	static struct evidence ev;
	struct vfy_log log;
	NEED_TESTDATA();
	if (load(&cases[0], &ev)) {
		CHECK(0);
		return;
	}
	int e = verify_all(&ev, ev.report, ev.vcek, NULL, &log);
	CHECK_EQ_INT(e, -LLMK_EAUTH);
	CHECK(strstr(log.err, "DEBUG") != NULL);
	unload(&ev);
}

/* Flip one bit at off; the report must be refused; then put it back. */
static int flip_refused(const struct snp_chain *ch, uint8_t *rep, size_t len, size_t off, int bit,
			const struct snp_expect *x, const char *dir)
{
	struct snp_report r;
	struct vfy_log log;
	vfy_log_init(&log);
	rep[off] ^= (uint8_t)(1 << bit);
	int e = snp_report_verify(ch, rep, len, x, &r, &log);
	rep[off] ^= (uint8_t)(1 << bit);
	if (!refused_with_one_reason(e, &log)) {
		fprintf(stderr, "  %s: bit %d of byte 0x%03zx accepted (%d: %s)\n", dir, bit, off, e, log.err);
		return 0;
	}
	return 1;
}

TEST(snp_flipped_bit_in_every_report_field_is_refused)
{
	const char *ex = getenv("LLMK_VERIFY_EXHAUSTIVE");
	int exhaustive = ex && ex[0] == '1';
	NEED_TESTDATA();
	for (int i = 0; i < N_CASES; i++) {
		static struct evidence ev;
		static struct snp_chain ch;
		struct snp_expect x = {0};
		struct snp_report r;
		struct vfy_log log;
		int flips = 0, refused = 0;
		if (load(&cases[i], &ev)) {
			CHECK(0);
			continue;
		}
		x.allow_debug = cases[i].debug;
		vfy_log_init(&log);
		CHECK_EQ_INT(snp_chain_verify(&ch, ev.vcek, ev.vcek_len, ev.roots, ev.n_roots, &log), 0);
		if (exhaustive) {
			for (size_t off = 0; off < ev.report_len; off++)
				for (int bit = 0; bit < 8; bit++, flips++)
					refused += flip_refused(&ch, ev.report, ev.report_len, off, bit, &x,
								cases[i].dir);
		} else {
			/* Every row of the layout, values and reserved ranges, at both ends. */
			for (int f = 0; f < snp_report_n_fields; f++) {
				const struct snp_field *fd = &snp_report_fields[f];
				size_t ends[2] = {fd->off, (size_t)fd->off + fd->len - 1};
				for (int k = 0; k < 2; k++, flips++)
					refused += flip_refused(&ch, ev.report, ev.report_len, ends[k],
								bit_for(ends[k]), &x, cases[i].dir);
			}
		}
		CHECK_EQ_INT(refused, flips);
		/* Untouched, it still verifies (the flips were put back). */
		CHECK_EQ_INT(snp_report_verify(&ch, ev.report, ev.report_len, &x, &r, &log), 0);
		unload(&ev);
	}
}

/* Flip one bit at lo, lo + stride, ... below hi in a certificate; each must be refused. */
static void flip_cert(struct evidence *ev, uint8_t *cert, size_t lo, size_t hi, size_t stride,
		      const struct snp_expect *x, const char *what, int *flips, int *refused)
{
	for (size_t off = lo; off < hi; off += stride) {
		struct vfy_log log;
		int bit = bit_for(off);
		cert[off] ^= (uint8_t)(1 << bit);
		int e = verify_all(ev, ev->report, ev->vcek, x, &log);
		cert[off] ^= (uint8_t)(1 << bit);
		(*flips)++;
		if (refused_with_one_reason(e, &log))
			(*refused)++;
		else
			fprintf(stderr, "  %s: bit %d of byte %zu accepted (%d: %s)\n", what, bit, off, e,
				log.err);
	}
}

/* Where a VCEK extension's value sits in the certificate. */
static void ext_range(const uint8_t *der, size_t len, const uint8_t *oid_tail, size_t *lo, size_t *hi)
{
	static const uint8_t arc[] = {0x06, 0x09, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x9c, 0x78, 0x01};
	*lo = *hi = 0;
	for (size_t i = 0; i + sizeof arc + 4 < len; i++)
		if (!memcmp(der + i, arc, sizeof arc) && der[i + sizeof arc] == oid_tail[0]) {
			size_t v = i + sizeof arc + 1; /* OCTET STRING tag */
			*lo = v + 2;
			*hi = *lo + der[v + 1];
			return;
		}
}

TEST(snp_flipped_bit_in_any_certificate_is_refused)
{
	const char *ex = getenv("LLMK_VERIFY_EXHAUSTIVE");
	size_t one = ex && ex[0] == '1' ? 1 : 0; /* then every byte (one bit each) */
	NEED_TESTDATA();
	for (int i = 0; i < N_CASES; i++) {
		static struct evidence ev;
		struct snp_expect x = {0};
		int flips = 0, refused = 0;
		size_t lo, hi;
		if (load(&cases[i], &ev)) {
			CHECK(0);
			continue;
		}
		x.allow_debug = cases[i].debug;
		/* The VCEK: a stride through it, its last byte, every byte of the hwID (.4). */
		ext_range(ev.vcek, ev.vcek_len, (const uint8_t[]){0x04}, &lo, &hi);
		CHECK(hi > lo);
		flip_cert(&ev, ev.vcek, 0, ev.vcek_len, one ? 1 : 31, &x, cases[i].dir, &flips, &refused);
		flip_cert(&ev, ev.vcek, ev.vcek_len - 1, ev.vcek_len, 1, &x, cases[i].dir, &flips, &refused);
		flip_cert(&ev, ev.vcek, lo, hi, 1, &x, cases[i].dir, &flips, &refused);
		/* Each TCB extension's value (.3.n: an OID one arc longer). */
		for (size_t off = 0; off + 14 < ev.vcek_len; off++)
			if (!memcmp(ev.vcek + off, "\x06\x0a\x2b\x06\x01\x04\x01\x9c\x78\x01\x03", 11)) {
				size_t v = off + 14; /* OCTET STRING contents: the INTEGER TLV */
				flip_cert(&ev, ev.vcek, v, v + ev.vcek[off + 13], 1, &x, cases[i].dir, &flips,
					  &refused);
			}
		/* The ASK and ARK once per product: a stride and the last byte. */
		if (i == 0 || strcmp(cases[i].product, cases[i - 1].product)) {
			for (int k = 0; k < 2; k++) {
				uint8_t *c = (uint8_t *)ev.roots[k].der;
				size_t n = ev.roots[k].len;
				flip_cert(&ev, c, 0, n, one ? 1 : 61, &x, k ? "ARK" : "ASK", &flips, &refused);
				flip_cert(&ev, c, n - 1, n, 1, &x, k ? "ARK" : "ASK", &flips, &refused);
			}
		}
		CHECK_EQ_INT(refused, flips);
		unload(&ev);
	}
}

TEST(snp_report_with_another_products_chain_is_refused)
{
	static struct evidence ev, other;
	struct vfy_log log;
	NEED_TESTDATA();
	if (load(&cases[2], &ev) || load(&cases[3], &other)) {
		CHECK(0);
		return;
	}
	/* Milan v3 report and VCEK under Genoa's ASK and ARK. */
	memcpy(ev.roots, other.roots, sizeof ev.roots);
	int e = verify_all(&ev, ev.report, ev.vcek, NULL, &log);
	CHECK(refused_with_one_reason(e, &log));
	CHECK(strstr(log.err, "SEV-Milan") != NULL);
	/* And a Milan chain given as two ASKs: one ARK is required. */
	load_roots("milan", ev.der, sizeof ev.der, ev.roots, &ev.n_roots);
	ev.roots[1] = ev.roots[0];
	e = verify_all(&ev, ev.report, ev.vcek, NULL, &log);
	CHECK_EQ_INT(e, -LLMK_EINVAL);
	unload(&ev);
	unload(&other);
}

TEST(snp_report_with_another_chips_vcek_is_refused)
{
	static struct evidence a, b;
	struct vfy_log log;
	NEED_TESTDATA();
	if (load(&cases[1], &a) || load(&cases[2], &b)) {
		CHECK(0);
		return;
	}
	/* milan-v2-b's report with milan-v3's VCEK: same product, another chip. */
	static struct snp_chain ch;
	struct snp_report r;
	vfy_log_init(&log);
	CHECK_EQ_INT(snp_chain_verify(&ch, b.vcek, b.vcek_len, a.roots, a.n_roots, &log), 0);
	int e = snp_report_verify(&ch, a.report, a.report_len, NULL, &r, &log);
	CHECK(refused_with_one_reason(e, &log));
	CHECK(strstr(log.err, "hwID") != NULL);
	unload(&a);
	unload(&b);
}

TEST(snp_wrong_expected_values_are_refused_and_right_ones_pass)
{
	static struct evidence ev;
	struct vfy_log log;
	uint8_t rd[64], m[48], hd[32];
	NEED_TESTDATA();
	if (load(&cases[3], &ev)) {
		CHECK(0);
		return;
	}
	memcpy(rd, ev.report + SNP_REPORT_DATA, 64);
	memcpy(m, ev.report + SNP_MEASUREMENT, 48);
	memcpy(hd, ev.report + SNP_HOST_DATA, 32);
	struct snp_expect x = {.report_data = rd, .measurement = m, .host_data = hd, .check_policy = 1,
			       .policy = vfy_le64(ev.report + SNP_POLICY)};
	CHECK_EQ_INT(verify_all(&ev, ev.report, ev.vcek, &x, &log), 0);
	struct {
		uint8_t *p;
		const char *name;
	} v[] = {{rd + 63, "report_data"}, {m, "measurement"}, {hd + 5, "host_data"}};
	for (int i = 0; i < 3; i++) {
		*v[i].p ^= 1;
		int e = verify_all(&ev, ev.report, ev.vcek, &x, &log);
		*v[i].p ^= 1;
		CHECK_EQ_INT(e, -LLMK_EAUTH);
		CHECK(strstr(log.err, v[i].name) != NULL);
	}
	x.policy ^= SNP_POLICY_SINGLE_SOCKET;
	CHECK_EQ_INT(verify_all(&ev, ev.report, ev.vcek, &x, &log), -LLMK_EAUTH);
	CHECK(strstr(log.err, "expected 0x") != NULL);
	unload(&ev);
}

TEST(snp_short_long_and_unsupported_reports_are_refused)
{
	static struct evidence ev;
	static struct snp_chain ch;
	struct snp_report r;
	struct vfy_log log;
	NEED_TESTDATA();
	if (load(&cases[3], &ev)) {
		CHECK(0);
		return;
	}
	vfy_log_init(&log);
	CHECK_EQ_INT(snp_chain_verify(&ch, ev.vcek, ev.vcek_len, ev.roots, ev.n_roots, &log), 0);
	CHECK_EQ_INT(snp_report_verify(&ch, ev.report, ev.report_len - 1, NULL, &r, &log), -LLMK_EFORMAT);
	uint8_t *big = calloc(1, ev.report_len + 1);
	memcpy(big, ev.report, ev.report_len);
	CHECK_EQ_INT(snp_report_verify(&ch, big, ev.report_len + 1, NULL, &r, &log), -LLMK_EFORMAT);
	free(big);
	/* Version 4 is not a layout we verify (2, 3, 5 are). */
	ev.report[SNP_VERSION] = 4;
	vfy_log_init(&log);
	CHECK_EQ_INT(snp_report_verify(&ch, ev.report, ev.report_len, NULL, &r, &log), -LLMK_ENOTSUP);
	CHECK(strstr(log.err, "VERSION 4") != NULL);
	unload(&ev);
}
