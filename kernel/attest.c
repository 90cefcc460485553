/*
 * kernel/attest.c — the kernel's attestation providers
 * (kernel/attest_provider.h): `vtpm`, a TPM 2.0 over CRB
 * (drivers/tpm_crb.c) or FIFO (drivers/tpm_tis.c) that the ACPI TPM2 table
 * names, driven by the same
 * command layer the host build runs (drivers/tpm2*.c); `snp`
 * (drivers/sev_snp.c) and `tdx` (drivers/tdx.c). kernel/attest_dispatch.c
 * implements kernel/attest.h over them (`none` is its own). None is a
 * simulator, so no kernel evidence ever says simulated.
 *
 * The firmware's TCG2 event log stays where UEFI put it (boot services
 * data and ACPI NVS, which kernel/mem.c never hands out); attest_init()
 * copies it once, after ExitBootServices, into memory of the kernel's own:
 * the log up to the last entry GetEventLog reported, then the entries the
 * final events table gained after that call (ExitBootServices' own, into
 * PCR 5), so the copy replays every PCR the firmware extended. The
 * kernel's measurements go to PCR 23 and to the kernel's event log (TCG
 * PC Client TCG_PCR_EVENT2 records).
 */
#include "kernel.h"
#include "attest_provider.h"
#include "../drivers/acpi.h"
#include "../drivers/sev_snp.h"
#include "../drivers/tdx.h"
#include "../drivers/tcg_log.h"
#include "../drivers/tpm2_attest.h"
#include "../drivers/tpm_crb.h"
#include "../drivers/tpm_tis.h"

#define KLOG_MAX (64u << 10)    /* the kernel's event log: ~130 bytes a record */
#define FW_EVENT_MAX (64u << 10) /* one firmware event, at most (bounds a bad log) */
#define FW_LOG_MAX (1u << 20)

static struct {
	bool inited;
	bool vtpm;                /* present and answering */
	char why[128];            /* vtpm: what it is, or why it is absent */
	struct tpm2_attest a;
	uint8_t *fw_log;          /* the firmware's log, the kernel's copy */
	size_t fw_log_len;
	char fw_note[96];         /* how the copy went, for the boot line */
	struct attest_log klog;
} ka;

/* ---- the firmware's event log ---- */
static void copy_fw_log(const struct boot_info *bi)
{
	const uint8_t *log = (const uint8_t *)(uintptr_t)bi->tcg2_log;
	const uint8_t *last = (const uint8_t *)(uintptr_t)bi->tcg2_log_last;
	struct tcg_log_algs algs;
	size_t hdr, len, end;
	char why[120];

	if (!log) {
		plat_snprintf(ka.fw_note, sizeof ka.fw_note, "no firmware event log");
		return;
	}
	if (last < log || (size_t)(last - log) > FW_LOG_MAX ||
	    tcg_log_header(log, (size_t)(last - log) + FW_EVENT_MAX, &algs, &hdr, why, sizeof why)) {
		plat_snprintf(ka.fw_note, sizeof ka.fw_note, "firmware event log unreadable");
		return;
	}
	/* TCG EFI Protocol 2.0 §6.6.2: last is the start of the last entry (the
	 * header itself when nothing else was logged) */
	if (last == log)
		end = hdr;
	else if (tcg_log_event_len(last, FW_EVENT_MAX, &algs, &len) == 0)
		end = (size_t)(last - log) + len;
	else {
		plat_snprintf(ka.fw_note, sizeof ka.fw_note, "firmware event log: last entry unreadable");
		return;
	}
	/* §6.3 EFI_TCG2_FINAL_EVENTS_TABLE: Version u64, NumberOfEvents u64, events */
	const uint8_t *fin = (const uint8_t *)(uintptr_t)bi->tcg2_final;
	uint64_t nfin = fin ? ((const volatile uint64_t *)fin)[1] : 0, skip = bi->tcg2_final_skip;
	const uint8_t *fe = fin ? fin + 16 : NULL, *tail = NULL;
	size_t tail_len = 0;
	for (uint64_t i = 0; i < nfin && fe; i++) {
		if (tcg_log_event_len(fe, FW_EVENT_MAX, &algs, &len)) {
			plat_snprintf(ka.fw_note, sizeof ka.fw_note, "final events table: entry %llu "
				      "unreadable", (unsigned long long)i);
			return;
		}
		if (i == skip)
			tail = fe;
		if (i >= skip)
			tail_len += len;
		fe += len;
	}
	if (end + tail_len > FW_LOG_MAX || !(ka.fw_log = plat_alloc(end + tail_len, 4096))) {
		plat_snprintf(ka.fw_note, sizeof ka.fw_note, "no memory for the firmware event log");
		return;
	}
	memcpy(ka.fw_log, log, end);
	if (tail_len)
		memcpy(ka.fw_log + end, tail, tail_len);
	ka.fw_log_len = end + tail_len;
	plat_snprintf(ka.fw_note, sizeof ka.fw_note, "firmware event log %zu bytes (%llu from the "
		      "final events table)%s", ka.fw_log_len,
		      (unsigned long long)(nfin > skip ? nfin - skip : 0),
		      bi->tcg2_truncated ? ", TRUNCATED by the firmware" : "");
}

/* ---- the vtpm provider ---- */
#if defined(__x86_64__)
#define QEMU_TPM_DEVICE "tpm-crb"
#else
#define QEMU_TPM_DEVICE "tpm-tis-device"
#endif

