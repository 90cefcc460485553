/*
 * shell/cmd_model_cfg.h — the engine's settings (cmd_model_cfg.c), one row
 * each: the `config` keys, and with a flag also "--<key> VALUE" of infer and
 * chat (cmd_model.c reads the flags through these).
 */
#ifndef SHELL_CMD_MODEL_CFG_H
#define SHELL_CMD_MODEL_CFG_H

#include "shell.h"
#include "../llm/engine.h"

extern const struct shell_config_key shell_config_model[];
/* The row of a run's flag: "--<key>" of a row with a flag, or "-n"
 * (--n-predict); NULL if flag is none. */
const struct shell_config_key *shell_model_flag_key(const char *flag);
/* Its value parsed into run, a copy of the configuration for one run: 0, or
 * the error (one line printed, naming flag). */
int shell_model_flag_parse(struct shell *sh, const struct shell_config_key *k, const char *flag,
			   const char *value, struct engine_config *run);

#endif
