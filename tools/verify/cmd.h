/*
 * tools/verify/cmd.h — the subcommands of build/host/verifier, one entry
 * point each (argv[0] is the subcommand's name). tools/verifier.c
 * dispatches to them.
 */
#ifndef TOOLS_VERIFY_CMD_H
#define TOOLS_VERIFY_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "bundle.h"
#include "pem.h"

int verifier_snp_main(int argc, char **argv);
int verifier_tdx_main(int argc, char **argv);

/* ---- the options every evidence bundle takes (cmd_bundle.c) ---- */
struct bundle_cli {
	const char *evidence, *nonce, *model;
	const char *config; /* --expect-config FILE|SHA256 (NULL: the empty configuration) */
	int allow_simulated;
};
/* Take argv[*i] (and its value) if it is --evidence, --nonce, --expect-model,
 * --expect-config or --allow-simulated: 1 taken, 0 not one of them, -1 bad (printed). */
int bundle_cli_opt(struct bundle_cli *o, int argc, char **argv, int *i);
/* The nonce and model of o into x, then the evidence file read (*buf is
 * malloc'd) and a line saying how. Labels the output SIMULATED
 * (cmd_set_simulated) when the bundle says so. 0, or 1 after cmd_fail. */
int bundle_cli_load(const struct bundle_cli *o, struct bundle_expect *x, uint8_t **buf,
		    size_t *n);
/* The rules of a subcommand that checks its artifact (what: "report",
 * "quote"; has_what: --what given) alone or inside a bundle: with
 * --evidence, not --what and not --expect-report-data (the bundle gives
 * the report data), and --nonce and --chain; without it, none of the
 * bundle's options. cmd names the subcommand in the messages. 0, or 1
 * after cmd_fail. */
int bundle_cli_check(const struct bundle_cli *o, const char *cmd, const char *what,
		     bool has_what, bool has_report_data, bool has_chain);
/* The closing line's bundle part: "nonce N, model M (expected|not checked:
 * no --expect-model), guest key K". */
void bundle_cli_summary(const struct bundle *b, const struct bundle_expect *x, char *out,
			size_t cap);

/* ---- `verifier snp` (cmd_snp.c): its options, which `wrap` takes too ---- */
struct snp_cli {
	struct bundle_cli b;
	const char *report, *vcek, *chain[2];
	int n_chain;
	uint8_t measurement[48], report_data[64], host_data[32];
	struct snp_expect x;
};
/* 1 taken, 0 not an snp option, -1 bad (printed). */
int snp_cli_opt(struct snp_cli *o, int argc, char **argv, int *i);
/* Verify the bundle o names (snp_evidence.c), print the ok lines, the
 * report and the verdict; 0 with *b the verified bundle (its arrays; its
 * record pointers are dead on return), or 1 after cmd_fail. */
int snp_cli_evidence(const struct snp_cli *o, struct bundle *b);

/* ---- `verifier tdx` (cmd_tdx.c) ---- */
struct tdx_cli {
	struct bundle_cli b;
	const char *quote, *chain;
	uint8_t mrtd[48], report_data[64];
	struct tdx_expect x;
};
int tdx_cli_opt(struct tdx_cli *o, int argc, char **argv, int *i);
int tdx_cli_evidence(const struct tdx_cli *o, struct bundle *b);

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

/* One option that takes a value, stored as a const char * at offset off
 * (offsetof) of the caller's options struct: a subcommand's options are a
 * const table of these. */
struct cmd_opt {
	const char *name;
	size_t off;
};
/* The row of opts[0..n) whose name is flag[0..len) (len: a --flag=value
 * form passes the part before '='), or NULL. */
const struct cmd_opt *cmd_opt_find(const struct cmd_opt *opts, size_t n, const char *flag,
				   size_t len);
/* Where row o keeps its value in the options struct at base. */
static inline const char **cmd_opt_slot(void *base, const struct cmd_opt *o)
{
	return (const char **)((char *)base + o->off);
}
/* Take argv[*i] and its value into base if opts[0..n) names it: 1 taken,
 * 0 not one of them, -1 no value follows (printed). */
int cmd_opt_take(const struct cmd_opt *opts, size_t n, void *base, int argc, char **argv, int *i);

/* Print the log's passed checks ("ok   ...") to stdout, then, when e (the
 * checks' result) is a failure, its reason (cmd_fail). 0 when all passed,
 * else 1. */
struct vfy_log;
int cmd_print_log(const struct vfy_log *log, int e);

/* A subcommand's option parser (snp_cli_opt, ...) over its options o. */
typedef int (*cmd_opt_fn)(void *o, int argc, char **argv, int *i);
/* Every argument of argv[1..argc) through opt; -h or --help prints usage
 * and exits 0. An argument opt does not take: "CMD: unknown option 'X'"
 * (or "unexpected argument"). 0, or 1 after cmd_fail. */
int cmd_parse_args(const char *cmd, const char *usage, cmd_opt_fn opt, void *o, int argc,
		   char **argv);

/* Simulated evidence labels every line of output: after cmd_set_simulated(1)
 * each line cmd_printf (and cmd_print_log) writes starts "SIMULATED ". One
 * call per line: fmt ends with "\n". */
void cmd_set_simulated(int on);
int cmd_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