/* The interface the TPM2 table names: CRB (7; QEMU's tpm-crb on q35) at the
 * table's control area, or FIFO (6; QEMU's tpm-tis-device on aarch64 virt)
 * at the TPM device's register block in the DSDT. Its transfer function,
 * with the registers' address in *base; NULL with why in ka.why. */
static tpm2_xfer_fn vtpm_interface(const char **name, uint64_t *base)
{
	struct acpi_tpm2 t;
	char why[120];
	uint64_t at;
	uint32_t len;
	int e;

	if (acpi_tpm2(&t)) {
		plat_snprintf(ka.why, sizeof ka.why, "no TPM2 ACPI table (QEMU: -device %s)",
			      QEMU_TPM_DEVICE);
		return NULL;
	}
	if (t.start_method == ACPI_TPM2_START_CRB) {
		if ((e = crb_init(t.control_area, why, sizeof why))) {
			plat_snprintf(ka.why, sizeof ka.why, "%s", why);
			return NULL;
		}
		*name = "CRB";
		*base = crb_base();
		return crb_xfer;
	}
	if (t.start_method == ACPI_TPM2_START_FIFO) {
		if ((e = acpi_tpm_mmio(&at, &len))) {
			plat_snprintf(ka.why, sizeof ka.why, "TPM2 table says FIFO, but the DSDT has %s",
				      e == -LLMK_ENOENT ? "no TPM device (MSFT0101) with a "
				      "Memory32Fixed resource" : "a malformed TPM device");
			return NULL;
		}
		if ((e = tis_init(at, len, why, sizeof why))) {
			plat_snprintf(ka.why, sizeof ka.why, "%s", why);
			return NULL;
		}
		*name = "FIFO (TIS)";
		*base = tis_base();
		return tis_xfer;
	}
	plat_snprintf(ka.why, sizeof ka.why, "TPM2 table start method %u (CRB, 7, and FIFO, 6, "
		      "are driven)", t.start_method);
	return NULL;
}

static void vtpm_init(void)
{
	const char *name = "";
	uint64_t base = 0;
	tpm2_xfer_fn xfer = vtpm_interface(&name, &base);
	int e;

	if (!xfer)
		return;
	tpm2_init(&ka.a.tpm, xfer, NULL);
	e = tpm2_attest_probe(&ka.a);
	if (e && ka.a.tpm.rc == TPM2_RC_INITIALIZE && !tpm2_startup(&ka.a.tpm))
		e = tpm2_attest_probe(&ka.a); /* firmware left it unstarted */
	if (e) {
		plat_snprintf(ka.why, sizeof ka.why, "TPM at %#llx: %s", (unsigned long long)base,
			      ka.a.tpm.err);
		return;
	}
	plat_snprintf(ka.why, sizeof ka.why, "TPM 2.0 over %s at %#llx: %s", name,
		      (unsigned long long)base, ka.a.vendor);
	ka.vtpm = true;
}

static int vtpm_probe(struct plat_attest_info *out)
{
	out->present = ka.vtpm;
	plat_snprintf(out->detail, sizeof out->detail, "%s", ka.why);
	return ka.vtpm ? 0 : -LLMK_ENOENT;
}

static int vtpm_evidence(const uint8_t report_data[64], uint8_t *buf, size_t cap, size_t *len)
{
	return tpm2_attest_evidence(&ka.a, report_data, ka.fw_log, ka.fw_log_len, ka.klog.buf,
				    ka.klog.len, buf, cap, len);
}

void attest_init(void)
{
	if (ka.inited)
		return;
	ka.inited = true;
	if ((ka.klog.buf = plat_alloc(KLOG_MAX, 4096)))
		ka.klog.cap = KLOG_MAX;
	copy_fw_log(kernel_boot);
	vtpm_init();
	if (ka.vtpm)
		plat_printf("attest: vtpm: %s; %s\n", ka.why, ka.fw_note);
	else
		plat_printf("attest: no vtpm (%s); %s\n", ka.why, ka.fw_note);
}

/* ---- the providers (kernel/attest_provider.h) ---- */
static const struct attest_provider providers[PLAT_ATTEST_KINDS] = {
	[PLAT_ATTEST_NONE] = ATTEST_ROW_NONE,
	[PLAT_ATTEST_VTPM] = {"vtpm", 3, vtpm_probe, vtpm_evidence, &ka.a, NULL, NULL, NULL},
	[PLAT_ATTEST_SNP] = {"snp", 1, sev_snp_probe, sev_snp_evidence, NULL, NULL, sev_snp_error,
			     sev_snp_guest_key},
	[PLAT_ATTEST_TDX] = {"tdx", 2, tdx_probe, tdx_evidence, NULL, tdx_extend_rtmr3, tdx_error,
			     NULL},
};

const struct attest_provider *attest_provider(int kind)
{
	attest_init(); /* the first use of any provider reads the firmware's log */
	return kind >= 0 && kind < PLAT_ATTEST_KINDS ? &providers[kind] : NULL;
}

int attest_log_room(size_t n, struct attest_log **log, char *err, size_t errn)
{
	attest_init();
	if (!ka.klog.buf || ka.klog.len + n > ka.klog.cap) {
		plat_snprintf(err, errn, "the kernel event log is full (%u bytes)", KLOG_MAX);
		return -LLMK_ERANGE;
	}
	*log = &ka.klog;
	return 0;
}
