/*
 * shell/shell.c — the llmctl prompt loop and config files. The helpers
 * commands share are shell/shell_util.c; the commands and config keys
 * themselves are listed in shell/registry.c.
 */
#include "shell.h"
#include "chan.h"
#include "cmd_attest.h"
#include "evidence.h"
#include "../kernel/attest.h"

#include "../llm/engine.h"
#include "../llm/seal.h"

/* ---- input ---- */
static int input_byte(struct shell *sh, bool wait)
{
	return wait ? sh->in->getc(sh) : sh->in->trygetc(sh);
}

static bool line_end(int c)
{
	return c == '\n' || c == '\r';
}

static unsigned char *ta_buf(struct shell *sh)
{
	return sh->ta_big ? sh->ta_big : sh->typeahead;
}

static size_t ta_cap(const struct shell *sh)
{
	return sh->ta_big ? sh->ta_big_cap : SHELL_TYPEAHEAD;
}

/* Pages of typeahead given back once empty (a session's plaintext lines
 * may have passed through them: wiped first). */
static void typeahead_shrink(struct shell *sh)
{
	if (sh->ta_len || !sh->ta_big)
		return;
	memset(sh->ta_big, 0, sh->ta_big_cap);
	__asm__ volatile("" : : "r"(sh->ta_big) : "memory");
	plat_free(sh->ta_big, sh->ta_big_cap);
	sh->ta_big = NULL;
	sh->ta_big_cap = 0;
	sh->ta_head = 0;
}

/* Twice the room, up to SHELL_TYPEAHEAD_MAX; false when there is none. */
static bool typeahead_grow(struct shell *sh)
{
	size_t cap = ta_cap(sh), ncap = cap * 2;
	unsigned char *old = ta_buf(sh), *p;

	if (ncap > SHELL_TYPEAHEAD_MAX || !(p = plat_alloc(ncap, 64)))
		return false;
	for (size_t i = 0; i < sh->ta_len; i++)
		p[i] = old[(sh->ta_head + i) % cap];
	memset(old, 0, cap);
	if (sh->ta_big)
		plat_free(sh->ta_big, sh->ta_big_cap);
	sh->ta_big = p;
	sh->ta_big_cap = ncap;
	sh->ta_head = 0;
	return true;
}

int shell_getc(struct shell *sh)
{
	int c;

	if (sh->ta_len) {
		c = ta_buf(sh)[sh->ta_head];
		sh->ta_head = (sh->ta_head + 1) % ta_cap(sh);
		sh->ta_len--;
		typeahead_shrink(sh);
		return c;
	}
	typeahead_shrink(sh);
	/* the rest of a line dropped from a full typeahead */
	while ((c = input_byte(sh, true)) >= 0 && sh->ta_skip)
		sh->ta_skip = !line_end(c);
	return c;
}

/*
 * Typeahead is full: c is dropped, and so is the whole line it belongs to,
 * its start in the typeahead and its end still to come (ta_skip), so that
 * no line runs spliced from bytes either side of the gap. The lines after
 * it are kept while they fit; the command's end reports what was dropped.
 */
static void typeahead_drop(struct shell *sh, int c)
{
	while (!sh->ta_skip && sh->ta_len &&
	       !line_end(ta_buf(sh)[(sh->ta_head + sh->ta_len - 1) % ta_cap(sh)])) {
		sh->ta_len--;
		sh->ta_dropped++;
	}
	sh->ta_skip = !line_end(c);
	sh->ta_dropped++;
}

bool shell_poll_cancel(struct shell *sh)
{
	/* Read all that waits, however much is typed ahead: a Ctrl-C behind
	 * it must be seen (issue 28). What waits is kept (a script piped in
	 * runs whole) up to SHELL_TYPEAHEAD_MAX. */
	typeahead_shrink(sh);
	for (;;) {
		int c = input_byte(sh, false);
		if (c < 0)
			return false;
		if (c == 3) {
			/* Ctrl-C also drops what was typed ahead of it. */
			memset(ta_buf(sh), 0, ta_cap(sh));
			sh->ta_len = 0;
			sh->ta_dropped = 0;
			sh->ta_skip = false;
			typeahead_shrink(sh);
			return true;
		}
		if (sh->ta_skip || (sh->ta_len == ta_cap(sh) && !typeahead_grow(sh))) {
			typeahead_drop(sh, c);
			continue;
		}
		ta_buf(sh)[(sh->ta_head + sh->ta_len) % ta_cap(sh)] = (unsigned char)c;
		sh->ta_len++;
	}
}

