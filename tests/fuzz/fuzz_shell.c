/*
 * tests/fuzz/fuzz_shell.c — libFuzzer target for the shell's input side: the
 * line editor fed byte by byte, the word splitter on every finished line, and
 * the number parsers on every word. Output goes to a counting sink. It links
 * shell/line.c and shell/args.c only (not the commands), so the state is set
 * up here as shell_init would for no config file.
 *
 * Checks: a finished line is shorter than SHELL_LINE_MAX, holds no control
 * byte and no DEL; the splitter either fails with a message or returns at
 * most SHELL_ARGV_MAX words, each a NUL-terminated string inside its buffer
 * and NULL after the last; the parsers never write a result on failure.
 */
#include <stdlib.h>
#include <string.h>

#include "../../shell/shell.h"
#include "../../tools/host/host.h"

static size_t out_bytes;

static void sink(void *ctx, const char *s, size_t n)
{
	(void)ctx;
	(void)s;
	out_bytes += n;
}

static void check_words(struct shell *sh, const char *line)
{
	char err[160];
	int argc = shell_split(line, sh->args, sizeof sh->args, sh->argv, SHELL_ARGV_MAX, err,
			       sizeof err);
	if (argc < 0) {
		if (!err[0])
			abort();
		return;
	}
	if (argc > SHELL_ARGV_MAX || sh->argv[argc] != NULL)
		abort();
	for (int i = 0; i < argc; i++) {
		const char *w = sh->argv[i];
		if (w < sh->args || w >= sh->args + sizeof sh->args)
			abort();
		if (!memchr(w, 0, (size_t)(sh->args + sizeof sh->args - w)))
			abort();
		uint64_t u = 0x5a5a;
		int64_t s = 0x5a5a;
		double f = 0.25;
		if (shell_parse_u64(w, &u) != 0 && u != 0x5a5a)
			abort();
		if (shell_parse_i64(w, &s) != 0 && s != 0x5a5a)
			abort();
		if (shell_parse_f64(w, &f) != 0 && f != 0.25)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct shell *sh;

	if (!sh) {
		sh = calloc(1, sizeof *sh);
		host_set_output(sink, NULL);
	}
	memset(sh, 0, sizeof *sh);
	sh->in = &shell_input_plain;
	sh->echo = sh->prompt = size && (data[0] & 1);
	shell_line_reset(&sh->line);
	for (size_t i = 0; i < size; i++) {
		enum shell_line_event ev = shell_line_feed(sh, data[i]);
		if (ev == SHELL_LINE_MORE)
			continue;
		if (ev == SHELL_LINE_DONE) {
			const char *l = sh->line.buf;
			size_t n = strlen(l);
			if (n != sh->line.len || n >= SHELL_LINE_MAX)
				abort();
			for (size_t k = 0; k < n; k++)
				if ((unsigned char)l[k] < 0x20 || l[k] == 0x7f)
					abort();
			check_words(sh, l);
		}
		shell_line_reset(&sh->line);
	}
	return 0;
}
