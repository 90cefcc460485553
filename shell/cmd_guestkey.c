/*
 * shell/cmd_guestkey.c — sealing the model key to the guest itself:
 * `seal --to-guest` wraps the loaded key under a key the SEV-SNP firmware
 * derives for this guest (MSG_KEY_REQ through plat_attest_guest_key), and
 * `unseal --guest` / `seal-guest-file` open it again after a reboot, with no
 * key server, when the chip and the selected launch fields are the same.
 * docs/attestation.md, "Sealing to the guest", has the blob's layout.
 *
 * The derived key never leaves this file: it keys an HKDF whose output
 * opens one blob and is zeroized with it.
 */
#include "cmd_seal.h"
#include "evidence.h"
#include "../kernel/attest.h"

#include <bearssl.h>

#define GSK_MAGIC "LLMKGSK1"
#define GSK_HDR 48u   /* bytes 0..47: the AAD and the HKDF info */
#define GSK_IV 12u
#define GSK_SIZE (GSK_HDR + GSK_IV + SEAL_KEY_SIZE + 16u)
#define GSK_FLAG_INSECURE 1u
#define GSK_B64 (4 * ((GSK_SIZE + 2) / 3) + 1)

/* What the firmware mixes in, by the names `--mix` takes. */
static const struct {
	const char *name;
	uint32_t bit;
} mixes[] = {
	{ "policy", PLAT_ATTEST_MIX_POLICY },       { "image-id", PLAT_ATTEST_MIX_IMAGE_ID },
	{ "family-id", PLAT_ATTEST_MIX_FAMILY_ID }, { "measurement", PLAT_ATTEST_MIX_MEASUREMENT },
	{ "svn", PLAT_ATTEST_MIX_GUEST_SVN },       { "tcb", PLAT_ATTEST_MIX_TCB_VERSION },
};

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The blob's header (bytes 0..47): magic, flags, root, VMPL, 0, fields,
 * guest SVN, TCB version, the model key's id. */
static void hdr_write(uint8_t *h, const struct plat_attest_key_req *r, uint8_t flags,
		      const uint8_t key_id[SEAL_KEY_ID_SIZE])
{
	memset(h, 0, GSK_HDR);
	memcpy(h, GSK_MAGIC, 8);
	h[8] = flags;
	h[9] = (uint8_t)r->root;
	h[10] = (uint8_t)r->vmpl;
	put64(h + 12, r->fields);
	put32(h + 20, r->guest_svn);
	put64(h + 24, r->tcb_version);
	memcpy(h + 32, key_id, SEAL_KEY_ID_SIZE);
}

/* HKDF-SHA-256(salt "llmk guest seal v1", IKM = the derived key, info = header). */
static void wrap_key(const uint8_t derived[32], const uint8_t *hdr, uint8_t out[32])
{
	br_hkdf_context hk;
	br_hkdf_init(&hk, &br_sha256_vtable, "llmk guest seal v1", 18);
	br_hkdf_inject(&hk, derived, 32);
	br_hkdf_flip(&hk);
	br_hkdf_produce(&hk, hdr, GSK_HDR, out, 32);
	seal_zeroize(&hk, sizeof hk);
}

/* AES-256-GCM over the model key, AAD = header; encrypt or check and decrypt. */
static bool gcm(const uint8_t k[32], const uint8_t *blob, uint8_t *data, uint8_t *tag, int enc)
{
	br_aes_ct64_ctr_keys aes;
	br_gcm_context g;
	uint32_t ok = 1;
	br_aes_ct64_ctr_init(&aes, k, 32);
	br_gcm_init(&g, &aes.vtable, br_ghash_ctmul64);
	br_gcm_reset(&g, blob + GSK_HDR, GSK_IV);
	br_gcm_aad_inject(&g, blob, GSK_HDR);
	br_gcm_flip(&g);
	br_gcm_run(&g, enc, data, SEAL_KEY_SIZE);
	if (enc)
		br_gcm_get_tag(&g, tag);
	else
		ok = br_gcm_check_tag(&g, tag);
	seal_zeroize(&aes, sizeof aes);
	seal_zeroize(&g, sizeof g);
	return ok == 1;
}

static int derive(struct shell *sh, const struct plat_attest_key_req *r, const uint8_t *hdr,
		  uint8_t k[32], const char *cmd)
{
	uint8_t d[32];
	char err[200];
	int e = plat_attest_guest_key(PLAT_ATTEST_SNP, r, d, err, sizeof err);
	if (e)
		return shell_err(sh, e, "%s: no guest key: %s", cmd, err);
	wrap_key(d, hdr, k);
	seal_zeroize(d, sizeof d);
	return 0;
}

