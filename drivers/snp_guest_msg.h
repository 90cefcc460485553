/*
 * drivers/snp_guest_msg.h — SEV-SNP guest messages (AMD SEV Secure Nested
 * Paging Firmware ABI Specification, #56860: "SNP_GUEST_REQUEST" and its
 * guest message structures, MSG_KEY_REQ / MSG_REPORT_REQ). Portable: platform.h and BearSSL
 * only, so the host's tests and firmware simulator run the code the kernel
 * runs.
 *
 * A guest message is a 0x60-byte header then the payload, AES-256-GCM under
 * one of the four VMPCKs of the secrets page ("Secrets Page Format"):
 *
 *   0x00 32  AUTHTAG (GCM tag in bytes 0..15, the rest zero)
 *   0x20  8  MSG_SEQNO
 *   0x28  8  reserved
 *   0x30  1  ALGO (1 = AES-256-GCM)        \
 *   0x31  1  HDR_VERSION (1)               |
 *   0x32  2  HDR_SIZE (0x60)               |
 *   0x34  1  MSG_TYPE                      |  AAD = bytes 0x30..0x5F
 *   0x35  1  MSG_VERSION                   |
 *   0x36  2  MSG_SIZE (payload bytes)      |
 *   0x38  4  reserved                      |
 *   0x3C  1  MSG_VMPCK                     |
 *   0x3D 35  reserved                      /
 *
 * IV = MSG_SEQNO little-endian, then four zero bytes. A response carries the
 * request's type + 1 and sequence number + 1, under the same VMPCK. Reusing
 * a sequence number would reuse a GCM IV under the VMPCK, so the guest keeps
 * the last response's sequence number in the secrets page's OS area (the
 * Linux layout: a u32 per VMPCK at 0xA0 + 4n) and, on any failure after a
 * request left the guest, wipes the VMPCK for the rest of the boot (as the
 * Linux sev-guest driver does): the firmware may have consumed the number.
 *
 * Conventions as platform.h: 0 or a negative LLMK_E* code; the context keeps
 * one line saying why (snp_msg_error).
 */
#ifndef LLMK_SNP_GUEST_MSG_H
#define LLMK_SNP_GUEST_MSG_H

#include "../kernel/platform.h"

#define SNP_PAGE 4096u
#define SNP_MSG_HDR_SIZE 0x60u
#define SNP_MSG_PAYLOAD_MAX (SNP_PAGE - SNP_MSG_HDR_SIZE)
#define SNP_MSG_AAD_OFF 0x30u
#define SNP_MSG_ALGO_AES_256_GCM 1u
#define SNP_MSG_HDR_VERSION 1u
#define SNP_VMPCK_SIZE 32u
#define SNP_VMPCKS 4u

/* "Message Type Encodings". */
enum snp_msg_type {
	SNP_MSG_KEY_REQ = 3,
	SNP_MSG_KEY_RSP = 4,
	SNP_MSG_REPORT_REQ = 5,
	SNP_MSG_REPORT_RSP = 6,
};

/* "Secrets Page Format". */
#define SNP_SECRETS_VERSION 0x000u
#define SNP_SECRETS_VMPCK0 0x020u
#define SNP_SECRETS_OS_AREA 0x0A0u  /* guest-defined; the Linux layout is used */

/* STATUS of MSG_REPORT_RSP / MSG_KEY_RSP ("Status Codes"). */
#define SNP_STATUS_SUCCESS 0x00u
#define SNP_STATUS_INVALID_PARAM 0x16u
#define SNP_STATUS_INVALID_KEY 0x27u

/* The header's fields, parsed. */
struct snp_msg_hdr {
	uint64_t seqno;
	uint8_t algo, hdr_version;
	uint16_t hdr_size;
	uint8_t type, version;
	uint16_t size;
	uint8_t vmpck;
};

/* ---- the stateless primitives (the KAT, the simulator's firmware side) ---- */

/* Write header h and the encrypted payload (h->size bytes) to out (cap >=
 * 0x60 + h->size). -LLMK_ERANGE if it does not fit a page or cap. */
int snp_msg_seal(const uint8_t key[SNP_VMPCK_SIZE], const struct snp_msg_hdr *h,
		 const void *payload, uint8_t *out, size_t cap);
