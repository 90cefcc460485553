/*
 * tools/host/plat_disk.c — kernel/platform.h's disks on Linux: files and block
 * devices read with pread (O_DIRECT where it can), and the asynchronous reads
 * that a few I/O threads serve.
 */
#define _GNU_SOURCE
#include "host.h"
#include "../../kernel/cpu_features.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- files ---- */
const char *host_file_kind(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFBLK: return "a block device";
	case S_IFDIR: return "a directory";
	case S_IFCHR: return "a character device";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	}
	return "not a file";
}

/*
 * open(2) with O_NONBLOCK, so that a FIFO without a writer cannot make the
 * open wait (for a regular file or a block device the flag changes
 * nothing), then fstat(2) of what was opened: the type checked is the
 * file's that will be read, with no window for a rename between a stat
 * and the open.
 */
int host_open_file(const char *path, bool block, int flags, uint64_t *size, struct stat *st,
		   char *why, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);

	int e;

	if (fd < 0) {
		/* a socket cannot be opened (ENXIO): say what it is all the same */
		struct stat ls;
		e = errno;
		if (stat(path, &ls) == 0 && !S_ISREG(ls.st_mode) && !(block && S_ISBLK(ls.st_mode))) {
			snprintf(why, n, "%s, not a regular file%s", host_file_kind(ls.st_mode),
				 block ? " or a block device" : "");
			errno = e;
			return -LLMK_EINVAL;
		}
		snprintf(why, n, "cannot open it: %s", strerror(e));
		errno = e;
		return e == ENOENT || e == ENOTDIR ? -LLMK_ENOENT : -LLMK_EIO;
	}
	if (fstat(fd, st) != 0) {
		e = errno;
		snprintf(why, n, "cannot stat it: %s", strerror(e));
		goto fail;
	}
	if (S_ISREG(st->st_mode)) {
		*size = (uint64_t)st->st_size;
	} else if (S_ISBLK(st->st_mode) && block) {
		if (ioctl(fd, BLKGETSIZE64, size) != 0) {
			e = errno;
			snprintf(why, n, "a block device whose size is unknown: %s", strerror(e));
			goto fail;
		}
	} else {
		snprintf(why, n, "%s, not a regular file%s", host_file_kind(st->st_mode),
			 block ? " or a block device" : "");
		close(fd);
		errno = EINVAL;
		return -LLMK_EINVAL;
	}
	/* reads wait for their bytes as usual from here on */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
fail:
	close(fd);
	errno = e;
	return -LLMK_EIO;
}

/* ---- disks ---- */
#define HOST_MAX_DISKS 16
struct host_disk {
	int fd;
	int dfd;              /* the same file with O_DIRECT, once opened, or -1 */
	_Atomic bool direct;  /* reads take dfd (where aligned) */
	bool streaming;       /* plat_disk_stream on */
	int refused;          /* errno of the O_DIRECT open the filesystem refused, or 0 */
	uint64_t size;
	dev_t dev;            /* what fd is, for the O_DIRECT open of the same path */
	ino_t ino;
	char path[256];
	char id[48];
	char where[48];
};
static struct host_disk disks[HOST_MAX_DISKS];
static int n_disks;
static enum host_direct host_direct = HOST_DIRECT_AUTO;

/*
 * Reads round the page cache (O_DIRECT) come from the device by DMA, as a
 * guest's virtio-blk reads do. While a model streams they are the default
 * (HOST_DIRECT_AUTO): a streamed model is larger than the memory meant for
 * it, and the page cache, which a memory cgroup charges to the process,
 * then evicts and refills instead of helping (docs/streaming.md). Where the
 * filesystem refuses O_DIRECT, reads go through the cache and the disk's
 * reads line says why. The path is opened again for it: the same checks
 * as the first open, and it must still be the same file.
 */
static void disk_direct_update(struct host_disk *d)
{
	bool want = host_direct == HOST_DIRECT_ON ||
		    (host_direct == HOST_DIRECT_AUTO && d->streaming);

	if (want && d->dfd < 0 && !d->refused) {
		struct stat st;
		uint64_t size;
		char why[128];
		d->dfd = host_open_file(d->path, true, O_DIRECT, &size, &st, why, sizeof why);
		if (d->dfd < 0) {
			d->refused = errno ? errno : EINVAL;
		} else if (st.st_dev != d->dev || st.st_ino != d->ino) {
			close(d->dfd);
			d->dfd = -1;
			d->refused = ESTALE;
		}
	}
	atomic_store(&d->direct, want && d->dfd >= 0);
}

