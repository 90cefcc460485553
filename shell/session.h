/*
 * shell/session.h — the confidential session in the guest (docs/session.md):
 * after `session open`, every console line in either direction is one frame
 * of shell/chan.h, so the host that carries the serial line sees only
 * ciphertext.
 *
 * shell/session.c holds the session's state (sh->session) and its hooks
 * into the shell: console output goes through a write filter
 * (plat_set_write_filter) that seals it into frames; shell_getc and
 * shell_poll_cancel take their bytes from opened input frames; the prompt
 * loop announces each prompt as a frame and completes a close; and
 * require-session refuses commands outside a session. shell/cmd_session.c
 * is the `session` command and the require-session config key.
 *
 * A session ends by `session close`, a close frame from the client, or the
 * first frame that is refused (altered, replayed, reordered, missing) or
 * any text that is not a frame. From that moment nothing more is written,
 * framed or in clear, and input reads as Ctrl-C, so the running command
 * stops; back at the prompt the close completes: the conversation, the KV
 * cache, the sampler, the shell's line buffers and the session keys are
 * zeroized, a model key the session brought is forgotten (and a sealed
 * model it opened unloaded), and the console returns to clear text with
 * one line saying why.
 */
#ifndef SHELL_SESSION_H
#define SHELL_SESSION_H

#include "chan.h"
#include "shell.h"

/* The console through the session: shell_input_session (shell.h). */

/* ---- for other commands ---- */
/*
 * `unseal KEYHEX` typed inside an open session: returns how the session
 * was attested ("vtpm", "vtpm, simulated") and marks the key as the
 * session's (forgotten when the session ends); NULL when no session is open.
 */
const char *shell_session_key_release(struct shell *sh);
/*
 * The machine is going down (poweroff, reboot, the console's end): an open
 * session is told with a close frame, then everything a close wipes is
 * wiped now (keys, conversation, buffers), without waiting for a prompt.
 */
void shell_session_end_now(struct shell *sh);

/* ---- for shell/cmd_session.c ---- */
#define SESSION_PACE_DATA 64u   /* output bytes a paced frame carries: chan_buckets[0] */
#define SESSION_PACE_BUF 4096u  /* output held for the ticks; a write waits for room */
#define SESSION_PACE_MAX 10000u /* ms */
enum session_state_kind { SESSION_NONE = 0, SESSION_OPEN, SESSION_CLOSING };
#define SESSION_CLIENTS_MAX 8

struct session_state {
	enum session_state_kind state;
	struct chan ch;
	char how[48];           /* "vtpm", "vtpm, simulated" */
	bool require;           /* require-session on (latched until reboot) */
	/* config session-clients: the X25519 client keys a session may be
	 * opened with (none set: any); set once, then fixed until reboot */
	uint8_t clients[SESSION_CLIENTS_MAX][32];
	int n_clients;
	bool key_given;         /* a model key came over this session */
	bool saved_echo, saved_prompt;
	/* input: the frame line being read, then the data of the last frame */
	char raw[CHAN_LINE_MAX];
	size_t raw_len;
	bool raw_long;
	uint8_t plain[CHAN_DATA_MAX];
	size_t plain_len, plain_pos;
	bool asked;             /* a prompt or line frame asked for the line being read */
	bool mid_line;          /* the last byte handed out did not end a line */
	/* closing: why ("" for an orderly close) and by whom */
	char why[240];
	char note[64];
	/* the frame being written */
	char line[CHAN_LINE_MAX];
	/* vtpm: between `session open` and `session activate`, the session's
	 * private key and what the keys will bind, in clear text still */
	struct {
		bool on;
		uint8_t priv[32], client[32], rd[64], pub[32];
		char how[48];
	} pending;
	/* config session-pace: output leaves as one frame of SESSION_PACE_DATA
	 * bytes (fewer padded) every pace_ms, an empty one when none is
	 * waiting; 0: each write is framed as it happens */
	uint32_t pace_ms;
	bool pacing;            /* ticks running (from the first output after a prompt) */
	uint64_t pace_next;     /* plat_time_ns of the next tick */
	uint8_t pace_buf[SESSION_PACE_BUF];
	size_t pace_len;
};

/* sh->session, allocated on first use; NULL when out of memory. */
struct session_state *session_state(struct shell *sh);
/*
 * Start the session: chan is keyed (chan_init done), how names the
 * evidence's provider. Forgets what came before (conversation, KV, line
 * buffers), turns echo and the prompt off and frames all output from now.
 */
void session_start(struct shell *sh, const char *how);
/* Begin an orderly close from inside the session (`session close`): a
 * close frame goes out; the close completes at the prompt. */
void session_close(struct shell *sh, const char *note);
/* Forget a session waiting for its credential (any other command, a new
 * `session open`, `session abort`, the machine going down). */
void session_pending_wipe(struct session_state *s);

#endif
