/*
 * tools/mkevidence.c — build/host/mkevidence: a TEST TOOL, not part of any
 * attestation. It plays the guest's side of attestation on the host so the
 * verifier can be tested end to end from the shell (tests/host/
 * verifier_bundle.sh) before the host llmctl's `attest --provider snp`
 * exists: `snp` writes an llmk evidence bundle (shell/evidence.h,
 * evidence_begin) whose SEV-SNP report and certificate table come from the
 * firmware simulator (tools/host/snp_provider.c, snp_sim_provider_evidence;
 * LLMK_SNP_SIM as for llmctl, "1" when unset), so the bundle carries a
 * SIMULATED record like every simulated evidence; `unwrap` opens what
 * `verifier wrap` made, as the guest's `unseal --wrapped` would.
 *
 *   mkevidence snp --nonce HEX --priv HEX [--model SHA256] [--build-id ID] --out FILE
 *                  [--chain-out FILE] [--ark-out FILE] [--vcek-out FILE] [--report-out FILE]
 *   mkevidence tdx-quote --quote FILE --nonce HEX --priv HEX [--model SHA256] --out FILE
 *   mkevidence unwrap --priv HEX --wrapped FILE
 *   mkevidence tdx-chain --out FILE
 *   mkevidence forge-vtpm --evidence FILE --nonce HEX --priv HEX --out FILE
 *
 * --priv is the guest's X25519 private key (64 hex digits; a test holds it);
 * the bundle's PUBKEY is its public half. --chain-out writes the
 * simulator's ASK and ARK (PEM), --ark-out the ARK alone, --vcek-out the
 * VCEK (DER): the user's side of the chain; --report-out the bare report
 * (for `verifier snp --report`). `tdx-quote` wraps an existing
 * TDX quote in a bundle: its REPORTDATA was made for another bundle, so
 * the verifier must refuse it (a test of that refusal). `tdx-chain` writes
 * the TDX simulator's test chain (PCK, platform CA, root; PEM), the same in
 * every process: what a user of llmctl's `attest --provider tdx` (with
 * LLMK_TDX_SIM) passes as `verifier tdx --chain`. `forge-vtpm` is the
 * attack on vtpm evidence (tools/writer/forge_vtpm.h): a genuine bundle
 * re-signed by a software key with the AK's template over the attacker's
 * nonce and X25519 key (--priv's public half); `unwrap` then shows that
 * what a verifier released to it does not open without the TPM. Every line it
 * prints to stdout is "name: value".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../llm/codec.h"
#include "../shell/evidence.h"
#include "../shell/keywrap.h"
#include "verify/cmd.h"
#include "verify/verify.h"
#include "host/snp_sim.h"
#include "host/tdx_sim.h"
#include "writer/forge_vtpm.h"

static const char usage[] =
	"usage: mkevidence snp --nonce HEX --priv HEX [--model SHA256] [--build-id ID] [--config FILE]\n"
	"                      --out FILE\n"
	"                      [--chain-out FILE] [--ark-out FILE] [--vcek-out FILE] [--report-out FILE]\n"
	"       mkevidence tdx-quote --quote FILE --nonce HEX --priv HEX [--model SHA256] --out FILE\n"
	"       mkevidence unwrap --priv HEX --wrapped FILE\n"
	"       mkevidence tdx-chain --out FILE\n"
	"       mkevidence forge-vtpm --evidence FILE --nonce HEX --priv HEX --out FILE\n"
	"  A test tool: its SEV-SNP evidence comes from the firmware simulator (SIMULATED).\n";

struct opts;
static int cmd_tdx_chain(const struct opts *o);

struct opts {
	const char *nonce, *priv, *model, *build_id, *out, *chain_out, *ark_out, *vcek_out;
	const char *report_out;
	const char *quote, *wrapped, *evidence;
	const char *config; /* the llmk.cfg the guest was told (none: the empty configuration) */
};

/* Even-length hex into out[max]; the length, or -1. */
static long hex(const char *s, uint8_t *out, size_t max)
{
	long n = *s ? hex_decode(s, strlen(s), out, max, NULL) : -1;
	return n < 0 ? -1 : n;
}

