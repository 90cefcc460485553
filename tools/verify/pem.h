/*
 * tools/verify/pem.h — certificates in PEM (RFC 7468), read strictly.
 *
 * Only the strict form of RFC 7468 §3 is accepted: "-----BEGIN
 * CERTIFICATE-----", base64 lines of exactly 64 characters (the last one
 * 4 to 64), "-----END CERTIFICATE-----", lines ending in LF or CRLF, only
 * empty lines between blocks, canonical base64 (padding only at the end,
 * unused bits zero). One optional NUL may end the text (some quote
 * generators count it). The point is that no changed byte of a PEM
 * chain can decode to the same certificates: every byte either carries
 * base64 data or is checked.
 */
#ifndef TOOLS_VERIFY_PEM_H
#define TOOLS_VERIFY_PEM_H

#include "vfy.h"

struct pem_cert {
	const uint8_t *der;
	size_t len;
};

/*
 * Decode every certificate in text[0..n) into out[0..cap), one after the
 * other; certs[0..*count) point into out. what names the source in errors
 * ("pck_chain.pem"). Returns 0, or -LLMK_EFORMAT (also when more than max
 * certificates or more than cap bytes would be needed).
 */
int pem_certs(const uint8_t *text, size_t n, const char *what, uint8_t *out, size_t cap,
	      struct pem_cert *certs, int max, int *count, struct vfy_log *log);

#endif
