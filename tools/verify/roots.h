/*
 * tools/verify/roots.h — the vendors' root keys we trust, pinned.
 *
 * A verifier's trust has to start somewhere the evidence cannot choose.
 * The user passes the root certificate (AMD's ARK, Intel's SGX Root CA) in
 * a file; on top of that, its public key must be one of these, so a
 * self-signed look-alike in the file is refused. Each pin is SHA-256 of the
 * SubjectPublicKeyInfo DER, with the subject CN the certificate must carry.
 */
#ifndef TOOLS_VERIFY_ROOTS_H
#define TOOLS_VERIFY_ROOTS_H

#include "x509.h"

struct vfy_root {
	const char *vendor;   /* "AMD", "Intel" */
	const char *cn;       /* subject CN: "ARK-Milan", "Intel SGX Root CA" */
	const char *product;  /* "Milan", "Genoa", "Turin"; "" for Intel */
	uint8_t spki_sha256[32];
};

/* The pinned root whose key and CN c carries, or NULL. */
const struct vfy_root *vfy_root_find(const struct x509_cert *c);

#endif
