/*
 * kernel/x86_64/vc.c — the #VC handler of an SEV-ES / SEV-SNP guest (AMD
 * GHCB Specification #56421 v2; AMD64 APM Vol. 2 §15.35 "Encrypted State").
 *
 * In such a guest the hypervisor cannot read the registers, so an
 * instruction it must emulate raises #VC (vector 29) in the guest instead,
 * with the SVM exit code as error code (APM Vol. 2 Appendix C). The guest
 * performs it through the GHCB, a page it shares with the hypervisor: the
 * registers the instruction needs, SW_EXITCODE, SW_EXITINFO1/2 (marked in
 * the valid bitmap), then VMGEXIT; SW_EXITINFO1[31:0] non-zero on return is
 * an error (GHCB spec §4.1, "Invoking VMGEXIT"; the events and their fields:
 * §4.1 table "List of Supported Non-Automatic Events"). Handled here, the
 * instructions our code executes:
 *
 *   0x72  CPUID   SNP: from the CPUID page the firmware validated at launch
 *                 (the CC blob names it), checked and post-processed as
 *                 Linux does (snp_cpuid); else the hypervisor's answer:
 *                 NAE CPUID (RAX, RCX, XCR0) through the GHCB, or the GHCB
 *                 MSR protocol CPUID request (§2.3.1) while there is none
 *   0x7B  IOIO    IN/OUT decoded (insn.c): SW_EXITINFO1 per APM Vol. 2
 *                 §15.10.2 (port 31:16, size bits 6:4, address size 9:7,
 *                 IN bit 0), RAX in and out
 *   0x7C  MSR     RDMSR/WRMSR: SW_EXITINFO1 0/1, RCX, RAX, RDX
 *   0x6E  RDTSC, 0x87 RDTSCP (when the hypervisor intercepts them)
 *   0x400 NPF     MMIO: the decoded move as NAE MMIO read 0x8000_0001 /
 *                 write 0x8000_0002, SW_EXITINFO1 = the GPA, SW_EXITINFO2 =
 *                 the size, SW_SCRATCH = the GHCB's shared buffer (§4.1
 *                 table, "MMIO Read"/"MMIO Write"), refused when the page
 *                 is private
 *
 * The GHCB: after ExitBootServices the GHCB MSR (0xC001_0130) still holds
 * the firmware's GHCB page (OVMF keeps one per CPU in reserved memory and
 * maps it shared in the page tables we inherit; under SNP it is the page
 * registered with the hypervisor), so console output works from the first
 * character. drivers/sev_snp.c registers a GHCB of our own after mem_init
 * and hands it over (vc_use_ghcb). Every exchange writes the GHCB MSR first:
 * the MSR protocol (sev_snp.c's page state changes) borrows it in between.
 *
 * A #VC inside this handler (the console of a panic) is served by the same
 * code: nothing here touches the GHCB between filling it and reading the
 * answer except VMGEXIT, so a nested use finds it free; the outer one never
 * resumes after a panic. Only the boot CPU runs in a confidential guest
 * (kernel/x86_64/smp.c starts no APs there), so one GHCB serves.
 *
 * The privileged instructions (RDMSR, WRMSR, VMGEXIT, XGETBV, CR4) are
 * x86.h's; tests/unit/test_vc.c replaces them with a simulated hypervisor
 * and drives this file on the host.
 */
#include "../kernel.h"
#include "../arch.h"
#include "x86.h"
#include "insn.h"
#include "ghcb.h"
#include "pgtable.h"

#define MSR_SEV_STATUS 0xc0010131u
#define MSR_XSS 0xda0u
#define SEV_STATUS_SNP (1ull << 2)
#define CR4_OSXSAVE (1ull << 18)
#define CR4_PKE (1ull << 22)

/* SVM exit codes (APM Vol. 2 Appendix C) and the GHCB's own events */
#define EXIT_RDTSC 0x6eu
#define EXIT_CPUID 0x72u
#define EXIT_IOIO 0x7bu
#define EXIT_MSR 0x7cu
#define EXIT_RDTSCP 0x87u
#define EXIT_NPF 0x400u
#define NAE_MMIO_READ 0x80000001ull
#define NAE_MMIO_WRITE 0x80000002ull

