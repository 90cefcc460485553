/*
 * tests/unit/test_vc.c — the #VC handler (kernel/x86_64/vc.c) on the host,
 * against a simulated hypervisor.
 *
 * vc.c reaches the machine only through x86.h's RDMSR, WRMSR, VMGEXIT,
 * XGETBV and CR4 (and cc_page_entry, kernel_boot, plat_panic, arch_halt).
 * Here those are macros and functions of this file: the GHCB MSR and
 * SEV_STATUS are variables, VMGEXIT runs a hypervisor that answers the GHCB
 * MSR protocol and the GHCB's NAE events, refusing a request whose fields
 * are not marked valid as KVM's sev_es_validate_vmgexit does, and a panic
 * or a termination returns to the test. What this does not show: that
 * real SEV-ES/SNP hardware and a real hypervisor agree (no SEV here).
 */
#include "test.h"

#if defined(__x86_64__)
#include <setjmp.h>
#include <stdarg.h>

#include "../../kernel/kernel.h"
#include "../../kernel/arch.h"
#include "../../kernel/x86_64/x86.h"
#include "../../drivers/cc_pages.h"

#define CBIT 51
#define PAGE4K __attribute__((aligned(4096)))

static uint8_t fw_ghcb[4096] PAGE4K, own_ghcb[4096] PAGE4K, priv_page[4096] PAGE4K;

struct hv_leaf {
	uint32_t fn, sub, a, b, c, d;
};

static struct {
	uint64_t msr_ghcb, sev_status, cr4, xcr0;
	struct hv_leaf cpuid[16];
	int n_cpuid;
	int msr_calls, ghcb_calls;
	const uint8_t *ghcb_used;
	uint64_t code, info1, info2, scratch, rax, rcx, rdx; /* the last NAE event */
	bool rax_valid, xcr0_valid;
	uint64_t io_in, msr_value, mmio_value, refuse;
	uint8_t mmio_written[8];
	bool terminated, bad_request;
	jmp_buf jb;
	char panic[256];
} hyp;

static uint64_t g64(const uint8_t *g, unsigned off)
{
	uint64_t v;
	memcpy(&v, g + off, 8);
	return v;
}

static bool gvalid(const uint8_t *g, unsigned off)
{
	return (g[0x3f0 + off / 64] >> ((off / 8) % 8)) & 1;
}

static void gset(uint8_t *g, unsigned off, uint64_t v)
{
	memcpy(g + off, &v, 8);
	g[0x3f0 + off / 64] |= (uint8_t)(1u << ((off / 8) % 8));
}

static const struct hv_leaf *hv_leaf(uint32_t fn, uint32_t sub)
{
	static const struct hv_leaf zero;
	for (int i = 0; i < hyp.n_cpuid; i++)
		if (hyp.cpuid[i].fn == fn && hyp.cpuid[i].sub == sub)
			return &hyp.cpuid[i];
	return &zero;
}

/* The GHCB MSR protocol (GHCB spec §2.3.1). */
static void hv_msr_protocol(uint64_t v)
{
	const struct hv_leaf *l;
	uint32_t reg;

	hyp.msr_calls++;
	switch (v & 0xfff) {
	case 0x002: /* SEV information: protocol 1..2, C-bit 51 */
		hyp.msr_ghcb = 0x001 | (uint64_t)CBIT << 24 | 1ull << 32 | 2ull << 48;
		break;
	case 0x004: /* CPUID: [63:32] function, [31:30] register */
		l = hv_leaf((uint32_t)(v >> 32), 0);
		reg = (uint32_t)(v >> 30) & 3;
		hyp.msr_ghcb = 0x005 | (uint64_t)(reg == 0 ? l->a : reg == 1 ? l->b : reg == 2 ? l->c : l->d)
						 << 32;
		break;
	case 0x100:
		hyp.terminated = true;
		break;
	default:
		hyp.msr_ghcb = 0;
	}
}

