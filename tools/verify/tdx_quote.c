/*
 * tools/verify/tdx_quote.c — Intel TDX quote v4 verification
 * (tdx_quote.h), in trust order: the PCK chain up to the trusted root, the
 * QE report under the PCK key, the attestation key under the QE report,
 * the quote under the attestation key, then the TD's own attributes and
 * what the caller expects.
 */
#include "tdx_quote.h"

#include "roots.h"
#include "sig.h"

#include <bearssl.h>
#include <stdio.h>
#include <string.h>

#define TDX_MAX_CERTS 4
#define TDX_CERT_BYTES 8192

/* Intel's QE vendor ID (header) and the TD quoting enclave's identity
 * (Intel PCS, tdx/certification/v4/qe/identity: MRSIGNER, ISVPRODID 2,
 * attributes 0x11 under mask 0xfb, MISCSELECT 0 under mask 0xffffffff). */
static const uint8_t intel_qe_vendor_id[16] = {0x93, 0x9a, 0x72, 0x33, 0xf7, 0x9c, 0x4c, 0xa9,
					       0x94, 0x0a, 0x0d, 0xb3, 0x95, 0x7f, 0x06, 0x07};
static const uint8_t td_qe_mrsigner[32] = {
	0xdc, 0x9e, 0x2a, 0x7c, 0x6f, 0x94, 0x8f, 0x17, 0x47, 0x4e, 0x34, 0xa7, 0xfc, 0x43, 0xed, 0x03,
	0x0f, 0x7c, 0x15, 0x63, 0xf1, 0xba, 0xbd, 0xdf, 0x63, 0x40, 0xc8, 0x2e, 0x0e, 0x54, 0xa8, 0xc5};
static const uint8_t td_qe_attributes[16] = {0x11};
static const uint8_t td_qe_attributes_mask[16] = {0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
#define TD_QE_ISVPRODID 2

const char *tdx_td_attributes_text(uint64_t attr, char *buf, size_t n)
{
	/* TDX module ABI, TDINFO_STRUCT.ATTRIBUTES. */
	static const struct {
		int bit;
		const char *name;
	} names[] = {{0, "DEBUG"}, {28, "SEPT_VE_DISABLE"}, {30, "PKS"}, {31, "KL"}, {63, "PERFMON"}};
	uint64_t known = 0;
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		known |= 1ull << names[i].bit;
		if (attr >> names[i].bit & 1)
			o += (size_t)snprintf(buf + o, o < n ? n - o : 0, "%s%s", o ? " " : "", names[i].name);
	}
	if ((attr & ~known) && o < n)
		o += (size_t)snprintf(buf + o, n - o, "%sother bits 0x%llx", o ? " " : "",
				      (unsigned long long)(attr & ~known));
	if (!o)
		snprintf(buf, n, "none");
	return buf;
}

/* A length field of the signature data: it must fit in what is left. */
static int take(size_t *at, size_t n, size_t limit, const char *what, struct vfy_log *log)
{
	if (n > limit - *at)
		return vfy_fail(log, LLMK_EFORMAT, "quote: %s (%zu bytes at 0x%zx) runs past the end of "
				"its container (0x%zx)", what, n, *at, limit);
	*at += n;
	return 0;
}