/* APM Vol. 2 §15.10.2, Figure 15-2: IOIO intercept information */
#define IOIO_IN (1u << 0)
#define IOIO_SZ8 (1u << 4)
#define IOIO_A64 (1u << 9)

/* The SNP CPUID page (SEV-SNP Firmware ABI #56860, SNP_LAUNCH_UPDATE with
 * PAGE_TYPE_CPUID: a count, then CPUID_FUNCTION entries, at most 64). */
struct snp_cpuid_fn {
	uint32_t eax_in, ecx_in;
	uint64_t xcr0_in, xss_in;
	uint32_t eax, ebx, ecx, edx;
	uint64_t reserved;
};
_Static_assert(sizeof(struct snp_cpuid_fn) == 48, "CPUID_FUNCTION");
#define SNP_CPUID_MAX 64u

struct leaf {
	uint32_t fn, sub;
	uint32_t a, b, c, d;
};

static struct {
	bool ready;
	uint64_t status;       /* SEV_STATUS */
	uint8_t *ghcb;         /* the firmware's, then ours; NULL: MSR protocol only */
	uint16_t version;      /* GHCB protocol version in use */
	uint64_t cmask;        /* the C-bit */
	int depth;
	bool table;            /* the SNP CPUID table below is in use */
	uint32_t count;
	struct snp_cpuid_fn fn[SNP_CPUID_MAX];
	uint32_t std_max, hyp_max, ext_max;
	char note[120];        /* what cc_init prints about CPUID */
} vc;

/* GHCB MSR protocol termination request (§2.3.1, 0x100): the hypervisor
 * stops the guest; reason set 0, reason 0 (general). For when not even the
 * console works. */
__attribute__((noreturn)) static void terminate(void)
{
	wrmsr(MSR_GHCB, GHCB_MSR_TERM_REQ);
	vmgexit();
	arch_halt();
}

static uint64_t msr_call(uint64_t v)
{
	wrmsr(MSR_GHCB, v);
	vmgexit();
	return rdmsr(MSR_GHCB);
}

/* ---- the GHCB ---- */
/* (ghcb.h's, on our GHCB) */
static void g_set(unsigned off, uint64_t v)
{
	ghcb_set(vc.ghcb, off, v);
}

static uint64_t g_get(unsigned off)
{
	return ghcb_get(vc.ghcb, off);
}

static bool g_valid(unsigned off)
{
	return ghcb_valid(vc.ghcb, off);
}

static void g_begin(void)
{
	memset(vc.ghcb + GHCB_VALID_BITMAP, 0, 16);
}

/* One NAE event; panics with what the hypervisor said when it refuses. */
static void g_call(const struct trap_regs *r, uint64_t code, uint64_t info1, uint64_t info2)
{
	g_set(GHCB_SW_EXITCODE, code);
	g_set(GHCB_SW_EXITINFO1, info1);
	g_set(GHCB_SW_EXITINFO2, info2);
	ghcb_seal(vc.ghcb, vc.version);
	wrmsr(MSR_GHCB, (uintptr_t)vc.ghcb);
	vmgexit();
	if ((uint32_t)g_get(GHCB_SW_EXITINFO1))
		plat_panic("#VC: the hypervisor refused exit %#llx at rip %#llx: SW_EXITINFO1 %#llx, "
			   "SW_EXITINFO2 %#llx", (unsigned long long)code,
			   (unsigned long long)r->rip, (unsigned long long)g_get(GHCB_SW_EXITINFO1),
			   (unsigned long long)g_get(GHCB_SW_EXITINFO2));
}

/* Without a GHCB only CPUID can be served; nothing can be printed either. */
static void need_ghcb(void)
{
	if (!vc.ghcb)
		terminate();
}

/* ---- CPUID ---- */
/* Leaves with subleaves, whose ECX selects the entry (Linux's
 * cpuid_function_is_indexed; SDM Vol. 2A CPUID). */
static bool indexed(uint32_t fn)
{
	switch (fn) {
	case 4: case 7: case 0xb: case 0xd: case 0xf: case 0x10: case 0x12: case 0x14:
	case 0x17: case 0x18: case 0x1d: case 0x1e: case 0x1f: case 0x8000001d:
		return true;
	}
	return false;
}