/* NAE events through the GHCB (GHCB spec §4.1). */
static void hv_ghcb(uint8_t *g)
{
	uint16_t ver;
	uint32_t usage;

	hyp.ghcb_calls++;
	hyp.ghcb_used = g;
	memcpy(&ver, g + 0xffa, 2);
	memcpy(&usage, g + 0xffc, 4);
	hyp.code = g64(g, 0x390), hyp.info1 = g64(g, 0x398), hyp.info2 = g64(g, 0x3a0);
	hyp.rax = g64(g, 0x1f8), hyp.rcx = g64(g, 0x308), hyp.rdx = g64(g, 0x310);
	hyp.scratch = g64(g, 0x3a8);
	hyp.rax_valid = gvalid(g, 0x1f8);
	hyp.xcr0_valid = gvalid(g, 0x3e8);
	hyp.bad_request = ver != 2 || usage != 0 || !gvalid(g, 0x390) || !gvalid(g, 0x398) ||
			 !gvalid(g, 0x3a0);
	if (hyp.code == 0x72)
		hyp.bad_request |= !hyp.rax_valid || !gvalid(g, 0x308) || !hyp.xcr0_valid;
	if (hyp.code == 0x7b && !(hyp.info1 & 1))
		hyp.bad_request |= !hyp.rax_valid;
	if (hyp.code == 0x7c)
		hyp.bad_request |= !gvalid(g, 0x308) ||
				  (hyp.info1 && (!hyp.rax_valid || !gvalid(g, 0x310)));
	if (hyp.code == 0x80000001 || hyp.code == 0x80000002)
		hyp.bad_request |= !gvalid(g, 0x3a8) || hyp.scratch != (uintptr_t)g + 0x800;
	memset(g + 0x3f0, 0, 16); /* the answer's valid bits, as KVM sets them */
	gset(g, 0x398, hyp.bad_request ? 1 : hyp.refuse);
	gset(g, 0x3a0, 0);
	if (hyp.bad_request || hyp.refuse)
		return;
	switch (hyp.code) {
	case 0x72: {
		const struct hv_leaf *l = hv_leaf((uint32_t)hyp.rax, (uint32_t)hyp.rcx);
		gset(g, 0x1f8, l->a), gset(g, 0x318, l->b), gset(g, 0x308, l->c), gset(g, 0x310, l->d);
		break;
	}
	case 0x7b:
		if (hyp.info1 & 1)
			gset(g, 0x1f8, hyp.io_in);
		break;
	case 0x7c:
		if (!hyp.info1)
			gset(g, 0x1f8, (uint32_t)hyp.msr_value), gset(g, 0x310, hyp.msr_value >> 32);
		break;
	case 0x6e:
		gset(g, 0x1f8, 0x1234), gset(g, 0x310, 0x56);
		break;
	case 0x80000001:
		memcpy(g + 0x800, &hyp.mmio_value, hyp.info2);
		break;
	case 0x80000002:
		memcpy(hyp.mmio_written, g + 0x800, hyp.info2);
		break;
	}
}

static void sim_vmgexit(void)
{
	if (hyp.msr_ghcb & 0xfff)
		hv_msr_protocol(hyp.msr_ghcb);
	else if (hyp.msr_ghcb)
		hv_ghcb((uint8_t *)(uintptr_t)hyp.msr_ghcb);
}

static uint64_t sim_rdmsr(uint32_t msr)
{
	return msr == 0xc0010130u ? hyp.msr_ghcb : msr == 0xc0010131u ? hyp.sev_status : 0;
}

static void sim_wrmsr(uint32_t msr, uint64_t v)
{
	if (msr == 0xc0010130u)
		hyp.msr_ghcb = v;
}

__attribute__((noreturn)) static void sim_panic(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(hyp.panic, sizeof hyp.panic, fmt, ap);
	va_end(ap);
	longjmp(hyp.jb, 1);
}

void arch_halt(void)
{
	longjmp(hyp.jb, 2);
}

/* The page tables: 0xfe000000.. a shared 2 MiB MMIO page, 0x80000000.. private;
 * the two GHCBs shared and priv_page private, identity-mapped 4 KiB pages. */
