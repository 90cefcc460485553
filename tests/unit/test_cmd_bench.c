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
	/* -d: the tests after that many tokens in the cache, labelled as
	 * llama-bench does; the depth counts against the context */
	out = simd_run(sh, &cap, "bench -p 8 -n 4 -d 24 -r 1 -t 1", &r);
	CHECK_EQ_INT(r, 0);
	CHECK(strstr(out, "| 1 | pp8 @ d24 | ") != NULL);
	CHECK(strstr(out, "| 1 | tg4 @ d24 | ") != NULL);
	{
		/* the depth's rows are written: zero rows 0..4 of layer 0 first */
		struct engine *e = sh->engine;
		float zero[4096] = {0}, k[4096];
		int any = 0;
		CHECK(e->kv.kv_dim <= 4096);
		for (uint32_t p = 0; p < 5; p++)
			kv_store(&e->kv, 0, p, zero, zero);
		out = simd_run(sh, &cap, "bench -p 0 -n 2 -d 5 -r 1 --json", &r);
		CHECK_EQ_INT(r, 0);
		CHECK(strstr(out, "\"depth\": 5}") != NULL);
		for (uint32_t p = 0; p < 5; p++) {
			kv_load_k(&e->kv, 0, p, k);
			for (uint32_t i = 0; i < e->kv.kv_dim; i++)
				any += k[i] != 0.0f;
		}
		CHECK(any > 0);
	}
	out = simd_run(sh, &cap, "load 0", &r); /* (the context, from the model) */
	CHECK_EQ_INT(r, 0);
	{
		char line[64];
		snprintf(line, sizeof line, "bench -p 2 -n 0 -d %u", ((struct engine *)sh->engine)->n_ctx - 1);
		out = simd_run(sh, &cap, line, &r);
		CHECK_EQ_INT(r, -LLMK_ERANGE);
		CHECK(strstr(out, "exceeds the context") != NULL);
		snprintf(line, sizeof line, "bench -p 1 -n 0 -d %u -r 1", ((struct engine *)sh->engine)->n_ctx - 1);
		out = simd_run(sh, &cap, line, &r);
		CHECK_EQ_INT(r, 0);
	}
	out = simd_run(sh, &cap, "bench -p 0 -n 2 -d 4 --batch 2", &r);
	CHECK_EQ_INT(r, -LLMK_EINVAL);
	host_set_output(NULL, NULL);
	if (sh->engine) {
		engine_unload(sh->engine);
		plat_free(sh->engine, sizeof(struct engine));
	}
	host_remove_disks();
	free(sh);
}