int tdx_quote_parse(struct tdx_quote *q, const uint8_t *b, size_t len, struct vfy_log *log)
{
	size_t at, limit;
	char h[33];
	int e;

	memset(q, 0, sizeof *q);
	q->raw = b;
	q->len = len;
	if (len < TDX_SIG_DATA)
		return vfy_fail(log, LLMK_EFORMAT, "quote: %zu bytes, shorter than header, body and "
				"signature length (%u)", len, TDX_SIG_DATA);
	q->version = vfy_le16(b + TDX_VERSION);
	q->att_key_type = vfy_le16(b + TDX_ATT_KEY_TYPE);
	q->tee_type = vfy_le32(b + TDX_TEE_TYPE);
	if (q->version != 4)
		return vfy_fail(log, LLMK_ENOTSUP, "quote: version %u is not supported (4 is)", q->version);
	if (q->tee_type != 0x81)
		return vfy_fail(log, LLMK_ENOTSUP, "quote: TEE type 0x%x is not TDX (0x81)", q->tee_type);
	if (q->att_key_type != 2)
		return vfy_fail(log, LLMK_ENOTSUP, "quote: attestation key type %u is not 2 (ECDSA-256 "
				"with P-256)", q->att_key_type);
	if (memcmp(b + TDX_QE_VENDOR_ID, intel_qe_vendor_id, 16))
		return vfy_fail(log, LLMK_ENOTSUP, "quote: QE vendor ID %s is not Intel's",
				vfy_hex(b + TDX_QE_VENDOR_ID, 16, h));
	q->td_attributes = vfy_le64(b + TDX_TD_ATTRIBUTES);
	q->xfam = vfy_le64(b + TDX_XFAM);
	if (!vfy_is_zero(b + TDX_SEAM_ATTRIBUTES, 8))
		return vfy_fail(log, LLMK_EFORMAT, "quote: SEAM_ATTRIBUTES must be zero, they are "
				"0x%016llx", (unsigned long long)vfy_le64(b + TDX_SEAM_ATTRIBUTES));

	/* Quote signature data: its length, then ECDSA-256 Quote Signature Data. */
	uint32_t sig_len = vfy_le32(b + TDX_SIG_DATA_LEN);
	at = TDX_SIG_DATA;
	if (sig_len > len - at)
		return vfy_fail(log, LLMK_EFORMAT, "quote: signature data length %u runs past the end "
				"(%zu bytes left)", sig_len, len - at);
	limit = at + sig_len;
	q->quote_sig = at;
	if ((e = take(&at, 64, limit, "the quote signature", log)))
		return e;
	q->att_key = at;
	if ((e = take(&at, 64, limit, "the attestation key", log)))
		return e;
	q->cert_type_off = at;
	if ((e = take(&at, 6, limit, "the certification data header", log)))
		return e;
	uint16_t type = vfy_le16(b + q->cert_type_off);
	uint32_t size = vfy_le32(b + q->cert_type_off + 2);
	if (type != 6)
		return vfy_fail(log, LLMK_ENOTSUP, "quote: certification data type %u is not 6 (QE report "
				"certification data)", type);
	if (size != limit - at)
		return vfy_fail(log, LLMK_EFORMAT, "quote: certification data size %u, but %zu bytes of "
				"signature data follow it", size, limit - at);

	/* QE Report Certification Data. */
	q->qe_report = at;
	if ((e = take(&at, TDX_QE_REPORT_SIZE, limit, "the QE report", log)))
		return e;
	q->qe_report_sig = at;
	if ((e = take(&at, 64, limit, "the QE report signature", log)))
		return e;
	q->qe_auth = at;
	if ((e = take(&at, 2, limit, "the QE authentication data size", log)))
		return e;
	q->qe_auth_len = vfy_le16(b + q->qe_auth);
	if ((e = take(&at, q->qe_auth_len, limit, "the QE authentication data", log)))
		return e;
	q->pck_type_off = at;
	if ((e = take(&at, 6, limit, "the PCK certification data header", log)))
		return e;
	type = vfy_le16(b + q->pck_type_off);
	size = vfy_le32(b + q->pck_type_off + 2);
	if (type != 5)
		return vfy_fail(log, LLMK_ENOTSUP, "quote: inner certification data type %u is not 5 (the "
				"PCK certificate chain)", type);
	if (size != limit - at)
		return vfy_fail(log, LLMK_EFORMAT, "quote: PCK chain size %u, but %zu bytes of signature "
				"data follow it", size, limit - at);
	q->pck_pem = at;
	q->pck_pem_len = size;
	q->end = limit;
	/* Quote buffers are often larger than the quote: allow zeros, nothing else. */
	for (size_t i = q->end; i < len; i++)
		if (b[i])
			return vfy_fail(log, LLMK_EFORMAT, "quote: byte 0x%zx after the quote's end (0x%zx) "
					"is 0x%02x, padding must be zero", i, q->end, b[i]);
	if (q->end < len)
		vfy_ok(log, "quote: version 4, TDX, ECDSA-256 key, %zu bytes (then %zu zero bytes)", q->end,
		       len - q->end);
	else
		vfy_ok(log, "quote: version 4, TDX, ECDSA-256 key, %zu bytes", q->end);
	return 0;
}

