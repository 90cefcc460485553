/*
 * shell/registry.c — every command and config key llmctl has, one row per
 * area, as xv6's syscalls[] (kernel/syscall.c) lists every system call.
 *
 * An area is one shell/cmd_<area>.c: it defines shell_cmds_<area>[] and,
 * if it has config keys, shell_config_<area>[] (each ends with {0}). Adding
 * an area is its declaration and its row below. Lookups walk the rows in
 * order and the first name found wins, so sys, the machine's generic
 * commands, comes last.
 */
#include "shell.h"
#include "cmd_model_cfg.h"

extern const struct shell_cmd shell_cmds_tok[];
extern const struct shell_cmd shell_cmds_model[];
extern const struct shell_cmd shell_cmds_models[];
extern const struct shell_cmd shell_cmds_bench[];
extern const struct shell_cmd shell_cmds_seal[];
extern const struct shell_config_key shell_config_seal[];
extern const struct shell_cmd shell_cmds_attest[];
extern const struct shell_cmd shell_cmds_guestkey[];
extern const struct shell_config_key shell_config_guestkey[];
extern const struct shell_cmd shell_cmds_session[];
extern const struct shell_config_key shell_config_session[];
extern const struct shell_cmd shell_cmds_serve[];
extern const struct shell_config_key shell_config_serve[];
extern const struct shell_cmd shell_cmds_sys[];
extern const struct shell_config_key shell_config_sys[];

static const struct {
	const struct shell_cmd *cmds;
	const struct shell_config_key *keys; /* NULL: the area has none */
} shell_areas[] = {
	{shell_cmds_tok, NULL},
	{shell_cmds_model, shell_config_model},
	{shell_cmds_models, NULL},
	{shell_cmds_bench, NULL},
	{shell_cmds_seal, shell_config_seal},
	{shell_cmds_attest, NULL},
	{shell_cmds_guestkey, shell_config_guestkey},
	{shell_cmds_session, shell_config_session},
	{shell_cmds_serve, shell_config_serve},
	{shell_cmds_sys, shell_config_sys},
};
#define N_AREAS (int)(sizeof shell_areas / sizeof shell_areas[0])

const struct shell_cmd *shell_cmd_at(int idx)
{
	for (int a = 0; a < N_AREAS; a++)
		for (const struct shell_cmd *c = shell_areas[a].cmds; c->name; c++)
			if (idx-- == 0)
				return c;
	return NULL;
}

const struct shell_cmd *shell_find(const char *name)
{
	const struct shell_cmd *c;
	for (int i = 0; (c = shell_cmd_at(i)); i++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

const struct shell_config_key *shell_config_at(int idx)
{
	for (int a = 0; a < N_AREAS; a++)
		for (const struct shell_config_key *k = shell_areas[a].keys; k && k->name; k++)
			if (idx-- == 0)
				return k;
	return NULL;
}

const struct shell_config_key *shell_config_find(const char *name)
{
	const struct shell_config_key *k;
	for (int i = 0; (k = shell_config_at(i)); i++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}
