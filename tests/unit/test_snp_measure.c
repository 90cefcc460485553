/*
 * tests/unit/test_snp_measure.c — tools/verify/snp_ovmf.c and snp_measure.c:
 * every digest of attest/snp-measure/expected.json (virtee/sev-snp-measure's
 * values for two real OVMF tails), each input moving the digest, the chain
 * and the page layouts checked field by field, and launches the image
 * cannot make refused. (The parser's own tests: test_snp_ovmf.c.)
 */
#include "test.h"

#include <stdlib.h>

#include <bearssl.h>

#include "../../kernel/platform.h"
#include "../../tools/verify/snp_measure.h"
#include "../../tools/verify/snp_ovmf.h"
#include "snp_syn.h"

static void to_hex(const uint8_t *b, size_t n, char *out)
{
	static const char hx[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hx[b[i] >> 4];
		out[2 * i + 1] = hx[b[i] & 15];
	}
	out[2 * n] = 0;
}

static void sha256_of(const void *d, size_t n, uint8_t out[32])
{
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, d, n);
	br_sha256_out(&c, out);
}

/* ---- a small JSON reader, enough for expected.json: objects, arrays,
 * strings (with the simple escapes), numbers, null, true, false ---- */

struct jv {
	int kind; /* 's' string, 'n' number, '0' null, 'b' bool, '{' object, '[' array */
	char s[160];
	int truncated; /* the string was longer than s */
	long long num;
};

struct jp {
	const char *p, *end;
	int bad;
};

static void jws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

static int jlit(struct jp *j, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n)) {
		j->bad = 1;
		return 0;
	}
	j->p += n;
	return 1;
}

/* Returns 1 if the string did not fit in cap (out holds its start). */
static int jstring(struct jp *j, char *out, size_t cap)
{
	size_t n = 0;
	int cut = 0;
	out[0] = 0;
	if (!jlit(j, "\""))
		return 0;
	while (j->p < j->end && *j->p != '"') {
		char c = *j->p++;
		if (c == '\\' && j->p < j->end) {
			c = *j->p++;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c; /* \" \\ \/ stand for themselves */
		}
		if (n + 1 < cap)
			out[n++] = c;
		else
			cut = 1;
	}
	out[n] = 0;
	jlit(j, "\"");
	return cut;
}

static void jvalue(struct jp *j, struct jv *v);

/* Calls each(key, value-start) for every member; each must consume the value. */
static void jobject(struct jp *j, void (*each)(struct jp *, const char *, void *), void *arg)
{
	char key[64];
	jws(j);
	if (!jlit(j, "{"))
		return;
	jws(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return;
	}
	while (!j->bad) {
		jws(j);
		if (jstring(j, key, sizeof key))
			key[0] = 0; /* no key this reads is that long */
		jws(j);
		jlit(j, ":");
		each(j, key, arg);
		jws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		jlit(j, "}");
		return;
	}
}

static void jskip_member(struct jp *j, const char *key, void *arg)
{
	struct jv v;
	(void)key, (void)arg;
	jvalue(j, &v);
}

static void jvalue(struct jp *j, struct jv *v)
{
	jws(j);
	memset(v, 0, sizeof *v);
	if (j->p >= j->end) {
		j->bad = 1;
		return;
	}
	switch (*j->p) {
	case '"':
		v->kind = 's';
		v->truncated = jstring(j, v->s, sizeof v->s);
		return;
	case 'n':
		v->kind = '0';
		jlit(j, "null");
		return;
	case 't':
		v->kind = 'b', v->num = 1;
		jlit(j, "true");
		return;
	case 'f':
		v->kind = 'b';
		jlit(j, "false");
		return;
	case '{':
		v->kind = '{';
		jobject(j, jskip_member, NULL);
		return;
	case '[':
		v->kind = '[';
		j->p++;
		jws(j);
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			return;
		}
		while (!j->bad) {
			struct jv e;
			jvalue(j, &e);
			jws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			jlit(j, "]");
			return;
		}
		return;
	default: {
		char *e;
		v->kind = 'n';
		v->num = strtoll(j->p, &e, 10);
		if (e == j->p)
			j->bad = 1;
		j->p = e;
	}
	}
}

