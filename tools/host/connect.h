/*
 * tools/host/connect.h — `llmctl --connect SOCKET ...`, the host side of a
 * confidential session (docs/session.md), in three files:
 *
 *   connect.c         the command line, the handshake, the session loop
 *   connect_io.c      the serial line: a unix socket read as lines, with deadlines
 *   connect_verify.c  the guest's evidence through tools/verify, by provider
 */
#ifndef TOOLS_HOST_CONNECT_H
#define TOOLS_HOST_CONNECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- connect_io.c ---- */
struct conn {
	int fd;
	uint8_t *buf;      /* bytes received and not consumed */
	size_t len, cap;
	size_t taken;      /* the line conn_line returned last, removed at the next call */
	bool eof;
};

/* Connect to the unix socket path, retrying until timeout_ms passes (QEMU
 * may not have made it yet). 0, or -1 with why printed. */
int conn_open(struct conn *c, const char *path, int timeout_ms);
void conn_close(struct conn *c);
/* Send all of p[0..n); 0 or -1 (printed). */
int conn_send(struct conn *c, const void *p, size_t n);
/* Read what is there, waiting up to timeout_ms (-1: forever) for the
 * first byte; 1 bytes came, 0 timeout, -1 end of the connection. */
int conn_fill(struct conn *c, int timeout_ms);
/* The next whole line (without "\n" and a trailing "\r") into *line
 * (valid until the next call), waiting up to timeout_ms (-1: forever).
 * 1 a line, 0 timeout, -1 end of the connection. */
int conn_line(struct conn *c, int timeout_ms, char **line, size_t *n);
/* Drop everything received so far. */
void conn_drop(struct conn *c);
/* Milliseconds on the monotonic clock. */
int64_t conn_now_ms(void);

/* ---- connect_verify.c ---- */
/* The verifier's options a session takes (tools/verify's, by provider). */
struct connect_verify {
	const char *argv[64]; /* the options as given, in order */
	int argc;
	bool verbose;          /* the verifier's own lines to stderr */
	bool to_stdout;        /* ... or to stdout (`verifier tls`) */
};
/*
 * argv[*i] (and its value) if it is a verifier option: 1 taken, 0 not one,
 * -1 bad (printed).
 */
int connect_verify_opt(struct connect_verify *v, int argc, char **argv, int *i);
/*
 * Verify the bundle[0..n) with the nonce the client chose, by its
 * provider's checks (those of `verifier vtpm`, `snp --evidence`, `tdx
 * --evidence`, with the image's measurement required; vtpm: --ek-ca too),
 * printing nothing on stdout. On success 0 with the report data and the
 * session's public key, a summary line in what, and for vtpm a TPM
 * credential for the evidence's EK and AK in cred[0..*cred_n) with its
 * secret (tools/verify/release.c; *cred_n 0 for snp and tdx); else 1
 * after one "error: " line on stderr.
 */
int connect_verify(const struct connect_verify *v, const uint8_t *bundle, size_t n,
		   const uint8_t *nonce, size_t nonce_len, uint8_t report_data[64],
		   uint8_t session_pub[32], uint8_t *cred, size_t cred_cap, size_t *cred_n,
		   uint8_t secret[32], size_t *secret_n, char *what, size_t whatn);

/* ---- connect.c ---- */
int host_connect_main(int argc, char **argv);
/* ---- proxy.c ---- */
int host_proxy_main(int argc, char **argv);

#endif
