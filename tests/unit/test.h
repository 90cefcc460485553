/*
 * tests/unit/test.h — the host unit test runner's interface.
 *
 *   TEST(gguf_rejects_bad_magic) { ... CHECK(x == 1); CHECK_EQ_INT(a, b); ... }
 *
 * Each TEST registers itself (constructor); tests/unit/runner.c runs them all
 * (or those whose name contains argv[1]) and ends with the line
 * "N passed, N failed, N skipped". Two kinds of skip, kept apart:
 *   SKIP("why")                 the reference data it needs is absent
 *                               (testdata_dir() == NULL); a failure when
 *                               LLMK_REQUIRE_TESTDATA=1.
 *   SKIP_CPU("FEATURE", "why")  this CPU (or LLMK_CPU_MASK) lacks FEATURE; always
 *                               a skip, reported as "skip NAME: CPU lacks FEATURE".
 * A path the CPU has is never skipped.
 */
#ifndef TEST_H
#define TEST_H

#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

struct test_case {
	const char *name;
	const char *file;
	void (*fn)(void);
	struct test_case *next;
};
void test_register(struct test_case *t);

/* Per-test state, set by the runner. */
extern int test_failed_checks;
extern int test_skipped; /* 0, TEST_SKIP_DATA or TEST_SKIP_CPU */
extern char test_skip_reason[256];

#define TEST(name)                                                              \
	static void test_fn_##name(void);                                       \
	static struct test_case test_case_##name = {#name, __FILE__, test_fn_##name, 0}; \
	__attribute__((constructor)) static void test_reg_##name(void)          \
	{                                                                       \
		test_register(&test_case_##name);                               \
	}                                                                       \
	static void test_fn_##name(void)

#define CHECK(cond)                                                             \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			test_failed_checks++;                                   \
		}                                                               \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                      \
	do {                                                                    \
		long long va_ = (long long)(a), vb_ = (long long)(b);           \
		if (va_ != vb_) {                                               \
			fprintf(stderr, "  %s:%d: %s == %s failed: %lld != %lld\n", __FILE__, \
				__LINE__, #a, #b, va_, vb_);                    \
			test_failed_checks++;                                   \
		}                                                               \
	} while (0)

#define CHECK_NEAR(a, b, tol)                                                   \
	do {                                                                    \
		double va_ = (double)(a), vb_ = (double)(b);                    \
		if (!(fabs(va_ - vb_) <= (tol))) {                              \
			fprintf(stderr, "  %s:%d: |%s - %s| <= %g failed: %.9g vs %.9g\n", \
				__FILE__, __LINE__, #a, #b, (double)(tol), va_, vb_); \
			test_failed_checks++;                                   \
		}                                                               \
	} while (0)

#define CHECK_STR(a, b)                                                         \
	do {                                                                    \
		const char *va_ = (a), *vb_ = (b);                              \
		if (strcmp(va_, vb_) != 0) {                                    \
			fprintf(stderr, "  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
				__FILE__, __LINE__, #a, #b, va_, vb_);          \
			test_failed_checks++;                                   \
		}                                                               \
	} while (0)

enum { TEST_SKIP_DATA = 1, TEST_SKIP_CPU = 2 };

#define SKIP(...)                                                               \
	do {                                                                    \
		snprintf(test_skip_reason, sizeof test_skip_reason, __VA_ARGS__); \
		test_skipped = TEST_SKIP_DATA;                                  \
		return;                                                         \
	} while (0)

/* The CPU lacks a feature: never a failure, whatever LLMK_REQUIRE_TESTDATA says. */
#define SKIP_CPU(feature, ...)                                                  \
	do {                                                                    \
		int n_ = snprintf(test_skip_reason, sizeof test_skip_reason,    \
				  "CPU lacks %s: ", feature);                   \
		snprintf(test_skip_reason + n_, sizeof test_skip_reason - n_, __VA_ARGS__); \
		test_skipped = TEST_SKIP_CPU;                                   \
		return;                                                         \
	} while (0)

/* $LLMK_TESTDATA or ../shared/testdata; NULL if it does not exist. When
 * LLMK_REQUIRE_TESTDATA=1 a missing folder is a failure, not a skip (the
 * runner handles that: SKIP then counts as failed). */
const char *testdata_dir(void);
/* Read a whole file (malloc'd); NULL if missing. */
void *test_read_file(const char *path, size_t *len);
/* A fresh scratch directory for this run (build/host/tmp). */
const char *test_tmpdir(void);

#endif