int cc_page_entry(uint64_t va, uint64_t addr_mask, uint64_t *pte, uint64_t *size)
{
	(void)addr_mask;
	if ((va & ~0xfffull) == (uintptr_t)fw_ghcb || (va & ~0xfffull) == (uintptr_t)own_ghcb ||
	    (va & ~0xfffull) == (uintptr_t)priv_page) {
		*pte = (va & ~0xfffull) | 3;
		if ((va & ~0xfffull) == (uintptr_t)priv_page)
			*pte |= 1ull << CBIT;
		*size = 4096;
		return 0;
	}
	if (va >= 0xfe000000u && va < 0xfe200000u) {
		*pte = 0xfe000000u | 0x83, *size = 2u << 20;
		return 0;
	}
	if (va >= 0x80000000u && va < 0x80001000u) {
		*pte = 0x80000000u | 1ull << CBIT | 3, *size = 4096;
		return 0;
	}
	return -LLMK_EINVAL;
}

/* Instructions are 16-byte arrays: the handler reads up to 15 bytes at RIP. */
static struct boot_info bi;
const struct boot_info *kernel_boot = &bi;

#define rdmsr(m) sim_rdmsr(m)
#define wrmsr(m, v) sim_wrmsr(m, v)
#define vmgexit() sim_vmgexit()
#define read_cr4() (hyp.cr4)
#define xgetbv(i) (hyp.xcr0)
#define plat_panic(...) sim_panic(__VA_ARGS__)
#include "../../kernel/x86_64/vc.c"
#undef plat_panic

/* ---- the machine of each test ---- */
static struct {
	struct cc_blob blob;
	uint8_t page[4096] PAGE4K;
} cc;

static void add_hv(uint32_t fn, uint32_t sub, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	hyp.cpuid[hyp.n_cpuid++] = (struct hv_leaf){ fn, sub, a, b, c, d };
}

/* SEV-ES (or SNP when snp) with the firmware's GHCB in the MSR (or none). */
static void machine(bool snp, bool fw)
{
	memset(&hyp, 0, sizeof hyp);
	memset(&vc, 0, sizeof vc);
	memset(&bi, 0, sizeof bi);
	memset(fw_ghcb, 0, sizeof fw_ghcb);
	memset(own_ghcb, 0, sizeof own_ghcb);
	hyp.sev_status = snp ? 7 : 3;
	hyp.msr_ghcb = fw ? (uintptr_t)fw_ghcb : 0;
	hyp.cr4 = 1u << 18; /* OSXSAVE */
	hyp.xcr0 = 0x7;
	add_hv(0x80000000, 0, 0x80000021, 0, 0, 0);
	add_hv(0x8000001f, 0, 0x1b, CBIT, 0, 0);
	/* the hypervisor's leaf 1: APIC id 5, and it claims more than the page */
	add_hv(1, 0, 0xa00f11, 5u << 24 | 0x0800, 0xffffffff, 0xffffffff);
	add_hv(7, 0, 0, 0xffffffff, 0, 0);
	add_hv(0xb, 0, 0, 0, 0, 5);
}

static void snp_page(uint32_t count)
{
	static const struct snp_cpuid_fn fns[] = {
		{ 0x0, 0, 0, 0, 0xd, 0x68747541, 0x444d4163, 0x69746e65, 0 },
		{ 0x1, 0, 0, 0, 0xa00f11, 0x00020800, 0x76d8320b, 0x178bfbff, 0 },
		{ 0x7, 0, 0, 0, 1, 0x219c07a9, 0, 0, 0 },
		{ 0x7, 1, 0, 0, 0x30, 0, 0, 0, 0 },
		{ 0xb, 0, 0, 0, 1, 2, 0x100, 0, 0 },
		{ 0xd, 0, 3, 0, 0xe7, 0x340, 0xa88, 0, 0 },   /* the legacy-size entry */
		{ 0xd, 0, 0xe7, 0, 0xe7, 0xa80, 0xa88, 0, 0 }, /* another XCR0's: skipped */
		{ 0xd, 1, 1, 0, 0xf, 0x340, 0, 0, 0 },
		{ 0xd, 2, 0, 0, 0x100, 0x240, 0, 0, 0 },
		{ 0xd, 5, 0, 0, 0x40, 0x440, 0, 0, 0 },
		{ 0xd, 6, 0, 0, 0x200, 0x480, 0, 0, 0 },
		{ 0xd, 7, 0, 0, 0x400, 0x680, 0, 0, 0 },
		{ 0x80000000, 0, 0, 0, 0x80000021, 0, 0, 0, 0 },
		{ 0x8000001f, 0, 0, 0, 0x1b, 0x40 | CBIT, 0, 0, 0 },
	};
	memset(&cc, 0, sizeof cc);
	cc.blob.magic = CC_BLOB_MAGIC;
	cc.blob.cpuid_phys = (uintptr_t)cc.page;
	cc.blob.cpuid_len = 4096;
	memcpy(cc.page, &count, 4);
	memcpy(cc.page + 16, fns, sizeof fns);
	bi.cc_blob = (uintptr_t)&cc.blob;
}

