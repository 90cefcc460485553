/*
 * shell/cmd_seal.c — `unseal`: the key for sealed model disks, and what
 * `disks` says about a sealed image (docs/sealed-format.md).
 *
 * The key itself is held by shell/seal_key.c. Keys typed at the console or
 * read from a file are development keys: whoever reports the key calls
 * them insecure. A key released against attestation (`unseal --wrapped`,
 * or POST /v1/keys over attested TLS) is the only other way in, and says
 * so.
 */
#include "cmd_seal.h"
#include "cmd_attest.h"
#include "evidence.h"
#include "keywrap.h"
#include "session.h"

#include "../llm/engine.h"
#include "../llm/gguf.h"

#define KEY_FILE_MAX 256 /* 64 hex digits plus generous whitespace */

/* Parse text (hex digits, trailing whitespace) into the shell's key. A key
 * typed inside a confidential session (docs/session.md) crossed the host
 * only as ciphertext, to an attested guest: not a development key, and the
 * session forgets it when it ends. */
static int set_key(struct shell *sh, const char *text, size_t n, const char *from, bool typed)
{
	const char *how = NULL;
	uint8_t key[SEAL_KEY_SIZE], kid[SEAL_KEY_ID_SIZE];
	char id[2 * SEAL_KEY_ID_SIZE + 1], src[96], note[200];
	int e;

	if (seal_key_parse_hex(text, n, key))
		return shell_err(sh, -LLMK_EINVAL,
				 "unseal: %s: want 64 hex digits (a 256-bit key), then only "
				 "whitespace",
				 from);
	if (typed)
		how = shell_session_key_release(sh);
	seal_key_id(key, kid);
	seal_hex(kid, sizeof kid, id);
	if (how) {
		plat_snprintf(src, sizeof src, "`unseal` inside the session (%s)", how);
		plat_snprintf(note, sizeof note, "released over an attested session (%s), key id %s",
			      how, id);
	} else {
		plat_snprintf(src, sizeof src, "%s", from);
		plat_snprintf(note, sizeof note, "insecure development key, key id %s, from %s", id,
			      from);
	}
	e = shell_seal_set_key(sh, key, src, note, !how);
	seal_zeroize(key, sizeof key);
	return e;
}

/* `unseal --wrapped BASE64`: a key released against attestation
 * (docs/attestation.md, "Key release"; shell/cmd_attest.h checks the blob
 * was made for this boot's evidence). Not a development key. */
static int key_from_wrapped(struct shell *sh, const char *b64)
{
	static uint8_t blob[KEYWRAP_MAX + 4];
	uint8_t key[SEAL_KEY_SIZE], kid[SEAL_KEY_ID_SIZE];
	char how[32], err[240], id[2 * SEAL_KEY_ID_SIZE + 1], src[96], note[200];

	long n = b64_decode(b64, strlen(b64), blob, sizeof blob);
	if (n < 0)
		return shell_err(sh, -LLMK_EINVAL, "unseal --wrapped: not base64 of a key-wrap blob "
				 "(RFC 4648, padded)");
	int e = shell_attest_unwrap(sh, blob, (size_t)n, key, how, sizeof how, err, sizeof err);
	if (e)
		return shell_err(sh, e, "unseal --wrapped: %s", err);
	seal_key_id(key, kid);
	seal_hex(kid, sizeof kid, id);
	/* released inside a session: the session's, forgotten when it ends
	 * (docs/session.md); else the console's, whoever holds it */
	const char *sess = shell_session_key_release(sh);
	plat_snprintf(src, sizeof src, "`unseal --wrapped` (%s)", how);
	if (sess)
		plat_snprintf(note, sizeof note, "released against attestation (%s) inside the "
			      "session (%s), key id %s; forgotten when the session ends", how, sess,
			      id);
	else
		plat_snprintf(note, sizeof note, "released against attestation (%s) to the console "
			      "(no session), key id %s", how, id);
	e = shell_seal_set_key(sh, key, src, note, false);
	seal_zeroize(key, sizeof key);
	return e;
}