/* ---- expected.json's cases ---- */

struct snp_case {
	char ovmf[64], vcpu_sig[24], features[24], digest[SNP_DIGEST_SIZE * 2 + 8];
	char kernel[64], initrd[64], append[128];
	int has_kernel, has_initrd, has_append; /* 0 when null */
	long long vcpus;
};

static void case_member(struct jp *j, const char *key, void *arg)
{
	struct snp_case *c = arg;
	struct jv v;
	static const struct {
		const char *key;
		size_t off, cap;
		size_t has; /* offset of the has_ flag, or (size_t)-1 */
	} strs[] = {
		{"ovmf", offsetof(struct snp_case, ovmf), 64, (size_t)-1},
		{"vcpu_sig", offsetof(struct snp_case, vcpu_sig), 24, (size_t)-1},
		{"guest_features", offsetof(struct snp_case, features), 24, (size_t)-1},
		{"digest", offsetof(struct snp_case, digest), SNP_DIGEST_SIZE * 2 + 8, (size_t)-1},
		{"kernel", offsetof(struct snp_case, kernel), 64, offsetof(struct snp_case, has_kernel)},
		{"initrd", offsetof(struct snp_case, initrd), 64, offsetof(struct snp_case, has_initrd)},
		{"append", offsetof(struct snp_case, append), 128, offsetof(struct snp_case, has_append)},
	};

	jvalue(j, &v);
	if (!strcmp(key, "vcpus")) {
		c->vcpus = v.kind == 'n' ? v.num : -1;
		return;
	}
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		if (strcmp(key, strs[i].key))
			continue;
		if (v.kind == 's' && !v.truncated && strlen(v.s) < strs[i].cap) {
			strcpy((char *)c + strs[i].off, v.s);
			if (strs[i].has != (size_t)-1)
				*(int *)((char *)c + strs[i].has) = 1;
		} else if (v.kind != '0' || strs[i].has == (size_t)-1) {
			j->bad = 1;
		}
	}
}

struct expected {
	struct snp_case cases[32];
	int n_cases;
	char hash_ovmf[64], hash_digest[SNP_DIGEST_SIZE * 2 + 8];
};

static void hash_member(struct jp *j, const char *key, void *arg)
{
	struct expected *e = arg;
	struct jv v;
	jvalue(j, &v);
	if (v.kind == 's' && !strcmp(key, "ovmf") && strlen(v.s) < sizeof e->hash_ovmf)
		strcpy(e->hash_ovmf, v.s);
	if (v.kind == 's' && !strcmp(key, "digest") && strlen(v.s) < sizeof e->hash_digest)
		strcpy(e->hash_digest, v.s);
}

static void top_member(struct jp *j, const char *key, void *arg)
{
	struct expected *e = arg;
	struct jv v;

	if (!strcmp(key, "ovmf_hash")) {
		jobject(j, hash_member, e);
		return;
	}
	if (strcmp(key, "cases")) {
		jvalue(j, &v);
		return;
	}
	jws(j);
	if (!jlit(j, "["))
		return;
	while (!j->bad) {
		if (e->n_cases == (int)(sizeof e->cases / sizeof e->cases[0])) {
			j->bad = 1;
			return;
		}
		memset(&e->cases[e->n_cases], 0, sizeof e->cases[0]);
		jobject(j, case_member, &e->cases[e->n_cases]);
		e->n_cases++;
		jws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		jlit(j, "]");
		return;
	}
}

/* expected.json read and parsed, or NULL with the reason in why and
 * *missing set when the file is absent (a skip) rather than unreadable
 * (a failure). dir gets the folder. */
