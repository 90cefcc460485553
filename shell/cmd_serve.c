/*
 * shell/cmd_serve.c — `serve`: the OpenAI-compatible API (shell/http/) on a
 * TCP port until Ctrl-C or the end of input, over attested TLS (docs/tls.md)
 * or, on the host build only, plain HTTP (--plain). docs/api.md.
 *
 * The TLS key is made the first time `serve` starts in a boot and kept in
 * sh->tls until reboot or poweroff (shell_serve_forget), so a client that
 * attested it once can pin it across serve's restarts.
 */
#include "http/serve.h"
#include "http/tls.h"

#include "../llm/seal.h"

static int tls_key(struct shell *sh)
{
	char hex[65];
	int r;

	if (sh->tls)
		return 0;
	if (!(sh->tls = plat_alloc(sizeof *sh->tls, 64)))
		return shell_err(sh, -LLMK_ENOMEM, "serve: no memory for the TLS key");
	if ((r = tls_key_make(sh->tls))) {
		plat_free(sh->tls, sizeof *sh->tls);
		sh->tls = NULL;
		return shell_err(sh, r, "serve: making the TLS key: %s", r == -LLMK_EIO ?
				 "no entropy" : plat_strerror(r));
	}
	plat_printf("tls: a new ECDSA P-256 key for this boot; K %s\n",
		    seal_hex(sh->tls->k, 32, hex));
	return 0;
}

void shell_serve_forget(struct shell *sh)
{
	if (!sh->tls)
		return;
	tls_key_wipe(sh->tls);
	plat_free(sh->tls, sizeof *sh->tls);
	sh->tls = NULL;
}

static int cmd_serve(struct shell *sh, int argc, char **argv)
{
	uint64_t port = 8080, slots = SRV_SLOTS;
	bool plain = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--plain") == 0) {
			plain = true;
		} else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
			if (shell_arg_u64(sh, "serve --port", argv[++i], 0, 65535, &port))
				return -LLMK_EINVAL;
		} else if (strcmp(argv[i], "--slots") == 0 && i + 1 < argc) {
			if (shell_arg_u64(sh, "serve --slots", argv[++i], 1, 16, &slots))
				return -LLMK_EINVAL;
		} else {
			return shell_err(sh, -LLMK_EINVAL, "serve: unknown argument '%s' (usage: %s)", argv[i],
					 "serve [--plain] [--port N] [--slots N]");
		}
	}
	if (plain && !net_loopback_only())
		return shell_err(sh, -LLMK_ENOTSUP,
				 "serve: --plain is the host build's (127.0.0.1); the kernel serves TLS only");
	if (!plain && tls_key(sh))
		return -LLMK_EIO;
	return srv_run(sh, (uint16_t)port, plain ? NULL : sh->tls, (uint32_t)slots);
}

void shell_serve_at_boot(struct shell *sh)
{
	char line[32];

	if (!sh->serve_at_boot)
		return;
	plat_snprintf(line, sizeof line, "serve --port %u", sh->serve_at_boot - 1);
	plat_printf("llmk.cfg: %s\n", line);
	shell_exec_line(sh, line);
}

/* ---- config: serve PORT|off ---- */
static int set_serve(struct shell *sh, const struct shell_config_key *k, const char *value)
{
	uint64_t port;

	if (!strcmp(value, "off")) {
		sh->serve_at_boot = 0;
		return 0;
	}
	if (shell_arg_u64(sh, "config serve", value, 1, 65535, &port))
		return -LLMK_EINVAL;
	sh->serve_at_boot = (uint32_t)port + 1;
	return 0;
}

static void get_serve(struct shell *sh, const struct shell_config_key *k, char *buf, size_t n)
{
	if (sh->serve_at_boot)
		plat_snprintf(buf, n, "%u", sh->serve_at_boot - 1);
	else
		plat_snprintf(buf, n, "off");
}

const struct shell_config_key shell_config_serve[] = {
	{"serve", "PORT|off: in llmk.cfg (measured with it), `serve --port PORT` (attested TLS) "
	 "starts once the file is applied, before the first prompt; read once per boot",
	 set_serve, get_serve, NULL, NULL},
	{0},
};

const struct shell_cmd shell_cmds_serve[] = {
	{"serve", "serve [--plain] [--port N] [--slots N]",
	 "serve the OpenAI-compatible API over attested TLS on port N (8080; 0: any free port) "
	 "until Ctrl-C, up to N generations (8) decoding together; --plain: plain HTTP (host "
	 "build, 127.0.0.1)", cmd_serve},
	{0},
};
