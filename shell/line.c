/*
 * shell/line.c — the line editor: one byte in, echo out.
 *
 * Works on a dumb serial terminal (and a raw host TTY): printable bytes are
 * stored and echoed, backspace (BS or DEL) erases the last character with
 * "\b \b", Ctrl-U erases the whole line the same way, Ctrl-C drops the line
 * and prints "^C". A line ends at CR, LF or CRLF (the LF of a pair is
 * swallowed, even across lines). Tab reads as a space. Ctrl-D on an empty
 * line ends the input where the embedder allows it (host terminal). Bytes >= 0x80 are
 * kept (UTF-8 prompts) and the finished line must be valid UTF-8.
 *
 * Terminal escape sequences (ECMA-48 §5.4: ESC [ parameters intermediates
 * final, or ESC O final) are read whole. Up and Down (final 'A' / 'B') walk
 * the last SHELL_HISTORY lines when echoing; every other key (Left, Right,
 * Delete, ...) is ignored: there is no cursor movement, and a stray key
 * should not cost the line.
 *
 * Errors are reported once, when the line ends, and the line is dropped: a
 * line longer than the buffer, or one holding a control byte (NUL, ^A, a
 * lone ESC, ...). Echo is the caller's choice (sh->echo): on for the serial
 * console, off for the host reading a pipe, where the bytes are not typed.
 * Output says "\n" only: the console (kernel UART, host TTY in raw mode with
 * output processing kept) turns it into CR LF.
 */
#include "shell.h"

static int plain_getc(struct shell *sh)
{
	(void)sh;
	return plat_getc();
}

static int plain_trygetc(struct shell *sh)
{
	(void)sh;
	return plat_trygetc();
}

const struct shell_input_ops shell_input_plain = {.getc = plain_getc, .trygetc = plain_trygetc};

void shell_line_reset(struct shell_line *l)
{
	/* after_cr survives: the LF of a CRLF arrives after the line is done. */
	bool cr = l->after_cr;
	l->len = 0;
	l->buf[0] = 0;
	l->overflow = false;
	l->bad_byte = -1;
	l->bad_col = 0;
	l->after_cr = cr;
	l->esc = 0;
	l->hist = 0;
}

static void echo(struct shell *sh, const char *s, size_t n)
{
	if (sh->echo)
		plat_write(s, n);
}

/* Remove the last character (a whole UTF-8 sequence); false if empty. */
static bool erase_one(struct shell *sh, struct shell_line *l)
{
	if (!l->len)
		return false;
	while (l->len > 1 && ((unsigned char)l->buf[l->len - 1] & 0xc0) == 0x80)
		l->len--;
	l->len--;
	l->buf[l->len] = 0;
	echo(sh, "\b \b", 3);
	return true;
}

/* Offset of the first byte that breaks UTF-8 (RFC 3629 §4), or -1. */
static long utf8_bad_at(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i], need;
		uint32_t cp, min;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			need = 1, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			need = 2, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			need = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return (long)i;
		}
		if (n - i <= need)
			return (long)i;
		for (unsigned k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return (long)i;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return (long)i;
		i += need + 1;
	}
	return -1;
}

static void history_add(struct shell *sh, const char *line, size_t n)
{
	if (!n)
		return;
	if (sh->history.n && strcmp(sh->history.line[sh->history.newest], line) == 0)
		return;
	sh->history.newest = (sh->history.newest + 1) % SHELL_HISTORY;
	memcpy(sh->history.line[sh->history.newest], line, n + 1);
	if (sh->history.n < SHELL_HISTORY)
		sh->history.n++;
}

static enum shell_line_event finish(struct shell *sh, struct shell_line *l)
{
	echo(sh, "\n", 1);
	if (l->overflow) {
		plat_printf("error: line too long (more than %d bytes); line ignored\n",
			    SHELL_LINE_MAX - 1);
		return SHELL_LINE_ERROR;
	}
	if (l->bad_byte >= 0) {
		plat_printf("error: non-printable byte 0x%02x at column %zu; line ignored\n",
			    (unsigned)l->bad_byte, l->bad_col);
		return SHELL_LINE_ERROR;
	}
	long bad = utf8_bad_at((const unsigned char *)l->buf, l->len);
	if (bad >= 0) {
		plat_printf("error: invalid UTF-8 byte 0x%02x at column %ld; line ignored\n",
			    (unsigned char)l->buf[bad], bad + 1);
		return SHELL_LINE_ERROR;
	}
	l->buf[l->len] = 0;
	/* Kept only where Up/Down can recall it (echo on): a confidential
	 * session's lines (prompts, keys) are never copied here. */
	if (sh->echo)
		history_add(sh, l->buf, l->len);
	return SHELL_LINE_DONE;
}

