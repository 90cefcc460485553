/*
 * tools/verify/snp_report.h — verifying an AMD SEV-SNP attestation report
 * against its VCEK and AMD's ARK/ASK chain.
 *
 * The report is the ATTESTATION_REPORT structure of the SEV-SNP firmware
 * ABI (AMD 56860, §7.3 "Attestation", Table 23 in rev 1.58), 1184 bytes,
 * versions 2, 3 and 5:
 *   v2   the base layout;
 *   v3   adds CPUID_FAM_ID / CPUID_MOD_ID / CPUID_STEP at 0x188..0x18A;
 *   v5   adds LAUNCH_MIT_VECTOR (0x1F8) and CURRENT_MIT_VECTOR (0x200).
 * snp_report_fields[] is the layout, one row per field or reserved range;
 * parsing, the reserved-field checks and the tests all read it.
 *
 * The VCEK certificate (AMD 57230, "VCEK Certificate and KDS Interface
 * Specification") carries the chip's hwID and the TCB it was derived for
 * as extensions under 1.3.6.1.4.1.3704.1; the report's CHIP_ID and
 * REPORTED_TCB must equal them.
 *
 * Two steps, so a caller can verify a chain once and many reports:
 *   snp_chain_verify()   ARK (pinned AMD key, self-signed) -> ASK -> VCEK,
 *                        one product throughout;
 *   snp_report_verify()  the report's format, its binding to the VCEK
 *                        (hwID, TCB, product), the ECDSA P-384 signature,
 *                        the policy, then what the caller expects.
 * Both append "ok" lines to the log and stop at the first failure with one
 * reason (vfy.h). The chain keeps pointers into the caller's certificate
 * buffers, which must outlive it.
 */
#ifndef TOOLS_VERIFY_SNP_REPORT_H
#define TOOLS_VERIFY_SNP_REPORT_H

#include "pem.h"
#include "x509.h"

#define SNP_REPORT_SIZE 0x4A0u /* spelled as drivers/snp_guest_msg.h does: one file may include both */
#define SNP_SIGNED_SIZE 0x2a0u /* the signature covers bytes 0x000..0x29F */

/* Offsets (Table 23). */
enum {
	SNP_VERSION = 0x000,
	SNP_GUEST_SVN = 0x004,
	SNP_POLICY = 0x008,
	SNP_FAMILY_ID = 0x010,
	SNP_IMAGE_ID = 0x020,
	SNP_VMPL = 0x030,
	SNP_SIGNATURE_ALGO = 0x034,
	SNP_CURRENT_TCB = 0x038,
	SNP_PLATFORM_INFO = 0x040,
	SNP_SIGNER_INFO = 0x048, /* AUTHOR_KEY_EN, MASK_CHIP_KEY, SIGNING_KEY */
	SNP_REPORT_DATA = 0x050,
	SNP_MEASUREMENT = 0x090,
	SNP_HOST_DATA = 0x0c0,
	SNP_ID_KEY_DIGEST = 0x0e0,
	SNP_AUTHOR_KEY_DIGEST = 0x110,
	SNP_REPORT_ID = 0x140,
	SNP_REPORT_ID_MA = 0x160,
	SNP_REPORTED_TCB = 0x180,
	SNP_CPUID_FAM_ID = 0x188,  /* v3+ */
	SNP_CPUID_MOD_ID = 0x189,
	SNP_CPUID_STEP = 0x18a,
	SNP_CHIP_ID = 0x1a0,
	SNP_COMMITTED_TCB = 0x1e0,
	SNP_CURRENT_BUILD = 0x1e8, /* then minor, major, reserved */
	SNP_COMMITTED_BUILD = 0x1ec,
	SNP_LAUNCH_TCB = 0x1f0,
	SNP_LAUNCH_MIT_VECTOR = 0x1f8, /* v5 */
	SNP_CURRENT_MIT_VECTOR = 0x200,
	SNP_SIG_R = 0x2a0,         /* 72 bytes little-endian, P-384 uses 48 */
	SNP_SIG_S = 0x2e8,
};

