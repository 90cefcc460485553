/*
 * tools/verify/bundle.h — the checks every llmk evidence bundle gets,
 * whatever its provider (docs/attestation.md), and the SEV-SNP and TDX
 * bundles' own: the hardware report or quote of the bundle, verified as
 * `verifier snp --report` / `verifier tdx --quote` verify one, bound to the
 * report data the bundle's inputs give.
 *
 * bundle_verify() is the common part, in order: the bundle's form (each
 * record type at most once), the provider (`none` is refused: it proves
 * nothing), a SIMULATED record (refused unless the caller allows simulated
 * evidence), REPORT_DATA recomputed from NONCE, MODEL_DIGEST, PUBKEY,
 * BUILD_ID and CONFIG_DIGEST (shell/evidence.h), and the nonce against the
 * verifier's. bundle_check_model() is the expected configuration and
 * model, which callers check last,
 * once the hardware evidence has bound the report data. vtpm.c,
 * snp_evidence.c and tdx_evidence.c all start with bundle_verify().
 *
 * Conventions as vfy.h: 0 or a negative LLMK_E* code, "ok" lines and the
 * one reason in the caller's struct vfy_log.
 */
#ifndef TOOLS_VERIFY_BUNDLE_H
#define TOOLS_VERIFY_BUNDLE_H

#include <stdbool.h>

#include "../../kernel/evidence_format.h"
#include "../../shell/evidence.h" /* the codec: parse, find, base64, report data */
#include "snp_report.h"
#include "tdx_quote.h"

#define BUNDLE_MAX_RECS 64
#define BUNDLE_ANY_PROVIDER (-1)

/* What the verifier expects of every bundle. */
struct bundle_expect {
	uint8_t nonce[EVIDENCE_NONCE_MAX]; /* the one the verifier chose */
	size_t nonce_len;
	bool have_model;
	uint8_t model[32];                 /* SHA-256 of the plaintext GGUF */
	bool allow_simulated;              /* accept a SIMULATED record (tests, demos) */
	/* The configuration the guest must have been told (CONFIG_DIGEST):
	 * when !have_config, the empty one (SHA-256 of zero bytes); told says
	 * what it is, for the verdict line ("" when only a digest was given). */
	bool have_config;
	uint8_t config[32];
	char told[160];
};

/* A bundle whose common checks passed; pointers go into the caller's bytes. */
struct bundle {
	struct evidence_rec rec[BUNDLE_MAX_RECS];
	int nrec;
	int kind;                 /* PLAT_ATTEST_VTPM, _SNP or _TDX */
	const char *provider;     /* "vtpm", "snp", "tdx" */
	bool simulated;           /* a SIMULATED record (accepted: allow_simulated) */
	char simulated_by[96];    /* its text, non-printable bytes as '?' */
	uint8_t report_data[64], pubkey[32], model[32], config[32];
	char build_id[17];
	/* vtpm, once the EK certificate chained to the verifier's CA: what
	 * credential activation needs (tpm_ek_pub_len 0 otherwise) */
	uint8_t tpm_ek_pub[1024], tpm_ak_name[34];
	size_t tpm_ek_pub_len;
	char config_line[256];    /* "config: sha256 <hex> (...)", once checked */
};

/*
 * The common checks of bytes[0..n): kind is the provider the caller
 * verifies (PLAT_ATTEST_*), or BUNDLE_ANY_PROVIDER for any of vtpm, snp
 * and tdx. Fills b.
 */
int bundle_verify(const uint8_t *bytes, size_t n, int kind, const struct bundle_expect *x,
		  struct bundle *b, struct vfy_log *log);
/* The expected configuration (always: the empty one unless x names
 * another), then the expected model (nothing when !x->have_model). */
int bundle_check_model(struct bundle *b, const struct bundle_expect *x, struct vfy_log *log);
/* The record of type t, present once, with a length in [min, max]; NULL
 * after vfy_fail. */
const struct evidence_rec *bundle_need(const struct bundle *b, uint16_t t, uint32_t min,
				       uint32_t max, struct vfy_log *log);
/* "SNP_REPORT", for messages ("unknown" for a type we do not know). */
const char *bundle_rec_name(uint16_t t);
/* The PLAT_ATTEST_* kind a bundle's PROVIDER record names, without any
 * other check (for dispatch); -1 when it has none or an unknown one. */
int bundle_provider_kind(const uint8_t *bytes, size_t n);
/* "none", "vtpm", "snp", "tdx" for a PLAT_ATTEST_* kind ("?" for another). */
const char *bundle_provider_name(int kind);
/* 1 when the bundle carries a SIMULATED record (it may be malformed
 * otherwise: only for labelling output before the checks ran). */
int bundle_says_simulated(const uint8_t *bytes, size_t n);

/* ---- snp_evidence.c: a bundle from provider snp ---- */
/*
 * SNP_CERTS is the extended guest request's certificate table (GHCB spec
 * §4.1.8.1, "SNP Extended Guest Request"): 24-byte entries (GUID, offset,
 * length; offsets from the table's start) ending with an all-zero entry,
 * then the certificates (DER). The GUIDs, as the table carries them (RFC
 * 4122 byte order):
 */
#define SNP_GUID_VCEK "63da758d-e664-4564-adc5-f4b93be8accd"
#define SNP_GUID_ASK "4ab7b379-bbac-4fe4-a02f-05aef327c782"
#define SNP_GUID_ARK "c0b406a4-a803-4952-9743-3fb6014cd0ae"

struct snp_cert_table {
	struct pem_cert vcek, ask, ark; /* der == NULL: no such entry */
	int entries;                    /* before the zero entry, unknown GUIDs included */
};
/* Parse a table (strictly: every entry inside it, after the entry list, no
 * GUID twice, a zero entry at the end of the list). */
int snp_cert_table_parse(const uint8_t *t, size_t n, struct snp_cert_table *out,
			 struct vfy_log *log);

struct snp_evidence_expect {
	struct bundle_expect b;
	struct snp_expect report;   /* measurement, host data, policy, debug; report_data unused */
	/* the user's VCEK (DER), or NULL: the SNP_CERTS table's */
	const uint8_t *vcek;
	size_t vcek_len;
	/* the user's --chain certificates: the ARK (trust starts there, never in
	 * the evidence), and the ASK unless the table's is to be used */
	const struct pem_cert *chain;
	int n_chain;
};
struct snp_evidence {
	struct bundle b;
	struct snp_chain ch;
	struct snp_report r;
	const uint8_t *report;      /* the SNP_REPORT record (1184 bytes) */
};
int snp_evidence_verify(const uint8_t *bytes, size_t n, const struct snp_evidence_expect *x,
			struct snp_evidence *ev, struct vfy_log *log);

/* ---- tdx_evidence.c: a bundle from provider tdx ---- */
struct tdx_evidence_expect {
	struct bundle_expect b;
	struct tdx_expect quote;    /* MRTD, debug; report_data and allow_test_root set here */
	const struct pem_cert *chain; /* the user's --chain: Intel's SGX Root CA */
	int n_chain;
	const char *chain_what;     /* its file name, for messages */
};
struct tdx_evidence {
	struct bundle b;
	struct tdx_quote q;
};
int tdx_evidence_verify(const uint8_t *bytes, size_t n, const struct tdx_evidence_expect *x,
			struct tdx_evidence *ev, struct vfy_log *log);

#endif
