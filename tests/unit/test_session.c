/*
 * tests/unit/test_session.c — the confidential session in the guest
 * (shell/session.c, shell/cmd_session.c), driven as the host client drives
 * it: `session open` with a nonce and a client key, the evidence read back
 * for the report data and the session key, then input frames on the
 * console and output frames opened. Evidence from the SEV-SNP simulator
 * (provider snp, simulated); models from tools/host/mkmodel.h, so nothing
 * skips. What the host sees is the captured console: it must hold neither
 * the prompts, the answers nor a key; refused frames close the session
 * with one error line and the shell keeps serving; the close zeroizes.
 */
#define _GNU_SOURCE /* memmem */
#include "test.h"
#include "shell_fixture.h"

#include <stdlib.h>

#include "../../llm/engine.h"
#include "../../llm/seal.h"
#include "../../shell/chan.h"
#include "../../shell/cmd_seal.h"
#include "../../shell/evidence.h"
#include "../../shell/keywrap.h"
#include "../../shell/session.h"
#include "../../shell/shell.h"
#include "../../tools/host/host.h"
#include "../../tools/writer/mkmodel.h"
#include "../../tools/writer/seal_write.h"
#include "../../tools/host/snp_sim.h"
#include "../../tools/verify/tpm_credential.h"
#include "../../tools/verify/verify.h"
#include "../../tools/writer/forge_vtpm.h"
#include "vtpm.h"

static struct shell_fixture fx;

static const uint8_t model_key[32] = {0x42, 0x13, 0x37, 0x99, 7, 6, 5, 4, 3, 2, 1};
static const char model_key_hex[] =
	"4213379907060504030201000000000000000000000000000000000000000000";

/* It reads whole allocations, the redzones the sanitizer build poisons
 * inside them included (llm/mem.h). */
__attribute__((no_sanitize_address)) static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* disk 0: a synthetic model with a chat template; disk 1: it sealed under
 * model_key (llm/seal.h, as tools/seal.c writes it). */
static void make_disks(char *plain, char *sealed, size_t n)
{
	struct mkm_spec s;
	struct seal_ctx c;
	char err[256];
	uint8_t rnd[SEAL_RANDOM_SIZE] = {9}, d[32];
	size_t len;

	snprintf(plain, n, "%s/session_model.gguf", test_tmpdir());
	snprintf(sealed, n, "%s/session_model.sealed", test_tmpdir());
	mkm_defaults(&s);
	s.name = "session";
	s.chat_template = "<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>";
	CHECK_EQ_INT(mkm_write(&s, plain, err, sizeof err), 0);
	uint8_t *p = test_read_file(plain, &len);
	br_sha256_context h;
	br_sha256_init(&h);
	br_sha256_update(&h, p, len);
	br_sha256_out(&h, d);
	CHECK_EQ_INT(seal_create(&c, model_key, len, d, SEAL_CHUNK_DEFAULT, rnd, err, sizeof err), 0);
	uint8_t *im = calloc(1, c.hdr.image_size);
	for (uint64_t i = 0; i < c.hdr.n_chunks; i++) {
		uint8_t *ch = im + seal_chunk_offset(&c, i);
		size_t off = (size_t)(i * SEAL_CHUNK_DEFAULT);
		size_t k = len - off < SEAL_CHUNK_DEFAULT ? len - off : SEAL_CHUNK_DEFAULT;
		memcpy(ch, p + off, k);
		seal_encrypt_chunk(&c, i, ch, im + SEAL_HEADER_SIZE + i * SEAL_TAG_SIZE);
	}
	seal_finish(&c, im + SEAL_HEADER_SIZE, c.hdr.data_off - SEAL_HEADER_SIZE, im);
	FILE *f = fopen(sealed, "wb");
	CHECK(f && fwrite(im, 1, c.hdr.image_size, f) == c.hdr.image_size);
	if (f)
		fclose(f);
	seal_close(&c);
	free(im);
	free(p);
}

/* A fresh guest shell over both disks, the console captured; cfg as llmk.cfg. */
static void guest(const char *cfg)
{
	char plain[600], sealed[600];

	setenv("LLMK_SNP_SIM", "1", 1);
	snp_sim_provider_reset();
	make_disks(plain, sealed, sizeof plain);
	if (fx.sh)
		fixture_close(&fx);
	CHECK_EQ_INT(fixture_open(&fx, (const char *[]){plain, sealed, NULL}, cfg), 0);
}

struct client {
	struct chan ch;
	uint8_t priv[32], pub[32];
};

/* The client's key pair: the default client's (seed 1), or another. */
static void client_keys(struct client *c, uint8_t seed)
{
	for (int i = 0; i < 32; i++)
		c->priv[i] = (uint8_t)(0x31 * i + seed);
	CHECK_EQ_INT(keywrap_public(c->priv, c->pub), 0);
}

/* `session open` as the client sends it, with claimed as --client-key (the
 * client's own public key, or one whose private half it does not hold);
 * the channel keyed from the evidence's report data and session key and
 * the client's private key. 0, or the command's status. */
