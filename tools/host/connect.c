/*
 * tools/host/connect.c — `llmctl --connect SOCKET`: a confidential session
 * with an llmk guest over its serial line (docs/session.md).
 *
 *   llmctl --connect SOCKET --expect-pcr4 HEX [--ek-ca PEM] [--expect-model SHA256]
 *          [--allow-simulated] [--provider P] [--boot-timeout S] [--timeout S] [-v]
 *          [-c CMD]... [-i]
 *   (snp evidence: --expect-measurement HEX --chain ark.pem ...; tdx: --expect-mrtd HEX
 *    --chain root.pem; the options of `verifier wrap`)
 *
 * It waits for the guest's prompt, sends `session open` with a fresh nonce
 * and its own ephemeral X25519 key, verifies the evidence that comes back
 * (connect_verify.c), keys the channel (shell/chan.c) and then behaves as
 * the local llmctl: -c commands in order (exit 1 at the first that fails),
 * else stdin a line each time the guest asks for one (exit 0 at its end);
 * the guest's output on stdout, as it comes. Every line crosses the host
 * as a frame. A terminal on stdin gets the prompts and Ctrl-C (sent to the
 * guest as Ctrl-C: it stops the running command); -i goes on to stdin
 * after the -c commands. Diagnostics go to stderr; one "error:" line when
 * the session fails, and the guest is told so (a clear "session abort" when
 * the channel cannot carry a close frame).
 */
#define _GNU_SOURCE
#include "connect.h"
#include "host.h"
#include "../../shell/chan.h"
#include "../../shell/evidence.h"
#include "../../shell/keywrap.h"
#include "../../llm/seal.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define PROMPT "llm> "

struct client {
	struct conn c;
	struct chan ch;
	struct connect_verify v;
	const char *path, *provider;
	const char *key_file;   /* --client-key-file: a lasting key (config session-clients) */
	bool print_key;         /* --print-client-key: its public key, then exit */
	const char **cmds;
	int n_cmds, next_cmd;
	bool then_stdin;        /* -i: stdin after the -c commands */
	bool tty;               /* stdin is a terminal: prompts, Ctrl-C */
	int boot_ms, timeout_ms;
	/* stdin, read a line at a time */
	char *in;
	size_t in_len, in_cap;
	bool in_eof;
	bool last_cmd;          /* the last line sent was a -c command: its status counts */
	bool sent_off;          /* the last line sent ends the guest (poweroff, reboot) */
};

static volatile sig_atomic_t got_sigint;

static void on_sigint(int sig)
{
	(void)sig;
	got_sigint = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: llmctl --connect SOCKET --expect-pcr4 HEX [--ek-ca PEM] [--expect-model SHA256]\n"
		   "              [--expect-config FILE|SHA256]\n"
		   "              [--allow-simulated] [--provider P] [--boot-timeout S] [--timeout S] [-v]\n"
		   "              [--client-key-file FILE [--print-client-key]] [-c CMD]... [-i]\n"
		   "  a confidential session with the llmk guest whose serial line is the unix socket\n"
		   "  SOCKET (QEMU: -chardev socket,path=SOCKET,server=on); snp evidence takes\n"
		   "  --expect-measurement HEX --chain ark.pem, tdx --expect-mrtd HEX --chain root.pem\n"
		   "  --client-key-file FILE  the client's X25519 private key (64 hex digits, e.g.\n"
		   "          `seal keygen FILE`) instead of a fresh one: a guest with config\n"
		   "          session-clients admits only listed keys. `llmctl --print-client-key\n"
		   "          --client-key-file FILE` prints its public key (for that list)\n"
		   "  -c CMD  run CMD in the guest (repeatable), exit 1 at the first that fails\n"
		   "  -i      after the -c commands, go on with stdin\n"
		   "  -v      the verifier's checks, one line each, on stderr\n");
}

