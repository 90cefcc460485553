/*
 * tools/host/tdx_provider.c — the host build's `tdx` provider: the TDX
 * module and quoting enclave simulator (tools/host/tdx_sim.c), enabled by
 * LLMK_TDX_SIM=1. One simulated TD per process: a process is a boot, so
 * RTMR3 starts at zero and the attestation key is new each run.
 *
 * It asks as the kernel's drivers/tdx.c does: TDG.MR.REPORT over the report
 * data, then GetQuote through the GHCI buffer (version 1, status, in_len,
 * out_len, the TDREPORT), the quote read out of the buffer once. Every
 * piece of evidence carries a SIMULATED record.
 */
#include "tdx_sim.h"

#include "../../kernel/attest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIMULATED_TEXT "tdx-sim: simulated TDX module and quoting enclave, test PCK chain (not Intel), not hardware"

static struct {
	bool tried, ok;
	char why[160];      /* why absent */
	char err[200];      /* why the last call failed */
	struct tdx_sim sim;
	uint8_t gq[TDX_GQ_HEADER + TDX_SIM_QUOTE_MAX]; /* the GetQuote buffer */
} tp;

static void start(void)
{
	const char *env = getenv("LLMK_TDX_SIM");
	struct tdx_sim_config cfg;

	if (tp.tried)
		return;
	tp.tried = true;
	if (!env || strcmp(env, "1")) {
		snprintf(tp.why, sizeof tp.why,
			 "no TDX on a Linux host (LLMK_TDX_SIM=1 runs the simulator)");
		return;
	}
	tdx_sim_config_default(&cfg);
	if (tdx_sim_init(&tp.sim, &cfg)) {
		snprintf(tp.why, sizeof tp.why, "tdx-sim: the simulated TD did not start");
		return;
	}
	tp.ok = true;
}

const char *tdx_sim_provider_why_absent(void)
{
	start();
	return tp.ok ? NULL : tp.why;
}

struct tdx_sim *tdx_sim_provider_sim(void)
{
	start();
	return tp.ok ? &tp.sim : NULL;
}

void tdx_sim_provider_reset(void)
{
	memset(&tp, 0, sizeof tp);
}

const char *tdx_sim_provider_error(void)
{
	return tp.ok ? tp.err : tp.why;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int tdx_sim_provider_evidence(const uint8_t rd[64], uint8_t *buf, size_t cap, size_t *len)
{
	uint8_t report[TDX_REPORT_SIZE], *q = tp.gq;
	size_t at = *len;
	uint64_t status = 0;
	uint32_t out;
	int e;

	start();
	if (!tp.ok) {
		snprintf(tp.err, sizeof tp.err, "%s", tp.why);
		return -LLMK_ENOENT;
	}
	tdx_sim_report(&tp.sim, rd, report);
	/* GHCI GetQuote: version 1, status 0, in_len, out_len 0, the report */
	memset(q, 0, sizeof tp.gq);
	q[0] = 1;
	q[16] = (uint8_t)TDX_REPORT_SIZE, q[17] = (uint8_t)(TDX_REPORT_SIZE >> 8);
	memcpy(q + TDX_GQ_HEADER, report, TDX_REPORT_SIZE);
	tdx_sim_get_quote(&tp.sim, q, sizeof tp.gq);
	for (int i = 7; i >= 0; i--)
		status = status << 8 | q[8 + i];
	out = get32(q + 20);
	if (status || out == 0 || out > sizeof tp.gq - TDX_GQ_HEADER) {
		snprintf(tp.err, sizeof tp.err, "tdx-sim: GetQuote status %#llx, %u bytes: %s",
			 (unsigned long long)status, out, tp.sim.err);
		return -LLMK_EIO;
	}
	if ((e = attest_rec_put(buf, cap, len, ATTEST_REC_TDX_REPORT, report, sizeof report)) ||
	    (e = attest_rec_put(buf, cap, len, ATTEST_REC_TDX_QUOTE, q + TDX_GQ_HEADER, out)) ||
	    (e = attest_rec_put(buf, cap, len, ATTEST_REC_SIMULATED, SIMULATED_TEXT,
				strlen(SIMULATED_TEXT)))) {
		*len = at;
		snprintf(tp.err, sizeof tp.err, "evidence buffer too small");
		return e;
	}
	return 0;
}

int tdx_sim_provider_extend_rtmr3(const uint8_t digest[32])
{
	uint8_t data[48] = { 0 };

	start();
	if (!tp.ok) {
		snprintf(tp.err, sizeof tp.err, "%s", tp.why);
		return -LLMK_ENOENT;
	}
	memcpy(data, digest, 32);
	if (tdx_sim_rtmr_extend(&tp.sim, 3, data)) {
		snprintf(tp.err, sizeof tp.err, "tdx-sim: %s", tp.sim.err);
		return -LLMK_EIO;
	}
	return 0;
}
