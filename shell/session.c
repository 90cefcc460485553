/*
 * shell/session.c — the confidential session's hooks into the shell
 * (shell/session.h, docs/session.md): output sealed into frames, input
 * opened from frames, the prompt as a frame, the close and what it wipes.
 */
#include "session.h"
#include "cmd_model.h"
#include "cmd_seal.h"

#define OUT_CHUNK 2048u /* output bytes per frame: a line or two of text */

struct session_state *session_state(struct shell *sh)
{
	if (!sh->session)
		sh->session = plat_alloc(sizeof(struct session_state), 64);
	return sh->session;
}

/* One frame on the console, as a line of its own. */
static void send_frame(struct session_state *s, uint8_t type, const void *data, size_t n)
{
	long k = chan_seal(&s->ch, type, data, n, s->line, sizeof s->line);
	if (k < 0) {
		/* the counter ran out (2^48 frames) or the channel failed: nothing
		 * more may leave, in clear least of all */
		if (s->state == SESSION_OPEN) {
			s->state = SESSION_CLOSING;
			plat_snprintf(s->why, sizeof s->why, "the guest cannot seal more frames (%s)",
				      plat_strerror((int)k));
		}
		return;
	}
	plat_console_write(s->line, (size_t)k);
	plat_console_write("\n", 1);
}

/*
 * Pacing (config session-pace MS): from the first output after a prompt,
 * one output frame of SESSION_PACE_DATA bytes goes out every MS ms, what is
 * waiting or an empty one, so neither the frames' sizes nor their times
 * follow the tokens. The guest has no timer interrupt: a tick goes out
 * when the guest next looks (each write, and between tokens as generation
 * polls for Ctrl-C), and ticks missed during a long pass are dropped, not
 * sent in a burst. Back at a prompt (or before asking for a line, or an
 * orderly close) what is waiting leaves on the ticks first.
 */
static void pace_tick(struct session_state *s)
{
	size_t k = s->pace_len < SESSION_PACE_DATA ? s->pace_len : SESSION_PACE_DATA;

	send_frame(s, CHAN_OUTPUT, s->pace_buf, k);
	memmove(s->pace_buf, s->pace_buf + k, s->pace_len - k);
	llm_mem_zeroize(s->pace_buf + s->pace_len - k, k);
	s->pace_len -= k;
}

/* The tick that is due, if one is; wait: until the next one is. */
static void pace_pump(struct session_state *s, bool wait)
{
	uint64_t now = plat_time_ns(), ms = (uint64_t)s->pace_ms * 1000000u;

	if (!s->pacing) {
		s->pacing = true;
		s->pace_next = now;
	}
	while (wait && now < s->pace_next)
		now = plat_time_ns();
	if (now < s->pace_next || s->state != SESSION_OPEN)
		return;
	pace_tick(s);
	s->pace_next += ms;
	if (s->pace_next <= now) /* a pass took longer than a tick */
		s->pace_next = now + ms;
}

/* What is waiting, out on the ticks; the ticks stop. */
static void pace_drain(struct session_state *s)
{
	while (s->pace_len && s->state == SESSION_OPEN)
		pace_pump(s, true);
	s->pacing = false;
}

/* The write filter: every byte the shell prints, sealed. */
static void session_write(void *ctx, const char *p, size_t n)
{
	struct session_state *s = ctx;

	while (n && s->pace_ms && s->state == SESSION_OPEN) {
		size_t k = SESSION_PACE_BUF - s->pace_len;
		if (k > n)
			k = n;
		memcpy(s->pace_buf + s->pace_len, p, k);
		s->pace_len += k;
		p += k;
		n -= k;
		pace_pump(s, n > 0); /* full: wait for the next tick */
	}
	while (n && s->state == SESSION_OPEN) {
		size_t k = n < OUT_CHUNK ? n : OUT_CHUNK;
		send_frame(s, CHAN_OUTPUT, p, k);
		p += k;
		n -= k;
	}
}

static void fail(struct session_state *s, const char *why)
{
	if (s->state != SESSION_OPEN)
		return;
	s->state = SESSION_CLOSING;
	plat_snprintf(s->why, sizeof s->why, "%s", why);
}

/* Raw console bytes into s->raw up to a line end (blank lines and the LF
 * of CRLF skipped). 1: a line is there; 0: none yet (non-blocking); -1:
 * end of input (the host build's stdin). */