/* One #VC: 0 handled, 1 panicked, 2 terminated. */
static int vcexc(struct trap_regs *r, uint64_t code, const uint8_t *insn)
{
	int k;
	r->error = code;
	r->vector = 29;
	r->rip = (uintptr_t)insn;
	hyp.panic[0] = 0;
	if ((k = setjmp(hyp.jb)) == 0) {
		vc_handle(r);
		return 0;
	}
	vc.depth = 0;
	return k;
}

static const uint8_t op_cpuid[16] = { 0x0f, 0xa2 };

static void cpuid_at(struct trap_regs *r, uint32_t fn, uint32_t sub)
{
	memset(r, 0, sizeof *r);
	r->gpr[0] = 0xffffffff00000000ull | fn;
	r->gpr[1] = sub;
	r->gpr[3] = 0xdead;
	CHECK_EQ_INT(vcexc(r, 0x72, op_cpuid), 0);
	CHECK(r->rip == (uintptr_t)op_cpuid + 2);
}

TEST(vc_cpuid_without_a_ghcb_uses_the_msr_protocol)
{
	struct trap_regs r;

	machine(false, false);
	cpuid_at(&r, 0x80000000, 0);
	CHECK(r.gpr[0] == 0x80000021); /* bits 63:32 cleared */
	CHECK(r.gpr[3] == 0);
	/* SEV information, then 4 requests for the C-bit's leaf and 4 for this one */
	CHECK_EQ_INT(hyp.msr_calls, 9);
	CHECK_EQ_INT(hyp.ghcb_calls, 0);
	CHECK(vc_cbit() == 1ull << CBIT);
	/* nothing but CPUID can be served without a GHCB: the guest stops */
	static const uint8_t out[16] = { 0xee };
	CHECK_EQ_INT(vcexc(&r, 0x7b, out), 2);
	CHECK(hyp.terminated);
}

TEST(vc_cpuid_with_the_firmwares_ghcb_asks_through_the_ghcb)
{
	struct trap_regs r;

	machine(false, true);
	cpuid_at(&r, 7, 0);
	CHECK(!hyp.bad_request);
	CHECK(hyp.ghcb_used == fw_ghcb);
	CHECK_EQ_INT(hyp.code, 0x72);
	CHECK(hyp.rax == 7 && hyp.rcx == 0 && hyp.xcr0_valid);
	CHECK(r.gpr[3] == 0xffffffff);
	/* SEV information, then the C-bit's leaf by the MSR protocol: the
	 * GHCB's page-table entry is checked with it before the GHCB is used */
	CHECK_EQ_INT(hyp.msr_calls, 5);
	CHECK(hyp.msr_ghcb == (uintptr_t)fw_ghcb); /* the MSR holds the GHCB again */
	CHECK(strstr(vc_cpuid_source(), "hypervisor") != NULL);
}

