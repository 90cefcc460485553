/*
 * tools/verify/snp_ovmf.h — what an OVMF image tells the host about an
 * SEV-SNP launch: where the firmware sits, where the APs start, which pages
 * the VMM must launch besides the firmware, and where the kernel hashes go.
 *
 * The firmware's last 4 KiB hold a table of GUIDed entries that OVMF's reset
 * vector exports for the VMM (edk2 OvmfPkg/ResetVector/Ia16/
 * ResetVectorVtf0.asm). Its footer ends 0x20 bytes before the image's end:
 *
 *   ... entry ... entry | u16 table length | footer GUID 96b582de-... | 0x20 bytes
 *
 * and each entry, read backwards from its end, is
 *
 *   data | u16 length (data + 18) | GUID
 *
 * The entries this reads:
 *   00f771de-1a7e-4fcb-890e-68c77e2fb44e  SEV-ES reset block: u32 AP reset address
 *   7255371f-3a3b-4b04-927b-1da6efa8d454  SEV hash table: u32 GPA, u32 size
 *   dc886566-984a-4798-a75e-5585a7bf67cc  SEV metadata: u32 offset from the image's end
 * The SEV metadata (OvmfPkg/ResetVector/X64/OvmfSevMetadata.asm) is "ASEV",
 * u32 length, u32 version (1), u32 count, then count sections {u32 GPA,
 * u32 size, u32 type}.
 *
 * Nothing here allocates: struct snp_ovmf points into the caller's buffer,
 * which must outlive it. Host tool code (tools/verify), portable C.
 */
#ifndef LLMK_SNP_OVMF_H
#define LLMK_SNP_OVMF_H

#include <stddef.h>
#include <stdint.h>

/* SEV metadata section types (OvmfSevMetadata.asm, OVMF_SECTION_TYPE_*). */
enum {
	SNP_OVMF_SEC_MEM = 1,         /* SNP_SEC_MEM: pre-validated memory, launched as zero pages */
	SNP_OVMF_SECRETS = 2,         /* SNP_SECRETS: the secrets page */
	SNP_OVMF_CPUID = 3,           /* CPUID: the CPUID page */
	SNP_OVMF_SVSM_CAA = 4,        /* SVSM_CAA: the calling area, launched as zero pages */
	SNP_OVMF_KERNEL_HASHES = 0x10 /* SNP_KERNEL_HASHES: the page the kernel hashes table is in */
};

#define SNP_OVMF_MAX_SECTIONS 32
#define SNP_OVMF_MAX_SIZE (64u << 20) /* far above any OVMF build (2-4 MiB) */
#define SNP_OVMF_FOUR_GB 0x100000000ull

struct snp_ovmf_section {
	uint32_t gpa;
	uint32_t size;
	uint32_t type;
};

struct snp_ovmf {
	const uint8_t *data;  /* the whole image, mapped so that it ends at 4 GiB */
	size_t len;
	uint64_t gpa;         /* 4 GiB - len */
	int has_reset_block;  /* SEV-ES reset block present */
	uint32_t ap_reset;    /* its AP reset address (CS base = & 0xffff0000, IP = & 0xffff) */
	int has_metadata;     /* SEV metadata entry present (parse fails without it) */
	uint32_t metadata_offset; /* from the image's end to the "ASEV" header */
	int has_hash_table;   /* SEV hash table entry present */
	uint32_t hash_table_gpa, hash_table_size;
	unsigned n_sections;
	struct snp_ovmf_section sections[SNP_OVMF_MAX_SECTIONS];
};

/*
 * Parse an OVMF image of len bytes (a multiple of 4 KiB, at most
 * SNP_OVMF_MAX_SIZE). Every offset and length is checked against the image
 * before it is read. 0; -LLMK_EFORMAT with one line in err if the image is
 * malformed or lacks the footer table or the SEV metadata (then it cannot be
 * an SEV-SNP guest's firmware); -LLMK_ERANGE if its size is wrong.
 */
int snp_ovmf_parse(struct snp_ovmf *o, const uint8_t *data, size_t len, char *err, size_t errlen);

/* A GUID as the spec writes it; snp_guid_bytes() gives the 16 bytes an
 * EFI_GUID has in memory (UEFI 2.10 Appendix A: Data1..3 little-endian). */
struct snp_guid {
	uint32_t d1;
	uint16_t d2, d3;
	uint8_t d4[8];
};
void snp_guid_bytes(const struct snp_guid *g, uint8_t out[16]);

/* The first section of that type, or NULL. */
const struct snp_ovmf_section *snp_ovmf_find(const struct snp_ovmf *o, uint32_t type);

/* A section type's name ("SNP_SEC_MEM", ...), or "unknown". */
const char *snp_ovmf_section_name(uint32_t type);

#endif
