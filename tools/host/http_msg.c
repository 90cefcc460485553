/*
 * tools/host/http_msg.c — HTTP/1.1 heads and the chunked coding for the
 * proxy (http_msg.h), each line checked as RFC 9112's grammar says; the
 * first violation decides.
 */
#include "http_msg.h"
#include "../../shell/http/http.h"

#include <string.h>

/* The end of the head (after its empty line), 0 if not whole, -431 past the bound. */
static long head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len && i < HMSG_HEAD_MAX; i++)
		if (buf[i] == '\n' && (buf[i + 1] == '\n' ||
				       (buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n')))
			return (long)(i + (buf[i + 1] == '\n' ? 2 : 3));
	return len >= HMSG_HEAD_MAX ? -431 : 0;
}

/* The header fields (shell/http/http.c's reading) with what the proxy takes
 * beside the server: the chunked coding, and Expect. */
#define FIELDS (HTTP_FIELDS_CHUNKED | HTTP_FIELDS_EXPECT)

/* "HTTP/1.x" at s[0..8): the minor, or -400 / -505. */
static int version(const char *s)
{
	if (memcmp(s, "HTTP/", 5) || s[6] != '.' || s[5] < '0' || s[5] > '9' || s[7] < '0' ||
	    s[7] > '9')
		return -400;
	return s[5] != '1' ? -505 : s[7] - '0';
}

int hmsg_request(const char *buf, size_t len, uint64_t body_max, struct hmsg *m)
{
	struct http_fields f;
	size_t skip = 0, n, next, i = 0;
	long end;
	int r;

	/* RFC 9112 §2.2: empty lines before a request are ignored */
	while (skip < len && skip < HMSG_HEAD_MAX && (buf[skip] == '\r' || buf[skip] == '\n'))
		skip++;
	if ((end = head_end(buf + skip, len - skip)) <= 0)
		return (int)end;
	memset(m, 0, sizeof *m);
	const char *s = buf + skip;
	if ((r = http_line(s, (size_t)end, &n, &next)))
		return r;
	while (i < n && http_tchar(s[i]))
		i++;
	if (i == 0 || i >= n || s[i] != ' ')
		return -400;
	if (i >= sizeof m->method)
		return -501;
	memcpy(m->method, s, i);
	m->method[i] = 0;
	size_t t = ++i;
	while (i < n && s[i] != ' ') {
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return -400;
		i++;
	}
	if (i == t || i >= n || s[t] != '/' || n - i - 1 != 8)
		return -400; /* origin-form only: a proxy on loopback is no forward proxy */
	if ((r = version(s + i + 1)) < 0)
		return r;
	m->minor = r;
	m->target_off = skip + t;
	m->target_len = i - t;
	if ((r = http_fields(s, next, (size_t)end, HMSG_HEADERS_MAX, FIELDS, &f)))
		return r;
	m->length = f.length;
	m->keep_alive = m->minor >= 1 ? !f.close : f.keep && !f.close;
	m->expect_continue = f.expect;
	m->body = f.chunked ? HMSG_CHUNKED : f.has_length && m->length ? HMSG_LENGTH : HMSG_NONE;
	if (f.chunked && m->minor < 1)
		return -400;
	if (body_max && f.has_length && m->length > body_max)
		return -413;
	m->head_len = skip + (size_t)end;
	return 1;
}

int hmsg_response(const char *buf, size_t len, bool head_req, struct hmsg *m)
{
	struct http_fields f;
	size_t n, next;
	long end;
	int r;

	if ((end = head_end(buf, len)) <= 0)
		return (int)end;
	memset(m, 0, sizeof *m);
	if ((r = http_line(buf, (size_t)end, &n, &next)))
		return r;
	/* status-line = HTTP-version SP 3DIGIT SP [ reason-phrase ] */
	if (n < 12 || buf[8] != ' ' || (n > 12 && buf[12] != ' '))
		return -400; /* (a missing reason's SP is taken, as most readers do) */
	if ((r = version(buf)) < 0)
		return r;
	m->minor = r;
	for (int k = 9; k < 12; k++) {
		if (buf[k] < '0' || buf[k] > '9')
			return -400;
		m->status = m->status * 10 + (buf[k] - '0');
	}
	if (m->status < 100)
		return -400;
	for (size_t k = 13; k < n; k++)
		if ((unsigned char)buf[k] < 0x20 && buf[k] != '\t')
			return -400;
	if ((r = http_fields(buf, next, (size_t)end, HMSG_HEADERS_MAX, FIELDS, &f)))
		return r == -417 ? -400 : r;
	m->length = f.length;
	m->keep_alive = m->minor >= 1 ? !f.close : f.keep && !f.close;
	if (head_req || m->status < 200 || m->status == 204 || m->status == 304)
		m->body = HMSG_NONE;
	else if (f.chunked)
		m->body = HMSG_CHUNKED;
	else if (f.has_length)
		m->body = m->length ? HMSG_LENGTH : HMSG_NONE;
	else
		m->body = HMSG_CLOSE, m->keep_alive = false;
	m->head_len = (size_t)end;
	return 1;
}

bool hmsg_hop_by_hop(const char *name, size_t n)
{
	static const char *const hop[] = {"connection", "keep-alive", "proxy-connection", "te",
					  "transfer-encoding", "upgrade", "trailer",
					  "content-length", "expect"};
	for (size_t i = 0; i < sizeof hop / sizeof hop[0]; i++)
		if (http_eq_nocase(name, n, hop[i]))
			return true;
	return false;
}

int hmsg_next_header(const char *head, size_t head_len, size_t *pos, const char **name,
		     size_t *name_n, const char **line, size_t *line_n)
{
	size_t p = *pos;

	if (p == 0) { /* skip the leading empty lines and the start line */
		while (p < head_len && (head[p] == '\r' || head[p] == '\n'))
			p++;
		while (p < head_len && head[p] != '\n')
			p++;
		p++;
	}
	if (p >= head_len)
		return 0;
	size_t e = p;
	while (e < head_len && head[e] != '\n')
		e++;
	size_t n = e - p - (e > p && head[e - 1] == '\r');
	if (n == 0)
		return 0;
	size_t c = p;
	while (c < p + n && head[c] != ':')
		c++;
	*name = head + p;
	*name_n = c - p;
	*line = head + p;
	*line_n = n;
	*pos = e + 1;
	return 1;
}

/* ---- chunked (RFC 9112 §7.1) ---- */
enum { CH_SIZE, CH_EXT, CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF, CH_TRAILER, CH_TRAILER_LF,
       CH_DONE };

#define CH_LINE_MAX 4096 /* a size line with extensions, or a trailer line */

int hchunk_feed(struct hchunk *c, const char *p, size_t n, size_t *used, const char **data,
		size_t *data_n)
{
	size_t i = 0;

	*data = p;
	*data_n = 0;
	if (c->state == CH_DATA && n) {
		size_t k = n < c->left ? n : (size_t)c->left;
		c->left -= k;
		if (!c->left)
			c->state = CH_DATA_CR;
		*data_n = k;
		*used = k;
		return 0;
	}
	while (i < n && c->state != CH_DATA && c->state != CH_DONE) {
		char ch = p[i++];
		if (++c->line > CH_LINE_MAX)
			return -1;
		switch (c->state) {
		case CH_SIZE:
			if ((ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')) {
				if (++c->digits > 15)
					return -1;
				c->left = c->left * 16 + (uint64_t)(ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10);
			} else if (c->digits && (ch == ';' || ch == ' ' || ch == '\t')) {
				c->state = CH_EXT;
			} else if (c->digits && ch == '\r') {
				c->state = CH_SIZE_LF;
			} else if (c->digits && ch == '\n') {
				goto size_done;
			} else {
				return -1;
			}
			break;
		case CH_EXT: /* chunk extensions: ignored, bounded by the line */
			if (ch == '\r')
				c->state = CH_SIZE_LF;
			else if (ch == '\n')
				goto size_done;
			else if ((unsigned char)ch < 0x20 && ch != '\t')
				return -1;
			break;
		case CH_SIZE_LF:
			if (ch != '\n')
				return -1;
		size_done:
			c->line = 0;
			c->digits = 0;
			c->state = c->left ? CH_DATA : CH_TRAILER;
			break;
		case CH_DATA_CR:
			if (ch == '\n') {
				c->state = CH_SIZE, c->line = 0;
				break;
			}
			if (ch != '\r')
				return -1;
			c->state = CH_DATA_LF;
			break;
		case CH_DATA_LF:
			if (ch != '\n')
				return -1;
			c->state = CH_SIZE, c->line = 0;
			break;
		case CH_TRAILER: /* trailer fields until an empty line */
			if (ch == '\n') {
				if (c->line == 1)
					c->state = CH_DONE;
				c->line = 0;
			} else if (ch == '\r') {
				c->digits = c->line == 1; /* the empty line */
				c->state = CH_TRAILER_LF;
			} else if (((unsigned char)ch < 0x20 && ch != '\t') || ch == 0x7f) {
				return -1;
			}
			break;
		case CH_TRAILER_LF:
			if (ch != '\n')
				return -1;
			c->state = c->digits ? CH_DONE : CH_TRAILER;
			c->line = 0;
			c->digits = 0;
			break;
		}
	}
	*used = i;
	return c->state == CH_DONE ? 1 : 0;
}