bool shell_typeahead_line(struct shell *sh)
{
	for (size_t i = 0; i < sh->ta_len; i++) {
		unsigned char c = ta_buf(sh)[(sh->ta_head + i) % ta_cap(sh)];
		if (c == '\n' || c == '\r')
			return true;
	}
	return false;
}

/* Once a command is over: the lines its typeahead could not hold. */
static void typeahead_report(struct shell *sh)
{
	if (!sh->ta_dropped)
		return;
	shell_err(sh, -LLMK_ERANGE, "typeahead: %zu bytes typed while '%s' ran were dropped, "
		  "whole lines past the %u bytes held", sh->ta_dropped, sh->argv[0],
		  SHELL_TYPEAHEAD_MAX);
	sh->ta_dropped = 0;
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
	/* a session frame with no session to take it: what a client sent as
	 * the guest closed its session (the next client may be connecting;
	 * an error line would read to it as a refusal), dropped unread */
	if (!strncmp(line, CHAN_PREFIX, CHAN_PREFIX_LEN))
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
	int r = sh->in->check ? sh->in->check(sh, c) : 0;
	if (r)
		return sh->last_status = r;
	sh->last_status = c->fn(sh, argc, sh->argv);
	typeahead_report(sh);
	return sh->last_status;
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
	return k->set(sh, k, sh->argv[1]);
}

int shell_config_apply(struct shell *sh, const char *text, size_t len, const char *what)
{
	char line[SHELL_LINE_MAX];
	const char *end = text + len;
	int first = 0, lineno = 0;

	while (text < end) {
		size_t n = 0;
		const char *nul;
		int r;
		lineno++;
		while (text + n < end && text[n] != '\n')
			n++;
		for (nul = text; nul < text + n && *nul; nul++)
			;
		if (nul < text + n) {
			/* a C string would end here and drop the rest unseen */
			r = shell_err(sh, -LLMK_EINVAL, "%s:%d: NUL byte at column %d (the file "
				      "is text; the line is ignored)", what, lineno,
				      (int)(nul - text) + 1);
		} else if (n >= sizeof line) {
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
		if (text < end)
			text++;
	}
	return first;
}

void shell_init(struct shell *sh, bool interactive)
{
	memset(sh, 0, sizeof *sh);
	sh->in = &shell_input_plain;
	sh->echo = interactive;
	sh->prompt = interactive;
	shell_line_reset(&sh->line);
	size_t len;
	const char *cfg = plat_config_file(&len);
	if (!cfg)
		len = 0;
	if (shell_config_measure(sh, cfg, len) == 0 && len)
		shell_config_apply(sh, cfg, len, "llmk.cfg");
}

int shell_boot_file(struct shell *sh, const char *what, const char *name, void *buf,
		    size_t cap)
{
	char ev[160], clean[64], hex[65];
	uint8_t d[32];
	size_t k = 0;

	int n = plat_boot_file(name, buf, cap);
	if (n < 0)
		return shell_err(sh, n, "%s '%s': %s", what, name, plat_strerror(n));
	/* the name is the host's text: in the log, printable and without blanks */
	for (const char *p = name; *p && k + 1 < sizeof clean; p++)
		clean[k++] = *p > ' ' && *p < 0x7f ? *p : '?';
	clean[k] = 0;
	evidence_config_digest(buf, (size_t)n, d);
	plat_snprintf(ev, sizeof ev, "llmk boot-file %s %s", clean, seal_hex(d, 32, hex));
	int r = plat_attest_extend(ev, d);
	if (r) {
		seal_zeroize(buf, (size_t)n);
		return shell_err(sh, r, "%s '%s': cannot measure it (%s), so it is not used", what,
				 name, plat_attest_error()[0] ? plat_attest_error() : plat_strerror(r));
	}
	return n;
}

int shell_config_measure(struct shell *sh, const char *text, size_t len)
{
	char what[16 + 64 + 1], hex[65];

	evidence_config_digest(text, len, sh->config_digest);
	sh->config_len = len;
	plat_snprintf(what, sizeof what, "llmk config %s", seal_hex(sh->config_digest, 32, hex));
	int r = plat_attest_extend(what, sh->config_digest);
	if (r)
		return shell_err(sh, r, "llmk.cfg: cannot measure it (%s), so none of it is applied",
				 plat_attest_error()[0] ? plat_attest_error() : plat_strerror(r));
	return 0;
}

int shell_run(struct shell *sh)
{
	bool first = true;

	for (;;) {
		if (sh->in->prompt)
			sh->in->prompt(sh);
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
