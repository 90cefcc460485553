/*
 * shell/cmd_model.h — the shell's engine session (sh->engine), shared by the
 * model commands (cmd_model.c) and their config keys (cmd_model_cfg.c).
 */
#ifndef SHELL_CMD_MODEL_H
#define SHELL_CMD_MODEL_H

#include "shell.h"
#include "../llm/engine.h"

/* sh->engine, created (engine_init defaults) on first use. */
struct engine *shell_engine(struct shell *sh);

#endif
