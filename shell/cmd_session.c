/*
 * shell/cmd_session.c — `session open|close|status` and the config key
 * require-session (docs/session.md). The channel is shell/chan.c, the
 * session's hooks into the shell shell/session.c.
 *
 * `session open --nonce HEX --client-key HEX [--provider P]`: a fresh
 * X25519 key pair for this session alone; evidence (shell_attest_bundle)
 * whose report data binds the client's nonce, the model digest, the
 * session's public key and the build id; the channel keyed from
 * X25519(session private, client key) and the transcript, then the private
 * key zeroized. The summary and the line "session-evidence: <base64>" go
 * out in clear; everything after is framed.
 */
#include "session.h"
#include "../llm/codec.h"
#include "cmd_attest.h"
#include "evidence.h"
#include "../kernel/attest.h"
#include "keywrap.h"

#include "../llm/seal.h"

#define CRED_MAX 2048 /* a TPM credential: ~330 bytes for an RSA 2048 EK */

/* HEX of min..max bytes into out; one error line naming opt. */
static int parse_hex(struct shell *sh, const char *opt, const char *h, size_t min, size_t max,
		     uint8_t *out, size_t *n)
{
	size_t len = strlen(h);
	if (len < 2 * min || len > 2 * max || len % 2)
		return shell_err(sh, -LLMK_EINVAL, "session open: %s: want %s%zu hex digits, got %zu",
				 opt, min == max ? "" : "an even count of 2 to ",
				 2 * max, len);
	for (size_t i = 0; i < len; i += 2) {
		int a = hex_digit(h[i]), b = hex_digit(h[i + 1]);
		if (a < 0 || b < 0)
			return shell_err(sh, -LLMK_EINVAL, "session open: %s: '%c' at position %zu is not "
					 "a hex digit", opt, a < 0 ? h[i] : h[i + 1],
					 a < 0 ? i + 1 : i + 2);
		out[i / 2] = (uint8_t)(a << 4 | b);
	}
	*n = len / 2;
	return 0;
}

/* With config session-clients set, only a listed key opens a session. The
 * list is public keys: a listed key proves nothing by itself, but the
 * session's keys are X25519(session private, client key), so only the
 * holder of its private half gets a working channel (docs/session.md). */
static int client_allowed(struct shell *sh, const uint8_t client[32])
{
	struct session_state *s = sh->session;
	char hex[65];

	if (!s || !s->n_clients)
		return 0;
	for (int i = 0; i < s->n_clients; i++)
		if (!memcmp(s->clients[i], client, 32))
			return 0;
	return shell_err(sh, -LLMK_EAUTH, "session open: refused: client key %.16s... is not one "
			 "of the %d authorized (config session-clients)", seal_hex(client, 32, hex),
			 s->n_clients);
}

static const char open_usage[] = "session open --nonce HEX --client-key HEX [--provider P]";

static int parse_open(struct shell *sh, int argc, char **argv, struct evidence_inputs *in,
		      uint8_t client[32], const char **provider)
{
	bool have_key = false;
	size_t n;

	for (int i = 2; i < argc; i++) {
		bool more = i + 1 < argc;
		const char *a = argv[i];
		if (!strcmp(a, "--nonce") && more) {
			if (parse_hex(sh, a, argv[++i], 1, EVIDENCE_NONCE_MAX, in->nonce, &in->nonce_len))
				return -LLMK_EINVAL;
		} else if (!strcmp(a, "--client-key") && more) {
			if (parse_hex(sh, a, argv[++i], 32, 32, client, &n))
				return -LLMK_EINVAL;
			have_key = true;
		} else if (!strcmp(a, "--provider") && more) {
			*provider = argv[++i];
		} else {
			return shell_err(sh, -LLMK_EINVAL, "session open: %s '%s' (usage: %s)",
					 more || a[0] != '-' ? "unknown argument" : "missing value after",
					 a, open_usage);
		}
	}
	if (!in->nonce_len || !have_key)
		return shell_err(sh, -LLMK_EINVAL, "session open: --nonce and --client-key are required "
				 "(usage: %s)", open_usage);
	return client_allowed(sh, client);
}

