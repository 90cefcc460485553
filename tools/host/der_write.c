/*
 * tools/host/der_write.c — the DER writer of the simulators' certificates
 * (see der_write.h).
 */
#include "der_write.h"

#include "../../kernel/platform.h"
#include "../../shell/evidence.h"

#include <stdlib.h>
#include <string.h>

void der_put(struct der *d, const void *b, size_t n)
{
	if (d->over || d->cap - d->n < n) {
		d->over = true;
		return;
	}
	if (n)
		memcpy(d->p + d->n, b, n);
	d->n += n;
}

void der_put1(struct der *d, uint8_t b)
{
	der_put(d, &b, 1);
}

size_t der_open(struct der *d, uint8_t tag)
{
	der_put1(d, tag);
	return d->n;
}

void der_close(struct der *d, size_t at)
{
	size_t len = d->n - at, l = len < 0x80 ? 1 : len < 0x100 ? 2 : 3;
	if (d->over || d->cap - d->n < l || len > 0xffff) {
		d->over = true;
		return;
	}
	memmove(d->p + at + l, d->p + at, len);
	if (l == 1)
		d->p[at] = (uint8_t)len;
	else if (l == 2)
		d->p[at] = 0x81, d->p[at + 1] = (uint8_t)len;
	else
		d->p[at] = 0x82, d->p[at + 1] = (uint8_t)(len >> 8), d->p[at + 2] = (uint8_t)len;
	d->n += l;
}

void der_prim(struct der *d, uint8_t tag, const void *v, size_t n)
{
	size_t at = der_open(d, tag);
	der_put(d, v, n);
	der_close(d, at);
}

void der_integer(struct der *d, const uint8_t *be, size_t n)
{
	while (n > 1 && be[0] == 0)
		be++, n--;
	size_t at = der_open(d, 0x02);
	if (be[0] & 0x80)
		der_put1(d, 0);
	der_put(d, be, n);
	der_close(d, at);
}

void der_small_int(struct der *d, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	der_integer(d, b, 4);
}

void der_oid(struct der *d, const uint32_t *arcs, int n)
{
	size_t at = der_open(d, 0x06);
	der_put1(d, (uint8_t)(arcs[0] * 40 + arcs[1]));
	for (int i = 2; i < n; i++) {
		uint8_t b[5];
		int k = 0;
		uint32_t v = arcs[i];
		do {
			b[k++] = (uint8_t)(v & 0x7f);
			v >>= 7;
		} while (v);
		while (k--)
			der_put1(d, (uint8_t)(b[k] | (k ? 0x80 : 0)));
	}
	der_close(d, at);
}

long der_pem(const uint8_t *der, size_t n, const char *label, char *out, size_t cap)
{
	size_t bn = 4 * ((n + 2) / 3) + 1, o = 0;
	char *b64 = malloc(bn);
	long m = b64 ? b64_encode(der, n, b64, bn) : -LLMK_ENOMEM;

	if (m < 0) {
		free(b64);
		return m;
	}
	o += (size_t)plat_snprintf(out, cap, "-----BEGIN %s-----\n", label);
	for (long i = 0; i < m && o < cap; i += 64) {
		int k = (int)(m - i < 64 ? m - i : 64);
		o += (size_t)plat_snprintf(out + o, cap - o, "%.*s\n", k, b64 + i);
	}
	if (o < cap)
		o += (size_t)plat_snprintf(out + o, cap - o, "-----END %s-----\n", label);
	free(b64);
	return o < cap ? (long)o : -LLMK_ERANGE;
}