/* GUEST_POLICY bits (ABI Table 10). */
#define SNP_POLICY_SMT (1ull << 16)
#define SNP_POLICY_RESERVED_ONE (1ull << 17)
#define SNP_POLICY_MIGRATE_MA (1ull << 18)
#define SNP_POLICY_DEBUG (1ull << 19)
#define SNP_POLICY_SINGLE_SOCKET (1ull << 20)
#define SNP_POLICY_CXL_ALLOW (1ull << 21)
#define SNP_POLICY_MEM_AES_256_XTS (1ull << 22)
#define SNP_POLICY_RAPL_DIS (1ull << 23)
#define SNP_POLICY_CIPHERTEXT_HIDING (1ull << 24)
#define SNP_POLICY_PAGE_SWAP_DISABLE (1ull << 25)
#define SNP_POLICY_KNOWN ((1ull << 26) - 1)

enum snp_field_kind {
	SNP_FIELD = 0,     /* a value */
	SNP_MBZ = 1,       /* reserved, must be zero */
};

struct snp_field {
	const char *name;
	uint16_t off, len;
	uint8_t kind;
	uint8_t min_version, max_version; /* the versions with this row */
};
extern const struct snp_field snp_report_fields[];
extern const int snp_report_n_fields;

enum snp_product {
	SNP_PRODUCT_NONE = 0,
	SNP_MILAN,
	SNP_GENOA,
	SNP_TURIN,
};
const char *snp_product_name(enum snp_product p);

/* A TCB_VERSION decoded for a product (Milan/Genoa: ABI Table 3; Turin: Table 4). */
struct snp_tcb {
	uint8_t fmc, bl, tee, snp, ucode; /* fmc: Turin only */
};

struct snp_report {
	const uint8_t *raw;
	uint32_t version, guest_svn, vmpl, sig_algo, signer_info;
	uint64_t policy, platform_info;
	int has_cpuid;                  /* v3+ */
	uint8_t cpuid_fam, cpuid_mod, cpuid_step;
	int has_mit;                    /* v5 */
	uint64_t launch_mit_vector, current_mit_vector;
	uint8_t current_major, current_minor, current_build;
	uint8_t committed_major, committed_minor, committed_build;
};

/* What the verified chain vouches for. */
struct snp_chain {
	enum snp_product product;
	struct x509_cert ark, ask, vcek;
	char product_name[32];          /* the VCEK's productName: "Milan-B0" */
	uint8_t hwid[64];
	size_t hwid_len;                /* 64 (Milan, Genoa) or 8 (Turin) */
	int spl[10];                    /* TCB extensions .3.1 .. .3.9; -1 if absent */
	int test_root;                  /* the ARK is not AMD's (snp_chain_verify_opt) */
};

/* What the caller expects; NULL pointers and zero flags are not checked. */
struct snp_expect {
	const uint8_t *report_data;     /* 64 bytes */
	const uint8_t *measurement;     /* 48 bytes */
	const uint8_t *host_data;       /* 32 bytes */
	int check_policy;
	uint64_t policy;                /* the exact GUEST_POLICY */
	int allow_debug;                /* accept POLICY.DEBUG = 1 */
};

/*
 * The chain: vcek is the VCEK certificate (DER); roots[0..n_roots) are the
 * ASK and the ARK, in either order (from the user's ask_ark.pem).
 */
int snp_chain_verify(struct snp_chain *ch, const uint8_t *vcek, size_t vcek_len,
		     const struct pem_cert *roots, int n_roots, struct vfy_log *log);
/*
 * The same, but with allow_test_root an ARK whose key is not pinned is
 * accepted as a test root (the simulator's, for evidence that says it is
 * simulated and that the user allowed): it must still be the self-issued
 * certificate the caller passed, named ARK-Milan, -Genoa or -Turin, and
 * ch->test_root says so. Never for hardware evidence.
 */
int snp_chain_verify_opt(struct snp_chain *ch, const uint8_t *vcek, size_t vcek_len,
			 const struct pem_cert *roots, int n_roots, int allow_test_root,
			 struct vfy_log *log);

/* The report's format alone: size, version, reserved fields; fills r. */
int snp_report_parse(struct snp_report *r, const uint8_t *buf, size_t len, struct vfy_log *log);

/* Everything about the report, given a verified chain. */
int snp_report_verify(const struct snp_chain *ch, const uint8_t *buf, size_t len,
		      const struct snp_expect *x, struct snp_report *r, struct vfy_log *log);

/* Decode an 8-byte TCB_VERSION for the product. */
void snp_tcb_decode(enum snp_product p, const uint8_t raw[8], struct snp_tcb *t);

/* "SMT, DEBUG, ..." for GUEST_POLICY and PLATFORM_INFO bits (into buf). */
const char *snp_policy_text(uint64_t policy, char *buf, size_t n);
const char *snp_platform_info_text(uint64_t info, char *buf, size_t n);

#endif
