/*
 * tools/host/der_write.c — PEM text of a DER object (der_write.h); the
 * DER writer itself is shell/http/der.c.
 */
#include "der_write.h"

#include "../../kernel/platform.h"
#include "../../shell/evidence.h"

#include <stdlib.h>
#include <string.h>

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
