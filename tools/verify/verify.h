/*
 * tools/verify/verify.h — build/host/verifier's pieces (host only: libc and
 * Debian's BearSSL). tools/verifier.c dispatches `verifier <subcommand>` to
 * one entry function per subcommand, each in its own tools/verify/cmd_*.c;
 * the checks themselves live in library files the unit tests link:
 *
 *   tpm2.c      TPM 2.0 Part 2 structures the evidence carries (unmarshal)
 *   eventlog.c  TCG PC Client PFP event logs: parse and replay
 *   ekcert.c    the EK certificate: chain to a CA, key equal to the EK's
 *   bundle.c    the checks every bundle gets (bundle.h); snp_evidence.c and
 *               tdx_evidence.c: SEV-SNP and TDX bundles
 *   vtpm.c      every check of a vtpm bundle, in order
 *   pe.c        PE/COFF Authenticode SHA-256 and the PCR4 OVMF makes of it
 *   io.c        evidence files (three forms), hex, files
 *
 * Conventions: 0 or -LLMK_E*; err gets one line (no "error:") naming the
 * check, the field and the value.
 */
#ifndef TOOLS_VERIFY_H
#define TOOLS_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../kernel/evidence_format.h"
#include "../../shell/evidence.h" /* the codec: parse, find, base64, report data */
#include "bundle.h"
#include "cmd.h"

/* ---- subcommands (argv[0] is the subcommand's own name) ---- */
int verify_cmd_vtpm(int argc, char **argv);
int verify_cmd_tls(int argc, char **argv);  /* cmd_tls.c: attested TLS with a guest's serve */
int verify_cmd_wrap(int argc, char **argv);
int verify_cmd_measure_pcr4(int argc, char **argv);

struct vtpm_result;
/* ---- cmd_vtpm.c: the options and checks `vtpm` and `wrap` share ---- */
struct vtpm_cli {
	struct bundle_cli b;  /* --evidence --nonce --expect-model --allow-simulated */
	const char *pcr4, *ek_ca, *export_dir;
};
/* Take argv[*i] (and its value) if it is one of vtpm's options (the bundle's
 * included): 1 taken, 0 not one of them, -1 bad (printed). */
int vtpm_cli_opt(struct vtpm_cli *o, int argc, char **argv, int *i);
/* Load everything o names, verify, print the ok lines and the summary (or
 * one error line). 0 verified, 1 not (printed). bundle is kept for res's
 * pointers; the caller frees *bundle. */
int vtpm_cli_verify(const struct vtpm_cli *o, uint8_t **bundle, struct vtpm_result *res);

/* ---- cmd_provider.c: every provider's options and checks, the bundle's
 * PROVIDER record picking one (`verifier wrap`, `llmctl --connect`) ---- */
struct provider_cli {
	struct vtpm_cli vtpm;
	struct snp_cli snp;
	struct tdx_cli tdx;
};
/* As vtpm_cli_opt, snp_cli_opt or tdx_cli_opt for kind (PLAT_ATTEST_VTPM,
 * _SNP, _TDX): 1 taken, 0 not one of kind's options, -1 bad (printed). */
int provider_cli_opt(struct provider_cli *o, int kind, int argc, char **argv, int *i);
/* Every check of kind's bundle that o names, printed as `verifier vtpm`,
 * `snp --evidence` or `tdx --evidence` print them; 0 with *b the verified
 * bundle (as snp_cli_evidence), or 1 (printed). */
int provider_cli_verify(const struct provider_cli *o, int kind, struct bundle *b);
/* kind's bundle options (--evidence, --nonce, --expect-model, ...). */
const struct bundle_cli *provider_cli_bundle(const struct provider_cli *o, int kind);

/* ---- release.c: what every release to a verified guest carries ---- */
#define RELEASE_SECRET 32
/*
 * For vtpm evidence (b verified, its EK certificate chained to the
 * verifier's CA): a TPM credential for b's EK and AK name over a fresh
 * secret, which only that TPM's TPM2_ActivateCredential recovers; the
 * release mixes the secret into its key. snp, tdx: nothing (*cred_n and
 * *secret_n 0). 0, or 1 after cmd_fail (vtpm without a certified EK).
 */
int release_credential(const struct bundle *b, uint8_t *cred, size_t cap, size_t *cred_n,
		       uint8_t secret[RELEASE_SECRET], size_t *secret_n);

/* ---- io.c ---- */
/* Read FILE holding evidence as an "evidence: <base64>" line (anywhere in a
 * transcript), bare base64, or the binary bundle. *form says which. */
int verify_read_evidence(const char *path, uint8_t **buf, size_t *len, const char **form,
			 char *err, size_t errn);
/* Hex (no 0x, even length, whitespace around allowed) into out[max]; *n its length. */
int verify_parse_hex(const char *s, uint8_t *out, size_t max, size_t *n);
int verify_read_file(const char *path, uint8_t **buf, size_t *len, size_t max);
int verify_write_file(const char *dir, const char *name, const void *p, size_t n);
void verify_hex(const uint8_t *p, size_t n, char *out); /* 2n + 1 bytes */

