/*
 * drivers/tdx.c — the Intel TDX guest: TDCALLs to the TDX module (Intel TDX
 * Module v1.5 ABI Specification, "TDG.MR.REPORT" leaf 4, "TDG.MR.RTMR.EXTEND"
 * leaf 2, "TDG.VP.INFO" leaf 1) and to the host VMM through TDG.VP.VMCALL
 * (leaf 0; Intel TDX Guest-Hypervisor Communication Interface v1.5, §3.2
 * MapGPA, §3.3 GetQuote). Not run here: no TDX hardware; written to the
 * specs and compiled.
 *
 *   detection  CPUID leaf 0x21 subleaf 0: EBX, EDX, ECX = "IntelTDX    "
 *              (checked against the maximum basic leaf first)
 *   report     TDG.MR.REPORT: RCX = TDREPORT_STRUCT GPA (1024 B, 1024-aligned),
 *              RDX = REPORTDATA GPA (64 B, 64-aligned), R8 = 0 (subtype)
 *   RTMR3      TDG.MR.RTMR.EXTEND: RCX = 48-byte data GPA (64-aligned), RDX = 3
 *   quote      a page made shared: the shared bit (GPA bit GPAW-1, from
 *              TDG.VP.INFO RCX[5:0]) set in its mapping and MapGPA'd; the
 *              GetQuote buffer (version 1, status, in_len, out_len, data =
 *              TDREPORT) handed over by TDG.VP.VMCALL<GetQuote> (R11 =
 *              0x10002, R12 = buffer GPA, R13 = size); the VMM fills it
 *              asynchronously, so the status is polled until it leaves
 *              GET_QUOTE_IN_FLIGHT.
 * The rest of the kernel's life in a TD: CPUID, port I/O, MSRs, HLT and
 * MMIO reach the VMM through kernel/x86_64/ve.c; device DMA goes through
 * drivers/cc_pages.c's pool, whose blocks tdx_share makes shared (MapGPA,
 * the shared bit set in the page tables), set up by cc_init after mem_init.
 */
#include "../kernel/kernel.h"
#include "tdx.h"

static char tdx_err[160];

const char *tdx_error(void)
{
	return tdx_err;
}

#if defined(__x86_64__)
#include "../kernel/x86_64/x86.h"
#include "../kernel/x86_64/pgtable.h"
#include "../kernel/x86_64/tdcall.h"

#define TDREPORT_SIZE 1024u
#define QUOTE_PAGES 8u /* 32 KiB: a v4 quote with its certification data */
#define QUOTE_HDR 24u
#define QUOTE_IN_FLIGHT 0xffffffffffffffffull
#define QUOTE_TIMEOUT_NS (30ull * 1000000000)
#define MAP_GPA_RETRIES 16

static struct {
	bool probed, present;
	char detail[128];
	uint64_t shared_bit;
	uint8_t *report;  /* TDREPORT_STRUCT, private, 1024-aligned */
	uint8_t *rdata;   /* REPORTDATA and RTMR extend data, private, 64-aligned */
	uint8_t *quote;   /* QUOTE_PAGES shared pages, or NULL */
} td;

/* A GHCI call with two arguments; the VMM's status (or the TDCALL's). */
static uint64_t vmcall(uint64_t fn, uint64_t a, uint64_t b)
{
	struct tdvmcall t = { 0, fn, a, b, 0, 0 };
	uint64_t st = tdvmcall(&t);
	return st ? st : t.r10;
}

static bool detect(void)
{
	struct cpuid m = cpuid(0, 0), t;
	if (m.a < 0x21) {
		plat_snprintf(td.detail, sizeof td.detail,
			      "CPUID leaf 0x21 absent (max basic leaf %#x): not a TDX guest", m.a);
		return false;
	}
	t = cpuid(0x21, 0);
	/* "IntelTDX    " as EBX, EDX, ECX */
	if (t.b != 0x65746e49 || t.d != 0x5844546c || t.c != 0x20202020) {
		plat_snprintf(td.detail, sizeof td.detail,
			      "CPUID 0x21: EBX=%#x EDX=%#x ECX=%#x, not \"IntelTDX    \"", t.b, t.d,
			      t.c);
		return false;
	}
	return true;
}

static void setup(void);

/* TDG.VP.VMCALL<MapGPA> (GHCI §3.2) of [gpa, gpa + n) to shared: the VMM may
 * stop part way with TDG.VP.VMCALL_RETRY and the GPA to go on from in R11. */
