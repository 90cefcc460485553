/*
 * tools/verify/snp_measure.c — the SEV-SNP launch digest (snp_measure.h):
 * the PAGE_INFO chain, the initial VMSA, the kernel hashes table, and the
 * launch order QEMU follows with OVMF.
 */
#include <stdio.h>
#include <string.h>

#include <bearssl.h>

#include "../../kernel/platform.h"
#include "snp_measure.h"

/* ---- the PAGE_INFO chain (ABI §8.17.2) ---- */

#define PAGE_INFO_LEN 0x70

/* Linux arch/x86/kvm/svm/sev.c: KVM assigns each VMSA page this GPA in the
 * RMP (INITIAL_VMSA_GPA) before SNP_LAUNCH_UPDATE, so PAGE_INFO.GPA is it;
 * VMSAs are not mapped in the guest's address space. */
#define VMSA_GPA 0xFFFFFFFFF000ull

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void sha384(const void *data, size_t len, uint8_t out[SNP_DIGEST_SIZE])
{
	br_sha384_context c;
	br_sha384_init(&c);
	br_sha384_update(&c, data, len);
	br_sha384_out(&c, out);
}

void snp_ld_init(struct snp_ld *ld)
{
	memset(ld->digest, 0, sizeof ld->digest);
}

void snp_ld_page(struct snp_ld *ld, uint8_t type, uint64_t gpa,
		 const uint8_t contents[SNP_DIGEST_SIZE])
{
	uint8_t pi[PAGE_INFO_LEN];

	memcpy(pi + 0x00, ld->digest, SNP_DIGEST_SIZE); /* DIGEST_CUR */
	memcpy(pi + 0x30, contents, SNP_DIGEST_SIZE);   /* CONTENTS */
	put16(pi + 0x60, PAGE_INFO_LEN);                 /* LENGTH */
	pi[0x62] = type;                                 /* PAGE_TYPE */
	pi[0x63] = 0;                                    /* IMI_PAGE: a launch, not a migration image */
	pi[0x64] = pi[0x65] = pi[0x66] = 0;              /* VMPL3..1_PERMS: QEMU grants none */
	pi[0x67] = 0;                                    /* reserved */
	put64(pi + 0x68, gpa);                           /* GPA */
	sha384(pi, sizeof pi, ld->digest);
}

void snp_ld_normal(struct snp_ld *ld, uint64_t gpa, const uint8_t *data, size_t len)
{
	uint8_t h[SNP_DIGEST_SIZE];

	for (size_t off = 0; off + SNP_PAGE_SIZE <= len; off += SNP_PAGE_SIZE) {
		sha384(data + off, SNP_PAGE_SIZE, h);
		snp_ld_page(ld, SNP_PAGE_NORMAL, gpa + off, h);
	}
}

void snp_ld_blank(struct snp_ld *ld, uint8_t type, uint64_t gpa, uint64_t len)
{
	static const uint8_t zero[SNP_DIGEST_SIZE];

	for (uint64_t off = 0; off + SNP_PAGE_SIZE <= len; off += SNP_PAGE_SIZE)
		snp_ld_page(ld, type, gpa + off, zero);
}

void snp_ld_vmsa(struct snp_ld *ld, const uint8_t page[SNP_PAGE_SIZE])
{
	uint8_t h[SNP_DIGEST_SIZE];

	sha384(page, SNP_PAGE_SIZE, h);
	snp_ld_page(ld, SNP_PAGE_VMSA, VMSA_GPA, h);
}

/* ---- the initial VMSA ---- */

/* Byte offsets in the VMSA: AMD64 APM vol. 2 (pub. 24593) Appendix B,
 * Table B-4 "VMSA Layout, State Save Area for SEV-ES" (Linux: struct
 * sev_es_save_area). Segments are VMCB segments: u16 selector, u16 attrib,
 * u32 limit, u64 base. */