static void print_hex(const char *name, const uint8_t *p, size_t n)
{
	printf("%s: ", name);
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("\n");
}

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return cmd_fail("%s: %s", path, strerror(errno));
	bool ok = fwrite(p, 1, n, f) == n;
	if (fclose(f) != 0)
		ok = false;
	return ok ? 0 : cmd_fail("%s: write error", path);
}

static uint8_t *read_file(const char *path, size_t max, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = f ? malloc(max + 1) : NULL;
	if (!b) {
		cmd_fail("%s: %s", path, f ? "out of memory" : strerror(errno));
		if (f)
			fclose(f);
		return NULL;
	}
	*n = fread(b, 1, max, f);
	fclose(f);
	b[*n] = 0;
	return b;
}

/* The bundle's common records (evidence_begin) from the options. */
static int begin(const struct opts *o, const char *provider, uint8_t *buf, size_t cap, size_t *len,
		 uint8_t rd[64])
{
	struct evidence_inputs in;
	uint8_t priv[32];
	long k;

	memset(&in, 0, sizeof in);
	if (!o->nonce || !o->priv || !o->out)
		return cmd_fail("--nonce, --priv and --out are required\n%s", usage);
	if ((k = hex(o->nonce, in.nonce, EVIDENCE_NONCE_MAX)) < 0)
		return cmd_fail("--nonce: want 2 to 128 hex digits, got '%.140s'", o->nonce);
	in.nonce_len = (size_t)k;
	if (hex(o->priv, priv, 32) != 32)
		return cmd_fail("--priv: want 64 hex digits (an X25519 private key)");
	if (o->model && hex(o->model, in.model_digest, 32) != 32)
		return cmd_fail("--model: want 64 hex digits (a SHA-256)");
	const char *bid = o->build_id ? o->build_id : plat_build_id();
	if (strlen(bid) == 0 || strlen(bid) > 16)
		return cmd_fail("--build-id: want 1 to 16 characters, got '%.40s'", bid);
	memcpy(in.build_id, bid, strlen(bid));
	if (o->config) {
		size_t n;
		uint8_t *text = read_file(o->config, 1u << 20, &n);
		if (!text)
			return cmd_fail("--config %.200s: cannot read it", o->config);
		evidence_config_digest(text, n, in.config_digest);
		free(text);
	} else {
		evidence_config_digest("", 0, in.config_digest);
	}
	int e = keywrap_public(priv, in.pubkey);
	memset(priv, 0, sizeof priv);
	if (e)
		return cmd_fail("--priv: its public key is a point of small order");
	if (evidence_begin(buf, cap, len, provider, &in, rd) < 0)
		return cmd_fail("the bundle does not fit");
	print_hex("report_data", rd, 64);
	print_hex("pubkey", in.pubkey, 32);
	return 0;
}

/* The bundle as attest prints it: one "evidence: <base64>" line. */
static int write_bundle(const char *path, const uint8_t *b, size_t n)
{
	size_t cap = (n + 2) / 3 * 4 + 16;
	char *text = malloc(cap);
	if (!text)
		return cmd_fail("out of memory");
	memcpy(text, "evidence: ", 10);
	long k = b64_encode(b, n, text + 10, cap - 11);
	int r = k < 0 ? cmd_fail("base64") : 0;
	if (!r) {
		text[10 + k] = '\n';
		r = write_file(path, text, (size_t)k + 11);
	}
	free(text);
	if (!r)
		printf("evidence: %s (%zu bytes)\n", path, n);
	return r;
}

static int write_pem(const char *path, const uint8_t *const der[], const size_t len[], int n)
{
	static char pem[2][2 * SNP_SIM_CERT_MAX];
	size_t total = 0;
	char *all = malloc(sizeof pem);
	if (!all)
		return cmd_fail("out of memory");
	for (int i = 0; i < n; i++) {
		long k = snp_sim_pem(der[i], len[i], pem[i], sizeof pem[i]);
		if (k < 0) {
			free(all);
			return cmd_fail("%s: PEM does not fit", path);
		}
		memcpy(all + total, pem[i], (size_t)k);
		total += (size_t)k;
	}
	int r = write_file(path, all, total);
	free(all);
	return r;
}

