/* tests/unit/test_cmd_bench.c — shell/cmd_bench.c: `selftest` and `bench`
 * through the shell, as a user runs them (stories260K as disk 0). */
#include "test.h"
#include "shell_fixture.h"

#include "../../llm/engine.h"
#include "../../shell/shell.h"

/* selftest passes; bench refuses without a model, then prints its table. */
TEST(simd_bench_and_selftest_commands)
{
	struct shell_fixture f;
	struct shell *sh;
	const char *out;
	int r;

	if (!fixture_open_stories(&f, "stories260K.gguf"))
		SKIP("no testdata");
	sh = f.sh;
	out = fixture_run(&f, "selftest", &r);
	CHECK_EQ_INT(r, 0);
	CHECK(strstr(out, "checks passed on") != NULL);
	out = fixture_run(&f, "bench -n 4", &r);
	CHECK_EQ_INT(r, -LLMK_EINVAL);
	CHECK(strncmp(out, "error: bench: no model loaded", 29) == 0);
	fixture_run(&f, "load 0", &r);
	CHECK_EQ_INT(r, 0);
	out = fixture_run(&f, "bench -p 8 -n 4 -r 2 -t 1", &r);
	CHECK_EQ_INT(r, 0);
	CHECK(strstr(out, "| 1 | pp8 | ") != NULL);
	CHECK(strstr(out, "| 1 | tg4 | ") != NULL);
	CHECK(strstr(out, "% of the bandwidth limit") != NULL);
	/* the probe runs before each repetition; the fraction is theirs */
	CHECK(strstr(out, "median of the probes before each repetition") != NULL);
	CHECK(strstr(out, "(median of the repetitions; ") != NULL);
	out = fixture_run(&f, "bench -p 4 -n 0 -r 1 --json", &r);
	CHECK_EQ_INT(r, 0);
	CHECK(strstr(out, "\"pp\": 4, \"pp_ts\": ") != NULL);
	out = fixture_run(&f, "bench -p 99999", &r);
	CHECK_EQ_INT(r, -LLMK_ERANGE);
	/* -d: the tests after that many tokens in the cache, labelled as
	 * llama-bench does; the depth counts against the context */
	out = fixture_run(&f, "bench -p 8 -n 4 -d 24 -r 1 -t 1", &r);
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
		out = fixture_run(&f, "bench -p 0 -n 2 -d 5 -r 1 --json", &r);
		CHECK_EQ_INT(r, 0);
		CHECK(strstr(out, "\"depth\": 5}") != NULL);
		for (uint32_t p = 0; p < 5; p++) {
			kv_load_k(&e->kv, 0, p, k);
			for (uint32_t i = 0; i < e->kv.kv_dim; i++)
				any += k[i] != 0.0f;
		}
		CHECK(any > 0);
	}
	out = fixture_run(&f, "load 0", &r); /* (the context, from the model) */
	CHECK_EQ_INT(r, 0);
	{
		char line[64];
		snprintf(line, sizeof line, "bench -p 2 -n 0 -d %u", ((struct engine *)sh->engine)->n_ctx - 1);
		out = fixture_run(&f, line, &r);
		CHECK_EQ_INT(r, -LLMK_ERANGE);
		CHECK(strstr(out, "exceeds the context") != NULL);
		snprintf(line, sizeof line, "bench -p 1 -n 0 -d %u -r 1", ((struct engine *)sh->engine)->n_ctx - 1);
		out = fixture_run(&f, line, &r);
		CHECK_EQ_INT(r, 0);
	}
	out = fixture_run(&f, "bench -p 0 -n 2 -d 4 --batch 2", &r);
	CHECK_EQ_INT(r, -LLMK_EINVAL);
	fixture_close(&f);
}