static int session_open(struct shell *sh, int argc, char **argv)
{
	struct session_state *s = session_state(sh);
	struct evidence_inputs in;
	struct plat_attest_info info;
	uint8_t client[32], priv[32], rd[64], *buf = NULL;
	const char *provider = NULL;
	char src[96], hex[129], how[48];
	size_t len;
	int r;

	if (sh->in != &shell_input_session)
		return shell_err(sh, -LLMK_ENOTSUP, "session open: this console cannot carry a "
				 "session (its owner reads it as is)");
	if (!s)
		return shell_err(sh, -LLMK_ENOMEM, "session open: no memory for the session state");
	if (s->state != SESSION_NONE)
		return shell_err(sh, -LLMK_EBUSY, "session open: a session is already open (session "
				 "close first)");
	session_pending_wipe(s); /* a client that never activated: the new one replaces it */
	memset(&in, 0, sizeof in);
	if ((r = parse_open(sh, argc, argv, &in, client, &provider)))
		return r;
	/* RFC 7748 §6.1: 32 random bytes (X25519 clamps them), public = X25519(priv, 9) */
	if (plat_entropy(priv, sizeof priv) || keywrap_public(priv, in.pubkey))
		return shell_err(sh, -LLMK_EIO, "session open: no entropy for the session's key pair");
	r = shell_attest_bundle(sh, "session open", provider, &in, &info, &buf, &len, rd, src,
				sizeof src);
	if (!r && info.kind == PLAT_ATTEST_NONE)
		r = shell_err(sh, -LLMK_ENOTSUP, "session open: provider none attests nothing, so a "
			      "session would prove nothing (no attestation device: see attest)");
	/* vtpm: a quote proves only that the AK in the evidence signed it; the
	 * keys wait for the client's credential, which opens only in this TPM */
	bool activate = !r && info.kind == PLAT_ATTEST_VTPM;
	if (!r && !activate && chan_init(&s->ch, true, priv, client, rd, client, in.pubkey, NULL, 0))
		r = shell_err(sh, -LLMK_EINVAL, "session open: --client-key is a point of small order "
			      "(no shared secret; RFC 7748 §6.1)");
	plat_snprintf(how, sizeof how, "%s%s", info.name, info.simulated ? ", simulated" : "");
	if (!r && activate) {
		s->pending.on = true;
		memcpy(s->pending.priv, priv, 32);
		memcpy(s->pending.client, client, 32);
		memcpy(s->pending.rd, rd, 64);
		memcpy(s->pending.pub, in.pubkey, 32);
		plat_snprintf(s->pending.how, sizeof s->pending.how, "%s", how);
	}
	seal_zeroize(priv, sizeof priv);
	if (r) {
		chan_wipe(&s->ch);
		plat_free(buf, EVIDENCE_MAX);
		return r;
	}
	plat_printf("session: provider %s: %s\n", info.name, info.detail);
	if (info.simulated)
		plat_printf("  SIMULATED    %s\n", info.detail);
	plat_printf("  model        %s (%s)\n", seal_hex(in.model_digest, 32, hex), src);
	plat_printf("  session key  %s (X25519, this session only)\n", seal_hex(in.pubkey, 32, hex));
	plat_printf("  build id     %s\n", in.build_id);
	shell_attest_print_config(sh);
	long m = -1;
	size_t cap = EVIDENCE_MAX / 3 * 4 + 8;
	char *b64 = plat_alloc(cap, 64);
	if (b64)
		m = b64_encode(buf, len, b64, cap);
	plat_free(buf, EVIDENCE_MAX);
	if (m < 0) {
		plat_free(b64, cap);
		chan_wipe(&s->ch);
		session_pending_wipe(s);
		return shell_err(sh, -LLMK_ENOMEM, "session open: no memory for the evidence's base64");
	}
	plat_printf("session-evidence: %s\n", b64);
	plat_free(b64, cap);
	if (activate) {
		plat_printf("session-activate: the client's credential for this TPM's EK and AK "
			    "(session activate BASE64) keys the session\n");
		return 0;
	}
	/* last: it wipes the line buffers argv points into */
	session_start(sh, how);
	return 0;
}

/*
 * `session activate BASE64`: the credential the client made (TPM 2.0 Part 1
 * §24) for the certified EK and the AK that signed the evidence's quote.
 * This TPM opens it only if both live here; its secret goes into the
 * session's keys (shell/chan.h), so a client that verified a forged quote
 * gets a channel nobody else can speak on, and a relay that forged one gets
 * none.
 */
