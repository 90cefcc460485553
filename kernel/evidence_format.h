/*
 * kernel/evidence_format.h — the evidence format, and nothing else: the
 * records a provider appends (drivers/tpm2_attest.c, sev_snp.c, tdx.c, the
 * host's simulators), the bundle around them and the report data's layout
 * (shell/evidence.c writes and reads them; tools/verify checks them).
 * docs/attestation.md is the reference; this header is its one copy in
 * code. It names no provider's code and no service.
 *
 * Report data (64 bytes) = SHA-512 over a fixed 193-byte layout:
 *   0    16  "LLMK-REPORT-V2\0\0"
 *   16    1  nonce length (1..64)
 *   17   64  nonce, zero-padded
 *   81   32  model digest (SHA-256 of the plaintext GGUF; zeros: no model)
 *   113  32  the guest's ephemeral X25519 public key
 *   145  16  build id (ASCII, plat_build_id(), zero-padded)
 *   161  32  config digest: SHA-256 of the llmk.cfg bytes the guest measured
 *            and obeys (of zero bytes when it has none: the empty configuration)
 *
 * Bundle: "LLMKEV01" then records (below: u16 type, u16 flags,
 * u32 length, value, little-endian), the common ones first. On the console it
 * is one line "evidence: " + base64 (RFC 4648 §4, padded).
 */
#ifndef LLMK_EVIDENCE_FORMAT_H
#define LLMK_EVIDENCE_FORMAT_H

#include "platform.h"

/* The providers a bundle names (its PROVIDER record: "none", "vtpm",
 * "snp", "tdx"). */
enum plat_attest_kind {
	PLAT_ATTEST_NONE = 0,
	PLAT_ATTEST_VTPM = 1,
	PLAT_ATTEST_SNP = 2,
	PLAT_ATTEST_TDX = 3,
	PLAT_ATTEST_KINDS = 4,
};

/* The register run-time measurements go into on a TPM (and that its quote
 * covers, with PCRs 0-7). */
#define PLAT_ATTEST_PCR 23

#define EVIDENCE_MAGIC "LLMKEV01"
#define EVIDENCE_MAGIC_LEN 8u
#define EVIDENCE_NONCE_MAX 64u
#define EVIDENCE_REPORT_LAYOUT 193u
#define EVIDENCE_MAX (1u << 20) /* a bundle with two event logs and certificates */

struct evidence_inputs {
	uint8_t nonce[EVIDENCE_NONCE_MAX];
	size_t nonce_len; /* 1..64 */
	uint8_t model_digest[32];
	uint8_t pubkey[32];
	char build_id[17]; /* 16 hex digits, NUL-terminated */
	uint8_t config_digest[32];
};

/* A record found in a bundle. */
struct evidence_rec {
	uint16_t type;
	const uint8_t *val;
	uint32_t len;
};

/* ---- evidence records (little-endian: u16 type, u16 flags = 0, u32 length, value) ---- */
enum attest_rec_type {
	/* common (shell/evidence.c writes these) */
	ATTEST_REC_PROVIDER = 0x0001,     /* ASCII: "none", "vtpm", "snp", "tdx" */
	ATTEST_REC_REPORT_DATA = 0x0002,  /* 64 bytes */
	ATTEST_REC_NONCE = 0x0003,        /* 1..64 bytes, the client's */
	ATTEST_REC_MODEL_DIGEST = 0x0004, /* 32 bytes: SHA-256 of the plaintext GGUF (zeros: none) */
	ATTEST_REC_PUBKEY = 0x0005,       /* 32 bytes: the guest's ephemeral X25519 public key */
	ATTEST_REC_BUILD_ID = 0x0006,     /* ASCII: plat_build_id() */
	ATTEST_REC_SIMULATED = 0x0007,    /* ASCII: which simulator made this evidence */
	ATTEST_REC_MACHINE = 0x0008,      /* retired: nothing bound it; verifiers refuse it */
	ATTEST_REC_CONFIG_DIGEST = 0x0009, /* 32 bytes: SHA-256 of the configuration the guest obeys */
	/* vtpm (TPM 2.0 Library spec Part 2 structures, marshalled big-endian) */
	ATTEST_REC_TPM_QUOTE = 0x0101,    /* TPMS_ATTEST (the contents of TPM2B_ATTEST) */
	ATTEST_REC_TPM_SIG = 0x0102,      /* TPMT_SIGNATURE */
	ATTEST_REC_TPM_AK_PUB = 0x0103,   /* TPMT_PUBLIC of the AK (contents of TPM2B_PUBLIC) */
	ATTEST_REC_TPM_PCR_SEL = 0x0104,  /* TPML_PCR_SELECTION quoted */
	ATTEST_REC_TPM_PCRS = 0x0105,     /* the quoted SHA-256 PCR values, 32 bytes each, index order */
	ATTEST_REC_TPM_EK_CERT = 0x0106,  /* DER X.509 EK certificate from NV */
	ATTEST_REC_TPM_EK_PUB = 0x0107,   /* TPMT_PUBLIC of the EK */
	ATTEST_REC_TPM_LOG_FW = 0x0108,   /* the firmware's TCG2 crypto-agile event log, as handed over */
	ATTEST_REC_TPM_LOG_KERNEL = 0x0109, /* the kernel's TCG_PCR_EVENT2 records (no header) */
	/* snp (SEV-SNP firmware ABI) */
	ATTEST_REC_SNP_REPORT = 0x0201,   /* ATTESTATION_REPORT, 1184 bytes */
	ATTEST_REC_SNP_CERTS = 0x0202,    /* the extended request's certificate table, as returned */
	/* tdx (Intel TDX DCAP) */
	ATTEST_REC_TDX_QUOTE = 0x0301,    /* quote v4 */
	ATTEST_REC_TDX_REPORT = 0x0302,   /* TDREPORT_STRUCT, 1024 bytes */
};

#define ATTEST_REC_HDR 8u

/* Append one record; -LLMK_ERANGE when it does not fit (buf unchanged). */
static inline int attest_rec_put(uint8_t *buf, size_t cap, size_t *len, uint16_t type,
				 const void *val, size_t n)
{
	if (n > 0xffffffffu || *len > cap || cap - *len < ATTEST_REC_HDR ||
	    cap - *len - ATTEST_REC_HDR < n)
		return -LLMK_ERANGE;
	uint8_t *p = buf + *len;
	p[0] = (uint8_t)type;
	p[1] = (uint8_t)(type >> 8);
	p[2] = p[3] = 0;
	for (int i = 0; i < 4; i++)
		p[4 + i] = (uint8_t)(n >> (8 * i));
	if (n)
		memcpy(p + ATTEST_REC_HDR, val, n);
	*len += ATTEST_REC_HDR + n;
	return 0;
}

#endif
