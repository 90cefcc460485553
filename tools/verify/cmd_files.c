/* tools/verify/cmd_files.c — file and argument helpers for the verifier's subcommands (cmd.h). */
#include "cmd.h"

#include "vfy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_fail(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout); /* the ok lines first, then the reason */
	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int cmd_read_file(const char *path, size_t max, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	size_t n = 0;

	if (!f)
		return cmd_fail("%s: %s", path, strerror(errno));
	b = malloc(max + 1);
	if (!b) {
		fclose(f);
		return cmd_fail("%s: out of memory", path);
	}
	n = fread(b, 1, max + 1, f);
	if (ferror(f)) {
		fclose(f);
		free(b);
		return cmd_fail("%s: read error", path);
	}
	fclose(f);
	if (n > max) {
		free(b);
		return cmd_fail("%s: larger than %zu bytes", path, max);
	}
	*buf = b;
	*len = n;
	return 0;
}

int cmd_read_pem_certs(const char *path, uint8_t *der, size_t cap, size_t *used,
		       struct pem_cert *certs, int max, int *n)
{
	struct vfy_log log;
	uint8_t *text;
	size_t len;
	int got, e;

	if (cmd_read_file(path, 1u << 20, &text, &len))
		return 1;
	vfy_log_init(&log);
	e = pem_certs(text, len, path, der + *used, cap - *used, certs + *n, max - *n, &got, &log);
	free(text);
	if (e)
		return cmd_fail("%s", log.err);
	for (int i = 0; i < got; i++)
		*used += certs[*n + i].len;
	*n += got;
	return 0;
}

int cmd_hex_arg(const char *flag, const char *hex, uint8_t *out, size_t n)
{
	if (vfy_parse_hex(hex, out, n))
		return cmd_fail("%s: want %zu hex digits (%zu bytes), got '%.40s%s'", flag, 2 * n, n, hex,
				strlen(hex) > 40 ? "..." : "");
	return 0;
}

const struct cmd_opt *cmd_opt_find(const struct cmd_opt *opts, size_t n, const char *flag,
				   size_t len)
{
	for (size_t k = 0; k < n; k++)
		if (strlen(opts[k].name) == len && !strncmp(flag, opts[k].name, len))
			return &opts[k];
	return NULL;
}

int cmd_opt_take(const struct cmd_opt *opts, size_t n, void *base, int argc, char **argv, int *i)
{
	const struct cmd_opt *o = cmd_opt_find(opts, n, argv[*i], strlen(argv[*i]));
	if (!o)
		return 0;
	if (*i + 1 >= argc) {
		cmd_fail("%s needs a value", o->name);
		return -1;
	}
	*cmd_opt_slot(base, o) = argv[++*i];
	return 1;
}

static const char *line_prefix = "";

void cmd_set_simulated(int on)
{
	line_prefix = on ? "SIMULATED " : "";
}

int cmd_printf(const char *fmt, ...)
{
	va_list ap;
	int k = printf("%s", line_prefix);
	va_start(ap, fmt);
	k += vprintf(fmt, ap);
	va_end(ap);
	return k;
}

int cmd_print_log(const struct vfy_log *log, int e)
{
	for (int i = 0; i < log->n; i++)
		cmd_printf("ok   %s\n", log->line[i]);
	return e ? cmd_fail("%s", log->err) : 0;
}

int cmd_parse_args(const char *cmd, const char *usage, cmd_opt_fn opt, void *o, int argc,
		   char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			exit(0);
		}
		int t = opt(o, argc, argv, &i);
		if (t < 0)
			return 1;
		if (t == 0)
			return cmd_fail("%s: %s '%s' (verifier %s --help)", cmd, argv[i][0] == '-' ?
					"unknown option" : "unexpected argument", argv[i], cmd);
	}
	return 0;
}
