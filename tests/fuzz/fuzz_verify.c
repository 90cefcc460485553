/*
 * tests/fuzz/fuzz_verify.c — libFuzzer target for the evidence verification
 * library (tools/verify): the strict PEM and DER/X.509 readers, the SEV-SNP
 * report checks under a real verified chain, and the TDX quote checks under
 * Intel's real root. The first input byte picks which (mod 4); the rest is
 * the evidence.
 *
 * Any input must either verify or fail with a negative LLMK_E* code and a
 * one-line reason; ASan/UBSan catch the rest. The chains come from
 * $LLMK_TESTDATA/attest (or ../shared/testdata); without them the report
 * and quote modes only parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/verify/pem.h"
#include "../../tools/verify/snp_report.h"
#include "../../tools/verify/tdx_quote.h"
#include "../../tools/verify/x509.h"

static struct snp_chain chain;
static int have_chain;
static uint8_t root_der[4096];
static struct pem_cert intel_root;
static int have_root;

static void fail(const char *what, const struct vfy_log *log)
{
	fprintf(stderr, "fuzz_verify: invariant broken: %s (err '%s')\n", what, log->err);
	abort();
}

/* A refusal has a reason of one line; a success has none. */
static void check(int e, const struct vfy_log *log)
{
	if (e > 0)
		fail("positive return", log);
	if (e < 0 && (!log->err[0] || strchr(log->err, '\n')))
		fail("refusal without a one-line reason", log);
	if (!e && log->err[0])
		fail("success with a reason", log);
}

/* A test data file into one of four static buffers (the chains point into them). */
static uint8_t *slurp(const char *rel, size_t *n)
{
	static uint8_t buf[4][8192];
	static int next;
	const char *d = getenv("LLMK_TESTDATA");
	char path[512];
	FILE *f;
	snprintf(path, sizeof path, "%s/attest/%s", d && *d ? d : "../shared/testdata", rel);
	if (next == 4 || !(f = fopen(path, "rb")))
		return NULL;
	*n = fread(buf[next], 1, sizeof buf[next], f);
	fclose(f);
	return buf[next++];
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static uint8_t der[8192];
	struct pem_cert roots[2], all[3];
	struct vfy_log log;
	size_t n, m, k, t;
	int got;
	uint8_t *ask = slurp("snp/roots/ask_genoa.pem", &n), *ark = slurp("snp/roots/ark_genoa.pem", &m);
	uint8_t *vcek = slurp("snp/genoa-v5/vcek.der", &k), *pck = slurp("tdx/pck_chain.pem", &t);

	(void)argc;
	(void)argv;
	vfy_log_init(&log);
	if (ask && ark && vcek && !pem_certs(ask, n, "ask", der, 4096, roots, 1, &got, &log) &&
	    !pem_certs(ark, m, "ark", der + 4096, 4096, roots + 1, 1, &got, &log))
		have_chain = !snp_chain_verify(&chain, vcek, k, roots, 2, &log);
	if (pck && !pem_certs(pck, t, "pck_chain.pem", root_der, sizeof root_der, all, 3, &got, &log) &&
	    got == 3) {
		intel_root = all[2];
		have_root = 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[65536];
	static struct vfy_log log;
	struct pem_cert certs[8];
	struct x509_cert c;
	struct snp_report r;
	struct tdx_quote q;
	int n, e;

	if (size < 1)
		return 0;
	vfy_log_init(&log);
	data++, size--;
	switch (data[-1] % 4) {
	case 0:
		e = pem_certs(data, size, "fuzz.pem", out, sizeof out, certs, 8, &n, &log);
		check(e, &log);
		for (int i = 0; !e && i < n; i++) {
			vfy_log_init(&log);
			check(x509_parse(&c, certs[i].der, certs[i].len, "cert", &log), &log);
		}
		break;
	case 1:
		e = x509_parse(&c, data, size, "cert", &log);
		check(e, &log);
		if (!e) { /* a parsed certificate checked against itself exercises the signature code */
			vfy_log_init(&log);
			check(x509_check_issued(&c, &c, 0, &log), &log);
		}
		break;
	case 2:
		if (have_chain)
			e = snp_report_verify(&chain, data, size, NULL, &r, &log);
		else
			e = snp_report_parse(&r, data, size, &log);
		check(e, &log);
		break;
	case 3:
		if (have_root)
			e = tdx_quote_verify(data, size, &intel_root, 1, "root", NULL, &q, &log);
		else
			e = tdx_quote_parse(&q, data, size, &log);
		check(e, &log);
		break;
	}
	return 0;
}
