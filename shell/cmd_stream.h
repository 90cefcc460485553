/*
 * shell/cmd_stream.h — what the model commands print about the memory plan
 * and the layer streamer (shell/cmd_stream.c).
 */
#ifndef SHELL_CMD_STREAM_H
#define SHELL_CMD_STREAM_H

#include "../llm/engine.h"

/* `info`: one line with the plan (mode, slots, slot size, KV, scratch). */
void shell_stream_info(const struct engine *e);
/* `stats`: disk traffic and compute/wait split of the last run (streaming),
 * and the engine's peak memory against the budget. */
void shell_stream_stats(struct engine *e);

#endif
