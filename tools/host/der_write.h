/*
 * tools/host/der_write.h — the DER writer (shell/http/der.h, shared with
 * the guest's TLS certificate) and, for the simulators' test certificates
 * (tools/host/snp_sim_cert.c, tools/host/tdx_sim_cert.c), PEM text.
 */
#ifndef LLMK_DER_WRITE_H
#define LLMK_DER_WRITE_H

#include "../../shell/http/der.h"

/* RFC 7468 text of one DER object: "-----BEGIN label-----", base64 in
 * 64-character lines, "-----END label-----", each line ending in LF.
 * Returns its length (NUL-terminated), or -LLMK_ERANGE. */
long der_pem(const uint8_t *der, size_t n, const char *label, char *out, size_t cap);

#endif
