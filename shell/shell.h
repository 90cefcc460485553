/*
 * shell/shell.h — llmctl: the command shell on the serial console (kernel) and
 * on stdin/stdout (build/host/llmctl). Portable: platform.h only.
 *
 * Commands come in areas, one shell/cmd_<area>.c each, listed in
 * shell/registry.c (one declaration and one row per area):
 *
 *   // shell/cmd_tok.c
 *   static int cmd_tokenize(struct shell *sh, int argc, char **argv) { ... }
 *   const struct shell_cmd shell_cmds_tok[] = {
 *   	{"tokenize", "tokenize \"TEXT\"", "show the token ids of TEXT", cmd_tokenize},
 *   	{0},
 *   };
 *
 * Config keys (`config`, `config KEY VALUE`, and llmk.cfg / --config lines
 * "KEY VALUE" or "KEY = VALUE", '#' comments) come the same way from an
 * area's shell_config_<area>[] of struct shell_config_key. The `config`
 * command itself is in cmd_sys.c; areas only add keys.
 *
 * Command contract: argv[0] is the command name; argv strings are writable and
 * live until the command returns. A command prints its own output with
 * plat_printf and, on failure, exactly one line starting "error: " (use
 * shell_err), then returns 0 or -LLMK_E*. Long-running commands call
 * shell_poll_cancel() now and then and stop with -LLMK_ECANCEL when it says so.
 */
#ifndef SHELL_SHELL_H
#define SHELL_SHELL_H

#include "../kernel/platform.h"

#define SHELL_PROMPT "llm> "
#define SHELL_LINE_MAX 4096 /* bytes per input line, NUL included */
#define SHELL_ARGV_MAX 64   /* words per line */
#define SHELL_TYPEAHEAD 4096 /* bytes typed ahead held in struct shell */
#define SHELL_TYPEAHEAD_MAX (1u << 20) /* and in pages, past those */
#define SHELL_HISTORY 8     /* lines Up/Down recall */

struct shell;

struct shell_cmd {
	const char *name;    /* NULL ends a table */
	const char *usage;   /* one or more lines, e.g. "disks hash N [OFFSET LEN]" */
	const char *summary; /* one line for `help` */
	int (*fn)(struct shell *sh, int argc, char **argv);
};

struct shell_config_key {
	const char *name; /* NULL ends a table */
	const char *help; /* values and meaning, one line */
	/* Parse and apply value; on failure print one "error: " line, return -LLMK_E*. */
	int (*set)(struct shell *sh, const struct shell_config_key *k, const char *value);
	/* Current value as text. */
	void (*get)(struct shell *sh, const struct shell_config_key *k, char *buf, size_t n);
	/* Also a flag "--<name> <flag>" of the commands whose usage says
	 * "--KEY VALUE" (infer, chat), for one run; `help` lists these. NULL: a
	 * config key only. */
	const char *flag;
	const void *arg; /* the key's own data, for set/get that serve several keys */
};

/* Line editor state (shell/line.c). */
struct shell_line {
	char buf[SHELL_LINE_MAX];
	size_t len;
	bool overflow;       /* more bytes than buf holds: report at end of line */
	int bad_byte;        /* first non-printable byte seen, or -1 */
	size_t bad_col;      /* its column (1-based) */
	bool after_cr;       /* swallow the LF of a CRLF pair */
	uint8_t esc;         /* inside a terminal escape sequence (cursor keys) */
	int hist;            /* Up/Down: how many entries back; 0 = a new line */
};

enum shell_line_event {
	SHELL_LINE_MORE = 0, /* keep feeding */
	SHELL_LINE_DONE,     /* buf holds a complete, valid line (NUL-terminated) */
	SHELL_LINE_CANCEL,   /* Ctrl-C: line dropped, "^C" printed */
	SHELL_LINE_ERROR,    /* line ended but was rejected; the error line is printed */
	SHELL_LINE_EOF,      /* Ctrl-D on an empty line, when sh->ctrl_d_ends */
};

struct engine;      /* llm/engine.h */
struct seal_shell;  /* shell/cmd_seal.c: the model key */
struct attest_shell; /* the attestation commands' state */
struct session_state; /* shell/session.h: the confidential session */
struct tls_key;     /* shell/http/tls.h: the API server's TLS key */
struct shell_cmd;