static struct expected *load_expected(char *dir, size_t dirlen, char *why, size_t whylen,
				      int *missing)
{
	const char *td = testdata_dir();
	char path[600];
	struct expected *e;
	struct jp j;
	size_t len;
	char *text;
	int n = 0;

	*missing = 1;
	if (!td) {
		snprintf(why, whylen, "no testdata folder (LLMK_TESTDATA)");
		return NULL;
	}
	snprintf(dir, dirlen, "%.400s/attest/snp-measure", td);
	snprintf(path, sizeof path, "%.500s/expected.json", dir);
	text = test_read_file(path, &len);
	if (!text) {
		snprintf(why, whylen, "%.150s is missing", path);
		return NULL;
	}
	*missing = 0;
	e = calloc(1, sizeof *e);
	j.p = text, j.end = text + len, j.bad = 0;
	jobject(&j, top_member, e);
	/* every case the file has was read: one "vcpus" per case */
	for (const char *q = text; (q = strstr(q, "\"vcpus\"")); q++)
		n++;
	free(text);
	if (j.bad || n != e->n_cases || e->n_cases == 0) {
		snprintf(why, whylen, "%.100s: not the JSON this test reads (%d of %d cases parsed)",
			 path, e->n_cases, n);
		free(e);
		return NULL;
	}
	return e;
}

static uint8_t *load_ovmf(const char *dir, const char *name, size_t *len)
{
	char path[600];
	snprintf(path, sizeof path, "%.500s/%.64s", dir, name);
	return test_read_file(path, len);
}

TEST(snp_measure_reproduces_every_digest_of_expected_json)
{
	char dir[500], why[200];
	int missing;
	struct expected *e = load_expected(dir, sizeof dir, why, sizeof why, &missing);

	if (!e && missing)
		SKIP("%s", why);
	if (!e) {
		fprintf(stderr, "  %s\n", why);
		CHECK(e != NULL);
		return;
	}
	for (int i = 0; i < e->n_cases; i++) {
		struct snp_case *c = &e->cases[i];
		struct snp_measure_params p = {0};
		struct snp_kernel_hashes h;
		struct snp_ovmf o;
		uint8_t d[SNP_DIGEST_SIZE], *img;
		char hex[SNP_DIGEST_SIZE * 2 + 1], err[256];
		size_t len = 0;

		img = load_ovmf(dir, c->ovmf, &len);
		CHECK(img != NULL);
		if (!img)
			continue;
		/* kernel and initrd are "" (an empty file, what /dev/null gives) or null */
		CHECK(!c->has_kernel || !c->kernel[0]);
		CHECK(!c->has_initrd || !c->initrd[0]);
		p.vcpus = (unsigned)c->vcpus;
		p.vcpu_sig = (uint32_t)strtoul(c->vcpu_sig, NULL, 16);
		p.guest_features = strtoull(c->features, NULL, 16);
		if (c->has_kernel) {
			sha256_of("", 0, h.kernel);
			sha256_of("", 0, h.initrd);
			snp_cmdline_hash(c->has_append ? c->append : NULL, h.cmdline);
			p.hashes = &h;
		}
		CHECK_EQ_INT(snp_ovmf_parse(&o, img, len, err, sizeof err), 0);
		CHECK_EQ_INT(snp_measure(&o, &p, d, err, sizeof err), 0);
		to_hex(d, sizeof d, hex);
		if (strcmp(hex, c->digest))
			fprintf(stderr, "  case %d (%s, %lld vCPUs, features %s, kernel %s): %s\n", i,
				c->ovmf, c->vcpus, c->features, c->has_kernel ? "yes" : "no", err);
		CHECK_STR(hex, c->digest);
		free(img);
	}
	free(e);
}

TEST(snp_ld_over_the_ovmf_pages_alone_gives_expected_json_ovmf_hash)
{
	char dir[500], why[200], hex[SNP_DIGEST_SIZE * 2 + 1];
	int missing;
	struct expected *e = load_expected(dir, sizeof dir, why, sizeof why, &missing);
	struct snp_ld ld;
	uint8_t *img;
	size_t len = 0;

	if (!e && missing)
		SKIP("%s", why);
	if (!e) {
		fprintf(stderr, "  %s\n", why);
		CHECK(e != NULL);
		return;
	}
	CHECK(e->hash_ovmf[0] && e->hash_digest[0]);
	img = load_ovmf(dir, e->hash_ovmf, &len);
	CHECK(img != NULL);
	if (img) {
		snp_ld_init(&ld);
		snp_ld_normal(&ld, SNP_OVMF_FOUR_GB - len, img, len);
		to_hex(ld.digest, sizeof ld.digest, hex);
		CHECK_STR(hex, e->hash_digest);
	}
	free(img);
	free(e);
}