/* Read a key file through the platform (boot volume; host: file system). */
static int key_from_file(struct shell *sh, const char *name)
{
	char buf[KEY_FILE_MAX], from[96];

	int n = shell_boot_file(sh, "unseal: key file", name, buf, sizeof buf);
	if (n < 0)
		return n;
	plat_snprintf(from, sizeof from, "file '%s'", name);
	int e = set_key(sh, buf, (size_t)n, from, false);
	seal_zeroize(buf, sizeof buf);
	return e;
}

static bool verify_cancel(void *sh)
{
	return shell_poll_cancel(sh);
}

/* `unseal --verify N`: every chunk of disk N and the plaintext digest. */
static int verify_disk(struct shell *sh, const char *arg)
{
	struct llm_mem mem;
	struct llm_reader rd;
	struct seal_ctx c;
	char err[256];
	int disk;

	if (shell_arg_disk(sh, arg, &disk))
		return -LLMK_EINVAL;
	if (!shell_seal_keysrc(sh))
		return shell_err(sh, -LLMK_ENOENT, "unseal: no key loaded (unseal KEYHEX first)");
	llm_mem_init(&mem, 0);
	llm_reader_disk(&rd, disk);
	int e = seal_open(&c, &rd, shell_seal_keysrc(sh), &mem, err, sizeof err);
	if (e)
		return shell_err(sh, e, "disk %d: %s", disk, err);
	uint64_t t0 = plat_time_ns();
	e = seal_verify_all(&c, verify_cancel, sh, err, sizeof err);
	uint64_t ns = plat_time_ns() - t0 + 1;
	if (!e)
		plat_printf("disk %d: all %llu chunks authenticate, plaintext sha256 matches "
			    "(%.1f MB/s read + decrypt + hash, %s + %s)\n",
			    disk, (unsigned long long)c.hdr.n_chunks,
			    (double)c.hdr.plain_size * 1e3 / (double)ns, c.aes_impl, c.ghash_impl);
	seal_close(&c);
	return e ? shell_err(sh, e, "disk %d: %s", disk, err) : 0;
}

static int cmd_unseal(struct shell *sh, int argc, char **argv)
{
	int e;

	if (shell_check_argc(sh, argc, argv, 1, 3))
		return -LLMK_EINVAL;
	if (argc == 1) {
		const char *note = shell_seal_key_note(sh);
		plat_printf("%s\n", note ? note : "no key loaded");
		return 0;
	}
	if (strcmp(argv[1], "--forget") == 0 && argc == 2) {
		int disk = shell_seal_forget(sh);
		if (disk >= 0)
			plat_printf("key forgotten; the sealed model from disk %d is unloaded\n", disk);
		else
			plat_printf("key forgotten\n");
		return 0;
	}
	if (strcmp(argv[1], "--verify") == 0 && argc == 3)
		return verify_disk(sh, argv[2]);
	if ((strcmp(argv[1], "--guest") == 0 || strcmp(argv[1], "--guest-file") == 0) && argc == 3)
		return shell_unseal_guest(sh, argv[1], argv[2]);
	if (strcmp(argv[1], "--wrapped") == 0 && argc == 3)
		e = key_from_wrapped(sh, argv[2]);
	else if (strcmp(argv[1], "--file") == 0 && argc == 3)
		e = key_from_file(sh, argv[2]);
	else if (argc == 2 && argv[1][0] != '-')
		e = set_key(sh, argv[1], strlen(argv[1]), "`unseal` at the console", true);
	else
		return shell_err(sh, -LLMK_EINVAL, "unseal: bad arguments (usage: unseal KEYHEX | "
				 "unseal --file NAME | unseal --wrapped BASE64 | unseal --guest BASE64 | "
				 "unseal --guest-file NAME | unseal --forget | unseal --verify N)");
	/* The typed key must not linger in the argument buffer, nor in the line
	 * editor's copy of the line (already split; not read again). */
	seal_zeroize(argv[argc - 1], strlen(argv[argc - 1]));
	seal_zeroize(sh->line.buf, sizeof sh->line.buf);
	if (e)
		return e;
	plat_printf("%s\n", shell_seal_key_note(sh));
	return 0;
}

