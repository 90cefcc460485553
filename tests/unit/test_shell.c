/*
 * tests/unit/test_shell.c — shell/: the line editor fed byte by byte, the
 * prompt loop over scripted input, every command error's one line, and
 * `disks hash` against BearSSL's SHA-256 of the same bytes.
 */
#include "test.h"
#include "shell_fixture.h"
#include "../../shell/shell.h"
#include "../../tools/host/host.h"

#include <bearssl.h>
#include <stdlib.h>

static bool starts(const char *s, const char *prefix)
{
	if (strncmp(s, prefix, strlen(prefix)) == 0)
		return true;
	fprintf(stderr, "  expected a start of \"%s\", got \"%.*s\"\n", prefix, (int)strlen(prefix) + 20, s);
	return false;
}

static struct shell *new_shell(bool interactive)
{
	struct shell *sh = calloc(1, sizeof *sh);
	host_set_config(NULL);
	shell_init(sh, interactive);
	return sh;
}

/* Feed bytes; return the last event and how many lines completed. */
static enum shell_line_event feed(struct shell *sh, const char *s, size_t n, int *lines)
{
	enum shell_line_event ev = SHELL_LINE_MORE;
	*lines = 0;
	for (size_t i = 0; i < n; i++) {
		ev = shell_line_feed(sh, (unsigned char)s[i]);
		if (ev != SHELL_LINE_MORE) {
			(*lines)++;
			if (i + 1 < n)
				shell_line_reset(&sh->line);
		}
	}
	return ev;
}

#define FEED(sh, lit, lines) feed(sh, lit, sizeof(lit) - 1, lines)

TEST(line_editor_echoes_and_erases)
{
	struct capture cap;
	struct shell *sh = new_shell(true);
	int lines;

	capture_start(&cap);
	CHECK_EQ_INT(FEED(sh, "abc\r", &lines), SHELL_LINE_DONE);
	CHECK_STR(sh->line.buf, "abc");
	CHECK_STR(cap.buf, "abc\n");

	/* Backspace and DEL erase one character each, "\b \b" on screen. */
	shell_line_reset(&sh->line);
	capture_reset(&cap);
	CHECK_EQ_INT(FEED(sh, "abx\x7fy\b c\n", &lines), SHELL_LINE_DONE);
	CHECK_STR(sh->line.buf, "ab c");
	CHECK_STR(cap.buf, "abx\b \by\b \b c\n");

	/* A backspace on an empty line does nothing; a UTF-8 character goes whole. */
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "\x7fh\xc3\xa9\x7f\n", &lines), SHELL_LINE_DONE);
	CHECK_STR(sh->line.buf, "h");

	/* Ctrl-U clears; a tab reads as a space. */
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "hello\x15" "bye\tnow\n", &lines), SHELL_LINE_DONE);
	CHECK_STR(sh->line.buf, "bye now");

	/* Ctrl-C drops the line and says so. */
	shell_line_reset(&sh->line);
	capture_reset(&cap);
	CHECK_EQ_INT(FEED(sh, "abc\x03", &lines), SHELL_LINE_CANCEL);
	CHECK_STR(cap.buf, "abc^C\n");
	CHECK_EQ_INT(sh->line.len, 0);

	/* Without echo nothing typed comes back. */
	sh->echo = false;
	shell_line_reset(&sh->line);
	capture_reset(&cap);
	CHECK_EQ_INT(FEED(sh, "quiet\x7f\n", &lines), SHELL_LINE_DONE);
	CHECK_STR(sh->line.buf, "quie");
	CHECK_STR(cap.buf, "");
	capture_stop(&cap);
	free(sh);
}