static int client_open_claiming(struct client *c, const uint8_t claimed[32])
{
	char line[300], nonce[33] = "00112233445566778899aabbccddeeff", key[65];
	struct evidence_rec recs[64];
	char err[160];

	for (int i = 0; i < 32; i++)
		snprintf(key + 2 * i, 3, "%02x", claimed[i]);
	snprintf(line, sizeof line, "session open --nonce %s --client-key %s --provider snp", nonce,
		 key);
	int r;
	fixture_run(&fx, line, &r);
	if (r)
		return r;
	char *ev = strstr(fx.out.buf, "session-evidence: ");
	CHECK(ev != NULL);
	if (!ev)
		return -1;
	ev += 18;
	size_t n = strcspn(ev, "\n");
	uint8_t *b = malloc(n);
	long k = b64_decode(ev, n, b, n);
	CHECK(k > 0);
	int nr = evidence_parse(b, (size_t)k, recs, 64, err, sizeof err);
	CHECK(nr > 0);
	const struct evidence_rec *rd = evidence_find(recs, nr, ATTEST_REC_REPORT_DATA, NULL),
				  *pk = evidence_find(recs, nr, ATTEST_REC_PUBKEY, NULL),
				  *no = evidence_find(recs, nr, ATTEST_REC_NONCE, NULL);
	CHECK(rd && pk && no && no->len == 16 && rd->len == 64 && pk->len == 32);
	CHECK(evidence_find(recs, nr, ATTEST_REC_SNP_REPORT, NULL) != NULL);
	r = rd && pk ? chan_init(&c->ch, false, c->priv, pk->val, rd->val, claimed, pk->val, NULL,
				 0) : -1;
	CHECK_EQ_INT(r, 0);
	free(b);
	return r;
}

static int client_open(struct client *c)
{
	client_keys(c, 1);
	return client_open_claiming(c, c->pub);
}

/* Input frames for the lines of text (each with its newline), appended to
 * *buf; type 'C' for a close. */
static void frame_in(struct client *c, char **buf, size_t *n, uint8_t type, const char *text)
{
	char line[CHAN_LINE_MAX];
	long k = chan_seal(&c->ch, type, text, strlen(text), line, sizeof line);
	CHECK(k > 0);
	*buf = realloc(*buf, *n + (size_t)k + 2);
	memcpy(*buf + *n, line, (size_t)k);
	(*buf)[*n + (size_t)k] = '\n';
	*n += (size_t)k + 1;
}

/* No input frames: the next frame_in starts the buffer again. */
static void frames_clear(char **buf, size_t *n)
{
	free(*buf);
	*buf = NULL;
	*n = 0;
}

/* A fresh guest (no llmk.cfg) with a session open as c. */
static void guest_in_session(struct client *c)
{
	guest(NULL);
	CHECK_EQ_INT(client_open(c), 0);
}

/* guest_in_session, and the client's first input frames in *buf: unseal
 * with model_key, then load the sealed disk. */
static void guest_unseal_and_load(struct client *c, char **buf, size_t *n)
{
	char line[128];

	guest_in_session(c);
	snprintf(line, sizeof line, "unseal %s\n", model_key_hex);
	frame_in(c, buf, n, CHAN_INPUT, line);
	frame_in(c, buf, n, CHAN_INPUT, "load 1\n");
}

/* Run the shell over input until it ends; the console as the host saw it
 * in fx.out (from empty). */
static void run_input(const char *in, size_t n)
{
	capture_reset(&fx.out);
	host_set_input(in, n);
	shell_run(fx.sh);
	host_set_input(NULL, 0);
}

/* What the client makes of the captured console: the output frames'
 * text, the frame types in order, and the text outside frames. */
struct seen {
	char out[65536], types[4096], clear[4096];
	uint16_t len[4096]; /* each frame's line length, as types */
	int32_t status[64];
	int n_status;
	bool refused;
};