/* The hypervisor's answer: NAE CPUID, or four MSR-protocol requests
 * (GHCBData[63:32] the function, [31:30] the register) without a GHCB. The
 * MSR protocol carries no ECX: a subleaf other than 0 cannot be asked. */
static void hv_cpuid(const struct trap_regs *r, struct leaf *l)
{
	if (vc.ghcb) {
		g_begin();
		g_set(GHCB_RAX, l->fn);
		g_set(GHCB_RCX, l->sub);
		g_set(GHCB_XCR0, (read_cr4() & CR4_OSXSAVE) ? xgetbv(0) : 1);
		g_call(r, EXIT_CPUID, 0, 0);
		if (!g_valid(GHCB_RAX) || !g_valid(GHCB_RBX) || !g_valid(GHCB_RCX) || !g_valid(GHCB_RDX))
			plat_panic("#VC: CPUID %#x: the hypervisor left registers unanswered", l->fn);
		l->a = (uint32_t)g_get(GHCB_RAX);
		l->b = (uint32_t)g_get(GHCB_RBX);
		l->c = (uint32_t)g_get(GHCB_RCX);
		l->d = (uint32_t)g_get(GHCB_RDX);
		return;
	}
	if (indexed(l->fn) && l->sub)
		terminate();
	uint32_t *out[4] = { &l->a, &l->b, &l->c, &l->d };
	for (uint64_t reg = 0; reg < 4; reg++) {
		uint64_t v = msr_call((uint64_t)l->fn << 32 | reg << 30 | GHCB_MSR_CPUID_REQ);
		if ((v & GHCB_MSR_INFO_MASK) != GHCB_MSR_CPUID_RESP)
			terminate();
		*out[reg] = (uint32_t)(v >> 32);
	}
}

static bool table_lookup(struct leaf *l)
{
	for (uint32_t i = 0; i < vc.count; i++) {
		const struct snp_cpuid_fn *e = &vc.fn[i];
		if (e->eax_in != l->fn || (indexed(l->fn) && e->ecx_in != l->sub))
			continue;
		/* 0xD.0/1: only the entry for the legacy XSAVE area (XCR0 1 or 3,
		 * XSS 0); the size is computed from the components below */
		if (l->fn == 0xd && l->sub <= 1 && ((e->xcr0_in != 1 && e->xcr0_in != 3) || e->xss_in))
			continue;
		l->a = e->eax, l->b = e->ebx, l->c = e->ecx, l->d = e->edx;
		return true;
	}
	return false;
}

/* XSAVE area size for the enabled components from the table's 0xD.n
 * entries (APM Vol. 3 Appendix E.3.8): 0 when one is missing. */
static uint32_t xsave_size(uint64_t enabled, bool compacted)
{
	uint64_t found = 0;
	uint32_t size = 0x240; /* legacy area + XSAVE header */

	for (uint32_t i = 0; i < vc.count; i++) {
		const struct snp_cpuid_fn *e = &vc.fn[i];
		if (e->eax_in != 0xd || e->ecx_in < 2 || e->ecx_in > 63)
			continue;
		uint64_t bit = 1ull << e->ecx_in;
		if (!(enabled & bit) || (found & bit))
			continue;
		found |= bit;
		if (compacted)
			size += e->eax;
		else if (e->eax + e->ebx > size)
			size = e->eax + e->ebx;
	}
	return found == (enabled & ~3ull) ? size : 0;
}

/* The CPUID page holds what the firmware validated; the fields that differ
 * per CPU or follow the guest's own control registers are filled in as
 * Linux's snp_cpuid_postprocess does (APIC ids from the hypervisor). */