/* Parse a header (no checks beyond the buffer's length). */
int snp_msg_hdr_parse(const uint8_t *msg, size_t n, struct snp_msg_hdr *h);
/* Check the tag and decrypt msg's payload (MSG_SIZE bytes, which must fit n
 * and cap) into payload. -LLMK_EAUTH on a bad tag (payload zeroed),
 * -LLMK_EFORMAT on sizes or fields out of range. */
int snp_msg_open(const uint8_t key[SNP_VMPCK_SIZE], const uint8_t *msg, size_t n,
		 struct snp_msg_hdr *h, uint8_t *payload, size_t cap);

/* ---- payloads ---- */

/* MSG_REPORT_REQ ("MSG_REPORT_REQ Message Structure"), 0x60 bytes. key_sel (bits 1:0 of 0x44):
 * 0 = VLEK if the platform has one, else VCEK; 1 = VCEK; 2 = VLEK. */
#define SNP_REPORT_REQ_SIZE 0x60u
#define SNP_KEY_SEL_DEFAULT 0u
#define SNP_KEY_SEL_VCEK 1u
#define SNP_KEY_SEL_VLEK 2u
void snp_report_req_build(uint8_t out[SNP_REPORT_REQ_SIZE], const uint8_t report_data[64],
			  uint32_t vmpl, uint32_t key_sel);

/* MSG_REPORT_RSP = status, report size, 24 reserved bytes, then the
 * report ("ATTESTATION_REPORT Structure", 0x4A0 bytes). */
#define SNP_REPORT_SIZE 0x4A0u
#define SNP_REPORT_RSP_SIZE (0x20u + SNP_REPORT_SIZE)
/* *report points into rsp. -LLMK_EIO for a firmware status (named in err),
 * -LLMK_EFORMAT for a size that is not the report's. */
int snp_report_rsp_parse(const uint8_t *rsp, size_t n, const uint8_t **report, char *err,
			 size_t errn);

/* MSG_KEY_REQ ("MSG_KEY_REQ Message Structure"), 0x20 bytes. */
#define SNP_KEY_REQ_SIZE 0x20u
#define SNP_ROOT_KEY_VCEK 0u
#define SNP_ROOT_KEY_VMRK 1u
/* GUEST_FIELD_SELECT bits: which of the guest's fields are mixed in. */
#define SNP_FIELD_POLICY (1u << 0)
#define SNP_FIELD_IMAGE_ID (1u << 1)
#define SNP_FIELD_FAMILY_ID (1u << 2)
#define SNP_FIELD_MEASUREMENT (1u << 3)
#define SNP_FIELD_GUEST_SVN (1u << 4)
#define SNP_FIELD_TCB_VERSION (1u << 5)
#define SNP_FIELD_ALL 0x3fu
struct snp_key_req {
	uint32_t root_key;   /* SNP_ROOT_KEY_VCEK or _VMRK */
	uint32_t key_sel;    /* bits 2:1 of ROOT_KEY_SELECT: SNP_KEY_SEL_* */
	uint64_t fields;     /* SNP_FIELD_* */
	uint32_t vmpl;       /* >= the guest's own VMPL */
	uint32_t guest_svn;  /* <= the guest's GUEST_SVN, mixed in when selected */
	uint64_t tcb_version;/* <= the committed TCB, mixed in when selected */
};
/* -LLMK_EINVAL (why in err) for a value outside the fields' ranges. */
int snp_key_req_build(uint8_t out[SNP_KEY_REQ_SIZE], const struct snp_key_req *r, char *err,
		      size_t errn);
int snp_key_req_parse(const uint8_t *p, size_t n, struct snp_key_req *r);
/* MSG_KEY_RSP = status, 28 reserved bytes, the 32-byte key. */
#define SNP_KEY_RSP_SIZE 0x40u
int snp_key_rsp_parse(const uint8_t *rsp, size_t n, uint8_t key[32], char *err, size_t errn);

/* ---- the guest's side: sequence numbers, checks, the VMPCK wiped on failure ---- */

