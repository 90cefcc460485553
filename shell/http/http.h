/*
 * shell/http/http.h — HTTP/1.1 (RFC 9112) requests in, responses out.
 *
 * http_parse looks at the bytes a connection has received so far and says
 * whether they hold a whole request (head and Content-Length body), need
 * more, or are refused with the status to answer. Bounded: the head at
 * most HTTP_HEAD_MAX bytes and HTTP_HEADERS_MAX header lines, the body at
 * most the caller's limit. Request bodies in chunked transfer coding are
 * refused (501): clients of the API send Content-Length.
 */
#ifndef SHELL_HTTP_HTTP_H
#define SHELL_HTTP_HTTP_H

#include "../../kernel/platform.h"

#define HTTP_HEAD_MAX 8192
#define HTTP_HEADERS_MAX 64
#define HTTP_PATH_MAX 256
#define HTTP_CTYPE_MAX 64

struct http_req {
	char method[8];
	char path[HTTP_PATH_MAX];  /* the target up to '?' */
	int minor;                 /* HTTP/1.minor */
	bool keep_alive;           /* 1.1 without "Connection: close", 1.0 with keep-alive */
	bool has_length;
	uint64_t content_length;
	const char *body;          /* inside the caller's buffer */
	size_t body_len;
	size_t total;              /* head + body bytes */
	char content_type[HTTP_CTYPE_MAX];
};

/*
 * buf[0..len) as received. Returns 1 with req filled when a whole request
 * is there (req->total bytes; what follows is the next request's), 0 when
 * more bytes are needed, or a negative HTTP status to answer before closing:
 * -400 malformed, -413 body past body_max, -431 head past its bounds,
 * -501 a transfer coding, -505 not HTTP/1.x.
 */
int http_parse(const char *buf, size_t len, size_t body_max, struct http_req *req);

/* The reason phrase of a status code ("OK", "Not Found"). */
const char *http_reason(int status);

/* The pieces the proxy's parser (tools/host/http_msg.c) shares: an RFC 9110
 * §5.6.2 token character; a[0..n) equal to b in any case; a comma-separated
 * list v[0..n) holding token w in any case. */
bool http_tchar(char c);
bool http_eq_nocase(const char *a, size_t n, const char *b);
bool http_list_has(const char *v, size_t n, const char *w);

/* The first line of buf[0..end) (end past a '\n'): its length *n without
 * the CR, *next past its LF; -400 with a CR or NUL inside it. */
int http_line(const char *buf, size_t end, size_t *n, size_t *next);

/* What a head's header fields say, as the server and the proxy read them. */
struct http_fields {
	bool has_length;           /* Content-Length (the same value each time) */
	uint64_t length;
	bool chunked;              /* "Transfer-Encoding: chunked" (HTTP_FIELDS_CHUNKED) */
	bool close, keep;          /* Connection: close, keep-alive */
	bool expect;               /* "Expect: 100-continue" (HTTP_FIELDS_EXPECT) */
	char content_type[HTTP_CTYPE_MAX]; /* the last that fits, else "" */
};
/* Taken: Transfer-Encoding chunked, once (without: every coding -501);
 * Expect, -417 unless 100-continue (without: ignored). */
#define HTTP_FIELDS_CHUNKED 1u
#define HTTP_FIELDS_EXPECT 2u

/*
 * The header lines of a head from buf[start) to its empty line (end: past
 * it), each checked (RFC 9112 §5: a token name and a colon, no obsolete
 * folding, no CR or NUL in a line, no control characters in a value; §6.3:
 * one Content-Length, not beside chunked): 0 with f filled, or the first
 * violation's status (-400; -413 a length of more than 15 digits; -431 past
 * max_lines; -501 a transfer coding; -417 an expectation).
 */
int http_fields(const char *buf, size_t start, size_t end, size_t max_lines, unsigned flags,
		struct http_fields *f);

#endif
