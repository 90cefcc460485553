/*
 * drivers/sev_snp.c — the SEV-SNP guest: detection, the secrets page from
 * the CC blob, a GHCB of our own, and SNP guest requests (AMD GHCB
 * Specification #56421 v2, AMD64 APM Vol. 2 §15.36; the messages are
 * drivers/snp_guest_msg.c's). Not run here: no SEV hardware, and QEMU's TCG
 * has no SEV; it is written to the specs and compiled.
 *
 * In spec order, once, on the first probe (after mem_init):
 *   1. CPUID 0x8000001F: EAX[1] SEV, EAX[4] SEV-SNP, EBX[5:0] the C-bit.
 *      Only then SEV_STATUS (MSR 0xC001_0131; reading it without SEV
 *      faults): bit 2 SNP active (APM §15.34.10).
 *   2. The CC blob OVMF leaves (boot/ captured its address): the secrets
 *      page, holding the VMPCKs and the OS area with our sequence numbers.
 *   3. GHCB MSR protocol (GHCB spec §2.3.1): SEV information (0x002 ->
 *      0x001, protocol versions; we need 2), hypervisor features (0x080 ->
 *      0x081, bit 0 SNP).
 *   4. Our shared pages (GHCB, request, response, certificates), one 2 MiB
 *      block of private memory: flush its lines, PVALIDATE to rescind
 *      validation (APM Vol. 3 PVALIDATE; 2 MiB if the RMP has it so, else
 *      each 4 KiB page), Page State Change to shared per page through the
 *      MSR protocol (0x014 -> 0x015, §2.3.1), the C-bit cleared in our
 *      mapping (kernel/x86_64/pgtable.c), then zeroed through the new
 *      mapping. The rest of the block goes to the DMA pool
 *      (drivers/cc_pages.c takes it: sev_snp_spare), which shares further
 *      blocks the same way (sev_snp_share).
 *   5. Register the GHCB's GPA (0x012 -> 0x013, required under SNP, §2.3.2)
 *      and put it in the GHCB MSR; the #VC handler (kernel/x86_64/vc.c),
 *      which used the firmware's GHCB until then, uses ours from now on.
 * A guest request is NAE event 0x8000_0011 (extended: 0x8000_0012, RAX =
 * certificate pages' GPA, RBX = their number) with SW_EXITINFO1/2 = the
 * request and response pages' GPAs, then VMGEXIT (§4.1.8).
 *
 * drivers/cc_pages.c's cc_init sets this driver up right after mem_init,
 * before any device: CPUID, port I/O, MSRs and MMIO reach the hypervisor
 * through kernel/x86_64/vc.c, and virtio DMA goes through the shared pool.
 * It uses VMPCK0 and VMPL 0 (no SVSM).
 */
#include "../kernel/kernel.h"
#include "sev_snp.h"
#include "snp_guest_msg.h"

static char snp_err[200];

const char *sev_snp_error(void)
{
	return snp_err;
}

#if defined(__x86_64__)
#include "../kernel/x86_64/x86.h"
#include "../kernel/x86_64/ghcb.h"
#include "../kernel/x86_64/pgtable.h"

#define MSR_SEV_STATUS 0xc0010131u
#define SEV_STATUS_SNP (1ull << 2)

#define NAE_SNP_GUEST_REQUEST 0x80000011ull
#define NAE_SNP_EXT_GUEST_REQUEST 0x80000012ull

#define PVALIDATE_4K 0u
#define PVALIDATE_2M 1u
#define PVALIDATE_FAIL_SIZEMISMATCH 6u
#define BLOCK (2ull << 20)
#define CERT_PAGES 4u
enum { PG_GHCB, PG_REQ, PG_RESP, PG_CERTS, PG_SHARED = PG_CERTS + CERT_PAGES };