static void client_read(struct client *c, struct seen *s)
{
	char *p = fx.out.buf, err[240];
	uint8_t data[CHAN_DATA_MAX], type;
	size_t on = 0, tn = 0, cn = 0;

	memset(s, 0, sizeof *s);
	while (*p) {
		size_t n = strcspn(p, "\n");
		if (chan_is_frame(p, n)) {
			long k = chan_open(&c->ch, p, n, &type, data, err, sizeof err);
			if (k < 0) {
				s->refused = true;
				fprintf(stderr, "  client: %s\n", err);
			} else {
				if (tn + 1 < sizeof s->types) {
					s->len[tn] = (uint16_t)n;
					s->types[tn++] = (char)type;
				}
				if (type == CHAN_OUTPUT && on + (size_t)k < sizeof s->out) {
					memcpy(s->out + on, data, (size_t)k);
					on += (size_t)k;
				}
				if (type == CHAN_PROMPT && k == 4 && s->n_status < 64)
					s->status[s->n_status++] = (int32_t)((uint32_t)data[0] |
						(uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
						(uint32_t)data[3] << 24);
			}
		} else if (n && cn + n + 1 < sizeof s->clear) {
			memcpy(s->clear + cn, p, n);
			cn += n;
			s->clear[cn++] = '\n';
		}
		p += n + (p[n] == '\n');
	}
}

/* One round: the frames in in[n] run, what the client sees of them in s. */
static void exchange(struct client *c, const char *in, size_t n, struct seen *s)
{
	run_input(in, n);
	client_read(c, s);
}

/* One round of a single frame of type with text. */
static void send_frame(struct client *c, uint8_t type, const char *text, struct seen *s)
{
	char *in = NULL;
	size_t n = 0;

	frame_in(c, &in, &n, type, text);
	exchange(c, in, n, s);
	free(in);
}

TEST(session_frames_every_line_and_the_host_sees_no_plaintext)
{
	static struct client c;
	static struct seen s;
	char *in = NULL;
	size_t n = 0;

	guest_in_session(&c);
	CHECK(strstr(fx.out.buf, "session: provider snp") != NULL);
	CHECK(strstr(fx.out.buf, "  session key  ") != NULL);
	frame_in(&c, &in, &n, CHAN_INPUT, "load 0\n");
	frame_in(&c, &in, &n, CHAN_INPUT, "infer \"the password is swordfish\" -n 12 --temp 0\n");
	frame_in(&c, &in, &n, CHAN_INPUT, "chat \"my pin is 4711\" -n 6 --temp 0\n");
	frame_in(&c, &in, &n, CHAN_INPUT, "session\n");
	exchange(&c, in, n, &s);
	CHECK(!s.refused);
	CHECK_EQ_INT(s.clear[0], 0); /* nothing at all in clear */
	CHECK(strstr(s.out, "loaded disk 0") != NULL);
	CHECK(strstr(s.out, "session open: snp, simulated evidence; frames ") != NULL);
	CHECK(s.types[0] == 'P');
	CHECK_EQ_INT(s.n_status, 5);
	for (int i = 0; i < s.n_status; i++)
		CHECK_EQ_INT(s.status[i], 0);
	/* the answers are in the frames, and none of it in what the host saw */
	const char *ans = strstr(s.out, "resident");
	CHECK(ans != NULL && strlen(ans) > 40);
	CHECK(strstr(fx.out.buf, "swordfish") == NULL && strstr(fx.out.buf, "4711") == NULL);
	CHECK(strstr(fx.out.buf, "loaded disk") == NULL && strstr(fx.out.buf, "resident") == NULL);
	char piece[24];
	snprintf(piece, sizeof piece, "%.20s", ans + 20);
	CHECK(strstr(fx.out.buf, piece) == NULL);
	struct engine *e = fx.sh->engine;
	CHECK(e->n_past > 0 && e->n_msgs == 2);

	/* the client closes: a close frame back, then the wipe, in clear */
	send_frame(&c, CHAN_CLOSE, "", &s);
	CHECK(strchr(s.types, 'C') != NULL);
	CHECK_STR(s.clear, "session closed (by the client)\n");
	CHECK_EQ_INT(e->n_past, 0);
	CHECK_EQ_INT(e->n_msgs, 0);
	CHECK(all_zero(e->kv.k, e->kv.bytes) && all_zero(e->kv.v, e->kv.bytes));
	CHECK(all_zero(e->chat_buf, e->chat_cap) && all_zero(e->text, e->text_cap));
	CHECK(all_zero(e->smp.cand, e->smp.n_vocab * sizeof *e->smp.cand));
	CHECK(all_zero(&fx.sh->history, sizeof fx.sh->history));
	CHECK(all_zero(fx.sh->args, sizeof fx.sh->args));
	struct session_state *st = fx.sh->session;
	CHECK(st->state == SESSION_NONE && all_zero(&st->ch.send.key, 32) &&
	      all_zero(st->plain, sizeof st->plain));
	CHECK(e->loaded); /* a plain model stays; its conversation does not */

	/* clear text again; a new session reuses no KV of the last one */
	run_input("version\n", 8);
	CHECK(strstr(fx.out.buf, "llmk ") != NULL);
	CHECK_EQ_INT(client_open(&c), 0);
	frames_clear(&in, &n);
	frame_in(&c, &in, &n, CHAN_INPUT, "infer \"the password is swordfish\" -n 2 --temp 0\n");
	frame_in(&c, &in, &n, CHAN_INPUT, "stats\n");
	exchange(&c, in, n, &s);
	CHECK(strstr(s.out, "(0 reused from the cache)") != NULL);
	free(in);
	fixture_close(&fx);
}

/* Issue 27: with session-pace on, every output frame carries 64 bytes
 * (padded), on the ticks, however the text comes; the answer is the same
 * as unpaced, and the prompt frame follows the last of it. */
TEST(session_pace_sends_output_in_frames_of_one_size)
{
	static struct client c;
	static struct seen s;
	static const char infer[] = "infer \"the password is swordfish\" -n 12 --temp 0\n";
	char *in = NULL;
	size_t n = 0;
	int p[8], np = 0, paced = 0, unpaced = 0;

	guest_in_session(&c);
	frame_in(&c, &in, &n, CHAN_INPUT, "load 0\n");
	frame_in(&c, &in, &n, CHAN_INPUT, "config session-pace 2\n");
	frame_in(&c, &in, &n, CHAN_INPUT, infer);
	frame_in(&c, &in, &n, CHAN_INPUT, "config session-pace 0\n");
	frame_in(&c, &in, &n, CHAN_INPUT, infer);
	exchange(&c, in, n, &s);
	CHECK(!s.refused);
	CHECK_EQ_INT(s.clear[0], 0);
	CHECK_EQ_INT(s.n_status, 6);
	for (int i = 0; i < s.n_status; i++)
		CHECK_EQ_INT(s.status[i], 0);
	for (int i = 0; s.types[i] && np < 8; i++)
		if (s.types[i] == CHAN_PROMPT)
			p[np++] = i;
	CHECK_EQ_INT(np, 6);
	/* the paced infer: between the 3rd and 4th prompts, one size */
	for (int i = np == 6 ? p[2] + 1 : 0; np == 6 && i < p[3]; i++) {
		CHECK_EQ_INT(s.types[i], CHAN_OUTPUT);
		CHECK_EQ_INT(s.len[i], CHAN_LINE_LEN(64));
		paced++;
	}
	/* unpaced, a frame a token's piece */
	for (int i = np == 6 ? p[4] + 1 : 0; np == 6 && i < p[5]; i++)
		unpaced++;
	CHECK(paced >= 1 && unpaced > 10 && paced < unpaced); /* coalesced on the ticks */
	/* the same answer, paced or not */
	const char *a1 = strchr(s.out, '\n'), *a2 = a1 ? strchr(a1 + 1, '\n') : NULL;
	CHECK(a1 && a2 && a2 - a1 > 8 && strncmp(a1, a2, (size_t)(a2 - a1)) == 0);
	free(in);
	fixture_close(&fx);
}

/* One line of clear text: "error: session: <why>...; session closed". */
static bool closed_for(const struct seen *s, const char *why)
{
	return fixture_count(s->clear, "error: ") == 1 && strstr(s->clear, "error: session: ") &&
	       strstr(s->clear, why) && strstr(s->clear, "; session closed\n");
}

TEST(session_refuses_altered_replayed_and_clear_input_and_keeps_serving)
{
	static struct client c;
	static struct seen s;
	char *in = NULL;
	size_t n = 0;

	guest_in_session(&c);
	/* one character of an input frame changed on the way */
	frame_in(&c, &in, &n, CHAN_INPUT, "load 0\n");
	in[10] = in[10] == 'A' ? 'B' : 'A';
	exchange(&c, in, n, &s);
	CHECK(closed_for(&s, "frame 0 from the client does not authenticate"));
	CHECK(!fx.sh->engine || !((struct engine *)fx.sh->engine)->loaded);
	run_input("version\n", 8);
	CHECK(strstr(fx.out.buf, "llmk ") != NULL);

	/* a frame replayed */
	CHECK_EQ_INT(client_open(&c), 0);
	frames_clear(&in, &n);
	frame_in(&c, &in, &n, CHAN_INPUT, "version\n");
	size_t one = n;
	in = realloc(in, 2 * n);
	memcpy(in + n, in, one);
	n += one;
	/* and the client's next frame, sent before it heard of the close,
	 * comes in clear: dropped without a word (the next client could take
	 * an error line for its own refusal) */
	frame_in(&c, &in, &n, CHAN_INPUT, "version\n");
	exchange(&c, in, n, &s);
	CHECK(strstr(s.out, "llmk ") != NULL);
	CHECK(closed_for(&s, "frame 0 from the client was replayed (expected frame 1)"));
	CHECK_EQ_INT(fx.sh->last_status, -LLMK_EAUTH);

	/* a line that is not a frame: refused, and not run */
	CHECK_EQ_INT(client_open(&c), 0);
	exchange(&c, "load 0\n", 7, &s);
	CHECK(closed_for(&s, "a line that is not a frame came in"));
	CHECK(!fx.sh->engine || !((struct engine *)fx.sh->engine)->loaded);

	/* text outside the session while a command runs: the command stops,
	 * and nothing of its output leaves, framed or in clear */
	CHECK_EQ_INT(client_open(&c), 0);
	send_frame(&c, CHAN_INPUT, "load 0\n", &s);
	CHECK(!s.refused && strstr(s.out, "loaded disk 0") != NULL);
	frames_clear(&in, &n);
	frame_in(&c, &in, &n, CHAN_INPUT, "infer \"a long story\" -n 200 --temp 0\n");
	in = realloc(in, n + 9);
	memcpy(in + n, "garbage\n", 8);
	n += 8;
	exchange(&c, in, n, &s);
	CHECK(closed_for(&s, "a line that is not a frame came in"));
	CHECK_EQ_INT(fixture_count(s.clear, "\n"), 1);
	CHECK(fx.sh->engine->run.n_gen < 200);

	/* still serving: a session opens and runs */
	CHECK_EQ_INT(client_open(&c), 0);
	send_frame(&c, CHAN_INPUT, "version\n", &s);
	CHECK(!s.refused && strstr(s.out, "build id") != NULL);
	free(in);
	fixture_close(&fx);
}

TEST(session_ctrl_c_in_a_frame_stops_the_command_and_the_session_goes_on)
{
	static struct client c;
	static struct seen s;
	char *in = NULL;
	size_t n = 0;

	guest_in_session(&c);
	/* one round per line, as the client sends them: Ctrl-C comes while
	 * the command runs (input given at once would be read ahead by load) */
	send_frame(&c, CHAN_INPUT, "load 0\n", &s);
	frame_in(&c, &in, &n, CHAN_INPUT, "infer \"a long story\" -n 200 --temp 0\n");
	frame_in(&c, &in, &n, CHAN_INPUT, "\x03");
	exchange(&c, in, n, &s);
	CHECK(!s.refused && s.clear[0] == 0);
	CHECK(fx.sh->engine->run.n_gen < 200);
	CHECK(strstr(s.out, "error: infer: cancelled") != NULL);
	CHECK(s.n_status == 2 && s.status[1] == -LLMK_ECANCEL);
	send_frame(&c, CHAN_INPUT, "version\n", &s);
	CHECK(!s.refused && strstr(s.out, "build id") != NULL);
	free(in);
	fixture_close(&fx);
}

TEST(session_open_refuses_bad_requests_with_one_line)
{
	static const char *const bad[] = {
		"session open",
		"session open --nonce 0g --client-key 00",
		"session open --nonce 00",
		"session open --nonce 00 --client-key 1234",
		"session open --nonce 00 --client-key 0000000000000000000000000000000000000000000000000000000000000000 --provider snp",
		"session open --nonce 00 --client-key 0900000000000000000000000000000000000000000000000000000000000000 --provider none",
		"session open --nonce 00 --client-key 0900000000000000000000000000000000000000000000000000000000000000 --provider nope",
		"session open --bogus",
		"session close",
		"session frobnicate",
		"session activate AAAAAAAA", /* no session waits for a credential */
	};
	guest(NULL);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int r;
		fixture_run(&fx, bad[i], &r);
		CHECK(r < 0);
		if (fixture_count(fx.out.buf, "\n") != 1 || strncmp(fx.out.buf, "error: session", 14))
			fprintf(stderr, "  '%s' printed: %s", bad[i], fx.out.buf);
		CHECK_EQ_INT(fixture_count(fx.out.buf, "\n"), 1);
		CHECK(!strncmp(fx.out.buf, "error: session", 14));
	}
	CHECK(strstr(fx.out.buf, "no session is waiting for a credential") != NULL);
	fixture_close(&fx);
}

