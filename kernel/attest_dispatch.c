/*
 * kernel/attest_dispatch.c — kernel/attest.h over a build's table of
 * providers (kernel/attest_provider.h): provider `none`, the default order, the
 * absent provider's refusal, the error line that names the provider, a
 * TPM's credential activation, and the run-time measurement (room in the
 * event log first, then every measured register, then the record).
 * Portable: the kernel (mk/efi.mk takes every kernel/ file) and the host
 * build (the Makefile's HOST_DRIVER_SRC) both compile it.
 */
#include "attest_provider.h"
#include "../drivers/tcg_log.h"
#include "../drivers/tpm2_attest.h"

static char err[240];

int plat_attest_info(int kind, struct plat_attest_info *out)
{
	if (kind < 0 || kind >= PLAT_ATTEST_KINDS)
		return -LLMK_EINVAL;
	const struct attest_provider *p = attest_provider(kind);
	memset(out, 0, sizeof *out);
	out->kind = kind;
	out->name = p->name;
	if (kind == PLAT_ATTEST_NONE) {
		out->present = true;
		plat_snprintf(out->detail, sizeof out->detail, "no attestation device: evidence "
			      "without a quote or report");
	} else if (p->probe) {
		p->probe(out);
	} else {
		plat_snprintf(out->detail, sizeof out->detail, "no %s provider in this build",
			      p->name);
	}
	out->kind = kind; /* whatever the probe wrote */
	out->name = p->name;
	return 0;
}

int plat_attest_default(void)
{
	struct plat_attest_info in;

	for (int o = 1; o < PLAT_ATTEST_KINDS; o++)
		for (int k = 0; k < PLAT_ATTEST_KINDS; k++)
			if (attest_provider(k)->order == o && plat_attest_info(k, &in) == 0 &&
			    in.present)
				return k;
	return PLAT_ATTEST_NONE;
}

/* 0 when kind is present; else why in err. Clears err first. */
static int absent(int kind)
{
	struct plat_attest_info in;

	err[0] = 0;
	if (plat_attest_info(kind, &in)) {
		plat_snprintf(err, sizeof err, "no provider %d", kind);
		return -LLMK_EINVAL;
	}
	if (in.present)
		return 0;
	plat_snprintf(err, sizeof err, "provider %s is absent: %s", in.name, in.detail);
	return -LLMK_ENOENT;
}

/* e from a call of p, provider kind: its reason, named, into err. */
static int failed(const struct attest_provider *p, int kind, int e)
{
	if (e)
		plat_snprintf(err, sizeof err, "%s: %s", p->name,
			      p->tpm ? p->tpm->tpm.err : p->error());
	return e;
}

/* Extend digest into p's measured register; 0 also when it has none. */
static int extend(const struct attest_provider *p, const uint8_t digest[32])
{
	if (p->tpm)
		return tpm2_pcr_extend(&p->tpm->tpm, PLAT_ATTEST_PCR, digest);
	return p->extend ? p->extend(digest) : 0;
}

int plat_attest_evidence(int kind, const uint8_t report_data[64], uint8_t *buf, size_t cap,
			 size_t *len)
{
	int e = absent(kind);
	if (e || kind == PLAT_ATTEST_NONE)
		return e;
	const struct attest_provider *p = attest_provider(kind);
	return failed(p, kind, p->evidence(report_data, buf, cap, len));
}

int plat_attest_activate(int kind, const uint8_t *cred, size_t n, uint8_t *out, size_t cap,
			 size_t *len)
{
	int e = absent(kind);
	if (e)
		return e;
	const struct attest_provider *p = attest_provider(kind);
	if (!p->tpm) {
		plat_snprintf(err, sizeof err, "provider %s has no credential activation",
			      p->name);
		return -LLMK_ENOTSUP;
	}
	return failed(p, kind, tpm2_attest_activate(p->tpm, cred, n, out, cap, len));
}

int plat_attest_extend(const char *what, const uint8_t digest[32])
{
	size_t n = strlen(what) + 1;
	struct attest_log *log;
	struct plat_attest_info in;

	err[0] = 0;
	/* room in the log first: a register extended without its record could
	 * never be replayed */
	int e = attest_log_room(64 + n, &log, err, sizeof err);
	if (e)
		return e;
	for (int k = 0; k < PLAT_ATTEST_KINDS; k++) {
		const struct attest_provider *p = attest_provider(k);
		if ((!p->tpm && !p->extend) || plat_attest_info(k, &in) || !in.present)
			continue;
		if ((e = failed(p, k, extend(p, digest))))
			return e;
	}
	return tcg_log_append(log->buf, log->cap, &log->len, PLAT_ATTEST_PCR, TCG_EV_EVENT_TAG,
			      digest, what, n);
}

int plat_attest_guest_key(int kind, const struct plat_attest_key_req *req, uint8_t key[32],
			  char *errs, size_t errn)
{
	const struct attest_provider *p = attest_provider(kind);

	if (!p || !p->guest_key) {
		plat_snprintf(errs, errn, "only SEV-SNP derives guest keys (MSG_KEY_REQ)");
		return -LLMK_ENOTSUP;
	}
	return p->guest_key(req, key, errs, errn);
}

const char *plat_attest_error(void)
{
	return err;
}