static int map_gpa_shared(uint64_t gpa, uint64_t n)
{
	uint64_t end = gpa + n;

	for (int tries = 0; tries < MAP_GPA_RETRIES;) {
		struct tdvmcall t = { 0, TDVMCALL_MAP_GPA, gpa | td.shared_bit, end - gpa, 0, 0 };
		uint64_t st = tdvmcall(&t);
		if (!st && !t.r10)
			return 0;
		uint64_t at = t.r11 & ~td.shared_bit;
		if (st || t.r10 != TDVMCALL_STATUS_RETRY || at < gpa || at >= end) {
			plat_snprintf(tdx_err, sizeof tdx_err, "MapGPA of %#llx (%llu bytes) to shared: %#llx",
				      (unsigned long long)gpa, (unsigned long long)(end - gpa),
				      (unsigned long long)(st ? st : t.r10));
			return -LLMK_EIO;
		}
		tries = at == gpa ? tries + 1 : 0; /* a retry without progress counts */
		gpa = at;
	}
	plat_snprintf(tdx_err, sizeof tdx_err, "MapGPA of %#llx: the VMM kept asking to retry",
		      (unsigned long long)gpa);
	return -LLMK_EIO;
}

int tdx_share(void *p, size_t n)
{
	uint64_t va = (uintptr_t)p, mask;

	if (!td.probed)
		setup();
	if (!td.shared_bit || va % PAGE_SIZE || n % PAGE_SIZE) {
		plat_snprintf(tdx_err, sizeof tdx_err, "TDX: %s",
			      td.shared_bit ? "range not page aligned" : td.detail);
		return -LLMK_EINVAL;
	}
	/* the TDX module keeps no coherence between a page's private and
	 * shared lines: write the private ones back first */
	for (uint64_t a = va; a < va + n; a += 64)
		__asm__ volatile("clflush (%0)" : : "r"(a) : "memory");
	__asm__ volatile("mfence" : : : "memory");
	if (map_gpa_shared(va, n))
		return -LLMK_EIO;
	mask = ((1ull << 52) - 1) & ~0xfffull & ~td.shared_bit;
	for (uint64_t a = va; a < va + n; a += PAGE_SIZE)
		if (cc_page_remap(a, 0, td.shared_bit, 0, mask)) {
			plat_snprintf(tdx_err, sizeof tdx_err,
				      "cannot set the shared bit of %#llx in the page tables",
				      (unsigned long long)a);
			return -LLMK_ENOMEM;
		}
	memset(p, 0, n);
	return 0;
}

uint64_t tdx_shared_bit(void)
{
	return td.shared_bit;
}

/* The quote buffer: private pages made shared. */
static void share_quote_pages(void)
{
	uint8_t *q = plat_alloc(QUOTE_PAGES * PAGE_SIZE, PAGE_SIZE);

	if (q && !tdx_share(q, QUOTE_PAGES * PAGE_SIZE))
		td.quote = q; /* else kept private and unused: no quote this boot */
}

/* TDG.VP.INFO: RCX[5:0] is GPAW; the shared bit is GPA bit GPAW-1. */
static void find_shared_bit(void)
{
	uint64_t rcx = 0, rdx = 0, r8 = 0;

	if (!tdcall(TDCALL_VP_INFO, &rcx, &rdx, &r8) && (rcx & 63) >= 32)
		td.shared_bit = 1ull << ((rcx & 63) - 1);
}

static void setup(void)
{
	td.probed = true;
	if (!detect())
		return;
	td.report = plat_alloc(TDREPORT_SIZE, TDREPORT_SIZE);
	td.rdata = plat_alloc(PAGE_SIZE, PAGE_SIZE);
	if (!td.report || !td.rdata) {
		plat_snprintf(td.detail, sizeof td.detail, "no memory for the TDREPORT");
		return;
	}
	find_shared_bit();
	if (td.shared_bit)
		share_quote_pages();
	plat_snprintf(td.detail, sizeof td.detail, "TDX guest (CPUID 0x21 \"IntelTDX\"), %s",
		      td.quote ? "GetQuote buffer shared" : "no GetQuote buffer (report only)");
	td.present = true;
}

int tdx_probe(struct plat_attest_info *out)
{
	if (!td.probed)
		setup();
	memset(out, 0, sizeof *out);
	out->kind = PLAT_ATTEST_TDX;
	out->name = "tdx";
	out->present = td.present;
	plat_snprintf(out->detail, sizeof out->detail, "%s", td.detail);
	return td.present ? 0 : -LLMK_ENOENT;
}