enum {
	VMSA_ES = 0x000, VMSA_CS = 0x010, VMSA_SS = 0x020, VMSA_DS = 0x030,
	VMSA_FS = 0x040, VMSA_GS = 0x050, VMSA_GDTR = 0x060, VMSA_LDTR = 0x070,
	VMSA_IDTR = 0x080, VMSA_TR = 0x090,
	VMSA_EFER = 0x0D0, VMSA_CR4 = 0x148, VMSA_CR0 = 0x158, VMSA_DR7 = 0x160,
	VMSA_DR6 = 0x168, VMSA_RFLAGS = 0x170, VMSA_RIP = 0x178, VMSA_G_PAT = 0x268,
	VMSA_RDX = 0x310, VMSA_SEV_FEATURES = 0x3B0, VMSA_XCR0 = 0x3E8,
	VMSA_MXCSR = 0x408, VMSA_X87_FCW = 0x410,
};

static void put_seg(uint8_t *page, unsigned off, uint16_t sel, uint16_t attrib, uint32_t limit,
		    uint64_t base)
{
	put16(page + off, sel);
	put16(page + off + 2, attrib);
	put32(page + off + 4, limit);
	put64(page + off + 8, base);
}

/*
 * The reset state (APM vol. 2 §14.1.3, "Processor Initialization State") as
 * QEMU resets a vCPU and KVM copies it into the VMSA before
 * SNP_LAUNCH_UPDATE, with what KVM adds on its way: EFER.SVME (0x1000) and
 * CR4.MCE (0x40). Attribs are VMCB-packed descriptor bytes: 0x9b present
 * code read/accessed, 0x93 present data read/write/accessed, 0x82 LDT,
 * 0x8b busy TSS. KVM now also copies the vCPU's reset FPU state into the
 * VMSA: FNINIT's x87 control word and MXCSR's reset value (a VMSA with
 * both zero, as older KVMs launched, gives another digest).
 */
void snp_vmsa_build(uint8_t page[SNP_PAGE_SIZE], uint32_t eip, uint32_t vcpu_sig,
		    uint64_t guest_features)
{
	memset(page, 0, SNP_PAGE_SIZE);
	put_seg(page, VMSA_ES, 0, 0x93, 0xffff, 0);
	put_seg(page, VMSA_CS, 0xf000, 0x9b, 0xffff, eip & 0xffff0000u);
	put_seg(page, VMSA_SS, 0, 0x93, 0xffff, 0);
	put_seg(page, VMSA_DS, 0, 0x93, 0xffff, 0);
	put_seg(page, VMSA_FS, 0, 0x93, 0xffff, 0);
	put_seg(page, VMSA_GS, 0, 0x93, 0xffff, 0);
	put_seg(page, VMSA_GDTR, 0, 0, 0xffff, 0);
	put_seg(page, VMSA_LDTR, 0, 0x82, 0xffff, 0);
	put_seg(page, VMSA_IDTR, 0, 0, 0xffff, 0);
	put_seg(page, VMSA_TR, 0, 0x8b, 0xffff, 0);
	put64(page + VMSA_EFER, 0x1000);
	put64(page + VMSA_CR4, 0x40);
	put64(page + VMSA_CR0, 0x10);
	put64(page + VMSA_DR7, 0x400);
	put64(page + VMSA_DR6, 0xffff0ff0);
	put64(page + VMSA_RFLAGS, 0x2);
	put64(page + VMSA_RIP, eip & 0xffffu);
	put64(page + VMSA_G_PAT, 0x0007040600070406ull); /* the PAT MSR's reset value */
	put64(page + VMSA_RDX, vcpu_sig);
	put64(page + VMSA_SEV_FEATURES, guest_features);
	put64(page + VMSA_XCR0, 0x1);
	put32(page + VMSA_MXCSR, 0x1f80);
	put16(page + VMSA_X87_FCW, 0x037f);
}

/* ---- the kernel hashes table (QEMU target/i386/sev.c; OVMF
 * OvmfPkg/AmdSev/BlobVerifierLibSevHashes checks it) ---- */

static const struct snp_guid table_guid = {
	0x9438d606, 0x4f22, 0x4cc9, {0xb4, 0x79, 0xa7, 0x93, 0xd4, 0x11, 0xfd, 0x21}};
