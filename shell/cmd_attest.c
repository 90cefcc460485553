/*
 * shell/cmd_attest.c — `attest`: evidence from the attestation service
 * (kernel/attest.h) over report data the shell composes (shell/evidence.h,
 * docs/attestation.md) from the client's nonce, the model digest, this
 * boot's ephemeral X25519 public key and the build id, and the evidence
 * bundle other commands build on (shell_attest_bundle). The model's
 * measurement is shell/attest_measure.c's, the unwrapping behind `unseal
 * --wrapped` shell/attest_unwrap.c's (shell/cmd_attest.h).
 *
 * The shell never names a provider's internals: it asks the service which
 * providers exist, appends what the chosen one returns, and reads back the
 * records it knows how to show.
 */
#include "attest_state.h"
#include "cmd_attest.h"
#include "cmd_model.h"
#include "evidence.h"
#include "../kernel/attest.h"

#include <bearssl.h>

#include "../llm/seal.h"

#define CRED_MAX 2048

/* ---- arguments ---- */
static int parse_nonce(struct shell *sh, const char *h, uint8_t *out, size_t *n)
{
	size_t len = strlen(h);
	if (len < 2 || len > 2 * EVIDENCE_NONCE_MAX || len % 2)
		return shell_err(sh, -LLMK_EINVAL, "attest: --nonce: want 2 to %u hex digits (an even "
				 "count), got %zu", 2 * EVIDENCE_NONCE_MAX, len);
	for (size_t i = 0; i < len; i += 2) {
		int a = hex_digit(h[i]), b = hex_digit(h[i + 1]);
		if (a < 0 || b < 0)
			return shell_err(sh, -LLMK_EINVAL, "attest: --nonce: '%c' at position %zu is not "
					 "a hex digit", a < 0 ? h[i] : h[i + 1], a < 0 ? i + 1 : i + 2);
		out[i / 2] = (uint8_t)(a << 4 | b);
	}
	*n = len / 2;
	return 0;
}

static int parse_provider(struct shell *sh, const char *what, const char *name, int *kind)
{
	struct plat_attest_info in;
	char known[64] = "";
	size_t o = 0;

	for (int k = 0; k < PLAT_ATTEST_KINDS; k++) {
		if (plat_attest_info(k, &in))
			continue;
		if (strcmp(in.name, name) == 0) {
			*kind = k;
			return 0;
		}
		o += (size_t)plat_snprintf(known + o, sizeof known - o, "%s%s", o ? ", " : "", in.name);
	}
	return shell_err(sh, -LLMK_EINVAL, "%s: --provider: unknown provider '%s' (known: %s)",
			 what, name, known);
}

/* ---- the summary of what the provider returned ---- */
static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* TPML_PCR_SELECTION with one SHA-256 selection: its PCRs as a mask. */
static uint32_t pcr_mask(const struct evidence_rec *sel)
{
	if (!sel || sel->len < 7 || be32(sel->val) != 1 || sel->val[6] > 3 ||
	    sel->len != 7u + sel->val[6])
		return 0;
	uint32_t m = 0;
	for (int i = 0; i < sel->val[6]; i++)
		m |= (uint32_t)sel->val[7 + i] << (8 * i);
	return m;
}