static struct {
	bool probed, present;
	char detail[128];
	unsigned cbit;
	uint64_t cmask, addr_mask;
	uint8_t *secrets;
	uint8_t *block;   /* shared; our PG_SHARED pages first, the rest the DMA pool's */
	uint8_t *spare;   /* ... until it takes them */
	size_t spare_n;
	uint8_t *ghcb;
	struct snp_transport t;
	struct snp_guest g;
} snp;

/* One MSR-protocol exchange: write, exit, read back. */
static uint64_t ghcb_msr_call(uint64_t v)
{
	wrmsr(MSR_GHCB, v);
	vmgexit();
	return rdmsr(MSR_GHCB);
}

/* PVALIDATE: RAX = address, ECX = page size, EDX = validate; EAX = result,
 * CF = 1 when the RMP entry already had that state (APM Vol. 3). */
static uint32_t pvalidate(uint64_t va, uint32_t size, uint32_t validate, bool *unchanged)
{
	uint32_t rc;
	uint8_t cf;
	__asm__ volatile(".byte 0xf2, 0x0f, 0x01, 0xff\n\tsetc %1"
			 : "=a"(rc), "=qm"(cf)
			 : "a"(va), "c"(size), "d"(validate)
			 : "memory", "cc");
	*unchanged = cf;
	return rc;
}

static bool detect(void)
{
	struct cpuid v = cpuid(0, 0), x = cpuid(0x80000000u, 0), f;

	/* "AuthenticAMD" (EBX, EDX, ECX) */
	if (v.b != 0x68747541 || v.d != 0x69746e65 || v.c != 0x444d4163) {
		plat_snprintf(snp.detail, sizeof snp.detail, "not an AMD CPU (CPUID vendor)");
		return false;
	}
	if (x.a < 0x8000001fu) {
		plat_snprintf(snp.detail, sizeof snp.detail,
			      "CPUID 0x8000001F absent (max extended leaf %#x): no SEV", x.a);
		return false;
	}
	f = cpuid(0x8000001fu, 0);
	if (!(f.a & (1u << 1)) || !(f.a & (1u << 4))) {
		plat_snprintf(snp.detail, sizeof snp.detail,
			      "CPUID 0x8000001F: EAX=%#x, no SEV%s", f.a,
			      (f.a & 2) ? "-SNP" : "");
		return false;
	}
	snp.cbit = f.b & 63;
	uint64_t st = rdmsr(MSR_SEV_STATUS);
	if (!(st & SEV_STATUS_SNP)) {
		plat_snprintf(snp.detail, sizeof snp.detail,
			      "SEV_STATUS %#llx: SEV-SNP not active in this guest",
			      (unsigned long long)st);
		return false;
	}
	snp.cmask = 1ull << snp.cbit;
	snp.addr_mask = ((1ull << 52) - 1) & ~0xfffull & ~snp.cmask;
	return true;
}

static bool find_secrets(void)
{
	const struct cc_blob *b = (const void *)(uintptr_t)kernel_boot->cc_blob;

	if (!b) {
		plat_snprintf(snp.detail, sizeof snp.detail, "SEV-SNP active, but no CC blob from the firmware");
		return false;
	}
	if (b->magic != CC_BLOB_MAGIC || !b->secrets_phys || b->secrets_len < SNP_PAGE) {
		plat_snprintf(snp.detail, sizeof snp.detail,
			      "CC blob at %#llx: magic %#x, secrets %#llx (%u bytes): unusable",
			      (unsigned long long)kernel_boot->cc_blob, b->magic,
			      (unsigned long long)b->secrets_phys, b->secrets_len);
		return false;
	}
	snp.secrets = (uint8_t *)(uintptr_t)b->secrets_phys;
	return true;
}