TEST(session_open_is_refused_on_a_console_its_owner_reads_plain)
{
	int r;

	guest(NULL);
	fx.sh->in = &shell_input_plain;
	fixture_run(&fx, "session open --nonce 00 --client-key "
			 "0900000000000000000000000000000000000000000000000000000000000000", &r);
	CHECK(r == -LLMK_ENOTSUP);
	CHECK_EQ_INT(fixture_count(fx.out.buf, "\n"), 1);
	CHECK(strstr(fx.out.buf, "error: session open: this console cannot carry a session") ==
	      fx.out.buf);
	fixture_close(&fx);
}

TEST(session_require_session_refuses_commands_outside_a_session)
{
	static struct client c;
	static struct seen s;
	char *in = NULL;
	size_t n = 0;
	int r;

	guest("require-session on\n");
	fixture_run(&fx, "load 0", &r);
	CHECK_EQ_INT(r, -LLMK_EAUTH);
	CHECK_EQ_INT(fixture_count(fx.out.buf, "error: "), 1);
	CHECK(strstr(fx.out.buf, "load: refused: require-session is on") != NULL);
	CHECK(!fx.sh->engine || !((struct engine *)fx.sh->engine)->loaded);
	CHECK_EQ_INT(shell_exec_line(fx.sh, "version"), 0);
	CHECK_EQ_INT(shell_exec_line(fx.sh, "help"), 0);
	CHECK_EQ_INT(shell_exec_line(fx.sh, "session"), 0);
	CHECK_EQ_INT(shell_exec_line(fx.sh, "config require-session off"), -LLMK_EAUTH);
	CHECK_EQ_INT(shell_exec_line(fx.sh, "unseal " "00"), -LLMK_EAUTH);

	CHECK_EQ_INT(client_open(&c), 0);
	frame_in(&c, &in, &n, CHAN_INPUT, "load 0\n");
	frame_in(&c, &in, &n, CHAN_INPUT, "config require-session off\n");
	frame_in(&c, &in, &n, CHAN_INPUT, "session close\n");
	exchange(&c, in, n, &s);
	CHECK(strstr(s.out, "loaded disk 0") != NULL);
	CHECK(strstr(s.out, "error: config require-session: stays on until reboot") != NULL);
	CHECK(strstr(s.out, "session closed\n") != NULL);
	CHECK_EQ_INT(s.status[1], 0);
	CHECK(s.status[2] < 0);
	CHECK(strchr(s.types, 'C') != NULL);
	CHECK_STR(s.clear, "session closed\n");
	fixture_run(&fx, "infer \"x\" -n 2", &r);
	CHECK_EQ_INT(r, -LLMK_EAUTH);
	free(in);
	fixture_close(&fx);
}

