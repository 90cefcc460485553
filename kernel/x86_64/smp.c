/*
 * kernel/x86_64/smp.c — start the application processors after
 * ExitBootServices (Intel SDM Vol. 3A §9.4.4 MP initialization, §11.6.1
 * interrupt command register; ACPI 6.5 §5.2.12 MADT for the APIC ids).
 *
 * The boot CPU sends each AP, one at a time, INIT, then STARTUP (twice if
 * the first one was not taken) through its local APIC in whichever mode the
 * firmware left it: xAPIC (MMIO registers) or x2APIC (MSRs). The AP runs
 * ap_boot.S from the page boot/ reserved below 1 MiB, reaches long mode
 * with this CPU's page tables and control registers, and joins the pool.
 * Polling only: no interrupt is ever enabled, on any CPU.
 */
#include "../kernel.h"
#include "../arch.h"
#include "../../drivers/acpi.h"
#include "../../drivers/cc_pages.h"
#include "x86.h"

#define MSR_APIC_BASE 0x1b
#define MSR_EFER 0xc0000080
#define APIC_BASE_X2APIC (1u << 10)
#define APIC_BASE_ENABLE (1u << 11)
#define XAPIC_ICR_LO 0x300
#define XAPIC_ICR_HI 0x310
#define X2APIC_ICR 0x830
#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)
#define ICR_PENDING (1u << 12) /* xAPIC delivery status */
#define ICR_ASSERT (1u << 14)
#define CR4_PAE (1u << 5)
#define CR4_LA57 (1u << 12)
#define CR4_OSXSAVE (1u << 18)
#define EFER_LMA (1u << 10)
#define AP_STACK (1u << 20)

/* The data block of ap_boot.S; offsets are its AP_* constants. */
struct ap_boot_data {
	uint64_t gdt[4];
	uint16_t gdtr_limit;
	uint32_t gdtr_base;
	uint8_t pad0[10];
	uint32_t far32_off;
	uint16_t far32_sel;
	uint16_t pad1;
	uint32_t far64_off;
	uint16_t far64_sel;
	uint16_t pad2;
	uint64_t cr3, cr4_32, efer, cr0, cr4, xcr0;
	uint32_t have_xcr0, mxcsr;
	uint16_t kgdtr_limit;
	uint64_t kgdtr_base;
	uint8_t pad3[6];
	uint16_t kidtr_limit;
	uint64_t kidtr_base;
	uint8_t pad4[6];
	uint16_t kcs, kds;
	uint32_t pad5;
	uint64_t stack, arg, entry;
} __attribute__((packed));
_Static_assert(__builtin_offsetof(struct ap_boot_data, far32_off) == 48, "AP_FAR32");
_Static_assert(__builtin_offsetof(struct ap_boot_data, cr3) == 64, "AP_CR3");
_Static_assert(__builtin_offsetof(struct ap_boot_data, have_xcr0) == 112, "AP_HAVE_XCR0");
_Static_assert(__builtin_offsetof(struct ap_boot_data, kgdtr_limit) == 120, "AP_KGDTR");
_Static_assert(__builtin_offsetof(struct ap_boot_data, kidtr_limit) == 136, "AP_KIDTR");
_Static_assert(__builtin_offsetof(struct ap_boot_data, kcs) == 152, "AP_KCS");
_Static_assert(sizeof(struct ap_boot_data) == 184, "AP_ENTRY + 8");

/* SDM Vol. 3A §3.4.5 descriptors: flat 64-bit code, data, 32-bit code. */
#define SEL_CODE64 0x08
#define SEL_CODE32 0x18
static const uint64_t ap_gdt[4] = { 0, 0x00af9a000000ffffull, 0x00cf92000000ffffull,
				    0x00cf9a000000ffffull };

extern const char ap_boot_start[], ap_boot_32[], ap_boot_64[], ap_boot_data[], ap_boot_end[];

static struct {
	bool x2apic;
	uint64_t xapic; /* MMIO base of the xAPIC registers */
	uint8_t *page;
	struct ap_boot_data *data;
} smp;

static void udelay(uint64_t us)
{
	uint64_t t0 = arch_counter(), ticks = us * (time_counter_hz() / 1000000);

	while (arch_counter() - t0 < ticks)
		arch_relax();
}

/* SDM Vol. 3A §11.6.1 (xAPIC: destination in ICR high bits 56-63, wait for
 * the delivery status to clear) and §11.12.9 (x2APIC: one 64-bit MSR
 * write, destination in bits 32-63). */
static void send_ipi(uint32_t apic_id, uint32_t lo)
{
	if (smp.x2apic) {
		wrmsr(X2APIC_ICR, (uint64_t)apic_id << 32 | lo);
		return;
	}
	mmio_write32(smp.xapic + XAPIC_ICR_HI, apic_id << 24);
	mmio_write32(smp.xapic + XAPIC_ICR_LO, lo);
	for (int i = 0; i < 100000 && (mmio_read32(smp.xapic + XAPIC_ICR_LO) & ICR_PENDING); i++)
		arch_relax();
}

static uint32_t my_apic_id(void)
{
	if (smp.x2apic)
		return (uint32_t)rdmsr(0x802); /* x2APIC ID register, §11.12.5.1 */
	return mmio_read32(smp.xapic + 0x20) >> 24;
}

static void ap_entry(uint64_t cpu)
{
	smp_ap_main((int)cpu);
}

