/*
 * tools/verify/cmd_snp.c — `verifier snp`: check an AMD SEV-SNP
 * attestation report with its VCEK and AMD's ASK/ARK (snp_report.h).
 *
 *   verifier snp --report report.bin --vcek vcek.der --chain ask_ark.pem
 *                [--expect-measurement HEX] [--expect-report-data HEX]
 *                [--expect-host-data HEX] [--expect-policy HEX] [--allow-debug]
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
	"  --report   the 1184-byte ATTESTATION_REPORT (versions 2, 3, 5)\n"
	"  --vcek     the VCEK certificate (DER or PEM) from AMD's KDS\n"
	"  --chain    AMD's ASK and ARK for the product (PEM; one file or two)\n"
	"  --expect-* values the report must hold (48-, 64-, 32-byte hex; the policy\n"
	"             as the 64-bit GUEST_POLICY in hex); unchecked when absent\n"
	"  --allow-debug  accept a guest whose policy allows debugging\n";

#define MAX_FILE (1u << 20)

struct snp_args {
	const char *report, *vcek, *chain[2];
	int n_chain;
	uint8_t measurement[48], report_data[64], host_data[32];
	struct snp_expect x;
};

static int parse_args(int argc, char **argv, struct snp_args *a)
{
	memset(a, 0, sizeof *a);
	for (int i = 1; i < argc; i++) {
		const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(f, "--allow-debug")) {
			a->x.allow_debug = 1;
			continue;
		}
		if (!strcmp(f, "-h") || !strcmp(f, "--help")) {
			fputs(usage, stdout);
			exit(0);
		}
		if (!v || f[0] != '-')
			return cmd_fail("snp: %s '%s' (verifier snp --help)", v ? "unexpected argument" :
					"missing value or unknown option", f);
		i++;
		if (!strcmp(f, "--report"))
			a->report = v;
		else if (!strcmp(f, "--vcek"))
			a->vcek = v;
		else if (!strcmp(f, "--chain")) {
			if (a->n_chain == 2)
				return cmd_fail("snp: --chain given more than twice");
			a->chain[a->n_chain++] = v;
		} else if (!strcmp(f, "--expect-measurement")) {
			if (cmd_hex_arg(f, v, a->measurement, 48))
				return 1;
			a->x.measurement = a->measurement;
		} else if (!strcmp(f, "--expect-report-data")) {
			if (cmd_hex_arg(f, v, a->report_data, 64))
				return 1;
			a->x.report_data = a->report_data;
		} else if (!strcmp(f, "--expect-host-data")) {
			if (cmd_hex_arg(f, v, a->host_data, 32))
				return 1;
			a->x.host_data = a->host_data;
		} else if (!strcmp(f, "--expect-policy")) {
			char *end;
			unsigned long long p = strtoull(v, &end, 16);
			if (!*v || *end)
				return cmd_fail("--expect-policy: want a hex number, got '%s'", v);
			a->x.check_policy = 1;
			a->x.policy = p;
		} else {
			return cmd_fail("snp: unknown option '%s' (verifier snp --help)", f);
		}
	}
	if (!a->report || !a->vcek || !a->n_chain)
		return cmd_fail("snp: --report, --vcek and --chain are required (verifier snp --help)");
	return 0;
}

static void print_tcb(const char *name, enum snp_product p, const uint8_t *raw)
{
	struct snp_tcb t;
	char h[17];
	snp_tcb_decode(p, raw, &t);
	printf("  %-19s bl %u tee %u snp %u ucode %u", name, t.bl, t.tee, t.snp, t.ucode);
	if (p == SNP_TURIN)
		printf(" fmc %u", t.fmc);
	printf(" (%s)\n", vfy_hex(raw, 8, h));
}

static void print_report(const struct snp_chain *ch, const struct snp_report *r)
{
	const uint8_t *b = r->raw;
	char h[160];

	printf("report:\n");
	printf("  %-19s %u (%s, VCEK productName '%s')\n", "version", r->version,
	       snp_product_name(ch->product), ch->product_name);
	printf("  %-19s 0x%016llx: %s\n", "policy", (unsigned long long)r->policy,
	       snp_policy_text(r->policy, h, sizeof h));
	printf("  %-19s %u\n", "guest_svn", r->guest_svn);
	printf("  %-19s %u\n", "vmpl", r->vmpl);
	printf("  %-19s %s\n", "measurement", vfy_hex(b + SNP_MEASUREMENT, 48, h));
	printf("  %-19s %s\n", "host_data", vfy_hex(b + SNP_HOST_DATA, 32, h));
	printf("  %-19s %s\n", "report_data", vfy_hex(b + SNP_REPORT_DATA, 64, h));
	printf("  %-19s %s\n", "family_id", vfy_hex(b + SNP_FAMILY_ID, 16, h));
	printf("  %-19s %s\n", "image_id", vfy_hex(b + SNP_IMAGE_ID, 16, h));
	printf("  %-19s %s\n", "id_key_digest", vfy_hex(b + SNP_ID_KEY_DIGEST, 48, h));
	printf("  %-19s %s\n", "author_key_digest", vfy_hex(b + SNP_AUTHOR_KEY_DIGEST, 48, h));
	printf("  %-19s %s\n", "report_id", vfy_hex(b + SNP_REPORT_ID, 32, h));
	printf("  %-19s %s\n", "report_id_ma", vfy_hex(b + SNP_REPORT_ID_MA, 32, h));
	printf("  %-19s %s\n", "chip_id", vfy_hex(b + SNP_CHIP_ID, 64, h));
	print_tcb("reported_tcb", ch->product, b + SNP_REPORTED_TCB);
	print_tcb("current_tcb", ch->product, b + SNP_CURRENT_TCB);
	print_tcb("committed_tcb", ch->product, b + SNP_COMMITTED_TCB);
	print_tcb("launch_tcb", ch->product, b + SNP_LAUNCH_TCB);
	printf("  %-19s %u.%u build %u (committed %u.%u build %u)\n", "firmware", r->current_major,
	       r->current_minor, r->current_build, r->committed_major, r->committed_minor,
	       r->committed_build);
	printf("  %-19s 0x%llx: %s\n", "platform_info", (unsigned long long)r->platform_info,
	       snp_platform_info_text(r->platform_info, h, sizeof h));
	printf("  %-19s author_key_en %u, mask_chip_key %u, signing_key %u (VCEK)\n", "signer_info",
	       r->signer_info & 1, r->signer_info >> 1 & 1, r->signer_info >> 2 & 7);
	if (r->has_cpuid)
		printf("  %-19s family 0x%02x model 0x%02x stepping 0x%02x\n", "cpuid", r->cpuid_fam,
		       r->cpuid_mod, r->cpuid_step);
	if (r->has_mit)
		printf("  %-19s launch 0x%llx, current 0x%llx\n", "mitigation_vector",
		       (unsigned long long)r->launch_mit_vector, (unsigned long long)r->current_mit_vector);
	printf("  %-19s %s .. %s (not checked against a clock)\n", "vcek_validity",
	       ch->vcek.not_before, ch->vcek.not_after);
}

int verifier_snp_main(int argc, char **argv)
{
	static struct snp_args a;
	static uint8_t der[16384];
	static struct snp_chain ch;
	static struct vfy_log log;
	struct pem_cert roots[4], vc;
	struct snp_report r;
	uint8_t *report = NULL, *vcek = NULL, *vcek_der = NULL;
	size_t report_len, vcek_len, used = 0;
	int n_roots = 0, rc = 1, e;

	if (parse_args(argc, argv, &a))
		return 1;
	for (int i = 0; i < a.n_chain; i++)
		if (cmd_read_pem_certs(a.chain[i], der, sizeof der, &used, roots, 4, &n_roots))
			return 1;
	if (cmd_read_file(a.report, MAX_FILE, &report, &report_len) ||
	    cmd_read_file(a.vcek, MAX_FILE, &vcek, &vcek_len))
		goto out;
	/* The VCEK as KDS serves it (DER), or in PEM. */
	vcek_der = vcek;
	vc.len = vcek_len;
	if (vcek_len >= 5 && !memcmp(vcek, "-----", 5)) {
		int n = 0;
		if (cmd_read_pem_certs(a.vcek, der, sizeof der, &used, &vc, 1, &n))
			goto out;
		vcek_der = (uint8_t *)vc.der;
	}
	vfy_log_init(&log);
	e = snp_chain_verify(&ch, vcek_der, vc.len, roots, n_roots, &log);
	if (!e)
		e = snp_report_verify(&ch, report, report_len, &a.x, &r, &log);
	cmd_print_ok(&log);
	if (e) {
		cmd_fail("%s", log.err);
		goto out;
	}
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
