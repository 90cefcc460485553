/*
 * tools/verify/cmd_snp.c — `verifier snp`: check an AMD SEV-SNP
 * attestation report with its VCEK and AMD's ASK/ARK (snp_report.h), alone
 * or inside an llmk evidence bundle (snp_evidence.c).
 *
 *   verifier snp --report report.bin --vcek vcek.der --chain ask_ark.pem
 *                [--expect-measurement HEX] [--expect-report-data HEX]
 *                [--expect-host-data HEX] [--expect-policy HEX] [--allow-debug]
 *   verifier snp --evidence FILE --nonce HEX --chain ark.pem [--vcek vcek.der]
 *                [--expect-model SHA256] [--allow-simulated] [the --expect-* above]
 *
 * Prints one "ok" line per check that passed and the report's main fields;
 * exit 0 only when everything verified, else one "error:" line and exit 1.
 */
#include "cmd.h"

#include "snp_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: verifier snp --report FILE --vcek FILE --chain FILE [--chain FILE]\n"
	"                    [--expect-measurement HEX] [--expect-report-data HEX]\n"
	"                    [--expect-host-data HEX] [--expect-policy HEX] [--allow-debug]\n"
	"       verifier snp --evidence FILE --nonce HEX --chain FILE [--chain FILE] [--vcek FILE]\n"
	"                    [--expect-model SHA256] [--expect-config FILE|SHA256] [--allow-simulated]\n"
	"                    [--expect-measurement HEX]\n"
	"                    [--expect-host-data HEX] [--expect-policy HEX] [--allow-debug]\n"
	"  --report   the 1184-byte ATTESTATION_REPORT (versions 2, 3, 5)\n"
	"  --evidence an llmk evidence bundle from provider snp (attest's 'evidence:' line,\n"
	"             base64 or binary): its report must carry the report data of the\n"
	"             bundle's nonce (--nonce), model, guest key and build id\n"
	"  --vcek     the VCEK certificate (DER or PEM) from AMD's KDS; with --evidence, by\n"
	"             default the bundle's certificate table's\n"
	"  --chain    AMD's ASK and ARK for the product (PEM; one file or two); with\n"
	"             --evidence the ARK alone will do (the ASK from the bundle's table)\n"
	"  --expect-* values the report must hold (48-, 64-, 32-byte hex; the policy\n"
	"             as the 64-bit GUEST_POLICY in hex); unchecked when absent\n"
	"  --allow-debug  accept a guest whose policy allows debugging\n"
	"  --allow-simulated  accept a bundle that says it is simulated (tests, demos) and\n"
	"             the simulator's test root in --chain; every output line says SIMULATED\n";

#define MAX_FILE (1u << 20)

int snp_cli_opt(struct snp_cli *a, int argc, char **argv, int *i)
{
	const char *f = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	int t = bundle_cli_opt(&a->b, argc, argv, i);
	if (t)
		return t;
	if (!strcmp(f, "--allow-debug")) {
		a->x.allow_debug = 1;
		return 1;
	}
	static const char *const valued[] = {"--report", "--vcek", "--chain", "--expect-measurement",
		"--expect-report-data", "--expect-host-data", "--expect-policy"};
	size_t k = 0;
	while (k < sizeof valued / sizeof valued[0] && strcmp(f, valued[k]))
		k++;
	if (k == sizeof valued / sizeof valued[0])
		return 0;
	if (!v) {
		cmd_fail("%s needs a value", f);
		return -1;
	}
	++*i;
	if (!strcmp(f, "--report"))
		a->report = v;
	else if (!strcmp(f, "--vcek"))
		a->vcek = v;
	else if (!strcmp(f, "--chain")) {
		if (a->n_chain == 2)
			return cmd_fail("snp: --chain given more than twice"), -1;
		a->chain[a->n_chain++] = v;
	} else if (!strcmp(f, "--expect-measurement")) {
		if (cmd_hex_arg(f, v, a->measurement, 48))
			return -1;
		a->x.measurement = a->measurement;
	} else if (!strcmp(f, "--expect-report-data")) {
		if (cmd_hex_arg(f, v, a->report_data, 64))
			return -1;
		a->x.report_data = a->report_data;
	} else if (!strcmp(f, "--expect-host-data")) {
		if (cmd_hex_arg(f, v, a->host_data, 32))
			return -1;
		a->x.host_data = a->host_data;
	} else {
		char *end;
		unsigned long long p = strtoull(v, &end, 16);
		if (!*v || *end)
			return cmd_fail("--expect-policy: want a hex number, got '%s'", v), -1;
		a->x.check_policy = 1;
		a->x.policy = p;
	}
	return 1;
}

