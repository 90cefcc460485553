/*
 * tools/verify/der.c — strict DER reading (der.h). X.690 §8.1 (identifier
 * and length octets) with the DER restrictions of §10.1 (definite form,
 * minimum number of length octets) and §8.3.2 (INTEGER in the fewest
 * octets).
 */
#include "der.h"

#include <stdio.h>
#include <string.h>

void der_init(struct der *d, const uint8_t *p, size_t n, const char *what, struct vfy_log *log)
{
	d->base = p;
	d->p = p;
	d->end = p + n;
	d->what = what;
	d->log = log;
}

int der_fail_at(const struct der *d, const uint8_t *at, int code, const char *field,
		const char *problem)
{
	return vfy_fail(d->log, code, "%s: %s: %s (offset %zu)", d->what, field, problem,
			(size_t)(at - d->base));
}

int der_peek(const struct der *d)
{
	return d->p < d->end ? d->p[0] : -1;
}

int der_next(struct der *d, struct der_tlv *t, const char *field)
{
	const uint8_t *p = d->p;
	size_t left = (size_t)(d->end - p), len, hl;
	char msg[96];

	if (left < 2)
		return der_fail_at(d, p, LLMK_EFORMAT, field,
				   left ? "truncated (a tag but no length)" : "missing (no bytes left)");
	/* §8.1.2.4: tag number 31 means a multi-byte tag; X.509 never needs one. */
	if ((p[0] & 0x1f) == 0x1f)
		return der_fail_at(d, p, LLMK_EFORMAT, field, "multi-byte tag");
	if (p[1] < 0x80) {
		len = p[1];
		hl = 2;
	} else {
		size_t nb = p[1] & 0x7f;
		/* 0x80 is the indefinite form, which DER forbids (§10.1). */
		if (nb == 0 || nb > 4) {
			snprintf(msg, sizeof msg, "length byte 0x%02x (%s)", p[1],
				 nb ? "longer than 4 bytes" : "indefinite length, not DER");
			return der_fail_at(d, p, LLMK_EFORMAT, field, msg);
		}
		if (left < 2 + nb)
			return der_fail_at(d, p, LLMK_EFORMAT, field, "truncated length");
		len = 0;
		for (size_t i = 0; i < nb; i++)
			len = len << 8 | p[2 + i];
		/* Fewest octets: the long form only from 128, no leading zero byte. */
		if (len < 0x80 || p[2] == 0) {
			snprintf(msg, sizeof msg, "length %zu not in the fewest bytes", len);
			return der_fail_at(d, p, LLMK_EFORMAT, field, msg);
		}
		hl = 2 + nb;
	}
	if (len > left - hl) {
		snprintf(msg, sizeof msg, "length %zu runs past the end (%zu bytes left)", len,
			 left - hl);
		return der_fail_at(d, p, LLMK_EFORMAT, field, msg);
	}
	t->tag = p[0];
	t->hdr = p;
	t->v = p + hl;
	t->len = len;
	t->total = hl + len;
	d->p = p + hl + len;
	return 0;
}

int der_expect(struct der *d, uint8_t tag, struct der_tlv *t, const char *field)
{
	const uint8_t *at = d->p;
	int e = der_next(d, t, field);
	if (e)
		return e;
	if (t->tag != tag) {
		char msg[64];
		d->p = at;
		snprintf(msg, sizeof msg, "tag 0x%02x where 0x%02x belongs", t->tag, tag);
		return der_fail_at(d, at, LLMK_EFORMAT, field, msg);
	}
	return 0;
}

void der_enter(const struct der *outer, const struct der_tlv *t, struct der *inner)
{
	inner->base = outer->base;
	inner->p = t->v;
	inner->end = t->v + t->len;
	inner->what = outer->what;
	inner->log = outer->log;
}

int der_end(const struct der *d, const char *field)
{
	if (d->p != d->end) {
		char msg[64];
		snprintf(msg, sizeof msg, "%zu unexpected bytes at the end", (size_t)(d->end - d->p));
		return der_fail_at(d, d->p, LLMK_EFORMAT, field, msg);
	}
	return 0;
}

int der_uint(const struct der *d, const struct der_tlv *t, const char *field,
	     const uint8_t **mag, size_t *mag_len)
{
	if (t->tag != DER_INTEGER)
		return der_fail_at(d, t->hdr, LLMK_EFORMAT, field, "not an INTEGER");
	if (t->len == 0)
		return der_fail_at(d, t->hdr, LLMK_EFORMAT, field, "empty INTEGER");
	if (t->v[0] & 0x80)
		return der_fail_at(d, t->hdr, LLMK_EFORMAT, field, "negative INTEGER");
	/* §8.3.2: no 0x00 before a byte whose high bit is clear. */
	if (t->len > 1 && t->v[0] == 0 && !(t->v[1] & 0x80))
		return der_fail_at(d, t->hdr, LLMK_EFORMAT, field, "INTEGER not in the fewest bytes");
	*mag = t->v;
	*mag_len = t->len;
	if (t->len > 1 && t->v[0] == 0) {
		(*mag)++;
		(*mag_len)--;
	}
	return 0;
}

int der_small_uint(const struct der *d, const struct der_tlv *t, const char *field,
		   uint32_t max, uint32_t *val)
{
	const uint8_t *m;
	size_t n;
	uint64_t v = 0;
	int e = der_uint(d, t, field, &m, &n);
	if (e)
		return e;
	if (n > 4)
		return der_fail_at(d, t->hdr, LLMK_EFORMAT, field, "INTEGER too large");
	for (size_t i = 0; i < n; i++)
		v = v << 8 | m[i];
	if (v > max) {
		char msg[64];
		snprintf(msg, sizeof msg, "value %llu above %u", (unsigned long long)v, max);
		return der_fail_at(d, t->hdr, LLMK_EFORMAT, field, msg);
	}
	*val = (uint32_t)v;
	return 0;
}

int der_oid_is(const struct der_tlv *t, const uint8_t *oid, size_t n)
{
	return t->tag == DER_OID && t->len == n && memcmp(t->v, oid, n) == 0;
}
