/*
 * tools/verify/x509.h — the X.509 certificates of attestation chains (RFC
 * 5280), parsed strictly from DER, and one link of a chain checked.
 *
 * BearSSL's X.509 engine verifies RSA PKCS#1 v1.5 and ECDSA chains for TLS;
 * AMD's ARK, ASK and VCEK are signed with RSASSA-PSS, and we need the
 * vendors' own extensions (the VCEK's hwID and TCB, Intel's SGX
 * extension), so this small parser does what the evidence needs and
 * refuses the rest:
 *   - version 3 certificates, no unique IDs, the signature algorithm inside
 *     the signed part equal to the outer one (§4.1.1.2);
 *   - algorithms: RSASSA-PSS with SHA-384 / MGF1-SHA-384 / salt 48 / trailer
 *     1 (RFC 4055; the defaults may be written out), ecdsa-with-SHA256 and
 *     ecdsa-with-SHA384 (RFC 5758, no parameters);
 *   - keys: RSA (rsaEncryption, NULL parameters) and EC on P-256 or P-384,
 *     uncompressed points;
 *   - extensions: basicConstraints and keyUsage are read; any other
 *     extension marked critical is refused (§4.2); each may appear once.
 * Validity dates are parsed and shown but not compared with a clock: the
 * verifier has no trusted time (docs/verify-snp-tdx.md).
 */
#ifndef TOOLS_VERIFY_X509_H
#define TOOLS_VERIFY_X509_H

#include "vfy.h"

#define X509_MAX_EXT 16

struct x509_span {
	const uint8_t *p;
	size_t n;
};

struct x509_ext {
	struct x509_span oid;   /* contents of the OBJECT IDENTIFIER */
	int critical;
	struct x509_span value; /* contents of extnValue's OCTET STRING */
};

enum x509_alg {
	X509_ALG_RSA_PSS_SHA384 = 1,
	X509_ALG_ECDSA_SHA256,
	X509_ALG_ECDSA_SHA384,
};

enum x509_key {
	X509_KEY_RSA = 1,
	X509_KEY_EC,
};

/* keyUsage bits (RFC 5280 §4.2.1.3) as 1 << n. */
enum {
	X509_KU_DIGITAL_SIGNATURE = 1 << 0,
	X509_KU_KEY_CERT_SIGN = 1 << 5,
};

struct x509_cert {
	const char *what;            /* "VCEK certificate", for messages */
	struct x509_span der;        /* the whole certificate */
	struct x509_span tbs;        /* the signed bytes (TBSCertificate TLV) */
	struct x509_span sig;        /* signatureValue without its unused-bits byte */
	enum x509_alg alg;
	struct x509_span serial;     /* INTEGER contents */
	struct x509_span issuer;     /* Name TLVs, compared byte for byte */
	struct x509_span subject;
	struct x509_span spki;       /* SubjectPublicKeyInfo TLV */
	char issuer_cn[80], subject_cn[80];
	char not_before[32], not_after[32]; /* "2025-08-07 17:21:41" (UTC) */
	enum x509_key key_type;
	struct x509_span rsa_n, rsa_e; /* magnitudes */
	int ec_curve;                /* BR_EC_secp256r1 or BR_EC_secp384r1 */
	struct x509_span ec_point;   /* 0x04 || X || Y */
	int n_ext;
	struct x509_ext ext[X509_MAX_EXT];
	int is_ca;                   /* basicConstraints cA */
	int path_len;                /* pathLenConstraint, -1 if none */
	int key_usage;               /* X509_KU_* bits, -1 if no keyUsage */
};

/* Parse der[0..n) (exactly one certificate); c points into der. */
int x509_parse(struct x509_cert *c, const uint8_t *der, size_t n, const char *what,
	       struct vfy_log *log);

/* The extension with this OID (contents bytes), or NULL. */
const struct x509_ext *x509_ext_find(const struct x509_cert *c, const uint8_t *oid, size_t n);

/*
 * One link: issuer issued child. Checks child's issuer name equals issuer's
 * subject, issuer is a CA allowed to sign certificates (basicConstraints
 * cA, keyUsage keyCertSign when present, pathLenConstraint against
 * cas_below: the number of CA certificates between issuer and the leaf),
 * and child's signature under issuer's key with child's algorithm.
 */
int x509_check_issued(const struct x509_cert *child, const struct x509_cert *issuer,
		      int cas_below, struct vfy_log *log);

/* 1 if c names itself as issuer. */
int x509_self_issued(const struct x509_cert *c);

/* SHA-256 of the SubjectPublicKeyInfo DER: the key's fingerprint for pins. */
void x509_spki_sha256(const struct x509_cert *c, uint8_t out[32]);

/* "RSA-4096", "EC P-384", for messages. */
const char *x509_key_name(const struct x509_cert *c, char *buf, size_t n);
const char *x509_alg_name(enum x509_alg alg);

#endif