static int parse_secs(const char *opt, const char *v, int *ms)
{
	char *end;
	double s = strtod(v, &end);
	if (!*v || *end || s < 0 || s > 86400) {
		fprintf(stderr, "error: %s: want seconds (0 to 86400), got '%s'\n", opt, v);
		return -1;
	}
	*ms = (int)(s * 1000);
	return 0;
}

static int parse_args(struct client *cl, int argc, char **argv)
{
	cl->boot_ms = 300 * 1000;
	cl->timeout_ms = -1;
	cl->cmds = calloc((size_t)argc, sizeof *cl->cmds);
	if (!cl->cmds)
		return 2;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;
		int t = connect_verify_opt(&cl->v, argc, argv, &i);
		if (t < 0)
			return 2;
		if (t)
			continue;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--connect") && more) {
			cl->path = argv[++i];
		} else if (!strcmp(a, "--provider") && more) {
			cl->provider = argv[++i];
		} else if (!strcmp(a, "--client-key-file") && more) {
			cl->key_file = argv[++i];
		} else if (!strcmp(a, "--print-client-key")) {
			cl->print_key = true;
		} else if (!strcmp(a, "--boot-timeout") && more) {
			if (parse_secs(a, argv[++i], &cl->boot_ms))
				return 2;
		} else if (!strcmp(a, "--timeout") && more) {
			if (parse_secs(a, argv[++i], &cl->timeout_ms))
				return 2;
			if (!cl->timeout_ms)
				cl->timeout_ms = -1;
		} else if (!strcmp(a, "-c") && more) {
			cl->cmds[cl->n_cmds++] = argv[++i];
		} else if (!strcmp(a, "-i")) {
			cl->then_stdin = true;
		} else if (!strcmp(a, "-v")) {
			cl->v.verbose = true;
		} else {
			static const char *const valued[] = {"--connect", "--provider", "--boot-timeout",
							     "--timeout", "-c", "--client-key-file"};
			bool needs = false;
			for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
				needs |= !strcmp(a, valued[k]);
			fprintf(stderr, "llmctl: %s '%s'\n", needs ? "missing value after"
				: "unknown argument (with --connect)", a);
			usage(stderr);
			return 2;
		}
	}
	if (cl->print_key && !cl->key_file) {
		fprintf(stderr, "error: --print-client-key needs --client-key-file FILE\n");
		return 2;
	}
	if (!cl->path && !cl->print_key) {
		usage(stderr);
		return 2;
	}
	if (!cl->n_cmds)
		cl->then_stdin = true;
	return 0;
}

/* ---- before the session ---- */
static bool has(const struct conn *c, const char *s)
{
	return c->len && memmem(c->buf, c->len, s, strlen(s)) != NULL;
}

/* The kernel's banner: "llmk 0.1.0 (git ...". */
static bool has_banner(const struct conn *c)
{
	for (const uint8_t *p = c->buf; c->len && p + 8 < c->buf + c->len; p++) {
		p = memmem(p, (size_t)(c->buf + c->len - p), "llmk ", 5);
		if (!p || p + 6 > c->buf + c->len)
			return false;
		if (p[5] >= '0' && p[5] <= '9')
			return true;
	}
	return false;
}

/* What came ends with the prompt's last bytes: a client that connected
 * while the guest printed its prompt gets only the rest of it ("m> "; the
 * host, QEMU's socket included, drops what comes with no client on it). */
static bool ends_in_prompt_tail(const struct conn *c)
{
	size_t k = strlen(PROMPT);
	for (size_t t = 1; t < k; t++)
		if (c->len >= t && !memcmp(c->buf + c->len - t, PROMPT + k - t, t))
			return true;
	return false;
}

/*
 * Wait until the guest can take a line: its prompt (whole, or its tail
 * then quiet), the line an earlier session's end left, or a quiet line
 * once the kernel is up (its banner seen) or when nothing came at all (a
 * guest already waiting, or one that prints no prompt). While only the
 * firmware has spoken nothing is sent: it reads the serial line too.
 */
