/*
 * kernel/platform.h — the one seam between the portable engine (llm/, shell/)
 * and the machine.
 *
 * kernel/ implements it on bare metal (after ExitBootServices); tools/host/
 * implements it on Linux with libc, pthreads and pread. llm/ and shell/ include
 * this header and the compiler's freestanding headers only.
 *
 * Conventions: functions return 0 or a negative LLMK_E* code unless stated.
 */
#ifndef LLMK_PLATFORM_H
#define LLMK_PLATFORM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- error codes (always returned negated: return -LLMK_EIO) ---- */
enum {
	LLMK_OK = 0,
	LLMK_EINVAL = 1,   /* bad argument */
	LLMK_ENOMEM = 2,   /* allocation failed */
	LLMK_EIO = 3,      /* device or read error */
	LLMK_ERANGE = 4,   /* offset/length/value out of range */
	LLMK_EFORMAT = 5,  /* malformed file or data */
	LLMK_ENOTSUP = 6,  /* valid but unsupported */
	LLMK_EAUTH = 7,    /* authentication / integrity failure (bad tag, wrong key) */
	LLMK_ENOENT = 8,   /* no such disk, key, tensor, model */
	LLMK_EBUDGET = 9,  /* would exceed the memory budget */
	LLMK_ECANCEL = 10, /* cancelled by the user (Ctrl-C) */
	LLMK_EBUSY = 11,   /* resource in use */
	LLMK_ESHORT = 12,  /* a disk ended inside its capacity (host: the file was
			    * truncated after it was attached) */
};
const char *plat_strerror(int err); /* accepts err or -err; in kernel/fmt.c */