TEST(session_unseal_takes_a_key_for_the_session_only)
{
	static struct client c;
	static struct seen s;
	char *in = NULL;
	size_t n = 0;

	guest_unseal_and_load(&c, &in, &n);
	frame_in(&c, &in, &n, CHAN_INPUT, "info\n");
	frame_in(&c, &in, &n, CHAN_INPUT, "infer \"hello\" -n 4 --temp 0\n");
	exchange(&c, in, n, &s);
	CHECK(strstr(s.out, "released over an attested session (snp, simulated), key id ") != NULL);
	CHECK(strstr(s.out, "loaded disk 1") != NULL);
	CHECK(strstr(s.out, "sealed         AES-256-GCM") != NULL);
	CHECK(strstr(s.out, "insecure") == NULL);
	for (int i = 0; i < s.n_status; i++)
		CHECK_EQ_INT(s.status[i], 0);
	CHECK(strstr(fx.out.buf, model_key_hex) == NULL && strstr(fx.out.buf, "42133799") == NULL);
	/* the typed key is in no buffer the shell keeps */
	CHECK(memmem(&fx.sh->history, sizeof fx.sh->history, "4213", 4) == NULL);
	CHECK(memmem(fx.sh->line.buf, sizeof fx.sh->line.buf, "4213", 4) == NULL);
	CHECK(shell_seal_keysrc(fx.sh) != NULL);

	frames_clear(&in, &n);
	frame_in(&c, &in, &n, CHAN_CLOSE, "");
	run_input(in, n);
	/* the key and the sealed model's plaintext went with the session */
	CHECK(shell_seal_keysrc(fx.sh) == NULL);
	CHECK(!((struct engine *)fx.sh->engine)->loaded);
	CHECK_EQ_INT(((struct engine *)fx.sh->engine)->mem.used, 0);
	free(in);
	fixture_close(&fx);
}

