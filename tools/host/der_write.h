/*
 * tools/host/der_write.h — the DER writer (shell/http/der.h, shared with
 * the guest's TLS certificate) and, for the simulators' test certificates
 * (tools/host/snp_sim_cert.c, tools/host/tdx_sim_cert.c), what the two
 * share: the X.509 v3 frame (RFC 5280 §4.1), names, EC keys, the CA
 * extensions, and PEM text.
 */
#ifndef LLMK_DER_WRITE_H
#define LLMK_DER_WRITE_H

#include "../../shell/http/der.h"

#include <bearssl.h>

/* RFC 7468 text of one DER object: "-----BEGIN label-----", base64 in
 * 64-character lines, "-----END label-----", each line ending in LF.
 * Returns its length (NUL-terminated), or -LLMK_ERANGE. */
long der_pem(const uint8_t *der, size_t n, const char *label, char *out, size_t cap);

/* Writes one AlgorithmIdentifier (the certificate's signature algorithm). */
typedef void (*der_alg_fn)(struct der *d);

/* Name: C=US (PrintableString), O=org, CN=cn (UTF8String). */
void der_x509_name(struct der *d, const char *org, const char *cn);
/* Opens TBSCertificate and writes its head: version v3, serial, alg, issuer
 * (org, issuer), the test certificates' validity (2025-01-01 to
 * 2049-12-31, UTCTime) and subject (org, subject). The caller writes the
 * key and the extensions and der_close()s the returned position. */
size_t der_x509_tbs_open(struct der *d, uint32_t serial, der_alg_fn alg, const char *org,
			 const char *issuer, const char *subject);
/* SubjectPublicKeyInfo of an EC key (RFC 5480), P-256 or P-384 as pk->curve
 * says; another curve sets d->over. */
void der_x509_ec_spki(struct der *d, const br_ec_public_key *pk);
/* Critical extensions: basicConstraints cA TRUE with pathLenConstraint
 * path_len (none when negative), and keyUsage of the BIT STRING {unused,
 * bits} (one byte of flags). */
void der_x509_basic_ca(struct der *d, int path_len);
void der_x509_key_usage(struct der *d, uint8_t unused, uint8_t bits);
/* Certificate = SEQUENCE { tbs[0..tn), alg, BIT STRING sig[0..sn) } into
 * out[cap]: 0 and its length in *len, or -LLMK_ERANGE. */
int der_x509_cert(const uint8_t *tbs, size_t tn, der_alg_fn alg, const uint8_t *sig, size_t sn,
		  uint8_t *out, size_t cap, size_t *len);

#endif
