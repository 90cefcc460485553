/*
 * shell/shell.c — the llmctl prompt loop, command tables, config keys and the
 * helpers commands share (errors, numbers, disk indices).
 */
#include "shell.h"

/*
 * Every area's command table, weak so a file that has not landed yet reads
 * as NULL (see shell.h). Order matters only for duplicate names: first wins.
 * Hidden: the linker then resolves a missing table to 0 itself, with no
 * dynamic relocation left for the EFI loader's relocator (which takes only
 * RELATIVE ones) to choke on.
 */
#define SHELL_WEAK __attribute__((weak, visibility("hidden")))
#define SHELL_AREA(x)                                                           \
	extern const struct shell_cmd shell_cmds_##x[] SHELL_WEAK;              \
	extern const struct shell_config_key shell_config_##x[] SHELL_WEAK;
SHELL_AREA(tok)
SHELL_AREA(model)
SHELL_AREA(bench)
SHELL_AREA(seal)
SHELL_AREA(attest)
SHELL_AREA(guestkey)
SHELL_AREA(stream)
SHELL_AREA(session)
SHELL_AREA(sys)
#undef SHELL_AREA

static const struct shell_cmd *const shell_tables[] = {
	shell_cmds_tok, shell_cmds_model, shell_cmds_bench, shell_cmds_seal,
	shell_cmds_attest, shell_cmds_guestkey, shell_cmds_stream, shell_cmds_session,
	shell_cmds_sys,
};
static const struct shell_config_key *const shell_config_tables[] = {
	shell_config_tok, shell_config_model, shell_config_bench, shell_config_seal,
	shell_config_attest, shell_config_guestkey, shell_config_stream, shell_config_session,
	shell_config_sys,
};

/*
 * The confidential session's hooks (shell/session.c, docs/session.md), weak
 * like the tables: while a session is open, input bytes come out of its
 * frames, the prompt becomes a frame, and require-session may refuse a
 * command. Without shell/session.c linked in, the console is used as is.
 */
int shell_session_getc(struct shell *sh) SHELL_WEAK;
int shell_session_trygetc(struct shell *sh) SHELL_WEAK;
void shell_session_prompt(struct shell *sh) SHELL_WEAK;
int shell_session_check(struct shell *sh, const struct shell_cmd *c) SHELL_WEAK;
#define N_TABLES (int)(sizeof shell_tables / sizeof shell_tables[0])

const struct shell_cmd *shell_cmd_at(int idx)
{
	for (int t = 0; t < N_TABLES; t++) {
		const struct shell_cmd *c = shell_tables[t];
		for (; c && c->name; c++)
			if (idx-- == 0)
				return c;
	}
	return NULL;
}