/*
 * Where the prompt loop's bytes come from, and what stands between a typed
 * line and its command. Whoever owns the console sets sh->in after
 * shell_init (which sets shell_input_plain): the kernel's and the host's
 * entries and the shell's test fixture set shell_input_session, so that
 * `session open` can carry the console inside frames; the line-editor fuzz
 * target keeps the plain one.
 */
struct shell_input_ops {
	int (*getc)(struct shell *sh);    /* the next byte, waiting; -1 at the end */
	int (*trygetc)(struct shell *sh); /* the next byte, or -1 when none waits */
	void (*prompt)(struct shell *sh); /* before each prompt; NULL: nothing */
	/* 0 to run the command, else its (printed) refusal; NULL: all run */
	int (*check)(struct shell *sh, const struct shell_cmd *c);
};
/* The console as it is: plat_getc/plat_trygetc (shell/line.c). */
extern const struct shell_input_ops shell_input_plain;
/* Through the confidential session when one is open (shell/session.c,
 * docs/session.md): input out of its frames, the prompt a frame,
 * require-session refusing commands in clear. */
extern const struct shell_input_ops shell_input_session;

struct shell {
	const struct shell_input_ops *in; /* never NULL after shell_init */
	/* The inference session (loaded model, config); shell/cmd_model.c's
	 * shell_engine() creates it on first use, NULL until then. */
	struct engine *engine;
	/* State of the sealing and attestation commands, each owned by its
	 * file; NULL until first used. */
	struct seal_shell *seal;
	struct attest_shell *attest;
	/* The confidential session (shell/session.c); NULL until used. */
	struct session_state *session;
	/* The TLS key `serve` made in this boot (shell/cmd_serve.c); NULL until then. */
	struct tls_key *tls;
	/* config serve: 1 + the port to serve on once the boot's configuration
	 * is applied (shell_serve_at_boot); 0: off. */
	uint32_t serve_at_boot;
	/* What the guest was told from outside its measured image: SHA-256 of
	 * the llmk.cfg bytes (of none: the empty configuration), extended as
	 * "llmk config <hex>" before a line of it is applied, and bound into
	 * every report data (docs/attestation.md, "What the guest obeys"). */
	uint8_t config_digest[32];
	size_t config_len;

	bool echo;   /* echo typed bytes (serial console: yes; host stdin not a TTY: no) */
	bool prompt; /* print "llm> " (off for the host reading a script from a pipe) */
	bool quit;   /* set by a command: shell_run returns after it */
	bool ctrl_d_ends; /* Ctrl-D on an empty line ends input (host terminal; never
			     on the serial console, where it would power off) */
	int last_status; /* result of the last command */
	char net[48];    /* `config net` as last set, canonical; "" = dhcp */

	struct shell_line line;
	struct {
		char line[SHELL_HISTORY][SHELL_LINE_MAX];
		int n;      /* entries held */
		int newest; /* slot of the newest */
	} history;
	char args[SHELL_LINE_MAX]; /* the split words of the current line */
	char *argv[SHELL_ARGV_MAX + 1];

	/* Bytes read by shell_poll_cancel while a command ran: the next lines.
	 * Past SHELL_TYPEAHEAD they move to pages (ta_big, ta_big_cap bytes)
	 * until drained; past SHELL_TYPEAHEAD_MAX a line that does not fit
	 * whole is dropped whole (ta_skip: its end is still to come), and the
	 * command's end reports ta_dropped. */
	unsigned char typeahead[SHELL_TYPEAHEAD];
	size_t ta_head, ta_len;
	unsigned char *ta_big;
	size_t ta_big_cap;
	size_t ta_dropped; /* bytes dropped since the last report */
	bool ta_skip;      /* drop input up to and including the next line end */
};

/* ---- registry.c: every area's commands and config keys ---- */
/* Look a command up by name over every area; NULL if none. */
const struct shell_cmd *shell_find(const char *name);
/* Iterate every command: idx from 0 until NULL. */
const struct shell_cmd *shell_cmd_at(int idx);
/* Iterate every config key the same way; and find by name. */
const struct shell_config_key *shell_config_at(int idx);
const struct shell_config_key *shell_config_find(const char *name);

