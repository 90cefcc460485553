/*
 * shell/cmd_seal.h — the model key the shell holds for sealed disks
 * (shell/seal_key.c; the commands that set it: shell/cmd_seal.c `unseal
 * KEYHEX`, `unseal --file NAME`, config key seal-key-file). The model loader opens a sealed disk with
 * seal_open(..., shell_seal_keysrc(sh), ...).
 */
#ifndef SHELL_CMD_SEAL_H
#define SHELL_CMD_SEAL_H

#include "../llm/seal.h"
#include "shell.h"

/* The key source for sealed images, or NULL while no key is loaded. Its
 * `insecure` is true for keys typed at the console or read from a file:
 * `info` and `version` should say "insecure development key". */
const struct seal_keysrc *shell_seal_keysrc(struct shell *sh);
/* One line describing the loaded key ("insecure development key, key id
 * ..., from `unseal`"), or NULL if none. */
const char *shell_seal_key_note(struct shell *sh);
/* Where the loaded key came from ("file 'keys/model.key'"), or NULL. */
const char *shell_seal_key_from(struct shell *sh);
/* The loaded key's id (public: seal_key_id) into id: false if none. */
bool shell_seal_key_id(struct shell *sh, uint8_t id[SEAL_KEY_ID_SIZE]);

/* Install key (replacing any, the old one zeroized), as from says, with
 * note for `unseal`/`info`; insecure: a development key. */
int shell_seal_set_key(struct shell *sh, const uint8_t key[SEAL_KEY_SIZE], const char *from,
		       const char *note, bool insecure);
/* Zeroize the key (`unseal --forget`; the end of the session it came over)
 * and unload a sealed model, streaming or resident, which could otherwise
 * still be read with what it derived from the key. Returns the disk of the
 * model unloaded, or -1. */
int shell_seal_forget(struct shell *sh);
/* shell/cmd_guestkey.c: `unseal --guest BASE64` / `unseal --guest-file NAME`. */
int shell_unseal_guest(struct shell *sh, const char *opt, const char *arg);

#endif
