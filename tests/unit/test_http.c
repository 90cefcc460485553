/*
 * tests/unit/test_http.c — the HTTP/1.1 request parser (shell/http/http.c):
 * whole requests found with their bodies, partial ones wait, and every
 * malformed or oversized request is answered with its status.
 */
#include "test.h"
#include "../../shell/http/http.h"

static int parse(const char *s, struct http_req *r)
{
	return http_parse(s, strlen(s), 100, r);
}

TEST(http_finds_a_whole_request_with_its_body_and_keep_alive)
{
	static const char two[] = "POST /v1/completions?x=1 HTTP/1.1\r\nHost: a\r\n"
				  "Content-Length: 5\r\nContent-Type: application/json\r\n\r\nhello"
				  "GET /health HTTP/1.1\r\n\r\n";
	struct http_req r;

	CHECK_EQ_INT(http_parse(two, sizeof two - 1, 100, &r), 1);
	CHECK_STR(r.method, "POST");
	CHECK_STR(r.path, "/v1/completions");
	CHECK(r.keep_alive);
	CHECK_EQ_INT(r.body_len, 5);
	CHECK(memcmp(r.body, "hello", 5) == 0);
	CHECK_STR(r.content_type, "application/json");
	CHECK_EQ_INT(http_parse(two + r.total, sizeof two - 1 - r.total, 100, &r), 1);
	CHECK_STR(r.path, "/health");
	CHECK_EQ_INT(parse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", &r), 1);
	CHECK(!r.keep_alive);
	CHECK_EQ_INT(parse("GET / HTTP/1.0\r\n\r\n", &r), 1);
	CHECK(!r.keep_alive);
	CHECK_EQ_INT(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r), 1);
	CHECK(r.keep_alive);
	CHECK_EQ_INT(parse("GET / HTTP/1.1\n\n", &r), 1);          /* bare LF lines */
}

TEST(http_waits_for_the_rest_of_a_partial_request)
{
	struct http_req r;

	CHECK_EQ_INT(parse("", &r), 0);
	CHECK_EQ_INT(parse("GET / HT", &r), 0);
	CHECK_EQ_INT(parse("GET / HTTP/1.1\r\nHost: a\r\n", &r), 0);
	CHECK_EQ_INT(parse("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc", &r), 0);
}

TEST(http_answers_malformed_and_oversized_requests_with_their_status)
{
	static const struct {
		const char *req;
		int status;
	} cases[] = {
		{"GARBAGE\r\n\r\n", -400},
		{"GET\r\n\r\n", -400},
		{"GET  / HTTP/1.1\r\n\r\n", -400},
		{"GET x HTTP/1.1\r\n\r\n", -400},
		{"GET / HTTP/2.0\r\n\r\n", -505},
		{"GET / HTTP/1.1x\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\nNo colon\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\nA : b\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", -400},
		{"GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", -400},
		{"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", -400},
		{"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", -400},
		{"POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", -413},
		{"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", -413},
		{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", -501},
		{"VERYLONGMETHOD / HTTP/1.1\r\n\r\n", -501},
	};
	struct http_req r;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int got = parse(cases[i].req, &r);
		if (got != cases[i].status)
			fprintf(stderr, "  case %zu: %d\n", i, got);
		CHECK_EQ_INT(got, cases[i].status);
	}
}

TEST(http_refuses_a_head_past_its_bounds)
{
	static char big[HTTP_HEAD_MAX + 64];
	struct http_req r;
	size_t n = 0;

	memset(big, 'a', sizeof big);                 /* no line end in 8 KiB */
	CHECK_EQ_INT(http_parse(big, sizeof big, 100, &r), -431);
	n = (size_t)sprintf(big, "GET / HTTP/1.1\r\n");
	for (int i = 0; i < HTTP_HEADERS_MAX + 1; i++)
		n += (size_t)sprintf(big + n, "X-%d: y\r\n", i);
	n += (size_t)sprintf(big + n, "\r\n");
	CHECK_EQ_INT(http_parse(big, n, 100, &r), -431);
	static char path[HTTP_PATH_MAX + 64];
	memset(path, 'p', sizeof path);
	n = (size_t)sprintf(big, "GET /%.*s HTTP/1.1\r\n\r\n", (int)sizeof path, path);
	CHECK_EQ_INT(http_parse(big, n, 100, &r), -414);
}