TEST(line_editor_recalls_history_with_up_and_down)
{
	struct capture cap;
	struct shell *sh = new_shell(true);
	int lines;

	capture_start(&cap);
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "one\n", &lines), SHELL_LINE_DONE);
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "two\n", &lines), SHELL_LINE_DONE);
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "two\n", &lines), SHELL_LINE_DONE); /* kept once */
	shell_line_reset(&sh->line);
	capture_reset(&cap);
	CHECK_EQ_INT(FEED(sh, "x\x1b[A\x1b[A\n", &lines), SHELL_LINE_DONE);
	CHECK_STR(sh->line.buf, "one");
	CHECK_STR(cap.buf, "x\b \btwo\b \b\b \b\b \bone\n");
	/* History is now one, two, one. Up past the oldest stays there; Down to
	 * the start is an empty line. */
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "\x1b[A\x1b[A\x1b[A\x1b[A\x1bOA\x1b[B\n", &lines), SHELL_LINE_DONE);
	CHECK_STR(sh->line.buf, "two");
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "\x1b[A\x1b[A\x1b[B\x1b[B\x1b[Bok\n", &lines), SHELL_LINE_DONE);
	CHECK_STR(sh->line.buf, "ok");
	/* Without echo (a script on a pipe) the keys do nothing. */
	sh->echo = false;
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "a\x1b[Ab\n", &lines), SHELL_LINE_DONE);
	CHECK_STR(sh->line.buf, "ab");
	/* Only the last SHELL_HISTORY lines are kept. */
	sh->echo = true;
	for (int i = 0; i < SHELL_HISTORY + 3; i++) {
		char l[16];
		int n = snprintf(l, sizeof l, "cmd%d\n", i);
		shell_line_reset(&sh->line);
		feed(sh, l, (size_t)n, &lines);
	}
	shell_line_reset(&sh->line);
	for (int i = 0; i < SHELL_HISTORY + 5; i++)
		shell_line_feed(sh, 0x1b), shell_line_feed(sh, '['), shell_line_feed(sh, 'A');
	CHECK_EQ_INT(shell_line_feed(sh, '\n'), SHELL_LINE_DONE);
	CHECK_STR(sh->line.buf, "cmd3");
	capture_stop(&cap);
	free(sh);
}

TEST(line_editor_takes_crlf_cr_and_lf_each_as_one_line_end)
{
	struct shell *sh = new_shell(false);
	int lines;

	/* CRLF is one end of line; so are lone CR and LF; LF LF is an empty line. */
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "a\r\nb\rc\n\n", &lines), SHELL_LINE_DONE);
	CHECK_EQ_INT(lines, 4);
	CHECK_STR(sh->line.buf, "");

	/* The LF of a CRLF arriving after the line was taken is still swallowed. */
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "x\r", &lines), SHELL_LINE_DONE);
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "\ny\n", &lines), SHELL_LINE_DONE);
	CHECK_EQ_INT(lines, 1);
	CHECK_STR(sh->line.buf, "y");
	free(sh);
}

TEST(line_errors_once)
{
	struct capture cap;
	struct shell *sh = new_shell(false);
	int lines;

	capture_start(&cap);
	shell_line_reset(&sh->line);
	for (int i = 0; i < SHELL_LINE_MAX + 500; i++)
		CHECK_EQ_INT(shell_line_feed(sh, 'a'), SHELL_LINE_MORE);
	CHECK_EQ_INT(shell_line_feed(sh, '\n'), SHELL_LINE_ERROR);
	CHECK_EQ_INT(fixture_count(cap.buf, "error:"), 1);
	CHECK(strstr(cap.buf, "error: line too long (more than 4095 bytes)") != NULL);

	/* Exactly SHELL_LINE_MAX - 1 bytes still fit. */
	shell_line_reset(&sh->line);
	for (int i = 0; i < SHELL_LINE_MAX - 1; i++)
		shell_line_feed(sh, 'b');
	CHECK_EQ_INT(shell_line_feed(sh, '\n'), SHELL_LINE_DONE);
	CHECK_EQ_INT(strlen(sh->line.buf), SHELL_LINE_MAX - 1);

	/* A control byte: one error naming byte and column. Cursor keys (CSI
	 * and SS3 sequences) are ignored, not errors; a lone ESC is one. */
	capture_reset(&cap);
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "ab\x1b[A\x01z\x02\n", &lines), SHELL_LINE_ERROR);
	CHECK_STR(cap.buf, "error: non-printable byte 0x01 at column 3; line ignored\n");
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "up\x1b[1;5C\x1bOAti\x1b[3~me\n", &lines), SHELL_LINE_DONE);
	CHECK_STR(sh->line.buf, "uptime");
	capture_reset(&cap);
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "a\x1bxb\n", &lines), SHELL_LINE_ERROR);
	CHECK_STR(cap.buf, "error: non-printable byte 0x1b at column 2; line ignored\n");
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "a\x1b\n", &lines), SHELL_LINE_ERROR);

	/* Ctrl-U forgets a bad byte along with the text. */
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "a\x1b\x15ok\n", &lines), SHELL_LINE_DONE);
	CHECK_STR(sh->line.buf, "ok");

	capture_reset(&cap);
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "ok \xff\n", &lines), SHELL_LINE_ERROR);
	CHECK_STR(cap.buf, "error: invalid UTF-8 byte 0xff at column 4; line ignored\n");
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "\xc3\n", &lines), SHELL_LINE_ERROR);
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "\xe2\x82\xac \xf0\x9f\x98\x80\n", &lines), SHELL_LINE_DONE);
	shell_line_reset(&sh->line);
	CHECK_EQ_INT(FEED(sh, "\xed\xa0\x80\n", &lines), SHELL_LINE_ERROR); /* surrogate */
	capture_stop(&cap);
	free(sh);
}