/* ---- shell.c ---- */
/* sh->engine, created (engine_init defaults) on first use. */
struct engine *shell_engine(struct shell *sh);
/* Fresh state (no engine); echo and prompt on if interactive (a terminal
 * types into it), then plat_config_file() measured (plat_attest_extend,
 * "llmk config <sha256 hex>", also when there is none) and, if that
 * succeeded, applied (which may change them). */
void shell_init(struct shell *sh, bool interactive);
/* Prompt loop until end of input (plat_getc() == -1) or sh->quit; returns the
 * last command's status. */
int shell_run(struct shell *sh);
/* The machine is going down: forget every key first (shell/cmd_sys.c). */
void shell_going_down(struct shell *sh);
/* Zeroize and free serve's TLS key (shell/cmd_serve.c). */
void shell_serve_forget(struct shell *sh);
/* After shell_init (and the host's -c commands): `serve --port N` when
 * llmk.cfg said `serve N`; returns when serving stops. */
void shell_serve_at_boot(struct shell *sh);
/* The kernel's and host's entry: shell_init, shell_run, then plat_poweroff()
 * (the host exits 0 at end of stdin). Interactive. */
__attribute__((noreturn)) void shell_main(void);
/* Split and run one command line; blank lines and lines starting with '#'
 * do nothing. Returns the command's result (errors are already printed). */
int shell_exec_line(struct shell *sh, const char *line);
/* Apply config text, len bytes of "KEY VALUE" lines; errors name the line
 * (a NUL byte is one: the file is text). Returns the first error or 0.
 * what names the source in errors ("llmk.cfg"). */
int shell_config_apply(struct shell *sh, const char *text, size_t len, const char *what);
/* Measure len bytes of configuration (text may be NULL when len is 0) into
 * sh->config_digest and the attestation registers, before it is used; one
 * error line and the error when the extend fails (then apply none of it). */
int shell_config_measure(struct shell *sh, const char *text, size_t len);
/* plat_boot_file, measured before the caller uses it: SHA-256 of the bytes
 * read, extended as "llmk boot-file NAME <hex>" (vTPM PCR 23, TDX RTMR3,
 * the event log). The length, or the error after one line "error: what
 * 'NAME': why" (buf zeroized when the extend failed). */
int shell_boot_file(struct shell *sh, const char *what, const char *name, void *buf,
		    size_t cap);

/* Next input byte: typeahead first, then plat_getc(). */
int shell_getc(struct shell *sh);
/* Non-blocking: true when the user pressed Ctrl-C since the command started.
 * Other bytes are kept as typeahead for the following lines. */
bool shell_poll_cancel(struct shell *sh);
/* Does the typeahead (what shell_poll_cancel kept) hold a whole line? Then
 * reading it with shell_getc does not wait: a command that runs long
 * (serve) runs the lines typed meanwhile. */
bool shell_typeahead_line(struct shell *sh);