static int read_raw_line(struct session_state *s, bool block)
{
	for (;;) {
		int c = block ? plat_getc() : plat_trygetc();
		if (c < 0)
			return block ? -1 : 0;
		if (c == '\n' || c == '\r') {
			if (s->raw_len == 0 && !s->raw_long)
				continue;
			return 1;
		}
		if (s->raw_len + 1 < sizeof s->raw)
			s->raw[s->raw_len++] = (char)c;
		else
			s->raw_long = true;
	}
}

/* Act on the line in s->raw: an input frame's data into s->plain, a close,
 * or the end of the session. */
static void take_line(struct session_state *s)
{
	char err[200];
	uint8_t type;
	size_t n = s->raw_len;
	bool too_long = s->raw_long;

	s->raw_len = 0;
	s->raw_long = false;
	if (too_long) {
		plat_snprintf(err, sizeof err, "a line longer than any frame (%u bytes) came in",
			      (unsigned)CHAN_LINE_MAX - 1);
		fail(s, err);
		return;
	}
	if (!chan_is_frame(s->raw, n)) {
		/* a client that refused the evidence says so in clear */
		if (n == 13 && memcmp(s->raw, "session abort", 13) == 0) {
			s->state = SESSION_CLOSING;
			plat_snprintf(s->note, sizeof s->note, " (aborted by the client)");
			return;
		}
		fail(s, "a line that is not a frame came in (text outside the session)");
		return;
	}
	long k = chan_open(&s->ch, s->raw, n, &type, s->plain, err, sizeof err);
	if (k < 0) {
		fail(s, err);
		return;
	}
	if (type == CHAN_INPUT) {
		s->plain_len = (size_t)k;
		s->plain_pos = 0;
		s->asked = false;
	} else if (type == CHAN_CLOSE) {
		send_frame(s, CHAN_CLOSE, NULL, 0);
		s->state = SESSION_CLOSING;
		plat_snprintf(s->note, sizeof s->note, " (by the client)");
	} else {
		plat_snprintf(err, sizeof err, "frame %llu from the client has type 0x%02x (neither "
			      "input nor close)", (unsigned long long)(s->ch.recv.ctr - 1), type);
		fail(s, err);
	}
}

/* The next byte of the last input frame (the frame is wiped once read). */
static int next_plain(struct session_state *s)
{
	int c = s->plain[s->plain_pos++];
	s->mid_line = !(c == '\n' || c == '\r' || c == 3);
	if (s->plain_pos == s->plain_len) {
		llm_mem_zeroize(s->plain, s->plain_len);
		s->plain_len = s->plain_pos = 0;
	}
	return c;
}

static int session_in_getc(struct shell *sh)
{
	struct session_state *s = sh->session;

	if (!s || s->state == SESSION_NONE)
		return plat_getc();
	while (s->state == SESSION_OPEN && s->plain_pos == s->plain_len) {
		/* a command reads a line (chat): one request per line, none while
		 * a line is half consumed (the prompt's went out at the prompt) */
		if (!s->asked && !s->mid_line) {
			if (s->pace_ms)
				pace_drain(s);
			send_frame(s, CHAN_LINE, NULL, 0);
			s->asked = true;
		}
		if (read_raw_line(s, true) < 0)
			return -1;
		take_line(s);
	}
	/* closing: whatever reads input sees Ctrl-C and stops */
	return s->state == SESSION_OPEN ? next_plain(s) : 3;
}

static int session_in_trygetc(struct shell *sh)
{
	struct session_state *s = sh->session;

	if (!s || s->state == SESSION_NONE)
		return plat_trygetc();
	if (s->pace_ms && s->pacing && s->state == SESSION_OPEN)
		pace_pump(s, false); /* between tokens */
	while (s->state == SESSION_OPEN && s->plain_pos == s->plain_len) {
		if (read_raw_line(s, false) <= 0)
			return -1;
		take_line(s);
	}
	return s->state == SESSION_OPEN ? next_plain(s) : 3;
}

/* Everything the session's user left in the guest, zeroized. */
static void forget_user(struct shell *sh, struct session_state *s)
{
	struct engine *e = sh->engine;
	struct engine_info info;

	if (s->key_given) {
		shell_seal_forget(sh);
		/* a sealed model opened with it: its plaintext weights go too */
		if (e && engine_get_info(e, &info) == 0 && info.sealed)
			engine_unload(e);
	}
	if (e)
		engine_forget(e);
	llm_mem_zeroize(&sh->history, sizeof sh->history);
	llm_mem_zeroize(&sh->line, sizeof sh->line);
	shell_line_reset(&sh->line);
	llm_mem_zeroize(sh->args, sizeof sh->args);
	llm_mem_zeroize(sh->argv, sizeof sh->argv);
	llm_mem_zeroize(sh->typeahead, sizeof sh->typeahead);
	sh->ta_head = sh->ta_len = 0;
	llm_mem_zeroize(s->plain, sizeof s->plain);
	llm_mem_zeroize(s->raw, sizeof s->raw);
	llm_mem_zeroize(s->line, sizeof s->line);
	llm_mem_zeroize(s->pace_buf, sizeof s->pace_buf);
	s->pace_len = 0;
	s->pacing = false;
	s->plain_len = s->plain_pos = s->raw_len = 0;
	s->raw_long = false;
	s->key_given = false;
}