static bool negotiate(void)
{
	uint64_t r = ghcb_msr_call(GHCB_MSR_SEV_INFO_REQ);
	uint32_t max = (uint32_t)(r >> 48), min = (uint32_t)(r >> 32) & 0xffff;

	if ((r & GHCB_MSR_INFO_MASK) != GHCB_MSR_SEV_INFO_RESP || min > GHCB_PROTOCOL ||
	    max < GHCB_PROTOCOL) {
		plat_snprintf(snp.detail, sizeof snp.detail,
			      "GHCB SEV information %#llx: protocol 2 not offered",
			      (unsigned long long)r);
		return false;
	}
	r = ghcb_msr_call(GHCB_MSR_HV_FEAT_REQ);
	if ((r & GHCB_MSR_INFO_MASK) != GHCB_MSR_HV_FEAT_RESP || !((r >> 12) & GHCB_MSR_HV_FEAT_SNP)) {
		plat_snprintf(snp.detail, sizeof snp.detail,
			      "GHCB hypervisor features %#llx: no SEV-SNP support",
			      (unsigned long long)r);
		return false;
	}
	return true;
}

/* Private -> shared for a whole 2 MiB block (step 4): PVALIDATE can only
 * rescind the RMP's own page size (2 MiB, or each 4 KiB page when it says
 * FAIL_SIZEMISMATCH), so the block is shared as a whole and what the GHCB
 * and the messages do not use goes to the DMA pool (drivers/cc_pages.c). */
int sev_snp_share(void *block)
{
	bool same;
	uint64_t base = (uintptr_t)block;
	uint32_t rc;

	if (!snp.cmask || base % BLOCK) {
		plat_snprintf(snp_err, sizeof snp_err, "SEV-SNP: %s",
			      snp.cmask ? "block not 2 MiB aligned" : "not an SEV-SNP guest");
		return -LLMK_EINVAL;
	}
	for (uint64_t a = base; a < base + BLOCK; a += 64)
		__asm__ volatile("clflush (%0)" : : "r"(a) : "memory");
	__asm__ volatile("mfence" : : : "memory");
	rc = pvalidate(base, PVALIDATE_2M, 0, &same);
	if (rc == PVALIDATE_FAIL_SIZEMISMATCH) {
		/* The RMP holds 4 KiB entries here: rescind each. */
		rc = 0;
		for (uint64_t a = base; a < base + BLOCK && !rc; a += PAGE_SIZE)
			rc = pvalidate(a, PVALIDATE_4K, 0, &same);
	}
	if (rc) {
		plat_snprintf(snp_err, sizeof snp_err, "PVALIDATE rescind of %#llx failed (%u)",
			      (unsigned long long)base, rc);
		return -LLMK_EIO;
	}
	for (uint64_t gpa = base; gpa < base + BLOCK; gpa += PAGE_SIZE) {
		uint64_t r = ghcb_msr_call(gpa | GHCB_MSR_PSC_SHARED << 52 | GHCB_MSR_PSC_REQ);
		if ((r & GHCB_MSR_INFO_MASK) != GHCB_MSR_PSC_RESP || r >> 32) {
			plat_snprintf(snp_err, sizeof snp_err, "page state change of %#llx to shared: %#llx",
				      (unsigned long long)gpa, (unsigned long long)r);
			return -LLMK_EIO;
		}
		if (cc_page_remap(gpa, snp.cmask, 0, snp.cmask, snp.addr_mask)) {
			plat_snprintf(snp_err, sizeof snp_err,
				      "cannot clear the C-bit of %#llx in the page tables",
				      (unsigned long long)gpa);
			return -LLMK_ENOMEM;
		}
	}
	/* the #VC handler's GHCB (the firmware's, or ours) is in the MSR again
	 * at its next exchange; zero the block through its new mapping */
	memset(block, 0, BLOCK);
	return 0;
}

static bool register_ghcb(void)
{
	uint64_t gfn = (uintptr_t)snp.ghcb >> 12;
	uint64_t r = ghcb_msr_call(gfn << 12 | GHCB_MSR_REG_GPA_REQ);
	if ((r & GHCB_MSR_INFO_MASK) != GHCB_MSR_REG_GPA_RESP || r >> 12 != gfn) {
		plat_snprintf(snp.detail, sizeof snp.detail, "GHCB GPA registration: %#llx",
			      (unsigned long long)r);
		return false;
	}
	wrmsr(MSR_GHCB, (uintptr_t)snp.ghcb);
	/* the hypervisor now takes no other GHCB: the #VC handler switches */
	vc_use_ghcb(snp.ghcb);
	return true;
}

