/*
 * shell/seal_key.c — the one model key the shell holds for sealed disks
 * (cmd_seal.h): in sh->seal (allocated on first use), zeroized when
 * replaced or forgotten; a sealed model opened with a key goes with it.
 * Every way a key comes in (`unseal`, a key file, a release against
 * attestation, a session, POST /v1/keys) installs it here; nothing here
 * calls those back.
 */
#include "cmd_seal.h"

#include "../llm/engine.h"

struct seal_shell {
	uint8_t key[SEAL_KEY_SIZE];
	uint8_t key_id[SEAL_KEY_ID_SIZE];
	bool have_key;
	char from[96];  /* "`unseal` at the console", "file keys/model.key" */
	char note[200]; /* shell_seal_key_note's line */
	struct seal_keysrc src;
};

static struct seal_shell *seal_state(struct shell *sh)
{
	if (!sh->seal)
		sh->seal = plat_alloc(sizeof(struct seal_shell), 64);
	return sh->seal;
}

static void forget_key(struct seal_shell *s)
{
	seal_zeroize(s->key, sizeof s->key);
	s->have_key = false;
}

/* Hold key as the shell's key (the old one zeroized). A sealed model
 * opened with another key goes, as with `unseal --forget`: it keeps the
 * image's keys (and, resident, its plaintext weights), and the key it was
 * opened with is gone. */
static void take_key(struct shell *sh, struct seal_shell *s, const uint8_t key[SEAL_KEY_SIZE])
{
	uint8_t id[SEAL_KEY_ID_SIZE];
	struct engine_info info;
	char hex[2 * SEAL_KEY_ID_SIZE + 1];

	seal_key_id(key, id);
	if (s->have_key && memcmp(id, s->key_id, sizeof id) != 0 && sh->engine &&
	    engine_get_info(sh->engine, &info) == 0 && info.sealed) {
		engine_unload(sh->engine);
		plat_printf("the sealed model from disk %d was opened with the previous key "
			    "(id %s): unloaded\n", info.disk,
			    seal_hex(s->key_id, sizeof s->key_id, hex));
	}
	forget_key(s);
	memcpy(s->key, key, SEAL_KEY_SIZE);
	memcpy(s->key_id, id, sizeof id);
	s->have_key = true;
}

const struct seal_keysrc *shell_seal_keysrc(struct shell *sh)
{
	struct seal_shell *s = sh->seal;
	return s && s->have_key ? &s->src : NULL;
}

int shell_seal_set_key(struct shell *sh, const uint8_t key[SEAL_KEY_SIZE], const char *from,
		       const char *note, bool insecure)
{
	struct seal_shell *s = seal_state(sh);

	if (!s)
		return shell_err(sh, -LLMK_ENOMEM, "unseal: no memory for the key state");
	take_key(sh, s, key);
	plat_snprintf(s->from, sizeof s->from, "%s", from);
	plat_snprintf(s->note, sizeof s->note, "%s", note);
	seal_keysrc_raw(&s->src, s->key, s->from, insecure);
	return 0;
}

int shell_seal_forget(struct shell *sh)
{
	struct engine_info info;
	int disk = -1;

	if (sh->seal)
		forget_key(sh->seal);
	/* A sealed model opened with the key keeps the image's keys (and,
	 * resident, its plaintext weights): without the key it goes too. */
	if (sh->engine && engine_get_info(sh->engine, &info) == 0 && info.sealed) {
		disk = info.disk;
		engine_unload(sh->engine);
	}
	return disk;
}

bool shell_seal_key_id(struct shell *sh, uint8_t id[SEAL_KEY_ID_SIZE])
{
	struct seal_shell *s = sh->seal;

	if (!s || !s->have_key)
		return false;
	memcpy(id, s->key_id, SEAL_KEY_ID_SIZE);
	return true;
}

const char *shell_seal_key_note(struct shell *sh)
{
	struct seal_shell *s = sh->seal;
	return s && s->have_key ? s->note : NULL;
}

const char *shell_seal_key_from(struct shell *sh)
{
	struct seal_shell *s = sh->seal;
	return s && s->have_key ? s->from : NULL;
}
