/*
 * tools/host/plat.c — kernel/platform.h on Linux: stdio console, the monotonic
 * clock, mmap'd memory, files as disks (pread), a persistent pthread pool.
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

#ifndef LLMK_VERSION
#define LLMK_VERSION "0.0.0"
#endif
#ifndef LLMK_GIT
#define LLMK_GIT "unknown"
#endif
#ifndef LLMK_BUILD_ID /* mk/host.mk passes the digest of the sources */
#define LLMK_BUILD_ID "unknown"
#endif

/* ---- console ---- */
static host_output_fn out_fn;
static void *out_ctx;
static const char *in_buf;
static size_t in_len, in_pos;
static bool in_fake;

void host_set_output(host_output_fn fn, void *ctx)
{
	out_fn = fn;
	out_ctx = ctx;
}

bool host_input_is_stdin(void)
{
	return !in_fake;
}

void host_set_input(const char *bytes, size_t n)
{
	in_fake = bytes != NULL;
	in_buf = bytes;
	in_len = n;
	in_pos = 0;
}

static plat_write_filter_fn write_filter;
static void *write_filter_ctx;

void plat_set_write_filter(plat_write_filter_fn fn, void *ctx)
{
	write_filter = fn;
	write_filter_ctx = ctx;
}

void plat_write(const char *s, size_t n)
{
	if (write_filter)
		write_filter(write_filter_ctx, s, n);
	else
		plat_console_write(s, n);
}