/* The transport (drivers/snp_guest_msg.h): one NAE event through the GHCB. */
static int ghcb_send(void *ctx, uint8_t *req, uint8_t *resp, uint8_t *certs,
		     uint32_t *certs_pages, uint64_t *exitinfo2)
{
	(void)ctx;
	memset(snp.ghcb, 0, PAGE_SIZE);
	ghcb_set(snp.ghcb, GHCB_SW_EXITCODE, certs ? NAE_SNP_EXT_GUEST_REQUEST : NAE_SNP_GUEST_REQUEST);
	ghcb_set(snp.ghcb, GHCB_SW_EXITINFO1, (uintptr_t)req);
	ghcb_set(snp.ghcb, GHCB_SW_EXITINFO2, (uintptr_t)resp);
	if (certs) {
		ghcb_set(snp.ghcb, GHCB_RAX, (uintptr_t)certs);
		ghcb_set(snp.ghcb, GHCB_RBX, *certs_pages);
	}
	ghcb_seal(snp.ghcb, GHCB_PROTOCOL);
	wrmsr(MSR_GHCB, (uintptr_t)snp.ghcb);
	vmgexit();
	/* SW_EXITINFO1[31:0] non-zero: the hypervisor refused the event itself. */
	if ((uint32_t)ghcb_get(snp.ghcb, GHCB_SW_EXITINFO1)) {
		plat_snprintf(snp_err, sizeof snp_err, "VMGEXIT: SW_EXITINFO1 %#llx",
			      (unsigned long long)ghcb_get(snp.ghcb, GHCB_SW_EXITINFO1));
		return -LLMK_EIO;
	}
	*exitinfo2 = ghcb_get(snp.ghcb, GHCB_SW_EXITINFO2);
	if (certs)
		*certs_pages = (uint32_t)ghcb_get(snp.ghcb, GHCB_RBX);
	return 0;
}

static void setup(void)
{
	snp.probed = true;
	if (!detect() || !find_secrets() || !negotiate())
		return;
	snp.block = plat_alloc(BLOCK, BLOCK); /* kept for the rest of the boot */
	if (!snp.block) {
		plat_snprintf(snp.detail, sizeof snp.detail, "no 2 MiB block for the shared pages");
		return;
	}
	if (sev_snp_share(snp.block)) {
		plat_snprintf(snp.detail, sizeof snp.detail, "%s", snp_err);
		return;
	}
	snp.spare = snp.block + PG_SHARED * PAGE_SIZE; /* the DMA pool's: sev_snp_spare */
	snp.spare_n = BLOCK - PG_SHARED * PAGE_SIZE;
	snp.ghcb = snp.block + PG_GHCB * PAGE_SIZE;
	if (!register_ghcb())
		return;
	snp.t = (struct snp_transport){ ghcb_send, NULL, snp.block + PG_REQ * PAGE_SIZE,
					snp.block + PG_RESP * PAGE_SIZE };
	if (snp_guest_init(&snp.g, snp.secrets, 0, &snp.t)) {
		plat_snprintf(snp.detail, sizeof snp.detail, "%s", snp_guest_error(&snp.g));
		return;
	}
	plat_snprintf(snp.detail, sizeof snp.detail,
		      "SEV-SNP guest, C-bit %u, secrets page v%u at %p, GHCB at %p, VMPCK0",
		      snp.cbit, (unsigned)snp_get32(snp.secrets), snp.secrets, snp.ghcb);
	snp.present = true;
}

int sev_snp_probe(struct plat_attest_info *out)
{
	if (!snp.probed)
		setup();
	memset(out, 0, sizeof *out);
	out->kind = PLAT_ATTEST_SNP;
	out->name = "snp";
	out->present = snp.present;
	plat_snprintf(out->detail, sizeof out->detail, "%s", snp.detail);
	return snp.present ? 0 : -LLMK_ENOENT;
}