/* ---- tpm2.c: TPM 2.0 Library Part 2, big-endian ---- */
enum {
	TPM_ALG_RSA = 0x0001, TPM_ALG_SHA1 = 0x0004, TPM_ALG_SHA256 = 0x000b,
	TPM_ALG_SHA384 = 0x000c, TPM_ALG_SHA512 = 0x000d, TPM_ALG_NULL = 0x0010,
	TPM_ALG_SM3_256 = 0x0012, TPM_ALG_RSASSA = 0x0014, TPM_ALG_ECDSA = 0x0018,
	TPM_ALG_ECC = 0x0023, TPM_ALG_AES = 0x0006, TPM_ALG_CFB = 0x0043,
	TPM_ECC_NIST_P256 = 0x0003, TPM_ECC_NIST_P384 = 0x0004,
	TPM_ST_ATTEST_QUOTE = 0x8018,
};
#define TPM_GENERATED_VALUE 0xff544347u
/* TPMA_OBJECT bits (Part 2 §8.3) */
#define TPMA_FIXED_TPM (1u << 1)
#define TPMA_FIXED_PARENT (1u << 4)
#define TPMA_SENSITIVE_DATA_ORIGIN (1u << 5)
#define TPMA_USER_WITH_AUTH (1u << 6)
#define TPMA_ADMIN_WITH_POLICY (1u << 7)
#define TPMA_NO_DA (1u << 10)
#define TPMA_RESTRICTED (1u << 16)
#define TPMA_DECRYPT (1u << 17)
#define TPMA_SIGN (1u << 18)

#define TPM_PCRS 24

struct tpm2_quote {            /* TPMS_ATTEST with TPMS_QUOTE_INFO (§10.12.12, §10.12.1) */
	uint32_t magic;
	uint16_t type;
	const uint8_t *signer;  uint16_t signer_len;   /* qualifiedSigner */
	const uint8_t *extra;   uint16_t extra_len;    /* extraData */
	uint64_t clock;
	uint32_t reset_count, restart_count;
	uint8_t safe;
	uint64_t firmware;
	const uint8_t *sel;     size_t sel_len;        /* TPML_PCR_SELECTION, as marshalled */
	const uint8_t *digest;  uint16_t digest_len;   /* pcrDigest */
};

struct tpm2_pcr_sel {          /* one bank's selection from a TPML_PCR_SELECTION */
	uint16_t hash;
	uint32_t mask;          /* bit i: PCR i */
};

struct tpm2_public {           /* TPMT_PUBLIC (§12.2.4), ECC or RSA */
	uint16_t type, name_alg;
	uint32_t attrs;
	uint8_t policy[64];     /* authPolicy */
	uint16_t policy_len;
	uint16_t sym;           /* parameters.symmetric.algorithm */
	uint16_t sym_bits, sym_mode; /* its keyBits and mode (when not TPM_ALG_NULL) */
	uint16_t kdf;           /* ECC: kdf.scheme */
	uint16_t scheme, scheme_hash;
	uint16_t curve;         /* ECC */
	uint8_t x[66], y[66];   /* ECC unique, big-endian */
	uint16_t x_len, y_len;
	uint16_t rsa_bits;      /* RSA */
	uint32_t rsa_exp;       /* 0 in the structure means 65537; stored as 65537 */
	uint8_t n[512];
	uint16_t n_len;
};

struct tpm2_sig {              /* TPMT_SIGNATURE (§11.3.4), ECDSA */
	uint16_t alg, hash;
	uint8_t r[66], s[66];
	uint16_t r_len, s_len;
};

int tpm2_parse_quote(const uint8_t *p, size_t n, struct tpm2_quote *q, char *err, size_t errn);
/* Up to max banks; returns the count or -LLMK_EFORMAT. */
int tpm2_parse_pcr_sel(const uint8_t *p, size_t n, struct tpm2_pcr_sel *sel, int max, char *err,
		       size_t errn);
int tpm2_parse_public(const uint8_t *p, size_t n, struct tpm2_public *pub, char *err, size_t errn);
int tpm2_parse_sig(const uint8_t *p, size_t n, struct tpm2_sig *sig, char *err, size_t errn);
/* Uncompressed SEC1 point 04 || X || Y (coordinates padded to the curve's size). */
int tpm2_ecc_point(const struct tpm2_public *pub, uint8_t *out, size_t *len);
/* The AK as a PEM SubjectPublicKeyInfo (for tpm2_checkquote -u). */
int tpm2_ecc_pem(const struct tpm2_public *pub, char *out, size_t cap);
const char *tpm2_alg_name(uint16_t alg);