TEST(session_keys_are_wiped_when_the_machine_goes_down_mid_session)
{
	static struct client c;
	static struct seen s;
	char *in = NULL;
	size_t n = 0;

	guest_unseal_and_load(&c, &in, &n);
	run_input(in, n);
	CHECK(shell_seal_keysrc(fx.sh) != NULL);
	struct session_state *st = fx.sh->session;
	CHECK(st->state == SESSION_OPEN && !all_zero(&st->ch.send.key, 32));

	/* poweroff and reboot call this before the platform goes down */
	shell_going_down(fx.sh);
	client_read(&c, &s);
	CHECK(strchr(s.types, 'C') != NULL); /* the client is told */
	CHECK_STR(s.clear, "session closed (the machine is going down)\n");
	CHECK(st->state == SESSION_NONE && all_zero(&st->ch.send.key, 32) &&
	      all_zero(&st->ch.recv.key, 32));
	CHECK(shell_seal_keysrc(fx.sh) == NULL);
	CHECK(!((struct engine *)fx.sh->engine)->loaded);
	free(in);
	fixture_close(&fx);
}

/* ---- vtpm: the session's keys wait for the client's credential ---- */

/* `session open --provider vtpm` as c; the evidence as the client's
 * verifier keeps it (the host build's has no firmware log, so vtpm_verify
 * is test_verify_vtpm.c's; the EK and AK are taken as it keeps them). */
static int vtpm_open(struct client *c, const char *nonce, uint8_t **ev, size_t *evn)
{
	char line[300], key[65];
	for (int i = 0; i < 32; i++)
		c->priv[i] = (uint8_t)(0x29 * i + 3);
	CHECK_EQ_INT(keywrap_public(c->priv, c->pub), 0);
	for (int i = 0; i < 32; i++)
		snprintf(key + 2 * i, 3, "%02x", c->pub[i]);
	snprintf(line, sizeof line, "session open --nonce %s --client-key %s --provider vtpm", nonce,
		 key);
	int r;
	fixture_run(&fx, line, &r);
	if (r)
		return r;
	CHECK(strstr(fx.out.buf, "session-activate: ") != NULL);
	char *e = strstr(fx.out.buf, "session-evidence: ");
	if (!e)
		return -1;
	e += 18;
	size_t n = strcspn(e, "\n");
	*ev = malloc(n);
	long k = b64_decode(e, n, *ev, n);
	*evn = k > 0 ? (size_t)k : 0;
	return k > 0 ? 0 : -1;
}

static void vtpm_bundle(const uint8_t *ev, size_t n, struct bundle *b)
{
	CHECK_EQ_INT(test_vtpm_bundle(ev, n, b), 0);
}

/* The client's credential for b as the line `session activate B64`; its
 * secret in secret[32]. */
static void activate_line(const struct bundle *b, uint8_t secret[32], char *line, size_t cap)
{
	static uint8_t cred[2048];
	size_t cn, sn;
	CHECK_EQ_INT(release_credential(b, cred, sizeof cred, &cn, secret, &sn), 0);
	CHECK(cn > 0 && sn == 32);
	int k = snprintf(line, cap, "session activate ");
	CHECK(b64_encode(cred, cn, line + k, cap - (size_t)k) > 0);
}

TEST(session_with_vtpm_evidence_opens_only_with_the_tpms_credential)
{
	char why[240];
	const char *vt = test_vtpm_path(why, sizeof why);
	if (!vt)
		SKIP("no swtpm: %s", why);
	static struct client c;
	static struct seen s;
	static char line[4096];
	struct bundle b;
	uint8_t *ev = NULL, secret[32];
	size_t evn = 0;
	char *old = vtpm_env_set(vt);
	guest(NULL);

	/* no channel before the credential: what follows is still clear text */
	CHECK_EQ_INT(vtpm_open(&c, "0123456789abcdef", &ev, &evn), 0);
	struct session_state *st = fx.sh->session;
	CHECK(st->state == SESSION_NONE && st->pending.on);
	vtpm_bundle(ev, evn, &b);
	activate_line(&b, secret, line, sizeof line);
	int r;
	fixture_run(&fx, line, &r);
	CHECK_EQ_INT(r, 0);
	CHECK(st->state == SESSION_OPEN && !st->pending.on && all_zero(&st->pending, sizeof st->pending));
	CHECK_EQ_INT(chan_init(&c.ch, false, c.priv, b.pubkey, b.report_data, c.pub, b.pubkey, secret,
			       32), 0);
	send_frame(&c, CHAN_INPUT, "version\n", &s);
	CHECK(!s.refused && strstr(s.out, "llmk ") != NULL && s.clear[0] == 0);
	send_frame(&c, CHAN_CLOSE, "", &s);
	CHECK(st->state == SESSION_NONE);

	/* a client keyed without the secret (what verifying the quote alone
	 * gave) cannot read the session */
	free(ev);
	CHECK_EQ_INT(vtpm_open(&c, "0123456789abcdee", &ev, &evn), 0);
	vtpm_bundle(ev, evn, &b);
	activate_line(&b, secret, line, sizeof line);
	fixture_run(&fx, line, &r);
	CHECK_EQ_INT(r, 0);
	CHECK_EQ_INT(chan_init(&c.ch, false, c.priv, b.pubkey, b.report_data, c.pub, b.pubkey, NULL,
			       0), 0);
	send_frame(&c, CHAN_INPUT, "version\n", &s);
	CHECK(s.refused);
	run_input("version\n", 8); /* the guest closed it: clear text again */
	CHECK(st->state == SESSION_NONE);

	/* another command between open and activate forgets the waiting session */
	free(ev);
	CHECK_EQ_INT(vtpm_open(&c, "0123456789abcded", &ev, &evn), 0);
	vtpm_bundle(ev, evn, &b);
	activate_line(&b, secret, line, sizeof line);
	fixture_run(&fx, "version", &r);
	CHECK(!st->pending.on && all_zero(&st->pending, sizeof st->pending));
	fixture_run(&fx, line, &r);
	CHECK(r < 0 && strstr(fx.out.buf, "no session is waiting") != NULL);
	free(ev);
	fixture_close(&fx);
	host_attest_reset();
	vtpm_env_restore(old);
}