/* Run a whole session through shell_run with scripted stdin. */
static int session(struct shell *sh, struct capture *cap, const char *script)
{
	capture_reset(cap);
	host_set_input(script, strlen(script));
	int r = shell_run(sh);
	host_set_input(NULL, 0);
	return r;
}

TEST(shell_session_errors_and_recovery)
{
	struct capture cap;
	struct shell *sh = new_shell(true);

	host_remove_disks();
	capture_start(&cap);
	session(sh, &cap, "frobnicate\r\nuptime\r\n");
	CHECK(starts(cap.buf, "llm> frobnicate\nerror: unknown command 'frobnicate' (try 'help')\n"
			      "llm> uptime\nup "));
	CHECK(plat_boot_ns() > 0);

	static const char *const bad[] = {
		"version extra",
		"disks hash",
		"disks hash 0",
		"disks hash x",
		"disks bench",
		"disks frob",
		"help nosuch",
		"config nosuch",
		"config echo maybe",
		"infer \"unterminated",
		"x \"\\q\"",
		"1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 "
		"31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 "
		"58 59 60 61 62 63 64 65",
		"ab\x1b[Dc",
		"ab\x1b",
		"nul\x01byte",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char script[512];
		snprintf(script, sizeof script, "%s\nmem\n", bad[i]);
		session(sh, &cap, script);
		if (fixture_count(cap.buf, "error: ") != 1 || !strstr(cap.buf, "llm> mem\nmemory:"))
			fprintf(stderr, "  for '%s' got:\n%s", bad[i], cap.buf);
		CHECK_EQ_INT(fixture_count(cap.buf, "error: "), 1);
		CHECK(strstr(cap.buf, "llm> mem\nmemory:") != NULL);
	}

	/* Ctrl-C at the prompt: ^C and a fresh prompt, the next line runs. */
	session(sh, &cap, "halfway\x03version\n");
	CHECK(starts(cap.buf, "llm> halfway^C\nllm> version\nllmk "));

	/* Ctrl-D: an error byte on the console; the end where allowed (host tty). */
	session(sh, &cap, "\x04\nuptime\n");
	CHECK_EQ_INT(fixture_count(cap.buf, "error: non-printable byte 0x04"), 1);
	CHECK_EQ_INT(fixture_count(cap.buf, "up "), 1);
	sh->ctrl_d_ends = true;
	session(sh, &cap, "ab\x04\n\x04uptime\n");
	CHECK_EQ_INT(fixture_count(cap.buf, "error: non-printable byte 0x04"), 1);
	CHECK_EQ_INT(fixture_count(cap.buf, "up "), 0);
	sh->ctrl_d_ends = false;

	/* End of input after an unterminated last line still runs it. */
	session(sh, &cap, "bogus");
	CHECK_EQ_INT(fixture_count(cap.buf, "error: unknown command 'bogus'"), 1);
	CHECK_EQ_INT(sh->last_status, -LLMK_ENOENT);
	capture_stop(&cap);
	free(sh);
}