static int session_activate(struct shell *sh, const char *b64)
{
	struct session_state *s = sh->session;
	static uint8_t cred[CRED_MAX];
	uint8_t secret[CHAN_SECRET_MAX];
	size_t secret_n = 0;
	char how[48];

	if (!s || !s->pending.on)
		return shell_err(sh, -LLMK_EINVAL, "session activate: no session is waiting for a "
				 "credential (session open first)");
	long n = b64_decode(b64, strlen(b64), cred, sizeof cred);
	int e = n < 0 ? -LLMK_EINVAL
		      : plat_attest_activate(PLAT_ATTEST_VTPM, cred, (size_t)n, secret, sizeof secret,
					     &secret_n);
	seal_zeroize(cred, sizeof cred);
	if (e || secret_n == 0) {
		session_pending_wipe(s);
		seal_zeroize(secret, sizeof secret);
		return shell_err(sh, -LLMK_EAUTH, "session: activation: %s; no session",
				 n < 0 ? "not base64 of a credential (RFC 4648, padded)"
				       : e ? plat_attest_error() : "an empty secret");
	}
	e = chan_init(&s->ch, true, s->pending.priv, s->pending.client, s->pending.rd,
		      s->pending.client, s->pending.pub, secret, secret_n);
	seal_zeroize(secret, sizeof secret);
	plat_snprintf(how, sizeof how, "%s", s->pending.how);
	session_pending_wipe(s);
	if (e) {
		chan_wipe(&s->ch);
		return shell_err(sh, -LLMK_EINVAL, "session: the client key is a point of small order "
				 "(no shared secret; RFC 7748 §6.1); no session");
	}
	/* last: it wipes the line buffers argv points into */
	session_start(sh, how);
	return 0;
}
static int session_status(struct shell *sh)
{
	struct session_state *s = sh->session;

	if (!s || s->state != SESSION_OPEN)
		plat_printf("no session open%s\n", s && s->require ? " (require-session on)" : "");
	else
		plat_printf("session open: %s evidence; frames %llu out, %llu in%s\n", s->how,
			    (unsigned long long)s->ch.send.ctr, (unsigned long long)s->ch.recv.ctr,
			    s->require ? "; require-session on" : "");
	return 0;
}

static int cmd_session(struct shell *sh, int argc, char **argv)
{
	struct session_state *s = sh->session;

	if (argc >= 2 && !strcmp(argv[1], "open"))
		return session_open(sh, argc, argv);
	if (argc == 3 && !strcmp(argv[1], "activate"))
		return session_activate(sh, argv[2]);
	if (argc == 2 && !strcmp(argv[1], "abort")) {
		/* the client refused the evidence: nothing of it is kept */
		if (s)
			session_pending_wipe(s);
		return 0;
	}
	if (argc == 1 || (argc == 2 && !strcmp(argv[1], "status")))
		return session_status(sh);
	if (argc == 2 && !strcmp(argv[1], "close")) {
		if (!s || s->state != SESSION_OPEN)
			return shell_err(sh, -LLMK_EINVAL, "session close: no session is open");
		plat_printf("session closed\n");
		session_close(sh, "");
		return 0;
	}
	return shell_err(sh, -LLMK_EINVAL, "session: expected open, activate, close, abort or status, "
			 "got '%s' (usage: %s | session activate BASE64 | session close | session "
			 "status)", argc > 1 ? argv[1] : "", open_usage);
}

const struct shell_cmd shell_cmds_session[] = {
	{"session", "session open --nonce HEX --client-key HEX [--provider P]\nsession activate BASE64\n"
	 "session close\nsession abort\nsession [status]",
	 "a confidential session: attested X25519, then one AES-256-GCM frame per console line "
	 "(build/host/llmctl --connect opens one)",
	 cmd_session},
	{0},
};

/* ---- config: require-session on|off ---- */
static int set_require(struct shell *sh, const struct shell_config_key *k, const char *value)
{
	struct session_state *s = session_state(sh);

	if (!s)
		return shell_err(sh, -LLMK_ENOMEM, "config require-session: no memory");
	if (!strcmp(value, "on")) {
		s->require = true;
		return 0;
	}
	if (strcmp(value, "off"))
		return shell_err(sh, -LLMK_EINVAL, "config require-session: expected on or off, got "
				 "'%s'", value);
	/* on stays on: a session's client could otherwise open the console to
	 * clear text for whoever comes next */
	if (s->require)
		return shell_err(sh, -LLMK_EINVAL, "config require-session: stays on until reboot");
	return 0;
}

