/*
 * tests/unit/test_http_msg.c — the proxy's HTTP/1.1 reading
 * (tools/host/http_msg.c): request and response heads with their framing,
 * the refusals shell/http/http.c makes, and the chunked coding decoded
 * whole and a byte at a time to the same data.
 */
#include "test.h"
#include "../../tools/host/http_msg.h"

static int req(const char *s, struct hmsg *m)
{
	return hmsg_request(s, strlen(s), 100, m);
}

static int resp(const char *s, bool head, struct hmsg *m)
{
	return hmsg_response(s, strlen(s), head, m);
}

TEST(http_msg_reads_requests_with_their_framing)
{
	struct hmsg m;

	CHECK_EQ_INT(req("POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", &m), 1);
	CHECK_STR(m.method, "POST");
	CHECK_EQ_INT(m.body, HMSG_LENGTH);
	CHECK_EQ_INT(m.length, 5);
	CHECK(m.keep_alive);
	CHECK_EQ_INT(m.target_len, strlen("/v1/chat/completions?x=1"));
	CHECK_EQ_INT(m.head_len, strlen("POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"));
	CHECK_EQ_INT(req("\r\nPOST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n", &m), 1);
	CHECK_EQ_INT(m.body, HMSG_CHUNKED);
	CHECK(m.expect_continue);
	CHECK_EQ_INT(m.target_off, 7);
	CHECK_EQ_INT(req("GET / HTTP/1.0\r\n\r\n", &m), 1);
	CHECK(!m.keep_alive && m.body == HMSG_NONE);
	CHECK_EQ_INT(req("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &m), 1);
	CHECK(m.keep_alive);
	CHECK_EQ_INT(req("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", &m), 1);
	CHECK(!m.keep_alive);
	CHECK_EQ_INT(req("GET / HTTP/1.1\r\nHost: a\r\n", &m), 0);   /* not whole yet */
}

TEST(http_msg_refuses_what_http_c_refuses)
{
	static char big[HMSG_HEAD_MAX + 64];
	struct hmsg m;

	CHECK_EQ_INT(req("GET / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", &m), -400);
	CHECK_EQ_INT(req("GET / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", &m), -400);
	CHECK_EQ_INT(req("GET / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", &m), -501);
	CHECK_EQ_INT(req("GET / HTTP/1.1\r\nHost : a\r\n\r\n", &m), -400);
	CHECK_EQ_INT(req("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", &m), -400);
	CHECK_EQ_INT(req("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", &m), -400);
	CHECK_EQ_INT(req("GET http://x/ HTTP/1.1\r\n\r\n", &m), -400);
	CHECK_EQ_INT(req("GET / HTTP/2.0\r\n\r\n", &m), -505);
	CHECK_EQ_INT(req("GET / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", &m), -413);
	CHECK_EQ_INT(req("GET / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", &m), -400);
	CHECK_EQ_INT(req("GET / HTTP/1.1\r\nExpect: something\r\n\r\n", &m), -417);
	CHECK_EQ_INT(req("GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", &m), -400);
	memset(big, 'a', sizeof big - 1);
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	CHECK_EQ_INT(hmsg_request(big, sizeof big - 1, 100, &m), -431);
	char many[64 * 8 + 64] = "GET / HTTP/1.1\r\n";
	for (int i = 0; i < HMSG_HEADERS_MAX + 1; i++)
		strcat(many, "A: b\r\n");
	strcat(many, "\r\n");
	CHECK_EQ_INT(req(many, &m), -431);
}

TEST(http_msg_reads_responses_and_knows_where_their_bodies_end)
{
	struct hmsg m;

	CHECK_EQ_INT(resp("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", false, &m), 1);
	CHECK(m.status == 200 && m.body == HMSG_LENGTH && m.length == 3 && m.keep_alive);
	CHECK_EQ_INT(resp("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", false, &m), 1);
	CHECK_EQ_INT(m.body, HMSG_CHUNKED);
	CHECK_EQ_INT(resp("HTTP/1.1 200 OK\r\n\r\n", false, &m), 1);
	CHECK(m.body == HMSG_CLOSE && !m.keep_alive);
	CHECK_EQ_INT(resp("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", true, &m), 1);
	CHECK_EQ_INT(m.body, HMSG_NONE);                              /* the answer to HEAD */
	CHECK_EQ_INT(resp("HTTP/1.1 204 No Content\r\n\r\n", false, &m), 1);
	CHECK_EQ_INT(m.body, HMSG_NONE);
	CHECK_EQ_INT(resp("HTTP/1.1 100 Continue\r\n\r\n", false, &m), 1);
	CHECK(m.status == 100 && m.body == HMSG_NONE);
	CHECK_EQ_INT(resp("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", false, &m), 1);
	CHECK_EQ_INT(resp("HTTP/1.1 2x0 OK\r\n\r\n", false, &m), -400);
	CHECK_EQ_INT(resp("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", false, &m), -400);
	CHECK_EQ_INT(resp("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n", false, &m), 0);
	CHECK_EQ_INT(resp("HTTX/1.1 200 OK\r\n\r\n", false, &m), -400);
}

TEST(http_msg_passes_on_end_to_end_fields_only)
{
	static const char h[] = "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\nX-A: 1\r\n"
				"Keep-Alive: 5\r\nTE: trailers\r\nContent-Length: 0\r\n\r\n";
	const char *name, *line;
	size_t pos = 0, nn, ln;
	char kept[128] = "";

	while (hmsg_next_header(h, sizeof h - 1, &pos, &name, &nn, &line, &ln))
		if (!hmsg_hop_by_hop(name, nn))
			strncat(kept, line, ln), strcat(kept, "|");
	CHECK_STR(kept, "Host: a|X-A: 1|");
}

/* Decode s fed in pieces of step bytes: the data, and 1/0/-1 as hchunk_feed. */
static int dechunk(const char *s, size_t step, char *out, size_t *out_n, size_t *left)
{
	struct hchunk c = {0};
	size_t n = strlen(s), off = 0;
	int r = 0;

	*out_n = 0;
	while (off < n && r == 0) {
		size_t piece = n - off < step ? n - off : step, used, dn;
		const char *d;
		r = hchunk_feed(&c, s + off, piece, &used, &d, &dn);
		memcpy(out + *out_n, d, dn);
		*out_n += dn;
		off += used;
	}
	*left = n - off;
	return r;
}

TEST(http_msg_decodes_chunked_bodies_whole_or_a_byte_at_a_time)
{
	static const char body[] = "5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\nNEXT";
	char out[64];
	size_t n, left;

	for (size_t step = 1; step <= sizeof body; step++) {
		CHECK_EQ_INT(dechunk(body, step, out, &n, &left), 1);
		CHECK(n == 16 && !memcmp(out, "hello 0123456789", 16));
		CHECK_EQ_INT(left, 4);                                /* the next message's */
	}
	CHECK_EQ_INT(dechunk("0\r\n\r\n", 1, out, &n, &left), 1);
	CHECK_EQ_INT(dechunk("3\nabc\n0\n\n", 2, out, &n, &left), 1); /* bare LF lines */
	CHECK_EQ_INT(dechunk("5\r\nhel", 3, out, &n, &left), 0);
	CHECK_EQ_INT(dechunk("x\r\n", 1, out, &n, &left), -1);
	CHECK_EQ_INT(dechunk("\r\n", 1, out, &n, &left), -1);
	CHECK_EQ_INT(dechunk("3\r\nabcX\r\n", 1, out, &n, &left), -1);
	CHECK_EQ_INT(dechunk("1000000000000000\r\n", 4, out, &n, &left), -1);   /* 16 digits */
	CHECK_EQ_INT(dechunk("0\r\nX: \x01\r\n\r\n", 4, out, &n, &left), -1);
	static char ext[5000] = "1;";
	memset(ext + 2, 'a', 4500);
	CHECK_EQ_INT(dechunk(ext, 100, out, &n, &left), -1);      /* a size line past its bound */
}