TEST(shell_non_interactive_and_comments)
{
	struct capture cap;
	struct shell *sh = new_shell(false);

	capture_start(&cap);
	session(sh, &cap, "# a comment\n\n   \nconfig echo\n");
	CHECK(starts(cap.buf, "  echo             off "));
	CHECK_EQ_INT(fixture_count(cap.buf, "\n"), 1);
	capture_stop(&cap);
	free(sh);
}

TEST(shell_applies_llmk_cfg_and_names_each_bad_line)
{
	struct capture cap;
	struct shell *sh = calloc(1, sizeof *sh);

	capture_start(&cap);
	host_set_config("# llmk.cfg\necho = off\r\n  prompt on # trailing\nnosuch 1\nprompt\n"
			"echo \"maybe\"");
	shell_init(sh, true);
	host_set_config(NULL);
	CHECK(!sh->echo);
	CHECK(sh->prompt);
	CHECK_EQ_INT(fixture_count(cap.buf, "error: "), 3);
	CHECK(strstr(cap.buf, "error: llmk.cfg:5: expected KEY VALUE, got 1 word\n") != NULL);
	CHECK(strstr(cap.buf, "error: config echo: expected on or off, got 'maybe'\n") != NULL);
	CHECK(strstr(cap.buf, "llmk.cfg:2: echo = off\n") != NULL);
	CHECK(strstr(cap.buf, "error: llmk.cfg:4: unknown config key 'nosuch'") != NULL);
	capture_stop(&cap);
	free(sh);
}

/* config net: dhcp, or "static ADDR/MASK GW" with a prefix length or a
 * dotted mask, shown in one canonical form; anything else is one error
 * line and leaves the setting as it was. */
TEST(shell_config_net_parses_dhcp_and_static)
{
	struct capture cap;
	struct shell *sh = new_shell(false);
	static const char *const bad[] = {
		"static 10.0.2.15 10.0.2.2",  "static 10.0.2.256/24 10.0.2.2",
		"static 10.0.2.15/33 10.0.2.2", "static 10.0.2/24 10.0.2.2",
		"static 10.0.2.15/24 10.0.2.2 x", "static 10.0.2.15/24",
		"dhcpx", "static 10.0.2.15/024 10.0.2.2",
	};

	capture_start(&cap);
	session(sh, &cap, "config net\n");
	CHECK(strstr(cap.buf, "net ") && strstr(cap.buf, "dhcp"));
	session(sh, &cap, "config net \"static 10.0.2.15/24 10.0.2.2\"\n");
	CHECK_STR(sh->net, "static 10.0.2.15/255.255.255.0 10.0.2.2");
	session(sh, &cap, "config net \"static 192.168.7.9/255.255.0.0 192.168.0.1\"\n");
	CHECK_STR(sh->net, "static 192.168.7.9/255.255.0.0 192.168.0.1");
	session(sh, &cap, "config net \"static 10.1.2.3/0 10.0.0.1\"\n");
	CHECK_STR(sh->net, "static 10.1.2.3/0.0.0.0 10.0.0.1");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char line[128];
		snprintf(line, sizeof line, "config net \"%s\"\n", bad[i]);
		session(sh, &cap, line);
		CHECK_EQ_INT(fixture_count(cap.buf, "error: config net: expected dhcp or"), 1);
		CHECK_STR(sh->net, "static 10.1.2.3/0.0.0.0 10.0.0.1");
	}
	session(sh, &cap, "config net dhcp\n");
	CHECK_STR(sh->net, "");
	capture_stop(&cap);
	free(sh);
}

/* A NUL byte ends a C string: the line holding one is an error naming it,
 * and the lines after it still apply. */
TEST(shell_config_file_nul_byte_is_an_error_naming_the_line)
{
	static const char cfg[] = "prompt off\nec\0ho off\necho on\n";
	struct capture cap;
	struct shell *sh = calloc(1, sizeof *sh);

	capture_start(&cap);
	host_set_config_bytes(cfg, sizeof cfg - 1);
	shell_init(sh, false);
	host_set_config(NULL);
	CHECK(sh->echo);
	CHECK_EQ_INT(fixture_count(cap.buf, "error: "), 1);
	CHECK(strstr(cap.buf, "error: llmk.cfg:2: NUL byte at column 3") != NULL);
	CHECK(strstr(cap.buf, "llmk.cfg:3: echo = on\n") != NULL);
	capture_stop(&cap);
	free(sh);
}

