/*
 * tests/unit/test_cmd_attest.c — `attest`, `load`'s measurement and
 * `unseal --wrapped` as a user of build/host/llmctl sees them: the evidence
 * line decodes into a bundle whose report data is the documented SHA-512 of
 * its inputs (recomputed here from the records), provider none says it is
 * not evidence, `load` extends PCR 23 by the model's digest (checked against
 * an extend computed in software from sha256 of the file), and every bad
 * input gets one error line.
 */
#define _GNU_SOURCE /* memmem */
#include "test.h"
#include "shell_fixture.h"
#include "vtpm.h"
#include "../../shell/evidence.h"
#include "../../shell/shell.h"
#include "../../tools/host/host.h"
#include "../../tools/host/snp_sim.h"
#include "../../tools/host/tdx_sim.h"
#include "../../tools/writer/mkmodel.h"

#include <bearssl.h>
#include <stdlib.h>

static int lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void sha256(const void *p, size_t n, uint8_t out[32])
{
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, p, n);
	br_sha256_out(&c, out);
}

TEST(attest_with_no_provider_says_so_and_its_report_data_is_the_documented_digest)
{
	int st;
	struct shell_fixture f;
	char *old = vtpm_env_set(NULL);
	CHECK_EQ_INT(fixture_open(&f, NULL, NULL), 0);
	const char *out = fixture_run(&f, "attest --nonce 00ff10", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "attest: provider none: NOT HARDWARE EVIDENCE") != NULL);
	CHECK(strstr(out, "  vtpm         absent: LLMK_VTPM is not set") != NULL);
	CHECK(strstr(out, "  nonce        00ff10\n") != NULL);
	CHECK(strstr(out, "(none: no model loaded and no sealed disk (zeros))") != NULL);
	size_t n = 0;
	uint8_t *b = test_decode_line(out, "evidence: ", &n);
	CHECK(b != NULL);
	if (b) {
		struct evidence_rec r[16];
		char err[160];
		int k = evidence_parse(b, n, r, 16, err, sizeof err);
		CHECK(k >= 7);
		const struct evidence_rec *prov = evidence_find(r, k, ATTEST_REC_PROVIDER, NULL),
					  *rd = evidence_find(r, k, ATTEST_REC_REPORT_DATA, NULL),
					  *no = evidence_find(r, k, ATTEST_REC_NONCE, NULL),
					  *md = evidence_find(r, k, ATTEST_REC_MODEL_DIGEST, NULL),
					  *pk = evidence_find(r, k, ATTEST_REC_PUBKEY, NULL),
					  *id = evidence_find(r, k, ATTEST_REC_BUILD_ID, NULL),
					  *mach = evidence_find(r, k, ATTEST_REC_MACHINE, NULL),
					  *cf = evidence_find(r, k, ATTEST_REC_CONFIG_DIGEST, NULL);
		/* no MACHINE record: nothing would bind it (verifiers refuse it) */
		CHECK(prov && rd && no && md && pk && id && !mach && cf);
		CHECK(evidence_find(r, k, ATTEST_REC_TPM_QUOTE, NULL) == NULL);
		if (prov && rd && no && md && pk && id && cf) {
			CHECK(prov->len == 4 && memcmp(prov->val, "none", 4) == 0);
			CHECK(no->len == 3 && memcmp(no->val, "\x00\xff\x10", 3) == 0);
			/* docs/attestation.md: SHA-512 over the 193-byte layout; no
			 * llmk.cfg: the empty configuration, SHA-256 of zero bytes */
			uint8_t lay[193] = "LLMK-REPORT-V2", want[64], empty[32];
			br_sha256_context e;
			br_sha256_init(&e);
			br_sha256_out(&e, empty);
			CHECK(cf->len == 32 && memcmp(cf->val, empty, 32) == 0);
			memcpy(lay + 161, cf->val, 32);
			lay[16] = 3;
			memcpy(lay + 17, no->val, 3);
			memcpy(lay + 81, md->val, 32);
			memcpy(lay + 113, pk->val, 32);
			memcpy(lay + 145, id->val, id->len > 16 ? 16 : id->len);
			br_sha512_context c;
			br_sha512_init(&c);
			br_sha512_update(&c, lay, sizeof lay);
			br_sha512_out(&c, want);
			CHECK(rd->len == 64 && memcmp(rd->val, want, 64) == 0);
		}
		free(b);
	}
	/* the same boot keeps its key pair: the public key repeats */
	char pk1[80] = "", pk2[80] = "";
	const char *p = strstr(out, "public key   ");
	if (p)
		memcpy(pk1, p, 64 + 13);
	out = fixture_run(&f, "attest", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "(random: no --nonce given)") != NULL);
	p = strstr(out, "public key   ");
	if (p)
		memcpy(pk2, p, 64 + 13);
	CHECK(pk1[0] && strcmp(pk1, pk2) == 0);
	fixture_close(&f);
	vtpm_env_restore(old);
}