TEST(snp_measure_digest_changes_with_every_input)
{
	struct syn *s = malloc(sizeof *s);
	struct snp_kernel_hashes h, h2;
	struct snp_measure_params p = {2, 0x800F12, 0x21, NULL}, q;
	uint8_t base[SNP_DIGEST_SIZE], d[SNP_DIGEST_SIZE], again[SNP_DIGEST_SIZE];

	syn_default(s);
	sha256_of("kernel", 6, h.kernel);
	sha256_of("", 0, h.initrd);
	snp_cmdline_hash("console=ttyS0", h.cmdline);
	p.hashes = &h;
	CHECK_EQ_INT(measure_syn(s->img, &p, base), 0);
	CHECK_EQ_INT(measure_syn(s->img, &p, again), 0);
	CHECK(memcmp(base, again, sizeof base) == 0); /* deterministic */

#define CHANGED(what)                                                          \
	do {                                                                   \
		memset(d, 0, sizeof d);                                        \
		CHECK_EQ_INT(measure_syn(s->img, &q, d), 0);                   \
		if (!memcmp(d, base, sizeof d))                                \
			fprintf(stderr, "  unchanged by %s\n", what);          \
		CHECK(memcmp(d, base, sizeof d) != 0);                         \
	} while (0)

	q = p, q.vcpus = 3;
	CHANGED("vcpus");
	q = p, q.vcpus = 1;
	CHANGED("vcpus 1");
	q = p, q.vcpu_sig = 0xA00F11;
	CHANGED("vcpu_sig");
	q = p, q.guest_features = 0x1;
	CHANGED("guest_features");
	q = p, q.hashes = NULL;
	CHANGED("no kernel");
	h2 = h, h2.kernel[31] ^= 1, q = p, q.hashes = &h2;
	CHANGED("kernel");
	h2 = h, h2.initrd[0] ^= 0x80, q = p, q.hashes = &h2;
	CHANGED("initrd");
	h2 = h, q = p, q.hashes = &h2;
	snp_cmdline_hash("console=ttyS1", h2.cmdline);
	CHANGED("cmdline");
	q = p;
	s->img[4095] ^= 1; /* a firmware byte */
	CHANGED("an OVMF byte");
	s->img[4095] ^= 1;
	free(s);
#undef CHANGED
}

TEST(snp_measure_of_one_vcpu_needs_no_ap_reset_block)
{
	struct syn *s = malloc(sizeof *s);
	struct snp_measure_params p = {1, 0x800F12, 0x1, NULL};
	uint8_t d[SNP_DIGEST_SIZE];

	syn_build(s, amdsev_like, 5, 0x805c00, 0);
	CHECK_EQ_INT(measure_syn(s->img, &p, d), 0);
	free(s);
}

/* The chain written out by hand for the synthetic image: an independent
 * PAGE_INFO encoder and the section walk, against snp_measure(). */
static void ref_page(uint8_t ld[48], uint8_t type, uint64_t gpa, const uint8_t contents[48])
{
	uint8_t pi[0x70] = {0};
	br_sha384_context c;
	memcpy(pi, ld, 48);
	memcpy(pi + 48, contents, 48);
	pi[96] = 0x70;
	pi[98] = type;
	for (int i = 0; i < 8; i++)
		pi[104 + i] = (uint8_t)(gpa >> (8 * i));
	br_sha384_init(&c);
	br_sha384_update(&c, pi, sizeof pi);
	br_sha384_out(&c, ld);
}

static void ref_hash_page(uint8_t ld[48], uint64_t gpa, const uint8_t *page)
{
	uint8_t h[48];
	br_sha384_context c;
	br_sha384_init(&c);
	br_sha384_update(&c, page, 4096);
	br_sha384_out(&c, h);
	ref_page(ld, 1, gpa, h);
}