TEST(shell_poll_cancel_keeps_typeahead)
{
	struct shell *sh = new_shell(false);

	host_set_input("ab", 2);
	CHECK(!shell_poll_cancel(sh));
	CHECK_EQ_INT(sh->ta_len, 2);
	host_set_input("cd\x03" "ef", 5);
	CHECK(shell_poll_cancel(sh));
	CHECK_EQ_INT(sh->ta_len, 0);
	CHECK_EQ_INT(shell_getc(sh), 'e');
	host_set_input("xy", 2);
	CHECK(!shell_poll_cancel(sh));
	host_set_input("z", 1);
	CHECK_EQ_INT(shell_getc(sh), 'x');
	CHECK_EQ_INT(shell_getc(sh), 'y');
	CHECK_EQ_INT(shell_getc(sh), 'z');
	CHECK_EQ_INT(shell_getc(sh), -1);
	host_set_input(NULL, 0);
	free(sh);
}

/* Issue 28 defect 7: typeahead past the 4096 bytes struct shell holds is
 * read on (a Ctrl-C behind it must be seen) and kept, in pages given back
 * once it is drained: a script piped in runs whole. */
TEST(shell_long_typeahead_is_kept_in_order)
{
	static char in[3 * SHELL_TYPEAHEAD + 5];
	struct shell *sh = new_shell(false);
	size_t bad = 0;

	for (size_t i = 0; i < sizeof in; i++)
		in[i] = i % 50 == 49 ? '\n' : (char)('a' + i % 26);
	host_set_input(in, sizeof in);
	CHECK(!shell_poll_cancel(sh));
	CHECK_EQ_INT(sh->ta_len, sizeof in);
	CHECK_EQ_INT(sh->ta_dropped, 0);
	CHECK(sh->ta_big != NULL);
	host_set_input("z", 1);
	for (size_t i = 0; i < sizeof in; i++)
		bad += shell_getc(sh) != (unsigned char)in[i];
	CHECK_EQ_INT(bad, 0);
	CHECK(sh->ta_big == NULL);
	CHECK_EQ_INT(shell_getc(sh), 'z');
	host_set_input(NULL, 0);
	free(sh);
}

/* Issue 28 defect 7: a full typeahead (SHELL_TYPEAHEAD_MAX) keeps whole
 * lines only. The line that does not fit is dropped whole, from its start
 * in the typeahead to its end (read later if need be), so no line runs
 * spliced across the gap; lines after it are kept again, and the
 * command's end says what was dropped in one error line. */
TEST(shell_full_typeahead_drops_whole_lines)
{
	const size_t kept = SHELL_TYPEAHEAD_MAX - 16;
	char *in = malloc(kept + 64);
	struct capture cap;
	struct shell *sh = new_shell(false);
	size_t bad = 0;

	/* lines of 16 bytes to 16 short of full; one of 20 that does not fit */
	for (size_t n = 0; n < kept; n += 16)
		memcpy(in + n, "#23456789abcdef\n", 16);
	memcpy(in + kept, "abcdefghijklmnopqrs\nok\n", 23);
	host_set_input(in, kept + 23);
	CHECK(!shell_poll_cancel(sh));
	CHECK_EQ_INT(sh->ta_len, kept + 3);
	CHECK_EQ_INT(sh->ta_dropped, 20);
	for (size_t i = 0; i < kept; i++)
		bad += shell_getc(sh) != (unsigned char)in[i];
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(shell_getc(sh), 'o');
	CHECK_EQ_INT(shell_getc(sh), 'k');
	CHECK_EQ_INT(shell_getc(sh), '\n');

	/* the dropped line's end still to come: skipped when it is read */
	host_set_input(in, kept);
	CHECK(!shell_poll_cancel(sh));
	host_set_input("abcdefghijklmnopqrs", 19);
	CHECK(!shell_poll_cancel(sh));
	CHECK_EQ_INT(sh->ta_len, kept);
	for (size_t i = 0; i < kept; i++)
		shell_getc(sh);
	host_set_input("ijk\nzz\n", 7);
	CHECK_EQ_INT(shell_getc(sh), 'z');

	/* the note, once, after the command that saw the bytes */
	capture_start(&cap);
	host_set_input(in, kept);
	CHECK(!shell_poll_cancel(sh));
	host_set_input("abcdefghijklmnopqrs\n", 20);
	CHECK(!shell_poll_cancel(sh));
	shell_exec_line(sh, "help");
	CHECK_EQ_INT(fixture_count(cap.buf, "error: "), 1);
	CHECK(strstr(cap.buf, "error: typeahead: ") != NULL);
	CHECK_EQ_INT(sh->ta_dropped, 0);
	capture_stop(&cap);
	/* Ctrl-C drops it all, the pages too */
	host_set_input("\x03", 1);
	CHECK(shell_poll_cancel(sh));
	CHECK_EQ_INT(sh->ta_len, 0);
	CHECK(sh->ta_big == NULL);
	host_set_input(NULL, 0);
	free(in);
	free(sh);
}