/*
 * The relay that forges (issue "the host can still win", route 1): it
 * passes the client's `session open` on, takes the guest's genuine
 * evidence, and hands the client a bundle re-signed by a software AK over
 * the client's nonce and the relay's own X25519 key. The client's quote
 * checks pass; its credential, made for the forged AK, opens in no TPM:
 * the guest refuses it with one line, and the relay, which has the X25519
 * secret but not the credential's, cannot make a frame the client opens.
 */
TEST(session_through_a_relay_with_a_forged_vtpm_quote_gives_the_relay_nothing)
{
	char why[240];
	const char *vt = test_vtpm_path(why, sizeof why);
	if (!vt)
		SKIP("no swtpm: %s", why);
	static struct client c;
	static char line[4096];
	static uint8_t forged[EVIDENCE_MAX];
	struct bundle gb, fb;
	uint8_t *ev = NULL, secret[32];
	size_t evn = 0, fn = 0;
	char *old = vtpm_env_set(vt);
	guest(NULL);

	CHECK_EQ_INT(vtpm_open(&c, "fedcba9876543210", &ev, &evn), 0);
	vtpm_bundle(ev, evn, &gb);
	uint8_t rpriv[32] = {0x77, 0x12}, rpub[32];
	CHECK_EQ_INT(keywrap_public(rpriv, rpub), 0);
	CHECK_EQ_INT(forge_vtpm(ev, evn, (const uint8_t *)"\xfe\xdc\xba\x98\x76\x54\x32\x10", 8,
				rpub, "relay", 5, forged, sizeof forged, &fn, why, sizeof why), 0);
	vtpm_bundle(forged, fn, &fb);
	CHECK(memcmp(fb.pubkey, rpub, 32) == 0);
	/* the client's credential, for the forged AK */
	activate_line(&fb, secret, line, sizeof line);
	struct chan client;
	CHECK_EQ_INT(chan_init(&client, false, c.priv, rpub, fb.report_data, c.pub, rpub, secret, 32),
		     0);
	/* the relay passes it on: one error line, no session */
	int r;
	fixture_run(&fx, line, &r);
	CHECK(r < 0 && fixture_count(fx.out.buf, "\n") == 1 &&
	      strstr(fx.out.buf, "error: session: activation: ") == fx.out.buf);
	CHECK(fx.sh->session->state == SESSION_NONE && !fx.sh->session->pending.on);
	/* the relay keys itself as the guest would, without the secret: the
	 * client opens none of its frames */
	struct chan relay;
	char fr[CHAN_LINE_MAX], err[240];
	uint8_t type, data[CHAN_DATA_MAX];
	CHECK_EQ_INT(chan_init(&relay, true, rpriv, c.pub, fb.report_data, c.pub, rpub, NULL, 0), 0);
	long k = chan_seal(&relay, CHAN_PROMPT, "\0\0\0\0", 4, fr, sizeof fr);
	CHECK(k > 0);
	CHECK(chan_open(&client, fr, (size_t)k, &type, data, err, sizeof err) < 0);
	free(ev);
	fixture_close(&fx);
	host_attest_reset();
	vtpm_env_restore(old);
}

/* "evidence: <base64>" in text: a key wrapped to its PUBKEY for its report
 * data, as `verifier wrap` makes it, in base64 into b64. */
static bool wrap_for(const char *text, char *b64, size_t cap)
{
	struct evidence_rec recs[64];
	uint8_t blob[KEYWRAP_MAX], seed[32] = {5, 4, 3};
	size_t bn = 0;
	char err[160];
	const char *ev = strstr(text, "evidence: ");
	if (!ev)
		return false;
	ev += 10;
	size_t n = strcspn(ev, "\n");
	uint8_t *b = malloc(n);
	long k = b64_decode(ev, n, b, n);
	int nr = k > 0 ? evidence_parse(b, (size_t)k, recs, 64, err, sizeof err) : -1;
	const struct evidence_rec *rd = nr > 0 ? evidence_find(recs, nr, ATTEST_REC_REPORT_DATA, NULL)
					       : NULL,
				  *pk = nr > 0 ? evidence_find(recs, nr, ATTEST_REC_PUBKEY, NULL) : NULL;
	/* snp evidence: no TPM credential */
	bool ok = rd && pk && keywrap_wrap(pk->val, rd->val, model_key, seed, NULL, 0, NULL, 0, blob,
					   sizeof blob, &bn) == 0 &&
		  b64_encode(blob, bn, b64, cap) > 0;
	free(b);
	return ok;
}

/*
 * Issue 27 item 3: a key released with `unseal --wrapped` inside a user's
 * session belongs to that session. Before, it stayed after the close, and
 * the host (at the console, clear text, require-session off) could load
 * and run the sealed model with it.
 */