/*
 * The PCK chain: the quote's certificates (leaf first, each issued by the
 * next), ending at the trusted root, whose key must be Intel's.
 */
static int check_pck_chain(const struct tdx_quote *q, const struct pem_cert *trusted, int n_trusted,
			   const char *trusted_what, int allow_test_root, uint8_t *der, size_t cap,
			   struct x509_cert *pck, struct vfy_log *log)
{
	static const char *const names[TDX_MAX_CERTS] = {
		"PCK certificate", "PCK CA certificate", "quote certificate 3", "quote certificate 4"};
	struct pem_cert pc[TDX_MAX_CERTS];
	struct x509_cert c[TDX_MAX_CERTS], root, tmp;
	const struct vfy_root *pin;
	int n, nc = 0, root_at = -1, e;

	/* The root: the one self-issued certificate of the caller's file. */
	for (int i = 0; i < n_trusted; i++) {
		if ((e = x509_parse(&tmp, trusted[i].der, trusted[i].len, "trusted certificate", log)))
			return e;
		if (!x509_self_issued(&tmp))
			continue;
		if (root_at >= 0)
			return vfy_fail(log, LLMK_EINVAL, "%s: more than one self-issued (root) certificate",
					trusted_what);
		root_at = i;
		root = tmp;
	}
	if (root_at < 0)
		return vfy_fail(log, LLMK_EINVAL, "%s: no self-issued (root) certificate", trusted_what);
	root.what = "root certificate";
	pin = vfy_root_find(&root);
	if (!pin || strcmp(pin->vendor, "Intel")) {
		uint8_t d[32];
		char h[65];
		x509_spki_sha256(&root, d);
		if (!allow_test_root)
			return vfy_fail(log, LLMK_EAUTH, "root certificate '%s' (from %s): its key (SPKI "
					"SHA-256 %s) is not Intel's SGX Root CA key", root.subject_cn,
					trusted_what, vfy_hex(d, 32, h));
		/* simulated evidence the caller allowed: only the pin is waived */
		vfy_ok(log, "root: '%s' from %s is a TEST root, not Intel's (SPKI SHA-256 %.16s... is "
		       "not pinned): accepted for simulated evidence only", root.subject_cn,
		       trusted_what, vfy_hex(d, 32, h));
	} else {
		vfy_ok(log, "root: '%s' from %s carries Intel's pinned root key", root.subject_cn,
		       trusted_what);
	}
	if ((e = x509_check_issued(&root, &root, 0, log)))
		return e;

	/* The quote's chain, strict PEM, leaf first. */
	if ((e = pem_certs(q->raw + q->pck_pem, q->pck_pem_len, "quote PCK chain", der, cap, pc,
			   TDX_MAX_CERTS, &n, log)))
		return e;
	for (int i = 0; i < n; i++) {
		if ((e = x509_parse(&c[i], pc[i].der, pc[i].len, names[i], log)))
			return e;
		if (x509_self_issued(&c[i])) {
			/* A root in the quote is not trusted; it must be the caller's root. */
			if (i == 0 || i != n - 1)
				return vfy_fail(log, LLMK_EFORMAT, "quote PCK chain: a self-issued certificate "
						"at position %d of %d", i + 1, n);
			if (c[i].der.n != root.der.n || memcmp(c[i].der.p, root.der.p, root.der.n))
				return vfy_fail(log, LLMK_EAUTH, "quote PCK chain: its root '%s' differs from the "
						"trusted root in %s", c[i].subject_cn, trusted_what);
			break;
		}
		nc++;
	}
	if (nc < 1)
		return vfy_fail(log, LLMK_EFORMAT, "quote PCK chain: no PCK certificate");
	/* Top down: root -> CA(s) -> PCK; cas_below counts the CAs under each issuer. */
	if ((e = x509_check_issued(&c[nc - 1], &root, nc - 1, log)))
		return e;
	for (int i = nc - 2; i >= 0; i--)
		if ((e = x509_check_issued(&c[i], &c[i + 1], i, log)))
			return e;
	if (c[0].is_ca)
		return vfy_fail(log, LLMK_EAUTH, "PCK certificate '%s' is a CA certificate", c[0].subject_cn);
	if (c[0].key_usage >= 0 && !(c[0].key_usage & X509_KU_DIGITAL_SIGNATURE))
		return vfy_fail(log, LLMK_EAUTH, "PCK certificate: keyUsage lacks digitalSignature");
	if (c[0].key_type != X509_KEY_EC || c[0].ec_curve != BR_EC_secp256r1)
		return vfy_fail(log, LLMK_EFORMAT, "PCK certificate: the key is not EC P-256");
	*pck = c[0]; /* it points into the caller's der[] */
	return 0;
}