static int make_disk(const char *name, uint64_t size, char *path, size_t n)
{
	snprintf(path, n, "%s/%s", test_tmpdir(), name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	for (uint64_t i = 0; i < size; i++)
		fputc((int)((i * 2654435761u) >> 13 & 0xff), f);
	fclose(f);
	return host_add_disk(path);
}

static void sha_hex(const char *path, uint64_t off, uint64_t len, char hex[65])
{
	size_t n;
	uint8_t *data = test_read_file(path, &n), dig[32];
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, data + off, (size_t)len);
	br_sha256_out(&c, dig);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", dig[i]);
	free(data);
}

TEST(shell_disks_hash_matches)
{
	static const uint64_t sizes[] = {0, 511, 4097, (10u << 20) + 777};
	char paths[4][512], hex[65], line[160];
	struct capture cap;
	struct shell *sh = new_shell(false);

	host_remove_disks();
	for (int i = 0; i < 4; i++) {
		char name[32];
		snprintf(name, sizeof name, "shell_disk%d.bin", i);
		CHECK_EQ_INT(make_disk(name, sizes[i], paths[i], sizeof paths[i]), i);
	}
	capture_start(&cap);
	for (int i = 0; i < 4; i++) {
		snprintf(line, sizeof line, "disks hash %d", i);
		capture_reset(&cap);
		CHECK_EQ_INT(shell_exec_line(sh, line), 0);
		sha_hex(paths[i], 0, sizes[i], hex);
		CHECK(strncmp(cap.buf, hex, 64) == 0);
	}
	/* Ranges: unaligned head and tail around the async middle, and the end. */
	static const uint64_t ranges[][2] = {
		{100, (2u << 20) + 3}, {0, 1}, {4096, 4096}, {(10u << 20) + 776, 1},
		{(10u << 20) + 777, 0}, {513, (10u << 20)},
	};
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
		snprintf(line, sizeof line, "disks hash 3 %llu 0x%llx",
			 (unsigned long long)ranges[i][0], (unsigned long long)ranges[i][1]);
		capture_reset(&cap);
		CHECK_EQ_INT(shell_exec_line(sh, line), 0);
		sha_hex(paths[3], ranges[i][0], ranges[i][1], hex);
		CHECK(strncmp(cap.buf, hex, 64) == 0);
	}

	capture_reset(&cap);
	CHECK_EQ_INT(shell_exec_line(sh, "disks hash 2 4000 98"), -LLMK_ERANGE);
	CHECK_STR(cap.buf, "error: disks hash: range 4000 + 98 is past the end of disk 2 "
			   "(capacity 4097 bytes)\n");
	capture_reset(&cap);
	CHECK_EQ_INT(shell_exec_line(sh, "disks hash 4"), -LLMK_ENOENT);
	CHECK_STR(cap.buf, "error: no disk 4 (disks: 0..3)\n");
	capture_reset(&cap);
	CHECK_EQ_INT(shell_exec_line(sh, "disks hash 1 0"), -LLMK_EINVAL);
	CHECK_EQ_INT(fixture_count(cap.buf, "\n"), 1);
	capture_reset(&cap);
	CHECK_EQ_INT(shell_exec_line(sh, "disks hash 1 0 12q"), -LLMK_EINVAL);
	CHECK(starts(cap.buf, "error: disks hash LEN: bad number '12q'"));

	capture_reset(&cap);
	CHECK_EQ_INT(shell_exec_line(sh, "disks"), 0);
	CHECK(strstr(cap.buf, "disk 0: 0 bytes (0 B)") != NULL);
	CHECK(strstr(cap.buf, "disk 3: 10486537 bytes (10.00 MiB), id 'shell_disk3.bin'") != NULL);

	capture_reset(&cap);
	CHECK_EQ_INT(shell_exec_line(sh, "disks bench 0"), -LLMK_ERANGE);
	CHECK_EQ_INT(fixture_count(cap.buf, "error: "), 1);
	capture_stop(&cap);
	host_remove_disks();
	free(sh);
}

