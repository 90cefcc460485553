/*
 * tests/unit/snp_syn.h — a synthetic OVMF image for the tests of
 * tools/verify/snp_ovmf.c and snp_measure.c: two pages, the footer table and
 * the SEV metadata in the last, sections and entries as the test asks.
 */
#ifndef TEST_SNP_SYN_H
#define TEST_SNP_SYN_H

#include <stdio.h>
#include <string.h>

#include "../../kernel/platform.h"
#include "../../tools/verify/snp_measure.h"
#include "../../tools/verify/snp_ovmf.h"
#include "test.h"

#define SYN_LEN 8192

struct syn {
	uint8_t img[SYN_LEN];
	size_t end;     /* where the next entry ends (entries grow downwards) */
	size_t meta_at; /* offset of the "ASEV" header */
};

static inline void syn_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
}

static inline void syn_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void syn_entry(struct syn *s, const struct snp_guid *g, const void *data, size_t n)
{
	s->end -= n + 18;
	memcpy(s->img + s->end, data, n);
	syn_put16(s->img + s->end + n, (uint32_t)(n + 18));
	snp_guid_bytes(g, s->img + s->end + n + 2);
}

static const struct snp_guid g_footer = {
	0x96b582de, 0x1fb2, 0x45f7, {0xba, 0xea, 0xa3, 0x66, 0xc5, 0x5a, 0x08, 0x2d}};
static const struct snp_guid g_reset = {
	0x00f771de, 0x1a7e, 0x4fcb, {0x89, 0x0e, 0x68, 0xc7, 0x7e, 0x2f, 0xb4, 0x4e}};
static const struct snp_guid g_hashes = {
	0x7255371f, 0x3a3b, 0x4b04, {0x92, 0x7b, 0x1d, 0xa6, 0xef, 0xa8, 0xd4, 0x54}};
static const struct snp_guid g_meta = {
	0xdc886566, 0x984a, 0x4798, {0xa7, 0x5e, 0x55, 0x85, 0xa7, 0xbf, 0x67, 0xcc}};

/* sections: {gpa, size, type}; hash_gpa 0 leaves the hash table entry out,
 * reset 0 the reset block. */
static inline void syn_build(struct syn *s, const uint32_t (*secs)[3], unsigned n, uint32_t hash_gpa,
		      uint32_t reset)
{
	uint8_t d[8];

	memset(s, 0, sizeof *s);
	for (size_t i = 0; i < 4096; i++) /* some firmware bytes to measure */
		s->img[i] = (uint8_t)(i * 7 + 1);
	s->end = SYN_LEN - 0x20 - 16 - 2;
	snp_guid_bytes(&g_footer, s->img + SYN_LEN - 0x30);
	s->meta_at = 4096 + 0x100;
	memcpy(s->img + s->meta_at, "ASEV", 4);
	syn_put32(s->img + s->meta_at + 4, 16 + 12 * n);
	syn_put32(s->img + s->meta_at + 8, 1);
	syn_put32(s->img + s->meta_at + 12, n);
	for (unsigned i = 0; i < n; i++)
		for (int k = 0; k < 3; k++)
			syn_put32(s->img + s->meta_at + 16 + 12 * i + 4 * k, secs[i][k]);
	syn_put32(d, (uint32_t)(SYN_LEN - s->meta_at));
	syn_entry(s, &g_meta, d, 4);
	if (hash_gpa) {
		syn_put32(d, hash_gpa);
		syn_put32(d + 4, 0x400);
		syn_entry(s, &g_hashes, d, 8);
	}
	if (reset) {
		syn_put32(d, reset);
		syn_entry(s, &g_reset, d, 4);
	}
	/* the table's length: entries + its own u16 and GUID */
	syn_put16(s->img + SYN_LEN - 0x32, (uint32_t)(SYN_LEN - 0x20 - s->end));
}

static const uint32_t amdsev_like[][3] = {
	{0x800000, 0x2000, SNP_OVMF_SEC_MEM}, {0x802000, 0x1000, SNP_OVMF_SECRETS},
	{0x803000, 0x1000, SNP_OVMF_CPUID},   {0x804000, 0x1000, SNP_OVMF_SVSM_CAA},
	{0x805000, 0x1000, SNP_OVMF_KERNEL_HASHES},
};

static inline void syn_default(struct syn *s)
{
	syn_build(s, amdsev_like, 5, 0x805c00, 0x80b004);
}

static inline int measure_syn(const uint8_t *img, const struct snp_measure_params *p,
		       uint8_t d[SNP_DIGEST_SIZE])
{
	struct snp_ovmf o;
	char err[256];
	int rc = snp_ovmf_parse(&o, img, SYN_LEN, err, sizeof err);
	if (rc == 0)
		rc = snp_measure(&o, p, d, err, sizeof err);
	if (rc)
		fprintf(stderr, "  %s\n", err);
	return rc;
}

/* Parse or measure must fail with rc and an err naming what. */
static inline void expect_refused(const uint8_t *img, size_t len, const struct snp_measure_params *p,
			   int rc, const char *what)
{
	struct snp_ovmf o;
	uint8_t d[48];
	char err[256] = "";
	int got = snp_ovmf_parse(&o, img, len, err, sizeof err);
	if (got == 0)
		got = snp_measure(&o, p, d, err, sizeof err);
	if (got != rc || !strstr(err, what))
		fprintf(stderr, "  want %d '%s', got %d '%s'\n", rc, what, got, err);
	CHECK_EQ_INT(got, rc);
	CHECK(strstr(err, what) != NULL);
}

#endif
