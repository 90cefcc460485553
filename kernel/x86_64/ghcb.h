/*
 * kernel/x86_64/ghcb.h — the GHCB (AMD GHCB Specification #56421 v2), its
 * MSR protocol, and OVMF's CC blob: the one description of them, for the
 * #VC handler (vc.c) and the SEV-SNP driver (drivers/sev_snp.c). Layout and
 * encoding only: who owns the page and when it is in the GHCB MSR is the
 * callers' business.
 */
#ifndef KERNEL_X86_64_GHCB_H
#define KERNEL_X86_64_GHCB_H

#include <stdint.h>
#include <string.h>

#define MSR_GHCB 0xc0010130u

/* GHCB layout (§2.1 Table "GHCB Layout"): save-area offsets; a field's
 * bit in the valid bitmap is its offset / 8. */
enum {
	GHCB_RAX = 0x1f8, GHCB_RCX = 0x308, GHCB_RDX = 0x310, GHCB_RBX = 0x318,
	GHCB_SW_EXITCODE = 0x390, GHCB_SW_EXITINFO1 = 0x398, GHCB_SW_EXITINFO2 = 0x3a0,
	GHCB_SW_SCRATCH = 0x3a8, GHCB_XCR0 = 0x3e8, GHCB_VALID_BITMAP = 0x3f0,
	GHCB_SHARED_BUFFER = 0x800, GHCB_PROTOCOL_VERSION = 0xffa, GHCB_USAGE = 0xffc,
};
#define GHCB_PROTOCOL 2u /* the version this kernel speaks (and the most it takes) */

/* The MSR protocol (§2.3.1, Table "GHCB MSR Protocol"): GHCBInfo in bits 11:0. */
#define GHCB_MSR_INFO_MASK 0xfffull
#define GHCB_MSR_SEV_INFO_RESP 0x001ull
#define GHCB_MSR_SEV_INFO_REQ 0x002ull
#define GHCB_MSR_CPUID_REQ 0x004ull
#define GHCB_MSR_CPUID_RESP 0x005ull
#define GHCB_MSR_REG_GPA_REQ 0x012ull
#define GHCB_MSR_REG_GPA_RESP 0x013ull
#define GHCB_MSR_PSC_REQ 0x014ull
#define GHCB_MSR_PSC_RESP 0x015ull
#define GHCB_MSR_PSC_SHARED 2ull
#define GHCB_MSR_HV_FEAT_REQ 0x080ull
#define GHCB_MSR_HV_FEAT_RESP 0x081ull
#define GHCB_MSR_HV_FEAT_SNP (1ull << 0)
#define GHCB_MSR_TERM_REQ 0x100ull

/* A field of the GHCB page g, marked valid. */
static inline void ghcb_set(uint8_t *g, unsigned off, uint64_t v)
{
	memcpy(g + off, &v, 8);
	g[GHCB_VALID_BITMAP + off / 64] |= (uint8_t)(1u << ((off / 8) % 8));
}

static inline uint64_t ghcb_get(const uint8_t *g, unsigned off)
{
	uint64_t v;
	memcpy(&v, g + off, 8);
	return v;
}

static inline bool ghcb_valid(const uint8_t *g, unsigned off)
{
	return (g[GHCB_VALID_BITMAP + off / 64] >> ((off / 8) % 8)) & 1;
}

/* The fields after the save area's: protocol version and usage (0: the
 * standard layout). */
static inline void ghcb_seal(uint8_t *g, uint16_t version)
{
	uint32_t usage = 0;
	memcpy(g + GHCB_PROTOCOL_VERSION, &version, 2);
	memcpy(g + GHCB_USAGE, &usage, 4);
}

/* OVMF's CONFIDENTIAL_COMPUTING_SNP_BLOB_LOCATION (the CC blob,
 * ConfidentialComputingSevSnpBlob.h): the secrets and CPUID pages. */
struct cc_blob {
	uint32_t magic; /* "AMDE" */
	uint16_t version, rsvd1;
	uint64_t secrets_phys;
	uint32_t secrets_len, rsvd2;
	uint64_t cpuid_phys;
	uint32_t cpuid_len, rsvd3;
} __attribute__((packed));
#define CC_BLOB_MAGIC 0x45444d41u

#endif
