/*
 * tools/host/connect_io.c — the serial line as `llmctl --connect` sees it:
 * QEMU's serial chardev (or anything else) on a unix socket, read into a
 * growing buffer and taken a line at a time (connect.h).
 */
#define _GNU_SOURCE
#include "connect.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* An evidence line with two event logs and certificates is about 1.4 MB
 * of base64; nothing the guest sends in one line is larger. */
#define CONN_LINE_MAX (4u << 20)

int64_t conn_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int conn_open(struct conn *c, const char *path, int timeout_ms)
{
	struct sockaddr_un a;
	int64_t deadline = conn_now_ms() + timeout_ms;

	memset(c, 0, sizeof *c);
	c->fd = -1;
	if (strlen(path) >= sizeof a.sun_path) {
		fprintf(stderr, "error: --connect %s: path longer than %zu bytes\n", path,
			sizeof a.sun_path - 1);
		return -1;
	}
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	memcpy(a.sun_path, path, strlen(path));
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			fprintf(stderr, "error: --connect %s: socket: %s\n", path, strerror(errno));
			return -1;
		}
		if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
			c->fd = fd;
			return 0;
		}
		int e = errno;
		close(fd);
		if ((e != ENOENT && e != ECONNREFUSED) || conn_now_ms() >= deadline) {
			fprintf(stderr, "error: --connect %s: %s\n", path, strerror(e));
			return -1;
		}
		usleep(100 * 1000);
	}
}

void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}

int conn_send(struct conn *c, const void *p, size_t n)
{
	const char *s = p;
	while (n) {
		ssize_t k = send(c->fd, s, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			fprintf(stderr, "error: the serial line: send: %s\n", strerror(errno));
			return -1;
		}
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

int conn_fill(struct conn *c, int timeout_ms)
{
	struct pollfd p = {.fd = c->fd, .events = POLLIN};

	if (c->eof)
		return -1;
	int r = poll(&p, 1, timeout_ms);
	if (r < 0 && errno == EINTR)
		return 0;
	if (r < 0)
		c->eof = true;
	if (r <= 0)
		return r < 0 ? -1 : 0;
	if (c->cap - c->len < 65536) {
		size_t cap = c->cap ? c->cap * 2 : 262144;
		uint8_t *b = realloc(c->buf, cap);
		if (!b)
			return -1;
		c->buf = b;
		c->cap = cap;
	}
	ssize_t k = read(c->fd, c->buf + c->len, c->cap - c->len);
	if (k < 0 && errno == EINTR)
		return 0;
	if (k <= 0) {
		c->eof = true;
		return -1;
	}
	c->len += (size_t)k;
	return 1;
}

static void conn_consume(struct conn *c)
{
	if (!c->taken)
		return;
	memmove(c->buf, c->buf + c->taken, c->len - c->taken);
	c->len -= c->taken;
	c->taken = 0;
}

void conn_drop(struct conn *c)
{
	c->taken = 0;
	c->len = 0;
}

int conn_line(struct conn *c, int timeout_ms, char **line, size_t *n)
{
	int64_t deadline = timeout_ms < 0 ? -1 : conn_now_ms() + timeout_ms;
	size_t scanned = 0;

	conn_consume(c);
	for (;;) {
		uint8_t *nl = c->len > scanned ? memchr(c->buf + scanned, '\n', c->len - scanned)
					       : NULL;
		if (nl) {
			size_t k = (size_t)(nl - c->buf);
			c->taken = k + 1;
			*nl = 0;
			if (k && c->buf[k - 1] == '\r')
				c->buf[--k] = 0;
			*line = (char *)c->buf;
			*n = k;
			return 1;
		}
		scanned = c->len;
		if (c->len > CONN_LINE_MAX) {
			fprintf(stderr, "error: the serial line: a line longer than %u bytes\n",
				CONN_LINE_MAX);
			return -1;
		}
		int left = deadline < 0 ? -1 : (int)(deadline - conn_now_ms());
		if (deadline >= 0 && left <= 0)
			return 0;
		if (conn_fill(c, left) < 0)
			return -1;
	}
}
