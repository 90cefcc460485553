/*
 * tools/host/attest.c — the host build's attestation providers
 * (kernel/attest_provider.h): `vtpm` talking to swtpm over its server
 * socket when LLMK_VTPM=PATH names it (swtpm socket --tpm2 --server
 * type=unixio,path=PATH --flags not-need-init,startup-clear), and the
 * SEV-SNP and TDX simulators (snp_provider.c, tdx_provider.c).
 * kernel/attest_dispatch.c implements kernel/attest.h over them, as in
 * the kernel. The TPM commands are the kernel's own (drivers/tpm2*.c);
 * only the transport differs.
 *
 * The host process plays the guest: when it first opens the vTPM it resets
 * PCR 23 (as a reboot would), so that PCR replays from the event log this
 * process keeps. It is labelled simulated (the shell then adds a SIMULATED
 * record): no firmware measured anything into PCRs 0-7 and there is no
 * firmware event log.
 */
#define _GNU_SOURCE
#include "host.h"
#include "../../kernel/attest_provider.h"
#include "../../drivers/tcg_log.h"
#include "../../drivers/tpm2_attest.h"
#include "snp_sim.h"
#include "tdx_sim.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define VTPM_TIMEOUT_MS 120000 /* an RSA 2048 CreatePrimary is the slowest command */

static struct {
	bool tried, present;
	int fd;
	char why[160];            /* absent: why; present: what it is */
	struct tpm2_attest a;
	struct attest_log klog;   /* the kernel-style event log (TCG_PCR_EVENT2 records) */
} ha = {.fd = -1};

/* ---- swtpm's socket: raw TPM command bytes in, response bytes out ---- */
static int wait_fd(int fd, short ev, int ms)
{
	struct pollfd p = {fd, ev, 0};
	int r;
	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	return r;
}

int host_vtpm_connect(const char *path, char *err, size_t errn)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path) {
		plat_snprintf(err, errn, "socket path '%s' is longer than %zu bytes", path,
			 sizeof sa.sun_path - 1);
		return -LLMK_EINVAL;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		plat_snprintf(err, errn, "cannot connect to '%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -LLMK_EIO;
	}
	return fd;
}

int host_vtpm_xfer(void *ctx, const uint8_t *cmd, size_t n, uint8_t *rsp, size_t cap,
		   size_t *rlen, char *err, size_t errn)
{
	int fd = *(int *)ctx;
	size_t off = 0, want = 10;

	while (off < n) {
		ssize_t k = send(fd, cmd + off, n - off, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			plat_snprintf(err, errn, "swtpm socket: send: %s", k < 0 ? strerror(errno) : "closed");
			return -LLMK_EIO;
		}
		off += (size_t)k;
	}
	/* the response's header carries its size (bytes 2-5, big-endian) */
	for (off = 0; off < want;) {
		if (wait_fd(fd, POLLIN, VTPM_TIMEOUT_MS) <= 0) {
			plat_snprintf(err, errn, "swtpm socket: no response within %d s", VTPM_TIMEOUT_MS / 1000);
			return -LLMK_EIO;
		}
		ssize_t k = recv(fd, rsp + off, want - off, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			plat_snprintf(err, errn, "swtpm socket: recv: %s", k < 0 ? strerror(errno) : "closed");
			return -LLMK_EIO;
		}
		off += (size_t)k;
		if (off == 10 && want == 10) {
			want = (size_t)rsp[2] << 24 | (size_t)rsp[3] << 16 | (size_t)rsp[4] << 8 | rsp[5];
			if (want < 10 || want > cap) {
				plat_snprintf(err, errn, "swtpm socket: response header says %zu bytes (buffer "
					 "%zu)", want, cap);
				return -LLMK_ERANGE;
			}
		}
	}
	*rlen = want;
	return 0;
}

