/* tests/unit/test_cmd_bench.c — shell/cmd_bench.c: `selftest` and `bench`
 * through the shell, as a user runs them (stories260K as disk 0). */
#include "test.h"

#include <stdlib.h>

#include "../../llm/engine.h"
#include "../../shell/shell.h"
#include "../../tools/host/host.h"

struct simd_capture {
	char buf[16384];
	size_t len;
};

static void simd_capture_fn(void *ctx, const char *s, size_t n)
{
	struct simd_capture *c = ctx;

	if (c->len + n < sizeof c->buf) {
		memcpy(c->buf + c->len, s, n);
		c->len += n;
		c->buf[c->len] = 0;
	}
}

static const char *simd_run(struct shell *sh, struct simd_capture *c, const char *line, int *r)
{
	c->len = 0;
	c->buf[0] = 0;
	*r = shell_exec_line(sh, line);
	return c->buf;
}

/* selftest passes; bench refuses without a model, then prints its table. */
TEST(simd_bench_and_selftest_commands)
{
	static struct simd_capture cap;
	const char *dir = testdata_dir(), *out;
	char path[4096];
	struct shell *sh;
	int r;

	if (!dir)
		SKIP("no testdata");
	snprintf(path, sizeof path, "%s/stories260K/stories260K.gguf", dir);
	host_remove_disks();
	CHECK_EQ_INT(host_add_disk(path), 0);
	host_set_config(NULL);
	sh = calloc(1, sizeof *sh);
	shell_init(sh, false);
	host_set_output(simd_capture_fn, &cap);
	out = simd_run(sh, &cap, "selftest", &r);
	CHECK_EQ_INT(r, 0);
	CHECK(strstr(out, "checks passed on") != NULL);
	out = simd_run(sh, &cap, "bench -n 4", &r);
	CHECK_EQ_INT(r, -LLMK_EINVAL);
	CHECK(strncmp(out, "error: bench: no model loaded", 29) == 0);
	simd_run(sh, &cap, "load 0", &r);
	CHECK_EQ_INT(r, 0);
	out = simd_run(sh, &cap, "bench -p 8 -n 4 -r 2 -t 1", &r);
	CHECK_EQ_INT(r, 0);
	CHECK(strstr(out, "| 1 | pp8 | ") != NULL);
	CHECK(strstr(out, "| 1 | tg4 | ") != NULL);
	CHECK(strstr(out, "% of the bandwidth limit") != NULL);
	/* the probe runs before each repetition; the fraction is theirs */
	CHECK(strstr(out, "median of the probes before each repetition") != NULL);
	CHECK(strstr(out, "(median of the repetitions; ") != NULL);
	out = simd_run(sh, &cap, "bench -p 4 -n 0 -r 1 --json", &r);
	CHECK_EQ_INT(r, 0);
	CHECK(strstr(out, "\"pp\": 4, \"pp_ts\": ") != NULL);
	out = simd_run(sh, &cap, "bench -p 99999", &r);
	CHECK_EQ_INT(r, -LLMK_ERANGE);
	host_set_output(NULL, NULL);
	if (sh->engine) {
		engine_unload(sh->engine);
		plat_free(sh->engine, sizeof(struct engine));
	}
	host_remove_disks();
	free(sh);
}