void plat_console_write(const char *s, size_t n)
{
	if (out_fn) {
		out_fn(out_ctx, s, n);
		return;
	}
	while (n) {
		ssize_t k = write(1, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

int plat_getc(void)
{
	unsigned char c;

	if (in_fake)
		return in_pos < in_len ? (unsigned char)in_buf[in_pos++] : -1;
	for (;;) {
		ssize_t k = read(0, &c, 1);
		if (k == 1)
			return c;
		if (k < 0 && errno == EINTR)
			continue;
		return -1;
	}
}

int plat_trygetc(void)
{
	struct pollfd p = {.fd = 0, .events = POLLIN};

	if (in_fake)
		return in_pos < in_len ? (unsigned char)in_buf[in_pos++] : -1;
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
		unsigned char c;
		if (read(0, &c, 1) == 1)
			return c;
	}
	return -1;
}

/* ---- time ---- */
static uint64_t t_start, t_prompt;

uint64_t plat_time_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((constructor)) static void host_time_init(void)
{
	t_start = plat_time_ns();
}

uint64_t plat_uptime_ns(void)
{
	return plat_time_ns() - t_start;
}

uint64_t plat_boot_ns(void)
{
	return t_prompt ? t_prompt - t_start : 0;
}

void plat_mark_prompt(void)
{
	if (!t_prompt)
		t_prompt = plat_time_ns();
}

/* ---- memory ---- */
static _Atomic uint64_t mem_used, mem_peak;

#define HUGE_SZ ((size_t)2 << 20)

/*
 * In the sanitizer build (LLMK_POISON, llm/mem.h) each allocation gets a
 * PROT_NONE guard page on either side, poisoned too, so that ASan names an
 * access there (use-after-poison) before the fault would; and the tail of
 * its last page past size is poisoned: mmap'd pages are not ASan's, and it
 * would otherwise take every byte of them for an object's.
 */
#if defined(LLMK_POISON) && LLMK_POISON
#include <sanitizer/asan_interface.h>
#define GUARD_SZ ((size_t)4096)
#else
#define GUARD_SZ ((size_t)0)
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#endif

static size_t page_round(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

/* backed: large ones on 2 MiB pages, faulted in here (plat_alloc); else
 * 4 KiB pages, each faulted in at its first touch (plat_alloc_sparse) */
static void *alloc_pages(size_t size, size_t align, bool backed)
{
	if (!size || align > HUGE_SZ || size > SIZE_MAX - HUGE_SZ - 2 * GUARD_SZ - 4096)
		return NULL;
	size_t len = page_round(size);
	/* Over-map so the start can be aligned (large ones to 2 MiB, for
	 * huge pages), then unmap the slack. */
	size_t extra = align > 4096 ? align : 0;
	if (backed && len >= HUGE_SZ && extra < HUGE_SZ)
		extra = HUGE_SZ;
	size_t total = len + extra + 2 * GUARD_SZ;
	uint8_t *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	uint8_t *p = m + GUARD_SZ;
	if (extra)
		p = (uint8_t *)(((uintptr_t)p + extra - 1) & ~(uintptr_t)(extra - 1));
	uint8_t *lo = p - GUARD_SZ, *hi = p + len + GUARD_SZ;
	if (lo > m)
		munmap(m, (size_t)(lo - m));
	if (m + total > hi)
		munmap(hi, (size_t)(m + total - hi));
	if (backed && len >= HUGE_SZ) {
		/* 2 MiB pages: decode streamed the weights through 4 KiB ones
		 * more slowly. Faulted in here, not on first use, which slowed
		 * the load (docs/perf.md, "Matmul scheduling and memory"). */
		madvise(p, len, MADV_HUGEPAGE);
		for (size_t o = 0; o < len; o += 4096)
			((volatile uint8_t *)p)[o] = 0;
	}
	if (GUARD_SZ) {
		/* (the shadow of these addresses may still say what an earlier
		 * mapping there left poisoned) */
		ASAN_UNPOISON_MEMORY_REGION(lo, (size_t)(hi - lo));
		mprotect(lo, GUARD_SZ, PROT_NONE);
		mprotect(p + len, GUARD_SZ, PROT_NONE);
		ASAN_POISON_MEMORY_REGION(lo, GUARD_SZ);
		ASAN_POISON_MEMORY_REGION(p + size, len - size + GUARD_SZ);
	}
	uint64_t u = atomic_fetch_add(&mem_used, len) + len;
	uint64_t pk = atomic_load(&mem_peak);
	while (u > pk && !atomic_compare_exchange_weak(&mem_peak, &pk, u))
		;
	return p;
}

void *plat_alloc(size_t size, size_t align)
{
	return alloc_pages(size, align, true);
}

/* A short run stores a few of the KV cache's rows: faulting in the whole
 * of it on 2 MiB pages slowed a large model's load (docs/perf.md, "Matmul
 * scheduling and memory"). */
void *plat_alloc_sparse(size_t size, size_t align)
{
	return alloc_pages(size, align, false);
}

void plat_free(void *p, size_t size)
{
	if (!p)
		return;
	size_t len = page_round(size);
	uint8_t *lo = (uint8_t *)p - GUARD_SZ;
	/* what the allocation and its owner poisoned goes with the pages */
	ASAN_UNPOISON_MEMORY_REGION(lo, len + 2 * GUARD_SZ);
	munmap(lo, len + 2 * GUARD_SZ);
	atomic_fetch_sub(&mem_used, len);
}

static uint64_t mem_free_said; /* host_set_mem_free */

void host_set_mem_free(uint64_t bytes)
{
	mem_free_said = bytes;
}

void plat_mem_stats(struct plat_mem_stats *st)
{
	long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
	long psz = sysconf(_SC_PAGESIZE);
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kb;

	st->total = (uint64_t)pages * (uint64_t)psz;
	st->free = (uint64_t)avail * (uint64_t)psz;
	/* free for a process: MemAvailable counts the page cache it could take */
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
			st->free = (uint64_t)kb * 1024;
			break;
		}
	if (f)
		fclose(f);
	if (mem_free_said)
		st->free = mem_free_said;
	st->used = atomic_load(&mem_used);
	st->used_peak = atomic_load(&mem_peak);
}

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
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void fork_register(void);

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
	pthread_once(&fork_once, fork_register);
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

/* ---- CPUs ---- */
uint32_t plat_cpu_features(void)
{
	uint32_t f = 0;
#if defined(__x86_64__)
	/* the words kernel/cpu_features.c decodes, as the kernel reads them;
	 * XGETBV is allowed in user mode once the OS has set CR4.OSXSAVE */
	struct cpuid_words w = {0};
	unsigned a, b, c, d, max;
	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
	max = a;
	w.l0_ebx = b;
	w.l0_ecx = c;
	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	w.l1_ecx = c;
	if (c & (1u << 27)) {
		uint32_t lo, hi;
		__asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		w.xcr0 = (uint64_t)hi << 32 | lo;
	}
	if (max >= 7) {
		__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
		w.l7_ebx = b;
		w.l7_ecx = c;
		if (a >= 1) {
			__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(1));
			w.l71_eax = a;
		}
	}
	f = cpuid_features(&w);
#elif defined(__aarch64__)
	f |= PLAT_CPU_NEON;
#if defined(__ARM_FEATURE_DOTPROD)
	f |= PLAT_CPU_DOTPROD;
#endif
#endif
	/* LLMK_CPU_MASK=hex limits features (tests of the scalar and AVX2 paths). */
	const char *mask = getenv("LLMK_CPU_MASK");
	if (mask && *mask)
		f &= (uint32_t)strtoul(mask, NULL, 16);
	return f;
}

const char *plat_arch(void)
{
#if defined(__x86_64__)
	return "x86_64";
#elif defined(__aarch64__)
	return "aarch64";
#else
	return "unknown";
#endif
}

const char *plat_machine(void)
{
	return "Linux host";
}

bool plat_emulated(void)
{
	return false;
}

/*
 * The worker pool: n_cpus - 1 threads, created once, that wait for a new
 * job number in one word (the job's number and its next task index) and
 * then claim the job's tasks from it until none is left; the caller
 * runs task 0 and then claims too. So a worker the OS has not run yet (a
 * host busy with other work) holds nothing up: its task runs on the
 * caller, and the worker, when it runs, finds nothing left. Workers spin
 * briefly before sleeping so back-to-back matmuls in decode do not pay a
 * wake-up each.
 *
 * A claim is a compare-and-swap of the word from (job, i) to (job, i + 1)
 * with i < n. The caller writes the job's fields before it stores the word
 * (release) and writes the next job's only after every task of this one
 * has finished, so fields read after an acquire load of (job, i) and
 * before a successful swap are that job's.
 */
static int n_cpus;
static pthread_t *pool;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cond = PTHREAD_COND_INITIALIZER;
static _Atomic uint64_t pool_claim;  /* job << 32 | the next unclaimed task; a new job
					wakes the workers */
static _Atomic int pool_left;        /* claimed or not, tasks 1..n-1 not finished */
static _Atomic(plat_task_fn) pool_fn;
static _Atomic(void *) pool_arg;
static _Atomic int pool_n;
static _Atomic bool pool_hold;       /* tests: the workers take no task */
static uint32_t pool_job;

void host_set_cpus(int n)
{
	if (!pool && n > 0)
		n_cpus = n;
}

void host_pool_hold(bool on)
{
	atomic_store(&pool_hold, on);
}

int plat_cpu_count(void)
{
	if (!n_cpus) {
		const char *e = getenv("LLMK_CPUS");
		n_cpus = e && atoi(e) > 0 ? atoi(e) : (int)sysconf(_SC_NPROCESSORS_ONLN);
		if (n_cpus < 1)
			n_cpus = 1;
	}
	return n_cpus;
}

/* The spin-wait hint: PAUSE on x86, YIELD on arm64 (this file builds on both). */
static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* Claim and run the current job's tasks until none is left. */
static void pool_take_tasks(void)
{
	uint64_t w = atomic_load_explicit(&pool_claim, memory_order_acquire);

	for (;;) {
		plat_task_fn fn = atomic_load_explicit(&pool_fn, memory_order_relaxed);
		void *arg = atomic_load_explicit(&pool_arg, memory_order_relaxed);
		int n = atomic_load_explicit(&pool_n, memory_order_relaxed);
		uint32_t i = (uint32_t)w;

		if ((int64_t)i >= n)
			return;
		if (!atomic_compare_exchange_weak_explicit(&pool_claim, &w, w + 1,
							   memory_order_acq_rel,
							   memory_order_acquire))
			continue;
		fn(arg, (int)i, n);
		atomic_fetch_sub_explicit(&pool_left, 1, memory_order_release);
		w = atomic_load_explicit(&pool_claim, memory_order_acquire);
	}
}

static uint64_t pool_current_job(void)
{
	return atomic_load(&pool_claim) >> 32;
}

/* plat_background: BG_NONE -> BG_POSTED (the caller) -> BG_RUNNING (who
 * takes it, by compare-and-swap) -> BG_DONE -> BG_NONE (the caller's wait) */
enum { BG_NONE, BG_POSTED, BG_RUNNING, BG_DONE };
static _Atomic int pool_bg;
static void (*bg_fn)(void *);
static void *bg_arg;

static void take_background(void)
{
	int want = BG_POSTED;

	if (!atomic_compare_exchange_strong(&pool_bg, &want, BG_RUNNING))
		return;
	bg_fn(bg_arg);
	atomic_store_explicit(&pool_bg, BG_DONE, memory_order_release);
}

static bool pool_idle(uint64_t seen)
{
	return pool_current_job() == seen && atomic_load(&pool_bg) != BG_POSTED;
}

static void *pool_worker(void *arg)
{
	uint64_t seen = 0;

	(void)arg;
	for (;;) {
		uint64_t g;
		int spins = 0;
		while (pool_idle(seen) && spins < 20000) {
			cpu_relax();
			spins++;
		}
		if (pool_idle(seen)) {
			pthread_mutex_lock(&pool_lock);
			while (pool_idle(seen))
				pthread_cond_wait(&pool_cond, &pool_lock);
			pthread_mutex_unlock(&pool_lock);
		}
		g = pool_current_job();
		bool hold = atomic_load(&pool_hold); /* tests: no task taken */
		if (hold)
			cpu_relax();
		else
			take_background();
		if (g != seen) {
			seen = g;
			if (!hold)
				pool_take_tasks();
		}
	}
	return NULL;
}

static void pool_start(int cpus)
{
	if (!pool) {
		pthread_once(&fork_once, fork_register);
		pool = calloc((size_t)cpus, sizeof *pool);
		for (int i = 1; i < cpus; i++)
			pthread_create(&pool[i], NULL, pool_worker, NULL);
	}
}

static void pool_wake(void)
{
	/* under the lock: a worker that found nothing new waits on the
	 * condition before this broadcast, or sees what is new */
	pthread_mutex_lock(&pool_lock);
	pthread_cond_broadcast(&pool_cond);
	pthread_mutex_unlock(&pool_lock);
}

void plat_background(void (*fn)(void *arg), void *arg)
{
	plat_background_wait(); /* one at a time */
	bg_fn = fn;
	bg_arg = arg;
	atomic_store_explicit(&pool_bg, BG_POSTED, memory_order_release);
	if (plat_cpu_count() < 2) {
		take_background();
		return;
	}
	pool_start(plat_cpu_count());
	pool_wake();
}

void plat_background_wait(void)
{
	take_background(); /* not taken yet: here */
	for (int spins = 0; atomic_load_explicit(&pool_bg, memory_order_acquire) == BG_RUNNING;
	     spins++) {
		if (spins < 4000)
			cpu_relax();
		else
			sched_yield();
	}
	atomic_store_explicit(&pool_bg, BG_NONE, memory_order_relaxed);
}

void plat_parallel(plat_task_fn fn, void *arg, int n)
{
	int cpus = plat_cpu_count();
	if (n > cpus)
		n = cpus;
	if (n <= 1) {
		fn(arg, 0, 1);
		return;
	}
	pool_start(cpus);
	atomic_store_explicit(&pool_fn, fn, memory_order_relaxed);
	atomic_store_explicit(&pool_arg, arg, memory_order_relaxed);
	atomic_store_explicit(&pool_n, n, memory_order_relaxed);
	atomic_store_explicit(&pool_left, n - 1, memory_order_relaxed);
	if (!++pool_job) /* 0 is the job a worker has seen before the first */
		pool_job = 1;
	atomic_store_explicit(&pool_claim, (uint64_t)pool_job << 32 | 1, memory_order_release);
	pool_wake();
	fn(arg, 0, n);
	pool_take_tasks();
	/* a task still out is one a worker claimed and runs; past a short spin
	 * give it the CPU (docs/perf.md, "Matmul scheduling and memory") */
	for (int spins = 0; atomic_load_explicit(&pool_left, memory_order_acquire) > 0; spins++) {
		if (spins < 4000)
			cpu_relax();
		else
			sched_yield();
	}
}

/*
 * A child of fork() has only the thread that forked: the I/O and matmul
 * pools' threads are gone, and their locks may be held by threads that no
 * longer exist. The child starts both pools afresh on first use (the tests
 * load hostile models in children, and a host program may fork).
 */
static void fork_child(void)
{
	pthread_mutex_init(&io_lock, NULL);
	pthread_cond_init(&io_cond, NULL);
	pthread_cond_init(&io_done_cond, NULL);
	io_head = io_tail = NULL;
	io_threads = 0;
	pthread_mutex_init(&pool_lock, NULL);
	pthread_cond_init(&pool_cond, NULL);
	pool = NULL; /* the parent's array; its threads are not ours */
	atomic_store(&pool_claim, 0);
	pool_job = 0;
	atomic_store(&pool_left, 0);
	atomic_store(&pool_n, 0);
}

static void fork_register(void)
{
	pthread_atfork(NULL, NULL, fork_child);
}

/* ---- entropy ---- */
static bool entropy_off;

void host_entropy_off(bool off)
{
	entropy_off = off;
}

int plat_entropy(void *buf, size_t n)
{
	uint8_t *p = buf;
	if (entropy_off)
		return -LLMK_ENOTSUP;
	while (n) {
		ssize_t k = getrandom(p, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -LLMK_EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* ---- boot configuration ---- */
static char *cmdline;
static char *config;
static size_t config_len;

void host_set_cmdline(const char *s)
{
	free(cmdline);
	cmdline = s ? strdup(s) : NULL;
}

void host_set_config(const char *text)
{
	host_set_config_bytes(text, text ? strlen(text) : 0);
}

void host_set_config_bytes(const char *text, size_t n)
{
	free(config);
	config = NULL;
	config_len = 0;
	if (text && (config = malloc(n + 1))) {
		memcpy(config, text, n);
		config[n] = 0;
		config_len = n;
	}
}

const char *plat_cmdline(void)
{
	return cmdline ? cmdline : "";
}

/* The host build's services use the host's sockets and addresses. */
int plat_net_ipv4(const struct plat_net_ipv4 *c)
{
	(void)c;
	return 0;
}

const char *plat_config_file(size_t *len)
{
	*len = config_len;
	return config;
}

long host_read_fd(int fd, void *buf, size_t cap)
{
	uint8_t *p = buf;
	size_t got = 0;

	while (got < cap) {
		ssize_t k = read(fd, p + got, cap - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (long)got;
}

/* As the kernel's: a file that does not fit cap is -LLMK_ERANGE, not cut
 * short; only a regular file is read (a FIFO or a device could block or
 * never end). */
int plat_boot_file(const char *name, void *buf, size_t cap)
{
	struct stat st;
	uint64_t size;
	char why[128], more;

	if (cap > INT_MAX)
		cap = INT_MAX;
	int fd = host_open_file(name, false, 0, &size, &st, why, sizeof why);
	if (fd < 0)
		return fd;
	long k = host_read_fd(fd, buf, cap);
	long extra = k >= 0 && (size_t)k == cap ? host_read_fd(fd, &more, 1) : 0;
	close(fd);
	if (k < 0 || extra < 0)
		return -LLMK_EIO;
	return extra ? -LLMK_ERANGE : (int)k;
}

/* ---- identity ---- */
const char *plat_version(void)
{
	return LLMK_VERSION;
}

const char *plat_git(void)
{
	return LLMK_GIT;
}

const char *plat_build_id(void)
{
	return LLMK_BUILD_ID;
}

/* ---- power ---- */
void plat_poweroff(void)
{
	exit(0);
}

void plat_reboot(void)
{
	exit(0);
}

void plat_panic(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	plat_vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fprintf(stderr, "panic: %s\n", buf);
	abort();
}
