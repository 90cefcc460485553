/* tests/unit/test_fmt.c — kernel/fmt.c against the C library's printf. */
#include "test.h"
#include "../../kernel/platform.h"

#define SAME(...)                                                               \
	do {                                                                    \
		char a_[256], b_[256];                                          \
		int na_ = plat_snprintf(a_, sizeof a_, __VA_ARGS__);            \
		int nb_ = snprintf(b_, sizeof b_, __VA_ARGS__);                 \
		CHECK_STR(a_, b_);                                              \
		CHECK_EQ_INT(na_, nb_);                                         \
	} while (0)

TEST(fmt_prints_integers_and_strings_as_libc_does)
{
	SAME("%d|%i|%u|%x|%X|%o", -42, 7, 4000000000u, 0xbeef, 0xBEEF, 8);
	SAME("[%5d][%-5d][%05d][%+d][% d]", 42, 42, -42, 5, 5);
	SAME("%lld %llu %zu %ld", -9223372036854775807LL - 1, 18446744073709551615ULL,
	     (size_t)123456789, -1L);
	SAME("%#x %#X %.3d %.0d|", 255, 255, 7, 0);
	SAME("%hhu %hd", 300, 70000);
	SAME("%s|%10s|%-10s|%.2s|%c|%%", "abc", "right", "left", "trunc", 'z');
	SAME("%*d|%-*d|%.*s", 6, 1, 6, 2, 3, "abcdef");
}

TEST(fmt_prints_floats_as_libc_does)
{
	SAME("%f %f %f %f", 0.0, 1.5, -2.25, 1234567.891);
	SAME("%.2f %.0f %.3f %8.2f %-8.2f|", 3.14159, 2.5, 0.0005, 3.14159, 3.14159);
	SAME("%e %.3e %E", 12345.678, 0.00012345, 1e-300);
	SAME("%g %g %g %g %g", 0.0001, 123456.0, 1234567.0, 1e-5, 100.0);
	SAME("%.3g %.10g %g", 3.14159, 1.0 / 3.0, 0.5);
	SAME("%f %f %f", 1.0 / 0.0, -1.0 / 0.0, 123.456e10);
	SAME("%.1f %.1f %.1f", 0.25, 0.35, 9.95);
}

TEST(fmt_truncates)
{
	char buf[8];
	int n = plat_snprintf(buf, sizeof buf, "%s", "0123456789");
	CHECK_EQ_INT(n, 10);
	CHECK_STR(buf, "0123456");
	CHECK_STR(plat_strerror(-LLMK_EAUTH), "authentication failed");
	CHECK_STR(plat_strerror(999), "unknown error");
	CHECK(strstr(plat_strerror(-LLMK_ESHORT), "truncated") != NULL);
}