/* The QE report: signed by the PCK key, from Intel's TD quoting enclave, binding the AK. */
static int check_qe_report(const struct tdx_quote *q, const struct x509_cert *pck, struct vfy_log *log)
{
	const uint8_t *r = q->raw + q->qe_report;
	uint8_t hash[32];
	char h1[65], h2[65];
	br_sha256_context h;

	br_sha256_init(&h);
	br_sha256_update(&h, r, TDX_QE_REPORT_SIZE);
	br_sha256_out(&h, hash);
	if (!sig_ecdsa_ok(BR_EC_secp256r1, pck->ec_point.p, pck->ec_point.n, hash, 32,
			  q->raw + q->qe_report_sig, 64))
		return vfy_fail(log, LLMK_EAUTH, "QE report: its signature does not verify with the PCK "
				"certificate's key (ECDSA P-256 with SHA-256)");
	vfy_ok(log, "QE report: signed by the PCK key (ECDSA P-256 over the 384-byte report)");

	/* The PCK signs any enclave granted the provisioning key; only Intel's QE is trusted. */
	if (memcmp(r + SGX_MRSIGNER, td_qe_mrsigner, 32))
		return vfy_fail(log, LLMK_EAUTH, "QE report: MRSIGNER %s is not Intel's TD quoting "
				"enclave signer %s", vfy_hex(r + SGX_MRSIGNER, 32, h1),
				vfy_hex(td_qe_mrsigner, 32, h2));
	if (vfy_le16(r + SGX_ISVPRODID) != TD_QE_ISVPRODID)
		return vfy_fail(log, LLMK_EAUTH, "QE report: ISVPRODID %u is not the TD quoting "
				"enclave's (%u)", vfy_le16(r + SGX_ISVPRODID), TD_QE_ISVPRODID);
	for (int i = 0; i < 16; i++)
		if ((r[SGX_ATTRIBUTES + i] & td_qe_attributes_mask[i]) != td_qe_attributes[i])
			return vfy_fail(log, LLMK_EAUTH, "QE report: ATTRIBUTES %s do not match Intel's QE "
					"identity (0x11 under mask 0xfb: initialized, no DEBUG)",
					vfy_hex(r + SGX_ATTRIBUTES, 16, h1));
	if (vfy_le32(r + SGX_MISCSELECT) != 0)
		return vfy_fail(log, LLMK_EAUTH, "QE report: MISCSELECT 0x%08x is not 0",
				vfy_le32(r + SGX_MISCSELECT));
	vfy_ok(log, "QE report: Intel's TD quoting enclave (MRSIGNER %.16s..., ISVPRODID %u, ISVSVN %u, "
	       "no DEBUG)", vfy_hex(r + SGX_MRSIGNER, 32, h1), TD_QE_ISVPRODID, vfy_le16(r + SGX_ISVSVN));

	/* REPORT_DATA = SHA-256(attestation key || QE authentication data) || 32 zero bytes. */
	br_sha256_init(&h);
	br_sha256_update(&h, q->raw + q->att_key, 64);
	br_sha256_update(&h, q->raw + q->qe_auth + 2, q->qe_auth_len);
	br_sha256_out(&h, hash);
	if (memcmp(r + SGX_REPORT_DATA, hash, 32) || !vfy_is_zero(r + SGX_REPORT_DATA + 32, 32))
		return vfy_fail(log, LLMK_EAUTH, "QE report: REPORT_DATA %s... is not SHA-256(attestation "
				"key || QE authentication data) = %s followed by zeros",
				vfy_hex(r + SGX_REPORT_DATA, 32, h1), vfy_hex(hash, 32, h2));
	vfy_ok(log, "QE report: REPORT_DATA binds the attestation key and %zu bytes of QE "
	       "authentication data", q->qe_auth_len);
	return 0;
}

