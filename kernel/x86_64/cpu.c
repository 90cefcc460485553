/*
 * kernel/x86_64/cpu.c — CPU identification, the SIMD set-up, entropy and
 * the counter.
 *
 * Intel SDM Vol. 1 §13.5 and Vol. 3A §2.5/§13.3: AVX needs CR4.OSXSAVE and
 * XCR0 bits 1-2 (SSE, AVX state); AVX-512 adds XCR0 bits 5-7 (opmask,
 * ZMM_Hi256, Hi16_ZMM). enable_simd sets them; kernel/cpu_features.c then
 * counts a feature usable only when CPUID has it and XCR0 its state.
 */
#include "../kernel.h"
#include "../arch.h"
#include "../cpu_features.h"
#include "x86.h"

#define CR0_MP (1u << 1)
#define CR0_EM (1u << 2)
#define CR0_TS (1u << 3)
#define CR4_OSFXSR (1u << 9)
#define CR4_OSXMMEXCPT (1u << 10)
#define CR4_OSXSAVE (1u << 18)

static struct {
	uint32_t features;
	char brand[49];
	const char *machine;
	bool emulated;
} cpu;

static void enable_simd(void)
{
	struct cpuid l1 = cpuid(1, 0);
	uint64_t xcr0, supported;

	write_cr0((read_cr0() & ~(uint64_t)(CR0_EM | CR0_TS)) | CR0_MP);
	write_cr4(read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT);
	if (!(l1.c & (1u << 26))) /* no XSAVE: SSE only */
		return;
	write_cr4(read_cr4() | CR4_OSXSAVE);
	/* SDM Vol. 1 §13.2: CPUID.(EAX=0DH,ECX=0):EAX is what XCR0 may hold. */
	supported = cpuid(0xd, 0).a;
	xcr0 = XCR0_X87 | XCR0_SSE;
	if (l1.c & (1u << 28))
		xcr0 |= XCR0_AVX & supported;
	if ((supported & XCR0_AVX512) == XCR0_AVX512 && (xcr0 & XCR0_AVX))
		xcr0 |= XCR0_AVX512;
	xsetbv(0, xcr0);
}

/* The words kernel/cpu_features.c decodes (XCR0 as enable_simd left it). */
static void detect_features(void)
{
	struct cpuid l0 = cpuid(0, 0), l1 = cpuid(1, 0), l7 = { 0 }, l71 = { 0 };
	struct cpuid_words w;

	if (l0.a >= 7) {
		l7 = cpuid(7, 0);
		if (l7.a >= 1)
			l71 = cpuid(7, 1);
	}
	w.l0_ebx = l0.b;
	w.l0_ecx = l0.c;
	w.l1_ecx = l1.c;
	w.l7_ebx = l7.b;
	w.l7_ecx = l7.c;
	w.l71_eax = l71.a;
	w.xcr0 = (l1.c & (1u << 27)) ? xgetbv(0) : 0;
	cpu.features = cpuid_features(&w);
}

static void detect_brand(void)
{
	uint32_t *w = (uint32_t *)cpu.brand;
	char *s = cpu.brand;

	if (cpuid(0x80000000, 0).a < 0x80000004)
		return;
	for (uint32_t i = 0; i < 3; i++) {
		struct cpuid r = cpuid(0x80000002 + i, 0);
		w[i * 4 + 0] = r.a;
		w[i * 4 + 1] = r.b;
		w[i * 4 + 2] = r.c;
		w[i * 4 + 3] = r.d;
	}
	cpu.brand[48] = 0;
	while (*s == ' ')
		s++;
	memmove(cpu.brand, s, strlen(s) + 1);
}

/* Intel SDM Vol. 2A CPUID leaf 1 ECX bit 31 marks a hypervisor; leaf
 * 0x40000000 then carries its 12-byte signature in EBX ECX EDX. QEMU's TCG
 * says "TCGTCGTCGTCG". Confidential guests: AMD APM Vol. 2 §15.34.10
 * (SEV_STATUS MSR C001_0131 bit 2: SNP active) and Intel TDX leaf 0x21
 * ("IntelTDX    "). */
