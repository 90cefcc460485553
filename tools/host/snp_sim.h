/*
 * tools/host/snp_sim.h — a simulated SEV-SNP firmware (the AMD Secure
 * Processor's side of SNP_GUEST_REQUEST), for host tests and tools only.
 *
 * It holds what a launch gives a guest (the secrets page with four fresh
 * VMPCKs) and what the chip holds (a seed standing for its fused secrets,
 * from which the VCEK and CHIP_ID come), takes guest messages as the
 * firmware ABI says (header fields, VMPCK, sequence number one past the last
 * it answered, the tag), and answers MSG_REPORT_REQ with a version 3 or 5
 * ATTESTATION_REPORT signed by its VCEK (ECDSA P-384, SHA-384) and
 * MSG_KEY_REQ with a key derived from the selected fields. The derivation
 * is ours, not AMD's (which is not public), and documented in
 * docs/attestation.md: HMAC-SHA-384 over the fields, keyed by a root that
 * stands for the VCEK's or the VMRK.
 *
 * Nothing here is hardware: whoever shows its evidence says "snp-sim".
 */
#ifndef LLMK_SNP_SIM_H
#define LLMK_SNP_SIM_H

#include "../../drivers/snp_guest_msg.h"

#include <bearssl.h>

#define SNP_SIM_NAME "snp-sim"

/* What the simulated launch and chip look like. snp_sim_config_default
 * fills a Milan-like chip with report version 3. */
struct snp_sim_config {
	uint8_t chip_seed[32];      /* the chip: VCEK, CHIP_ID, the VCEK-rooted keys */
	uint8_t measurement[48];    /* MEASUREMENT: the launch digest */
	uint64_t policy;            /* POLICY (bit 17 must be one) */
	uint32_t report_version;    /* 3 or 5 */
	uint32_t guest_svn;
	uint32_t vmpl;              /* the guest's own VMPL */
	uint64_t tcb;               /* current = reported = committed = launch TCB */
	uint8_t family_id[16], image_id[16];
	uint8_t host_data[32];
	uint8_t id_key_digest[48], author_key_digest[48];
	uint8_t cpuid_fam, cpuid_mod, cpuid_step; /* CPUID_FAM_ID, _MOD_ID, _STEP (v3+) */
	uint8_t fw_build, fw_minor, fw_major;
	uint64_t launch_mit, current_mit; /* v5 mitigation vectors */
	bool have_vmrk;
	uint8_t vmrk[32];           /* the VM root key a migration agent would set */
	char product[16];           /* "Milan": the certificates' names */
};
void snp_sim_config_default(struct snp_sim_config *c);

/* Faults the simulator injects into its next answers (tests). */
enum snp_sim_fault {
	SNP_SIM_FAULT_NONE = 0,
	SNP_SIM_FAULT_STATUS,     /* MSG_*_RSP with STATUS INVALID_PARAM */
	SNP_SIM_FAULT_SEQNO,      /* response MSG_SEQNO one too far */
	SNP_SIM_FAULT_TAG,        /* response AUTHTAG damaged */
	SNP_SIM_FAULT_TYPE,       /* response MSG_TYPE = the request's */
	SNP_SIM_FAULT_FW_ERROR,   /* no response; SW_EXITINFO2 = INVALID_PARAM */
	SNP_SIM_FAULT_REPORT_SIG, /* the report's signature damaged (the verifier's case) */
};

struct snp_sim {
	struct snp_sim_config cfg;
	uint8_t secrets[SNP_PAGE];   /* what the guest gets (its private page) */
	uint8_t vmpck[SNP_VMPCKS][32]; /* the firmware's copy (the guest may wipe its own) */
	uint64_t last_seqno[SNP_VMPCKS]; /* the last response's number per VMPCK */
	uint8_t chip_id[64];
	br_ec_private_key vcek;
	uint8_t vcek_x[48];
	br_ec_public_key vcek_pub;
	uint8_t vcek_q[97];
	uint8_t report_id[32];
	enum snp_sim_fault fault;
	int fault_count;             /* how many answers get the fault (then none) */
	unsigned requests;           /* messages handled */
	char err[160];               /* why the last request was refused */
};

/* A new launch on the configured chip: fresh VMPCKs (plat_entropy), the
 * VCEK for the chip and TCB. */
int snp_sim_init(struct snp_sim *s, const struct snp_sim_config *cfg);
void snp_sim_fault(struct snp_sim *s, enum snp_sim_fault f, int count);

