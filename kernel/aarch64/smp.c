/*
 * kernel/aarch64/smp.c — start the other CPUs with PSCI CPU_ON (Arm
 * DEN0022D §5.1.4) after ExitBootServices.
 *
 * The MADT's GICC entries (ACPI 6.5 §5.2.12.14) give each CPU's MPIDR. A
 * started CPU enters smp_entry (entry.S) at EL1 with its MMU off and x0 =
 * the context id we pass: the address of a struct smp_start holding this
 * CPU's translation registers, system control, vectors, FP/SIMD enable and
 * a stack, so it runs in the same address space with the same SIMD state
 * before it joins the pool. CPUs are started one at a time; the next start
 * reuses the block once the previous CPU is online (it has read it all by
 * then). Polling only: no interrupt is enabled on any CPU.
 */
#include "../kernel.h"
#include "../arch.h"
#include "../../drivers/acpi.h"
#include "aarch64.h"

#define PSCI_CPU_ON_64 0xc4000003u
#define AP_STACK (1u << 20)
#define MPIDR_AFF_MASK 0xff00ffffffull /* Aff3 39:32, Aff2-Aff0 23:0 */
#define CACHE_LINE_MIN 16              /* CTR_EL0.DminLine can only be larger */

/* Offsets are entry.S's smp_entry loads. */
struct smp_start {
	uint64_t mair, tcr, ttbr0, ttbr1, sctlr, vbar, cpacr;
	uint64_t stack, entry, cpu;
};
_Static_assert(__builtin_offsetof(struct smp_start, cpu) == 72, "entry.S smp_entry");

extern const char smp_entry[];

static void ap_main(uint64_t cpu)
{
	smp_ap_main((int)cpu);
}

/* The new CPU reads the block with its caches off: clean it to the point of
 * coherency first (DDI 0487 D7.5.9, DC CVAC). */
static void clean_to_poc(const void *p, size_t n)
{
	uint64_t ctr = read_sysreg(ctr_el0);
	uint64_t line = 4ull << ((ctr >> 16) & 0xf);
	uint64_t a = (uintptr_t)p & ~(line - 1);

	if (line < CACHE_LINE_MIN)
		line = CACHE_LINE_MIN;
	for (; a < (uintptr_t)p + n; a += line)
		__asm__ volatile("dc cvac, %0" : : "r"(a) : "memory");
	__asm__ volatile("dsb sy" ::: "memory");
}

static bool start_one(struct smp_start *s, uint64_t mpidr, int cpu)
{
	void *stack = plat_alloc(AP_STACK, PAGE_SIZE);
	int64_t r;

	if (!stack) {
		plat_printf("smp: no %u bytes for the stack of CPU %d\n", AP_STACK, cpu);
		return false;
	}
	s->stack = (uintptr_t)stack + AP_STACK;
	s->cpu = (uint64_t)cpu;
	clean_to_poc(s, sizeof *s);
	r = psci_call(PSCI_CPU_ON_64, mpidr, (uintptr_t)smp_entry, (uintptr_t)s);
	if (r == 0 && smp_ap_wait(cpu, 1000000000ull))
		return true;
	if (r == 0)
		plat_printf("smp: CPU %d (MPIDR %#llx) was started but did not come online\n", cpu,
			    (unsigned long long)mpidr);
	else
		plat_printf("smp: PSCI CPU_ON for CPU %d (MPIDR %#llx) returned %lld; left out\n",
			    cpu, (unsigned long long)mpidr, (long long)r);
	/* A CPU that may still wake up later keeps its stack. */
	if (r != 0)
		plat_free(stack, AP_STACK);
	return false;
}

int arch_start_cpus(int max)
{
	uint64_t ids[SMP_MAX_CPUS], self = read_sysreg(mpidr_el1) & MPIDR_AFF_MASK;
	int n = acpi_cpu_ids(ids, SMP_MAX_CPUS), ncpu = 1, conduit = psci_conduit();
	struct smp_start *s;

	if (n <= 1)
		return 1;
	if (conduit < 0 || aarch64_el() != 1) {
		plat_printf("smp: %d CPUs in the MADT, only the boot CPU used: %s\n", n,
			    conduit < 0 ? "no PSCI conduit in the FADT" :
					  "running at EL2 (secondary start-up is EL1 only)");
		return 1;
	}
	if (!(s = plat_alloc(sizeof *s, PAGE_SIZE)))
		return 1;
	*s = (struct smp_start){
		.mair = read_sysreg(mair_el1), .tcr = read_sysreg(tcr_el1),
		.ttbr0 = read_sysreg(ttbr0_el1), .ttbr1 = read_sysreg(ttbr1_el1),
		.sctlr = read_sysreg(sctlr_el1), .vbar = read_sysreg(vbar_el1),
		.cpacr = read_sysreg(cpacr_el1), .entry = (uintptr_t)ap_main,
	};
	for (int i = 0; i < n && i < SMP_MAX_CPUS && ncpu < max; i++) {
		if (ids[i] == ~0ull || (ids[i] & MPIDR_AFF_MASK) == self)
			continue;
		if (start_one(s, ids[i] & MPIDR_AFF_MASK, ncpu))
			ncpu++;
	}
	return ncpu;
}