/* ---- eventlog.c: TCG PC Client Platform Firmware Profile §10 ---- */
#define EV_NO_ACTION 0x00000003u
#define EV_SEPARATOR 0x00000004u
#define EV_ACTION 0x00000005u
#define EV_EVENT_TAG 0x00000006u
#define EV_EFI_BOOT_SERVICES_APPLICATION 0x80000003u
#define EV_EFI_ACTION 0x80000007u
#define EV_EFI_VARIABLE_DRIVER_CONFIG 0x80000001u
#define EV_EFI_VARIABLE_BOOT 0x80000002u
#define EV_EFI_VARIABLE_BOOT2 0x8000000cu

struct evlog_replay {
	uint8_t pcr[TPM_PCRS][32];     /* SHA-256 bank */
	uint32_t extended;             /* bit i: PCR i had an event */
	int events;                    /* extended into the bank */
	uint16_t alg[8], size[8];      /* digest sizes from the Spec ID event */
	int nalg;
	int startup_locality;          /* -1: no StartupLocality event */
	size_t used;                   /* bytes of the last log replayed, before any zero padding */
	/* the kernel's own records follow (the caller sets it before replaying
	 * them): each is PCR 23, EV_EVENT_TAG, printable text "llmk ..." whose
	 * last word is its digest in hex (docs/attestation.md) */
	bool kernel;
	/* PCR 23's first event (the kernel's "llmk config <hex>"): its data
	 * (pointing into the log) and SHA-256 digest; NULL data: none yet */
	const uint8_t *first23;
	uint32_t first23_len;
	uint8_t first23_digest[32];
};

/* Reset r: PCRs 0-16 and 23 zero, 17-22 all ones (TPM2_Startup(CLEAR) on a
 * PC client TPM), no digest table yet. */
void evlog_init(struct evlog_replay *r);
/* A firmware log: the SHA-1-format header event with TCG_EfiSpecIDEvent, then
 * TCG_PCR_EVENT2 records; replayed into r. */
int evlog_replay_firmware(struct evlog_replay *r, const uint8_t *p, size_t n, char *err,
			  size_t errn);
/* TCG_PCR_EVENT2 records alone (the kernel's), with r's digest table
 * (or the standard sizes when there was no header). */
int evlog_replay_events(struct evlog_replay *r, const uint8_t *p, size_t n, const char *what,
			char *err, size_t errn);
/* Append one TCG_PCR_EVENT2 with a single SHA-256 digest to buf (tests and
 * the PCR4 replay use it); returns the bytes written or -LLMK_ERANGE. */
long evlog_put_event(uint8_t *buf, size_t cap, uint32_t pcr, uint32_t type,
		     const uint8_t digest[32], const void *data, uint32_t data_len);
void evlog_extend(uint8_t pcr[32], const uint8_t digest[32]);

/* ---- ekcert.c ---- */
/* Validate the DER EK certificate against the CA certificates in ca_pem (one
 * or more PEM certificates: each is a trust anchor, and those that are not
 * self-signed may also serve as intermediates), at the current time; then
 * check its public key equals ek's. */
int ekcert_verify(const uint8_t *cert, size_t cert_len, const char *ca_pem, size_t ca_len,
		  const struct tpm2_public *ek, char *err, size_t errn);

/* ---- vtpm.c ---- */
struct vtpm_expect {
	struct bundle_expect b;  /* nonce, model, allow_simulated */
	bool have_pcr4;
	uint8_t pcr4[32];
	const char *ek_ca_pem;  /* NULL: EK certificate not checked (said so) */
	size_t ek_ca_len;
};

#define VTPM_MAX_LINES 40
struct vtpm_result {
	char line[VTPM_MAX_LINES][200];  /* "ok   ..." lines, in order */
	int nlines;
	char summary[700];
	/* what export and wrap use, pointing into the bundle */
	struct bundle b;
	const struct evidence_rec *quote, *sig, *ak, *sel, *pcrs, *log_fw, *log_kernel;
	struct tpm2_public ak_pub;
	uint8_t ak_name[34];             /* 0x000B || SHA-256(AK's TPMT_PUBLIC) */
	uint32_t pcr_mask;
	size_t fw_used, kernel_used;     /* the logs' lengths without zero padding */
	const uint8_t *first23;          /* PCR 23's first event, as evlog_replay found it */
	uint32_t first23_len;
	uint8_t first23_digest[32];
};

/* Every check in order; 0 with res filled, or the first failure's code with
 * its reason in err. */
int vtpm_verify(const uint8_t *bundle, size_t n, const struct vtpm_expect *x,
		struct vtpm_result *res, char *err, size_t errn);
/* --export DIR: the files tpm2_checkquote reads (vtpm.c) */
int vtpm_export(const struct vtpm_result *res, const char *dir, char *err, size_t errn);

/* ---- pe.c: Microsoft PE/COFF Authenticode, SHA-256 ---- */
int pe_authenticode_sha256(const uint8_t *img, size_t n, uint8_t out[32], char *err, size_t errn);
/* The PCR4 OVMF produces booting an image of that digest from a boot option
 * (eventlog.c's replay of its three events). */
void pe_pcr4_ovmf(const uint8_t authenticode[32], uint8_t pcr4[32]);

#endif
