/*
 * tools/verify/der.h — a strict reader of DER (ITU-T X.690 §10), enough for
 * X.509 certificates and ECDSA signatures.
 *
 * Strict means one encoding per value, so that a changed byte can never
 * still parse to the same meaning: definite lengths only, in the fewest
 * bytes (X.690 §10.1), single-byte tags (no tag numbers above 30), no
 * bytes after the last element of a constructed value. INTEGERs are checked
 * for minimal two's-complement form when their value is read.
 *
 * A cursor carries the label of what it reads ("VCEK certificate") and the
 * log, so each error names the object, the field, the offset and the value.
 */
#ifndef TOOLS_VERIFY_DER_H
#define TOOLS_VERIFY_DER_H

#include "vfy.h"

enum {
	DER_BOOLEAN = 0x01,
	DER_INTEGER = 0x02,
	DER_BIT_STRING = 0x03,
	DER_OCTET_STRING = 0x04,
	DER_NULL = 0x05,
	DER_OID = 0x06,
	DER_UTF8_STRING = 0x0c,
	DER_PRINTABLE_STRING = 0x13,
	DER_IA5_STRING = 0x16,
	DER_UTC_TIME = 0x17,
	DER_GENERALIZED_TIME = 0x18,
	DER_SEQUENCE = 0x30,
	DER_SET = 0x31,
	DER_CTX0 = 0xa0, /* [n] EXPLICIT, constructed: DER_CTX0 + n */
};

struct der {
	const uint8_t *base; /* start of the whole object: offsets in messages */
	const uint8_t *p, *end;
	const char *what;    /* "VCEK certificate" */
	struct vfy_log *log;
};

struct der_tlv {
	uint8_t tag;
	const uint8_t *hdr; /* the tag byte */
	const uint8_t *v;   /* the contents */
	size_t len;         /* of the contents */
	size_t total;       /* tag + length + contents */
};

void der_init(struct der *d, const uint8_t *p, size_t n, const char *what, struct vfy_log *log);

/* Read the next TLV (any tag); field names it in errors. */
int der_next(struct der *d, struct der_tlv *t, const char *field);

/* Read the next TLV and require its tag. */
int der_expect(struct der *d, uint8_t tag, struct der_tlv *t, const char *field);

/* The tag of the next TLV, or -1 at the end. */
int der_peek(const struct der *d);

/* A cursor over t's contents (same base, label and log). */
void der_enter(const struct der *outer, const struct der_tlv *t, struct der *inner);

/* Require that nothing is left. */
int der_end(const struct der *d, const char *field);

/*
 * A non-negative INTEGER in minimal form; *mag and *mag_len get its magnitude
 * without the leading 0x00 a high bit needs (zero is one 0x00 byte).
 */
int der_uint(const struct der *d, const struct der_tlv *t, const char *field,
	     const uint8_t **mag, size_t *mag_len);

/* A non-negative INTEGER no larger than max. */
int der_small_uint(const struct der *d, const struct der_tlv *t, const char *field,
		   uint32_t max, uint32_t *val);

/* An error at t (its offset and tag in the message). */
int der_fail_at(const struct der *d, const uint8_t *at, int code, const char *field,
		const char *problem);

/* t's contents equal oid[0..n). */
int der_oid_is(const struct der_tlv *t, const uint8_t *oid, size_t n);

#endif