TEST(shell_disks_hash_cancel)
{
	char path[512];
	struct capture cap;
	struct shell *sh = new_shell(false);

	host_remove_disks();
	CHECK_EQ_INT(make_disk("shell_cancel.bin", 4u << 20, path, sizeof path), 0);
	capture_start(&cap);
	host_set_input("\x03", 1);
	CHECK_EQ_INT(shell_exec_line(sh, "disks hash 0"), -LLMK_ECANCEL);
	host_set_input(NULL, 0);
	CHECK(starts(cap.buf, "error: disks hash: cancelled after 1048576 of 4194304 bytes"));
	capture_stop(&cap);
	host_remove_disks();
	free(sh);
}

TEST(shell_help_lists_every_command)
{
	struct capture cap;
	struct shell *sh = new_shell(false);
	const struct shell_cmd *c;

	capture_start(&cap);
	CHECK_EQ_INT(shell_exec_line(sh, "help"), 0);
	for (int i = 0; (c = shell_cmd_at(i)); i++) {
		CHECK(strstr(cap.buf, c->name) != NULL);
		CHECK(c->fn != NULL);
		CHECK(c->usage != NULL && strncmp(c->usage, c->name, strlen(c->name)) == 0);
	}
	CHECK(shell_find("disks") != NULL && shell_find("poweroff") != NULL);
	capture_reset(&cap);
	CHECK_EQ_INT(shell_exec_line(sh, "help disks"), 0);
	CHECK(strstr(cap.buf, "disks hash N [OFFSET LEN]\n") != NULL);
	capture_stop(&cap);
	free(sh);
}

/* Offsets past 4 GiB must not wrap: a sparse 5 GiB file with data at 4.5 GiB. */
TEST(shell_disks_hash_past_4g)
{
	const uint64_t size = 5ull << 30, at = (9ull << 29) + 100;
	char path[512], line[160], hex[65];
	uint8_t data[3000], dig[32];
	struct capture cap;
	struct shell *sh = new_shell(false);

	snprintf(path, sizeof path, "%s/shell_sparse.bin", test_tmpdir());
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	fseeko(f, (off_t)at, SEEK_SET);
	fwrite(data, 1, sizeof data, f);
	fseeko(f, (off_t)size - 1, SEEK_SET);
	fputc(0, f);
	fclose(f);
	host_remove_disks();
	CHECK_EQ_INT(host_add_disk(path), 0);

	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, data, sizeof data);
	br_sha256_out(&c, dig);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", dig[i]);
	capture_start(&cap);
	snprintf(line, sizeof line, "disks hash 0 %llu %zu", (unsigned long long)at, sizeof data);
	CHECK_EQ_INT(shell_exec_line(sh, line), 0);
	CHECK(strncmp(cap.buf, hex, 64) == 0);
	capture_reset(&cap);
	CHECK_EQ_INT(shell_exec_line(sh, "disks hash 0 5G 1"), -LLMK_ERANGE);
	capture_reset(&cap);
	CHECK_EQ_INT(shell_exec_line(sh, "disks"), 0);
	CHECK(strstr(cap.buf, "disk 0: 5368709120 bytes (5.00 GiB)") != NULL);
	capture_stop(&cap);
	host_remove_disks();
	remove(path);
	free(sh);
}

