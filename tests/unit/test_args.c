/* tests/unit/test_args.c — shell/args.c: words, quotes, escapes, errors. */
#include "test.h"
#include "../../shell/shell.h"

struct split {
	char out[256];
	char *argv[9];
	char err[160];
	int argc;
};

static struct split *split(const char *line)
{
	static struct split s;
	memset(&s, 0, sizeof s);
	s.argc = shell_split(line, s.out, sizeof s.out, s.argv, 8, s.err, sizeof s.err);
	return &s;
}

TEST(args_split_separates_words_at_blanks)
{
	struct split *s = split("  disks \t hash   1  ");
	CHECK_EQ_INT(s->argc, 3);
	CHECK_STR(s->argv[0], "disks");
	CHECK_STR(s->argv[1], "hash");
	CHECK_STR(s->argv[2], "1");
	CHECK(s->argv[3] == NULL);
	CHECK_EQ_INT(split("")->argc, 0);
	CHECK_EQ_INT(split("   \t ")->argc, 0);
}

TEST(args_split_reads_quotes_and_escapes)
{
	struct split *s = split("infer \"Once upon\\na time, \\\"she\\\" said\\t\\\\ \\x41\\x7e\" -n 5");
	CHECK_EQ_INT(s->argc, 4);
	CHECK_STR(s->argv[1], "Once upon\na time, \"she\" said\t\\ A~");
	CHECK_STR(s->argv[2], "-n");
	CHECK_STR(s->argv[3], "5");

	s = split("a\"b c\"d \"\" \"\\r\"");
	CHECK_EQ_INT(s->argc, 3);
	CHECK_STR(s->argv[0], "ab cd");
	CHECK_STR(s->argv[1], "");
	CHECK_STR(s->argv[2], "\r");

	/* Outside quotes a backslash is just a byte. */
	s = split("path C:\\dir\\n");
	CHECK_EQ_INT(s->argc, 2);
	CHECK_STR(s->argv[1], "C:\\dir\\n");

	/* UTF-8 and high bytes pass through; \xHH may make any non-NUL byte. */
	s = split("\"h\xc3\xa9\\xff\"");
	CHECK_EQ_INT(s->argc, 1);
	CHECK_STR(s->argv[0], "h\xc3\xa9\xff");
}

TEST(args_split_names_the_column_of_a_bad_quote_or_escape)
{
	struct split *s = split("infer \"never closed");
	CHECK_EQ_INT(s->argc, -LLMK_EINVAL);
	CHECK_STR(s->err, "unterminated quote (opened at column 7)");

	s = split("x \"bad \\q\"");
	CHECK_EQ_INT(s->argc, -LLMK_EINVAL);
	CHECK(strstr(s->err, "bad escape '\\q' at column 8") != NULL);

	s = split("\"\\x4\"");
	CHECK_EQ_INT(s->argc, -LLMK_EINVAL);
	CHECK(strstr(s->err, "two hex digits") != NULL);

	s = split("\"\\xg1\"");
	CHECK_EQ_INT(s->argc, -LLMK_EINVAL);

	s = split("\"\\x00\"");
	CHECK_EQ_INT(s->argc, -LLMK_EINVAL);
	CHECK(strstr(s->err, "NUL") != NULL);

	s = split("\"abc\\");
	CHECK_EQ_INT(s->argc, -LLMK_EINVAL);
	CHECK(strstr(s->err, "backslash at end of line") != NULL);

	s = split("1 2 3 4 5 6 7 8");
	CHECK_EQ_INT(s->argc, 8);
	s = split("1 2 3 4 5 6 7 8 9");
	CHECK_EQ_INT(s->argc, -LLMK_EINVAL);
	CHECK_STR(s->err, "too many words (at most 8)");
}

TEST(args_output_buffer_bound)
{
	char out[8], err[128];
	char *argv[4];
	CHECK_EQ_INT(shell_split("abc de", out, sizeof out, argv, 3, err, sizeof err), 2);
	CHECK_STR(argv[1], "de");
	CHECK_EQ_INT(shell_split("abc def", out, sizeof out, argv, 3, err, sizeof err), 2);
	CHECK_EQ_INT(shell_split("abc defg", out, sizeof out, argv, 3, err, sizeof err),
		     -LLMK_EINVAL);
	CHECK_EQ_INT(shell_split("\"abcdefgh\"", out, sizeof out, argv, 3, err, sizeof err),
		     -LLMK_EINVAL);
}

TEST(args_parse_integers_with_suffixes_and_floats_and_refuse_the_rest)
{
	uint64_t u = 0;
	int64_t i = 0;
	double f = 0;

	CHECK_EQ_INT(shell_parse_u64("0", &u), 0);
	CHECK_EQ_INT(u, 0);
	CHECK_EQ_INT(shell_parse_u64("4096", &u), 0);
	CHECK_EQ_INT(u, 4096);
	CHECK_EQ_INT(shell_parse_u64("0x1F", &u), 0);
	CHECK_EQ_INT(u, 31);
	CHECK_EQ_INT(shell_parse_u64("4K", &u), 0);
	CHECK_EQ_INT(u, 4096);
	CHECK_EQ_INT(shell_parse_u64("5GiB", &u), 0);
	CHECK(u == 5ull << 30);
	CHECK_EQ_INT(shell_parse_u64("18446744073709551615", &u), 0);
	CHECK(u == UINT64_MAX);
	CHECK_EQ_INT(shell_parse_u64("18446744073709551616", &u), -LLMK_ERANGE);
	CHECK_EQ_INT(shell_parse_u64("16777216T", &u), -LLMK_ERANGE);
	CHECK_EQ_INT(shell_parse_u64("", &u), -LLMK_EINVAL);
	CHECK_EQ_INT(shell_parse_u64("0x", &u), -LLMK_EINVAL);
	CHECK_EQ_INT(shell_parse_u64("12a", &u), -LLMK_EINVAL);
	CHECK_EQ_INT(shell_parse_u64("-1", &u), -LLMK_EINVAL);
	CHECK_EQ_INT(shell_parse_u64("4Ki", &u), -LLMK_EINVAL);

	CHECK_EQ_INT(shell_parse_i64("-42", &i), 0);
	CHECK_EQ_INT(i, -42);
	CHECK_EQ_INT(shell_parse_i64("-9223372036854775808", &i), 0);
	CHECK(i == INT64_MIN);
	CHECK_EQ_INT(shell_parse_i64("9223372036854775808", &i), -LLMK_ERANGE);

	CHECK_EQ_INT(shell_parse_f64("0.95", &f), 0);
	CHECK_NEAR(f, 0.95, 1e-15);
	CHECK_EQ_INT(shell_parse_f64("-2.5e-3", &f), 0);
	CHECK_NEAR(f, -0.0025, 1e-17);
	CHECK_EQ_INT(shell_parse_f64(".5", &f), 0);
	CHECK_NEAR(f, 0.5, 0);
	CHECK_EQ_INT(shell_parse_f64("1E2", &f), 0);
	CHECK_NEAR(f, 100, 0);
	CHECK_EQ_INT(shell_parse_f64("e5", &f), -LLMK_EINVAL);
	CHECK_EQ_INT(shell_parse_f64("1e", &f), -LLMK_EINVAL);
	CHECK_EQ_INT(shell_parse_f64("1.2.3", &f), -LLMK_EINVAL);
	CHECK_EQ_INT(shell_parse_f64("", &f), -LLMK_EINVAL);
	CHECK_EQ_INT(shell_parse_f64("1e999", &f), -LLMK_ERANGE);
}
