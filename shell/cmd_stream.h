/*
 * shell/cmd_stream.h — what the model commands print about the memory plan
 * and the layer streamer (shell/cmd_stream.c), from the engine's snapshots.
 */
#ifndef SHELL_CMD_STREAM_H
#define SHELL_CMD_STREAM_H

#include "../llm/engine.h"

/* `info`: one line with the plan (mode, slots, slot size, KV, scratch). */
void shell_stream_info(const struct engine_plan *p);
/* `stats`: the engine's peak memory against the budget, and the disk
 * traffic and compute/wait split of the last run (streaming). */
void shell_stream_stats(const struct engine_stats *st, const struct engine_plan *p);
/* "256.00 MiB" (mem-budget), "1.20 GiB (the free memory; no mem-budget)" (what the plan
 * fitted without one) or "no budget" into buf (at least 48 bytes). */
const char *shell_budget(const struct engine_plan *p, char *buf, size_t n);

#endif