TEST(vc_snp_cpuid_comes_from_the_cpuid_page_with_per_cpu_fields_from_the_hypervisor)
{
	struct trap_regs r;

	machine(true, true);
	snp_page(14);
	/* leaf 7: the page's features, not the hypervisor's claim */
	cpuid_at(&r, 7, 0);
	CHECK(r.gpr[3] == 0x219c07a9);
	cpuid_at(&r, 7, 1);
	CHECK(r.gpr[0] == 0x30);
	CHECK(strstr(vc_cpuid_source(), "SNP CPUID page (14 entries)") != NULL);
	/* leaf 1: the page's, with the hypervisor's APIC id and our OSXSAVE */
	cpuid_at(&r, 1, 0);
	CHECK(r.gpr[3] == (5u << 24 | 0x00020800));
	CHECK(r.gpr[1] == (0x76d8320bu | 1u << 27));
	CHECK(r.gpr[2] == 0x178bfbff);
	hyp.cr4 = 0;
	cpuid_at(&r, 1, 0);
	CHECK(r.gpr[1] == (0x76d8320bu & ~(1u << 27)));
	hyp.cr4 = 1u << 18;
	/* leaf 0xB: the x2APIC id is the hypervisor's */
	cpuid_at(&r, 0xb, 0);
	CHECK(r.gpr[2] == 5 && r.gpr[0] == 1);
	/* leaf 0xD.0: the XSAVE size of XCR0's components, from their entries */
	hyp.xcr0 = 0xe7;
	cpuid_at(&r, 0xd, 0);
	CHECK(r.gpr[0] == 0xe7);
	CHECK(r.gpr[3] == 0xa80);
	hyp.xcr0 = 0x7;
	cpuid_at(&r, 0xd, 0);
	CHECK(r.gpr[3] == 0x340);
	/* a component the page does not describe: refused */
	hyp.xcr0 = 0x207;
	memset(&r, 0, sizeof r);
	r.gpr[0] = 0xd;
	CHECK_EQ_INT(vcexc(&r, 0x72, op_cpuid), 1);
	CHECK(strstr(hyp.panic, "lacks") != NULL);
	hyp.xcr0 = 0x7;
	/* in range but absent: zeros; out of every range: zeros, nobody asked */
	int calls = hyp.ghcb_calls + hyp.msr_calls;
	cpuid_at(&r, 0x5, 0);
	CHECK(r.gpr[0] == 0 && r.gpr[3] == 0 && r.gpr[1] == 0 && r.gpr[2] == 0);
	cpuid_at(&r, 0x40000000, 0);
	CHECK(r.gpr[0] == 0);
	cpuid_at(&r, 0x80000008, 0);
	CHECK(r.gpr[0] == 0);
	CHECK_EQ_INT(hyp.ghcb_calls + hyp.msr_calls, calls);
}

TEST(vc_snp_without_a_usable_cpuid_page_asks_the_hypervisor_and_says_so)
{
	struct trap_regs r;

	machine(true, true);
	snp_page(65); /* more than the 64 entries the page can hold */
	cpuid_at(&r, 7, 0);
	CHECK(r.gpr[3] == 0xffffffff);
	CHECK(strstr(vc_cpuid_source(), "65 entries") != NULL);
	CHECK(strstr(vc_cpuid_source(), "unvalidated") != NULL);
	machine(true, true); /* no CC blob at all */
	cpuid_at(&r, 7, 0);
	CHECK(strstr(vc_cpuid_source(), "no usable SNP CPUID page") != NULL);
}

TEST(vc_terminates_when_the_hypervisor_denies_sev)
{
	struct trap_regs r;

	machine(false, true);
	hyp.cpuid[1].a = 0; /* 0x8000001F: no SEV */
	memset(&r, 0, sizeof r);
	r.gpr[0] = 0x8000001f;
	CHECK_EQ_INT(vcexc(&r, 0x72, op_cpuid), 2);
	CHECK(hyp.terminated);
	machine(false, true);
	hyp.cpuid[0].a = 0x80000008; /* no leaf 0x8000001F */
	memset(&r, 0, sizeof r);
	r.gpr[0] = 0x80000000;
	CHECK_EQ_INT(vcexc(&r, 0x72, op_cpuid), 2);
}

