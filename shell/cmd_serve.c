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
	uint64_t port = 8080;
	bool plain = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--plain") == 0) {
			plain = true;
		} else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
			if (shell_arg_u64(sh, "serve --port", argv[++i], 0, 65535, &port))
				return -LLMK_EINVAL;
		} else {
			return shell_err(sh, -LLMK_EINVAL, "serve: unknown argument '%s' (usage: %s)", argv[i],
					 "serve [--plain] [--port N]");
		}
	}
	if (plain && !net_loopback_only())
		return shell_err(sh, -LLMK_ENOTSUP,
				 "serve: --plain is the host build's (127.0.0.1); the kernel serves TLS only");
	if (!plain && tls_key(sh))
		return -LLMK_EIO;
	return srv_run(sh, (uint16_t)port, plain ? NULL : sh->tls);
}

const struct shell_cmd shell_cmds_serve[] = {
	{"serve", "serve [--plain] [--port N]",
	 "serve the OpenAI-compatible API over attested TLS on port N (8080; 0: any free port) "
	 "until Ctrl-C; --plain: plain HTTP (host build, 127.0.0.1)", cmd_serve},
	{0},
};