TEST(snp_measure_equals_the_page_info_chain_written_out_by_hand)
{
	struct syn *s = malloc(sizeof *s);
	struct snp_kernel_hashes h;
	struct snp_measure_params p = {2, 0x800F12, 0x21, &h};
	uint8_t got[48], ld[48] = {0}, zero[48] = {0}, page[4096], vh[48];
	br_sha384_context c;

	syn_default(s);
	memset(&h, 0xab, sizeof h);
	CHECK_EQ_INT(measure_syn(s->img, &p, got), 0);

	ref_hash_page(ld, 0xFFFFE000, s->img);
	ref_hash_page(ld, 0xFFFFF000, s->img + 4096);
	ref_page(ld, 3, 0x800000, zero);
	ref_page(ld, 3, 0x801000, zero);
	ref_page(ld, 5, 0x802000, zero);
	ref_page(ld, 6, 0x803000, zero);
	ref_page(ld, 3, 0x804000, zero);
	memset(page, 0, sizeof page);
	snp_hash_table_build(page + 0xc00, &h);
	ref_hash_page(ld, 0x805000, page);
	for (int cpu = 0; cpu < 2; cpu++) {
		snp_vmsa_build(page, cpu ? 0x80b004 : 0xfffffff0, 0x800F12, 0x21);
		br_sha384_init(&c);
		br_sha384_update(&c, page, 4096);
		br_sha384_out(&c, vh);
		ref_page(ld, 2, 0xFFFFFFFFF000ull, vh);
	}
	CHECK(memcmp(got, ld, 48) == 0);
	free(s);
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

TEST(snp_vmsa_build_puts_each_register_at_its_apm_offset)
{
	uint8_t *v = malloc(4096);

	snp_vmsa_build(v, 0x0080b004, 0x800F12, 0x21);
	/* CS: selector 0xf000, attrib 0x9b, limit 0xffff, base from eip (APM B-4 0x010) */
	CHECK(v[0x10] == 0x00 && v[0x11] == 0xf0 && v[0x12] == 0x9b && v[0x14] == 0xff);
	CHECK(rd64(v + 0x18) == 0x00800000);
	CHECK(rd64(v + 0x178) == 0xb004); /* RIP */
	CHECK(rd64(v + 0x310) == 0x800F12); /* RDX */
	CHECK(rd64(v + 0x3b0) == 0x21);     /* SEV_FEATURES */
	CHECK(rd64(v + 0xd0) == 0x1000);    /* EFER.SVME */
	CHECK(rd64(v + 0x268) == 0x0007040600070406ull); /* G_PAT */
	CHECK(v[0x408] == 0x80 && v[0x409] == 0x1f);     /* MXCSR */
	CHECK(v[0x410] == 0x7f && v[0x411] == 0x03);     /* x87 FCW */
	CHECK(v[0x92] == 0x8b && v[0x72] == 0x82);       /* TR, LDTR attribs */
	/* nothing past the x87 control word */
	int tail = 0;
	for (int i = 0x412; i < 4096; i++)
		tail |= v[i];
	CHECK(tail == 0);
	snp_vmsa_build(v, 0xfffffff0, 0, 1);
	CHECK(rd64(v + 0x18) == 0xffff0000 && rd64(v + 0x178) == 0xfff0);
	free(v);
}

TEST(snp_hash_table_build_lays_out_guids_lengths_and_hashes)
{
	/* 9438d606-4f22-4cc9-b479-a793d411fd21 and 97d02dd8-bd20-4c94-aa78-e7714d36ab2a
	 * as EFI_GUIDs lie in memory */
	static const uint8_t hdr[16] = {0x06, 0xd6, 0x38, 0x94, 0x22, 0x4f, 0xc9, 0x4c,
					0xb4, 0x79, 0xa7, 0x93, 0xd4, 0x11, 0xfd, 0x21};
	static const uint8_t cmd[16] = {0xd8, 0x2d, 0xd0, 0x97, 0x20, 0xbd, 0x94, 0x4c,
					0xaa, 0x78, 0xe7, 0x71, 0x4d, 0x36, 0xab, 0x2a};
	struct snp_kernel_hashes h;
	uint8_t t[SNP_HASH_TABLE_PADDED], want_cmd[32];

	memset(h.cmdline, 1, 32), memset(h.initrd, 2, 32), memset(h.kernel, 3, 32);
	snp_hash_table_build(t, &h);
	CHECK(memcmp(t, hdr, 16) == 0);
	CHECK(t[16] == 168 && t[17] == 0);
	CHECK(memcmp(t + 18, cmd, 16) == 0);
	CHECK(t[34] == 50 && t[35] == 0);
	CHECK(t[36] == 1 && t[36 + 50] == 2 && t[36 + 100] == 3 && t[36 + 100 + 31] == 3);
	for (int i = 168; i < 176; i++)
		CHECK(t[i] == 0);
	/* the command line is hashed with its NUL; no -append hashes "\0" */
	sha256_of("a b\0", 4, want_cmd);
	snp_cmdline_hash("a b", h.cmdline);
	CHECK(memcmp(h.cmdline, want_cmd, 32) == 0);
	sha256_of("\0", 1, want_cmd);
	snp_cmdline_hash(NULL, h.cmdline);
	CHECK(memcmp(h.cmdline, want_cmd, 32) == 0);
}

TEST(snp_measure_splits_a_hash_table_that_straddles_two_pages)
{
	static const uint32_t secs[][3] = {{0x805000, 0x2000, SNP_OVMF_KERNEL_HASHES}};
	struct syn *s = malloc(sizeof *s);
	struct snp_kernel_hashes h;
	struct snp_measure_params p = {1, 0x800F12, 0x1, &h};
	uint8_t got[48], ld[48] = {0}, *pages = calloc(1, 8192), page[4096], vh[48];
	br_sha384_context c;

	memset(&h, 0x5a, sizeof h);
	syn_build(s, secs, 1, 0x805000 + 4096 - 100, 0);
	CHECK_EQ_INT(measure_syn(s->img, &p, got), 0);
	ref_hash_page(ld, 0xFFFFE000, s->img);
	ref_hash_page(ld, 0xFFFFF000, s->img + 4096);
	snp_hash_table_build(pages + 4096 - 100, &h);
	ref_hash_page(ld, 0x805000, pages);
	ref_hash_page(ld, 0x806000, pages + 4096);
	snp_vmsa_build(page, 0xfffffff0, 0x800F12, 0x1);
	br_sha384_init(&c);
	br_sha384_update(&c, page, 4096);
	br_sha384_out(&c, vh);
	ref_page(ld, 2, 0xFFFFFFFFF000ull, vh);
	CHECK(memcmp(got, ld, 48) == 0);
	free(pages);
	free(s);
}

TEST(snp_measure_refuses_parameters_the_image_cannot_launch)
{
	static const uint32_t no_hashes[][3] = {{0x800000, 0x1000, SNP_OVMF_SEC_MEM}};
	struct syn *s = malloc(sizeof *s);
	struct snp_kernel_hashes h;
	struct snp_measure_params p = {1, 0x800F12, 0x1, NULL};

	memset(&h, 0, sizeof h);
	syn_default(s);
	p.vcpus = 0;
	expect_refused(s->img, SYN_LEN, &p, -LLMK_ERANGE, "vcpus 0");
	p.vcpus = SNP_MAX_VCPUS + 1;
	expect_refused(s->img, SYN_LEN, &p, -LLMK_ERANGE, "vcpus 4097");
	p.vcpus = 1, p.guest_features = 0x20;
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EINVAL, "SNPActive");
	p.guest_features = 1;
	syn_build(s, no_hashes, 1, 0, 0);
	p.hashes = &h;
	expect_refused(s->img, SYN_LEN, &p, -LLMK_ENOTSUP, "no SNP_KERNEL_HASHES section");
	p.hashes = NULL, p.vcpus = 2;
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "no SEV-ES reset block");
	/* hashes section without the hash table entry, or with it elsewhere */
	p.vcpus = 1, p.hashes = &h;
	syn_build(s, amdsev_like, 5, 0, 0);
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "no SEV hash table entry");
	syn_build(s, amdsev_like, 5, 0x805f80, 0); /* 176 bytes do not fit before the end */
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "does not hold");
	syn_build(s, amdsev_like, 5, 0x804c00, 0); /* below the section */
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "does not hold");
	free(s);
}