TEST(vc_port_io_reaches_the_hypervisor_as_ioio_exit_information)
{
	static const uint8_t outb_dx[16] = { 0xee }, inb_dx[16] = { 0xec }, inw_dx[16] = { 0x66, 0xed },
			     inl_dx[16] = { 0xed }, outb_imm[16] = { 0xe6, 0x80 };
	struct trap_regs r;

	machine(false, true);
	memset(&r, 0, sizeof r);
	r.gpr[INSN_RDX] = 0x3f8;
	r.gpr[0] = 0x5541;
	CHECK_EQ_INT(vcexc(&r, 0x7b, outb_dx), 0);
	CHECK(!hyp.bad_request);
	CHECK(hyp.info1 == (0x3f8u << 16 | 0x10 | 0x200)); /* port, SZ8, A64, OUT */
	CHECK(hyp.rax == 0x41);
	CHECK(r.rip == (uintptr_t)outb_dx + 1);

	r.gpr[INSN_RDX] = 0x3fd;
	r.gpr[0] = 0xaaaaaaaaaaaaaaaaull;
	hyp.io_in = 0x60;
	CHECK_EQ_INT(vcexc(&r, 0x7b, inb_dx), 0);
	CHECK(hyp.info1 == (0x3fdu << 16 | 0x10 | 0x200 | 1));
	CHECK(r.gpr[0] == 0xaaaaaaaaaaaaaa60ull);
	hyp.io_in = 0x1234;
	CHECK_EQ_INT(vcexc(&r, 0x7b, inw_dx), 0);
	CHECK(hyp.info1 == (0x3fdu << 16 | 0x20 | 0x200 | 1));
	CHECK(r.gpr[0] == 0xaaaaaaaaaaaa1234ull);
	CHECK(r.rip == (uintptr_t)inw_dx + 2);
	hyp.io_in = 0x89abcdef;
	CHECK_EQ_INT(vcexc(&r, 0x7b, inl_dx), 0);
	CHECK(hyp.info1 == (0x3fdu << 16 | 0x40 | 0x200 | 1));
	CHECK(r.gpr[0] == 0x89abcdef);
	r.gpr[0] = 0x7;
	CHECK_EQ_INT(vcexc(&r, 0x7b, outb_imm), 0);
	CHECK(hyp.info1 == (0x80u << 16 | 0x10 | 0x200));
	CHECK(hyp.rax == 7);
}

TEST(vc_msr_access_and_rdtsc_go_through_the_ghcb)
{
	static const uint8_t rd[16] = { 0x0f, 0x32 }, wr[16] = { 0x0f, 0x30 }, tsc[16] = { 0x0f, 0x31 };
	struct trap_regs r;

	machine(false, true);
	memset(&r, 0, sizeof r);
	r.gpr[1] = 0x1b;
	hyp.msr_value = 0x00000001fee00900ull;
	CHECK_EQ_INT(vcexc(&r, 0x7c, rd), 0);
	CHECK(!hyp.bad_request && hyp.info1 == 0 && hyp.rcx == 0x1b);
	CHECK(r.gpr[0] == 0xfee00900 && r.gpr[2] == 1);
	r.gpr[1] = 0x830, r.gpr[0] = 0xffffffff00000500ull, r.gpr[2] = 7;
	CHECK_EQ_INT(vcexc(&r, 0x7c, wr), 0);
	CHECK(!hyp.bad_request && hyp.info1 == 1);
	CHECK(hyp.rcx == 0x830 && hyp.rax == 0x500 && hyp.rdx == 7);
	CHECK(r.rip == (uintptr_t)wr + 2);
	CHECK_EQ_INT(vcexc(&r, 0x6e, tsc), 0);
	CHECK(r.gpr[0] == 0x1234 && r.gpr[2] == 0x56);
}

