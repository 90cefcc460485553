/*
 * tools/host/der_write.h — a DER writer for the simulators' test
 * certificates (tools/host/snp_sim_cert.c, tools/host/tdx_sim_cert.c):
 * open a constructed element, write its children, close it; the length is
 * filled in at the close (ITU-T X.690 §8.1.3, definite form, as short as it
 * can be). A write that does not fit sets `over` and writes nothing more, so
 * a caller checks once at the end.
 */
#ifndef LLMK_DER_WRITE_H
#define LLMK_DER_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* RFC 7468 text of one DER object: "-----BEGIN label-----", base64 in
 * 64-character lines, "-----END label-----", each line ending in LF.
 * Returns its length (NUL-terminated), or -LLMK_ERANGE. */
long der_pem(const uint8_t *der, size_t n, const char *label, char *out, size_t cap);

#endif