/* SNP_GUEST_REQUEST: the message in req (a page) in, the response to resp
 * (a page); *exitinfo2 as the hypervisor would hand it back (0 = answered;
 * the firmware's error in bits 31:0 when it refused the message). */
void snp_sim_request(struct snp_sim *s, const uint8_t *req, uint8_t *resp, uint64_t *exitinfo2);

/* The key the firmware derives for r (what MSG_KEY_RSP carries), or a
 * STATUS code (SNP_STATUS_*) when r is refused. Exposed so tests can check
 * the derivation independently of the message layer. */
uint32_t snp_sim_derive(const struct snp_sim *s, const struct snp_key_req *r, uint8_t key[32]);

/* A transport (drivers/snp_guest_msg.h) that hands messages to the
 * simulator directly, with the certificate table of *chain for the
 * extended request (none when the chain is NULL). */
struct snp_sim_chain;
struct snp_sim_link {
	struct snp_sim *sim;
	const struct snp_sim_chain *chain;
	uint8_t req[SNP_PAGE], resp[SNP_PAGE];
	struct snp_transport t;
};
void snp_sim_link(struct snp_sim_link *l, struct snp_sim *s, const struct snp_sim_chain *chain);

/* ---- tools/host/snp_sim_cert.c: a test ARK -> ASK -> VCEK chain ---- */
/*
 * X.509 v3 certificates shaped as AMD's: ARK self-signed and ASK signed by
 * it with RSASSA-PSS (SHA-384, MGF1-SHA-384, salt 48), the VCEK (the
 * simulator's ECDSA P-384 key) signed by the ASK, with AMD's extensions
 * (1.3.6.1.4.1.3704.1.*: structVersion, productName, the TCB's SPLs, hwID =
 * CHIP_ID). The RSA keys come from a seed (deterministic), 2048 bits unless
 * asked for more: AMD's are 4096, which BearSSL takes seconds to make
 * (docs/perf.md, "Remarks moved from the code").
 */
#define SNP_SIM_CERT_MAX 2048u
struct snp_sim_chain {
	uint8_t ark[SNP_SIM_CERT_MAX], ask[SNP_SIM_CERT_MAX], vcek[SNP_SIM_CERT_MAX];
	size_t ark_len, ask_len, vcek_len;
};
int snp_sim_chain_make(struct snp_sim_chain *c, const struct snp_sim *s, unsigned rsa_bits);
/* The extended request's certificate table (GHCB spec §4.1.8.1: GUID,
 * offset, length entries, a zero entry, then the certificates), in out
 * (cap bytes). Returns its length, or -LLMK_ERANGE. */
long snp_sim_cert_table(const struct snp_sim_chain *c, uint8_t *out, size_t cap);
/* PEM text of one DER certificate (for files the verifier reads). */
long snp_sim_pem(const uint8_t *der, size_t n, char *out, size_t cap);

/* ---- tools/host/snp_provider.c: the host's `snp` provider ---- */
/*
 * LLMK_SNP_SIM enables it: "1" for the default chip and launch, or a path to
 * a file of "key value" lines (chip-seed HEX64, measurement HEX96, policy,
 * report-version 3|5, guest-svn, vmpl, tcb, family-id, image-id, host-data,
 * vmrk HEX64, product, fault status|seqno|tag|type|fw-error|report-sig).
 * One simulated launch per process (a process is a boot).
 */
/* NULL when enabled and readable; else why not (one line). */
const char *snp_sim_provider_why_absent(void);
/* Evidence records over report_data: SNP_REPORT, SNP_CERTS, SIMULATED. */
int snp_sim_provider_evidence(const uint8_t rd[64], uint8_t *buf, size_t cap, size_t *len);
/* Why the last provider call failed (one line). */
const char *snp_sim_provider_error(void);
/* plat_attest_guest_key for the simulator (MSG_KEY_REQ). */
struct plat_attest_key_req;
int snp_sim_provider_guest_key(const struct plat_attest_key_req *req, uint8_t key[32],
			       char *err, size_t errn);
/* The launch's test chain, the certificates its extended request returns
 * (made on first use; NULL when absent): a verifier's user must pass its
 * ARK as --chain, so tests and tools write it out from here
 * (snp_sim_pem), not from the evidence. */
const struct snp_sim_chain *snp_sim_provider_chain(void);
/* The launch's simulator (NULL when absent): tests look inside. */
struct snp_sim *snp_sim_provider_sim(void);
/* Forget the launch: the next use starts a new one ("reboot"), re-reading
 * LLMK_SNP_SIM. */
void snp_sim_provider_reset(void);

#endif
