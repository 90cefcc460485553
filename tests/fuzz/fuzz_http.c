/*
 * tests/fuzz/fuzz_http.c — libFuzzer target for the HTTP/1.1 request
 * parser (shell/http/http.c) on any bytes, as one read and byte by byte.
 *
 * Checks: the result is 1, 0 or one of the statuses it may answer; a whole
 * request lies inside the bytes, its body at its end; feeding the bytes a
 * prefix at a time never finds a request before the whole one, nor a
 * different one.
 */
#include <stdlib.h>
#include <string.h>

#include "../../shell/http/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct http_req r, p;
	int got = http_parse(s, size, 4096, &r);

	switch (got) {
	case 1:
		if (r.total > size || r.body != s + r.total - r.body_len || !r.method[0] ||
		    r.path[0] != '/' || memchr(r.path, 0, sizeof r.path) == NULL)
			abort();
		break;
	case 0: case -400: case -413: case -414: case -431: case -501: case -505:
		break;
	default:
		abort();
	}
	for (size_t k = 0; k < size && k < 512; k++) {
		int q = http_parse(s, k, 4096, &p);
		if (q == 1 && (got != 1 || p.total != r.total))
			abort();
	}
	return 0;
}