TEST(shell_disks_describes_gguf)
{
	const char *td = testdata_dir();
	char src[512], padded[512], bad[512];
	struct capture cap;
	struct shell *sh;
	size_t n;

	if (!td)
		SKIP("no testdata (stories260K)");
	snprintf(src, sizeof src, "%s/stories260K/stories260K.gguf", td);
	uint8_t *data = test_read_file(src, &n);
	if (!data)
		SKIP("no stories260K/stories260K.gguf in testdata");
	/* The same file padded to a sector multiple plus 1 KiB, and a broken one. */
	snprintf(padded, sizeof padded, "%s/shell_padded.gguf", test_tmpdir());
	snprintf(bad, sizeof bad, "%s/shell_bad.gguf", test_tmpdir());
	FILE *f = fopen(padded, "wb");
	fwrite(data, 1, n, f);
	size_t pad = (512 - n % 512) % 512 + 1024;
	for (size_t i = 0; i < pad; i++)
		fputc(0, f);
	fclose(f);
	f = fopen(bad, "wb");
	fwrite(data, 1, 64, f);
	fclose(f);
	free(data);

	host_remove_disks();
	CHECK_EQ_INT(host_add_disk(padded), 0);
	CHECK_EQ_INT(host_add_disk(bad), 1);
	sh = new_shell(false);
	capture_start(&cap);
	CHECK_EQ_INT(shell_exec_line(sh, "disks"), -LLMK_EFORMAT);
	char want[160];
	snprintf(want, sizeof want, "  contents end at byte %zu (%zu bytes of padding after)\n", n, pad);
	CHECK(strstr(cap.buf, "  GGUF v3: 48 tensors, 19 metadata keys, name 'llama', "
			      "architecture 'llama'\n") != NULL);
	CHECK(strstr(cap.buf, want) != NULL);
	CHECK(strstr(cap.buf, "disk 1: 64 bytes (64 B), id 'shell_bad.gguf'") != NULL);
	CHECK(strstr(cap.buf, "\nerror: disks: disk 1: GGUF header, but not readable: gguf: ") != NULL);
	CHECK_EQ_INT(fixture_count(cap.buf, "error: "), 1);
	capture_stop(&cap);
	host_remove_disks();
	free(sh);
}

/* Issue 28 defect 9: `disks` described a GGUF whose tensor's size overflows
 * ("GGUF header, but not readable") in an indented line, not as the error
 * it is: one error line, the listing goes on, and the status says so. */
TEST(shell_disks_reports_an_unreadable_gguf_as_an_error)
{
	static const uint8_t hdr[] = {
		'G', 'G', 'U', 'F', 3, 0, 0, 0,       /* magic, version 3 */
		1, 0, 0, 0, 0, 0, 0, 0,               /* one tensor */
		0, 0, 0, 0, 0, 0, 0, 0,               /* no metadata */
		1, 0, 0, 0, 0, 0, 0, 0, 'w',          /* tensor name "w" */
		2, 0, 0, 0,                           /* two dimensions */
		0, 0, 0, 0, 1, 0, 0, 0,               /* ne[0] = 2^32 */
		0, 0, 0, 0, 1, 0, 0, 0,               /* ne[1] = 2^32 */
		0, 0, 0, 0,                           /* F32 */
		0, 0, 0, 0, 0, 0, 0, 0,               /* offset 0 */
	};
	char path[512];
	struct capture cap;
	struct shell *sh;
	int st;

	snprintf(path, sizeof path, "%s/shell_overflow.gguf", test_tmpdir());
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	fwrite(hdr, 1, sizeof hdr, f);
	for (int i = 0; i < 4096; i++)
		fputc(0, f);
	fclose(f);
	host_remove_disks();
	CHECK_EQ_INT(host_add_disk(path), 0);
	sh = new_shell(false);
	capture_start(&cap);
	st = shell_exec_line(sh, "disks");
	CHECK(st != 0);
	CHECK_EQ_INT(fixture_count(cap.buf, "error: "), 1);
	CHECK(strstr(cap.buf, "\nerror: disks: disk 0: ") != NULL);
	CHECK(strstr(cap.buf, "overflow") != NULL);
	if (!strstr(cap.buf, "\nerror: disks: disk 0: "))
		fprintf(stderr, "  disks said:\n%s", cap.buf);
	capture_stop(&cap);
	host_remove_disks();
	remove(path);
	free(sh);
}