void host_set_direct(enum host_direct mode)
{
	host_direct = mode;
	for (int i = 0; i < n_disks; i++)
		disk_direct_update(&disks[i]);
}

int host_add_disk_why(const char *path, char *why, size_t n)
{
	struct stat st;
	uint64_t size;

	if (n_disks == HOST_MAX_DISKS) {
		snprintf(why, n, "more than %d disks", HOST_MAX_DISKS);
		return -LLMK_ERANGE;
	}
	if (strlen(path) >= sizeof disks[0].path) {
		snprintf(why, n, "a path longer than %zu bytes", sizeof disks[0].path - 1);
		return -LLMK_EINVAL;
	}
	int fd = host_open_file(path, true, 0, &size, &st, why, n);
	if (fd < 0)
		return fd;
	struct host_disk *d = &disks[n_disks];
	memset(d, 0, sizeof *d);
	d->fd = fd;
	d->dfd = -1;
	d->size = size;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	snprintf(d->path, sizeof d->path, "%s", path);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	snprintf(d->id, sizeof d->id, "%s", base);
	snprintf(d->where, sizeof d->where, "%s %s", S_ISBLK(st.st_mode) ? "block device" : "file",
		 base);
	disk_direct_update(d);
	return n_disks++;
}

int host_add_disk(const char *path)
{
	char why[128];

	return host_add_disk_why(path, why, sizeof why);
}

void host_remove_disks(void)
{
	for (int i = 0; i < n_disks; i++) {
		close(disks[i].fd);
		if (disks[i].dfd >= 0)
			close(disks[i].dfd);
	}
	n_disks = 0;
}

int plat_disk_stream(int disk, bool on)
{
	if (disk < 0 || disk >= n_disks)
		return -LLMK_ENOENT;
	disks[disk].streaming = on;
	disk_direct_update(&disks[disk]);
	return 0;
}

int plat_disk_count(void)
{
	return n_disks;
}

int plat_disk_info(int disk, struct plat_disk_info *out)
{
	if (disk < 0 || disk >= n_disks)
		return -LLMK_ENOENT;
	const struct host_disk *d = &disks[disk];
	out->capacity = d->size;
	out->sector = 512;
	memcpy(out->id, d->id, sizeof out->id);
	memcpy(out->where, d->where, sizeof out->where);
	if (atomic_load(&d->direct))
		snprintf(out->reads, sizeof out->reads, "direct (O_DIRECT%s)",
			 host_direct == HOST_DIRECT_ON ? ", --direct" : ", the default while streaming");
	else if (d->refused)
		snprintf(out->reads, sizeof out->reads, "page cache (the filesystem refused O_DIRECT: %s)",
			 strerror(d->refused));
	else
		snprintf(out->reads, sizeof out->reads, "page cache (%s)",
			 host_direct == HOST_DIRECT_OFF ? "--no-direct" : "not streaming");
	return 0;
}

static host_disk_hook_fn disk_hook;
static void *disk_hook_ctx;
static host_disk_trace_fn disk_trace;
static void *disk_trace_ctx;

void host_set_disk_hook(host_disk_hook_fn fn, void *ctx)
{
	disk_hook_ctx = ctx;
	disk_hook = fn;
}

void host_set_disk_trace(host_disk_trace_fn fn, void *ctx)
{
	disk_trace_ctx = ctx;
	disk_trace = fn;
}

static int disk_read(int disk, uint64_t off, void *buf, size_t len);

/* A request's bytes, the hook's view of them (sync or async). */
static int disk_read_hooked(int disk, uint64_t off, void *buf, size_t len)
{
	int e = disk_read(disk, off, buf, len);

	if (!e && disk_hook)
		disk_hook(disk_hook_ctx, disk, off, buf, len);
	return e;
}

int plat_disk_read(int disk, uint64_t off, void *buf, size_t len)
{
	if (disk_trace)
		disk_trace(disk_trace_ctx, disk, off, len);
	return disk_read_hooked(disk, off, buf, len);
}

static int disk_read(int disk, uint64_t off, void *buf, size_t len)
{
	if (disk < 0 || disk >= n_disks)
		return -LLMK_ENOENT;
	struct host_disk *d = &disks[disk];
	if (off > d->size || len > d->size - off)
		return -LLMK_ERANGE;
	uint8_t *p = buf;
	/* O_DIRECT wants buffer, offset and length on the device's logical
	 * blocks (512 here; a device that wants more refuses with EINVAL): the
	 * rest, or a refusal, goes through the cache */
	int fd = atomic_load(&d->direct) && !((off | len | (uintptr_t)buf) & 511) ? d->dfd : d->fd;
	while (len) {
		ssize_t k = pread(fd, p, len, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EINVAL && fd != d->fd) {
			fd = d->fd;
			continue;
		}
		/* end of file inside the size the disk was attached with */
		if (k == 0)
			return -LLMK_ESHORT;
		if (k < 0)
			return -LLMK_EIO;
		p += k;
		off += (uint64_t)k;
		len -= (size_t)k;
	}
	return 0;
}

