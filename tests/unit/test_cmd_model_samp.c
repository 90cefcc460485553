/*
 * tests/unit/test_cmd_model_samp.c — llama.cpp's sampler flags as a user of
 * build/host/llmctl types them (Mirostat 1, DRY, XTC, top-n-sigma, dynamic
 * temperature, --samplers): their `config` defaults, one error line for a
 * bad value, and runs on stories260K that a seed reproduces.
 */
#include "test.h"
#include "shell_fixture.h"
#include "../../llm/engine.h"
#include "../../shell/shell.h"

/* `config KEY` shows VALUE (the value column, between spaces). */
static bool shows(struct shell_fixture *s, const char *key, const char *value)
{
	char line[128], want[160];

	snprintf(line, sizeof line, "config %s", key);
	snprintf(want, sizeof want, " %s ", value);
	return strstr(fixture_run(s, line, NULL), want) != NULL;
}

TEST(cmd_sampler_keys_show_llama_cpps_defaults)
{
	struct shell_fixture s;

	fixture_open(&s, NULL, NULL);
	CHECK(shows(&s, "samplers", "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature"));
	CHECK(shows(&s, "dry-multiplier", "0"));
	CHECK(shows(&s, "dry-base", "1.75"));
	CHECK(shows(&s, "dry-allowed-length", "2"));
	CHECK(shows(&s, "dry-penalty-last-n", "-1"));
	CHECK(shows(&s, "xtc-probability", "0"));
	CHECK(shows(&s, "xtc-threshold", "0.1"));
	CHECK(shows(&s, "top-nsigma", "-1"));
	CHECK(shows(&s, "dynatemp-range", "0"));
	CHECK(shows(&s, "dynatemp-exp", "1"));
	CHECK(shows(&s, "mirostat", "0"));
	fixture_close(&s);
}