static int parse_mix(struct shell *sh, char *list, uint64_t *fields)
{
	*fields = 0;
	for (char *p = list; *p;) {
		char *end = p;
		while (*end && *end != ',')
			end++;
		char c = *end;
		*end = 0;
		size_t i = 0;
		for (; i < sizeof mixes / sizeof mixes[0]; i++)
			if (strcmp(p, mixes[i].name) == 0)
				break;
		if (i == sizeof mixes / sizeof mixes[0])
			return shell_err(sh, -LLMK_EINVAL,
					 "seal: --mix: unknown field '%s' (policy, image-id, "
					 "family-id, measurement, svn, tcb)", p);
		*fields |= mixes[i].bit;
		p = c ? end + 1 : end;
	}
	return 0;
}

/* `seal --to-guest [--root vcek|vmrk] [--mix A,B] [--vmpl N] [--svn N] [--tcb N]` */
static int cmd_seal_guest(struct shell *sh, int argc, char **argv)
{
	struct plat_attest_key_req r = { PLAT_ATTEST_ROOT_VCEK,
					 PLAT_ATTEST_MIX_MEASUREMENT | PLAT_ATTEST_MIX_POLICY, 0,
					 0, 0 };
	const struct seal_keysrc *ks = shell_seal_keysrc(sh);
	struct seal_header none;
	uint8_t blob[GSK_SIZE], key[SEAL_KEY_SIZE], id[SEAL_KEY_ID_SIZE], k[32];
	char b64[GSK_B64], err[120];
	uint64_t v;
	int e;

	if (argc < 2 || strcmp(argv[1], "--to-guest") != 0)
		return shell_err(sh, -LLMK_EINVAL, "seal: want --to-guest (usage: seal --to-guest "
				 "[--root vcek|vmrk] [--mix FIELD,...] [--vmpl N] [--svn N] [--tcb N])");
	for (int i = 2; i < argc; i += 2) {
		if (i + 1 >= argc)
			return shell_err(sh, -LLMK_EINVAL, "seal: %s needs a value", argv[i]);
		const char *o = argv[i], *a = argv[i + 1];
		if (!strcmp(o, "--root") && !strcmp(a, "vcek"))
			r.root = PLAT_ATTEST_ROOT_VCEK;
		else if (!strcmp(o, "--root") && !strcmp(a, "vmrk"))
			r.root = PLAT_ATTEST_ROOT_VMRK;
		else if (!strcmp(o, "--root"))
			return shell_err(sh, -LLMK_EINVAL, "seal: --root '%s': want vcek or vmrk", a);
		else if (!strcmp(o, "--mix")) {
			if ((e = parse_mix(sh, argv[i + 1], &r.fields)))
				return e;
		} else if (!strcmp(o, "--vmpl")) {
			if ((e = shell_arg_u64(sh, "seal: --vmpl", a, 0, 3, &v)))
				return e;
			r.vmpl = (uint32_t)v;
		} else if (!strcmp(o, "--svn")) {
			if ((e = shell_arg_u64(sh, "seal: --svn", a, 0, 0xffffffffu, &v)))
				return e;
			r.guest_svn = (uint32_t)v;
		} else if (!strcmp(o, "--tcb")) {
			if ((e = shell_arg_u64(sh, "seal: --tcb", a, 0, UINT64_MAX, &r.tcb_version)))
				return e;
		} else
			return shell_err(sh, -LLMK_EINVAL, "seal: unknown option '%s'", o);
	}
	if (!ks)
		return shell_err(sh, -LLMK_ENOENT, "seal: no model key loaded to seal (unseal first)");
	memset(&none, 0, sizeof none);
	if ((e = ks->get(ks->ctx, &none, key, err, sizeof err)))
		return shell_err(sh, e, "seal: the loaded key: %s", err);
	seal_key_id(key, id);
	hdr_write(blob, &r, ks->insecure ? GSK_FLAG_INSECURE : 0, id);
	if ((e = plat_entropy(blob + GSK_HDR, GSK_IV)) < 0) {
		seal_zeroize(key, sizeof key);
		return shell_err(sh, e, "seal: no entropy for the IV: %s", plat_strerror(e));
	}
	if ((e = derive(sh, &r, blob, k, "seal"))) {
		seal_zeroize(key, sizeof key);
		return e;
	}
	memcpy(blob + GSK_HDR + GSK_IV, key, SEAL_KEY_SIZE);
	gcm(k, blob, blob + GSK_HDR + GSK_IV, blob + GSK_HDR + GSK_IV + SEAL_KEY_SIZE, 1);
	seal_zeroize(key, sizeof key);
	seal_zeroize(k, sizeof k);
	b64_encode(blob, sizeof blob, b64, sizeof b64);
	plat_printf("guest-sealed: %s\n", b64);
	plat_printf("key id %s, opens on this chip for the same %s%s: unseal --guest BASE64, or "
		    "seal-guest-file NAME in llmk.cfg\n",
		    seal_hex(id, sizeof id, err), r.fields ? "launch fields" : "chip",
		    ks->insecure ? " (still an insecure development key)" : "");
	return 0;
}

