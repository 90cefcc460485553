/*
 * tools/verify/snp_ovmf.c — read an OVMF image's GUIDed footer table and SEV
 * metadata (see snp_ovmf.h for the layouts). Bounds: the image is at most
 * SNP_OVMF_MAX_SIZE bytes, so every offset below fits a size_t and every
 * sum of an offset and a u16/u32 length is checked against len before use.
 */
#include <stdio.h>
#include <string.h>

#include "../../kernel/platform.h"
#include "snp_ovmf.h"

#define FOOTER_END 0x20   /* bytes after the footer GUID: the reset vector's code */
#define ENTRY_TAIL 18     /* u16 length + GUID closing each entry */

/* The footer table's own GUID and the entries this reads. */
static const struct snp_guid footer_guid = {
	0x96b582de, 0x1fb2, 0x45f7, {0xba, 0xea, 0xa3, 0x66, 0xc5, 0x5a, 0x08, 0x2d}};
static const struct snp_guid reset_block_guid = {
	0x00f771de, 0x1a7e, 0x4fcb, {0x89, 0x0e, 0x68, 0xc7, 0x7e, 0x2f, 0xb4, 0x4e}};
static const struct snp_guid hash_table_guid = {
	0x7255371f, 0x3a3b, 0x4b04, {0x92, 0x7b, 0x1d, 0xa6, 0xef, 0xa8, 0xd4, 0x54}};
static const struct snp_guid metadata_guid = {
	0xdc886566, 0x984a, 0x4798, {0xa7, 0x5e, 0x55, 0x85, 0xa7, 0xbf, 0x67, 0xcc}};

void snp_guid_bytes(const struct snp_guid *g, uint8_t out[16])
{
	for (int i = 0; i < 4; i++)
		out[i] = (uint8_t)(g->d1 >> (8 * i));
	out[4] = (uint8_t)g->d2;
	out[5] = (uint8_t)(g->d2 >> 8);
	out[6] = (uint8_t)g->d3;
	out[7] = (uint8_t)(g->d3 >> 8);
	memcpy(out + 8, g->d4, 8);
}

static int guid_is(const uint8_t *p, const struct snp_guid *g)
{
	uint8_t b[16];
	snp_guid_bytes(g, b);
	return memcmp(p, b, 16) == 0;
}

static uint32_t le16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

const char *snp_ovmf_section_name(uint32_t type)
{
	switch (type) {
	case SNP_OVMF_SEC_MEM: return "SNP_SEC_MEM";
	case SNP_OVMF_SECRETS: return "SNP_SECRETS";
	case SNP_OVMF_CPUID: return "CPUID";
	case SNP_OVMF_SVSM_CAA: return "SVSM_CAA";
	case SNP_OVMF_KERNEL_HASHES: return "SNP_KERNEL_HASHES";
	}
	return "unknown";
}

const struct snp_ovmf_section *snp_ovmf_find(const struct snp_ovmf *o, uint32_t type)
{
	for (unsigned i = 0; i < o->n_sections; i++)
		if (o->sections[i].type == type)
			return &o->sections[i];
	return NULL;
}

/* One footer entry: data at d (dlen bytes) under GUID g. Entries with other
 * GUIDs (SEV secret block, TDX metadata, ...) are not for SNP and are left. */
static int take_entry(struct snp_ovmf *o, const uint8_t *g, const uint8_t *d, size_t dlen,
		      size_t at, char *err, size_t errlen)
{
	static const struct {
		const struct snp_guid *guid;
		const char *name;
		size_t want; /* bytes of data read */
	} known[] = {
		{&reset_block_guid, "SEV-ES reset block", 4},
		{&hash_table_guid, "SEV hash table", 8},
		{&metadata_guid, "SEV metadata", 4},
	};
	unsigned k = 0;

	while (k < sizeof known / sizeof known[0] && !guid_is(g, known[k].guid))
		k++;
	if (k == sizeof known / sizeof known[0])
		return 0;
	if (dlen < known[k].want) {
		snprintf(err, errlen, "ovmf: %s entry at offset 0x%zx holds %zu bytes, want %zu",
			 known[k].name, at, dlen, known[k].want);
		return -LLMK_EFORMAT;
	}
	switch (k) {
	case 0:
		o->has_reset_block = 1;
		o->ap_reset = le32(d);
		break;
	case 1:
		o->has_hash_table = 1;
		o->hash_table_gpa = le32(d);
		o->hash_table_size = le32(d + 4);
		break;
	default:
		o->has_metadata = 1;
		o->metadata_offset = le32(d);
	}
	return 0;
}

