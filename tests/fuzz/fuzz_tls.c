/*
 * tests/fuzz/fuzz_tls.c — libFuzzer target for the API server's TLS
 * transport (shell/http/tls.c): a BearSSL server engine with the guest's
 * key, pumped over a fake kernel/net.h whose reads hand out the fuzzer's
 * bytes as the client's stream (first byte: how many arrive per read) and
 * whose writes take everything. What the engine decrypts is echoed back.
 *
 * Checks (ASan, UBSan, and these): a read gives at most what was asked, a
 * write at most what was given; the connection ends (an error or the
 * input's end) within a bounded number of rounds; close frees everything.
 */
#include <stdlib.h>
#include <string.h>

#include "../../kernel/net.h"
#include "../../shell/http/tls.h"

/* llm/seal.c's, without the sealed-image reader it lives beside */
void seal_zeroize(void *p, size_t n)
{
	if (p)
		memset(p, 0, n);
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

static const uint8_t *in;
static size_t in_len, in_off, chunk;

long net_read(int conn, void *buf, size_t cap)
{
	size_t n = in_len - in_off;

	if (!n)
		return NET_EOF;
	if (n > cap)
		n = cap;
	if (n > chunk)
		n = chunk;
	memcpy(buf, in + in_off, n);
	in_off += n;
	return (long)n;
}

long net_write(int conn, const void *buf, size_t n)
{
	return (long)n;
}

void net_close(int handle)
{
}

int net_poll(uint64_t timeout_ns)
{
	return 0;
}

int net_listen(uint16_t port, int *handle, uint16_t *bound)
{
	return -LLMK_ENOTSUP;
}

int net_accept(int listener, int *conn)
{
	return 0;
}

bool net_loopback_only(void)
{
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tls_key key;
	static bool have;
	uint8_t buf[2048];

	if (!have && tls_key_make(&key))
		abort();
	have = true;
	if (size < 1)
		return 0;
	chunk = 1 + (size_t)data[0] * 67; /* 1 .. 17086 bytes a read */
	in = data + 1;
	in_len = size - 1;
	in_off = 0;
	struct tls_conn *t = tls_open(&key, 3);
	if (!t)
		abort();
	int rounds = 0;
	for (;; rounds++) {
		long k = tls_read(t, buf, sizeof buf);
		if (k > (long)sizeof buf || rounds > 100000)
			abort();
		if (k < 0)
			break; /* NET_EOF or an error */
		if (k > 0 && tls_write(t, buf, (size_t)k) > k)
			abort();
		if (k == 0 && in_off == in_len)
			break; /* waiting for bytes that will never come */
	}
	tls_close(t);
	return 0;
}