static int opt(void *a, int argc, char **argv, int *i)
{
	return snp_cli_opt(a, argc, argv, i);
}

static int parse_args(int argc, char **argv, struct snp_cli *a)
{
	memset(a, 0, sizeof *a);
	if (cmd_parse_args("snp", usage, opt, a, argc, argv) ||
	    bundle_cli_check(&a->b, "snp", "report", a->report, a->x.report_data, a->n_chain))
		return 1;
	if (!a->b.evidence && (!a->report || !a->vcek || !a->n_chain))
		return cmd_fail("snp: --report, --vcek and --chain are required (verifier snp --help)");
	return 0;
}

/* The VCEK as KDS serves it (DER), or in PEM; *vcek points into *file or der. */
static int read_vcek(const char *path, uint8_t **file, uint8_t *der, size_t cap, size_t *used,
		     struct pem_cert *vcek)
{
	size_t len;
	if (cmd_read_file(path, MAX_FILE, file, &len))
		return 1;
	*vcek = (struct pem_cert){*file, len};
	if (len >= 5 && !memcmp(*file, "-----", 5)) {
		int n = 0;
		if (cmd_read_pem_certs(path, der, cap, used, vcek, 1, &n))
			return 1;
	}
	return 0;
}

static void print_tcb(const char *name, enum snp_product p, const uint8_t *raw)
{
	struct snp_tcb t;
	char h[17], fmc[16] = "";
	snp_tcb_decode(p, raw, &t);
	if (p == SNP_TURIN)
		snprintf(fmc, sizeof fmc, " fmc %u", t.fmc);
	cmd_printf("  %-19s bl %u tee %u snp %u ucode %u%s (%s)\n", name, t.bl, t.tee, t.snp, t.ucode,
		   fmc, vfy_hex(raw, 8, h));
}

static void print_report(const struct snp_chain *ch, const struct snp_report *r)
{
	const uint8_t *b = r->raw;
	char h[160];

	cmd_printf("report:\n");
	cmd_printf("  %-19s %u (%s, VCEK productName '%s')\n", "version", r->version,
	           snp_product_name(ch->product), ch->product_name);
	cmd_printf("  %-19s 0x%016llx: %s\n", "policy", (unsigned long long)r->policy,
	           snp_policy_text(r->policy, h, sizeof h));
	cmd_printf("  %-19s %u\n", "guest_svn", r->guest_svn);
	cmd_printf("  %-19s %u\n", "vmpl", r->vmpl);
	cmd_printf("  %-19s %s\n", "measurement", vfy_hex(b + SNP_MEASUREMENT, 48, h));
	cmd_printf("  %-19s %s\n", "host_data", vfy_hex(b + SNP_HOST_DATA, 32, h));
	cmd_printf("  %-19s %s\n", "report_data", vfy_hex(b + SNP_REPORT_DATA, 64, h));
	cmd_printf("  %-19s %s\n", "family_id", vfy_hex(b + SNP_FAMILY_ID, 16, h));
	cmd_printf("  %-19s %s\n", "image_id", vfy_hex(b + SNP_IMAGE_ID, 16, h));
	cmd_printf("  %-19s %s\n", "id_key_digest", vfy_hex(b + SNP_ID_KEY_DIGEST, 48, h));
	cmd_printf("  %-19s %s\n", "author_key_digest", vfy_hex(b + SNP_AUTHOR_KEY_DIGEST, 48, h));
	cmd_printf("  %-19s %s\n", "report_id", vfy_hex(b + SNP_REPORT_ID, 32, h));
	cmd_printf("  %-19s %s\n", "report_id_ma", vfy_hex(b + SNP_REPORT_ID_MA, 32, h));
	cmd_printf("  %-19s %s\n", "chip_id", vfy_hex(b + SNP_CHIP_ID, 64, h));
	print_tcb("reported_tcb", ch->product, b + SNP_REPORTED_TCB);
	print_tcb("current_tcb", ch->product, b + SNP_CURRENT_TCB);
	print_tcb("committed_tcb", ch->product, b + SNP_COMMITTED_TCB);
	print_tcb("launch_tcb", ch->product, b + SNP_LAUNCH_TCB);
	cmd_printf("  %-19s %u.%u build %u (committed %u.%u build %u)\n", "firmware", r->current_major,
	           r->current_minor, r->current_build, r->committed_major, r->committed_minor,
	           r->committed_build);
	cmd_printf("  %-19s 0x%llx: %s\n", "platform_info", (unsigned long long)r->platform_info,
	           snp_platform_info_text(r->platform_info, h, sizeof h));
	cmd_printf("  %-19s author_key_en %u, mask_chip_key %u, signing_key %u (VCEK)\n", "signer_info",
	           r->signer_info & 1, r->signer_info >> 1 & 1, r->signer_info >> 2 & 7);
	if (r->has_cpuid)
		cmd_printf("  %-19s family 0x%02x model 0x%02x stepping 0x%02x\n", "cpuid", r->cpuid_fam,
		           r->cpuid_mod, r->cpuid_step);
	if (r->has_mit)
		cmd_printf("  %-19s launch 0x%llx, current 0x%llx\n", "mitigation_vector",
		           (unsigned long long)r->launch_mit_vector, (unsigned long long)r->current_mit_vector);
	cmd_printf("  %-19s %s .. %s (not checked against a clock)\n", "vcek_validity",
	           ch->vcek.not_before, ch->vcek.not_after);
}