static void get_require(struct shell *sh, const struct shell_config_key *k, char *buf, size_t n)
{
	struct session_state *s = sh->session;
	plat_snprintf(buf, n, "%s", s && s->require ? "on" : "off");
}

/* ---- config: session-pace MS ---- */
static int set_pace(struct shell *sh, const struct shell_config_key *k, const char *value)
{
	struct session_state *s = session_state(sh);
	uint64_t ms;
	int r;

	if (!s)
		return shell_err(sh, -LLMK_ENOMEM, "config session-pace: no memory");
	if (!(r = shell_arg_u64(sh, "session-pace", value, 0, SESSION_PACE_MAX, &ms)))
		s->pace_ms = (uint32_t)ms;
	return r;
}

static void get_pace(struct shell *sh, const struct shell_config_key *k, char *buf, size_t n)
{
	struct session_state *s = sh->session;
	plat_snprintf(buf, n, "%u", s ? s->pace_ms : 0);
}

/* ---- config: session-clients HEX[,HEX...] ---- */
/* Set once per boot (llmk.cfg's line, measured, comes first): whoever holds
 * the console could otherwise add a key of its own to an owner's list, or
 * clear it. */
static int set_clients(struct shell *sh, const struct shell_config_key *k, const char *value)
{
	struct session_state *s = session_state(sh);
	uint8_t keys[SESSION_CLIENTS_MAX][32];
	int n = 0;

	if (!s)
		return shell_err(sh, -LLMK_ENOMEM, "config session-clients: no memory");
	if (s->n_clients)
		return shell_err(sh, -LLMK_EINVAL, "config session-clients: already set (%d key%s); "
				 "fixed until reboot", s->n_clients, s->n_clients == 1 ? "" : "s");
	for (const char *p = value; *p; n++) {
		size_t len = 0;
		while (p[len] && p[len] != ',')
			len++;
		if (n == SESSION_CLIENTS_MAX)
			return shell_err(sh, -LLMK_ERANGE, "config session-clients: more than %d keys",
					 SESSION_CLIENTS_MAX);
		if (len != 64)
			return shell_err(sh, -LLMK_EINVAL, "config session-clients: key %d: want 64 hex "
					 "digits (an X25519 public key), got %zu characters", n + 1, len);
		for (size_t i = 0; i < 64; i += 2) {
			int a = hex_digit(p[i]), b = hex_digit(p[i + 1]);
			if (a < 0 || b < 0)
				return shell_err(sh, -LLMK_EINVAL, "config session-clients: key %d: '%c' "
						 "is not a hex digit", n + 1, a < 0 ? p[i] : p[i + 1]);
			keys[n][i / 2] = (uint8_t)(a << 4 | b);
		}
		p += len;
		if (*p == ',' && !*++p)
			return shell_err(sh, -LLMK_EINVAL, "config session-clients: a ',' ends the list");
	}
	if (!n)
		return shell_err(sh, -LLMK_EINVAL, "config session-clients: want HEX[,HEX...]");
	memcpy(s->clients, keys, sizeof keys[0] * (size_t)n);
	s->n_clients = n;
	return 0;
}

static void get_clients(struct shell *sh, const struct shell_config_key *k, char *buf, size_t n)
{
	struct session_state *s = sh->session;
	char hex[65];

	if (!s || !s->n_clients) {
		plat_snprintf(buf, n, "(any client key)");
		return;
	}
	/* the first 8 hex digits of each: `config` shows a value in one column */
	size_t o = 0;
	for (int i = 0; i < s->n_clients && o + 1 < n; i++)
		o += (size_t)plat_snprintf(buf + o, n - o, "%s%.8s..", i ? "," : "",
					   seal_hex(s->clients[i], 32, hex));
}

const struct shell_config_key shell_config_session[] = {
	{"require-session", "on|off: refuse every command outside a confidential session but "
	 "session, version and help (on stays on until reboot)", set_require, get_require, NULL,
	 NULL},
	{"session-pace", "MS: in a session, output leaves as one frame of 64 bytes every MS ms "
	 "(empty when none waits), hiding when tokens come; 0 (off, the default): as written",
	 set_pace, get_pace, NULL, NULL},
	{"session-clients", "HEX[,HEX...]: only these X25519 client keys (up to 8) open a session; "
	 "set once, fixed until reboot (in llmk.cfg: measured)", set_clients, get_clients, NULL,
	 NULL},
	{0},
};