struct pseudo_desc {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

/* The copy of ap_boot.S and everything an AP inherits from this CPU. */
static void prepare_page(void)
{
	struct ap_boot_data *d;
	struct pseudo_desc gdtr, idtr;
	uint64_t page = (uintptr_t)smp.page;
	uint16_t cs, ds;
	uint32_t mxcsr;

	memcpy(smp.page, ap_boot_start, (size_t)(ap_boot_end - ap_boot_start));
	d = smp.data = (void *)(smp.page + (ap_boot_data - ap_boot_start));
	memcpy(d->gdt, ap_gdt, sizeof ap_gdt);
	d->gdtr_limit = sizeof ap_gdt - 1;
	d->gdtr_base = (uint32_t)(page + ((const char *)d->gdt - (const char *)smp.page));
	d->far32_off = (uint32_t)(page + (uint64_t)(ap_boot_32 - ap_boot_start));
	d->far64_off = (uint32_t)(page + (uint64_t)(ap_boot_64 - ap_boot_start));
	d->far32_sel = SEL_CODE32;
	d->far64_sel = SEL_CODE64;
	__asm__ volatile("mov %%cr3, %0" : "=r"(d->cr3));
	d->cr4 = read_cr4();
	d->cr4_32 = CR4_PAE | (d->cr4 & CR4_LA57);
	d->efer = rdmsr(MSR_EFER) & ~(uint64_t)EFER_LMA;
	d->cr0 = read_cr0();
	d->have_xcr0 = (d->cr4 & CR4_OSXSAVE) != 0;
	d->xcr0 = d->have_xcr0 ? xgetbv(0) : 0;
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	d->mxcsr = mxcsr;
	__asm__ volatile("sgdt %0; sidt %1" : "=m"(gdtr), "=m"(idtr));
	d->kgdtr_limit = gdtr.limit;
	d->kgdtr_base = gdtr.base;
	d->kidtr_limit = idtr.limit;
	d->kidtr_base = idtr.base;
	__asm__ volatile("mov %%cs, %0; mov %%ds, %1" : "=r"(cs), "=r"(ds));
	d->kcs = cs;
	d->kds = ds;
	d->entry = (uintptr_t)ap_entry;
}

/* SDM Vol. 3A §9.4.4.1: INIT, 10 ms, STARTUP, 200 us, STARTUP again if the
 * AP has not come up. An AP that is already running ignores a STARTUP. */
static bool start_one(uint32_t apic_id, int cpu)
{
	void *stack = plat_alloc(AP_STACK, PAGE_SIZE);
	uint32_t vector = (uint32_t)((uintptr_t)smp.page >> 12);

	if (!stack) {
		plat_printf("smp: no %u bytes for the stack of CPU %d\n", AP_STACK, cpu);
		return false;
	}
	smp.data->stack = (uintptr_t)stack + AP_STACK;
	smp.data->arg = (uint64_t)cpu;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	send_ipi(apic_id, ICR_INIT | ICR_ASSERT);
	udelay(10000);
	send_ipi(apic_id, ICR_STARTUP | ICR_ASSERT | vector);
	if (smp_ap_wait(cpu, 200000))
		return true;
	send_ipi(apic_id, ICR_STARTUP | ICR_ASSERT | vector);
	if (smp_ap_wait(cpu, 1000000000))
		return true;
	plat_printf("smp: CPU %d (APIC id %u) did not start; left out\n", cpu, apic_id);
	plat_free(stack, AP_STACK);
	return false;
}

/* Why this machine cannot start APs the classic way, or NULL. */
static const char *unsupported(uint64_t apic_base, uint64_t cr3)
{
	if (!kernel_boot || !kernel_boot->ap_boot_page)
		return "no page below 1 MiB was reserved at boot";
	if (!(apic_base & APIC_BASE_ENABLE))
		return "the local APIC is disabled";
	if (cr3 >> 32)
		return "the page tables are above 4 GiB";
	/* SEV-ES/SNP and TDX guests start APs through the hypervisor (GHCB AP
	 * creation, TDX mailbox), not INIT-SIPI; under plain SEV the start-up
	 * page would have to be shared. The #VC/#VE handlers and the shared
	 * pages also assume the boot CPU alone. */
	if (cc_kind() != CC_NONE)
		return "confidential guest (AP start needs the hypervisor protocol)";
	return NULL;
}

int arch_start_cpus(int max)
{
	uint64_t ids[SMP_MAX_CPUS], apic_base = rdmsr(MSR_APIC_BASE), cr3;
	int n = acpi_cpu_ids(ids, SMP_MAX_CPUS), ncpu = 1;
	const char *why;
	uint32_t self;

	__asm__ volatile("mov %%cr3, %0" : "=r"(cr3));
	if (n <= 1)
		return 1;
	if ((why = unsupported(apic_base, cr3))) {
		plat_printf("smp: %d CPUs in the MADT, only the boot CPU used: %s\n", n, why);
		return 1;
	}
	smp.x2apic = (apic_base & APIC_BASE_X2APIC) != 0;
	smp.xapic = apic_base & ~0xfffull;
	smp.page = (uint8_t *)(uintptr_t)kernel_boot->ap_boot_page;
	self = my_apic_id();
	prepare_page();
	if (n > SMP_MAX_CPUS)
		n = SMP_MAX_CPUS;
	for (int i = 0; i < n && ncpu < max; i++) {
		bool dup = false;

		for (int j = 0; j < i; j++)
			dup |= ids[j] == ids[i];
		if (ids[i] == self || dup)
			continue;
		if (start_one((uint32_t)ids[i], ncpu))
			ncpu++;
	}
	return ncpu;
}
