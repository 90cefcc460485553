/*
 * shell/cmd_model.h — for the files that work on the shell's engine
 * (sh->engine, shell_engine() in shell.h): engine.h, and the model lookup
 * of `load NAME` (cmd_models.c).
 */
#ifndef SHELL_CMD_MODEL_H
#define SHELL_CMD_MODEL_H

#include "shell.h"
#include "../llm/engine.h"

/* cmd_models.c: the disk whose id (as `disks` and `models` print it) or
 * model's general.name (ASCII case-insensitive; a sealed disk's only with
 * the loaded key) is what. 0; else one error line ("load: ..."): none, or
 * two disks answer to it. */
int shell_model_find(struct shell *sh, const char *what, int *disk);

#endif