const struct shell_cmd shell_cmds_seal[] = {
	{"unseal", "unseal KEYHEX\nunseal --file NAME\nunseal --wrapped BASE64\nunseal --guest BASE64\n"
	 "unseal --guest-file NAME\nunseal --forget\nunseal --verify N\nunseal",
	 "set the key for sealed model disks (64 hex digits: a development key; --wrapped: "
	 "released by a verifier against this boot's attest; --guest: sealed to this SNP "
	 "guest), show it, forget it (and unload a sealed model), or check every chunk of "
	 "sealed disk N",
	 cmd_unseal},
	{0},
};

/* ---- config: seal-key-file NAME ---- */
static int set_key_file(struct shell *sh, const struct shell_config_key *k, const char *value)
{
	return key_from_file(sh, value);
}

static void get_key_file(struct shell *sh, const struct shell_config_key *k, char *buf, size_t n)
{
	const char *from = shell_seal_key_from(sh);
	plat_snprintf(buf, n, "%s", from ? from : "(none)");
}

const struct shell_config_key shell_config_seal[] = {
	{"seal-key-file", "NAME: read the sealed-model key (64 hex digits) from file NAME on the "
	 "boot volume (an insecure development key)", set_key_file, get_key_file, NULL, NULL},
	{0},
};

/* ---- disks: what a sealed disk holds ---- */
/* With the right key: open the image and show the GGUF inside it. */
static void describe_plaintext(struct shell *sh, int disk)
{
	struct llm_mem mem;
	struct llm_reader rd, plain;
	struct seal_ctx c;
	struct gguf_file g;
	char err[256];

	llm_mem_init(&mem, 0);
	llm_reader_disk(&rd, disk);
	int e = seal_open(&c, &rd, shell_seal_keysrc(sh), &mem, err, sizeof err);
	if (e) {
		plat_printf("  key matches, but the image is refused: %s\n", err);
		return;
	}
	seal_reader(&c, &plain);
	e = gguf_open(&g, &plain, &mem, err, sizeof err);
	if (e) {
		plat_printf("  key matches; the plaintext is not readable GGUF: %s\n",
			    c.failed ? seal_error(&c) : err);
	} else {
		plat_printf("  key matches: GGUF v%u inside, %llu tensors, %llu metadata keys "
			    "(%s + %s)\n",
			    g.version, (unsigned long long)g.n_tensors, (unsigned long long)g.n_kv,
			    c.aes_impl, c.ghash_impl);
		gguf_close(&g);
	}
	seal_close(&c);
}

bool shell_describe_sealed(struct shell *sh, int disk, const struct plat_disk_info *in,
			   const uint8_t *head, size_t n)
{
	struct seal_header h;
	uint8_t kid[SEAL_KEY_ID_SIZE];
	char err[200], a[65], b[65];

	int e = seal_header_parse(head, n, &h, err, sizeof err);
	if (e == -LLMK_ENOENT)
		return false;
	if (e) {
		plat_printf("  sealed model image, but its header is refused: %s\n", err);
		return true;
	}
	plat_printf("  sealed model image v%u: GGUF of %llu bytes in %llu chunks of %u, "
		    "sha256 %s\n",
		    h.version, (unsigned long long)h.plain_size, (unsigned long long)h.n_chunks,
		    h.chunk_size, seal_hex(h.plain_sha256, 32, a));
	plat_printf("  key id %s, image id %s\n", seal_hex(h.key_id, SEAL_KEY_ID_SIZE, a),
		    seal_hex(h.image_id, SEAL_IMAGE_ID_SIZE, b));
	if (in->capacity != h.image_size)
		plat_printf("  image is %llu bytes but the disk holds %llu: %s\n",
			    (unsigned long long)h.image_size, (unsigned long long)in->capacity,
			    in->capacity < h.image_size ? "truncated" : "bytes appended");
	if (!shell_seal_key_id(sh, kid))
		plat_printf("  no key loaded (unseal KEYHEX)\n");
	else if (memcmp(kid, h.key_id, SEAL_KEY_ID_SIZE) != 0)
		plat_printf("  the loaded key (key id %s) is not the key this image wants\n",
			    seal_hex(kid, SEAL_KEY_ID_SIZE, a));
	else
		describe_plaintext(sh, disk);
	return true;
}
