/*
 * tools/host/host.h — what the Linux implementation of platform.h needs from
 * its main(): the files that act as disks, the command line, an output hook.
 */
#ifndef LLMK_HOST_H
#define LLMK_HOST_H

#include "../../kernel/platform.h"

/* Attach a file as the next disk (index = count before the call). Read-only.
 * Returns the index or -LLMK_E*; errno-style reason printed by the caller. */
int host_add_disk(const char *path);
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
/* Worker threads for plat_parallel (default: online CPUs; LLMK_CPUS overrides). */
void host_set_cpus(int n);


/* tools/host/attest.c: swtpm's server socket. Connect (the fd, or -LLMK_E*
 * with why in err), and the tpm2_xfer_fn over it (ctx points at the fd). */
int host_vtpm_connect(const char *path, char *err, size_t errn);
int host_vtpm_xfer(void *ctx, const uint8_t *cmd, size_t n, uint8_t *rsp, size_t cap,
		   size_t *rlen, char *err, size_t errn);
/* Forget the attestation providers' state and the event log (tests that
 * change LLMK_VTPM). */
void host_attest_reset(void);

#endif