/* ---- the vtpm provider ---- */
static bool vtpm_open(void)
{
	const char *path = getenv("LLMK_VTPM");
	int e;

	if (ha.tried)
		return ha.present;
	ha.tried = true;
	if (!path || !*path) {
		plat_snprintf(ha.why, sizeof ha.why, "LLMK_VTPM is not set (the path of swtpm's server "
			 "socket)");
		return false;
	}
	if ((ha.fd = host_vtpm_connect(path, ha.why, sizeof ha.why)) < 0)
		return false;
	tpm2_init(&ha.a.tpm, host_vtpm_xfer, &ha.fd);
	if ((e = tpm2_startup(&ha.a.tpm)) || (e = tpm2_attest_probe(&ha.a)) ||
	    (e = tpm2_pcr_reset(&ha.a.tpm, PLAT_ATTEST_PCR))) {
		plat_snprintf(ha.why, sizeof ha.why, "swtpm at '%s': %s", path, ha.a.tpm.err);
		close(ha.fd);
		ha.fd = -1;
		return false;
	}
	plat_snprintf(ha.why, sizeof ha.why, "host build, swtpm at '%s' (no measured boot): %s",
		      path, ha.a.vendor);
	ha.present = true;
	return true;
}

void host_attest_reset(void)
{
	if (ha.fd >= 0)
		close(ha.fd);
	free(ha.klog.buf);
	memset(&ha, 0, sizeof ha);
	ha.fd = -1;
}

static int vtpm_probe(struct plat_attest_info *out)
{
	out->present = out->simulated = vtpm_open();
	plat_snprintf(out->detail, sizeof out->detail, "%s", ha.why);
	return out->present ? 0 : -LLMK_ENOENT;
}

static int vtpm_evidence(const uint8_t report_data[64], uint8_t *buf, size_t cap, size_t *len)
{
	int e = tpm2_attest_evidence(&ha.a, report_data, NULL, 0, ha.klog.buf, ha.klog.len, buf, cap,
				     len);
	if (e)
		return e;
	/* a swtpm the host process drives is no guest's TPM: say so */
	char what[sizeof ha.why + 16];
	plat_snprintf(what, sizeof what, "vtpm-host: %s", ha.why);
	if ((e = attest_rec_put(buf, cap, len, ATTEST_REC_SIMULATED, what, strlen(what))))
		plat_snprintf(ha.a.tpm.err, sizeof ha.a.tpm.err, "evidence buffer too small");
	return e;
}

/* ---- the simulators' providers ---- */
static int sim_probe(struct plat_attest_info *out, const char *why, const char *what)
{
	out->present = out->simulated = why == NULL;
	plat_snprintf(out->detail, sizeof out->detail, "%s", why ? why : what);
	return why ? -LLMK_ENOENT : 0;
}

static int snp_probe(struct plat_attest_info *out)
{
	return sim_probe(out, snp_sim_provider_why_absent(),
			 "host build: the SEV-SNP firmware simulator (LLMK_SNP_SIM)");
}

static int tdx_probe(struct plat_attest_info *out)
{
	return sim_probe(out, tdx_sim_provider_why_absent(),
			 "host build: the TDX module and quoting simulator (LLMK_TDX_SIM)");
}

/* ---- the providers (kernel/attest_provider.h) ---- */
static const struct attest_provider providers[PLAT_ATTEST_KINDS] = {
	[PLAT_ATTEST_NONE] = ATTEST_ROW_NONE,
	[PLAT_ATTEST_VTPM] = {"vtpm", 3, vtpm_probe, vtpm_evidence, &ha.a, NULL, NULL, NULL},
	[PLAT_ATTEST_SNP] = {"snp", 1, snp_probe, snp_sim_provider_evidence, NULL, NULL,
			     snp_sim_provider_error, snp_sim_provider_guest_key},
	[PLAT_ATTEST_TDX] = {"tdx", 2, tdx_probe, tdx_sim_provider_evidence, NULL,
			     tdx_sim_provider_extend_rtmr3, tdx_sim_provider_error, NULL},
};

const struct attest_provider *attest_provider(int kind)
{
	return kind >= 0 && kind < PLAT_ATTEST_KINDS ? &providers[kind] : NULL;
}

int attest_log_room(size_t n, struct attest_log **log, char *err, size_t errn)
{
	size_t need = ha.klog.len + n;

	if (need > ha.klog.cap) {
		size_t cap = need * 2 < 4096 ? 4096 : need * 2;
		uint8_t *p = realloc(ha.klog.buf, cap);
		if (!p) {
			plat_snprintf(err, errn, "no memory for the event log");
			return -LLMK_ENOMEM;
		}
		ha.klog.buf = p;
		ha.klog.cap = cap;
	}
	*log = &ha.klog;
	return 0;
}
