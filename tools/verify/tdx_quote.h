/*
 * tools/verify/tdx_quote.h — verifying an Intel TDX quote, version 4, with
 * an ECDSA-256 attestation key and QE report certification data.
 *
 * Layout: Intel "TDX DCAP Quoting Library API", Appendix A.3 (Version 4
 * Quote Format):
 *   0x000  header (48): version 4, attestation key type 2 (ECDSA-256 with
 *          P-256), TEE type 0x81 (TDX), 4 reserved bytes, QE vendor ID,
 *          user data
 *   0x030  TD quote body (584): TEE_TCB_SVN, MRSEAM, MRSIGNERSEAM,
 *          SEAM_ATTRIBUTES, TD_ATTRIBUTES, XFAM, MRTD, MRCONFIGID,
 *          MROWNER, MROWNERCONFIG, RTMR0..3, REPORT_DATA
 *   0x278  quote signature data length (4), then the data:
 *          ECDSA signature (64, r || s) by the attestation key (AK) over
 *          header || body; the AK (64, x || y); certification data type 6
 *          (QE report certification data): QE report (384, an SGX REPORT
 *          body), its ECDSA signature (64) by the PCK key, QE
 *          authentication data (2-byte size + data), and certification data
 *          type 5: the PCK certificate chain in PEM.
 *
 * Trust runs: Intel's SGX Root CA (from the caller's file, its key pinned)
 * -> PCK Platform/Processor CA -> PCK certificate (both from the quote) ->
 * QE report (signed by the PCK key, from Intel's TD quoting enclave) ->
 * attestation key (its hash in the QE report's REPORT_DATA) -> the quote.
 * TCB status (Intel PCS TCB info, QE identity SVNs, CRLs) is collateral we
 * do not fetch; docs/verify-snp-tdx.md says what that leaves out.
 */
#ifndef TOOLS_VERIFY_TDX_QUOTE_H
#define TOOLS_VERIFY_TDX_QUOTE_H

#include "pem.h"
#include "x509.h"

#define TDX_HEADER_SIZE 48u
#define TDX_BODY_SIZE 584u
#define TDX_QE_REPORT_SIZE 384u

/* Offsets in the quote (header, then TD quote body). */
enum {
	TDX_VERSION = 0x000,
	TDX_ATT_KEY_TYPE = 0x002,
	TDX_TEE_TYPE = 0x004,
	TDX_HDR_RESERVED = 0x008,
	TDX_QE_VENDOR_ID = 0x00c,
	TDX_USER_DATA = 0x01c,
	TDX_TEE_TCB_SVN = 0x030,
	TDX_MRSEAM = 0x040,
	TDX_MRSIGNERSEAM = 0x070,
	TDX_SEAM_ATTRIBUTES = 0x0a0,
	TDX_TD_ATTRIBUTES = 0x0a8,
	TDX_XFAM = 0x0b0,
	TDX_MRTD = 0x0b8,
	TDX_MRCONFIGID = 0x0e8,
	TDX_MROWNER = 0x118,
	TDX_MROWNERCONFIG = 0x148,
	TDX_RTMR0 = 0x178, /* RTMR n at TDX_RTMR0 + 48 n */
	TDX_REPORT_DATA = 0x238,
	TDX_SIG_DATA_LEN = 0x278,
	TDX_SIG_DATA = 0x27c,
};

/* Offsets in an SGX REPORT body (the QE report; SGX SDM Vol. 3D, REPORT). */
enum {
	SGX_CPUSVN = 0,
	SGX_MISCSELECT = 16,
	SGX_ATTRIBUTES = 48,
	SGX_MRENCLAVE = 64,
	SGX_MRSIGNER = 128,
	SGX_ISVPRODID = 256,
	SGX_ISVSVN = 258,
	SGX_REPORT_DATA = 320,
};

#define TDX_TD_ATTR_DEBUG (1ull << 0)

/* Where each part of a parsed quote is (offsets into the quote). */
struct tdx_quote {
	const uint8_t *raw;
	size_t len;                /* of the buffer */
	size_t end;                /* where the quote's structure ends; the rest must be zero */
	uint16_t version, att_key_type;
	uint32_t tee_type;
	uint64_t td_attributes, xfam;
	size_t quote_sig, att_key;        /* 64 bytes each */
	size_t cert_type_off;             /* the outer certification data header */
	size_t qe_report, qe_report_sig;  /* 384, 64 */
	size_t qe_auth;                   /* the 2-byte size, then qe_auth_len bytes */
	size_t qe_auth_len;
	size_t pck_type_off;              /* the inner certification data header */
	size_t pck_pem, pck_pem_len;      /* the PEM chain */
};

/* What the caller expects; NULL and zero are not checked. */
struct tdx_expect {
	const uint8_t *report_data; /* 64 bytes */
	const uint8_t *mrtd;        /* 48 bytes */
	int allow_debug;            /* accept TD_ATTRIBUTES.DEBUG */
	/* accept a root whose key is not Intel's pinned one (a simulator's test
	 * root, for evidence that says it is simulated); never for hardware */
	int allow_test_root;
};

/* The structure alone: header values, lengths, zero padding; fills q. */
int tdx_quote_parse(struct tdx_quote *q, const uint8_t *buf, size_t len, struct vfy_log *log);

/*
 * Everything: trusted[0..n_trusted) are the certificates of the caller's
 * chain file, of which exactly one must be self-issued: the root. Only the
 * root is taken from there; the PCK certificate and its CA come with the
 * quote, and a root the quote carries must be byte-for-byte the trusted one.
 */
int tdx_quote_verify(const uint8_t *buf, size_t len, const struct pem_cert *trusted, int n_trusted,
		     const char *trusted_what, const struct tdx_expect *x, struct tdx_quote *q,
		     struct vfy_log *log);

/* "DEBUG SEPT_VE_DISABLE ..." for TD_ATTRIBUTES (into buf). */
const char *tdx_td_attributes_text(uint64_t attr, char *buf, size_t n);

#endif