static const struct snp_guid cmdline_guid = {
	0x97d02dd8, 0xbd20, 0x4c94, {0xaa, 0x78, 0xe7, 0x71, 0x4d, 0x36, 0xab, 0x2a}};
static const struct snp_guid initrd_guid = {
	0x44baf731, 0x3a2f, 0x4bd7, {0x9a, 0xf1, 0x41, 0xe2, 0x91, 0x69, 0x78, 0x1d}};
static const struct snp_guid kernel_guid = {
	0x4de79437, 0xabd2, 0x427f, {0xb8, 0x35, 0xd5, 0xb1, 0x72, 0xd2, 0x04, 0x5b}};

#define ENTRY_LEN 50 /* GUID + u16 length + SHA-256 */

void snp_cmdline_hash(const char *append, uint8_t out[32])
{
	br_sha256_context c;
	static const uint8_t nul = 0;

	br_sha256_init(&c);
	if (append)
		br_sha256_update(&c, append, strlen(append));
	br_sha256_update(&c, &nul, 1);
	br_sha256_out(&c, out);
}

static uint8_t *put_entry(uint8_t *p, const struct snp_guid *g, const uint8_t hash[32])
{
	snp_guid_bytes(g, p);
	put16(p + 16, ENTRY_LEN);
	memcpy(p + 18, hash, 32);
	return p + ENTRY_LEN;
}

void snp_hash_table_build(uint8_t out[SNP_HASH_TABLE_PADDED], const struct snp_kernel_hashes *h)
{
	uint8_t *p = out;

	memset(out, 0, SNP_HASH_TABLE_PADDED);
	snp_guid_bytes(&table_guid, p);
	put16(p + 16, SNP_HASH_TABLE_LEN);
	p = put_entry(p + 18, &cmdline_guid, h->cmdline);
	p = put_entry(p, &initrd_guid, h->initrd);
	put_entry(p, &kernel_guid, h->kernel);
}

/* ---- the launch ---- */

/* The SNP_KERNEL_HASHES section s: NORMAL pages holding the table where the
 * image's SEV hash table entry puts it, zeros around it (QEMU writes the
 * table into fresh guest memory, then launches the section's pages). */
static int measure_hashes(struct snp_ld *ld, const struct snp_ovmf *o,
			  const struct snp_ovmf_section *s, const struct snp_kernel_hashes *h,
			  char *err, size_t errlen)
{
	uint8_t table[SNP_HASH_TABLE_PADDED], page[SNP_PAGE_SIZE];
	uint64_t at;

	if (!o->has_hash_table) {
		snprintf(err, errlen,
			 "ovmf: SNP_KERNEL_HASHES section but no SEV hash table entry (GUID "
			 "7255371f-3a3b-4b04-927b-1da6efa8d454) saying where the table goes");
		return -LLMK_EFORMAT;
	}
	at = (uint64_t)o->hash_table_gpa - s->gpa;
	if (o->hash_table_gpa < s->gpa || o->hash_table_size < SNP_HASH_TABLE_PADDED ||
	    at + SNP_HASH_TABLE_PADDED > s->size) {
		snprintf(err, errlen,
			 "ovmf: SEV hash table at GPA 0x%x, %u bytes, does not hold a %d-byte "
			 "table inside the SNP_KERNEL_HASHES section (GPA 0x%x, 0x%x bytes)",
			 o->hash_table_gpa, o->hash_table_size, SNP_HASH_TABLE_PADDED, s->gpa,
			 s->size);
		return -LLMK_EFORMAT;
	}
	snp_hash_table_build(table, h);
	for (uint64_t off = 0; off < s->size; off += SNP_PAGE_SIZE) {
		/* the part of [at, at + table) that falls in [off, off + page) */
		uint64_t lo = at > off ? at : off;
		uint64_t hi = at + sizeof table < off + SNP_PAGE_SIZE ? at + sizeof table
								       : off + SNP_PAGE_SIZE;
		memset(page, 0, sizeof page);
		if (lo < hi)
			memcpy(page + (lo - off), table + (lo - at), hi - lo);
		snp_ld_normal(ld, s->gpa + off, page, sizeof page);
	}
	return 0;
}