TEST(cmd_sampler_keys_take_llama_cpps_values_and_refuse_others)
{
	struct shell_fixture s;
	int st;

	fixture_open(&s, NULL, NULL);
	fixture_run(&s, "config samplers top_k;temp", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(shows(&s, "samplers", "top_k;temperature"));
	fixture_run(&s, "config samplers kt", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(shows(&s, "samplers", "top_k;temperature"));
	CHECK_STR(fixture_run(&s, "config samplers top_k;bogus", &st),
		  "error: samplers: unknown sampler 'bogus' (expected names separated by ';' from "
		  "penalties, dry, top_n_sigma, top_k, typ_p, top_p, min_p, xtc, temperature, or "
		  "their letters edskypmxt)\n");
	CHECK(st != 0);
	CHECK(shows(&s, "samplers", "top_k;temperature"));
	CHECK_STR(fixture_run(&s, "config samplers kkkkkkkkkkkkkkkkk", &st),
		  "error: samplers: more than 16 samplers in 'kkkkkkkkkkkkkkkkk'\n");
	fixture_run(&s, "config dry-penalty-last-n -1", &st);
	CHECK_EQ_INT(st, 0);
	fixture_run(&s, "config dry-penalty-last-n 256", &st);
	CHECK(shows(&s, "dry-penalty-last-n", "256"));
	CHECK_STR(fixture_run(&s, "config dry-penalty-last-n -2", &st),
		  "error: dry-penalty-last-n: -2 is out of range [-1, 16777216]\n");
	CHECK_STR(fixture_run(&s, "config dry-penalty-last-n x", &st),
		  "error: dry-penalty-last-n: bad number 'x'\n");
	CHECK_STR(fixture_run(&s, "config dry-base 0.5", &st),
		  "error: dry-base: 0.5 is out of range [1, 100]\n");
	CHECK_STR(fixture_run(&s, "config xtc-probability 2", &st),
		  "error: xtc-probability: 2 is out of range [0, 1]\n");
	fixture_run(&s, "config mirostat 1", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(shows(&s, "mirostat", "1"));
	/* a flag's error names the flag */
	CHECK_STR(fixture_run(&s, "infer \"x\" --samplers top_q", &st),
		  "error: --samplers: unknown sampler 'top_q' (expected names separated by ';' from "
		  "penalties, dry, top_n_sigma, top_k, typ_p, top_p, min_p, xtc, temperature, or "
		  "their letters edskypmxt)\n");
	fixture_close(&s);
}

TEST(cmd_sampler_flags_run_and_a_seed_reproduces_them)
{
	static const char *const runs[] = {
		"--mirostat 1 --mirostat-ent 3",
		"--dry-multiplier 0.8 --dry-allowed-length 1 --dry-penalty-last-n 64",
		"--xtc-probability 0.5 --xtc-threshold 0.05",
		"--top-nsigma 1 --top-k 0 --top-p 1 --min-p 0",
		"--dynatemp-range 0.5 --dynatemp-exp 2",
		"--samplers edskypmxt --dry-multiplier 1",
		"--samplers temperature;min_p --temp 1.5 --min-p 0.2",
	};
	char line[256], a[4096];
	struct shell_fixture s;
	int st;

	if (!fixture_open_stories(&s, "stories260K.gguf"))
		SKIP("no testdata (LLMK_TESTDATA)");
	fixture_run(&s, "load 0", &st);
	CHECK_EQ_INT(st, 0);
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		snprintf(line, sizeof line, "infer \"Once upon a time\" -n 40 --seed 7 --ids %s", runs[i]);
		snprintf(a, sizeof a, "%s", fixture_run(&s, line, &st));
		CHECK_EQ_INT(st, 0);
		CHECK(strstr(a, "error") == NULL);
		CHECK_STR(fixture_run(&s, line, &st), a);
	}
	fixture_close(&s);
}

TEST(cmd_greedy_with_dry_avoids_the_repeat_plain_greedy_makes)
{
	const char *plain_line = "infer \"Once upon a time\" -n 120 --temp 0";
	char plain[4096];
	const char *dry;
	struct shell_fixture s;
	int st;

	if (!fixture_open_stories(&s, "stories260K.gguf"))
		SKIP("no testdata (LLMK_TESTDATA)");
	fixture_run(&s, "load 0", &st);
	/* stories260K's greedy text says "to the park" twice; DRY at
	 * temperature 0 (an argmax after the chain, as llama.cpp) steers
	 * the second one off the repeat */
	snprintf(plain, sizeof plain, "%s", fixture_run(&s, plain_line, &st));
	CHECK_EQ_INT(st, 0);
	dry = fixture_run(&s, "infer \"Once upon a time\" -n 120 --temp 0 --dry-multiplier 0.8", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strcmp(plain, dry) != 0);
	CHECK(strstr(plain, "go to the park.") != NULL);
	CHECK(strstr(dry, "go to the park.") == NULL);
	fixture_close(&s);
}

TEST(cmd_load_marks_dry_breakers_from_the_vocabulary)
{
	struct shell_fixture s;
	struct engine *e;
	char piece[256];
	int st, marked = 0, nl = 0;

	if (!fixture_open_stories(&s, "stories260K.gguf"))
		SKIP("no testdata (LLMK_TESTDATA)");
	fixture_run(&s, "load 0", &st);
	CHECK_EQ_INT(st, 0);
	e = s.sh->engine;
	/* a token is a breaker iff its text holds \n : " or * (llama.cpp's
	 * default sequence breakers) */
	for (uint32_t id = 0; id < e->smp.n_vocab; id++) {
		int n = tok_piece(&e->tok, (int32_t)id, TOK_PIECE_SPECIAL, piece, sizeof piece);
		bool want = n > 0 && (memchr(piece, '\n', (size_t)n) || memchr(piece, ':', (size_t)n) ||
				      memchr(piece, '"', (size_t)n) || memchr(piece, '*', (size_t)n));
		bool got = e->smp.breaker[id >> 3] >> (id & 7) & 1;
		CHECK(want == got);
		marked += got;
		nl += got && n == 1 && piece[0] == '\n';
	}
	CHECK(marked > 0 && marked < (int)e->smp.n_vocab);
	CHECK_EQ_INT(nl, 1); /* the newline byte token */
	fixture_close(&s);
}
