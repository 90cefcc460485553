/*
 * tools/host/tdx_sim.h — a simulated Intel TDX module and quoting enclave,
 * for host tests and tools only.
 *
 * The TDX module's side: a TD's measurements (MRTD, RTMR0..3, the config
 * and owner fields, attributes, XFAM), TDG.MR.RTMR.EXTEND (RTMR = SHA-384(
 * RTMR || 48 bytes of data)) and TDG.MR.REPORT, which returns a
 * TDREPORT_STRUCT (Intel TDX Module v1.5 ABI Specification, "TDREPORT_
 * STRUCT": REPORTMACSTRUCT, TEE_TCB_INFO, TDINFO_STRUCT; TDX 1.0 layout,
 * REPORTTYPE version 0) over 64 bytes of report data.
 *
 * **The MAC is simulated.** A real REPORTMACSTRUCT.MAC is made with a key
 * only the CPU has and is checked by the quoting enclave with EVERIFYREPORT2;
 * here it is HMAC-SHA-256 over REPORTMACSTRUCT bytes 0..223, keyed from the
 * platform seed, and the simulated quoting enclave checks it the same way.
 *
 * The quoting enclave's side: GetQuote (GHCI v1.5 §3.3: the shared buffer
 * with version 1, status, in_len, out_len, then the TDREPORT in and the
 * quote out) and the quote itself, version 4 as Intel's DCAP "TDX Quoting
 * Library API" Appendix A.3 lays it out (the verifier tools/verify/
 * tdx_quote.c reads the same): a 48-byte header (version 4, attestation key
 * type 2 = ECDSA-256-with-P-256, TEE type 0x81, QE vendor ID), the 584-byte
 * TD quote body from the TDREPORT, the signature data: ECDSA P-256 over
 * SHA-256(header || body) by the attestation key, the attestation key,
 * certification data type 6 = the QE report (an SGX REPORT body whose
 * REPORTDATA is SHA-256(attestation key || QE authentication data) || 32
 * zero bytes), its ECDSA P-256 signature by the PCK key, the QE
 * authentication data, and certification data type 5 = the PCK chain in PEM
 * (PCK, platform CA, root). The chain is a test chain the simulator makes
 * (tools/host/tdx_sim_cert.c), its names say "llmk tdx-sim test chain (not
 * Intel)". The QE report carries the identity of Intel's TD quoting enclave
 * (its MRSIGNER, ISVPRODID 2, ATTRIBUTES without DEBUG) so that a
 * verifier's identity check applies to the simulated one as to the real;
 * no Intel key signs any of it.
 *
 * Nothing here is hardware: whoever shows its evidence says "tdx-sim".
 */
#ifndef LLMK_TDX_SIM_H
#define LLMK_TDX_SIM_H

#include "../../kernel/platform.h"

#include <bearssl.h>

#define TDX_SIM_NAME "tdx-sim"
#define TDX_REPORT_SIZE 1024u
#define TDX_QUOTE_HEADER 48u
#define TDX_QUOTE_BODY 584u
#define TDX_QE_REPORT 384u
#define TDX_SIM_QUOTE_MAX 8192u

/* TDREPORT_STRUCT offsets (TDX Module ABI, TDREPORT_STRUCT) */
enum {
	TDR_REPORTTYPE = 0, TDR_CPUSVN = 16, TDR_TEE_TCB_INFO_HASH = 32, TDR_TEE_INFO_HASH = 80,
	TDR_REPORTDATA = 128, TDR_MAC = 224,
	TDR_TEE_TCB_INFO = 256, /* 239 bytes: VALID, TEE_TCB_SVN, MRSEAM, MRSIGNERSEAM, ATTRIBUTES */
	TDR_TDINFO = 512,       /* 512 bytes: ATTRIBUTES, XFAM, MRTD, MRCONFIGID, MROWNER,
				   MROWNERCONFIG, RTMR0..3, (SERVTD_HASH), reserved */
};
#define TDR_TEE_TCB_INFO_SIZE 239u
#define TDR_TDINFO_SIZE 512u
/* In TDINFO_STRUCT */
enum {
	TDI_ATTRIBUTES = 0, TDI_XFAM = 8, TDI_MRTD = 16, TDI_MRCONFIGID = 64, TDI_MROWNER = 112,
	TDI_MROWNERCONFIG = 160, TDI_RTMR0 = 208,
};
/* In TEE_TCB_INFO */
enum { TTI_VALID = 0, TTI_TEE_TCB_SVN = 8, TTI_MRSEAM = 24, TTI_MRSIGNERSEAM = 72, TTI_ATTRIBUTES = 120 };

/* GetQuote buffer (GHCI §3.3) */
#define TDX_GQ_HEADER 24u
#define TDX_GQ_SUCCESS 0ull
#define TDX_GQ_IN_FLIGHT 0xffffffffffffffffull
#define TDX_GQ_ERROR 0x8000000000000000ull
#define TDX_GQ_UNAVAILABLE 0x8000000000000001ull