/* The hex of n bytes at p, as `attest` prints it. */
static const char *hex_of(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	return out;
}

/* attest prints a summary of every provider's own records (the provider
 * table in shell/cmd_attest.c), each value the one in the evidence it
 * prints: SEV-SNP's measurement and chip id from the report, TDX's MRTD and
 * RTMR3 from the TD report. */
TEST(attest_shows_each_providers_own_records_as_its_evidence_holds_them)
{
	int st;
	struct shell_fixture f;
	char want[200], hex[129];

	setenv("LLMK_SNP_SIM", "1", 1);
	setenv("LLMK_TDX_SIM", "1", 1);
	snp_sim_provider_reset();
	tdx_sim_provider_reset();
	CHECK_EQ_INT(fixture_open(&f, NULL, NULL), 0);
	for (int tdx = 0; tdx < 2; tdx++) {
		const char *out = fixture_run(&f, tdx ? "attest --provider tdx --nonce 01"
						      : "attest --provider snp --nonce 01", &st);
		CHECK_EQ_INT(st, 0);
		size_t n = 0;
		uint8_t *b = test_decode_line(out, "evidence: ", &n);
		CHECK(b != NULL);
		if (!b)
			continue;
		struct evidence_rec r[16];
		char err[160];
		int k = evidence_parse(b, n, r, 16, err, sizeof err);
		const struct evidence_rec *rep =
			evidence_find(r, k, tdx ? ATTEST_REC_TDX_REPORT : ATTEST_REC_SNP_REPORT, NULL);
		CHECK(rep != NULL);
		if (rep && !tdx) {
			CHECK(rep->len == 1184);
			snprintf(want, sizeof want, "  measurement  %s\n", hex_of(rep->val + 0x90, 48, hex));
			CHECK(strstr(out, want) != NULL);
			snprintf(want, sizeof want, "  chip id      %s\n", hex_of(rep->val + 0x1a0, 64, hex));
			CHECK(strstr(out, want) != NULL);
			CHECK(strstr(out, "  report       SEV-SNP report v") != NULL);
		} else if (rep) {
			CHECK(rep->len == 1024);
			snprintf(want, sizeof want, "  mrtd         %s\n", hex_of(rep->val + 512 + 16, 48, hex));
			CHECK(strstr(out, want) != NULL);
			snprintf(want, sizeof want, "  rtmr 3       %s\n",
				 hex_of(rep->val + 512 + 208 + 3 * 48, 48, hex));
			CHECK(strstr(out, want) != NULL);
			CHECK(strstr(out, "  quote        TDX quote v4, ") != NULL);
		}
		free(b);
	}
	fixture_close(&f);
	unsetenv("LLMK_SNP_SIM");
	unsetenv("LLMK_TDX_SIM");
	snp_sim_provider_reset();
	tdx_sim_provider_reset();
}

TEST(attest_and_unseal_wrapped_give_one_error_line_for_each_bad_input)
{
	static const char *const bad[] = {
		"attest --nonce xyz",        "attest --nonce 0",        "attest --nonce 0g",
		"attest --provider tpm",     "attest --provider snp",   "attest --disk 3",
		"attest --nonce",            "attest extra",            "attest --activate !!!",
		"unseal --wrapped AAAA",     "unseal --wrapped ===",    "unseal --wrapped",
	};
	struct shell_fixture f;
	char *old = vtpm_env_set(NULL);
	CHECK_EQ_INT(fixture_open(&f, NULL, NULL), 0);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int st = 0;
		const char *out = fixture_run(&f, bad[i], &st);
		if (st >= 0 || lines(out) != 1 || strncmp(out, "error: ", 7) != 0)
			fprintf(stderr, "  '%s' -> %d: %s", bad[i], st, out);
		CHECK(st < 0);
		CHECK_EQ_INT(lines(out), 1);
		CHECK(strncmp(out, "error: ", 7) == 0);
	}
	/* still serving */
	int st;
	fixture_run(&f, "attest --nonce 01", &st);
	CHECK_EQ_INT(st, 0);
	fixture_close(&f);
	vtpm_env_restore(old);
}

/* PCR 23 after a reset and the shell's first measurement: the empty
 * configuration (no llmk.cfg), "llmk config <SHA-256 of zero bytes>". */
static void pcr_after_empty_config(uint8_t pcr[32])
{
	uint8_t both[64] = {0};
	sha256(both, 0, both + 32);
	sha256(both, 64, pcr);
}