static int measure_sections(struct snp_ld *ld, const struct snp_ovmf *o,
			    const struct snp_kernel_hashes *h, char *err, size_t errlen)
{
	for (unsigned i = 0; i < o->n_sections; i++) {
		const struct snp_ovmf_section *s = &o->sections[i];
		int rc;
		switch (s->type) {
		case SNP_OVMF_SEC_MEM:
		case SNP_OVMF_SVSM_CAA:
			snp_ld_blank(ld, SNP_PAGE_ZERO, s->gpa, s->size);
			break;
		case SNP_OVMF_SECRETS:
			snp_ld_blank(ld, SNP_PAGE_SECRETS, s->gpa, s->size);
			break;
		case SNP_OVMF_CPUID:
			snp_ld_blank(ld, SNP_PAGE_CPUID, s->gpa, s->size);
			break;
		case SNP_OVMF_KERNEL_HASHES:
			if (!h) {
				snp_ld_blank(ld, SNP_PAGE_ZERO, s->gpa, s->size);
				break;
			}
			rc = measure_hashes(ld, o, s, h, err, errlen);
			if (rc)
				return rc;
			break;
		default:
			/* snp_ovmf_parse() admits no other type */
			snprintf(err, errlen, "ovmf: section %u has unknown type 0x%x", i, s->type);
			return -LLMK_ENOTSUP;
		}
	}
	return 0;
}

static int check_params(const struct snp_ovmf *o, const struct snp_measure_params *p, char *err,
			size_t errlen)
{
	if (p->vcpus < 1 || p->vcpus > SNP_MAX_VCPUS) {
		snprintf(err, errlen, "vcpus %u out of range [1, %d]", p->vcpus, SNP_MAX_VCPUS);
		return -LLMK_ERANGE;
	}
	if (!(p->guest_features & 1)) {
		snprintf(err, errlen,
			 "guest features 0x%llx lack bit 0 (SNPActive), which every SEV-SNP "
			 "guest's VMSA has",
			 (unsigned long long)p->guest_features);
		return -LLMK_EINVAL;
	}
	if (p->vcpus > 1 && !o->has_reset_block) {
		snprintf(err, errlen,
			 "ovmf: no SEV-ES reset block (GUID 00f771de-1a7e-4fcb-890e-68c77e2fb44e), "
			 "so the APs of a %u-vCPU guest have no start address",
			 p->vcpus);
		return -LLMK_EFORMAT;
	}
	if (p->hashes && !snp_ovmf_find(o, SNP_OVMF_KERNEL_HASHES)) {
		snprintf(err, errlen,
			 "ovmf: its SEV metadata has no SNP_KERNEL_HASHES section, so it does not "
			 "measure -kernel/-initrd/-append (an AmdSev build does)");
		return -LLMK_ENOTSUP;
	}
	return 0;
}

int snp_measure(const struct snp_ovmf *o, const struct snp_measure_params *p,
		uint8_t digest[SNP_DIGEST_SIZE], char *err, size_t errlen)
{
	uint8_t vmsa[SNP_PAGE_SIZE];
	struct snp_ld ld;
	int rc = check_params(o, p, err, errlen);

	if (rc)
		return rc;
	snp_ld_init(&ld);
	snp_ld_normal(&ld, o->gpa, o->data, o->len);
	rc = measure_sections(&ld, o, p->hashes, err, errlen);
	if (rc)
		return rc;
	/* The BSP starts at the reset vector, 16 bytes below 4 GiB. */
	snp_vmsa_build(vmsa, 0xfffffff0u, p->vcpu_sig, p->guest_features);
	snp_ld_vmsa(&ld, vmsa);
	if (p->vcpus > 1) {
		snp_vmsa_build(vmsa, o->ap_reset, p->vcpu_sig, p->guest_features);
		for (unsigned i = 1; i < p->vcpus; i++)
			snp_ld_vmsa(&ld, vmsa);
	}
	memcpy(digest, ld.digest, SNP_DIGEST_SIZE);
	return 0;
}