static void snp_cpuid(const struct trap_regs *r, struct leaf *l)
{
	struct leaf hv = { l->fn, 0, 0, 0, 0, 0 };

	if (!table_lookup(l)) {
		l->a = l->b = l->c = l->d = 0;
		if (!(l->fn <= vc.std_max || (l->fn >= 0x40000000 && l->fn <= vc.hyp_max) ||
		      (l->fn >= 0x80000000 && l->fn <= vc.ext_max)))
			return;
	}
	switch (l->fn) {
	case 0x1:
		hv_cpuid(r, &hv);
		l->b = (hv.b & 0xff000000u) | (l->b & 0x00ffffffu); /* initial APIC id */
		l->d = (hv.d & (1u << 9)) | (l->d & ~(1u << 9));     /* APIC enabled */
		if (read_cr4() & CR4_OSXSAVE)
			l->c |= 1u << 27;
		break;
	case 0x7:
		l->c &= ~(1u << 4);
		if (read_cr4() & CR4_PKE)
			l->c |= 1u << 4;
		break;
	case 0xb:
		hv_cpuid(r, &hv);
		l->d = hv.d; /* x2APIC id */
		break;
	case 0xd:
		if (l->sub <= 1) {
			uint64_t xcr0 = (read_cr4() & CR4_OSXSAVE) ? xgetbv(0) : 1, xss = 0;
			if (l->sub == 1) {
				if (!(l->a & ((1u << 1) | (1u << 3))))
					plat_panic("#VC: CPUID 0xD.1 without XSAVEC/XSAVES in the SNP CPUID page");
				if (l->a & (1u << 3))
					xss = rdmsr(MSR_XSS);
			}
			uint32_t size = xsave_size(xcr0 | xss, l->sub == 1);
			if (!size)
				plat_panic("#VC: CPUID 0xD: XCR0 %#llx has components the SNP CPUID page lacks",
					   (unsigned long long)xcr0);
			l->b = size;
		}
		break;
	case 0x8000001e:
		hv_cpuid(r, &hv);
		l->a = hv.a; /* extended APIC id */
		l->b = (l->b & 0xffffff00u) | (hv.b & 0xff);
		l->c = (l->c & 0xffffff00u) | (hv.c & 0xff);
		break;
	}
}

static void cpuid_leaf(const struct trap_regs *r, struct leaf *l)
{
	if (vc.table)
		snp_cpuid(r, l);
	else
		hv_cpuid(r, l);
}

static void do_cpuid(struct trap_regs *r)
{
	struct leaf l = { (uint32_t)r->gpr[0], (uint32_t)r->gpr[1], 0, 0, 0, 0 };

	cpuid_leaf(r, &l);
	/* A #VC proves SEV-ES: a hypervisor answer denying SEV is a lie meant
	 * to make the guest skip its protections (as Linux checks). */
	if ((l.fn == 0x80000000 && l.a < 0x8000001f) || (l.fn == 0x8000001f && !(l.a & 2)))
		terminate();
	r->gpr[0] = l.a, r->gpr[3] = l.b, r->gpr[1] = l.c, r->gpr[2] = l.d;
	r->rip += 2;
}

/* ---- set-up on the first #VC ---- */
static void load_cpuid_table(void)
{
	const struct cc_blob *b = kernel_boot ? (const void *)(uintptr_t)kernel_boot->cc_blob : NULL;
	const uint8_t *page;
	uint32_t n;

	if (!(vc.status & SEV_STATUS_SNP)) {
		plat_snprintf(vc.note, sizeof vc.note, "CPUID from the hypervisor (SEV-ES: no CPUID page)");
		return;
	}
	if (!b || b->magic != CC_BLOB_MAGIC || !b->cpuid_phys || b->cpuid_len < PAGE_SIZE) {
		plat_snprintf(vc.note, sizeof vc.note,
			      "no usable SNP CPUID page in the CC blob: CPUID from the hypervisor, unvalidated");
		return;
	}
	page = (const uint8_t *)(uintptr_t)b->cpuid_phys;
	memcpy(&n, page, 4);
	if (n == 0 || n > SNP_CPUID_MAX) {
		plat_snprintf(vc.note, sizeof vc.note,
			      "SNP CPUID page has %u entries (1..64): CPUID from the hypervisor, unvalidated", n);
		return;
	}
	vc.count = n;
	memcpy(vc.fn, page + 16, n * sizeof vc.fn[0]);
	for (uint32_t i = 0; i < n; i++) {
		if (vc.fn[i].eax_in == 0)
			vc.std_max = vc.fn[i].eax;
		else if (vc.fn[i].eax_in == 0x40000000)
			vc.hyp_max = vc.fn[i].eax;
		else if (vc.fn[i].eax_in == 0x80000000)
			vc.ext_max = vc.fn[i].eax;
	}
	vc.table = true;
	plat_snprintf(vc.note, sizeof vc.note, "CPUID from the SNP CPUID page (%u entries)", n);
}