/* The quote: the AK's signature over header || body, then the TD itself. */
static int check_quote(const struct tdx_quote *q, const struct tdx_expect *x, struct vfy_log *log)
{
	const uint8_t *b = q->raw;
	uint8_t hash[32], point[65];
	char h1[129], h2[129];
	br_sha256_context h;

	br_sha256_init(&h);
	br_sha256_update(&h, b, TDX_HEADER_SIZE + TDX_BODY_SIZE);
	br_sha256_out(&h, hash);
	point[0] = 0x04;
	memcpy(point + 1, b + q->att_key, 64);
	if (!sig_ecdsa_ok(BR_EC_secp256r1, point, 65, hash, 32, b + q->quote_sig, 64))
		return vfy_fail(log, LLMK_EAUTH, "quote: the signature over header and TD quote body does "
				"not verify with the attestation key (ECDSA P-256 with SHA-256)");
	vfy_ok(log, "signature: ECDSA P-256 over header and TD quote body (0x000..0x277) with the "
	       "attestation key");
	if ((q->td_attributes & TDX_TD_ATTR_DEBUG) && !x->allow_debug)
		return vfy_fail(log, LLMK_EAUTH, "TD_ATTRIBUTES: DEBUG is set (bit 0): the host can read "
				"and change this TD's state; pass --allow-debug to accept it");
	vfy_ok(log, "TD_ATTRIBUTES: 0x%016llx (%s)%s", (unsigned long long)q->td_attributes,
	       tdx_td_attributes_text(q->td_attributes, h1, sizeof h1),
	       (q->td_attributes & TDX_TD_ATTR_DEBUG) ? ", DEBUG accepted by --allow-debug" : "");
	if (x->mrtd) {
		if (memcmp(b + TDX_MRTD, x->mrtd, 48))
			return vfy_fail(log, LLMK_EAUTH, "MRTD: the quote has %s, expected %s",
					vfy_hex(b + TDX_MRTD, 48, h1), vfy_hex(x->mrtd, 48, h2));
		vfy_ok(log, "MRTD: as expected");
	}
	if (x->report_data) {
		if (memcmp(b + TDX_REPORT_DATA, x->report_data, 64))
			return vfy_fail(log, LLMK_EAUTH, "report_data: the quote has %s, expected %s",
					vfy_hex(b + TDX_REPORT_DATA, 64, h1), vfy_hex(x->report_data, 64, h2));
		vfy_ok(log, "report_data: as expected");
	}
	return 0;
}

int tdx_quote_verify(const uint8_t *b, size_t len, const struct pem_cert *trusted, int n_trusted,
		     const char *trusted_what, const struct tdx_expect *x, struct tdx_quote *q,
		     struct vfy_log *log)
{
	static const struct tdx_expect none;
	uint8_t der[TDX_CERT_BYTES];
	struct x509_cert pck = {0};
	int e;

	if (!x)
		x = &none;
	if ((e = tdx_quote_parse(q, b, len, log)) ||
	    (e = check_pck_chain(q, trusted, n_trusted, trusted_what, x->allow_test_root, der,
				 sizeof der, &pck, log)) ||
	    (e = check_qe_report(q, &pck, log)) || (e = check_quote(q, x, log)))
		return e;
	return 0;
}
