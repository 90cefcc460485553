/* tests/unit/runner.c — runs every TEST() linked in; see test.h. */
#include "test.h"

#include <stdlib.h>
#include <sys/stat.h>

int test_failed_checks;
int test_skipped;
char test_skip_reason[256];

static struct test_case *tests_head;
static struct test_case **tests_tail = &tests_head;

void test_register(struct test_case *t)
{
	/* Constructors run in link order; keep registration order. */
	*tests_tail = t;
	tests_tail = &t->next;
}

const char *testdata_dir(void)
{
	static char path[4096];
	const char *d = getenv("LLMK_TESTDATA");
	struct stat st;

	if (!d || !*d)
		d = "../shared/testdata";
	snprintf(path, sizeof path, "%s", d);
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return NULL;
	return path;
}

void *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		if (len)
			*len = (size_t)n;
	}
	return buf;
}

const char *test_tmpdir(void)
{
	static const char *dir = "build/host/tmp";
	mkdir("build", 0755);
	mkdir("build/host", 0755);
	mkdir(dir, 0755);
	return dir;
}

int main(int argc, char **argv)
{
	const char *req = getenv("LLMK_REQUIRE_TESTDATA");
	int require = req && req[0] == '1';
	int passed = 0, failed = 0, skipped = 0;

	for (struct test_case *t = tests_head; t; t = t->next) {
		/* arguments: run the tests whose name holds any of them */
		int hit = argc == 1;
		for (int i = 1; i < argc && !hit; i++)
			hit = strstr(t->name, argv[i]) != NULL;
		if (!hit)
			continue;
		test_failed_checks = 0;
		test_skipped = 0;
		test_skip_reason[0] = 0;
		t->fn();
		if (test_failed_checks) {
			printf("FAIL %s (%s)\n", t->name, t->file);
			failed++;
		} else if (test_skipped == TEST_SKIP_DATA && require) {
			printf("FAIL %s: skipped but LLMK_REQUIRE_TESTDATA=1: %s\n", t->name,
			       test_skip_reason);
			failed++;
		} else if (test_skipped) {
			printf("skip %s: %s\n", t->name, test_skip_reason);
			skipped++;
		} else {
			printf("ok   %s\n", t->name);
			passed++;
		}
		fflush(stdout);
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
