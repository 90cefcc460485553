/*
 * tools/host/main.c — build/host/llmctl: the llmk shell on Linux.
 *
 *   llmctl [--direct|--no-direct] [--disk FILE]... [--config FILE] [--cpus N] [-c CMD]...
 *
 * Each --disk attaches a file as the next disk (0, 1, ...). With -c the
 * commands run in order and llmctl exits: 0 if all succeeded, 1 at the first
 * that failed. Otherwise commands are read from stdin until end of input
 * (exit 0) or `poweroff`:
 *   - stdin is a terminal: it is put in raw mode so the shell's own line
 *     editor works as on the serial console (echo, Backspace, Ctrl-U, Ctrl-C
 *     cancels the line, Ctrl-D on an empty line exits); the terminal is
 *     restored at exit.
 *   - stdin is a pipe or file: no echo and no prompt (like sh reading a
 *     script), so the output is just what the commands print.
 *
 * `llmctl --connect SOCKET ...` is the other side instead: the client of a
 * confidential session with a guest (tools/host/connect.c).
 */
#include "host.h"
#include "connect.h"
#include "../../shell/shell.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved_tty;

static void tty_restore(void)
{
	tcsetattr(0, TCSAFLUSH, &saved_tty);
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
	if (tcsetattr(0, TCSAFLUSH, &t) == 0)
		atexit(tty_restore);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: llmctl [--direct|--no-direct] [--disk FILE]... [--config FILE] [--cpus N] [-c CMD]...\n"
		   "  --disk FILE    attach FILE as the next disk (read-only)\n"
		   "  --direct       read the disks round the page cache (O_DIRECT) always;\n"
		   "                 the default does while a model streams from them\n"
		   "  --no-direct    read them through the page cache always\n"
		   "  --config FILE  settings as in llmk.cfg (\"KEY VALUE\" lines)\n"
		   "  --cpus N       worker threads (default: online CPUs, or $LLMK_CPUS)\n"
		   "  -c CMD         run CMD (repeatable) and exit instead of reading stdin\n"
		   "       llmctl --connect SOCKET --expect-pcr4 HEX ... (llmctl --connect S --help):\n"
		   "                 the same commands in a guest, over a confidential session\n");
}

static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t k = fread(buf + n, 1, 4096, f);
		n += k;
		if (k < 4096)
			break;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
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

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--connect"))
			return host_connect_main(argc, argv);

	const char **cmds = calloc((size_t)argc, sizeof *cmds);
	int n_cmds = 0;

	if (!cmds)
		return 2;
	set_cmdline(argc, argv);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_val = i + 1 < argc;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--direct") == 0) {
			host_set_direct(HOST_DIRECT_ON);
		} else if (strcmp(a, "--no-direct") == 0) {
			host_set_direct(HOST_DIRECT_OFF);
		} else if (strcmp(a, "--disk") == 0 && has_val) {
			const char *path = argv[++i];
			int r = host_add_disk(path);
			if (r < 0) {
				fprintf(stderr, "llmctl: --disk %s: %s\n", path,
					r == -LLMK_ENOENT ? "cannot open it" :
					r == -LLMK_EINVAL ? "not a regular file" : plat_strerror(r));
				return 2;
			}
		} else if (strcmp(a, "--config") == 0 && has_val) {
			const char *path = argv[++i];
			size_t len = 0;
			char *text = read_text(path, &len);
			if (!text) {
				fprintf(stderr, "llmctl: --config %s: cannot read it\n", path);
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
		} else if (strcmp(a, "-c") == 0 && has_val) {
			cmds[n_cmds++] = argv[++i];
		} else {
			fprintf(stderr, "llmctl: %s '%s'\n",
				a[0] == '-' && !has_val ? "missing value after" : "unknown argument", a);
			usage(stderr);
			return 2;
		}
	}

	struct shell *sh = calloc(1, sizeof *sh);
	if (!sh)
		return 2;
	bool tty = n_cmds == 0 && isatty(0);
	shell_init(sh, tty);
	if (n_cmds) {
		for (int i = 0; i < n_cmds; i++)
			if (shell_exec_line(sh, cmds[i]) != 0)
				return 1;
		return 0;
	}
	if (tty) {
		tty_raw();
		sh->ctrl_d_ends = true;
	}
	shell_run(sh);
	return 0;
}
