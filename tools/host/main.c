/*
 * tools/host/main.c — build/host/llmctl: the llmk shell on Linux.
 *
 *   llmctl [--direct|--no-direct] [--disk FILE]... [--config FILE] [--cpus N] [-c CMD]... [-i]
 *
 * Each --disk attaches a file or a block device as the next disk (0, 1,
 * ...); anything else (a FIFO, a directory, ...) is refused by name before
 * it is read or waited on, and so is a --config that is not a regular file
 * of at most 1 MiB (llmk.cfg's limit). With -c the commands run in order
 * and llmctl exits: 0 if all succeeded, 1 at the first that failed; stdin
 * is not read (it is left to what runs next, and a Ctrl-C on it cancels
 * nothing), unless -i: then, as with `llmctl --connect`, stdin goes on
 * after the -c commands (and is theirs too: a chat's lines, Ctrl-C).
 * Otherwise commands are read from stdin until end of input (exit 0) or
 * `poweroff`:
 *   - stdin is a terminal: it is put in raw mode so the shell's own line
 *     editor works as on the serial console (echo, Backspace, Ctrl-U, Ctrl-C
 *     cancels the line, Ctrl-D on an empty line exits); the terminal is
 *     restored at exit. What was typed before the first prompt is kept.
 *   - stdin is a pipe or file: no echo and no prompt (like sh reading a
 *     script), so the output is just what the commands print.
 *
 * `llmctl --connect SOCKET ...` is the other side instead: the client of a
 * confidential session with a guest (tools/host/connect.c); `llmctl proxy
 * ...` the client of its attested TLS (tools/host/proxy.c).
 */
#include "host.h"
#include "connect.h"
#include "../../shell/shell.h"

#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved_tty;

/* TCSADRAIN, not TCSAFLUSH: input typed before the switch is kept (issue
 * 31: a command typed before the first prompt was lost). */
static void tty_restore(void)
{
	tcsetattr(0, TCSADRAIN, &saved_tty);
}

/* Raw input (bytes as typed, no signals: Ctrl-C reaches the shell as 0x03),
 * output post-processing kept so "\n" still returns the carriage. */
static void tty_raw(void)
{
	struct termios t;

	if (tcgetattr(0, &saved_tty) != 0)
		return;
	t = saved_tty;
	t.c_iflag &= ~(tcflag_t)(ICRNL | INLCR | IGNCR | IXON | ISTRIP);
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG | IEXTEN);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(0, TCSADRAIN, &t) == 0)
		atexit(tty_restore);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: llmctl [--direct|--no-direct] [--disk FILE]... [--config FILE] [--cpus N] [-c CMD]... [-i]\n"
		   "  --disk FILE    attach FILE (a regular file or a block device) as the\n"
		   "                 next disk (read-only)\n"
		   "  --direct       read the disks round the page cache (O_DIRECT) always;\n"
		   "                 the default does while a model streams from them\n"
		   "  --no-direct    read them through the page cache always\n"
		   "  --config FILE  settings as in llmk.cfg (\"KEY VALUE\" lines)\n"
		   "  --cpus N       worker threads (default: online CPUs, or $LLMK_CPUS)\n"
		   "  -c CMD         run CMD (repeatable) and exit instead of reading stdin\n"
		   "  -i             after the -c commands, go on with stdin\n"
		   "       llmctl --connect SOCKET --expect-pcr4 HEX ... (llmctl --connect S --help):\n"
		   "                 the same commands in a guest, over a confidential session\n"
		   "       llmctl proxy --connect HOST:PORT --listen 127.0.0.1:PORT ... (llmctl proxy --help):\n"
		   "                 attested TLS to a guest's serve, plain HTTP on loopback\n");
}

/* llmk.cfg's limit in the kernel (boot/efi.c reads files of up to 1 MiB). */
#define CONFIG_MAX ((size_t)1 << 20)

/* The text of --config FILE (malloc'd, NUL-terminated), or NULL with why:
 * a regular file only, never waited on (host_open_file), at most CONFIG_MAX
 * bytes. */
static char *read_config(const char *path, size_t *len, char *why, size_t n)
{
	struct stat st;
	uint64_t size;
	char *buf;
	long k;
	int fd = host_open_file(path, false, 0, &size, &st, why, n);

	if (fd < 0)
		return NULL;
	if (!(buf = malloc(CONFIG_MAX + 2))) {
		snprintf(why, n, "out of memory");
		close(fd);
		return NULL;
	}
	k = host_read_fd(fd, buf, CONFIG_MAX + 1);
	if (k < 0)
		snprintf(why, n, "cannot read it: %s", strerror(errno));
	else if ((size_t)k > CONFIG_MAX)
		snprintf(why, n, "more than %zu bytes (llmk.cfg's limit)", CONFIG_MAX);
	close(fd);
	if (k < 0 || (size_t)k > CONFIG_MAX) {
		free(buf);
		return NULL;
	}
	buf[k] = 0;
	*len = (size_t)k;
	return buf;
}