static int wait_ready(struct client *cl)
{
	int64_t start = conn_now_ms(), last = start;
	bool any = false;

	for (;;) {
		if (has(&cl->c, PROMPT) || has(&cl->c, "session closed"))
			break;
		int64_t now = conn_now_ms();
		if (now - last >= 1500 && (!any || has_banner(&cl->c) || ends_in_prompt_tail(&cl->c)))
			break;
		if (now - start >= cl->boot_ms) {
			fprintf(stderr, "error: session: no llmk prompt on %s within %d s (%s)\n", cl->path,
				cl->boot_ms / 1000, any ? "only firmware output" : "nothing came");
			return -1;
		}
		int r = conn_fill(&cl->c, 100);
		if (r < 0) {
			fprintf(stderr, "error: session: %s closed before the guest was ready\n", cl->path);
			return -1;
		}
		if (r > 0) {
			any = true;
			last = conn_now_ms();
		}
	}
	conn_drop(&cl->c);
	return 0;
}

/* True when what came last is the guest's prompt, with nothing after it. */
static bool ends_at_prompt(const struct conn *c)
{
	size_t k = strlen(PROMPT);
	return c->len - c->taken >= k && !memcmp(c->buf + c->len - k, PROMPT, k);
}

/* Send `session open` and take the evidence line back (decoded, malloc'd).
 * The line is sent again when the guest shows a prompt and nothing more
 * (it came up after the line went out: the firmware had it), and once
 * when a guest still in an earlier client's session closed that at this
 * clear line and says so. */
static int open_session(struct client *cl, const uint8_t nonce[32], const uint8_t pub[32],
			uint8_t **ev, size_t *evn)
{
	char nh[65], kh[65], cmd[300], *line;
	size_t n;
	int tries = 0, resent = 0;
	int64_t deadline = conn_now_ms() + cl->boot_ms;

	hex_encode(nonce, 32, nh);
	hex_encode(pub, 32, kh);
	snprintf(cmd, sizeof cmd, "session open --nonce %s --client-key %s%s%s\r", nh, kh,
		 cl->provider ? " --provider " : "", cl->provider ? cl->provider : "");
	if (conn_send(&cl->c, cmd, strlen(cmd)))
		return -1;
	for (;;) {
		int r = conn_line(&cl->c, 2000, &line, &n);
		if (r == 0 && conn_now_ms() < deadline) {
			if (ends_at_prompt(&cl->c) && resent++ < 5 && conn_send(&cl->c, cmd, strlen(cmd)))
				return -1;
			continue;
		}
		if (r <= 0) {
			fprintf(stderr, "error: session: %s while waiting for the guest's evidence\n",
				r < 0 ? "the serial line closed" : "no answer");
			return -1;
		}
		if (!strncmp(line, "session-evidence: ", 18)) {
			uint8_t *b = malloc(n);
			long k = b ? b64_decode(line + 18, n - 18, b, n) : -1;
			if (k < 0) {
				free(b);
				fprintf(stderr, "error: session: the guest's evidence line is not base64\n");
				return -1;
			}
			*ev = b;
			*evn = (size_t)k;
			return 0;
		}
		const char *err = strstr(line, "error: ");
		if (!err)
			continue;
		if (strstr(err, "session closed") && tries++ == 0) {
			if (conn_send(&cl->c, cmd, strlen(cmd)))
				return -1;
			continue;
		}
		fprintf(stderr, "error: session: the guest refused: %s\n", err + 7);
		return -1;
	}
}

/* ---- the session ---- */
static void seal_zero_free(void *p, size_t n)
{
	seal_zeroize(p, n);
	free(p);
}

/* Tell the guest this client is gone, when no frame can say it. */
static void abort_clear(struct client *cl)
{
	conn_send(&cl->c, "session abort\r", 14);
}

