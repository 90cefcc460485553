/*
 * shell/cmd_serve.c — `serve`: the OpenAI-compatible API (shell/http/)
 * on a TCP port until Ctrl-C or the end of input. docs/api.md.
 */
#include "http/serve.h"

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
	if (!plain && net_loopback_only())
		return shell_err(sh, -LLMK_ENOTSUP,
				 "serve: attested TLS is not here yet; the host build serves plain HTTP with --plain");
	return srv_run(sh, (uint16_t)port, (uint32_t)slots);
}

const struct shell_cmd shell_cmds_serve[] = {
	{"serve", "serve [--plain] [--port N] [--slots N]",
	 "serve the OpenAI-compatible API on port N (8080; 0: any free port) until Ctrl-C; "
	 "up to N generations (8) decode together", cmd_serve},
	{0},
};