static int cmd_snp(const struct opts *o)
{
	static uint8_t buf[EVIDENCE_MAX];
	uint8_t rd[64];
	size_t len = 0;
	const char *why;

	if (!getenv("LLMK_SNP_SIM"))
		setenv("LLMK_SNP_SIM", "1", 1);
	if ((why = snp_sim_provider_why_absent()))
		return cmd_fail("%s", why);
	if (begin(o, "snp", buf, sizeof buf, &len, rd))
		return 1;
	if (snp_sim_provider_evidence(rd, buf, sizeof buf, &len) < 0)
		return cmd_fail("snp-sim: %s", snp_sim_provider_error());
	if (o->report_out) {
		struct evidence_rec recs[16];
		char why[200];
		int n = evidence_parse(buf, len, recs, 16, why, sizeof why);
		const struct evidence_rec *r = n < 0 ? NULL :
			evidence_find(recs, n, ATTEST_REC_SNP_REPORT, NULL);
		if (!r || write_file(o->report_out, r->val, r->len))
			return r ? 1 : cmd_fail("the simulator's evidence has no SNP_REPORT record");
	}
	const struct snp_sim_chain *c = snp_sim_provider_chain();
	if (!c)
		return cmd_fail("snp-sim: no test chain");
	const uint8_t *ask_ark[2] = {c->ask, c->ark};
	const size_t ask_ark_len[2] = {c->ask_len, c->ark_len};
	if (write_bundle(o->out, buf, len) ||
	    (o->chain_out && write_pem(o->chain_out, ask_ark, ask_ark_len, 2)) ||
	    (o->ark_out && write_pem(o->ark_out, ask_ark + 1, ask_ark_len + 1, 1)) ||
	    (o->vcek_out && write_file(o->vcek_out, c->vcek, c->vcek_len)))
		return 1;
	print_hex("measurement", snp_sim_provider_sim()->cfg.measurement, 48);
	printf("simulated: snp-sim (the chain is the simulator's test chain, not AMD's)\n");
	return 0;
}

static int cmd_tdx_quote(const struct opts *o)
{
	static uint8_t buf[EVIDENCE_MAX];
	uint8_t rd[64], *q;
	size_t len = 0, qn;

	if (!o->quote)
		return cmd_fail("--quote FILE is required\n%s", usage);
	if (!(q = read_file(o->quote, 1u << 16, &qn)))
		return 1;
	int r = begin(o, "tdx", buf, sizeof buf, &len, rd);
	if (!r && attest_rec_put(buf, sizeof buf, &len, ATTEST_REC_TDX_QUOTE, q, qn) < 0)
		r = cmd_fail("the bundle does not fit");
	free(q);
	return r ? r : write_bundle(o->out, buf, len);
}

static int cmd_tdx_chain(const struct opts *o)
{
	if (!o->out)
		return cmd_fail("tdx-chain needs --out FILE\n%s", usage);
	if (!getenv("LLMK_TDX_SIM"))
		setenv("LLMK_TDX_SIM", "1", 1);
	const char *why = tdx_sim_provider_why_absent();
	struct tdx_sim *s = why ? NULL : tdx_sim_provider_sim();
	if (!s)
		return cmd_fail("the TDX simulator is not available: %s", why ? why : "?");
	if (write_file(o->out, s->chain.pem, s->chain.pem_len))
		return 1;
	printf("chain: %s (%zu bytes: PCK, platform CA, root; SIMULATED, not Intel's)\n", o->out,
	       s->chain.pem_len);
	return 0;
}

static int cmd_unwrap(const struct opts *o)
{
	static uint8_t blob[KEYWRAP_MAX + 8];
	uint8_t priv[32], pub[32], rd[64], key[32];
	const uint8_t *cred;
	size_t n, cred_n = 0;
	if (!o->priv || !o->wrapped)
		return cmd_fail("--priv and --wrapped are required\n%s", usage);
	if (hex(o->priv, priv, 32) != 32 || keywrap_public(priv, pub))
		return cmd_fail("--priv: want 64 hex digits (an X25519 private key)");
	char *text = (char *)read_file(o->wrapped, 1u << 16, &n);
	if (!text)
		return 1;
	/* the verifier's "wrapped: <base64>" line (after any label), or bare base64 */
	char *s = strstr(text, "wrapped: ");
	s = s ? s + 9 : text;
	size_t k = strcspn(s, " \t\r\n");
	long m = b64_decode(s, k, blob, sizeof blob);
	free(text);
	if (m >= 0)
		keywrap_parse(blob, (size_t)m, rd, &cred, &cred_n);
	/* this tool has no TPM: with the X25519 key alone it tries what an
	 * attacker holding it can */
	int e = m < 0 ? -1 : keywrap_unwrap(priv, pub, blob, (size_t)m, NULL, 0, rd, key);
	memset(priv, 0, sizeof priv);
	if (m < 0)
		return cmd_fail("%s: not a base64 wrapped key", o->wrapped);
	if (e && cred_n)
		return cmd_fail("the wrapped key carries a TPM credential (%zu bytes): it opens only "
				"with the secret TPM2_ActivateCredential gives in the TPM it was made for, "
				"not with this guest key alone", cred_n);
	if (e)
		return cmd_fail("the wrapped key does not open with this guest key (%s)",
				e == -LLMK_EAUTH ? "tag does not verify" : "not a wrapped key");
	print_hex("report_data", rd, 64);
	print_hex("key", key, 32);
	memset(key, 0, sizeof key);
	return 0;
}