/* Replace the line with the entry `back` lines ago (0: an empty new line). */
static void history_move(struct shell *sh, int dir)
{
	struct shell_line *l = &sh->line;
	int back = l->hist + dir;

	if (!sh->echo || back < 0 || back > sh->history.n)
		return;
	while (erase_one(sh, l))
		;
	l->overflow = false;
	l->bad_byte = -1;
	l->hist = back;
	if (!back)
		return;
	const char *e = sh->history.line[(sh->history.newest - (back - 1) + SHELL_HISTORY) %
					 SHELL_HISTORY];
	l->len = strlen(e);
	memcpy(l->buf, e, l->len + 1);
	echo(sh, l->buf, l->len);
}

enum { ESC_NONE, ESC_START, ESC_CSI, ESC_SS3 };

/* -1 if c is not part of an escape sequence; else 0 while one goes on, or
 * its final byte when it ends. */
static int escape_byte(struct shell_line *l, int c)
{
	switch (l->esc) {
	case ESC_START:
		if (c == '[' || c == 'O') {
			l->esc = c == '[' ? ESC_CSI : ESC_SS3;
			return 0;
		}
		/* A lone ESC: the error names it; c is an ordinary byte. */
		l->esc = ESC_NONE;
		if (l->bad_byte < 0) {
			l->bad_byte = 0x1b;
			l->bad_col = l->len + 1;
		}
		return -1;
	case ESC_CSI:
		if (c >= 0x20 && c <= 0x3f)
			return 0;
		/* fall through */
	case ESC_SS3:
		l->esc = ESC_NONE;
		return c >= 0x40 && c <= 0x7e ? c : -1;
	}
	if (c == 0x1b) {
		l->esc = ESC_START;
		return 0;
	}
	return -1;
}

enum shell_line_event shell_line_feed(struct shell *sh, int c)
{
	struct shell_line *l = &sh->line;
	bool was_cr = l->after_cr;

	l->after_cr = false;
	int fin = escape_byte(l, c);
	if (fin >= 0) {
		if (fin == 'A' || fin == 'B')
			history_move(sh, fin == 'A' ? 1 : -1);
		return SHELL_LINE_MORE;
	}
	switch (c) {
	case '\n':
		if (was_cr)
			return SHELL_LINE_MORE;
		return finish(sh, l);
	case '\r':
		l->after_cr = true;
		return finish(sh, l);
	case 0x03: /* Ctrl-C */
		plat_write("^C\n", 3);
		l->len = 0;
		l->buf[0] = 0;
		return SHELL_LINE_CANCEL;
	case 0x04: /* Ctrl-D */
		if (sh->ctrl_d_ends && l->len == 0 && l->bad_byte < 0 && !l->overflow) {
			plat_write("\n", 1);
			return SHELL_LINE_EOF;
		}
		break;
	case 0x15: /* Ctrl-U */
		while (erase_one(sh, l))
			;
		l->overflow = false;
		l->bad_byte = -1;
		return SHELL_LINE_MORE;
	case 0x08:
	case 0x7f:
		erase_one(sh, l);
		return SHELL_LINE_MORE;
	case '\t':
		c = ' ';
		break;
	}
	if (c < 0x20 || c == 0x7f) {
		if (l->bad_byte < 0) {
			l->bad_byte = c;
			l->bad_col = l->len + 1;
		}
		return SHELL_LINE_MORE;
	}
	if (l->overflow || l->len + 1 >= SHELL_LINE_MAX) {
		l->overflow = true;
		return SHELL_LINE_MORE;
	}
	l->buf[l->len++] = (char)c;
	l->buf[l->len] = 0;
	char ch = (char)c;
	echo(sh, &ch, 1);
	return SHELL_LINE_MORE;
}