/* The footer table: entries are read from its end towards its start. */
static int parse_footer(struct snp_ovmf *o, char *err, size_t errlen)
{
	const uint8_t *p = o->data;
	size_t len = o->len;
	size_t guid_at = len - FOOTER_END - 16;
	size_t tlen, start, end;

	if (!guid_is(p + guid_at, &footer_guid)) {
		snprintf(err, errlen,
			 "ovmf: no footer table GUID 96b582de-1fb2-45f7-baea-a366c55a082d at offset "
			 "0x%zx: not an OVMF image with SEV support",
			 guid_at);
		return -LLMK_EFORMAT;
	}
	tlen = le16(p + guid_at - 2);
	if (tlen < ENTRY_TAIL || tlen > len - FOOTER_END) {
		snprintf(err, errlen, "ovmf: footer table length %zu out of range [%d, %zu]", tlen,
			 ENTRY_TAIL, len - FOOTER_END);
		return -LLMK_EFORMAT;
	}
	start = len - FOOTER_END - tlen;
	end = guid_at - 2;
	while (end - start >= ENTRY_TAIL) {
		size_t elen = le16(p + end - ENTRY_TAIL);
		int rc;
		if (elen < ENTRY_TAIL || elen > end - start) {
			snprintf(err, errlen,
				 "ovmf: footer table entry ending at offset 0x%zx has length %zu, "
				 "outside [%d, %zu]",
				 end, elen, ENTRY_TAIL, end - start);
			return -LLMK_EFORMAT;
		}
		rc = take_entry(o, p + end - 16, p + end - elen, elen - ENTRY_TAIL, end - elen, err,
				errlen);
		if (rc)
			return rc;
		end -= elen;
	}
	if (!o->has_metadata) {
		snprintf(err, errlen,
			 "ovmf: the footer table has no SEV metadata entry (GUID "
			 "dc886566-984a-4798-a75e-5585a7bf67cc): this build cannot launch as an "
			 "SEV-SNP guest");
		return -LLMK_EFORMAT;
	}
	return 0;
}

static int check_section(const struct snp_ovmf_section *s, unsigned i, char *err, size_t errlen)
{
	const char *name = snp_ovmf_section_name(s->type);

	if (!strcmp(name, "unknown")) {
		snprintf(err, errlen, "ovmf: SEV metadata section %u has unknown type 0x%x", i,
			 s->type);
		return -LLMK_ENOTSUP;
	}
	if (s->size == 0 || s->gpa % 4096 || s->size % 4096 ||
	    (uint64_t)s->gpa + s->size > SNP_OVMF_FOUR_GB) {
		snprintf(err, errlen,
			 "ovmf: SEV metadata section %u (%s) at GPA 0x%x, size 0x%x: want whole "
			 "4 KiB pages below 4 GiB",
			 i, name, s->gpa, s->size);
		return -LLMK_EFORMAT;
	}
	/* Launched as one page each (SNP ABI: a SECRETS or CPUID page is one page). */
	if ((s->type == SNP_OVMF_SECRETS || s->type == SNP_OVMF_CPUID) && s->size != 4096) {
		snprintf(err, errlen, "ovmf: SEV metadata section %u (%s) is 0x%x bytes, want one page",
			 i, name, s->size);
		return -LLMK_ENOTSUP;
	}
	return 0;
}

static int parse_metadata(struct snp_ovmf *o, uint32_t off, char *err, size_t errlen)
{
	const uint8_t *m;
	uint32_t mlen, version, count;

	if (off < 16 || off > o->len) {
		snprintf(err, errlen, "ovmf: SEV metadata offset %u out of range [16, %zu]", off,
			 o->len);
		return -LLMK_EFORMAT;
	}
	m = o->data + o->len - off;
	if (memcmp(m, "ASEV", 4) != 0) {
		snprintf(err, errlen, "ovmf: no \"ASEV\" signature at the SEV metadata (offset 0x%zx)",
			 o->len - off);
		return -LLMK_EFORMAT;
	}
	mlen = le32(m + 4);
	version = le32(m + 8);
	count = le32(m + 12);
	if (mlen < 16 || mlen > off) {
		snprintf(err, errlen, "ovmf: SEV metadata length %u out of range [16, %u]", mlen, off);
		return -LLMK_EFORMAT;
	}
	if (version != 1) {
		snprintf(err, errlen, "ovmf: SEV metadata version %u not supported (want 1)", version);
		return -LLMK_ENOTSUP;
	}
	if (count > SNP_OVMF_MAX_SECTIONS || 16 + 12 * count > mlen) {
		snprintf(err, errlen,
			 "ovmf: SEV metadata claims %u sections; its %u bytes hold at most %u "
			 "(and this reads up to %d)",
			 count, mlen, (mlen - 16) / 12, SNP_OVMF_MAX_SECTIONS);
		return -LLMK_EFORMAT;
	}
	for (uint32_t i = 0; i < count; i++) {
		struct snp_ovmf_section *s = &o->sections[i];
		int rc;
		s->gpa = le32(m + 16 + 12 * i);
		s->size = le32(m + 20 + 12 * i);
		s->type = le32(m + 24 + 12 * i);
		rc = check_section(s, i, err, errlen);
		if (rc)
			return rc;
	}
	o->n_sections = count;
	return 0;
}

int snp_ovmf_parse(struct snp_ovmf *o, const uint8_t *data, size_t len, char *err, size_t errlen)
{
	int rc;

	memset(o, 0, sizeof *o);
	if (len == 0 || len % 4096 || len > SNP_OVMF_MAX_SIZE) {
		snprintf(err, errlen,
			 "ovmf: image is %zu bytes; want a non-zero multiple of 4096 up to %u", len,
			 SNP_OVMF_MAX_SIZE);
		return -LLMK_ERANGE;
	}
	o->data = data;
	o->len = len;
	o->gpa = SNP_OVMF_FOUR_GB - len;
	rc = parse_footer(o, err, errlen);
	if (rc)
		return rc;
	return parse_metadata(o, o->metadata_offset, err, errlen);
}
