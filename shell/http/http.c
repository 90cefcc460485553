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

static int header(const char *s, size_t n, struct http_req *req, bool *conn_close,
		  bool *conn_keep)
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
		if (req->has_length && x != req->content_length)
			return -400; /* §6.3: differing lengths */
		req->has_length = true;
		req->content_length = x;
	} else if (http_eq_nocase(s, nl, "transfer-encoding")) {
		return -501;
	} else if (http_eq_nocase(s, nl, "connection")) {
		*conn_close |= http_list_has(v, vn, "close");
		*conn_keep |= http_list_has(v, vn, "keep-alive");
	} else if (http_eq_nocase(s, nl, "content-type") && vn < sizeof req->content_type) {
		memcpy(req->content_type, v, vn);
		req->content_type[vn] = 0;
	}
	return 0;
}

int http_parse(const char *buf, size_t len, size_t body_max, struct http_req *req)
{
	size_t end = 0, line = 0, n_hdr = 0;
	bool conn_close = false, conn_keep = false;
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
		if (n_hdr == 0)
			r = request_line(buf + line, n, req);
		else if (n_hdr > HTTP_HEADERS_MAX)
			return -431;
		else if (buf[line] == ' ' || buf[line] == '\t')
			return -400; /* §5.2: obsolete line folding */
		else
			r = header(buf + line, n, req, &conn_close, &conn_keep);
		if (r)
			return r;
		n_hdr++;
		line = e + 1;
	}
	req->keep_alive = req->minor >= 1 ? !conn_close : conn_keep && !conn_close;
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