/* argv joined by spaces: plat_cmdline() on the host. */
static void set_cmdline(int argc, char **argv)
{
	size_t n = 1;
	for (int i = 1; i < argc; i++)
		n += strlen(argv[i]) + 1;
	char *s = calloc(1, n);
	if (!s)
		return;
	for (int i = 1; i < argc; i++) {
		if (i > 1)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	host_set_cmdline(s);
	free(s);
}

/* What main allocates, freed at exit however the process ends (a return
 * from main, or exit() from `poweroff` inside the shell): the sanitizer
 * build's leak check then reports real leaks only, and its exit status is
 * the session's. */
static struct {
	const char **cmds;
	struct shell *sh;
	bool then_stdin; /* -i */
} run;

static void run_free(void)
{
	free(run.cmds);
	run.cmds = NULL;
	if (run.sh) {
		explicit_bzero(run.sh, sizeof *run.sh); /* keys and prompts */
		free(run.sh);
		run.sh = NULL;
	}
	host_set_cmdline(NULL);
	host_set_config(NULL);
	host_remove_disks();
}

/* Parse the options into run.cmds (n_cmds of them): 0, or the exit status. */
static int parse_args(int argc, char **argv, int *n_cmds)
{
	char why[160];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_val = i + 1 < argc;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return -1;
		} else if (strcmp(a, "--direct") == 0) {
			host_set_direct(HOST_DIRECT_ON);
		} else if (strcmp(a, "--no-direct") == 0) {
			host_set_direct(HOST_DIRECT_OFF);
		} else if (strcmp(a, "--disk") == 0 && has_val) {
			const char *path = argv[++i];
			if (host_add_disk_why(path, why, sizeof why) < 0) {
				fprintf(stderr, "llmctl: --disk %s: %s\n", path, why);
				return 2;
			}
		} else if (strcmp(a, "--config") == 0 && has_val) {
			const char *path = argv[++i];
			size_t len = 0;
			char *text = read_config(path, &len, why, sizeof why);
			if (!text) {
				fprintf(stderr, "llmctl: --config %s: %s\n", path, why);
				return 2;
			}
			host_set_config_bytes(text, len);
			free(text);
		} else if (strcmp(a, "--cpus") == 0 && has_val) {
			int n = atoi(argv[++i]);
			if (n < 1) {
				fprintf(stderr, "llmctl: --cpus %s: expected a count >= 1\n", argv[i]);
				return 2;
			}
			host_set_cpus(n);
		} else if (strcmp(a, "-i") == 0) {
			run.then_stdin = true;
		} else if (strcmp(a, "-c") == 0 && has_val) {
			run.cmds[(*n_cmds)++] = argv[++i];
		} else {
			fprintf(stderr, "llmctl: %s '%s'\n",
				a[0] == '-' && !has_val ? "missing value after" : "unknown argument", a);
			usage(stderr);
			return 2;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n_cmds = 0, r;

	if (argc >= 2 && !strcmp(argv[1], "proxy"))
		return host_proxy_main(argc, argv);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--connect") || !strcmp(argv[i], "--print-client-key"))
			return host_connect_main(argc, argv);

	atexit(run_free);
	if (!(run.cmds = calloc((size_t)argc, sizeof *run.cmds)))
		return 2;
	set_cmdline(argc, argv);
	if ((r = parse_args(argc, argv, &n_cmds)))
		return r < 0 ? 0 : r;
	if (!(run.sh = calloc(1, sizeof *run.sh)))
		return 2;
	bool then_stdin = n_cmds == 0 || run.then_stdin, tty = then_stdin && isatty(0);
	shell_init(run.sh, tty);
	run.sh->in = &shell_input_session; /* the console is ours */
	if (!then_stdin)
		host_set_input("", 0); /* stdin: none of the commands' business */
	if (tty) {
		tty_raw();
		run.sh->ctrl_d_ends = true;
	}
	for (int i = 0; i < n_cmds; i++)
		if (shell_exec_line(run.sh, run.cmds[i]) != 0)
			return 1;
	if (then_stdin) {
		shell_serve_at_boot(run.sh);
		shell_run(run.sh);
	}
	return 0;
}