/* ---- freestanding C library subset (kernel/lib.c on bare metal, libc on host) ---- */
void *memcpy(void *restrict d, const void *restrict s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

/*
 * Formatted output, one implementation (kernel/fmt.c) linked into both the
 * kernel and the host so both print the same bits. Supports %d %i %u %x %X
 * %p %s %c %% %f %e %g with flags (- 0 + space), width, precision, and the
 * length modifiers hh h l ll z j t.
 */
int plat_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int plat_snprintf(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int plat_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- console ---- */
void plat_write(const char *s, size_t n); /* raw bytes to the console */
/*
 * A filter on console output: while fn is set, plat_write hands it every
 * byte instead of writing them, and fn writes what the console should carry
 * with plat_console_write (the confidential session, shell/session.c, sends
 * frames instead of text). NULL removes it. One filter at a time.
 */
typedef void (*plat_write_filter_fn)(void *ctx, const char *s, size_t n);
void plat_set_write_filter(plat_write_filter_fn fn, void *ctx);
void plat_console_write(const char *s, size_t n); /* the console itself, never filtered */
/* Blocking read of one input byte; -1 at end of input (host stdin EOF). */
int plat_getc(void);
/* Non-blocking: one byte if one is waiting, else -1. Used to see Ctrl-C mid-run. */
int plat_trygetc(void);

/* ---- time ---- */
uint64_t plat_time_ns(void);     /* monotonic nanoseconds since an arbitrary origin */
uint64_t plat_uptime_ns(void);   /* since reset (kernel) / process start (host) */
uint64_t plat_boot_ns(void);     /* reset (or process start) to first prompt; 0 until then */
void plat_mark_prompt(void);     /* shell calls it once, at the first prompt */

/* ---- memory ---- */
/* Page-granular allocation, zero-filled, aligned to at least `align` (power of
 * two, <= 2 MiB). NULL when out of memory. Budget accounting is the engine's
 * job (llm/mem.h), not the platform's. */
void *plat_alloc(size_t size, size_t align);
/* The same for memory its owner fills a little at a time (the KV cache, a
 * row a position): a platform that backs pages on first touch (the host)
 * backs none ahead; the kernel's memory is all backed, so the two are one.
 * Freed with plat_free. */
void *plat_alloc_sparse(size_t size, size_t align);
void plat_free(void *p, size_t size);
struct plat_mem_stats {
	uint64_t total;     /* memory the platform manages (kernel: conventional RAM) */
	uint64_t free;      /* currently free */
	uint64_t used_peak; /* high-water mark of allocated bytes */
	uint64_t used;      /* currently allocated bytes */
};
void plat_mem_stats(struct plat_mem_stats *st);

/* ---- disks (virtio-blk in the kernel, files on the host) ---- */
struct plat_disk_info {
	uint64_t capacity;  /* bytes the device reports */
	uint32_t sector;    /* logical sector size; reads need not be aligned to it */
	char id[48];        /* device id string (virtio-blk GET_ID) or file name */
	char where[48];     /* e.g. "pci 00:03.0" or the host path's base name */
	char reads[80];     /* how reads reach the data where the platform has a
			       choice (host: "direct (O_DIRECT, ...)"), else "" */
};
int plat_disk_count(void);
int plat_disk_info(int disk, struct plat_disk_info *out);
/*
 * The engine streams a model off this disk (on), or no longer (off). A
 * platform with a cache between it and the device may read round it while
 * the disk streams: the host build reads with O_DIRECT then (unless
 * --no-direct), the kernel has no such cache. Returns 0 or -LLMK_ENOENT.
 */
int plat_disk_stream(int disk, bool on);
/* Synchronous read of any byte range inside capacity (no alignment required). */
int plat_disk_read(int disk, uint64_t off, void *buf, size_t len);
/*
 * Asynchronous read for the layer streamer. off and len must be multiples of
 * 512 and buf 512-aligned. The platform may split a request; completion means
 * every byte arrived. Many requests may be in flight at once (queue depth
 * >= 16 in the kernel). plat_io_poll never blocks: it returns 1 when the
 * request finished (then io->status holds 0 or -LLMK_E*), 0 if still pending.
 * plat_io_wait blocks until done and returns io->status.
 */
struct plat_io {
	int status;
	volatile int done;
	uint64_t priv[6]; /* the platform's bookkeeping */
};
int plat_disk_read_async(int disk, uint64_t off, void *buf, size_t len, struct plat_io *io);
int plat_io_poll(struct plat_io *io);
int plat_io_wait(struct plat_io *io);

/* ---- CPUs ---- */
enum {
	PLAT_CPU_SSE42 = 1u << 0,
	PLAT_CPU_AVX2 = 1u << 1,
	PLAT_CPU_FMA = 1u << 2,
	PLAT_CPU_F16C = 1u << 3,
	PLAT_CPU_AVX512F = 1u << 4,
	PLAT_CPU_AVX512BW = 1u << 5,
	PLAT_CPU_AVX512VL = 1u << 6,
	PLAT_CPU_AVX512VNNI = 1u << 7,
	PLAT_CPU_AVX512BF16 = 1u << 8,
	PLAT_CPU_AVXVNNI = 1u << 9,
	PLAT_CPU_RDRAND = 1u << 10,
	PLAT_CPU_AVX512DQ = 1u << 11,
	PLAT_CPU_AES = 1u << 12,        /* AES-NI */
	PLAT_CPU_PCLMUL = 1u << 13,     /* PCLMULQDQ */
	PLAT_CPU_VAES = 1u << 14,       /* AES-NI on ymm/zmm (with AVX-512: zmm) */
	PLAT_CPU_VPCLMUL = 1u << 15,    /* VPCLMULQDQ */
	PLAT_CPU_NEON = 1u << 16,
	PLAT_CPU_DOTPROD = 1u << 17,
	PLAT_CPU_FP16 = 1u << 18,
	PLAT_CPU_RNDR = 1u << 19,
	PLAT_CPU_I8MM = 1u << 20,
	PLAT_CPU_SHA = 1u << 21,        /* x86 SHA extensions (SHA-NI) */
	/* Not a feature: an x86 CPU of AMD's (AuthenticAMD, or Hygon's Zen),
	 * whose caches want another read pattern in decode (llm/quant.h). */
	PLAT_CPU_AMD = 1u << 22,
	PLAT_CPU_GFNI = 1u << 23,       /* x86 Galois-field instructions (with AVX-512: on zmm) */
};
uint32_t plat_cpu_features(void);    /* usable (enabled by the OS/kernel) features */
/* The names of the features in f, each after a space (" avx2 fma"), in one
 * fixed order, into buf ("" for none); kernel/cpu_features.c for both. */
void plat_cpu_feature_text(uint32_t f, char *buf, size_t n);
const char *plat_arch(void);         /* "x86_64" or "aarch64" */
const char *plat_machine(void);      /* e.g. "QEMU TCG (emulated)", "Linux host", "SEV-SNP guest" */
bool plat_emulated(void);            /* true under an emulator (TCG): benchmarks say so */
int plat_cpu_count(void);            /* CPUs available to plat_parallel */
/*
 * Run fn(arg, i, n) once for each i = 0..n-1, on up to n CPUs at once (the
 * caller runs task 0, then any task no worker has taken: a CPU the OS or
 * the hypervisor has not scheduled holds nothing up), and return when all
 * have returned. n is clamped to [1, plat_cpu_count()]. So two tasks may
 * run one after the other on one CPU: fn must not wait for another task.
 * The pool is persistent: no thread is created per call. Not re-entrant:
 * fn must not call plat_parallel.
 */
typedef void (*plat_task_fn)(void *arg, int i, int n);
void plat_parallel(plat_task_fn fn, void *arg, int n);

/*
 * One task beside the caller: fn(arg) runs on a worker CPU while the
 * caller goes on (plat_parallel meanwhile runs on the CPUs that are free:
 * the caller takes the tasks the busy worker does not), or on the caller
 * in plat_background_wait when no worker has taken it by then (one CPU: at
 * once, in plat_background). One at a time: wait before the next. fn must
 * not call plat_parallel or plat_background. plat_background_wait returns
 * when fn has returned (everything it wrote visible); without a task
 * started, at once.
 */
void plat_background(void (*fn)(void *arg), void *arg);
void plat_background_wait(void);

/* ---- entropy ---- */
/* Fill buf with random bytes from the hardware (RDRAND/RNDR) or the OS. */
int plat_entropy(void *buf, size_t n);

/* ---- network (docs/network.md) ---- */
/* The network door's IPv4 configuration: DHCP, or a static address, netmask
 * and gateway (a.b.c.d as {a, b, c, d}). The kernel applies it to its
 * virtio-net interface at once, and it is nothing to do without one; the
 * host build serves on the host's own network and ignores it. 0 or -LLMK_E*. */
struct plat_net_ipv4 {
	bool dhcp;
	uint8_t addr[4], mask[4], gw[4];
};
int plat_net_ipv4(const struct plat_net_ipv4 *c);

/* ---- boot configuration ---- */
const char *plat_cmdline(void);  /* kernel command line / host argv joined; "" if none */
/* The contents of llmk.cfg from the ESP (host: --config FILE), NUL-terminated, or NULL;
 * *len = its length in bytes (the file may hold a NUL of its own before that). */
const char *plat_config_file(size_t *len);
/* Read a small file from the boot volume read before ExitBootServices (host: the
 * file system). Returns its length, or a negative LLMK_E* code. */
int plat_boot_file(const char *name, void *buf, size_t cap);

/* ---- build identity ---- */
const char *plat_version(void);  /* "0.1.0" */
const char *plat_git(void);      /* short commit id, "unknown" outside git */
const char *plat_build_id(void); /* hex digest identifying this build's engine+shell sources */

/* ---- power ---- */
__attribute__((noreturn)) void plat_poweroff(void);
__attribute__((noreturn)) void plat_reboot(void);
__attribute__((noreturn)) void plat_panic(const char *fmt, ...);

#endif
