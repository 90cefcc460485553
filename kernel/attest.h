/*
 * kernel/attest.h — the attestation service, beside kernel/platform.h.
 *
 * Attestation is a machine service, like the disks. A provider produces
 * evidence that binds 64 bytes of report data (shell/evidence.h says how the
 * shell composes them) to the hardware's or the vTPM's view of this guest,
 * and extends measurements the kernel makes at run time (a model's digest at
 * `load`, a key release) into a register a quote or report covers.
 *
 *   provider  kernel (drivers/)                 host build (tools/host)
 *   none      always there; evidence says so    the same
 *   vtpm      TPM 2.0 over CRB (drivers/tpm_crb) swtpm's socket ($LLMK_VTPM)
 *   snp       SEV-SNP guest request (GHCB)      a firmware simulator (tests)
 *   tdx       TDCALL TDG.MR.REPORT + GetQuote   a simulator (tests)
 *
 * The TPM command layer (marshalling, drivers/tpm2.c) and the SNP guest
 * message layer are portable, so host tests drive the same code the kernel
 * runs. llm/ never includes this header; the shell and the host tools do.
 *
 * Evidence is a list of records (type, length, value) that the provider
 * appends to a caller's buffer; shell/evidence.h wraps them in a bundle with
 * the report data's inputs. kernel/evidence_format.h is the format's one
 * description in code, docs/attestation.md its reference.
 *
 * Conventions as platform.h: 0 or a negative LLMK_E* code.
 */
#ifndef LLMK_ATTEST_H
#define LLMK_ATTEST_H

#include "platform.h"
#include "evidence_format.h"


struct plat_attest_info {
	int kind;           /* PLAT_ATTEST_* */
	const char *name;   /* "none", "vtpm", "snp", "tdx" */
	bool present;       /* the machine has it and it answered */
	/* Evidence comes from a simulator (host tests and tools only; never the
	 * kernel): every output that shows this evidence must say so. */
	bool simulated;
	/* What it is ("TPM 2.0 over CRB at 0xfed40000, IBM SW TPM 1.62") or,
	 * when absent, why ("no TPM2 ACPI table", "CPUID 0x8000001F: no SEV-SNP"). */
	char detail[128];
};

/* Fill out for kind; -LLMK_EINVAL for an unknown kind. Absent providers fill
 * it too (present = false, detail = why). */
int plat_attest_info(int kind, struct plat_attest_info *out);
/* The provider `attest` uses by default: snp, tdx, vtpm, none (first present). */
int plat_attest_default(void);

/*
 * Produce evidence over report_data and append its records (attest_rec_put)
 * to buf[*len, cap), advancing *len. -LLMK_ENOENT if the provider is absent,
 * -LLMK_ERANGE if cap is too small, -LLMK_EIO / -LLMK_EAUTH for device and
 * firmware errors (the provider has printed nothing; plat_attest_error()
 * says what happened, in one line without "error:").
 */
int plat_attest_evidence(int kind, const uint8_t report_data[64], uint8_t *buf, size_t cap,
			 size_t *len);

/*
 * A measurement made at run time: extend digest (SHA-256) into the measured
 * register of every present provider that has one (vTPM: PCR 23; TDX: RTMR3;
 * SNP has none after launch), and append an event to the kernel's event log
 * (TCG PC Client TCG_PCR_EVENT2 records, EV_EVENT_TAG, event data = what,
 * NUL-terminated). 0 also when no provider measures (the log still grows).
 */
int plat_attest_extend(const char *what, const uint8_t digest[32]);

/*
 * Credential activation (TPM 2.0 Part 1 §24; vtpm only): the TPM opens a
 * credential a verifier made for the EK and the AK that signs the quotes,
 * which it can only do if both live in this TPM. cred is the file
 * tpm2_makecredential writes (docs/attestation.md); the protected secret
 * goes to out[0..*len). -LLMK_ENOTSUP for other providers, -LLMK_ENOENT if
 * absent, -LLMK_EFORMAT for a malformed credential, -LLMK_EAUTH when the
 * TPM refuses it (plat_attest_error() says why).
 */
int plat_attest_activate(int kind, const uint8_t *cred, size_t n, uint8_t *out, size_t cap,
			 size_t *len);

/* One line saying why the last failing call failed ("" if none). */
const char *plat_attest_error(void);

/*
 * A key the hardware derives for this guest (SEV-SNP MSG_KEY_REQ): from the
 * chip's VCEK or the VM's VMRK, mixed with the guest fields selected, so
 * the same image (measurement, policy, ...) on the same chip gets the same
 * key after a reboot and nothing else does. docs/attestation.md, "Sealing
 * to the guest". -LLMK_ENOTSUP for a kind that has none (all but snp),
 * -LLMK_ENOENT when absent; err gets one line (no "error:").
 */
#define PLAT_ATTEST_ROOT_VCEK 0u
#define PLAT_ATTEST_ROOT_VMRK 1u
/* fields: SEV-SNP GUEST_FIELD_SELECT bits */
#define PLAT_ATTEST_MIX_POLICY (1u << 0)
#define PLAT_ATTEST_MIX_IMAGE_ID (1u << 1)
#define PLAT_ATTEST_MIX_FAMILY_ID (1u << 2)
#define PLAT_ATTEST_MIX_MEASUREMENT (1u << 3)
#define PLAT_ATTEST_MIX_GUEST_SVN (1u << 4)
#define PLAT_ATTEST_MIX_TCB_VERSION (1u << 5)
struct plat_attest_key_req {
	uint32_t root;        /* PLAT_ATTEST_ROOT_* */
	uint64_t fields;      /* PLAT_ATTEST_MIX_* */
	uint32_t vmpl;        /* >= the guest's VMPL */
	uint32_t guest_svn;   /* mixed in when selected (<= the guest's) */
	uint64_t tcb_version; /* mixed in when selected (<= the committed TCB) */
};
int plat_attest_guest_key(int kind, const struct plat_attest_key_req *req, uint8_t key[32],
			  char *err, size_t errn);

#endif