TEST(session_a_wrapped_key_released_inside_goes_with_the_session)
{
	static struct client c;
	static struct seen s;
	static char b64[512], line[600];
	int r;

	guest_in_session(&c);
	send_frame(&c, CHAN_INPUT, "attest --nonce 0a0b --provider snp\n", &s);
	CHECK(!s.refused && wrap_for(s.out, b64, sizeof b64));
	snprintf(line, sizeof line, "unseal --wrapped %s\n", b64);
	char *in = NULL;
	size_t n = 0;
	frame_in(&c, &in, &n, CHAN_INPUT, line);
	frame_in(&c, &in, &n, CHAN_INPUT, "load 1\n");
	frame_in(&c, &in, &n, CHAN_INPUT, "info\n");
	exchange(&c, in, n, &s);
	CHECK(!s.refused);
	CHECK(strstr(s.out, "released against attestation (snp, simulated) inside the session (snp, "
			    "simulated)") != NULL);
	CHECK(strstr(s.out, "loaded disk 1") != NULL);
	for (int i = 0; i < s.n_status; i++)
		CHECK_EQ_INT(s.status[i], 0);
	frames_clear(&in, &n);
	frame_in(&c, &in, &n, CHAN_CLOSE, "");
	run_input(in, n);
	free(in);

	/* the session ended: the key and the sealed model it opened are gone */
	CHECK(shell_seal_keysrc(fx.sh) == NULL);
	CHECK(!((struct engine *)fx.sh->engine)->loaded);
	CHECK_EQ_INT(((struct engine *)fx.sh->engine)->mem.used, 0);
	/* the host at the console: load and infer fail, one error line each */
	fixture_run(&fx, "load 1", &r);
	CHECK(r < 0 && fixture_count(fx.out.buf, "\n") == 1 &&
	      !strncmp(fx.out.buf, "error: ", 7));
	fixture_run(&fx, "infer \"hello\" -n 4 --temp 0", &r);
	CHECK(r < 0 && fixture_count(fx.out.buf, "\n") == 1 &&
	      !strncmp(fx.out.buf, "error: ", 7));
	fixture_run(&fx, "unseal", &r);
	CHECK(strstr(fx.out.buf, "no key loaded") != NULL);

	/* outside a session a released key is the console's, and says so */
	fixture_run(&fx, "attest --nonce 0c0d --provider snp", &r);
	CHECK_EQ_INT(r, 0);
	CHECK(wrap_for(fx.out.buf, b64, sizeof b64));
	snprintf(line, sizeof line, "unseal --wrapped %s", b64);
	fixture_run(&fx, line, &r);
	CHECK_EQ_INT(r, 0);
	fixture_run(&fx, "version", &r);
	CHECK(strstr(fx.out.buf, "model key released against attestation (snp, simulated) to the "
				 "console (no session)") != NULL);
	fixture_close(&fx);
}

/*
 * Issue 27 item 3: with config session-clients, a session opens only for a
 * listed client key (one error line, nothing else, for any other); a
 * listed public key in the hands of someone without its private half gets
 * evidence but no channel: the first frame fails on both sides.
 */
TEST(session_clients_refuses_unlisted_keys_and_an_impostor_gets_no_channel)
{
	static struct client owner, other, impostor;
	static struct seen s;
	static char cfg[200];
	int r;

	client_keys(&owner, 1);
	client_keys(&other, 2);
	client_keys(&impostor, 3);
	int k = snprintf(cfg, sizeof cfg, "require-session on\nsession-clients ");
	for (int i = 0; i < 32; i++)
		k += snprintf(cfg + k, sizeof cfg - (size_t)k, "%02x", owner.pub[i]);
	snprintf(cfg + k, sizeof cfg - (size_t)k, "\n");
	guest(cfg);

	/* an unlisted key: refused with one line, no evidence */
	r = client_open_claiming(&other, other.pub);
	CHECK_EQ_INT(r, -LLMK_EAUTH);
	CHECK_EQ_INT(fixture_count(fx.out.buf, "\n"), 1);
	CHECK(!strncmp(fx.out.buf, "error: session open: refused: client key ", 41));
	CHECK(strstr(fx.out.buf, "is not one of the 1 authorized (config session-clients)") != NULL);
	CHECK(fx.sh->session->state == SESSION_NONE);
	/* the list is fixed: the console can neither add to it nor clear it */
	CHECK_EQ_INT(shell_exec_line(fx.sh, "config session-clients "
				     "0900000000000000000000000000000000000000000000000000000000000000"),
		     -LLMK_EAUTH);

	/* the owner's public key, claimed by an impostor without its private key */
	CHECK_EQ_INT(client_open_claiming(&impostor, owner.pub), 0);
	send_frame(&impostor, CHAN_INPUT, "load 0\n", &s);
	CHECK(s.refused); /* the guest's prompt frame does not open for the impostor */
	CHECK(closed_for(&s, "frame 0 from the client does not authenticate"));
	CHECK(!fx.sh->engine || !((struct engine *)fx.sh->engine)->loaded);

	/* the owner opens a session and works */
	CHECK_EQ_INT(client_open(&owner), 0);
	send_frame(&owner, CHAN_INPUT, "config session-clients "
		   "0900000000000000000000000000000000000000000000000000000000000000\n", &s);
	CHECK(!s.refused && strstr(s.out, "error: config session-clients: already set (1 key); "
				      "fixed until reboot") != NULL);
	send_frame(&owner, CHAN_INPUT, "load 0\n", &s);
	CHECK(!s.refused && strstr(s.out, "loaded disk 0") != NULL);
	fixture_close(&fx);
}
