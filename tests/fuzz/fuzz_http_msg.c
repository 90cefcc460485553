/*
 * tests/fuzz/fuzz_http_msg.c — libFuzzer target for the proxy's HTTP
 * reading (tools/host/http_msg.c) on any bytes. The first byte picks
 * request head, response head or chunked body.
 *
 * Checks: a head's result is 1, 0 or a status it may refuse with, a whole
 * head lies inside the bytes and no prefix holds a different one; the
 * chunked decoder gives the same data, end and error fed whole, a byte at
 * a time or in pieces of the first byte's size, and its data runs lie
 * inside what it was fed.
 */
#include <stdlib.h>
#include <string.h>

#include "../../tools/host/http_msg.h"

static int dechunk(const char *s, size_t n, size_t step, char *out, size_t *out_n, size_t *used_n)
{
	struct hchunk c = {0};
	size_t off = 0;
	int r = 0;

	*out_n = 0;
	while (off < n && r == 0) {
		size_t piece = n - off < step ? n - off : step, used, dn;
		const char *d;
		r = hchunk_feed(&c, s + off, piece, &used, &d, &dn);
		if (r < 0)
			break;
		if (used > piece || (dn && (d < s + off || d + dn > s + off + piece)) || (!used && !r))
			abort();
		memcpy(out + *out_n, d, dn);
		*out_n += dn;
		off += used;
	}
	*used_n = off;
	return r;
}

static void head(const char *s, size_t n, int mode)
{
	struct hmsg m, p;
	int got = mode == 0 ? hmsg_request(s, n, 4096, &m) : hmsg_response(s, n, mode == 2, &m);

	switch (got) {
	case 1:
		if (m.head_len > n || (mode == 0 && m.target_off + m.target_len > m.head_len) ||
		    (mode == 0 && s[m.target_off] != '/'))
			abort();
		break;
	case 0: case -400: case -413: case -417: case -431: case -501: case -505:
		break;
	default:
		abort();
	}
	for (size_t k = 0; k < n && k < 512; k++) {
		int q = mode == 0 ? hmsg_request(s, k, 4096, &p) : hmsg_response(s, k, mode == 2, &p);
		if (q == 1 && (got != 1 || p.head_len != m.head_len))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char a[1 << 16], b[1 << 16];
	size_t an, bn, au, bu;

	if (size < 1 || size > sizeof a)
		return 0;
	const char *s = (const char *)data + 1;
	size_t n = size - 1;
	switch (data[0] % 4) {
	case 0: case 1: case 2:
		head(s, n, data[0] % 4);
		break;
	default: {
		int r1 = dechunk(s, n, n ? n : 1, a, &an, &au);
		int r2 = dechunk(s, n, 1, b, &bn, &bu);
		if (r1 != r2 || (r1 >= 0 && (an != bn || memcmp(a, b, an) || au != bu)))
			abort();
		int r3 = dechunk(s, n, 1 + data[0] / 4, b, &bn, &bu);
		if (r3 != r1 || (r1 >= 0 && (an != bn || memcmp(a, b, an) || au != bu)))
			abort();
	}
	}
	return 0;
}
