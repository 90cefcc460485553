/*
 * tools/verify/cmd.h — the subcommands of build/host/verifier, one entry
 * point each (argv[0] is the subcommand's name). tools/verifier.c
 * dispatches to them.
 */
#ifndef TOOLS_VERIFY_CMD_H
#define TOOLS_VERIFY_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "pem.h"

int verifier_snp_main(int argc, char **argv);
int verifier_tdx_main(int argc, char **argv);

/* ---- shared by the subcommands (cmd_files.c) ---- */

/* Print "error: ..." to stderr; returns 1 (the exit status). */
int cmd_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Read a whole file of at most max bytes (malloc'd); 0, or 1 after cmd_fail. */
int cmd_read_file(const char *path, size_t max, uint8_t **buf, size_t *len);

/*
 * The certificates of a PEM file (strict, pem.h) appended to certs[*n..max),
 * their DER in der[*used..cap). 0, or 1 after cmd_fail.
 */
int cmd_read_pem_certs(const char *path, uint8_t *der, size_t cap, size_t *used,
		       struct pem_cert *certs, int max, int *n);

/* Parse --flag HEX of exactly n bytes; 0, or 1 after cmd_fail. */
int cmd_hex_arg(const char *flag, const char *hex, uint8_t *out, size_t n);

/* Print the log's passed checks ("ok   ...") to stdout. */
struct vfy_log;
void cmd_print_ok(const struct vfy_log *log);

#endif
