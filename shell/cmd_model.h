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

/* cmd_model_cfg.c: the engine's settings, one row each (config keys, and
 * with a flag also "--<key> VALUE" of infer and chat). */
extern const struct shell_config_key shell_config_model[];
/* The row of a run's flag: "--<key>" of a row with a flag, or "-n"
 * (--n-predict); NULL if flag is none. */
const struct shell_config_key *shell_model_flag_key(const char *flag);
/* Its value parsed into run, a copy of the configuration for one run: 0, or
 * the error (one line printed, naming flag). */
int shell_model_flag_parse(struct shell *sh, const struct shell_config_key *k, const char *flag,
			   const char *value, struct engine_config *run);

/* cmd_models.c: the disk whose id (as `disks` and `models` print it) or
 * model's general.name (ASCII case-insensitive; a sealed disk's only with
 * the loaded key) is what. 0; else one error line ("load: ..."): none, or
 * two disks answer to it. */
int shell_model_find(struct shell *sh, const char *what, int *disk);

#endif
