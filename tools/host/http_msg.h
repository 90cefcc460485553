/*
 * tools/host/http_msg.h — HTTP/1.1 messages as the proxy and the attested
 * TLS client read them (RFC 9112): a request head from a local client, a
 * response head from the guest, and the chunked transfer coding (§7.1)
 * decoded a byte run at a time so a stream passes through as it comes.
 * With the care of shell/http/http.c: heads of at most HMSG_HEAD_MAX bytes
 * and HMSG_HEADERS_MAX lines, field names as tokens, no obsolete folding,
 * no CR or NUL inside a line, one Content-Length, no Content-Length beside
 * a transfer coding, no transfer coding but chunked.
 */
#ifndef TOOLS_HOST_HTTP_MSG_H
#define TOOLS_HOST_HTTP_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HMSG_HEAD_MAX 8192
#define HMSG_HEADERS_MAX 64

enum hmsg_body { HMSG_NONE, HMSG_LENGTH, HMSG_CHUNKED, HMSG_CLOSE };

struct hmsg {
	/* request */
	char method[16];
	size_t target_off, target_len; /* the request target in the head */
	bool expect_continue;          /* "Expect: 100-continue" */
	/* response */
	int status;
	/* both */
	int minor;                     /* HTTP/1.minor */
	bool keep_alive;
	enum hmsg_body body;
	uint64_t length;               /* HMSG_LENGTH */
	size_t head_len;               /* bytes of the head, its empty line included */
};

/*
 * The head at the start of buf[0..len): 1 with m filled, 0 when it is not
 * whole yet, or a negative status to refuse it with (-400 malformed, -431
 * too large, -501 a transfer coding other than chunked, -505 not HTTP/1.x,
 * -413 a body length past body_max (requests only; 0: no limit)). A request
 * without a length has no body; a response without one runs to the close
 * (none for 1xx, 204, 304 and the answer to HEAD: head_req).
 */
int hmsg_request(const char *buf, size_t len, uint64_t body_max, struct hmsg *m);
int hmsg_response(const char *buf, size_t len, bool head_req, struct hmsg *m);

/*
 * Is the header line name (case-insensitive) one a proxy must not pass on
 * (RFC 9110 §7.6.1: Connection and what it names, Keep-Alive,
 * Proxy-Connection, TE, Transfer-Encoding, Upgrade, Trailer; and
 * Content-Length and Expect, which the proxy writes itself)?
 */
bool hmsg_hop_by_hop(const char *name, size_t n);

/* The header lines of a head, one at a time: 1 with the line's name and
 * whole extent, 0 at the end. *pos starts at 0. */
int hmsg_next_header(const char *head, size_t head_len, size_t *pos, const char **name,
		     size_t *name_n, const char **line, size_t *line_n);

/* The chunked coding, decoded incrementally. */
struct hchunk {
	int state;
	uint64_t left;                 /* data bytes left in the current chunk */
	unsigned line;                 /* bytes of the current size or trailer line */
	int digits;
};

/*
 * Feed p[0..n): consumes *used bytes (> 0 when n > 0 and not finished) of
 * which data[0..*data_n) is chunk data (a run inside p; *data_n may be 0
 * while framing is read). 1 when the body's end (last chunk, trailers,
 * final CRLF) has been consumed, 0 more to come, -1 malformed.
 */
int hchunk_feed(struct hchunk *c, const char *p, size_t n, size_t *used, const char **data,
		size_t *data_n);

#endif