TEST(load_extends_pcr_23_by_the_models_sha256_and_attest_quotes_it)
{
	char why[240], path[4096];
	const char *td = testdata_dir(), *vt = test_vtpm_path(why, sizeof why);
	if (!td)
		SKIP("no testdata (stories260K)");
	if (!vt)
		SKIP("no swtpm: %s", why);
	snprintf(path, sizeof path, "%s/stories260K/stories260K.gguf", td);
	size_t fn = 0;
	uint8_t *file = test_read_file(path, &fn), md[32], pcr[32] = {0}, hex_want[65];
	CHECK(file != NULL);
	if (!file)
		return;
	sha256(file, fn, md);
	free(file);
	/* the provider resets PCR 23 when it opens, as a boot would; the
	 * configuration (none: SHA-256 of zero bytes) is measured first */
	uint8_t both[64];
	pcr_after_empty_config(pcr);
	memcpy(both, pcr, 32);
	memcpy(both + 32, md, 32);
	sha256(both, 64, pcr);
	for (int i = 0; i < 32; i++)
		sprintf((char *)hex_want + 2 * i, "%02x", pcr[i]);

	struct shell_fixture f;
	char *old = vtpm_env_set(vt);
	CHECK_EQ_INT(fixture_open(&f, (const char *[]){path, NULL}, NULL), 0);
	int st;
	const char *out = fixture_run(&f, "load 0", &st);
	CHECK_EQ_INT(st, 0);
	out = fixture_run(&f, "attest --nonce 0102", &st);
	CHECK_EQ_INT(st, 0);
	char line[100];
	snprintf(line, sizeof line, "  pcr 23       %s\n", (char *)hex_want);
	CHECK(strstr(out, line) != NULL);
	CHECK(strstr(out, "(loaded model, disk 0: SHA-256 of the GGUF's 1185376 bytes as loaded)") != NULL);
	CHECK(strstr(out, "  SIMULATED    host build, swtpm at") != NULL);
	CHECK(strstr(out, "  pcrs         sha256:0,1,2,3,4,5,6,7,23\n") != NULL);
	/* a credential that is not one: one error line, still serving */
	out = fixture_run(&f, "attest --activate AAAAAAAAAAAA", &st);
	CHECK(st < 0 && lines(out) == 1 && strstr(out, "error: attest: --activate: vtpm:") == out);
	fixture_run(&f, "attest --nonce 03", &st);
	CHECK_EQ_INT(st, 0);
	fixture_close(&f);
	host_attest_reset(); /* close the provider's swtpm connection */
	vtpm_env_restore(old);
}

/* Whether attest's output quotes PCR 23 as a vTPM reset at open holds
 * after extending each of the n digests. */
static bool quotes_pcr_after(const char *out, const uint8_t (*md)[32], int n)
{
	uint8_t pcr[32], both[64];
	char line[100];
	int k;

	pcr_after_empty_config(pcr);
	for (k = 0; k < n; k++) {
		memcpy(both, pcr, 32);
		memcpy(both + 32, md[k], 32);
		sha256(both, 64, pcr);
	}
	k = snprintf(line, sizeof line, "  pcr 23       ");
	for (int i = 0; i < 32; i++)
		k += snprintf(line + k, sizeof line - (size_t)k, "%02x", pcr[i]);
	snprintf(line + k, sizeof line - (size_t)k, "\n");
	return strstr(out, line) != NULL;
}

/*
 * A streamed model in file order is measured by its first pass, and its
 * digest goes into PCR 23 when that pass's command ends: so a model that
 * answered is in the measurements even if another replaced it before any
 * `attest`; `attest` before any run completes the measurement itself.
 */