int snp_cli_evidence(const struct snp_cli *o, struct bundle *b)
{
	static uint8_t der[16384];
	static struct snp_evidence_expect x;
	static struct snp_evidence ev;
	static struct vfy_log log;
	struct pem_cert chain[4], vc;
	uint8_t *bytes = NULL, *vcek = NULL;
	size_t n, used = 0;
	int n_chain = 0, rc = 1;
	char sum[300];

	memset(&x, 0, sizeof x);
	for (int i = 0; i < o->n_chain; i++)
		if (cmd_read_pem_certs(o->chain[i], der, sizeof der, &used, chain, 4, &n_chain))
			return 1;
	if (o->vcek && read_vcek(o->vcek, &vcek, der, sizeof der, &used, &vc))
		goto out;
	if (bundle_cli_load(&o->b, &x.b, &bytes, &n))
		goto out;
	x.report = o->x;
	x.chain = chain;
	x.n_chain = n_chain;
	if (o->vcek) {
		x.vcek = vc.der;
		x.vcek_len = vc.len;
	}
	vfy_log_init(&log);
	int e = snp_evidence_verify(bytes, n, &x, &ev, &log);
	if (cmd_print_log(&log, e))
		goto out;
	print_report(&ev.ch, &ev.r);
	bundle_cli_summary(&ev.b, &x.b, sum, sizeof sum);
	cmd_printf("verified: %sSEV-SNP report version %u from a %s chip%s, for this bundle: nonce "
		   "as given, %s\n", ev.b.simulated ? "SIMULATED " : "", ev.r.version,
		   snp_product_name(ev.ch.product),
		   ev.ch.test_root ? " under a TEST root (not AMD's)" : "", sum);
	*b = ev.b;
	rc = 0;
out:
	free(bytes);
	free(vcek);
	return rc;
}

int verifier_snp_main(int argc, char **argv)
{
	static struct snp_cli a;
	static uint8_t der[16384];
	static struct snp_chain ch;
	static struct vfy_log log;
	static struct bundle b;
	struct pem_cert roots[4], vc;
	struct snp_report r;
	uint8_t *report = NULL, *vcek = NULL;
	size_t report_len, used = 0;
	int n_roots = 0, rc = 1, e;

	if (parse_args(argc, argv, &a))
		return 1;
	if (a.b.evidence)
		return snp_cli_evidence(&a, &b);
	for (int i = 0; i < a.n_chain; i++)
		if (cmd_read_pem_certs(a.chain[i], der, sizeof der, &used, roots, 4, &n_roots))
			return 1;
	if (cmd_read_file(a.report, MAX_FILE, &report, &report_len) ||
	    read_vcek(a.vcek, &vcek, der, sizeof der, &used, &vc))
		goto out;
	vfy_log_init(&log);
	e = snp_chain_verify(&ch, vc.der, vc.len, roots, n_roots, &log);
	if (!e)
		e = snp_report_verify(&ch, report, report_len, &a.x, &r, &log);
	if (cmd_print_log(&log, e))
		goto out;
	if (!a.x.report_data)
		printf("--   report_data: not checked (no --expect-report-data): freshness is the "
		       "caller's to check\n");
	print_report(&ch, &r);
	printf("verified: SEV-SNP report version %u from a %s chip\n", r.version,
	       snp_product_name(ch.product));
	rc = 0;
out:
	free(report);
	free(vcek);
	return rc;
}
