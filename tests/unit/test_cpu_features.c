/*
 * tests/unit/test_cpu_features.c — kernel/cpu_features.c: the CPUID
 * decoder on hand-built words (the SDM's bit positions), each feature only
 * with the register state XCR0 enables for it, and the names' text.
 */
#include "test.h"
#include "../../kernel/cpu_features.h"

#define BIT(n) (1u << (n))

/* An AMD CPU with AVX-512 (Zen 4's set): every bit this decoder knows. */
static struct cpuid_words zen4(void)
{
	struct cpuid_words w = {0};

	w.l0_ebx = 0x68747541u; /* "Auth" */
	w.l0_ecx = 0x444d4163u; /* "cAMD" */
	w.l1_ecx = BIT(1) | BIT(12) | BIT(20) | BIT(25) | BIT(27) | BIT(28) | BIT(29) | BIT(30);
	w.l7_ebx = BIT(5) | BIT(16) | BIT(17) | BIT(29) | BIT(30) | BIT(31);
	w.l7_ecx = BIT(8) | BIT(9) | BIT(10) | BIT(11);
	w.l71_eax = BIT(4) | BIT(5);
	w.xcr0 = XCR0_X87 | XCR0_SSE | XCR0_AVX | XCR0_AVX512;
	return w;
}

static const uint32_t avx512_set = PLAT_CPU_AVX512F | PLAT_CPU_AVX512BW | PLAT_CPU_AVX512DQ |
				   PLAT_CPU_AVX512VL | PLAT_CPU_AVX512VNNI |
				   PLAT_CPU_AVX512BF16 | PLAT_CPU_GFNI;
static const uint32_t avx_set = PLAT_CPU_AVX2 | PLAT_CPU_FMA | PLAT_CPU_F16C | PLAT_CPU_AVXVNNI |
				PLAT_CPU_VAES | PLAT_CPU_VPCLMUL;
static const uint32_t sse_set = PLAT_CPU_SSE42 | PLAT_CPU_RDRAND | PLAT_CPU_AES |
				PLAT_CPU_PCLMUL | PLAT_CPU_SHA;

TEST(cpuid_decodes_every_feature_with_its_state_enabled)
{
	struct cpuid_words w = zen4();

	CHECK_EQ_INT(cpuid_features(&w), avx512_set | avx_set | sse_set | PLAT_CPU_AMD);
}

TEST(cpuid_counts_a_feature_only_when_xcr0_enables_its_state)
{
	struct cpuid_words w = zen4();

	w.xcr0 = XCR0_X87 | XCR0_SSE | XCR0_AVX; /* AVX-512 state off (a hypervisor's choice) */
	CHECK_EQ_INT(cpuid_features(&w), avx_set | sse_set | PLAT_CPU_AMD);
	w.xcr0 = XCR0_X87 | XCR0_SSE | XCR0_AVX | (XCR0_AVX512 & ~BIT(6)); /* one of three */
	CHECK_EQ_INT(cpuid_features(&w), avx_set | sse_set | PLAT_CPU_AMD);
	w.xcr0 = XCR0_X87 | XCR0_SSE;
	CHECK_EQ_INT(cpuid_features(&w), sse_set | PLAT_CPU_AMD);
	/* without OSXSAVE no XCR0 is read at all, whatever the word says */
	w = zen4();
	w.l1_ecx &= ~BIT(27);
	CHECK_EQ_INT(cpuid_features(&w), sse_set | PLAT_CPU_AMD);
}

TEST(cpuid_needs_avx512f_for_the_rest_of_avx512)
{
	struct cpuid_words w = zen4();

	w.l7_ebx &= ~BIT(16);
	CHECK_EQ_INT(cpuid_features(&w), avx_set | sse_set | PLAT_CPU_AMD);
}

TEST(cpuid_vendor_amd_and_hygon_but_not_intel)
{
	struct cpuid_words w = zen4();

	w.l0_ebx = 0x756e6547u; /* "Genu" */
	w.l0_ecx = 0x6c65746eu; /* "ntel" */
	CHECK_EQ_INT(cpuid_features(&w) & PLAT_CPU_AMD, 0);
	w.l0_ebx = 0x6f677948u; /* "Hygo" */
	w.l0_ecx = 0x656e6975u; /* "uine" */
	CHECK_EQ_INT(cpuid_features(&w) & PLAT_CPU_AMD, PLAT_CPU_AMD);
	w = (struct cpuid_words){0};
	CHECK_EQ_INT(cpuid_features(&w), 0);
}

TEST(cpu_feature_text_names_in_one_order_and_fits_the_buffer)
{
	char buf[256], small[8];

	plat_cpu_feature_text(PLAT_CPU_AMD | PLAT_CPU_AVX2 | PLAT_CPU_SSE42, buf, sizeof buf);
	CHECK_STR(buf, " sse4.2 avx2 amd");
	plat_cpu_feature_text(0, buf, sizeof buf);
	CHECK_STR(buf, "");
	plat_cpu_feature_text(~0u, buf, sizeof buf);
	CHECK(strstr(buf, " neon dotprod fp16 rndr i8mm gfni amd") != NULL);
	plat_cpu_feature_text(~0u, small, sizeof small);
	CHECK_EQ_INT(strlen(small), sizeof small - 1);
}