TEST(vc_mmio_moves_become_mmio_events_on_shared_pages_only)
{
	static const uint8_t st32[16] = { 0x89, 0x42, 0x14 }, ld8[16] = { 0x0f, 0xb6, 0x42, 0x14 },
			     bad[16] = { 0x01, 0x42, 0x14 };
	struct trap_regs r;

	machine(true, true);
	snp_page(14);
	memset(&r, 0, sizeof r);
	r.gpr[INSN_RDX] = 0xfe000000;
	r.gpr[0] = 0x12345678;
	CHECK_EQ_INT(vcexc(&r, 0x400, st32), 0);
	CHECK(!hyp.bad_request);
	CHECK(hyp.code == 0x80000002 && hyp.info1 == 0xfe000014 && hyp.info2 == 4);
	CHECK(hyp.mmio_written[0] == 0x78 && hyp.mmio_written[3] == 0x12);
	CHECK(r.rip == (uintptr_t)st32 + 3);
	r.gpr[0] = ~0ull;
	hyp.mmio_value = 0xab;
	CHECK_EQ_INT(vcexc(&r, 0x400, ld8), 0);
	CHECK(hyp.code == 0x80000001 && hyp.info2 == 1);
	CHECK(r.gpr[0] == 0xab);
	/* a private page is never MMIO; an unmapped one neither */
	r.gpr[INSN_RDX] = 0x80000000;
	CHECK_EQ_INT(vcexc(&r, 0x400, st32), 1);
	CHECK(strstr(hyp.panic, "private page") != NULL);
	r.gpr[INSN_RDX] = 0x10000000;
	CHECK_EQ_INT(vcexc(&r, 0x400, st32), 1);
	CHECK(strstr(hyp.panic, "unmapped") != NULL);
	/* an instruction the decoder does not take: named, with its bytes */
	r.gpr[INSN_RDX] = 0xfe000000;
	CHECK_EQ_INT(vcexc(&r, 0x400, bad), 1);
	CHECK(strstr(hyp.panic, "cannot emulate") != NULL && strstr(hyp.panic, "01 42 14") != NULL);
}

TEST(vc_refusals_and_unknown_exits_stop_with_one_message)
{
	static const uint8_t outb_dx[16] = { 0xee }, vmmcall[16] = { 0x0f, 0x01, 0xd9 };
	struct trap_regs r;

	machine(false, true);
	memset(&r, 0, sizeof r);
	CHECK_EQ_INT(vcexc(&r, 0x7b, outb_dx), 0); /* the first #VC sets up */
	hyp.refuse = 1;
	CHECK_EQ_INT(vcexc(&r, 0x7b, outb_dx), 1);
	CHECK(strstr(hyp.panic, "refused exit 0x7b") != NULL);
	hyp.refuse = 0;
	CHECK_EQ_INT(vcexc(&r, 0x81, vmmcall), 1);
	CHECK(strstr(hyp.panic, "exit code 0x81") != NULL);
}

TEST(vc_switches_to_the_ghcb_the_guest_registered)
{
	static const uint8_t outb_dx[16] = { 0xee };
	struct trap_regs r;

	machine(true, true);
	snp_page(14);
	memset(&r, 0, sizeof r);
	CHECK_EQ_INT(vcexc(&r, 0x7b, outb_dx), 0);
	CHECK(hyp.ghcb_used == fw_ghcb);
	vc_use_ghcb(own_ghcb);
	CHECK_EQ_INT(vcexc(&r, 0x7b, outb_dx), 0);
	CHECK(hyp.ghcb_used == own_ghcb);
	CHECK(hyp.msr_ghcb == (uintptr_t)own_ghcb);
}

/* Issue 28 #3: the GHCB MSR is the hypervisor's to write. An address in it
 * that our page tables map private (C-bit set), or do not map, or map
 * elsewhere, is not the shared page the firmware set up: writing a GHCB
 * there would be an ordinary store into private memory. */
TEST(vc_refuses_a_ghcb_msr_naming_a_private_page)
{
	static const uint8_t out[16] = { 0xee };
	struct trap_regs r;

	machine(false, false);
	memset(priv_page, 0x5a, sizeof priv_page);
	hyp.msr_ghcb = (uintptr_t)priv_page;
	cpuid_at(&r, 0x80000000, 0); /* served by the MSR protocol instead */
	CHECK(r.gpr[0] == 0x80000021);
	CHECK_EQ_INT(hyp.ghcb_calls, 0);
	CHECK_EQ_INT(vcexc(&r, 0x7b, out), 2); /* nothing to print with: stop */
	bool intact = true;
	for (size_t i = 0; i < sizeof priv_page; i++)
		intact &= priv_page[i] == 0x5a;
	CHECK(intact);

	machine(false, false);
	hyp.msr_ghcb = 0xc0000000; /* not mapped */
	cpuid_at(&r, 0x80000000, 0);
	CHECK_EQ_INT(hyp.ghcb_calls, 0);
	CHECK(vc.ghcb == NULL);
}

#else

TEST(vc_handler_is_tested_on_x86_64_hosts_only)
{
	SKIP_CPU("x86_64", "the #VC handler is x86_64 code");
}

#endif