/* The attack: a genuine vtpm bundle re-signed by a software AK. */
static int cmd_forge_vtpm(const struct opts *o)
{
	static uint8_t out[EVIDENCE_MAX];
	uint8_t nonce[EVIDENCE_NONCE_MAX], priv[32], pub[32], seed[32];
	const char *form;
	char err[300];
	uint8_t *g;
	size_t gn, n;
	long k;

	if (!o->evidence || !o->nonce || !o->priv || !o->out)
		return cmd_fail("--evidence, --nonce, --priv and --out are required\n%s", usage);
	if ((k = hex(o->nonce, nonce, sizeof nonce)) < 0)
		return cmd_fail("--nonce: want 2 to 128 hex digits");
	if (hex(o->priv, priv, 32) != 32 || keywrap_public(priv, pub))
		return cmd_fail("--priv: want 64 hex digits (an X25519 private key)");
	if (verify_read_evidence(o->evidence, &g, &gn, &form, err, sizeof err) < 0)
		return cmd_fail("%s", err);
	memcpy(seed, priv, 32); /* the same attacker, the same software AK */
	int r = forge_vtpm(g, gn, nonce, (size_t)k, pub, seed, sizeof seed, out, sizeof out, &n,
			   err, sizeof err);
	free(g);
	if (r < 0)
		return cmd_fail("forge-vtpm: %s", err);
	if (write_bundle(o->out, out, n))
		return 1;
	printf("forged: %s (%zu bytes: the genuine PCRs, logs and EK certificate, quoted by a "
	       "software AK)\n", o->out, n);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct cmd_opt opts[] = {
		{"--nonce", offsetof(struct opts, nonce)},
		{"--priv", offsetof(struct opts, priv)},
		{"--model", offsetof(struct opts, model)},
		{"--config", offsetof(struct opts, config)},
		{"--build-id", offsetof(struct opts, build_id)},
		{"--out", offsetof(struct opts, out)},
		{"--chain-out", offsetof(struct opts, chain_out)},
		{"--ark-out", offsetof(struct opts, ark_out)},
		{"--vcek-out", offsetof(struct opts, vcek_out)},
		{"--report-out", offsetof(struct opts, report_out)},
		{"--quote", offsetof(struct opts, quote)},
		{"--wrapped", offsetof(struct opts, wrapped)},
		{"--evidence", offsetof(struct opts, evidence)},
	};
	struct opts o;

	memset(&o, 0, sizeof o);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2;
	}
	for (int i = 2; i < argc; i++) {
		const struct cmd_opt *k = cmd_opt_find(opts, sizeof opts / sizeof opts[0], argv[i],
						       strlen(argv[i]));
		if (!k || i + 1 >= argc)
			return cmd_fail("unknown option or missing value '%s'\n%s", argv[i], usage);
		*cmd_opt_slot(&o, k) = argv[++i];
	}
	if (!strcmp(argv[1], "snp"))
		return cmd_snp(&o);
	if (!strcmp(argv[1], "tdx-quote"))
		return cmd_tdx_quote(&o);
	if (!strcmp(argv[1], "unwrap"))
		return cmd_unwrap(&o);
	if (!strcmp(argv[1], "tdx-chain"))
		return cmd_tdx_chain(&o);
	if (!strcmp(argv[1], "forge-vtpm"))
		return cmd_forge_vtpm(&o);
	return cmd_fail("unknown command '%s'\n%s", argv[1], usage);
}