size_t sev_snp_spare(void **p)
{
	size_t n = snp.spare_n;

	*p = snp.spare;
	snp.spare = NULL;
	snp.spare_n = 0;
	return n;
}

int sev_snp_evidence(const uint8_t report_data[64], uint8_t *buf, size_t cap, size_t *len)
{
	static uint8_t report[SNP_REPORT_SIZE], certs_copy[CERT_PAGES * PAGE_SIZE];
	uint32_t pages = CERT_PAGES;
	uint8_t *certs = snp.block + PG_CERTS * PAGE_SIZE;
	size_t at = *len, n = 0;
	int e;

	if (!snp.probed)
		setup();
	if (!snp.present) {
		plat_snprintf(snp_err, sizeof snp_err, "%s", snp.detail);
		return -LLMK_ENOENT;
	}
	e = snp_guest_report(&snp.g, report_data, 0, SNP_KEY_SEL_DEFAULT, report, certs, &pages);
	if (e) {
		plat_snprintf(snp_err, sizeof snp_err, "%s", snp_guest_error(&snp.g));
		return e;
	}
	/* the hypervisor's page count clamped, the table copied once out of the
	 * shared pages and parsed there (§4.1.8.1) */
	n = snp_certs_copy(certs_copy, certs, pages, CERT_PAGES);
	if ((e = attest_rec_put(buf, cap, len, ATTEST_REC_SNP_REPORT, report, sizeof report)) ||
	    (n && (e = attest_rec_put(buf, cap, len, ATTEST_REC_SNP_CERTS, certs_copy, n)))) {
		*len = at;
		plat_snprintf(snp_err, sizeof snp_err, "evidence buffer too small");
		return e;
	}
	return 0;
}

int sev_snp_guest_key(const struct plat_attest_key_req *req, uint8_t key[32], char *err,
		      size_t errn)
{
	struct snp_key_req r = { .root_key = req->root, .key_sel = SNP_KEY_SEL_DEFAULT,
				 .fields = req->fields, .vmpl = req->vmpl,
				 .guest_svn = req->guest_svn, .tcb_version = req->tcb_version };
	if (!snp.probed)
		setup();
	if (!snp.present) {
		plat_snprintf(err, errn, "%s", snp.detail);
		return -LLMK_ENOENT;
	}
	int e = snp_guest_derive_key(&snp.g, &r, key);
	if (e)
		plat_snprintf(err, errn, "%s", snp_guest_error(&snp.g));
	return e;
}

#else /* not x86_64 */

size_t sev_snp_spare(void **p)
{
	*p = NULL;
	return 0;
}

int sev_snp_share(void *block)
{
	(void)block;
	plat_snprintf(snp_err, sizeof snp_err, "SEV-SNP exists only on x86_64");
	return -LLMK_EINVAL;
}

int sev_snp_probe(struct plat_attest_info *out)
{
	memset(out, 0, sizeof *out);
	out->kind = PLAT_ATTEST_SNP;
	out->name = "snp";
	plat_snprintf(out->detail, sizeof out->detail, "SEV-SNP exists only on x86_64");
	return -LLMK_ENOENT;
}

int sev_snp_evidence(const uint8_t report_data[64], uint8_t *buf, size_t cap, size_t *len)
{
	(void)report_data, (void)buf, (void)cap, (void)len;
	plat_snprintf(snp_err, sizeof snp_err, "SEV-SNP exists only on x86_64");
	return -LLMK_ENOENT;
}

int sev_snp_guest_key(const struct plat_attest_key_req *req, uint8_t key[32], char *err,
		      size_t errn)
{
	(void)req, (void)key;
	plat_snprintf(err, errn, "SEV-SNP exists only on x86_64: no guest key");
	return -LLMK_ENOTSUP;
}

#endif
