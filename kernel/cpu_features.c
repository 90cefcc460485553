/*
 * kernel/cpu_features.c — the CPU features' names and the x86 CPUID
 * decoder (cpu_features.h), portable C that the kernel and the host build
 * both compile.
 *
 * Intel SDM Vol. 1 §13.5 and Vol. 3A §2.5/§13.3: AVX needs XCR0 bits 1-2
 * (SSE, AVX state); AVX-512 adds XCR0 bits 5-7 (opmask, ZMM_Hi256,
 * Hi16_ZMM). A feature counts as usable only when both CPUID says the CPU
 * has it and XCR0 has its state enabled.
 */
#include "cpu_features.h"

/* In the order `version` and the boot log print them. */
static const struct {
	uint32_t bit;
	const char *name;
} cpu_feature_names[] = {
	{PLAT_CPU_SSE42, "sse4.2"},         {PLAT_CPU_AVX2, "avx2"},
	{PLAT_CPU_FMA, "fma"},              {PLAT_CPU_F16C, "f16c"},
	{PLAT_CPU_AVX512F, "avx512f"},      {PLAT_CPU_AVX512BW, "avx512bw"},
	{PLAT_CPU_AVX512DQ, "avx512dq"},    {PLAT_CPU_AVX512VL, "avx512vl"},
	{PLAT_CPU_AVX512VNNI, "avx512vnni"}, {PLAT_CPU_AVX512BF16, "avx512bf16"},
	{PLAT_CPU_AVXVNNI, "avxvnni"},      {PLAT_CPU_AES, "aes"},
	{PLAT_CPU_PCLMUL, "pclmulqdq"},     {PLAT_CPU_VAES, "vaes"},
	{PLAT_CPU_VPCLMUL, "vpclmulqdq"},   {PLAT_CPU_SHA, "sha"},
	{PLAT_CPU_RDRAND, "rdrand"},        {PLAT_CPU_NEON, "neon"},
	{PLAT_CPU_DOTPROD, "dotprod"},      {PLAT_CPU_FP16, "fp16"},
	{PLAT_CPU_RNDR, "rndr"},            {PLAT_CPU_I8MM, "i8mm"},
	{PLAT_CPU_GFNI, "gfni"},            {PLAT_CPU_AMD, "amd"},
};

void plat_cpu_feature_text(uint32_t f, char *buf, size_t n)
{
	size_t o = 0;

	if (n)
		buf[0] = 0;
	for (size_t i = 0; i < sizeof cpu_feature_names / sizeof cpu_feature_names[0]; i++)
		if ((f & cpu_feature_names[i].bit) && o < n)
			o += (size_t)plat_snprintf(buf + o, n - o, " %s", cpu_feature_names[i].name);
}

uint32_t cpuid_features(const struct cpuid_words *w)
{
	/* without OSXSAVE there is no XCR0 to read: x87 and SSE state only */
	uint64_t xcr0 = (w->l1_ecx & (1u << 27)) ? w->xcr0 : XCR0_X87 | XCR0_SSE;
	bool avx_ok = (xcr0 & (XCR0_SSE | XCR0_AVX)) == (XCR0_SSE | XCR0_AVX);
	bool avx512_ok = avx_ok && (xcr0 & XCR0_AVX512) == XCR0_AVX512;
	uint32_t f = 0;

	/* the vendor string: EBX, EDX, ECX of leaf 0 ("Auth" "enti" "cAMD";
	 * Hygon's Zen: "Hygo" "nGen" "uine") */
	if ((w->l0_ebx == 0x68747541u && w->l0_ecx == 0x444d4163u) ||
	    (w->l0_ebx == 0x6f677948u && w->l0_ecx == 0x656e6975u))
		f |= PLAT_CPU_AMD;
	/* leaf 1 ECX: bit 20 SSE4.2, 30 RDRAND, 25 AES-NI, 1 PCLMULQDQ (SSE state) */
	if (w->l1_ecx & (1u << 20))
		f |= PLAT_CPU_SSE42;
	if (w->l1_ecx & (1u << 30))
		f |= PLAT_CPU_RDRAND;
	if (w->l1_ecx & (1u << 25))
		f |= PLAT_CPU_AES;
	if (w->l1_ecx & (1u << 1))
		f |= PLAT_CPU_PCLMUL;
	if (avx_ok) {
		/* leaf 1 ECX bit 12 FMA, 29 F16C; leaf 7 EBX bit 5 AVX2; leaf 7.1
		 * EAX bit 4 AVX-VNNI; leaf 7 ECX bit 9 VAES, 10 VPCLMULQDQ (their
		 * VEX/EVEX forms: AVX state) */
		if (w->l1_ecx & (1u << 12))
			f |= PLAT_CPU_FMA;
		if (w->l1_ecx & (1u << 29))
			f |= PLAT_CPU_F16C;
		if (w->l7_ebx & (1u << 5))
			f |= PLAT_CPU_AVX2;
		if (w->l71_eax & (1u << 4))
			f |= PLAT_CPU_AVXVNNI;
		if (w->l7_ecx & (1u << 9))
			f |= PLAT_CPU_VAES;
		if (w->l7_ecx & (1u << 10))
			f |= PLAT_CPU_VPCLMUL;
	}
	if (w->l7_ebx & (1u << 29)) /* SHA extensions: xmm, SSE state only */
		f |= PLAT_CPU_SHA;
	if (avx512_ok && (w->l7_ebx & (1u << 16))) {
		/* leaf 7 EBX bit 16 AVX512F, 17 DQ, 30 BW, 31 VL; ECX bit 11 VNNI,
		 * 8 GFNI (its zmm form, which llm/kernels/avx512 uses); leaf 7.1
		 * EAX bit 5 AVX512_BF16 */
		f |= PLAT_CPU_AVX512F;
		if (w->l7_ebx & (1u << 17))
			f |= PLAT_CPU_AVX512DQ;
		if (w->l7_ebx & (1u << 30))
			f |= PLAT_CPU_AVX512BW;
		if (w->l7_ebx & (1u << 31))
			f |= PLAT_CPU_AVX512VL;
		if (w->l7_ecx & (1u << 11))
			f |= PLAT_CPU_AVX512VNNI;
		if (w->l71_eax & (1u << 5))
			f |= PLAT_CPU_AVX512BF16;
		if (w->l7_ecx & (1u << 8))
			f |= PLAT_CPU_GFNI;
	}
	return f;
}