static int send_frame(struct client *cl, uint8_t type, const void *p, size_t n)
{
	char line[CHAN_LINE_MAX + 1];
	long k = chan_seal(&cl->ch, type, p, n, line, sizeof line - 1);
	if (k < 0) {
		fprintf(stderr, "error: session: cannot seal a frame (%s)\n", plat_strerror((int)k));
		return -1;
	}
	line[k++] = '\n';
	int r = conn_send(&cl->c, line, (size_t)k);
	seal_zeroize(line, sizeof line);
	return r;
}

/* A line of input (its newline included) as frames of CHAN_DATA_MAX. */
static int send_line(struct client *cl, const char *s, size_t n)
{
	for (size_t o = 0; o < n;) {
		size_t k = n - o < CHAN_DATA_MAX ? n - o : CHAN_DATA_MAX;
		if (send_frame(cl, CHAN_INPUT, s + o, k))
			return -1;
		o += k;
	}
	return 0;
}

/* The next stdin line into cl->in (newline added at a last unterminated
 * line); 1 a line, 0 end of input, -1 interrupted (SIGINT). */
static int stdin_line(struct client *cl)
{
	cl->in_len = 0;
	for (;;) {
		if (cl->in_len + 2 > cl->in_cap) {
			size_t cap = cl->in_cap ? cl->in_cap * 2 : 8192;
			char *b = realloc(cl->in, cap);
			if (!b)
				return 0;
			cl->in = b;
			cl->in_cap = cap;
		}
		char ch;
		ssize_t k = read(0, &ch, 1);
		if (k < 0 && errno == EINTR) {
			if (got_sigint)
				return -1;
			continue;
		}
		if (k <= 0) {
			if (!cl->in_len)
				return 0;
			ch = '\n';
		}
		cl->in[cl->in_len++] = ch;
		if (ch == '\n')
			return 1;
	}
}

static bool ends_guest(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	return (n >= 8 && !strncmp(s, "poweroff", 8) && (n == 8 || s[8] == ' ' || s[8] == '\n')) ||
	       (n >= 6 && !strncmp(s, "reboot", 6) && (n == 6 || s[6] == ' ' || s[6] == '\n'));
}

/* The guest waits for a line: the next -c command or stdin line, or the
 * close when there is none. 1 sent, 0 closed, -1 failed. */
static int answer(struct client *cl, bool at_prompt)
{
	if (cl->tty && (cl->next_cmd == cl->n_cmds && cl->then_stdin)) {
		fputs(at_prompt ? PROMPT : "you> ", stdout);
		fflush(stdout);
	}
	if (cl->next_cmd < cl->n_cmds) {
		const char *c = cl->cmds[cl->next_cmd++];
		size_t n = strlen(c);
		char *l = malloc(n + 1);
		if (!l)
			return -1;
		memcpy(l, c, n);
		l[n] = '\n';
		cl->sent_off = ends_guest(l, n);
		cl->last_cmd = true;
		int r = send_line(cl, l, n + 1);
		seal_zero_free(l, n + 1);
		return r ? -1 : 1;
	}
	if (cl->then_stdin && !cl->in_eof) {
		int r = stdin_line(cl);
		if (r < 0) {
			/* Ctrl-C while typing: the guest drops the line, as at its console */
			got_sigint = 0;
			return send_frame(cl, CHAN_INPUT, "\x03", 1) ? -1 : 1;
		}
		if (r > 0) {
			cl->sent_off = ends_guest(cl->in, cl->in_len);
			cl->last_cmd = false;
			r = send_line(cl, cl->in, cl->in_len);
			seal_zeroize(cl->in, cl->in_len);
			return r ? -1 : 1;
		}
		cl->in_eof = true;
		if (cl->tty)
			fputc('\n', stdout);
	}
	return send_frame(cl, CHAN_CLOSE, NULL, 0) ? -1 : 0;
}