/* Print "error: <msg>\n" and return err (a negative LLMK_E* code). */
int shell_err(struct shell *sh, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Check argc is in [min, max] (max -1 = no limit); else print
 * "error: <cmd>: missing argument (usage: ...)" / "too many arguments" and
 * return -LLMK_EINVAL. */
int shell_check_argc(struct shell *sh, int argc, char **argv, int min, int max);
/* shell_parse_* (args.c), printing "error: <what>: bad number 'x'" or "... out of range
 * [lo, hi]" and returning -LLMK_EINVAL / -LLMK_ERANGE. */
int shell_arg_u64(struct shell *sh, const char *what, const char *s, uint64_t lo, uint64_t hi,
		  uint64_t *out);
int shell_arg_f64(struct shell *sh, const char *what, const char *s, double lo, double hi,
		  double *out);
/* A disk index that exists; else "error: no disk N (M disks: 0..M-1)". */
int shell_arg_disk(struct shell *sh, const char *s, int *disk);
/* "1.50 GiB" style size into buf; returns buf. */
const char *shell_human_size(uint64_t bytes, char *buf, size_t n);

/* ---- text.c: strings from files, safe for the terminal ---- */
/* s[0..len) (a GGUF string, a disk id) as printable characters: controls,
 * non-UTF-8 bytes and invisible direction marks become '?', and a string
 * longer than buf ends "..."; returns buf. Every string from a file goes
 * through this (or shell_write_text) before it is printed. */
const char *shell_clean(const char *s, size_t len, char *buf, size_t cap);
/* Generated text as it streams: ASCII controls other than \n \t \r become '?'. */
void shell_write_text(const char *s, size_t n);

/* ---- disk.c: streaming reads and what a disk holds ---- */
#define SHELL_DISK_CHUNK (1u << 20) /* bytes per asynchronous request */
#define SHELL_DISK_DEPTH 8          /* requests in flight */
/*
 * Read [off, off+len) of disk in order and hand every byte to consume (may
 * be NULL: just read), SHELL_DISK_DEPTH async requests of SHELL_DISK_CHUNK
 * in flight; an unaligned head and tail go through plat_disk_read. Stops
 * early with 0 when deadline_ns (plat_time_ns() value, 0 = none) passes, or
 * with -LLMK_ECANCEL on Ctrl-C. *done = bytes consumed. No printing.
 */
int shell_disk_stream(struct shell *sh, int disk, uint64_t off, uint64_t len,
		      uint64_t deadline_ns, void (*consume)(void *ctx, const void *p, size_t n),
		      void *ctx, uint64_t *done);
/* The same without a deadline, depth (1..SHELL_DISK_DEPTH) requests of chunk
 * bytes (a multiple of 512; -LLMK_EINVAL otherwise) in flight: a smaller
 * ring for reads beside a loaded model (the model's hash at load). */
int shell_disk_stream_ring(struct shell *sh, int disk, uint64_t off, uint64_t len, size_t chunk,
			   int depth, void (*consume)(void *ctx, const void *p, size_t n), void *ctx,
			   uint64_t *done);
/* Sequential read speed: whole passes over the disk from byte 0 until
 * max_bytes or max_ns; *bytes read in *ns. 0, -LLMK_ECANCEL or the error. */
int shell_disk_bench(struct shell *sh, int disk, uint64_t max_bytes, uint64_t max_ns,
		     uint64_t *bytes, uint64_t *ns);
/* Print indented lines saying what the disk holds (GGUF header, sealed image):
 * 0, or for a GGUF header that does not parse one error line and its code. */
int shell_disk_describe(struct shell *sh, int disk, const struct plat_disk_info *in);
/*
 * cmd_seal.c: `disks` asks this before trying GGUF. Given the disk's first
 * n (<= 512) bytes, it prints indented lines and returns true if the disk
 * holds a sealed image; sh gives it the loaded key.
 */
bool shell_describe_sealed(struct shell *sh, int disk, const struct plat_disk_info *in,
			   const uint8_t *head, size_t n);

/* ---- line.c: the line editor ---- */
void shell_line_reset(struct shell_line *l);
/* Feed one input byte. Echoes (if sh->echo), handles backspace/DEL, Ctrl-C,
 * Ctrl-U, Up/Down (history, when echoing), CR/LF/CRLF; at end of line returns
 * DONE or ERROR (error printed). */
enum shell_line_event shell_line_feed(struct shell *sh, int c);

/* ---- args.c: the argument splitter and numbers ---- */
/*
 * Split line into words: runs of non-blanks (space, tab), or double-quoted
 * strings with the escapes \n \t \r \\ \" \xHH (adjacent pieces join, as in
 * sh: a"b c" is one word). Words go into out (NUL-separated, cap bytes) and
 * argv (max entries + a NULL). Returns argc, or -LLMK_EINVAL with one
 * message in err (no "error: " prefix), e.g. "unterminated quote (opened at
 * column 7)".
 */
int shell_split(const char *line, char *out, size_t cap, char **argv, int max, char *err,
		size_t errlen);
/* Parse numbers: decimal or 0x hex, u64 with optional K/M/G/T suffix (x1024^n).
 * 0 or -LLMK_EINVAL (not a number) / -LLMK_ERANGE (overflow). No printing. */
int shell_parse_u64(const char *s, uint64_t *out);
int shell_parse_i64(const char *s, int64_t *out);
int shell_parse_f64(const char *s, double *out); /* [-]digits[.digits][e[-]N] */

#endif
