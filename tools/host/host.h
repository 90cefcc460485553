/*
 * tools/host/host.h — what the Linux implementation of platform.h needs from
 * its main(): the files that act as disks, the command line, an output hook.
 */
#ifndef LLMK_HOST_H
#define LLMK_HOST_H

#include "../../kernel/platform.h"

/* Attach a file or a block device as the next disk (index = count before the
 * call). Read-only. Returns the index or -LLMK_E*, and why in why[n] (what
 * the path is when it is neither: "a FIFO, not a regular file or a block
 * device"). */
int host_add_disk_why(const char *path, char *why, size_t n);
int host_add_disk(const char *path); /* the same, why not kept */
/* Open path read-only to read its bytes, never waiting: O_NONBLOCK on the
 * open (a FIFO without a writer would block open(2)), then fstat(2) of the
 * descriptor. A regular file, or a block device when block, is the open fd
 * (blocking reads again; flags added to the open, e.g. O_DIRECT) with its
 * size and *st; anything else is -LLMK_EINVAL with why[n] naming what it
 * is, an open that failed -LLMK_ENOENT or -LLMK_EIO with strerror in why.
 * errno is the reason on every failure. */
struct stat;
int host_open_file(const char *path, bool block, int flags, uint64_t *size, struct stat *st,
		   char *why, size_t n);
/* "a FIFO", "a directory", "a character device", ... for an st_mode. */
const char *host_file_kind(unsigned mode);
/* read(2) until cap bytes or end of file: the count, or -1 (errno). */
long host_read_fd(int fd, void *buf, size_t cap);
/* How the disks are read (plat_disk_info's reads says which, per disk):
 * round the page cache (O_DIRECT) while a model streams from them, the
 * default; always (--direct); never (--no-direct). */
enum host_direct { HOST_DIRECT_AUTO, HOST_DIRECT_ON, HOST_DIRECT_OFF };
void host_set_direct(enum host_direct mode);
void host_remove_disks(void);
void host_set_cmdline(const char *cmdline);
/* Contents of --config FILE; NULL clears. Copied. The _bytes form keeps
 * n bytes, NUL bytes inside included (the shell refuses those lines). */
void host_set_config(const char *text);
void host_set_config_bytes(const char *text, size_t n);
/* Redirect console output (tests capture what the shell prints); NULL restores stdout. */
typedef void (*host_output_fn)(void *ctx, const char *s, size_t n);
void host_set_output(host_output_fn fn, void *ctx);
/* Feed console input from a buffer instead of stdin (tests); NULL restores stdin. */
void host_set_input(const char *bytes, size_t n);
/* Is the console stdin itself (not host_set_input's bytes)? tools/host/net.c
 * watches it for its end only then. */
bool host_input_is_stdin(void);
/* Worker threads for plat_parallel (default: online CPUs; LLMK_CPUS overrides). */
void host_set_cpus(int n);
/* Tests: on, the pool's workers take no task (as if the OS never ran them). */
void host_pool_hold(bool on);
/* Tests: fn sees (and may change) every disk read once its bytes are in buf,
 * sync or async, as a host serving the disk could; NULL removes it. */
typedef void (*host_disk_hook_fn)(void *ctx, int disk, uint64_t off, void *buf, size_t n);
void host_set_disk_hook(host_disk_hook_fn fn, void *ctx);
/* Tests: fn sees every disk request as it is made, in the order the engine
 * makes them (sync reads when called, async ones at submission): what a
 * host serving the disk sees of them. NULL removes it. */
typedef void (*host_disk_trace_fn)(void *ctx, int disk, uint64_t off, size_t n);
void host_set_disk_trace(host_disk_trace_fn fn, void *ctx);
/* Tests: plat_mem_stats says bytes are free (0: what the machine says). */
void host_set_mem_free(uint64_t bytes);
/* Tests: on, plat_entropy fails as on a CPU with no entropy source. */
void host_entropy_off(bool off);


/* tools/host/attest.c: swtpm's server socket. Connect (the fd, or -LLMK_E*
 * with why in err), and the tpm2_xfer_fn over it (ctx points at the fd). */
int host_vtpm_connect(const char *path, char *err, size_t errn);
int host_vtpm_xfer(void *ctx, const uint8_t *cmd, size_t n, uint8_t *rsp, size_t cap,
		   size_t *rlen, char *err, size_t errn);
/* Forget the attestation providers' state and the event log (tests that
 * change LLMK_VTPM). */
void host_attest_reset(void);

#endif
