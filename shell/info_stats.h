/*
 * shell/info_stats.h — what the model commands print about the memory plan
 * and the layer streamer (shell/info_stats.c), from the engine's snapshots.
 */
#ifndef SHELL_INFO_STATS_H
#define SHELL_INFO_STATS_H

#include "../llm/engine.h"

/* `info`: one line with the plan (mode, slots, slot size, KV, scratch). */
void shell_print_plan(const struct engine_plan *p);
/* `stats`: the engine's peak memory against the budget, and the disk
 * traffic and compute/wait split of the last run (streaming). */
void shell_print_stats(const struct engine_stats *st, const struct engine_plan *p);
/* "256.00 MiB" (mem-budget), "1.20 GiB (the free memory; no mem-budget)" (what the plan
 * fitted without one) or "no budget" into buf (at least 48 bytes). */
const char *shell_budget(const struct engine_plan *p, char *buf, size_t n);

#endif
