/*
 * shell/shell_util.c — what every command shares: the engine, its one
 * error line, argument counts with the command's usage, disk indices and
 * sizes for people. Nothing here calls a command or the prompt loop.
 */
#include "shell.h"

#include "../llm/engine.h"

struct engine *shell_engine(struct shell *sh)
{
	if (!sh->engine) {
		struct engine *e = plat_alloc(sizeof *e, 64);
		if (!e)
			plat_panic("model: cannot allocate %zu bytes for the engine", sizeof *e);
		engine_init(e);
		sh->engine = e;
	}
	return sh->engine;
}

/* ---- errors ---- */
int shell_err(struct shell *sh, int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	char safe[sizeof msg];

	(void)sh;
	va_start(ap, fmt);
	plat_vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* an error may quote a file's strings (a tensor's or a model's name):
	 * one line, printable, whatever they hold (shell/text.c) */
	plat_printf("error: %s\n", shell_clean(msg, strlen(msg), safe, sizeof safe));
	return err;
}

static void usage_first_line(const char *name, char *buf, size_t n)
{
	const struct shell_cmd *c = shell_find(name);
	const char *u = c && c->usage ? c->usage : name;
	size_t k = 0;
	while (u[k] && u[k] != '\n' && k + 1 < n) {
		buf[k] = u[k];
		k++;
	}
	buf[k] = 0;
}

int shell_check_argc(struct shell *sh, int argc, char **argv, int min, int max)
{
	char usage[160];

	if (argc >= min && (max < 0 || argc <= max))
		return 0;
	usage_first_line(argv[0], usage, sizeof usage);
	if (argc < min)
		return shell_err(sh, -LLMK_EINVAL, "%s: missing argument (usage: %s)", argv[0], usage);
	return shell_err(sh, -LLMK_EINVAL, "%s: too many arguments, '%s' is extra (usage: %s)",
			 argv[0], argv[max], usage);
}

/* ---- numbers, with their messages (the parsers are in args.c) ---- */
int shell_arg_u64(struct shell *sh, const char *what, const char *s, uint64_t lo, uint64_t hi,
		  uint64_t *out)
{
	uint64_t v;
	int r = shell_parse_u64(s, &v);
	if (r == -LLMK_EINVAL)
		return shell_err(sh, r, "%s: bad number '%s' (decimal or 0x hex, optional K/M/G suffix)",
				 what, s);
	if (r || v < lo || v > hi)
		return shell_err(sh, -LLMK_ERANGE, "%s: %s is out of range [%llu, %llu]", what, s,
				 (unsigned long long)lo, (unsigned long long)hi);
	*out = v;
	return 0;
}

int shell_arg_f64(struct shell *sh, const char *what, const char *s, double lo, double hi,
		  double *out)
{
	double v;
	int r = shell_parse_f64(s, &v);
	if (r == -LLMK_EINVAL)
		return shell_err(sh, r, "%s: bad number '%s'", what, s);
	if (r || v < lo || v > hi)
		return shell_err(sh, -LLMK_ERANGE, "%s: %s is out of range [%g, %g]", what, s, lo, hi);
	*out = v;
	return 0;
}

int shell_arg_disk(struct shell *sh, const char *s, int *disk)
{
	int n = plat_disk_count();
	uint64_t v;
	int r = shell_parse_u64(s, &v);

	if (r || v >= (uint64_t)n) {
		char have[32];
		if (n == 0)
			plat_snprintf(have, sizeof have, "no disks are attached");
		else
			plat_snprintf(have, sizeof have, "disks: 0..%d", n - 1);
		if (r == -LLMK_EINVAL)
			return shell_err(sh, r, "bad disk index '%s' (%s)", s, have);
		return shell_err(sh, -LLMK_ENOENT, "no disk %s (%s)", s, have);
	}
	*disk = (int)v;
	return 0;
}

const char *shell_human_size(uint64_t bytes, char *buf, size_t n)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		plat_snprintf(buf, n, "%llu B", (unsigned long long)bytes);
	else
		plat_snprintf(buf, n, "%.2f %s", v, units[u]);
	return buf;
}