struct tdx_sim_config {
	uint8_t platform_seed[32]; /* the platform: report MAC key, PCK, the test chain */
	uint8_t mrtd[48];          /* the TD's build-time measurement */
	uint8_t mrconfigid[48], mrowner[48], mrownerconfig[48];
	uint8_t rtmr[3][48];       /* RTMR0..2 as firmware and boot loader left them */
	uint64_t td_attributes;    /* bit 0 DEBUG, bit 28 SEPT_VE_DISABLE */
	uint64_t xfam;
	uint8_t tee_tcb_svn[16];   /* TDX module SVN minor, major, SEAM last patch SVN */
	uint8_t mrseam[48];        /* the TDX module's measurement */
	uint8_t cpusvn[16];
	uint16_t qe_svn;           /* the quoting enclave's ISVSVN */
};
/* A TD as QEMU + TDVF would start one (MRTD etc. derived from fixed labels). */
void tdx_sim_config_default(struct tdx_sim_config *c);

/* Faults the simulator injects into its next answers (tests). */
enum tdx_sim_fault {
	TDX_SIM_FAULT_NONE = 0,
	TDX_SIM_FAULT_UNAVAILABLE, /* GetQuote status GET_QUOTE_SERVICE_UNAVAILABLE */
	TDX_SIM_FAULT_REPORT_MAC,  /* the TDREPORT's MAC damaged: the QE refuses it */
	TDX_SIM_FAULT_QUOTE_SIG,   /* the attestation key's signature damaged */
	TDX_SIM_FAULT_QE_SIG,      /* the QE report's signature damaged */
	TDX_SIM_FAULT_QE_BINDING,  /* QE REPORTDATA not binding the attestation key */
};

/* The test chain: root CA (self-signed), platform CA, PCK, ECDSA P-256. */
#define TDX_SIM_CERT_MAX 1024u
#define TDX_SIM_PEM_MAX 4096u
struct tdx_sim_chain {
	uint8_t der[3][TDX_SIM_CERT_MAX]; /* PCK, platform CA, root: the quote's order */
	size_t len[3];
	char pem[TDX_SIM_PEM_MAX];        /* the three as PEM, the same order */
	size_t pem_len;
};

struct tdx_sim {
	struct tdx_sim_config cfg;
	uint8_t rtmr[4][48];
	uint8_t mac_key[32];
	/* the quoting enclave's attestation key (fresh per simulated boot) */
	br_ec_private_key ak;
	uint8_t ak_x[32];
	br_ec_public_key ak_pub;
	uint8_t ak_q[65];
	/* the platform's PCK, the CA that certifies it and the root */
	br_ec_private_key pck, ca, root;
	uint8_t pck_x[32], ca_x[32], root_x[32];
	br_ec_public_key pck_pub, ca_pub, root_pub;
	uint8_t pck_q[65], ca_q[65], root_q[65];
	struct tdx_sim_chain chain;
	enum tdx_sim_fault fault;
	int fault_count;
	unsigned quotes;  /* quotes made */
	char err[160];    /* why the last call was refused */
};

/* A TD started on the configured platform: RTMRs from the config, RTMR3
 * zero, a fresh attestation key (plat_entropy), the test chain. */
int tdx_sim_init(struct tdx_sim *s, const struct tdx_sim_config *cfg);
void tdx_sim_fault(struct tdx_sim *s, enum tdx_sim_fault f, int count);

/* TDG.MR.RTMR.EXTEND: RTMR[index] = SHA-384(RTMR[index] || data).
 * -LLMK_EINVAL for an index above 3. */
int tdx_sim_rtmr_extend(struct tdx_sim *s, unsigned index, const uint8_t data[48]);
/* TDG.MR.REPORT: the TDREPORT_STRUCT over report_data (1024 bytes). */
void tdx_sim_report(const struct tdx_sim *s, const uint8_t report_data[64],
		    uint8_t out[TDX_REPORT_SIZE]);
/* The quoting enclave: a quote v4 from a TDREPORT into out (cap bytes);
 * -LLMK_EAUTH when the report's MAC does not verify, -LLMK_ERANGE when it
 * does not fit, with s->err saying so. */
int tdx_sim_quote(struct tdx_sim *s, const uint8_t tdreport[TDX_REPORT_SIZE], uint8_t *out,
		  size_t cap, size_t *len);
/* The VMM and the quote generation service behind TDG.VP.VMCALL<GetQuote>:
 * buf (size bytes) holds the GHCI buffer; the status and out_len fields
 * are set as the service would (never left IN_FLIGHT here). */
void tdx_sim_get_quote(struct tdx_sim *s, uint8_t *buf, size_t size);

/* ---- tools/host/tdx_sim_cert.c ---- */
/* The test chain for the platform's keys (already in s), in s->chain. */
int tdx_sim_chain_make(struct tdx_sim *s);

/* ---- tools/host/tdx_provider.c: the host's `tdx` provider ---- */
/*
 * LLMK_TDX_SIM=1 enables it: one simulated TD per process (a process is a
 * boot), the default configuration. Evidence: TDX_REPORT, TDX_QUOTE (through
 * the GetQuote buffer, as the kernel's drivers/tdx.c asks for it) and a
 * SIMULATED record.
 */
const char *tdx_sim_provider_why_absent(void); /* NULL when enabled */
int tdx_sim_provider_evidence(const uint8_t rd[64], uint8_t *buf, size_t cap, size_t *len);
/* As the kernel's tdx_extend_rtmr3: a SHA-256 digest zero-padded to 48 bytes. */
int tdx_sim_provider_extend_rtmr3(const uint8_t digest[32]);
const char *tdx_sim_provider_error(void);
struct tdx_sim *tdx_sim_provider_sim(void);  /* NULL when absent: tests look inside */
void tdx_sim_provider_reset(void);           /* forget the TD: the next use starts another */

#endif