const struct shell_cmd *shell_find(const char *name)
{
	const struct shell_cmd *c;
	for (int i = 0; (c = shell_cmd_at(i)); i++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

const struct shell_config_key *shell_config_at(int idx)
{
	for (int t = 0; t < N_TABLES; t++) {
		const struct shell_config_key *k = shell_config_tables[t];
		for (; k && k->name; k++)
			if (idx-- == 0)
				return k;
	}
	return NULL;
}

const struct shell_config_key *shell_config_find(const char *name)
{
	const struct shell_config_key *k;
	for (int i = 0; (k = shell_config_at(i)); i++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

/* ---- errors ---- */
int shell_err(struct shell *sh, int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	(void)sh;
	va_start(ap, fmt);
	plat_vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	plat_printf("error: %s\n", msg);
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

/* ---- numbers ---- */
static int digit_val(char c, unsigned base)
{
	unsigned v;
	if (c >= '0' && c <= '9')
		v = (unsigned)(c - '0');
	else if (c >= 'a' && c <= 'f')
		v = (unsigned)(c - 'a' + 10);
	else if (c >= 'A' && c <= 'F')
		v = (unsigned)(c - 'A' + 10);
	else
		return -1;
	return v < base ? (int)v : -1;
}

int shell_parse_u64(const char *s, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	int shift = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (digit_val(*s, base) < 0)
		return -LLMK_EINVAL;
	for (int d; (d = digit_val(*s, base)) >= 0; s++) {
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -LLMK_ERANGE;
		v = v * base + (uint64_t)d;
	}
	switch (*s) {
	case 'k': case 'K': shift = 10; s++; break;
	case 'm': case 'M': shift = 20; s++; break;
	case 'g': case 'G': shift = 30; s++; break;
	case 't': case 'T': shift = 40; s++; break;
	}
	if (shift && (*s == 'i' && s[1] == 'B'))
		s += 2;
	if (*s)
		return -LLMK_EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -LLMK_ERANGE;
	*out = v << shift;
	return 0;
}

int shell_parse_i64(const char *s, int64_t *out)
{
	bool neg = *s == '-';
	uint64_t u;
	int r = shell_parse_u64(s + (neg || *s == '+'), &u);
	if (r)
		return r;
	if (u > (uint64_t)INT64_MAX + neg)
		return -LLMK_ERANGE;
	*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return 0;
}

/* Decimal floats as typed for sampling flags; exact enough for 0.95 or 1e-5
 * (the last digit may differ from strtod; nothing here needs more). */
int shell_parse_f64(const char *s, double *out)
{
	bool neg = false, any = false;
	double v = 0, scale = 1;
	int e = 0;

	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	for (; *s >= '0' && *s <= '9'; s++, any = true)
		v = v * 10 + (*s - '0');
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, any = true)
			v += (*s - '0') * (scale /= 10);
	if (!any)
		return -LLMK_EINVAL;
	if (*s == 'e' || *s == 'E') {
		bool eneg = false;
		s++;
		if (*s == '-' || *s == '+')
			eneg = *s++ == '-';
		if (*s < '0' || *s > '9')
			return -LLMK_EINVAL;
		for (; *s >= '0' && *s <= '9'; s++)
			if ((e = e * 10 + (*s - '0')) > 400)
				return -LLMK_ERANGE;
		if (eneg)
			e = -e;
	}
	if (*s)
		return -LLMK_EINVAL;
	for (; e > 0; e--)
		v *= 10;
	for (; e < 0; e++)
		v /= 10;
	if (v > 1.7976931348623157e308)
		return -LLMK_ERANGE;
	*out = neg ? -v : v;
	return 0;
}

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

/* ---- input ---- */
int shell_getc(struct shell *sh)
{
	if (sh->ta_len) {
		int c = sh->typeahead[sh->ta_head];
		sh->ta_head = (sh->ta_head + 1) % SHELL_TYPEAHEAD;
		sh->ta_len--;
		return c;
	}
	return shell_session_getc ? shell_session_getc(sh) : plat_getc();
}

bool shell_poll_cancel(struct shell *sh)
{
	/* Stop reading once typeahead is full: the rest waits in the UART/pipe. */
	while (sh->ta_len < SHELL_TYPEAHEAD) {
		int c = shell_session_trygetc ? shell_session_trygetc(sh) : plat_trygetc();
		if (c < 0)
			return false;
		if (c == 3) {
			/* Ctrl-C also drops what was typed ahead of it. */
			sh->ta_len = 0;
			return true;
		}
		sh->typeahead[(sh->ta_head + sh->ta_len) % SHELL_TYPEAHEAD] = (unsigned char)c;
		sh->ta_len++;
	}
	return false;
}

/* ---- running commands ---- */
int shell_exec_line(struct shell *sh, const char *line)
{
	char err[160];
	int argc;

	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line || *line == '#')
		return 0;
	argc = shell_split(line, sh->args, sizeof sh->args, sh->argv, SHELL_ARGV_MAX, err,
			   sizeof err);
	if (argc < 0)
		return sh->last_status = shell_err(sh, argc, "%s", err);
	if (argc == 0)
		return 0;
	const struct shell_cmd *c = shell_find(sh->argv[0]);
	if (!c)
		return sh->last_status = shell_err(sh, -LLMK_ENOENT,
						   "unknown command '%s' (try 'help')", sh->argv[0]);
	int r = shell_session_check ? shell_session_check(sh, c) : 0;
	if (r)
		return sh->last_status = r;
	return sh->last_status = c->fn(sh, argc, sh->argv);
}

/* One "KEY VALUE" / "KEY = VALUE" line of a config file; line is writable. */
static int config_line(struct shell *sh, char *line, const char *what, int lineno)
{
	char err[160];
	bool quoted = false;

	/* A '#' at the start or after a blank, outside quotes, starts a comment;
	 * the first '=' outside quotes separates KEY from VALUE. */
	for (char *p = line, *eq = NULL; *p; p++) {
		if (quoted && *p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p == '"')
			quoted = !quoted;
		if (quoted)
			continue;
		if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
			*p = 0;
			break;
		}
		if (*p == '=' && !eq)
			*(eq = p) = ' ';
	}
	int argc = shell_split(line, sh->args, sizeof sh->args, sh->argv, SHELL_ARGV_MAX, err,
			       sizeof err);
	if (argc < 0)
		return shell_err(sh, argc, "%s:%d: %s", what, lineno, err);
	if (argc == 0)
		return 0;
	if (argc != 2)
		return shell_err(sh, -LLMK_EINVAL, "%s:%d: expected KEY VALUE, got %d word%s", what,
				 lineno, argc, argc == 1 ? "" : "s");
	const struct shell_config_key *k = shell_config_find(sh->argv[0]);
	if (!k || !k->set)
		return shell_err(sh, -LLMK_ENOENT, "%s:%d: unknown config key '%s' (try 'config')",
				 what, lineno, sh->argv[0]);
	plat_printf("%s:%d: %s = %s\n", what, lineno, sh->argv[0], sh->argv[1]);
	return k->set(sh, sh->argv[1]);
}

int shell_config_apply(struct shell *sh, const char *text, const char *what)
{
	char line[SHELL_LINE_MAX];
	int first = 0, lineno = 0;

	while (*text) {
		size_t n = 0;
		int r;
		lineno++;
		while (text[n] && text[n] != '\n')
			n++;
		if (n >= sizeof line) {
			r = shell_err(sh, -LLMK_ERANGE, "%s:%d: line longer than %d bytes", what,
				      lineno, SHELL_LINE_MAX - 1);
		} else {
			memcpy(line, text, n);
			line[n] = 0;
			if (n && line[n - 1] == '\r')
				line[n - 1] = 0;
			r = config_line(sh, line, what, lineno);
		}
		first = first ? first : r;
		text += n;
		if (*text)
			text++;
	}
	return first;
}

void shell_init(struct shell *sh, bool interactive)
{
	memset(sh, 0, sizeof *sh);
	sh->echo = interactive;
	sh->prompt = interactive;
	shell_line_reset(&sh->line);
	const char *cfg = plat_config_file();
	if (cfg)
		shell_config_apply(sh, cfg, "llmk.cfg");
}

int shell_run(struct shell *sh)
{
	bool first = true;

	for (;;) {
		if (shell_session_prompt)
			shell_session_prompt(sh);
		if (sh->prompt)
			plat_write(SHELL_PROMPT, sizeof SHELL_PROMPT - 1);
		if (first) {
			plat_mark_prompt();
			first = false;
		}
		shell_line_reset(&sh->line);
		enum shell_line_event ev = SHELL_LINE_MORE;
		int c = 0;
		while (ev == SHELL_LINE_MORE && (c = shell_getc(sh)) >= 0)
			ev = shell_line_feed(sh, c);
		if (ev == SHELL_LINE_EOF)
			return sh->last_status;
		if (ev == SHELL_LINE_MORE) {
			/* End of input: run a last unterminated line, then stop. */
			if (sh->line.len || sh->line.overflow || sh->line.bad_byte >= 0)
				ev = shell_line_feed(sh, '\n');
			if (ev == SHELL_LINE_DONE)
				shell_exec_line(sh, sh->line.buf);
			return sh->last_status;
		}
		if (ev == SHELL_LINE_DONE)
			shell_exec_line(sh, sh->line.buf);
		else if (ev == SHELL_LINE_ERROR)
			sh->last_status = -LLMK_EINVAL;
		if (sh->quit)
			return sh->last_status;
	}
}

void shell_main(void)
{
	/* Too big for a small boot stack; one page-backed instance for the run. */
	struct shell *sh = plat_alloc(sizeof *sh, 64);
	if (!sh)
		plat_panic("shell: cannot allocate %zu bytes for the shell state", sizeof *sh);
	shell_init(sh, true);
	shell_run(sh);
	plat_poweroff();
}
