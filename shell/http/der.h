/*
 * shell/http/der.h — a DER writer (ITU-T X.690, definite lengths): the TLS
 * certificate the guest makes for itself (shell/http/tls_cert.c) and the
 * attestation simulators' test certificates (tools/host/snp_sim_cert.c, tdx_sim_cert.c).
 * Open a constructed element, write its children, close it; the length is
 * filled in at the close (§8.1.3, as short as it can be). A write that does
 * not fit sets `over` and writes nothing more, so a caller checks once at
 * the end. Portable: platform.h only.
 */
#ifndef SHELL_HTTP_DER_H
#define SHELL_HTTP_DER_H

#include "../../kernel/platform.h"

struct der {
	uint8_t *p;
	size_t n, cap;
	bool over;
};

void der_put(struct der *d, const void *b, size_t n);
void der_put1(struct der *d, uint8_t b);
/* Start an element of tag; returns where its contents begin, for der_close. */
size_t der_open(struct der *d, uint8_t tag);
/* End the element opened at at (up to 65535 bytes of contents). */
void der_close(struct der *d, size_t at);
void der_prim(struct der *d, uint8_t tag, const void *v, size_t n);
/* An unsigned big-endian INTEGER: no leading zeros, a 0x00 if the top bit is set. */
void der_integer(struct der *d, const uint8_t *be, size_t n);
void der_small_int(struct der *d, uint32_t v);
/* X.690 §8.19: the first two arcs in one byte, the rest base 128. */
void der_oid(struct der *d, const uint32_t *arcs, int n);
#define DER_OID(d, ...)                                                                  \
	do {                                                                             \
		const uint32_t a_[] = { __VA_ARGS__ };                                   \
		der_oid(d, a_, (int)(sizeof a_ / sizeof a_[0]));                         \
	} while (0)

#endif