void session_start(struct shell *sh, const char *how)
{
	struct session_state *s = sh->session;

	/* nothing from before the session is reused in it (the prompt-prefix
	 * cache included), and bytes typed ahead in clear are not its input */
	forget_user(sh, s);
	plat_snprintf(s->how, sizeof s->how, "%s", how);
	s->why[0] = s->note[0] = 0;
	s->asked = s->mid_line = false;
	s->saved_echo = sh->echo;
	s->saved_prompt = sh->prompt;
	sh->echo = false;
	sh->prompt = false;
	sh->line.after_cr = false; /* the CR that ended `session open` has no LF to swallow */
	s->state = SESSION_OPEN;
	plat_set_write_filter(session_write, s);
}

void session_close(struct shell *sh, const char *note)
{
	struct session_state *s = sh->session;

	if (!s || s->state != SESSION_OPEN)
		return;
	pace_drain(s);
	send_frame(s, CHAN_CLOSE, NULL, 0);
	s->state = SESSION_CLOSING;
	plat_snprintf(s->note, sizeof s->note, "%s", note);
}

/* The close, back at the prompt: wipe, then clear text again. */
static void finish(struct shell *sh, struct session_state *s)
{
	forget_user(sh, s);
	chan_wipe(&s->ch);
	plat_set_write_filter(NULL, NULL);
	sh->echo = s->saved_echo;
	sh->prompt = s->saved_prompt;
	sh->line.after_cr = false;
	s->state = SESSION_NONE;
	if (s->why[0])
		sh->last_status = shell_err(sh, -LLMK_EAUTH, "session: %s; session closed", s->why);
	else
		plat_printf("session closed%s\n", s->note);
	llm_mem_zeroize(s->why, sizeof s->why);
}

void session_pending_wipe(struct session_state *s)
{
	llm_mem_zeroize(&s->pending, sizeof s->pending);
}

void shell_session_end_now(struct shell *sh)
{
	struct session_state *s = sh->session;

	if (s)
		session_pending_wipe(s);
	if (!s || s->state == SESSION_NONE)
		return;
	session_close(sh, " (the machine is going down)");
	finish(sh, s);
}

static void session_in_prompt(struct shell *sh)
{
	struct session_state *s = sh->session;

	if (!s)
		return;
	if (s->state == SESSION_CLOSING) {
		finish(sh, s);
	} else if (s->state == SESSION_OPEN) {
		/* the prompt: the last command's status, and the request for the
		 * next line (one per command, input read ahead or not) */
		int32_t st = sh->last_status;
		pace_drain(s);
		uint8_t le[4] = {(uint8_t)st, (uint8_t)(st >> 8), (uint8_t)(st >> 16),
				 (uint8_t)(st >> 24)};
		send_frame(s, CHAN_PROMPT, le, sizeof le);
		s->asked = true;
	}
}

static int session_in_check(struct shell *sh, const struct shell_cmd *c)
{
	struct session_state *s = sh->session;

	/* a session waiting for its credential goes with any other command:
	 * whoever typed it is not that session's client */
	if (s && s->pending.on && strcmp(c->name, "session") != 0)
		session_pending_wipe(s);
	if (!s || !s->require || s->state == SESSION_OPEN || !strcmp(c->name, "session") ||
	    !strcmp(c->name, "version") || !strcmp(c->name, "help"))
		return 0;
	return shell_err(sh, -LLMK_EAUTH, "%s: refused: require-session is on, so commands run "
			 "only inside a confidential session (llmctl --connect; session, version "
			 "and help excepted)", c->name);
}

const char *shell_session_key_release(struct shell *sh)
{
	struct session_state *s = sh->session;

	if (!s || s->state != SESSION_OPEN)
		return NULL;
	s->key_given = true;
	return s->how;
}

const struct shell_input_ops shell_input_session = {
	.getc = session_in_getc,
	.trygetc = session_in_trygetc,
	.prompt = session_in_prompt,
	.check = session_in_check,
};
