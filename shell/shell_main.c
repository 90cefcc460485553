/*
 * shell/shell_main.c — the kernel's shell from boot to power-off: the
 * state, `serve PORT` from llmk.cfg, the prompt loop, the zeroizing on the
 * way down. Its own file so the prompt loop (shell.c) calls no command.
 */
#include "shell.h"

void shell_main(void)
{
	/* Too big for a small boot stack; one page-backed instance for the run. */
	struct shell *sh = plat_alloc(sizeof *sh, 64);
	if (!sh)
		plat_panic("shell: cannot allocate %zu bytes for the shell state", sizeof *sh);
	shell_init(sh, true);
	sh->in = &shell_input_session; /* the console is ours */
	shell_serve_at_boot(sh);
	shell_run(sh);
	shell_going_down(sh);
	plat_poweroff();
}