static int get_quote(uint8_t *buf, size_t cap, size_t *len)
{
	uint8_t *q = td.quote;
	uint64_t status;
	uint32_t out;

	memset(q, 0, QUOTE_PAGES * PAGE_SIZE);
	uint64_t hdr[2] = { 1, 0 }; /* version 1, status 0 */
	uint32_t lens[2] = { TDREPORT_SIZE, 0 };
	memcpy(q, hdr, 16);
	memcpy(q + 16, lens, 8);
	memcpy(q + QUOTE_HDR, td.report, TDREPORT_SIZE);
	uint64_t r = vmcall(TDVMCALL_GET_QUOTE, (uintptr_t)q | td.shared_bit, QUOTE_PAGES * PAGE_SIZE);
	if (r) {
		plat_snprintf(tdx_err, sizeof tdx_err, "GetQuote refused by the VMM (%#llx)",
			      (unsigned long long)r);
		return -LLMK_EIO;
	}
	uint64_t t0 = plat_time_ns();
	do {
		memcpy(&status, q + 8, 8);
		if (status != QUOTE_IN_FLIGHT)
			break;
	} while (plat_time_ns() - t0 < QUOTE_TIMEOUT_NS);
	memcpy(&out, q + 20, 4);
	if (status || out == 0 || out > QUOTE_PAGES * PAGE_SIZE - QUOTE_HDR) {
		plat_snprintf(tdx_err, sizeof tdx_err, "GetQuote status %#llx, %u bytes",
			      (unsigned long long)status, out);
		return -LLMK_EIO;
	}
	/* copied out of the shared page once; the verifier checks its signatures */
	return attest_rec_put(buf, cap, len, ATTEST_REC_TDX_QUOTE, q + QUOTE_HDR, out);
}

int tdx_evidence(const uint8_t report_data[64], uint8_t *buf, size_t cap, size_t *len)
{
	uint64_t rcx, rdx, r8 = 0, st;
	size_t at = *len;
	int e;

	if (!td.probed)
		setup();
	if (!td.present) {
		plat_snprintf(tdx_err, sizeof tdx_err, "%s", td.detail);
		return -LLMK_ENOENT;
	}
	memcpy(td.rdata, report_data, 64);
	rcx = (uintptr_t)td.report;
	rdx = (uintptr_t)td.rdata;
	if ((st = tdcall(TDCALL_MR_REPORT, &rcx, &rdx, &r8))) {
		plat_snprintf(tdx_err, sizeof tdx_err, "TDG.MR.REPORT failed: %#llx",
			      (unsigned long long)st);
		return -LLMK_EIO;
	}
	if ((e = attest_rec_put(buf, cap, len, ATTEST_REC_TDX_REPORT, td.report, TDREPORT_SIZE)))
		return e;
	if (td.quote && (e = get_quote(buf, cap, len))) {
		*len = at;
		return e;
	}
	if (!td.quote)
		plat_snprintf(tdx_err, sizeof tdx_err, "no quote: the GetQuote buffer is not shared");
	return 0;
}

int tdx_extend_rtmr3(const uint8_t digest[32])
{
	uint64_t rcx, rdx, r8 = 0, st;
	if (!td.probed)
		setup();
	if (!td.present)
		return -LLMK_ENOENT;
	memset(td.rdata + 64, 0, 64);
	memcpy(td.rdata + 64, digest, 32);
	rcx = (uintptr_t)(td.rdata + 64);
	rdx = 3;
	if ((st = tdcall(TDCALL_MR_RTMR_EXTEND, &rcx, &rdx, &r8))) {
		plat_snprintf(tdx_err, sizeof tdx_err, "TDG.MR.RTMR.EXTEND RTMR3 failed: %#llx",
			      (unsigned long long)st);
		return -LLMK_EIO;
	}
	return 0;
}

#else /* not x86_64 */

int tdx_probe(struct plat_attest_info *out)
{
	memset(out, 0, sizeof *out);
	out->kind = PLAT_ATTEST_TDX;
	out->name = "tdx";
	plat_snprintf(out->detail, sizeof out->detail, "TDX exists only on x86_64");
	return -LLMK_ENOENT;
}

int tdx_evidence(const uint8_t report_data[64], uint8_t *buf, size_t cap, size_t *len)
{
	(void)report_data, (void)buf, (void)cap, (void)len;
	plat_snprintf(tdx_err, sizeof tdx_err, "TDX exists only on x86_64");
	return -LLMK_ENOENT;
}

int tdx_extend_rtmr3(const uint8_t digest[32])
{
	(void)digest;
	return -LLMK_ENOENT;
}

int tdx_share(void *p, size_t n)
{
	(void)p, (void)n;
	plat_snprintf(tdx_err, sizeof tdx_err, "TDX exists only on x86_64");
	return -LLMK_EINVAL;
}

uint64_t tdx_shared_bit(void)
{
	return 0;
}

#endif
