/*
 * tests/unit/test_snp_ovmf.c — tools/verify/snp_ovmf.c: the footer table and
 * SEV metadata read from a synthetic image (snp_syn.h), every malformed
 * table refused with one clear line, a few cases of random damage never read
 * out of bounds (the fuzz target tests/fuzz/fuzz_snp_ovmf.c tries more).
 */
#include "test.h"

#include <stdlib.h>

#include "snp_syn.h"

TEST(snp_ovmf_parse_reads_the_footer_entries_and_metadata_sections)
{
	struct syn *s = malloc(sizeof *s);
	struct snp_ovmf o;
	char err[256];

	syn_default(s);
	CHECK_EQ_INT(snp_ovmf_parse(&o, s->img, SYN_LEN, err, sizeof err), 0);
	CHECK(o.gpa == SNP_OVMF_FOUR_GB - SYN_LEN);
	CHECK(o.has_reset_block && o.ap_reset == 0x80b004);
	CHECK(o.has_hash_table && o.hash_table_gpa == 0x805c00 && o.hash_table_size == 0x400);
	CHECK_EQ_INT(o.n_sections, 5);
	for (unsigned i = 0; i < 5 && i < o.n_sections; i++) {
		CHECK(o.sections[i].gpa == amdsev_like[i][0]);
		CHECK(o.sections[i].size == amdsev_like[i][1]);
		CHECK(o.sections[i].type == amdsev_like[i][2]);
	}
	CHECK(snp_ovmf_find(&o, SNP_OVMF_CPUID) == &o.sections[2]);
	free(s);
}

TEST(snp_ovmf_parse_refuses_malformed_images_with_one_clear_line)
{
	struct syn *s = malloc(sizeof *s);
	struct snp_measure_params p = {1, 0x800F12, 0x1, NULL};
	uint8_t *m;
	static const uint32_t unaligned[][3] = {{0x800800, 0x1000, SNP_OVMF_SEC_MEM}};
	static const uint32_t unknown[][3] = {{0x800000, 0x1000, 9}};
	static const uint32_t big_cpuid[][3] = {{0x800000, 0x2000, SNP_OVMF_CPUID}};
	static const uint32_t over4g[][3] = {{0xfffff000, 0x2000, SNP_OVMF_SEC_MEM}};

	syn_default(s);
	expect_refused(s->img, 4096 + 1, &p, -LLMK_ERANGE, "multiple of 4096");
	expect_refused(s->img, 0, &p, -LLMK_ERANGE, "multiple of 4096");
	s->img[SYN_LEN - 0x30] ^= 1;
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "no footer table GUID");
	syn_default(s);
	syn_put16(s->img + SYN_LEN - 0x32, 0xffff);
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "footer table length 65535");
	syn_default(s);
	syn_put16(s->img + SYN_LEN - 0x32 - 18, 3); /* the last entry's length */
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "has length 3");
	syn_default(s);
	syn_put16(s->img + SYN_LEN - 0x32 - 18, 0x2000);
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "has length 8192");
	/* metadata */
	syn_default(s);
	m = s->img + s->meta_at;
	m[0] = 'X';
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "\"ASEV\"");
	syn_default(s);
	syn_put32(s->img + s->meta_at + 8, 2);
	expect_refused(s->img, SYN_LEN, &p, -LLMK_ENOTSUP, "version 2");
	syn_default(s);
	syn_put32(s->img + s->meta_at + 12, 1000);
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "claims 1000 sections");
	syn_default(s);
	syn_put32(s->img + s->meta_at + 4, 0x7fffffff);
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "metadata length");
	syn_build(s, unaligned, 1, 0, 0);
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "whole 4 KiB pages");
	syn_build(s, over4g, 1, 0, 0);
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "below 4 GiB");
	syn_build(s, unknown, 1, 0, 0);
	expect_refused(s->img, SYN_LEN, &p, -LLMK_ENOTSUP, "unknown type 0x9");
	syn_build(s, big_cpuid, 1, 0, 0);
	expect_refused(s->img, SYN_LEN, &p, -LLMK_ENOTSUP, "want one page");
	/* the metadata entry's offset pointing outside the image */
	syn_build(s, amdsev_like, 5, 0, 0);
	syn_put32(s->img + SYN_LEN - 0x32 - 18 - 4, 0x10000);
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "offset 65536 out of range");
	/* no metadata entry at all: the footer table holds only the reset block */
	memset(s, 0, sizeof *s);
	snp_guid_bytes(&g_footer, s->img + SYN_LEN - 0x30);
	s->end = SYN_LEN - 0x32;
	syn_entry(s, &g_reset, "\x04\xb0\x80\x00", 4);
	syn_put16(s->img + SYN_LEN - 0x32, (uint32_t)(SYN_LEN - 0x20 - s->end));
	expect_refused(s->img, SYN_LEN, &p, -LLMK_EFORMAT, "no SEV metadata entry");
	free(s);
}

/* Random damage to the footer table and the metadata: parse and measure
 * either succeed or refuse with a message; ASan (test-asan) sees every
 * read. A fixed xorshift sequence, so a failure repeats. A few cases here;
 * the fuzz target tests/fuzz/fuzz_snp_ovmf.c (test-fuzz-snp-ovmf) does the
 * searching. */
TEST(snp_ovmf_parse_survives_random_damage_to_its_tables)
{
	struct syn *s = malloc(sizeof *s), *orig = malloc(sizeof *orig);
	struct snp_kernel_hashes h;
	struct snp_measure_params p = {3, 0x800F12, 0x21, &h};
	uint32_t x = 0x2545F491;
	int refused = 0, measured = 0;

	memset(&h, 7, sizeof h);
	syn_default(orig);
	for (int iter = 0; iter < 40; iter++) {
		struct snp_ovmf o;
		uint8_t d[48];
		char err[256];
		int rc;
		memcpy(s, orig, sizeof *s);
		for (int k = 0; k < 1 + iter % 4; k++) {
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			/* half in the footer table's last 256 bytes, half in the metadata */
			size_t at = (x & 1) ? SYN_LEN - 256 + (x >> 8) % 256
					    : s->meta_at + (x >> 8) % (16 + 12 * 5);
			s->img[at] ^= (uint8_t)(x >> 24 | 1);
		}
		err[0] = 0;
		rc = snp_ovmf_parse(&o, s->img, SYN_LEN, err, sizeof err);
		if (rc == 0)
			rc = snp_measure(&o, &p, d, err, sizeof err);
		if (rc) {
			refused++;
			CHECK(err[0] != 0);
		} else {
			measured++;
		}
	}
	CHECK(refused > 0 && measured > 0); /* both paths were taken */
	free(s);
	free(orig);
}