/* The 4 KiB page at gpa: mapped at the same address, C-bit clear. */
static bool shared_page(uint64_t gpa)
{
	uint64_t mask = ((1ull << 52) - 1) & ~vc.cmask, pte = 0, size = PAGE_SIZE;

	if (cc_page_entry(gpa, mask, &pte, &size) || (pte & vc.cmask))
		return false;
	return ((pte & mask & ~(size - 1)) | (gpa & (size - 1))) == gpa;
}

static void setup(const struct trap_regs *r)
{
	uint64_t g = rdmsr(MSR_GHCB), info;
	struct leaf l = { 0x8000001f, 0, 0, 0, 0, 0 };

	vc.ready = true;
	/* reading SEV_STATUS is safe: only an SEV-ES guest gets a #VC */
	vc.status = rdmsr(MSR_SEV_STATUS);
	info = msr_call(GHCB_MSR_SEV_INFO_REQ);
	if ((info & GHCB_MSR_INFO_MASK) != GHCB_MSR_SEV_INFO_RESP || (info >> 32 & 0xffff) > GHCB_PROTOCOL)
		terminate();
	vc.version = (uint16_t)(info >> 48) < GHCB_PROTOCOL ? (uint16_t)(info >> 48) :
								 GHCB_PROTOCOL;
	/* the C-bit first (the CPUID page, or the MSR protocol: no GHCB yet) */
	load_cpuid_table();
	cpuid_leaf(r, &l);
	vc.cmask = 1ull << (l.b & 63);
	/* The firmware's GHCB: a page address, not an MSR-protocol value. The
	 * MSR is the hypervisor's to write, so the page must be the shared one
	 * the firmware set up: mapped, identity, C-bit clear in our tables.
	 * Anything else would make every exchange a store into private memory;
	 * without a GHCB only CPUID is served and the guest stops at the first
	 * port access (need_ghcb). */
	if (g && !(g & GHCB_MSR_INFO_MASK) && shared_page(g))
		vc.ghcb = (uint8_t *)(uintptr_t)g;
	wrmsr(MSR_GHCB, g);
}

void vc_use_ghcb(void *ghcb)
{
	vc.ghcb = ghcb;
}

const char *vc_cpuid_source(void)
{
	return vc.ready ? vc.note : "";
}

uint64_t vc_cbit(void)
{
	return vc.cmask;
}

/* ---- port I/O, MSRs, TSC, MMIO ---- */
static void fetch(const struct trap_regs *r, struct insn *in)
{
	const uint8_t *code = (const uint8_t *)(uintptr_t)r->rip;
	int e = insn_decode(code, INSN_MAX_LEN, in);

	if (e)
		plat_panic("#VC %#llx: cannot emulate the instruction at rip %#llx (%02x %02x %02x "
			   "%02x): %s", (unsigned long long)r->error, (unsigned long long)r->rip,
			   code[0], code[1], code[2], code[3], in->why);
}

static void do_ioio(struct trap_regs *r)
{
	struct insn in;
	uint64_t info;

	fetch(r, &in);
	if (in.op != INSN_IN && in.op != INSN_OUT)
		plat_panic("#VC IOIO at rip %#llx: not an IN/OUT instruction", (unsigned long long)r->rip);
	need_ghcb();
	info = (uint64_t)(in.port_dx ? (uint16_t)r->gpr[INSN_RDX] : in.port) << 16 |
	       (uint64_t)in.size * IOIO_SZ8 | IOIO_A64 | (in.op == INSN_IN ? IOIO_IN : 0);
	g_begin();
	g_set(GHCB_RAX, in.op == INSN_OUT ? insn_src_value(&in, r->gpr) : 0);
	g_call(r, EXIT_IOIO, info, 0);
	if (in.op == INSN_IN) {
		if (!g_valid(GHCB_RAX))
			plat_panic("#VC: IN from port %#llx: no RAX in the answer",
				   (unsigned long long)(info >> 16));
		insn_dst_write(&in, r->gpr, g_get(GHCB_RAX));
	}
	r->rip += in.len;
}