/* What carries a message to the firmware: the kernel's GHCB (NAE events
 * 0x8000_0011 / 0x8000_0012), the host's simulator. send() moves the
 * message in req_page (SNP_PAGE bytes) and leaves the response in
 * resp_page; with certs non-NULL it is the extended request, and
 * *certs_pages holds certs' size in pages on entry and the pages the
 * hypervisor wants or used on return. *exitinfo2 is SW_EXITINFO2 (GHCB spec
 * §4.1.8: bits 63:32 the hypervisor's error, 31:0 the firmware's). Returns
 * 0 when the exchange happened (exitinfo2 then says how it went), or a
 * negative LLMK_E* when it could not be made at all. */
#define SNP_HV_ERR_INVALID_LEN 1u
#define SNP_HV_ERR_BUSY 2u
struct snp_transport {
	int (*send)(void *ctx, uint8_t *req_page, uint8_t *resp_page, uint8_t *certs,
		    uint32_t *certs_pages, uint64_t *exitinfo2);
	void *ctx;
	uint8_t *req_page, *resp_page; /* shared with the hypervisor */
};

struct snp_guest {
	uint8_t *secrets;      /* the secrets page (private, SNP_PAGE bytes) */
	unsigned vmpck;        /* the VMPCK in use, 0..3 */
	const struct snp_transport *t;
	uint8_t buf[SNP_PAGE]; /* private copy of each message */
	char err[160];
};

/* Use VMPCK vmpck of secrets. -LLMK_ENOENT when it is all zeros (absent,
 * or wiped after a failure), -LLMK_ERANGE when its sequence number is
 * exhausted. */
int snp_guest_init(struct snp_guest *g, uint8_t *secrets, unsigned vmpck,
		   const struct snp_transport *t);
/* The sequence number the next request carries (the OS area's + 1). */
uint64_t snp_guest_next_seqno(const struct snp_guest *g);
/*
 * One round trip: request type (payload req, n bytes) out, its response
 * checked (type + 1, version, sequence number + 1, VMPCK, sizes, the tag)
 * and decrypted into rsp (cap bytes, *rsp_len set). certs/certs_pages as
 * snp_transport (NULL: the plain request). Any failure once the request
 * has left wipes the VMPCK; g->err says why.
 */
int snp_guest_request(struct snp_guest *g, uint8_t type, const void *req, size_t n,
		      uint8_t *rsp, size_t cap, size_t *rsp_len, uint8_t *certs,
		      uint32_t *certs_pages);
/* MSG_REPORT_REQ over report_data at vmpl: the 0x4A0-byte report. With
 * certs, the extended request: *certs_pages in, pages used out (0 when the
 * hypervisor has none, or wanted more than given: then the report comes
 * without them and g->err says how many it wanted). */
int snp_guest_report(struct snp_guest *g, const uint8_t report_data[64], uint32_t vmpl,
		     uint32_t key_sel, uint8_t report[SNP_REPORT_SIZE], uint8_t *certs,
		     uint32_t *certs_pages);
/*
 * The certificate table the hypervisor wrote into the shared pages of an
 * extended request (GHCB spec §4.1.8.1: 24-byte entries {GUID, offset u32,
 * length u32}, an all-zero entry ends the table), taken once: `pages` is
 * the hypervisor's count, clamped to max_pages (what the guest gave); that
 * many pages are copied from shared to dst (max_pages pages of private
 * memory) and only the copy is parsed. Returns the table's extent in dst:
 * the furthest byte an entry names, at most the bytes copied; 0 for none.
 */
size_t snp_certs_copy(uint8_t *dst, const uint8_t *shared, uint32_t pages, uint32_t max_pages);
/* MSG_KEY_REQ: a 32-byte key derived by the firmware. */
int snp_guest_derive_key(struct snp_guest *g, const struct snp_key_req *r, uint8_t key[32]);
/* Wipe the VMPCK in use (the transport failed; no number may be reused). */
void snp_guest_disable(struct snp_guest *g, const char *why);
const char *snp_guest_error(const struct snp_guest *g);

/* Little-endian accessors the callers share. */
static inline uint32_t snp_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t snp_get64(const uint8_t *p)
{
	return (uint64_t)snp_get32(p) | (uint64_t)snp_get32(p + 4) << 32;
}
static inline void snp_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void snp_put64(uint8_t *p, uint64_t v)
{
	snp_put32(p, (uint32_t)v);
	snp_put32(p + 4, (uint32_t)(v >> 32));
}

#endif