static void show_tpm(const struct evidence_rec *recs, int n)
{
	const struct evidence_rec *sel = evidence_find(recs, n, ATTEST_REC_TPM_PCR_SEL, NULL),
				  *pcrs = evidence_find(recs, n, ATTEST_REC_TPM_PCRS, NULL),
				  *ak = evidence_find(recs, n, ATTEST_REC_TPM_AK_PUB, NULL),
				  *ek = evidence_find(recs, n, ATTEST_REC_TPM_EK_PUB, NULL),
				  *cert = evidence_find(recs, n, ATTEST_REC_TPM_EK_CERT, NULL),
				  *fw = evidence_find(recs, n, ATTEST_REC_TPM_LOG_FW, NULL),
				  *kl = evidence_find(recs, n, ATTEST_REC_TPM_LOG_KERNEL, NULL);
	uint32_t m = pcr_mask(sel);
	char list[80] = "", hex[65];
	size_t o = 0, at = 0;

	for (int i = 0; i < 24; i++)
		if (m & (1u << i))
			o += (size_t)plat_snprintf(list + o, sizeof list - o, "%s%d", o ? "," : "", i);
	if (ak) {
		uint8_t h[32];
		br_sha256_context c;
		br_sha256_init(&c);
		br_sha256_update(&c, ak->val, ak->len);
		br_sha256_out(&c, h);
		plat_printf("  quote        ECDSA P-256 attestation key, name 000b%s\n", seal_hex(h, 32, hex));
	}
	plat_printf("  pcrs         sha256:%s\n", list);
	for (int i = 0; i < 24 && pcrs; i++) {
		if (!(m & (1u << i)) || at + 32 > pcrs->len)
			continue;
		plat_printf("  pcr %-8d %s\n", i, seal_hex(pcrs->val + at, 32, hex));
		at += 32;
	}
	if (ek)
		plat_printf("  ek           %s, %s\n",
			    ek->len >= 2 && ek->val[1] == 0x01 ? "RSA 2048" : "ECC P-256",
			    cert ? "certificate from NV" : "no certificate in NV");
	if (cert)
		plat_printf("  ek cert      %u bytes (DER X.509)\n", cert->len);
	plat_printf("  event logs   firmware %u bytes%s, kernel %u bytes\n", fw ? fw->len : 0,
		    fw ? "" : " (none handed over)", kl ? kl->len : 0);
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* SEV-SNP ATTESTATION_REPORT (SEV-SNP Firmware ABI #56860, Table 22):
 * version 0x00, guest SVN 0x04, policy 0x08, VMPL 0x30, measurement 0x90
 * (48 bytes), host data 0xC0 (32), reported TCB 0x180, chip id 0x1A0 (64). */
#define SNP_REPORT_BYTES 1184u
static void show_snp(const struct evidence_rec *recs, int n)
{
	const struct evidence_rec *rep = evidence_find(recs, n, ATTEST_REC_SNP_REPORT, NULL),
				  *certs = evidence_find(recs, n, ATTEST_REC_SNP_CERTS, NULL);
	char hex[129];

	if (!rep || rep->len != SNP_REPORT_BYTES)
		return;
	const uint8_t *r = rep->val;
	plat_printf("  report       SEV-SNP report v%u, VMPL %u, guest svn %u, policy %#llx, "
		    "reported tcb %#llx\n", (unsigned)le64(r) & 0xffffffffu,
		    (unsigned)le64(r + 0x30) & 0xffffffffu, (unsigned)le64(r + 0x04) & 0xffffffffu,
		    (unsigned long long)le64(r + 0x08), (unsigned long long)le64(r + 0x180));
	plat_printf("  measurement  %s\n", seal_hex(r + 0x90, 48, hex));
	plat_printf("  host data    %s\n", seal_hex(r + 0xc0, 32, hex));
	plat_printf("  chip id      %s\n", seal_hex(r + 0x1a0, 64, hex));
	plat_printf("  certificates %s\n", certs ? "from the host (extended request)" : "none");
}

/* TDX TDREPORT_STRUCT (Intel TDX Module ABI): TDINFO_STRUCT at 512, MRTD at
 * its 16, RTMR0..3 at its 208 (48 bytes each). */
#define TDREPORT_BYTES 1024u
static void show_tdx(const struct evidence_rec *recs, int n)
{
	const struct evidence_rec *rep = evidence_find(recs, n, ATTEST_REC_TDX_REPORT, NULL),
				  *quote = evidence_find(recs, n, ATTEST_REC_TDX_QUOTE, NULL);
	char hex[97];

	if (quote)
		plat_printf("  quote        TDX quote v4, %u bytes\n", quote->len);
	else
		plat_printf("  quote        none (the TD report alone)\n");
	if (!rep || rep->len != TDREPORT_BYTES)
		return;
	plat_printf("  mrtd         %s\n", seal_hex(rep->val + 512 + 16, 48, hex));
	for (int i = 0; i < 4; i++)
		plat_printf("  rtmr %-7d %s\n", i, seal_hex(rep->val + 512 + 208 + 48 * i, 48, hex));
}

/* What `attest` prints of each provider's own records, by kind (none has
 * none: its evidence is the common records alone). */
static void (*const show[PLAT_ATTEST_KINDS])(const struct evidence_rec *recs, int n) = {
	[PLAT_ATTEST_VTPM] = show_tpm,
	[PLAT_ATTEST_SNP] = show_snp,
	[PLAT_ATTEST_TDX] = show_tdx,
};

/* ---- attest --activate ---- */
static int activate(struct shell *sh, int kind, const char *b64)
{
	uint8_t cred[CRED_MAX], out[64];
	size_t on = 0;
	char hex[129];

	long n = b64_decode(b64, strlen(b64), cred, sizeof cred);
	if (n < 0)
		return shell_err(sh, -LLMK_EINVAL, "attest: --activate: not base64 of a credential "
				 "(RFC 4648, padded, at most %d bytes)", CRED_MAX);
	int e = plat_attest_activate(kind, cred, (size_t)n, out, sizeof out, &on);
	if (e)
		return shell_err(sh, e, "attest: --activate: %s", plat_attest_error());
	plat_printf("activated: the credential opened in this TPM with its EK and attestation key\n");
	plat_printf("secret: %s\n", seal_hex(out, on, hex));
	return 0;
}

/* The bundle: the common records, then the provider's evidence
 * over the report data (a simulated provider writes its own SIMULATED
 * record, naming itself). One error line on failure. */
static int compose(struct shell *sh, const char *what, int kind,
		   const struct plat_attest_info *info, const struct evidence_inputs *in,
		   uint8_t *buf, size_t *len, uint8_t rd[64])
{
	int r = evidence_begin(buf, EVIDENCE_MAX, len, info->name, in, rd);
	if (r)
		return shell_err(sh, r, "%s: composing the evidence: %s", what, plat_strerror(r));
	if ((r = plat_attest_evidence(kind, rd, buf, EVIDENCE_MAX, len)))
		return shell_err(sh, r, "%s: %s", what, plat_attest_error()[0] ? plat_attest_error()
									 : plat_strerror(r));
	return 0;
}

void shell_attest_print_config(struct shell *sh)
{
	char hex[65];
	seal_hex(sh->config_digest, 32, hex);
	if (sh->config_len)
		plat_printf("  config       %s (SHA-256 of llmk.cfg's %zu bytes)\n", hex,
			    sh->config_len);
	else
		plat_printf("  config       %s (none: the empty configuration)\n", hex);
}

int shell_attest_bundle(struct shell *sh, const char *what, const char *provider,
			struct evidence_inputs *in, struct plat_attest_info *info, uint8_t **buf,
			size_t *len, uint8_t rd[64], char *src, size_t srcn)
{
	int kind = plat_attest_default(), r;

	*buf = NULL;
	*len = 0;
	if (!shell_attest_state(sh))
		return shell_err(sh, -LLMK_ENOMEM, "%s: no memory for the attestation state", what);
	if (provider && (r = parse_provider(sh, what, provider, &kind)))
		return r;
	if ((r = plat_attest_info(kind, info)))
		return shell_err(sh, r, "%s: provider %d: %s", what, kind, plat_strerror(r));
	if (!info->present)
		return shell_err(sh, -LLMK_ENOENT, "%s: provider %s is absent: %s", what, info->name,
				 info->detail);
	if ((r = shell_attest_model_digest(sh, -1, in->model_digest, src, srcn)))
		return r;
	plat_snprintf(in->build_id, sizeof in->build_id, "%s", plat_build_id());
	memcpy(in->config_digest, sh->config_digest, 32);
	if (!(*buf = plat_alloc(EVIDENCE_MAX, 64)))
		return shell_err(sh, -LLMK_ENOMEM, "%s: no memory for the evidence (%u bytes)", what,
				 EVIDENCE_MAX);
	if ((r = compose(sh, what, kind, info, in, *buf, len, rd))) {
		plat_free(*buf, EVIDENCE_MAX);
		*buf = NULL;
	}
	return r;
}

static int cmd_attest(struct shell *sh, int argc, char **argv)
{
	struct attest_shell *s = shell_attest_state(sh);
	struct evidence_inputs in;
	struct plat_attest_info info;
	const char *nonce_hex = NULL, *provider = NULL, *cred = NULL;
	char src[96], hex[129];
	int kind, disk = -1, r;

	if (!s)
		return shell_err(sh, -LLMK_ENOMEM, "attest: no memory for the attestation state");
	for (int i = 1; i < argc; i++) {
		bool more = i + 1 < argc;
		if (strcmp(argv[i], "--nonce") == 0 && more)
			nonce_hex = argv[++i];
		else if (strcmp(argv[i], "--provider") == 0 && more)
			provider = argv[++i];
		else if (strcmp(argv[i], "--disk") == 0 && more) {
			if (shell_arg_disk(sh, argv[++i], &disk))
				return -LLMK_EINVAL;
		} else if (strcmp(argv[i], "--activate") == 0 && more)
			cred = argv[++i];
		else if (argv[i][0] == '-' && !more &&
			 (!strcmp(argv[i], "--nonce") || !strcmp(argv[i], "--provider") ||
			  !strcmp(argv[i], "--disk") || !strcmp(argv[i], "--activate")))
			return shell_err(sh, -LLMK_EINVAL, "attest: %s needs a value", argv[i]);
		else
			return shell_err(sh, -LLMK_EINVAL, "attest: unknown argument '%s' (usage: attest "
					 "[--nonce HEX] [--provider P] [--disk N] | attest --activate "
					 "BASE64)", argv[i]);
	}
	kind = plat_attest_default();
	if (provider && (r = parse_provider(sh, "attest", provider, &kind)))
		return r;
	if ((r = plat_attest_info(kind, &info)))
		return shell_err(sh, r, "attest: provider %d: %s", kind, plat_strerror(r));
	if (!info.present)
		return shell_err(sh, -LLMK_ENOENT, "attest: provider %s is absent: %s", info.name,
				 info.detail);
	if (cred)
		return activate(sh, kind, cred);

	memset(&in, 0, sizeof in);
	if (nonce_hex) {
		if ((r = parse_nonce(sh, nonce_hex, in.nonce, &in.nonce_len)))
			return r;
	} else {
		in.nonce_len = 32;
		if (plat_entropy(in.nonce, 32))
			return shell_err(sh, -LLMK_EIO, "attest: no entropy for a nonce");
	}
	if ((r = shell_attest_model_digest(sh, disk, in.model_digest, src, sizeof src)))
		return r;
	if (shell_attest_pair(s))
		return shell_err(sh, -LLMK_EIO, "attest: cannot make the X25519 key pair (no entropy)");
	memcpy(in.pubkey, s->pub, 32);
	plat_snprintf(in.build_id, sizeof in.build_id, "%s", plat_build_id());
	memcpy(in.config_digest, sh->config_digest, 32);

	uint8_t *buf = plat_alloc(EVIDENCE_MAX, 64);
	char *b64 = plat_alloc(EVIDENCE_MAX / 3 * 4 + 8, 64);
	uint8_t rd[64];
	size_t len = 0;
	if (!buf || !b64) {
		plat_free(buf, EVIDENCE_MAX);
		return shell_err(sh, -LLMK_ENOMEM, "attest: no memory for the evidence (%u bytes)",
				 EVIDENCE_MAX);
	}
	if ((r = compose(sh, "attest", kind, &info, &in, buf, &len, rd)))
		goto out;
	/* remembered for `unseal --wrapped` (the oldest goes when full) */
	if (s->n_issued == ATTEST_ISSUED) {
		memmove(&s->issued[0], &s->issued[1], sizeof s->issued[0] * (ATTEST_ISSUED - 1));
		s->n_issued--;
	}
	memcpy(s->issued[s->n_issued].rd, rd, 64);
	s->issued[s->n_issued].kind = kind;
	s->issued[s->n_issued].simulated = info.simulated;
	s->n_issued++;

	if (kind == PLAT_ATTEST_NONE) {
		plat_printf("attest: provider none: NOT HARDWARE EVIDENCE (no quote or report; no "
			    "verifier accepts it)\n");
		for (int k = 0; k < PLAT_ATTEST_KINDS; k++) {
			struct plat_attest_info o;
			if (k != PLAT_ATTEST_NONE && !plat_attest_info(k, &o) && !o.present)
				plat_printf("  %-12s absent: %s\n", o.name, o.detail);
		}
	} else {
		plat_printf("attest: provider %s: %s\n", info.name, info.detail);
	}
	if (info.simulated)
		plat_printf("  SIMULATED    %s\n", info.detail);
	plat_printf("  nonce        %s%s\n", seal_hex(in.nonce, in.nonce_len, hex),
		    nonce_hex ? "" : " (random: no --nonce given)");
	plat_printf("  model        %s (%s)\n", seal_hex(in.model_digest, 32, hex), src);
	plat_printf("  public key   %s (X25519, ephemeral, this boot)\n", seal_hex(in.pubkey, 32, hex));
	plat_printf("  build id     %s\n", in.build_id);
	shell_attest_print_config(sh);
	plat_printf("  report data  %s\n", seal_hex(rd, 64, hex));
	if (kind >= 0 && kind < PLAT_ATTEST_KINDS && show[kind]) {
		struct evidence_rec recs[32];
		char err[160];
		int n = evidence_parse(buf, len, recs, 32, err, sizeof err);
		if (n > 0)
			show[kind](recs, n);
	}
	long m = b64_encode(buf, len, b64, EVIDENCE_MAX / 3 * 4 + 8);
	if (m < 0) {
		r = shell_err(sh, (int)m, "attest: evidence of %zu bytes does not fit base64", len);
		goto out;
	}
	plat_printf("evidence: %s\n", b64);
	r = 0;
out:
	plat_free(buf, EVIDENCE_MAX);
	plat_free(b64, EVIDENCE_MAX / 3 * 4 + 8);
	return r;
}

const struct shell_cmd shell_cmds_attest[] = {
	{"attest", "attest [--nonce HEX] [--provider P] [--disk N]\nattest --activate BASE64 [--provider P]",
	 "evidence binding the nonce, the model digest, this boot's X25519 key and the build id; "
	 "or open a TPM credential (--activate)",
	 cmd_attest},
	{0},
};