/*
 * Asynchronous reads: a small pool of I/O threads serves a FIFO of requests,
 * so the streamer's read-ahead overlaps computation as it does on virtio-blk.
 * The request's fields live in io->priv: [0] disk, [1] off, [2] buf, [3] len,
 * [4] next.
 */
#define HOST_IO_THREADS 2
#define HOST_IO_THREADS_DIRECT 16 /* blocked on the device, not on a CPU */
static pthread_mutex_t io_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t io_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t io_done_cond = PTHREAD_COND_INITIALIZER;
static struct plat_io *io_head, *io_tail;
static int io_threads;
static pthread_once_t io_fork_once = PTHREAD_ONCE_INIT;
static void io_fork_register(void);

static void *io_worker(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&io_lock);
		while (!io_head)
			pthread_cond_wait(&io_cond, &io_lock);
		struct plat_io *io = io_head;
		io_head = (struct plat_io *)(uintptr_t)io->priv[4];
		if (!io_head)
			io_tail = NULL;
		pthread_mutex_unlock(&io_lock);

		int st = disk_read_hooked((int)io->priv[0], io->priv[1],
					  (void *)(uintptr_t)io->priv[2], (size_t)io->priv[3]);
		pthread_mutex_lock(&io_lock);
		io->status = st;
		atomic_store_explicit((_Atomic int *)&io->done, 1, memory_order_release);
		pthread_cond_broadcast(&io_done_cond);
		pthread_mutex_unlock(&io_lock);
	}
	return NULL;
}

int plat_disk_read_async(int disk, uint64_t off, void *buf, size_t len, struct plat_io *io)
{
	if (disk < 0 || disk >= n_disks)
		return -LLMK_ENOENT;
	if ((off | len | (uintptr_t)buf) & 511)
		return -LLMK_EINVAL;
	if (off > disks[disk].size || len > disks[disk].size - off)
		return -LLMK_ERANGE;
	if (disk_trace)
		disk_trace(disk_trace_ctx, disk, off, len);
	io->status = 0;
	io->done = 0;
	io->priv[0] = (uint64_t)disk;
	io->priv[1] = off;
	io->priv[2] = (uintptr_t)buf;
	io->priv[3] = len;
	io->priv[4] = 0;
	pthread_once(&io_fork_once, io_fork_register);
	pthread_mutex_lock(&io_lock);
	/* the pool grows (and never shrinks) to what the disk's reads want */
	for (int want = atomic_load(&disks[disk].direct) ? HOST_IO_THREADS_DIRECT : HOST_IO_THREADS;
	     io_threads < want; io_threads++) {
		pthread_t t;
		if (pthread_create(&t, NULL, io_worker, NULL) != 0)
			break;
		pthread_detach(t);
	}
	if (io_tail)
		io_tail->priv[4] = (uintptr_t)io;
	else
		io_head = io;
	io_tail = io;
	pthread_cond_signal(&io_cond);
	pthread_mutex_unlock(&io_lock);
	return 0;
}

int plat_io_poll(struct plat_io *io)
{
	return atomic_load_explicit((_Atomic int *)&io->done, memory_order_acquire) != 0;
}

int plat_io_wait(struct plat_io *io)
{
	if (!plat_io_poll(io)) {
		pthread_mutex_lock(&io_lock);
		while (!io->done)
			pthread_cond_wait(&io_done_cond, &io_lock);
		pthread_mutex_unlock(&io_lock);
	}
	return io->status;
}

/*
 * A child of fork() has only the thread that forked: the I/O threads are
 * gone, and io_lock may be held by a thread that no longer exists. The
 * child starts the I/O pool afresh on first use (the tests load hostile
 * models in children, and a host program may fork). plat_pool.c does the
 * same for the matmul pool.
 */
static void io_fork_child(void)
{
	pthread_mutex_init(&io_lock, NULL);
	pthread_cond_init(&io_cond, NULL);
	pthread_cond_init(&io_done_cond, NULL);
	io_head = io_tail = NULL;
	io_threads = 0;
}

static void io_fork_register(void)
{
	pthread_atfork(NULL, NULL, io_fork_child);
}