static void detect_machine(void)
{
	struct cpuid l1 = cpuid(1, 0), h;
	char sig[13];

	cpu.machine = "bare metal";
	if (cpuid(0, 0).a >= 0x21) {
		h = cpuid(0x21, 0);
		memcpy(sig, &h.b, 4);
		memcpy(sig + 4, &h.d, 4);
		memcpy(sig + 8, &h.c, 4);
		sig[12] = 0;
		if (!memcmp(sig, "IntelTDX    ", 12)) {
			cpu.machine = "TDX guest";
			return;
		}
	}
	if (cpuid(0x80000000, 0).a >= 0x8000001f && (cpuid(0x8000001f, 0).a & (1u << 4)) &&
	    (rdmsr(0xc0010131) & (1u << 2))) {
		cpu.machine = "SEV-SNP guest";
		return;
	}
	if (!(l1.c & (1u << 31)))
		return;
	h = cpuid(0x40000000, 0);
	memcpy(sig, &h.b, 4);
	memcpy(sig + 4, &h.c, 4);
	memcpy(sig + 8, &h.d, 4);
	sig[12] = 0;
	if (!memcmp(sig, "TCGTCGTCGTCG", 12)) {
		cpu.machine = "QEMU TCG";
		cpu.emulated = true;
	} else if (!memcmp(sig, "KVMKVMKVM", 9)) {
		cpu.machine = "KVM guest";
	} else if (!memcmp(sig, "Microsoft Hv", 12)) {
		cpu.machine = "Hyper-V guest";
	} else {
		cpu.machine = "virtual machine";
	}
}

void arch_early_init(void)
{
	__asm__ volatile("cli");
	trap_init();
	enable_simd();
	detect_features();
	detect_brand();
	detect_machine();
}

uint32_t arch_cpu_features(void)
{
	return cpu.features;
}

const char *arch_cpu_name(void)
{
	return cpu.brand[0] ? cpu.brand : "unknown x86_64";
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
	return "x86_64";
}

uint64_t arch_counter(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* Intel SDM Vol. 1 §7.3.17.1: RDRAND may fail transiently (CF=0); retry a
 * few times as Intel's DRNG guide recommends, then report an I/O error. */
int arch_entropy64(uint64_t *out)
{
	if (!(cpu.features & PLAT_CPU_RDRAND))
		return -LLMK_ENOTSUP;
	for (int i = 0; i < 10; i++) {
		uint64_t v;
		uint8_t ok;
		__asm__ volatile("rdrand %0; setc %1" : "=r"(v), "=qm"(ok));
		if (ok) {
			*out = v;
			return 0;
		}
	}
	return -LLMK_EIO;
}

void arch_relax(void)
{
	__asm__ volatile("pause");
}

void arch_dma_barrier(void)
{
	__asm__ volatile("mfence" ::: "memory");
}

void arch_halt(void)
{
	for (;;)
		__asm__ volatile("cli; hlt");
}

uint32_t arch_io_in(uint16_t port, int bytes)
{
	uint32_t v;

	if (bytes == 1) {
		uint8_t b;
		__asm__ volatile("inb %1, %0" : "=a"(b) : "Nd"(port));
		return b;
	}
	if (bytes == 2) {
		uint16_t w;
		__asm__ volatile("inw %1, %0" : "=a"(w) : "Nd"(port));
		return w;
	}
	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

void arch_io_out(uint16_t port, uint32_t val, int bytes)
{
	if (bytes == 1)
		__asm__ volatile("outb %0, %1" : : "a"((uint8_t)val), "Nd"(port));
	else if (bytes == 2)
		__asm__ volatile("outw %0, %1" : : "a"((uint16_t)val), "Nd"(port));
	else
		__asm__ volatile("outl %0, %1" : : "a"(val), "Nd"(port));
}
