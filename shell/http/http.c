/*
 * shell/http/http.c — the HTTP/1.1 request parser (RFC 9112 §2-§7).
 * Nothing is copied until the head is whole; then each line is checked
 * as the grammar says, and the first violation decides the status.
 */
#include "http.h"

bool http_tchar(char c)
{
	/* RFC 9110 §5.6.2 token characters */
	if ((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
		return true;
	for (const char *t = "!#$%&'*+-.^_`|~"; *t; t++)
		if (c == *t)
			return true;
	return false;
}

bool http_eq_nocase(const char *a, size_t n, const char *b)
{
	if (strlen(b) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((a[i] | 0x20) != (b[i] | 0x20))
			return false;
	return true;
}

bool http_list_has(const char *v, size_t n, const char *w)
{
	size_t i = 0;

	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		size_t s = i;
		while (i < n && v[i] != ',' && v[i] != ' ' && v[i] != '\t')
			i++;
		if (i > s && http_eq_nocase(v + s, i - s, w))
			return true;
	}
	return false;
}

static int request_line(const char *s, size_t n, struct http_req *req)
{
	size_t i = 0, m = 0, p = 0;

	while (i < n && http_tchar(s[i]))
		i++;
	if (i == 0 || i >= sizeof req->method || i >= n || s[i] != ' ')
		return i >= sizeof req->method && i < n && s[i] == ' ' ? -501 : -400;
	memcpy(req->method, s, i);
	req->method[i] = 0;
	m = ++i;
	while (i < n && s[i] != ' ') {
		if ((uint8_t)s[i] <= 0x20 || (uint8_t)s[i] >= 0x7f)
			return -400;
		i++;
	}
	if (i == m || i >= n || s[m] != '/')
		return -400;
	for (p = m; p < i && s[p] != '?'; p++)
		;
	if (p - m >= sizeof req->path)
		return -414;
	memcpy(req->path, s + m, p - m);
	req->path[p - m] = 0;
	i++;
	if (n - i != 8 || memcmp(s + i, "HTTP/", 5) != 0 || s[i + 6] != '.' ||
	    s[i + 5] < '0' || s[i + 5] > '9' || s[i + 7] < '0' || s[i + 7] > '9')
		return -400;
	if (s[i + 5] != '1')
		return -505;
	req->minor = s[i + 7] - '0';
	return 0;
}

int http_line(const char *buf, size_t end, size_t *n, size_t *next)
{
	size_t e = 0;

	while (e < end && buf[e] != '\n')
		e++;
	*n = e - (e > 0 && buf[e - 1] == '\r');
	*next = e + 1;
	for (size_t k = 0; k < *n; k++)
		if (buf[k] == '\r' || buf[k] == 0)
			return -400;
	return 0;
}

/* One field line s[0..n) into f, checked as flags say (http.h). */
static int field(const char *s, size_t n, unsigned flags, struct http_fields *f)
{
	size_t i = 0;

	while (i < n && http_tchar(s[i]))
		i++;
	if (i == 0 || i >= n || s[i] != ':')
		return -400; /* RFC 9112 §5.1: no whitespace before the colon */
	size_t nl = i++;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t e = n;
	while (e > i && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	for (size_t k = i; k < e; k++)
		if (((uint8_t)s[k] < 0x20 && s[k] != '\t') || s[k] == 0x7f)
			return -400;
	const char *v = s + i;
	size_t vn = e - i;
	if (http_eq_nocase(s, nl, "content-length")) {
		uint64_t x = 0;
		if (vn == 0 || vn > 15)
			return vn > 15 ? -413 : -400;
		for (size_t k = 0; k < vn; k++) {
			if (v[k] < '0' || v[k] > '9')
				return -400;
			x = x * 10 + (uint64_t)(v[k] - '0');
		}
		if (f->has_length && x != f->length)
			return -400; /* §6.3: differing lengths */
		f->has_length = true;
		f->length = x;
	} else if (http_eq_nocase(s, nl, "transfer-encoding")) {
		/* only "chunked", once, and only where taken: any other coding
		 * we cannot undo */
		if (!(flags & HTTP_FIELDS_CHUNKED) || f->chunked || !http_eq_nocase(v, vn, "chunked"))
			return -501;
		f->chunked = true;
	} else if (http_eq_nocase(s, nl, "connection")) {
		f->close |= http_list_has(v, vn, "close");
		f->keep |= http_list_has(v, vn, "keep-alive");
	} else if (http_eq_nocase(s, nl, "expect") && (flags & HTTP_FIELDS_EXPECT)) {
		if (!http_eq_nocase(v, vn, "100-continue"))
			return -417;
		f->expect = true;
	} else if (http_eq_nocase(s, nl, "content-type") && vn < sizeof f->content_type) {
		memcpy(f->content_type, v, vn);
		f->content_type[vn] = 0;
	}
	return 0;
}

int http_fields(const char *buf, size_t start, size_t end, size_t max_lines, unsigned flags,
		struct http_fields *f)
{
	size_t line = start, n_hdr = 0;
	int r;

	memset(f, 0, sizeof *f);
	while (line < end) {
		size_t e = line;
		while (buf[e] != '\n')
			e++;
		size_t n = e - line - (e > line && buf[e - 1] == '\r');
		if (n == 0)
			break;
		for (size_t k = line; k < line + n; k++)
			if (buf[k] == '\r' || buf[k] == 0)
				return -400;
		if (++n_hdr > max_lines)
			return -431;
		if (buf[line] == ' ' || buf[line] == '\t')
			return -400; /* §5.2: obsolete line folding */
		if ((r = field(buf + line, n, flags, f)))
			return r;
		line = e + 1;
	}
	if (f->has_length && f->chunked)
		return -400; /* §6.3: a request smuggler's favourite */
	return 0;
}

int http_parse(const char *buf, size_t len, size_t body_max, struct http_req *req)
{
	struct http_fields f;
	size_t end = 0, line = 0, n, next;
	int r;

	/* RFC 9112 §2.2: leading empty lines before a request are ignored */
	while (line < len && (buf[line] == '\r' || buf[line] == '\n'))
		line++;
	for (size_t i = line; i + 1 < len; i++)
		if (buf[i] == '\n' && (buf[i + 1] == '\n' ||
				       (buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n'))) {
			end = i + (buf[i + 1] == '\n' ? 2 : 3);
			break;
		}
	if (!end)
		return len > HTTP_HEAD_MAX ? -431 : 0;
	if (end > HTTP_HEAD_MAX)
		return -431;
	memset(req, 0, sizeof *req);
	if ((r = http_line(buf + line, end - line, &n, &next)) ||
	    (r = request_line(buf + line, n, req)) ||
	    (r = http_fields(buf, line + next, end, HTTP_HEADERS_MAX, 0, &f)))
		return r;
	req->has_length = f.has_length;
	req->content_length = f.length;
	memcpy(req->content_type, f.content_type, sizeof req->content_type);
	req->keep_alive = req->minor >= 1 ? !f.close : f.keep && !f.close;
	if (req->content_length > body_max)
		return -413;
	if (len - end < req->content_length)
		return 0;
	req->body = buf + end;
	req->body_len = (size_t)req->content_length;
	req->total = end + req->body_len;
	return 1;
}

const char *http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Unknown";
	}
}