/* Open a blob: derive with its own parameters, check, install the key. */
static int open_blob(struct shell *sh, const char *text, size_t n, const char *from)
{
	uint8_t blob[GSK_SIZE + 3], k[32], key[SEAL_KEY_SIZE], id[SEAL_KEY_ID_SIZE];
	char note[200], hex[2 * SEAL_KEY_ID_SIZE + 1];
	struct plat_attest_key_req r;

	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
		n--;
	if (n > 14 && !memcmp(text, "guest-sealed: ", 14))
		text += 14, n -= 14;
	long m = b64_decode(text, n, blob, sizeof blob);
	if (m != (long)GSK_SIZE || memcmp(blob, GSK_MAGIC, 8) != 0)
		return shell_err(sh, -LLMK_EFORMAT,
				 "unseal: %s is not a guest-sealed key (want base64 of %u bytes "
				 "starting %s)", from, GSK_SIZE, GSK_MAGIC);
	if (blob[8] & ~GSK_FLAG_INSECURE || blob[9] > 1 || blob[10] > 3 || blob[11])
		return shell_err(sh, -LLMK_EFORMAT, "unseal: %s: unknown flags or fields", from);
	r.root = blob[9];
	r.vmpl = blob[10];
	r.fields = get64(blob + 12);
	r.guest_svn = (uint32_t)get64(blob + 20) & 0xffffffffu;
	r.tcb_version = get64(blob + 24);
	int e = derive(sh, &r, blob, k, "unseal");
	if (e)
		return e;
	memcpy(key, blob + GSK_HDR + GSK_IV, SEAL_KEY_SIZE);
	bool ok = gcm(k, blob, key, blob + GSK_HDR + GSK_IV + SEAL_KEY_SIZE, 0);
	seal_zeroize(k, sizeof k);
	seal_key_id(key, id);
	if (!ok || memcmp(id, blob + 32, SEAL_KEY_ID_SIZE) != 0) {
		seal_zeroize(key, sizeof key);
		return shell_err(sh, -LLMK_EAUTH,
				 "unseal: %s does not open with this guest's key (another chip, "
				 "image or policy, or damaged)", from);
	}
	bool insecure = blob[8] & GSK_FLAG_INSECURE;
	plat_snprintf(note, sizeof note, "%skey id %s, sealed to this guest (SEV-SNP derived key), "
		      "from %s", insecure ? "insecure development " : "",
		      seal_hex(id, sizeof id, hex), from);
	e = shell_seal_set_key(sh, key, from, note, insecure);
	seal_zeroize(key, sizeof key);
	if (!e)
		plat_printf("%s\n", note);
	return e;
}

int shell_unseal_guest(struct shell *sh, const char *opt, const char *arg)
{
	char buf[2 * GSK_B64 + 32], from[96];
	if (strcmp(opt, "--guest") == 0)
		return open_blob(sh, arg, strlen(arg), "`unseal --guest`");
	int n = shell_boot_file(sh, "unseal: guest-sealed key file", arg, buf, sizeof buf);
	if (n < 0)
		return n;
	plat_snprintf(from, sizeof from, "file '%s'", arg);
	return open_blob(sh, buf, (size_t)n, from);
}

const struct shell_cmd shell_cmds_guestkey[] = {
	{"seal", "seal --to-guest [--root vcek|vmrk] [--mix FIELD,...] [--vmpl N] [--svn N] [--tcb N]",
	 "wrap the loaded model key to a key the SEV-SNP firmware derives for this guest "
	 "(default: VCEK root, measurement and policy mixed in)",
	 cmd_seal_guest},
	{0},
};

static int set_guest_file(struct shell *sh, const struct shell_config_key *k, const char *value)
{
	return shell_unseal_guest(sh, "--guest-file", value);
}

static bool has(const char *s, const char *word)
{
	size_t n = strlen(word);
	for (; s && *s; s++)
		if (strncmp(s, word, n) == 0)
			return true;
	return false;
}

static void get_guest_file(struct shell *sh, const struct shell_config_key *k, char *buf,
			   size_t n)
{
	const char *note = shell_seal_key_note(sh);
	plat_snprintf(buf, n, "%s", has(note, "sealed to this guest") ? note : "(none)");
}

const struct shell_config_key shell_config_guestkey[] = {
	{"seal-guest-file", "NAME: open the model key sealed to this guest (`seal --to-guest`) "
	 "from file NAME on the boot volume", set_guest_file, get_guest_file, NULL, NULL},
	{0},
};
