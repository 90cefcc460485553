/*
 * tools/verify/snp_measure.h — the SEV-SNP launch digest, computed offline.
 *
 * The PSP measures a guest as the VMM launches it: each SNP_LAUNCH_UPDATE
 * extends the launch digest with one page, and the digest after
 * SNP_LAUNCH_FINISH is the MEASUREMENT field of every attestation report the
 * guest later gets. SEV-SNP Firmware ABI (AMD pub. 56860) §8.17 SNP_LAUNCH_UPDATE:
 *
 *   digest_0 = 48 zero bytes                            (SNP_LAUNCH_START)
 *   digest_n = SHA-384(PAGE_INFO(digest_{n-1}, page))   (each page, in launch order)
 *
 * PAGE_INFO (§8.17.2, "Layout of the PAGE_INFO Structure"), 0x70 bytes:
 *   0x00 DIGEST_CUR[48]  0x30 CONTENTS[48]  0x60 LENGTH u16 = 0x70  0x62 PAGE_TYPE u8
 *   0x63 IMI_PAGE u8     0x64 VMPL3_PERMS, VMPL2_PERMS, VMPL1_PERMS u8, reserved u8
 *   0x68 GPA u64
 * CONTENTS is SHA-384 of the page for NORMAL and VMSA pages, zero otherwise.
 *
 * For QEMU + OVMF the launch is, in order (snp_measure()):
 *   1. the OVMF image, NORMAL pages, ending at 4 GiB;
 *   2. each SEV metadata section of the image (snp_ovmf.h), in table order:
 *      SNP_SEC_MEM and SVSM_CAA as ZERO pages, SNP_SECRETS as SECRETS,
 *      CPUID as CPUID, SNP_KERNEL_HASHES as NORMAL pages holding the kernel
 *      hashes table when the VM boots with -kernel, else as ZERO pages;
 *   3. one VMSA per vCPU: the BSP at the reset vector, the APs at the
 *      image's SEV-ES reset block.
 *
 * Host tool code (tools/verify), portable C; SHA-2 from BearSSL.
 */
#ifndef LLMK_SNP_MEASURE_H
#define LLMK_SNP_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "snp_ovmf.h"

#define SNP_DIGEST_SIZE 48
#define SNP_PAGE_SIZE 4096
#define SNP_MAX_VCPUS 4096

/* PAGE_INFO.PAGE_TYPE (ABI §8.17.2, "Encodings of the PAGE_TYPE Field"). */
enum {
	SNP_PAGE_NORMAL = 1,
	SNP_PAGE_VMSA = 2,
	SNP_PAGE_ZERO = 3,
	SNP_PAGE_UNMEASURED = 4,
	SNP_PAGE_SECRETS = 5,
	SNP_PAGE_CPUID = 6
};

/* The launch digest so far (caller-owned). */
struct snp_ld {
	uint8_t digest[SNP_DIGEST_SIZE];
};

/* As SNP_LAUNCH_START leaves it: all zero. */
void snp_ld_init(struct snp_ld *ld);
/* Extend with one page of type at gpa whose CONTENTS field is contents. */
void snp_ld_page(struct snp_ld *ld, uint8_t type, uint64_t gpa,
		 const uint8_t contents[SNP_DIGEST_SIZE]);
/* NORMAL pages over data (len a multiple of 4096) from gpa upwards. */
void snp_ld_normal(struct snp_ld *ld, uint64_t gpa, const uint8_t *data, size_t len);
/* len / 4096 pages of a type whose CONTENTS is zero (ZERO, SECRETS, CPUID,
 * UNMEASURED) from gpa upwards. */
void snp_ld_blank(struct snp_ld *ld, uint8_t type, uint64_t gpa, uint64_t len);
/* One VMSA page (its GPA in the RMP is KVM's INITIAL_VMSA_GPA, see .c). */
void snp_ld_vmsa(struct snp_ld *ld, const uint8_t page[SNP_PAGE_SIZE]);

/*
 * The VMSA of a vCPU QEMU/KVM has just reset, as launched: real mode at
 * eip (CS base eip & 0xffff0000, IP eip & 0xffff), RDX = vcpu_sig (the CPUID
 * family/model/stepping a reset leaves in EDX), SEV_FEATURES = guest_features.
 */
void snp_vmsa_build(uint8_t page[SNP_PAGE_SIZE], uint32_t eip, uint32_t vcpu_sig,
		    uint64_t guest_features);

/* What -kernel/-initrd/-append put into the kernel hashes table: SHA-256 of
 * the kernel file, of the initrd (of nothing without one), and of the
 * command line with its NUL (of "\0" without one). */
struct snp_kernel_hashes {
	uint8_t cmdline[32];
	uint8_t initrd[32];
	uint8_t kernel[32];
};
/* SHA-256 of append and its terminating NUL; append NULL counts as "". */
void snp_cmdline_hash(const char *append, uint8_t out[32]);

/* The table QEMU writes (target/i386/sev.c SevHashTable, padded with zeros
 * to a multiple of 16): header GUID, u16 length 168, then cmdline, initrd
 * and kernel entries {GUID, u16 length 50, SHA-256}. */
#define SNP_HASH_TABLE_LEN 168
#define SNP_HASH_TABLE_PADDED 176
void snp_hash_table_build(uint8_t out[SNP_HASH_TABLE_PADDED], const struct snp_kernel_hashes *h);

struct snp_measure_params {
	unsigned vcpus;          /* 1..SNP_MAX_VCPUS */
	uint32_t vcpu_sig;       /* CPUID(1).EAX of the guest's vCPU model, e.g. 0x800F12 (EPYC-v4) */
	uint64_t guest_features; /* SEV_FEATURES; bit 0 (SNPActive) must be set */
	const struct snp_kernel_hashes *hashes; /* NULL: booted without -kernel */
};

/*
 * The launch digest of the guest QEMU starts from OVMF image o with p. 0, or
 * -LLMK_ERANGE / -LLMK_EINVAL (a parameter) / -LLMK_EFORMAT / -LLMK_ENOTSUP
 * (the image cannot launch that guest: no SNP_KERNEL_HASHES section with
 * -kernel, no AP reset block with several vCPUs) with one line in err.
 */
int snp_measure(const struct snp_ovmf *o, const struct snp_measure_params *p,
		uint8_t digest[SNP_DIGEST_SIZE], char *err, size_t errlen);

#endif