TEST(a_streamed_models_digest_is_extended_after_its_first_pass)
{
	char why[240], path[4096], err[256], line[100];
	const char *vt = test_vtpm_path(why, sizeof why);
	struct mkm_spec s;
	uint8_t md[2][32];

	if (!vt)
		SKIP("no swtpm: %s", why);
	mkm_defaults(&s);
	s.tied = false; /* layers, then the head: the first pass measures */
	snprintf(path, sizeof path, "%s/pcr23-stream.gguf", test_tmpdir());
	CHECK_EQ_INT(mkm_write(&s, path, err, sizeof err), 0);
	size_t fn = 0;
	uint8_t *file = test_read_file(path, &fn);
	CHECK(file != NULL);
	if (!file)
		return;
	sha256(file, fn, md[0]);
	memcpy(md[1], md[0], 32);
	free(file);

	struct shell_fixture f;
	char *old = vtpm_env_set(vt);
	int st;
	CHECK_EQ_INT(fixture_open(&f, (const char *[]){path, NULL}, NULL), 0);
	/* streamed, a run, then the same disk again resident: two events */
	fixture_run(&f, "load --stream 0", &st);
	CHECK_EQ_INT(st, 0);
	const char *out = fixture_run(&f, "info", &st);
	CHECK(strstr(out, "bytes so far, the first pass the rest") != NULL);
	fixture_run(&f, "infer \"Once upon a time\" -n 2 --temp 0", &st);
	CHECK_EQ_INT(st, 0);
	out = fixture_run(&f, "info", &st);
	CHECK(strstr(out, "  measured       SHA-256 as loaded; every read checked") != NULL);
	fixture_run(&f, "load --resident 0", &st);
	CHECK_EQ_INT(st, 0);
	out = fixture_run(&f, "attest --nonce 0102", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(quotes_pcr_after(out, md, 2));
	fixture_close(&f);
	host_attest_reset();

	/* streamed and no run: attest completes the measurement, one event */
	CHECK_EQ_INT(fixture_open(&f, (const char *[]){path, NULL}, NULL), 0);
	fixture_run(&f, "load --stream 0", &st);
	CHECK_EQ_INT(st, 0);
	out = fixture_run(&f, "attest --nonce 0304", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(quotes_pcr_after(out, md, 1));
	snprintf(line, sizeof line, "(loaded model, disk 0: SHA-256 of the GGUF's %zu bytes as loaded)",
		 fn);
	CHECK(strstr(out, line) != NULL);
	/* and only once: a run after it adds nothing */
	fixture_run(&f, "infer \"Once upon a time\" -n 2 --temp 0", &st);
	CHECK_EQ_INT(st, 0);
	out = fixture_run(&f, "attest --nonce 0506", &st);
	CHECK(quotes_pcr_after(out, md, 1));
	fixture_close(&f);
	host_attest_reset();
	vtpm_env_restore(old);
}

/*
 * Issue 27 item 2: a file the guest reads from the boot volume (here a key
 * file, `unseal --file`) is measured before it is used: "llmk boot-file
 * NAME <sha256>" after the configuration's event, and PCR 23 replays them.
 */
TEST(a_file_read_from_the_boot_volume_is_measured_before_it_is_used)
{
	char why[240], path[4096], want[4200], hex[65];
	const char *vt = test_vtpm_path(why, sizeof why);
	static const char key[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n";
	uint8_t d[32], pcr[32], both[64];

	if (!vt)
		SKIP("no swtpm: %s", why);
	snprintf(path, sizeof path, "%s/boot-file.key", test_tmpdir());
	FILE *fp = fopen(path, "w");
	CHECK(fp && fputs(key, fp) >= 0);
	if (fp)
		fclose(fp);
	sha256(key, strlen(key), d);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", d[i]);
	pcr_after_empty_config(pcr);
	memcpy(both, pcr, 32);
	memcpy(both + 32, d, 32);
	sha256(both, 64, pcr);

	struct shell_fixture f;
	char *old = vtpm_env_set(vt);
	int st;
	CHECK_EQ_INT(fixture_open(&f, NULL, NULL), 0);
	fixture_run(&f, "unseal --file nosuch.key", &st);
	CHECK(st < 0 && lines(f.out.buf) == 1);
	snprintf(want, sizeof want, "unseal --file %s", path);
	fixture_run(&f, want, &st);
	CHECK_EQ_INT(st, 0);
	const char *out = fixture_run(&f, "attest --nonce 0102", &st);
	CHECK_EQ_INT(st, 0);
	char line[100];
	int k = snprintf(line, sizeof line, "  pcr 23       ");
	for (int i = 0; i < 32; i++)
		k += snprintf(line + k, sizeof line - (size_t)k, "%02x", pcr[i]);
	snprintf(line + k, sizeof line - (size_t)k, "\n");
	CHECK(strstr(out, line) != NULL);
	size_t n = 0;
	uint8_t *b = test_decode_line(out, "evidence: ", &n);
	struct evidence_rec r[32];
	char err[160];
	int nr = b ? evidence_parse(b, n, r, 32, err, sizeof err) : -1;
	const struct evidence_rec *kl = nr > 0 ? evidence_find(r, nr, ATTEST_REC_TPM_LOG_KERNEL, NULL)
					       : NULL;
	snprintf(want, sizeof want, "llmk boot-file %s %s", path, hex);
	const char *cfg = kl ? memmem(kl->val, kl->len, "llmk config ", 12) : NULL,
		   *bf = kl ? memmem(kl->val, kl->len, want, strlen(want) + 1) : NULL;
	CHECK(cfg && bf && cfg < bf);
	free(b);
	fixture_close(&f);
	host_attest_reset();
	vtpm_env_restore(old);
}
