/*
 * tools/host/snp_provider.c — the host build's `snp` provider: the guest
 * request layer (drivers/snp_guest_msg.c) against the firmware simulator
 * (tools/host/snp_sim.c), enabled by LLMK_SNP_SIM (tools/host/snp_sim.h
 * lists the keys of its file). One simulated launch per process: a process
 * is a boot, so a key derived in one run is derived again in the next when
 * the chip and the launch's fields are the same.
 *
 * Every piece of evidence it makes carries a SIMULATED record.
 */
#include "snp_sim.h"

#include "../../kernel/attest.h"
#include "../../llm/codec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_CERT_PAGES 4
#define SIMULATED_TEXT "snp-sim: simulated SEV-SNP firmware and test ARK/ASK/VCEK chain, not hardware"

static struct {
	bool tried;
	char why[200];        /* why absent ("" when present) */
	struct snp_sim sim;
	struct snp_sim_chain chain;
	bool have_chain;
	struct snp_sim_link link;
	struct snp_guest guest;
	bool guest_ok;
} sp;

static int hex_field(const char *v, uint8_t *out, size_t n)
{
	return strlen(v) == 2 * n && hex_decode(v, 2 * n, out, n, NULL) >= 0 ? 0 : -1;
}

static int number(const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 0);
	if (errno || end == v || *end)
		return -1;
	*out = x;
	return 0;
}

static const struct {
	const char *name;
	enum snp_sim_fault f;
} faults[] = {
	{ "status", SNP_SIM_FAULT_STATUS }, { "seqno", SNP_SIM_FAULT_SEQNO },
	{ "tag", SNP_SIM_FAULT_TAG },       { "type", SNP_SIM_FAULT_TYPE },
	{ "fw-error", SNP_SIM_FAULT_FW_ERROR }, { "report-sig", SNP_SIM_FAULT_REPORT_SIG },
};

/* One "key value" line into cfg (or the fault); -1 with why set. */
static int apply(struct snp_sim_config *c, enum snp_sim_fault *fault, const char *k,
		 const char *v, char *why, size_t whyn)
{
	uint64_t x = 0;
	int bad = 0;

	if (!strcmp(k, "chip-seed"))
		bad = hex_field(v, c->chip_seed, 32);
	else if (!strcmp(k, "measurement"))
		bad = hex_field(v, c->measurement, 48);
	else if (!strcmp(k, "family-id"))
		bad = hex_field(v, c->family_id, 16);
	else if (!strcmp(k, "image-id"))
		bad = hex_field(v, c->image_id, 16);
	else if (!strcmp(k, "host-data"))
		bad = hex_field(v, c->host_data, 32);
	else if (!strcmp(k, "vmrk")) {
		bad = hex_field(v, c->vmrk, 32);
		c->have_vmrk = !bad;
	} else if (!strcmp(k, "product")) {
		bad = strlen(v) >= sizeof c->product;
		if (!bad)
			memcpy(c->product, v, strlen(v) + 1);
	} else if (!strcmp(k, "fault")) {
		bad = 1;
		for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
			if (!strcmp(v, faults[i].name))
				*fault = faults[i].f, bad = 0;
	} else if (!strcmp(k, "policy") || !strcmp(k, "report-version") ||
		   !strcmp(k, "guest-svn") || !strcmp(k, "vmpl") || !strcmp(k, "tcb")) {
		bad = number(v, &x);
		if (!bad && !strcmp(k, "policy"))
			c->policy = x;
		else if (!bad && !strcmp(k, "report-version"))
			bad = x != 3 && x != 5, c->report_version = (uint32_t)x;
		else if (!bad && !strcmp(k, "guest-svn"))
			bad = x > 0xffffffffu, c->guest_svn = (uint32_t)x;
		else if (!bad && !strcmp(k, "vmpl"))
			bad = x > 3, c->vmpl = (uint32_t)x;
		else if (!bad)
			c->tcb = x;
	} else {
		snprintf(why, whyn, "unknown key '%.48s'", k);
		return -1;
	}
	if (bad)
		snprintf(why, whyn, "bad value '%.48s' for %.24s", v, k);
	return bad ? -1 : 0;
}

