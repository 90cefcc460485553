/*
 * tools/host/plat.c — kernel/platform.h on Linux: stdio console, the monotonic
 * clock, mmap'd memory, entropy, the boot files, identity and power. The disks
 * are in plat_disk.c, the CPUs and the thread pool in plat_pool.c.
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
