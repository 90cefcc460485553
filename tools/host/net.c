/*
 * tools/host/net.c — kernel/net.h over Linux sockets: TCP on 127.0.0.1
 * only (the host build serves tests and benchmarks, never a network), every
 * socket non-blocking, handles indexing one table of descriptors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../kernel/net.h"
#include "host.h"

static int fds[NET_MAX_HANDLES];
static bool used[NET_MAX_HANDLES];

static int take(int fd)
{
	for (int h = 0; h < NET_MAX_HANDLES; h++)
		if (!used[h]) {
			used[h] = true;
			fds[h] = fd;
			return h;
		}
	return -1;
}

static bool valid(int h)
{
	return h >= 0 && h < NET_MAX_HANDLES && used[h];
}

int net_listen(uint16_t port, int *handle, uint16_t *bound)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	int one = 1, fd, h;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -LLMK_EIO;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int busy = errno == EADDRINUSE || errno == EACCES;
		close(fd);
		return busy ? -LLMK_EBUSY : -LLMK_EIO;
	}
	if (listen(fd, 256) < 0 || getsockname(fd, (struct sockaddr *)&a, &al) < 0 ||
	    (h = take(fd)) < 0) {
		close(fd);
		return -LLMK_ENOMEM;
	}
	*handle = h;
	*bound = ntohs(a.sin_port);
	return 0;
}

int net_accept(int listener, int *conn)
{
	int one = 1, fd, h;

	if (!valid(listener))
		return -LLMK_EINVAL;
	for (h = 0; h < NET_MAX_HANDLES && used[h]; h++)
		;
	if (h == NET_MAX_HANDLES)
		return 0; /* stays in the backlog until a handle is free */
	fd = accept4(fds[listener], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
		       errno == ECONNABORTED ? 0 : -LLMK_EIO;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	*conn = take(fd);
	return 1;
}

long net_read(int conn, void *buf, size_t cap)
{
	ssize_t k;

	if (!valid(conn))
		return -LLMK_EINVAL;
	k = recv(fds[conn], buf, cap, 0);
	if (k > 0)
		return (long)k;
	if (k == 0)
		return cap ? NET_EOF : 0;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -LLMK_EIO;
}

long net_write(int conn, const void *buf, size_t n)
{
	ssize_t k;

	if (!valid(conn))
		return -LLMK_EINVAL;
	k = send(fds[conn], buf, n, MSG_NOSIGNAL);
	if (k >= 0)
		return (long)k;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -LLMK_EIO;
}

void net_close(int handle)
{
	if (!valid(handle))
		return;
	close(fds[handle]);
	used[handle] = false;
}

/* Whether stdin, which poll(2) calls readable, has nothing more: a pipe,
 * socket or terminal with no bytes waiting after the writer is gone; a
 * regular file read to its end; a device FIONREAD does not know (/dev/null),
 * which poll calls readable forever (serve would spin). */
static bool stdin_at_end(int *avail)
{
	struct stat st;
	off_t at;

	if (ioctl(0, FIONREAD, avail) == 0)
		return *avail == 0;
	if (fstat(0, &st) != 0)
		return true;
	if (S_ISREG(st.st_mode))
		return (at = lseek(0, 0, SEEK_CUR)) < 0 || at >= st.st_size;
	return !isatty(0);
}

int net_poll(uint64_t timeout_ns)
{
	struct pollfd p[NET_MAX_HANDLES + 1];
	int n = 0, avail = 0;

	/* stdin only when it is the console (not with -c alone: then SIGINT ends) */
	p[n++] = (struct pollfd){.fd = host_input_is_stdin() ? 0 : -1, .events = POLLIN};
	for (int h = 0; h < NET_MAX_HANDLES; h++)
		if (used[h])
			p[n++] = (struct pollfd){.fd = fds[h], .events = POLLIN};
	if (poll(p, (nfds_t)n, (int)(timeout_ns / 1000000)) <= 0)
		return 0;
	/* stdin readable with nothing to read: its end (a pipe or file) */
	if (p[0].fd == 0 && (p[0].revents & (POLLIN | POLLHUP)) && stdin_at_end(&avail))
		return NET_EOF;
	return 0;
}

bool net_loopback_only(void)
{
	return true;
}