/* Wait for the next line from the guest, sending Ctrl-C frames for SIGINT
 * on a terminal meanwhile. 1 a line, 0 timeout, -1 closed. */
static int guest_line(struct client *cl, char **line, size_t *n)
{
	int64_t deadline = cl->timeout_ms < 0 ? -1 : conn_now_ms() + cl->timeout_ms;
	for (;;) {
		if (got_sigint) {
			got_sigint = 0;
			if (send_frame(cl, CHAN_INPUT, "\x03", 1))
				return -1;
		}
		int slice = 200;
		if (deadline >= 0) {
			int64_t left = deadline - conn_now_ms();
			if (left <= 0)
				return 0;
			if (left < slice)
				slice = (int)left;
		}
		int r = conn_line(&cl->c, slice, line, n);
		if (r)
			return r;
	}
}

/*
 * The session itself: frames in, output out, a line each time the guest
 * asks. Returns the exit status.
 */
static int run_session(struct client *cl)
{
	uint8_t data[CHAN_DATA_MAX], type;
	char err[240], *line;
	size_t n;
	int status = 0;
	bool closing = false, first = true;

	for (;;) {
		int r = guest_line(cl, &line, &n);
		if (r == 0) {
			fprintf(stderr, "error: session: no frame from the guest within %d s; session "
				"closed\n", cl->timeout_ms / 1000);
			abort_clear(cl);
			return 1;
		}
		if (r < 0) {
			if (closing || cl->sent_off)
				return status;
			fprintf(stderr, "error: session: the serial line closed inside the session\n");
			return 1;
		}
		if (!n)
			continue;
		if (!chan_is_frame(line, n)) {
			/* text outside the channel: the guest's word that it closed the
			 * session, or anything the host adds (never taken as output) */
			const char *e = strstr(line, "error: session: ");
			if (e) {
				/* unauthenticated: it can only end the session, as the host can anyway */
				fprintf(stderr, "error: session: a clear line says the guest closed the "
					"session: %s\n", e + 16);
				return 1;
			}
			if (cl->v.verbose)
				fprintf(stderr, "llmctl: text outside the session ignored: %.*s\n",
					(int)(n > 200 ? 200 : n), line);
			continue;
		}
		long k = chan_open(&cl->ch, line, n, &type, data, err, sizeof err);
		if (k < 0) {
			fprintf(stderr, "error: session: %s; session closed\n", err);
			abort_clear(cl);
			return 1;
		}
		if (first && type != CHAN_PROMPT) {
			fprintf(stderr, "error: session: the guest's first frame is not its prompt\n");
			abort_clear(cl);
			return 1;
		}
		first = false;
		switch (type) {
		case CHAN_OUTPUT:
			fwrite(data, 1, (size_t)k, stdout);
			fflush(stdout);
			break;
		case CHAN_PROMPT:
		case CHAN_LINE: {
			if (type == CHAN_PROMPT && k == 4 && cl->last_cmd) {
				int32_t st = (int32_t)((uint32_t)data[0] | (uint32_t)data[1] << 8 |
						       (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24);
				/* -c: stop at the first command that failed, as llmctl -c does */
				if (st != 0) {
					status = 1;
					cl->next_cmd = cl->n_cmds;
					cl->then_stdin = false;
				}
			}
			if (type == CHAN_PROMPT)
				cl->last_cmd = false;
			if (closing)
				break;
			int a = answer(cl, type == CHAN_PROMPT);
			if (a < 0) {
				abort_clear(cl);
				return 1;
			}
			closing = a == 0;
			break;
		}
		case CHAN_CLOSE:
			/* the close this client asked for, or the guest's (`session close`) */
			return status;
		default:
			fprintf(stderr, "error: session: frame %llu from the guest has type 0x%02x; "
				"session closed\n", (unsigned long long)(cl->ch.recv.ctr - 1), type);
			abort_clear(cl);
			return 1;
		}
	}
}

/* The client's key pair: --client-key-file's, else a fresh one. 0, or 1
 * after one error line. */
static int client_key(const struct client *cl, uint8_t priv[32], uint8_t pub[32])
{
	char text[256];
	size_t n = 0;

	if (!cl->key_file) {
		if (getrandom(priv, 32, 0) == 32 && !keywrap_public(priv, pub))
			return 0;
		fprintf(stderr, "error: session: no randomness from getrandom: %s\n", strerror(errno));
		return 1;
	}
	FILE *f = fopen(cl->key_file, "r");
	if (f) {
		n = fread(text, 1, sizeof text, f);
		fclose(f);
	}
	int e = !f || n == sizeof text || seal_key_parse_hex(text, n, priv) ||
		keywrap_public(priv, pub);
	seal_zeroize(text, sizeof text);
	if (e)
		fprintf(stderr, "error: --client-key-file %s: %s\n", cl->key_file, !f ? strerror(errno)
			: "want 64 hex digits (an X25519 private key), then only whitespace");
	return e;
}

int host_connect_main(int argc, char **argv)
{
	static struct client cl;
	uint8_t nonce[32], priv[32], pub[32], rd[64], spub[32], *ev = NULL;
	static uint8_t cred[2048];
	static char cred_line[2048 / 3 * 4 + 64];
	uint8_t secret[32]; /* RELEASE_SECRET */
	size_t evn = 0, cred_n = 0, secret_n = 0;
	char what[640];
	int r;

	if ((r = parse_args(&cl, argc, argv)))
		return r;
	cl.tty = isatty(0) && cl.then_stdin;
	if (getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce) {
		fprintf(stderr, "error: session: no randomness from getrandom: %s\n", strerror(errno));
		return 1;
	}
	if (client_key(&cl, priv, pub))
		return 1;
	if (cl.print_key) {
		char hex[65];
		seal_zeroize(priv, sizeof priv);
		printf("client-key: %s\n", seal_hex(pub, 32, hex));
		return 0;
	}
	if (conn_open(&cl.c, cl.path, cl.boot_ms) || wait_ready(&cl) ||
	    open_session(&cl, nonce, pub, &ev, &evn)) {
		seal_zeroize(priv, sizeof priv);
		return 1;
	}
	r = connect_verify(&cl.v, ev, evn, nonce, sizeof nonce, rd, spub, cred, sizeof cred, &cred_n,
			   secret, &secret_n, what, sizeof what);
	free(ev);
	/* vtpm: the credential goes to the guest in clear (it is encrypted to
	 * the EK); its secret, which only that TPM recovers, keys the session */
	if (r == 0 && cred_n) {
		int k = snprintf(cred_line, sizeof cred_line, "session activate ");
		long m = b64_encode(cred, cred_n, cred_line + k, sizeof cred_line - (size_t)k - 2);
		if (m < 0 || conn_send(&cl.c, cred_line, strlen(strcat(cred_line, "\r"))))
			r = 1;
	}
	if (r == 0 && chan_init(&cl.ch, false, priv, spub, rd, pub, spub, secret, secret_n)) {
		fprintf(stderr, "error: session: the guest's session key is a point of small order\n");
		r = 1;
	}
	seal_zeroize(priv, sizeof priv);
	seal_zeroize(secret, sizeof secret);
	if (r) {
		abort_clear(&cl);
		conn_close(&cl.c);
		return 1;
	}
	fprintf(stderr, "llmctl: session: %s; every line is a frame from here on\n", what);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	if (cl.tty)
		sigaction(SIGINT, &sa, NULL);
	r = run_session(&cl);
	chan_wipe(&cl.ch);
	if (cl.in)
		seal_zero_free(cl.in, cl.in_cap);
	conn_close(&cl.c);
	return r;
}
