/*
 * drivers/tpm2_attest.h — the `vtpm` provider's portable half, shared by the
 * kernel (kernel/attest.c over drivers/tpm_crb.c) and the host build
 * (tools/host/attest.c over swtpm's socket): which TPM this is, the
 * attestation key, the quote over the report data and the evidence records
 * (kernel/attest.h, docs/attestation.md), and credential activation.
 *
 * Keys are made fresh for each use from fixed templates under the
 * endorsement hierarchy (tpm2.h, TPM2_KEY_*) and flushed after: the same TPM
 * gives the same AK and EK every time, so nothing persistent is needed and
 * a verifier that saw the AK once recognises it. The EK is the one whose
 * certificate swtpm_setup (or the vendor) stored in NV: ECC P-256 at
 * 0x01c0000a if present, else RSA 2048 at 0x01c00002.
 */
#ifndef LLMK_TPM2_ATTEST_H
#define LLMK_TPM2_ATTEST_H

#include "../kernel/evidence_format.h"
#include "tpm2.h"

/* The quoted PCRs: sha256 0-7 (firmware, boot path) and PLAT_ATTEST_PCR. */
#define TPM2_ATTEST_PCRS (0xffu | 1u << PLAT_ATTEST_PCR)
#define TPM2_EK_CERT_MAX 4096

struct tpm2_attest {
	struct tpm2 tpm;    /* tpm2_init() it first */
	/* What the TPM says it is, filled by tpm2_attest_probe. */
	char vendor[48];    /* "IBM SW   TPM, firmware 20191023.00163636" */
	/* The EK, found on first use and kept. */
	bool have_ek;
	enum tpm2_key ek_kind;
	uint32_t ek_cert_index; /* 0: no certificate in NV */
	uint8_t ek_pub[TPM2_PUB_MAX];
	uint16_t ek_pub_len;
	uint8_t ek_cert[TPM2_EK_CERT_MAX];
	size_t ek_cert_len;
};

/* Ask the TPM what it is (GetCapability: manufacturer, vendor strings,
 * firmware version) into a->vendor. 0 or the command's error. */
int tpm2_attest_probe(struct tpm2_attest *a);

/*
 * Quote TPM2_ATTEST_PCRS with the AK over SHA-256(report_data) and append
 * the vtpm records to buf[*len, cap): TPM_AK_PUB, TPM_PCR_SEL, TPM_PCRS,
 * TPM_QUOTE, TPM_SIG, TPM_EK_PUB, TPM_EK_CERT (when NV has one),
 * TPM_LOG_FW (when fw_log_len), TPM_LOG_KERNEL. On failure *len is
 * unchanged and a->tpm.err says why.
 */
int tpm2_attest_evidence(struct tpm2_attest *a, const uint8_t report_data[64],
			 const uint8_t *fw_log, size_t fw_log_len, const uint8_t *kernel_log,
			 size_t kernel_log_len, uint8_t *buf, size_t cap, size_t *len);

/*
 * TPM2_ActivateCredential with the AK and the EK: cred is a credential
 * file as tpm2_makecredential writes it (u32 0xBADCC0DE, u32 version 1,
 * TPM2B_ID_OBJECT, TPM2B_ENCRYPTED_SECRET, big-endian); the recovered
 * secret goes to out. -LLMK_EFORMAT for a malformed file, -LLMK_EAUTH when
 * the TPM refuses it (made for another AK or EK).
 */
int tpm2_attest_activate(struct tpm2_attest *a, const uint8_t *cred, size_t n, uint8_t *out,
			 size_t cap, size_t *olen);

#endif