static int read_config(const char *path, struct snp_sim_config *c, enum snp_sim_fault *fault,
		       char *why, size_t whyn)
{
	FILE *f = fopen(path, "r");
	char line[256], k[64], v[160], err[120];
	int ln = 0;

	if (!f) {
		snprintf(why, whyn, "LLMK_SNP_SIM: cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof line, f)) {
		ln++;
		if (line[0] == '#' || sscanf(line, "%63s %159s", k, v) < 1)
			continue;
		if (sscanf(line, "%63s %159s", k, v) != 2 || apply(c, fault, k, v, err, sizeof err)) {
			if (sscanf(line, "%63s %159s", k, v) != 2)
				snprintf(err, sizeof err, "'%s' has no value", k);
			snprintf(why, whyn, "LLMK_SNP_SIM: %s line %d: %s", path, ln, err);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

static void start(void)
{
	struct snp_sim_config cfg;
	enum snp_sim_fault fault = SNP_SIM_FAULT_NONE;
	const char *env = getenv("LLMK_SNP_SIM");

	if (sp.tried)
		return;
	sp.tried = true;
	snp_sim_config_default(&cfg);
	if (!env || !*env || !strcmp(env, "0")) {
		snprintf(sp.why, sizeof sp.why,
			 "no SEV-SNP on a Linux host (LLMK_SNP_SIM=1 or =FILE runs the simulator)");
		return;
	}
	if (strcmp(env, "1") && read_config(env, &cfg, &fault, sp.why, sizeof sp.why))
		return;
	if (snp_sim_init(&sp.sim, &cfg)) {
		snprintf(sp.why, sizeof sp.why, "snp-sim: the simulated launch failed");
		return;
	}
	if (fault != SNP_SIM_FAULT_NONE)
		snp_sim_fault(&sp.sim, fault, 1 << 30);
	snp_sim_link(&sp.link, &sp.sim, NULL);
	/* The guest runs at the launch's VMPL and uses the VMPCK of that level. */
	if (snp_guest_init(&sp.guest, sp.sim.secrets, cfg.vmpl, &sp.link.t)) {
		snprintf(sp.why, sizeof sp.why, "snp-sim: %s", snp_guest_error(&sp.guest));
		return;
	}
	sp.guest_ok = true;
}

const char *snp_sim_provider_why_absent(void)
{
	start();
	return sp.guest_ok ? NULL : sp.why;
}

struct snp_sim *snp_sim_provider_sim(void)
{
	start();
	return sp.guest_ok ? &sp.sim : NULL;
}

void snp_sim_provider_reset(void)
{
	memset(&sp, 0, sizeof sp);
}

/* The table's extent: past the last certificate any entry names. */
static size_t table_len(const uint8_t *t, size_t cap)
{
	size_t end = 0;
	for (size_t o = 0; o + 24 <= cap; o += 24) {
		static const uint8_t zero[24];
		if (!memcmp(t + o, zero, 24)) {
			end = end > o + 24 ? end : o + 24;
			break;
		}
		size_t e = (size_t)snp_get32(t + o + 16) + snp_get32(t + o + 20);
		end = e > end ? e : end;
	}
	return end > cap ? cap : end;
}

/* The extended request's certificates: made once per launch. */
static void make_chain(void)
{
	if (!sp.have_chain && snp_sim_chain_make(&sp.chain, &sp.sim, 2048) == 0) {
		sp.have_chain = true;
		sp.link.chain = &sp.chain;
	}
}

const struct snp_sim_chain *snp_sim_provider_chain(void)
{
	start();
	if (!sp.guest_ok)
		return NULL;
	make_chain();
	return sp.have_chain ? &sp.chain : NULL;
}

int snp_sim_provider_evidence(const uint8_t rd[64], uint8_t *buf, size_t cap, size_t *len)
{
	static uint8_t certs[SIM_CERT_PAGES * SNP_PAGE];
	uint8_t report[SNP_REPORT_SIZE];
	uint32_t pages = SIM_CERT_PAGES;
	size_t start_len = *len;
	int e;

	start();
	if (!sp.guest_ok)
		return -LLMK_ENOENT;
	make_chain();
	e = snp_guest_report(&sp.guest, rd, sp.sim.cfg.vmpl, SNP_KEY_SEL_DEFAULT, report, certs,
			     &pages);
	if (e)
		return e;
	if ((e = attest_rec_put(buf, cap, len, ATTEST_REC_SNP_REPORT, report, sizeof report)) ||
	    (pages && (e = attest_rec_put(buf, cap, len, ATTEST_REC_SNP_CERTS, certs,
					  table_len(certs, (size_t)pages * SNP_PAGE)))) ||
	    (e = attest_rec_put(buf, cap, len, ATTEST_REC_SIMULATED, SIMULATED_TEXT,
				strlen(SIMULATED_TEXT)))) {
		*len = start_len;
		return e;
	}
	return 0;
}

const char *snp_sim_provider_error(void)
{
	return sp.guest_ok ? snp_guest_error(&sp.guest) : sp.why;
}

int snp_sim_provider_guest_key(const struct plat_attest_key_req *req, uint8_t key[32],
			       char *err, size_t errn)
{
	struct snp_key_req r = { .root_key = req->root, .key_sel = SNP_KEY_SEL_DEFAULT,
				 .fields = req->fields, .vmpl = req->vmpl,
				 .guest_svn = req->guest_svn, .tcb_version = req->tcb_version };
	start();
	if (!sp.guest_ok) {
		snprintf(err, errn, "%s", sp.why);
		return -LLMK_ENOENT;
	}
	int e = snp_guest_derive_key(&sp.guest, &r, key);
	if (e)
		snprintf(err, errn, "snp-sim: %s", snp_guest_error(&sp.guest));
	return e;
}
