/* tests/unit/test_simd.c — every SIMD row against the scalar row (the checks
 * of llm/selftest.c), and proof that those checks catch a wrong row. */
#include "test.h"

#include "../../llm/selftest.h"

TEST(simd_rows_match_scalar)
{
	struct selftest_report r;
	uint32_t simd = 0;

	CHECK_EQ_INT(selftest_quant(&r, quant_cpu(), 1, true), 0);
	CHECK(r.checks > 1000);
	CHECK_EQ_INT(r.failures, 0);
	for (uint32_t i = 0; i < r.n_types; i++) {
		simd += strcmp(r.types[i].impl, "scalar") != 0;
		fprintf(stderr, "  %-6s %-12s %4u checks, worst err/bound %.3f\n",
			quant_name(r.types[i].type), r.types[i].impl, r.types[i].checks,
			(double)r.types[i].worst);
	}
#if defined(__x86_64__) || defined(__aarch64__)
	/* every weight type and the act types Q8_1, Q8_K have SIMD rows here */
	if (plat_cpu_features() & (PLAT_CPU_AVX2 | PLAT_CPU_NEON)) {
		CHECK_EQ_INT(simd, r.n_types);
		CHECK(simd >= 17);
	}
#endif
}

static float off_by_a_little(size_t n, const void *w, const void *act)
{
	return quant_scalar(GGML_TYPE_Q4_K)->vec_dot(n, w, act) * 1.001f + 1e-3f;
}

static void wrong_q8_0(const float *src, void *dst, size_t n)
{
	quant_scalar(GGML_TYPE_Q8_0)->from_float(src, dst, n);
	((uint8_t *)dst)[2] ^= 1; /* first quant of the first block */
}

/* A table with two wrong rows (a test may build and change its own; the
 * CPU's table never changes). */
TEST(simd_selftest_catches_wrong_rows)
{
	struct selftest_report r;
	static struct quant_table bad;

	quant_table_init(&bad, 0);
	bad.type[GGML_TYPE_Q4_K].row.vec_dot = off_by_a_little;
	bad.type[GGML_TYPE_Q4_K].row.impl = "broken";
	bad.type[GGML_TYPE_Q8_0].row.from_float = wrong_q8_0;
	bad.type[GGML_TYPE_Q8_0].row.impl = "broken";
	CHECK_EQ_INT(selftest_quant(&r, &bad, 2, false), -LLMK_EFORMAT);
	for (uint32_t i = 0; i < r.n_types; i++) {
		uint32_t t = r.types[i].type;
		bool broken = t == GGML_TYPE_Q4_K || t == GGML_TYPE_Q8_0;
		CHECK(broken ? r.types[i].failures > 0 : r.types[i].failures == 0);
	}
}
