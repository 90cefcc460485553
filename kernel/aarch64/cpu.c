/*
 * kernel/aarch64/cpu.c — CPU set-up and identification, the counter, RNDR.
 *
 * UEFI 2.10 §2.3.6 hands over at EL1 (or EL2) with the MMU on, an identity
 * map, FP/SIMD usable and interrupts possibly enabled. We mask every
 * exception, install our own vectors, make sure FP/SIMD does not trap (the
 * engine's NEON code depends on it) and turn alignment checking off (the
 * engine reads packed GGUF fields at any offset; DDI 0487 B2.5.2: unaligned
 * accesses to Normal memory are fine when SCTLR_ELx.A is 0).
 */
#include "../kernel.h"
#include "../arch.h"
#include "aarch64.h"

static struct {
	uint32_t features;
	uint64_t midr;
	char name[64];
	const char *machine;
	bool emulated;
} cpu;

unsigned aarch64_el(void)
{
	return CURRENT_EL(read_sysreg(CurrentEL));
}

static void enable_fp(void)
{
	if (aarch64_el() == 2) {
		write_sysreg(cptr_el2, read_sysreg(cptr_el2) & ~CPTR_EL2_TFP);
		write_sysreg(sctlr_el2, read_sysreg(sctlr_el2) & ~SCTLR_A);
	} else {
		write_sysreg(cpacr_el1, read_sysreg(cpacr_el1) | CPACR_FPEN);
		write_sysreg(sctlr_el1, read_sysreg(sctlr_el1) & ~SCTLR_A);
	}
	isb();
}

/*
 * DDI 0487 D19.2: ID_AA64PFR0_EL1.FP (19:16) and .AdvSIMD (23:20) are 0 for
 * present, 1 for present with half precision, 0xf for absent;
 * ID_AA64ISAR0_EL1.DP (47:44) >= 1: SDOT/UDOT; .RNDR (63:60) >= 1: RNDR;
 * ID_AA64ISAR1_EL1.I8MM (55:52) >= 1: SMMLA/USDOT.
 */
static void detect_features(void)
{
	uint64_t pfr0 = read_sysreg(ID_AA64PFR0_EL1);
	uint64_t isar0 = read_sysreg(ID_AA64ISAR0_EL1);
	uint64_t isar1 = read_sysreg(ID_AA64ISAR1_EL1);
	unsigned fp = id_field(pfr0, 16), simd = id_field(pfr0, 20);
	uint32_t f = 0;

	if (fp != 0xf && simd != 0xf) {
		f |= PLAT_CPU_NEON;
		if (simd == 1 && fp == 1)
			f |= PLAT_CPU_FP16;
		if (id_field(isar0, 44) >= 1)
			f |= PLAT_CPU_DOTPROD;
		if (id_field(isar1, 52) >= 1)
			f |= PLAT_CPU_I8MM;
	}
	if (id_field(isar0, 60) >= 1)
		f |= PLAT_CPU_RNDR;
	cpu.features = f;
}

/*
 * MIDR_EL1 (DDI 0487 D19.2.89): implementer 31:24, part number 15:4. QEMU's
 * TCG "max" CPU reports implementer 0 ("reserved for software use") and part
 * number 'Q' (QEMU target/arm/cpu64.c, aarch64_max_tcg_initfn), which is how
 * an emulated run is told from a real or KVM-accelerated core.
 */
static void detect_machine(void)
{
	unsigned impl, part;
	const char *vendor;

	cpu.midr = read_sysreg(midr_el1);
	impl = (unsigned)(cpu.midr >> 24) & 0xff;
	part = (unsigned)(cpu.midr >> 4) & 0xfff;
	if (impl == 0 && part == 'Q') {
		cpu.emulated = true;
		cpu.machine = "QEMU TCG";
		plat_snprintf(cpu.name, sizeof cpu.name, "QEMU max (MIDR %#llx) at EL%u",
			      (unsigned long long)cpu.midr, aarch64_el());
		return;
	}
	vendor = impl == 0x41 ? "Arm" : impl == 0x51 ? "Qualcomm" : impl == 0x61 ? "Apple" :
		 impl == 0xc0 ? "Ampere" : impl == 0x48 ? "HiSilicon" : "implementer";
	plat_snprintf(cpu.name, sizeof cpu.name, "%s %#x part %#x (MIDR %#llx) at EL%u", vendor,
		      impl, part, (unsigned long long)cpu.midr, aarch64_el());
	cpu.machine = "aarch64 machine";
}

void arch_early_init(void)
{
	__asm__ volatile("msr daifset, #0xf" ::: "memory");
	trap_init();
	enable_fp();
	detect_features();
	detect_machine();
}

uint32_t arch_cpu_features(void)
{
	return cpu.features;
}

const char *arch_cpu_name(void)
{
	return cpu.name;
}

const char *arch_machine(void)
{
	return cpu.machine;
}

bool arch_emulated(void)
{
	return cpu.emulated;
}

const char *plat_arch(void)
{
	return "aarch64";
}

/* CNTVCT_EL0 (DDI 0487 D11.2): the virtual count; the ISB keeps the read
 * from being hoisted above earlier instructions (D11.2.2). */
uint64_t arch_counter(void)
{
	isb();
	return read_sysreg(cntvct_el0);
}

/* DDI 0487 D19.2.132: RNDR sets NZCV to 0b0100 when no random number could
 * be produced in reasonable time; retry a few times, then report it. */
int arch_entropy64(uint64_t *out)
{
	if (!(cpu.features & PLAT_CPU_RNDR))
		return -LLMK_ENOTSUP;
	for (int i = 0; i < 10; i++) {
		uint64_t v, ok;
		__asm__ volatile("mrs %0, S3_3_C2_C4_0\n\tcset %1, ne" : "=r"(v), "=r"(ok) : : "cc");
		if (ok) {
			*out = v;
			return 0;
		}
	}
	return -LLMK_EIO;
}

void arch_relax(void)
{
	__asm__ volatile("yield");
}

/* Device and Normal memory accesses in program order, all the way out to
 * the device (DDI 0487 B2.3.12: DSB completes earlier accesses). Virtio on
 * QEMU's virt is cache-coherent, so no cache maintenance is needed. */
void arch_dma_barrier(void)
{
	__asm__ volatile("dsb sy" ::: "memory");
}

void arch_halt(void)
{
	for (;;)
		__asm__ volatile("msr daifset, #0xf\n\twfi" ::: "memory");
}

/* No port I/O on aarch64 (see arch.h). */
uint32_t arch_io_in(uint16_t port, int bytes)
{
	(void)port;
	(void)bytes;
	return 0xffffffffu;
}

void arch_io_out(uint16_t port, uint32_t val, int bytes)
{
	(void)port;
	(void)val;
	(void)bytes;
}