static void do_msr(struct trap_regs *r)
{
	const uint8_t *code = (const uint8_t *)(uintptr_t)r->rip;
	bool write = code[1] == 0x30;

	if (code[0] != 0x0f || (code[1] != 0x30 && code[1] != 0x32))
		plat_panic("#VC MSR at rip %#llx: not RDMSR/WRMSR", (unsigned long long)r->rip);
	need_ghcb();
	g_begin();
	g_set(GHCB_RCX, (uint32_t)r->gpr[1]);
	if (write) {
		g_set(GHCB_RAX, (uint32_t)r->gpr[0]);
		g_set(GHCB_RDX, (uint32_t)r->gpr[2]);
	}
	g_call(r, EXIT_MSR, write, 0);
	if (!write) {
		if (!g_valid(GHCB_RAX) || !g_valid(GHCB_RDX))
			plat_panic("#VC: RDMSR %#x: no RAX/RDX in the answer", (uint32_t)r->gpr[1]);
		r->gpr[0] = (uint32_t)g_get(GHCB_RAX);
		r->gpr[2] = (uint32_t)g_get(GHCB_RDX);
	}
	r->rip += 2;
}

static void do_rdtsc(struct trap_regs *r, bool tscp)
{
	need_ghcb();
	g_begin();
	g_call(r, tscp ? EXIT_RDTSCP : EXIT_RDTSC, 0, 0);
	if (!g_valid(GHCB_RAX) || !g_valid(GHCB_RDX) || (tscp && !g_valid(GHCB_RCX)))
		plat_panic("#VC: RDTSC: no RAX/RDX in the answer");
	r->gpr[0] = (uint32_t)g_get(GHCB_RAX);
	r->gpr[2] = (uint32_t)g_get(GHCB_RDX);
	if (tscp)
		r->gpr[1] = (uint32_t)g_get(GHCB_RCX);
	r->rip += tscp ? 3 : 2;
}

static void do_mmio(struct trap_regs *r)
{
	struct insn in;
	uint64_t va, pte = 0, size = PAGE_SIZE, gpa, v = 0;

	fetch(r, &in);
	if (in.op != INSN_MMIO_READ && in.op != INSN_MMIO_WRITE)
		plat_panic("#VC NPF at rip %#llx: not an MMIO move", (unsigned long long)r->rip);
	va = insn_mem_addr(&in, r->gpr, r->rip);
	/* A private page never holds MMIO: emulating there would hand the
	 * hypervisor (or take from it) memory it must not see. */
	if (cc_page_entry(va, ((1ull << 52) - 1) & ~vc.cmask, &pte, &size) || (pte & vc.cmask))
		plat_panic("#VC NPF at rip %#llx: address %#llx is %s, not shared MMIO",
			   (unsigned long long)r->rip, (unsigned long long)va,
			   (pte & vc.cmask) ? "a private page" : "unmapped");
	gpa = (pte & ((1ull << 52) - 1) & ~vc.cmask & ~(size - 1)) | (va & (size - 1));
	need_ghcb();
	g_begin();
	g_set(GHCB_SW_SCRATCH, (uintptr_t)vc.ghcb + GHCB_SHARED_BUFFER);
	if (in.op == INSN_MMIO_WRITE) {
		v = insn_src_value(&in, r->gpr);
		memcpy(vc.ghcb + GHCB_SHARED_BUFFER, &v, in.size);
		g_call(r, NAE_MMIO_WRITE, gpa, in.size);
	} else {
		g_call(r, NAE_MMIO_READ, gpa, in.size);
		memcpy(&v, vc.ghcb + GHCB_SHARED_BUFFER, in.size);
		insn_dst_write(&in, r->gpr, v);
	}
	r->rip += in.len;
}

void vc_handle(struct trap_regs *r)
{
	if (++vc.depth > 3)
		terminate(); /* #VC while reporting a #VC while ...: give up quietly */
	if (!vc.ready)
		setup(r);
	switch (r->error) {
	case EXIT_CPUID:
		do_cpuid(r);
		break;
	case EXIT_IOIO:
		do_ioio(r);
		break;
	case EXIT_MSR:
		do_msr(r);
		break;
	case EXIT_RDTSC:
	case EXIT_RDTSCP:
		do_rdtsc(r, r->error == EXIT_RDTSCP);
		break;
	case EXIT_NPF:
		do_mmio(r);
		break;
	default:
		plat_panic("#VC: exit code %#llx at rip %#llx is not one the kernel emulates",
			   (unsigned long long)r->error, (unsigned long long)r->rip);
	}
	vc.depth--;
}
