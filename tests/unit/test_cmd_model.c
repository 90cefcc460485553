/*
 * tests/unit/test_cmd_model.c — the model commands end to end, as a user of
 * build/host/llmctl sees them: `load 0` + `infer ... --temp 0 --ids` on
 * stories260K reproduces every reference continuation (F32 and F16), stop
 * strings, seeds, chat with cache reuse, Ctrl-C, and one error line each
 * for the documented mistakes.
 */
#include "test.h"
#include "shell_fixture.h"
#include "../../llm/engine.h"
#include "../../shell/shell.h"
#include "../../tools/host/host.h"

#include <stdlib.h>

/* "key": value of the reference line; NULL if absent. */
static const char *after(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof pat, "\"%s\": ", key);
	p = strstr(line, pat);
	return p ? p + strlen(pat) : NULL;
}

/* The reference's "tokens" as "ids: a b c" (first n, all if n < 0). */
static void ref_ids(const char *line, int n, char *out, size_t cap)
{
	const char *p = after(line, "tokens");
	size_t len = (size_t)snprintf(out, cap, "ids:");

	CHECK(p && *p == '[');
	for (p++; p && *p != ']' && n != 0; n--) {
		char *e;
		long v = strtol(p, &e, 10);
		len += (size_t)snprintf(out + len, cap - len, " %ld", v);
		p = e;
		while (*p == ',' || *p == ' ')
			p++;
	}
}

static void check_refs(const char *gguf, const char *refs, const char *flags)
{
	char path[4096], want[2048], cmd[512], *text;
	struct shell_fixture s;
	int cases = 0, st;

	if (!fixture_open_stories(&s, gguf))
		SKIP("no testdata (LLMK_TESTDATA)");
	fixture_stories(path, sizeof path, refs);
	text = test_read_file(path, NULL);
	CHECK(text != NULL);
	fixture_run(&s, "config threads 1", &st);
	CHECK_EQ_INT(st, 0);
	fixture_run(&s, "load 0", &st);
	CHECK_EQ_INT(st, 0);
	for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		const char *pr = after(line, "prompt");
		const char *q = pr ? strchr(pr + 1, '"') : NULL;
		CHECK(pr && q);
		if (!pr || !q)
			break;
		snprintf(cmd, sizeof cmd, "infer %.*s -n 64 --temp 0 --ids%s", (int)(q - pr + 1), pr,
			 flags);
		ref_ids(line, -1, want, sizeof want);
		const char *out = fixture_run(&s, cmd, &st);
		CHECK_EQ_INT(st, 0);
		const char *ids = strstr(out, "\nids:");
		CHECK(ids != NULL);
		if (ids) {
			char got[2048];
			snprintf(got, sizeof got, "%s", ids + 1);
			got[strcspn(got, "\n")] = 0;
			CHECK_STR(got, want);
		}
		cases++;
	}
	CHECK_EQ_INT(cases, 6);
	free(text);
	fixture_close(&s);
}

TEST(cmd_infer_reproduces_stories260K_f32)
{
	check_refs("stories260K.gguf", "refs-F32.jsonl", "");
}

TEST(cmd_infer_reproduces_stories260K_f16)
{
	check_refs("stories260K-F16.gguf", "refs-F16.jsonl", "");
}

/* Prompt lookup's drafts checked in batched passes: the same tokens. */
TEST(cmd_infer_reproduces_stories260K_with_lookup)
{
	check_refs("stories260K.gguf", "refs-F32.jsonl", " --lookup 16");
	check_refs("stories260K-F16.gguf", "refs-F16.jsonl", " --lookup 4");
}

/* The brief's command line: load 0 then 20 greedy tokens with --ids. */
TEST(cmd_infer_first_20_ids_and_text)
{
	char path[4096], want[512], *text;
	struct shell_fixture s;
	const char *out;
	int st;

	if (!fixture_open_stories(&s, "stories260K.gguf"))
		SKIP("no testdata (LLMK_TESTDATA)");
	fixture_stories(path, sizeof path, "refs-F32.jsonl");
	text = test_read_file(path, NULL);
	ref_ids(text, 20, want, sizeof want);
	fixture_run(&s, "load 0", &st);
	out = fixture_run(&s, "infer \"Once upon a time\" -n 20 --temp 0 --ids", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, want) != NULL);
	CHECK(strncmp(out, ", there was a little girl named Lily.", 37) == 0);
	out = fixture_run(&s, "stats", &st);
	CHECK(strstr(out, "20 tokens") != NULL && strstr(out, "tok/s") != NULL);
	out = fixture_run(&s, "info", &st);
	CHECK(strstr(out, "llama") && strstr(out, "context        128"));
	/* no mem-budget: the plan's bound is the free memory, and info says so */
	CHECK(strstr(out, "(the free memory; no mem-budget)") != NULL);
	CHECK(strstr(out, "\n  measured       SHA-256 as loaded (held in memory)\n") != NULL);
	/* streamed, the same ids, and info names the checks */
	fixture_run(&s, "load --stream 0", &st);
	CHECK_EQ_INT(st, 0);
	out = fixture_run(&s, "infer \"Once upon a time\" -n 20 --temp 0 --ids", &st);
	CHECK(st == 0 && strstr(out, want) != NULL);
	out = fixture_run(&s, "info", &st);
	CHECK(strstr(out, "\n  measured       SHA-256 as loaded; every read checked against it: ") !=
	      NULL);
	CHECK(strstr(out, " blocks of 4 KiB, ghash_") != NULL);
	/* streamed, prompt lookup drafts by default, and stats count them */
	out = fixture_run(&s, "stats", &st);
	CHECK(strstr(out, "\n  lookup      ") != NULL &&
	      strstr(out, " drafted tokens taken: 20 tokens from ") != NULL &&
	      strstr(out, " passes (up to 8 drafted a pass)\n") != NULL);
	fixture_run(&s, "infer \"Once upon a time\" -n 20 --temp 0 --lookup 0", &st);
	out = fixture_run(&s, "stats", &st);
	CHECK(st == 0 && strstr(out, "lookup") == NULL);
	free(text);
	fixture_close(&s);
}

/* stories260K.gguf as disk 0 and `load 0` run (the test's checks fail if
 * it did not load); false without test data. */
static bool open_loaded(struct shell_fixture *s)
{
	if (!fixture_open_stories(s, "stories260K.gguf"))
		return false;
	fixture_run(s, "load 0", NULL);
	return true;
}

TEST(cmd_infer_stop_string_trims_output)
{
	struct shell_fixture s;
	const char *out;
	int st;

	if (!open_loaded(&s))
		SKIP("no testdata (LLMK_TESTDATA)");
	out = fixture_run(&s, "infer \"Once upon a time\" -n 64 --temp 0 --stop Lily --stop zzz", &st);
	CHECK_EQ_INT(st, 0);
	CHECK_STR(out, ", there was a little girl named \n");
	CHECK_STR(s.sh->engine->run.stop, "stop");
	/* a stop string that starts matching but never completes: the text held
	 * back while it might have is printed in the end, nothing lost */
	char full[4096];
	snprintf(full, sizeof full, "%s", fixture_run(&s, "infer \"Once upon a time\" -n 20 --temp 0", &st));
	out = fixture_run(&s, "infer \"Once upon a time\" -n 20 --temp 0 --stop \"Lily. She z\" --stop outsidx", &st);
	CHECK_STR(out, full);
	CHECK_STR(s.sh->engine->run.stop, "limit");
	fixture_close(&s);
}

TEST(cmd_infer_seed_reproduces_sampling)
{
	struct shell_fixture s;
	char a[4096], b[4096], c[4096];
	int st;

	if (!open_loaded(&s))
		SKIP("no testdata (LLMK_TESTDATA)");
	snprintf(a, sizeof a, "%s", fixture_run(&s, "infer \"The cat\" -n 40 --temp 1.2 --top-k 0 --top-p 1 --min-p 0 --seed 7 --ids", &st));
	CHECK_EQ_INT(st, 0);
	snprintf(b, sizeof b, "%s", fixture_run(&s, "infer \"The cat\" -n 40 --temp 1.2 --top-k 0 --top-p 1 --min-p 0 --seed 7 --ids", &st));
	snprintf(c, sizeof c, "%s", fixture_run(&s, "infer \"The cat\" -n 40 --temp 1.2 --top-k 0 --top-p 1 --min-p 0 --seed 8 --ids", &st));
	CHECK_STR(a, b);
	CHECK(strcmp(a, c) != 0);
	/* the second run found the prompt in the cache */
	CHECK(s.sh->engine->run.n_reused > 0);
	fixture_close(&s);
}

TEST(cmd_chat_reuses_earlier_turns)
{
	struct shell_fixture s;
	struct engine *e;
	const char *out;
	int st;

	if (!open_loaded(&s))
		SKIP("no testdata (LLMK_TESTDATA)");
	out = fixture_run(&s, "chat \"Once upon a time\" -n 8 --temp 0", &st);
	CHECK_EQ_INT(st, 0);
	e = s.sh->engine;
	CHECK_EQ_INT(e->n_msgs, 2);
	CHECK_EQ_INT(e->run.n_reused, 0);
	out = fixture_run(&s, "chat \"Lily\" -n 8 --temp 0", &st);
	CHECK_EQ_INT(st, 0);
	CHECK_EQ_INT(e->n_msgs, 4);
	CHECK(e->run.n_reused > 5);
	CHECK(e->run.n_prompt < e->run.n_reused);
	out = fixture_run(&s, "chat \"more\" --system \"late\"", &st);
	CHECK_EQ_INT(st, -LLMK_EINVAL);
	CHECK(strstr(out, "must come first") != NULL);
	out = fixture_run(&s, "chat --reset", &st);
	CHECK(strstr(out, "cleared") != NULL);
	CHECK_EQ_INT(e->n_msgs, 0);
	fixture_run(&s, "chat \"Tim\" --system \"You tell stories.\" -n 4 --temp 0", &st);
	CHECK_EQ_INT(st, 0);
	CHECK_EQ_INT(e->n_msgs, 3);
	CHECK_STR(e->msgs[0].role, "system");
	CHECK_STR(e->msgs[0].content, "You tell stories.");
	fixture_run(&s, "chat --reset", &st);
	/* everything load took comes back */
	CHECK(e->mem.used > 0);
	fixture_run(&s, "unload", &st);
	CHECK_EQ_INT(st, 0);
	CHECK_EQ_INT(e->mem.used, 0);
	fixture_run(&s, "config mem-budget 2M", &st);
	fixture_run(&s, "load 0", &st);
	CHECK(st < 0);
	CHECK_EQ_INT(e->mem.used, 0);
	fixture_close(&s);
}

TEST(cmd_ctrl_c_stops_generation)
{
	struct shell_fixture s;
	const char *out;
	int st;

	if (!open_loaded(&s))
		SKIP("no testdata (LLMK_TESTDATA)");
	host_set_input("\x03", 1);
	out = fixture_run(&s, "infer \"Once upon a time\" -n 64 --temp 0", &st);
	host_set_input(NULL, 0);
	CHECK_EQ_INT(st, -LLMK_ECANCEL);
	CHECK_EQ_INT(fixture_count(out, "error: "), 1);
	CHECK(strstr(out, "cancel") != NULL);
	fixture_close(&s);
}

/* Issue 28 defect 9: a prompt of exactly n_ctx tokens was "longer than the
 * context". It fills it: refused for leaving no room to generate, and said
 * so; one token fewer runs. */
TEST(cmd_infer_prompt_that_fills_the_context_says_so)
{
	static char p[4096], line[4200];
	struct shell_fixture s;
	const char *out;
	size_t n = 0, got = 0;
	int32_t ids[300];
	int st;

	if (!fixture_open_stories(&s, "stories260K.gguf"))
		SKIP("no testdata (stories260K)");
	fixture_run(&s, "load 0", &st);
	CHECK_EQ_INT(st, 0);
	uint32_t ctx = s.sh->engine->n_ctx;
	/* words until the prompt is the context's length, BOS included */
	while (got < ctx && n + 8 < sizeof p) {
		n += (size_t)snprintf(p + n, sizeof p - n, "%sa", n ? " " : "");
		CHECK_EQ_INT(tok_encode(&s.sh->engine->tok, p, n, true, false, ids, 300, &got), 0);
	}
	CHECK_EQ_INT(got, ctx);
	snprintf(line, sizeof line, "infer \"%s\" -n 1 --no-parse-special", p);
	out = fixture_run(&s, line, &st);
	CHECK_EQ_INT(st, -LLMK_ERANGE);
	CHECK_EQ_INT(fixture_count(out, "error: "), 1);
	CHECK(strstr(out, "longer than the context") == NULL);
	if (!strstr(out, "fills the context")) {
		fprintf(stderr, "  infer said: %s", out);
		test_failed_checks++;
	}
	/* one word fewer: it runs */
	for (int i = 0; i < 4; i++) /* --no-parse-special, 1, -n, a" */
		*strrchr(line, ' ') = 0;
	strcat(line, "\" -n 1");
	fixture_run(&s, line, &st);
	CHECK_EQ_INT(st, 0);
	fixture_close(&s);
}

/* One "error: " line for each mistake, and the shell keeps going. */
TEST(cmd_model_errors_one_line_each)
{
	static const struct {
		const char *line, *says;
	} cases[] = {
		{"infer \"hi\"", "no model loaded"},
		{"info", "no model loaded"},
		{"load 7", "no disk 7"},
		{"load nosuchmodel", "no disk has the id or holds a model named"},
		{"load 0 --fast", "unknown flag"},
		{"load 0", NULL},
		{"infer \"hi\" --bogus 3", "unknown flag '--bogus'"},
		{"infer \"hi\" -n many", "bad number"},
		{"infer \"hi\" --temp", "needs a value"},
		{"infer", "missing argument"},
		{"config kv-type q4", "kv-type"},
		{"config pack sometimes", "expected on or off"},
		{"config pack off", NULL},
		{"config pack on", NULL},
		{"config mem-budget 1M", NULL},
		{"load 0", "mem-budget"},
		{"config mem-budget 2500K", NULL},
		{"load 0", "mem-budget"},
		{"config mem-budget 0", NULL},
		{"load 0", NULL},
	};
	char longp[2048];
	struct shell_fixture s;
	int st;

	if (!fixture_open_stories(&s, "stories260K.gguf"))
		SKIP("no testdata (LLMK_TESTDATA)");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *out = fixture_run(&s, cases[i].line, &st);
		if (!cases[i].says) {
			CHECK_EQ_INT(st, 0);
			continue;
		}
		CHECK(st < 0);
		CHECK_EQ_INT(fixture_count(out, "error: "), 1);
		CHECK_EQ_INT(fixture_count(out, "\n"), 1);
		if (!strstr(out, cases[i].says))
			fprintf(stderr, "  '%s' said '%s', expected '%s'\n", cases[i].line, out,
				cases[i].says);
		CHECK(strstr(out, cases[i].says) != NULL);
	}
	/* 200 words do not fit a context of 128; also right after a run that
	 * generated tokens (its counters must not hide the error) */
	fixture_run(&s, "infer \"Once upon a time\" -n 2 --temp 0", &st);
	CHECK_EQ_INT(st, 0);
	size_t n = (size_t)snprintf(longp, sizeof longp, "infer \"");
	for (int i = 0; i < 200; i++)
		n += (size_t)snprintf(longp + n, sizeof longp - n, "cat ");
	snprintf(longp + n, sizeof longp - n, "\"");
	const char *out = fixture_run(&s, longp, &st);
	CHECK_EQ_INT(st, -LLMK_ERANGE);
	CHECK_EQ_INT(fixture_count(out, "error: "), 1);
	CHECK(strstr(out, "longer than the context") != NULL);
	fixture_close(&s);
}

/* Interactive chat: lines until an empty one; each turn's reply is kept. */
TEST(cmd_chat_reads_lines_until_empty)
{
	static const char input[] = "Once upon a time\nLily\n\nafter\n";
	struct shell_fixture s;
	struct engine *e;
	const char *out;
	int st;

	if (!open_loaded(&s))
		SKIP("no testdata (LLMK_TESTDATA)");
	host_set_input(input, sizeof input - 1);
	out = fixture_run(&s, "chat -n 6 --temp 0", &st);
	CHECK_EQ_INT(st, 0);
	e = s.sh->engine;
	CHECK_EQ_INT(e->n_msgs, 4);
	CHECK(strstr(out, "chatml") != NULL);
	CHECK_EQ_INT(fixture_count(out, "error"), 0);
	/* what follows the empty line is left for the shell */
	CHECK_EQ_INT(shell_getc(s.sh), 'a');
	host_set_input(NULL, 0);
	fixture_close(&s);
}

TEST(cmd_profile_counts_stages_and_layers)
{
	struct shell_fixture s;
	struct engine *e;
	const char *out;
	int st;

	if (!fixture_open_stories(&s, "stories260K.gguf"))
		SKIP("no testdata (LLMK_TESTDATA)");
	fixture_run(&s, "profile on", &st);
	CHECK(st < 0); /* no model yet */
	fixture_run(&s, "load 0", &st);
	fixture_run(&s, "profile on", &st);
	CHECK_EQ_INT(st, 0);
	fixture_run(&s, "infer \"Once upon a time\" -n 6 --temp 0", &st);
	e = s.sh->engine;
	/* 5 prompt tokens in one pass, then 5 single-token passes */
	CHECK_EQ_INT(e->model.prof.tokens, 10);
	CHECK_EQ_INT(e->model.prof.passes, 6);
	CHECK(e->model.prof.layer_ns[4] > 0);
	out = fixture_run(&s, "profile", &st);
	CHECK(strstr(out, "10 tokens in 6 passes") && strstr(out, "attention"));
	fixture_run(&s, "profile off", &st);
	fixture_run(&s, "infer \"Once upon a time\" -n 6 --temp 0", &st);
	CHECK_EQ_INT(e->model.prof.passes, 6);
	fixture_close(&s);
}

/* A budget between "weights + scratch" and "+ the full context" gets a
 * smaller cache when the weights are resident (forced: the plan would stream
 * them); generation then ends when the context is full. */
TEST(cmd_budget_shrinks_the_context)
{
	struct shell_fixture s;
	struct engine *e;
	int st;

	if (!fixture_open_stories(&s, "stories260K.gguf"))
		SKIP("no testdata (LLMK_TESTDATA)");
	fixture_run(&s, "config threads 1", &st);
	fixture_run(&s, "config mem-budget 5300K", &st);
	const char *out = fixture_run(&s, "load --resident llama", &st); /* general.name, any case */
	if (st)
		fprintf(stderr, "  %s", out);
	CHECK_EQ_INT(st, 0);
	if (st) {
		fixture_close(&s);
		return;
	}
	e = s.sh->engine;
	CHECK(e->n_ctx >= 16 && e->n_ctx < 128);
	fixture_run(&s, "infer \"Once upon a time\" -n 500 --temp 0", &st);
	CHECK_EQ_INT(st, 0);
	CHECK_STR(e->run.stop, "context");
	CHECK_EQ_INT(e->n_past, e->n_ctx);
	CHECK(e->mem.peak <= 5300 * 1024);
	fixture_close(&s);
}

/* A setting is one row: its flag gives one run what `config` gives every
 * run, the flag's errors name the flag and the key's the key, and `help`
 * lists every row that has a flag. */
TEST(cmd_flags_and_config_keys_are_one_table)
{
	char a[16384], b[4096];
	struct shell_fixture s;
	const char *out;
	int st, flags = 0;

	if (!open_loaded(&s))
		SKIP("no testdata (LLMK_TESTDATA)");
	snprintf(a, sizeof a, "%s", fixture_run(&s, "infer \"The cat\" -n 20 --temp 1.1 --top-k 30 --seed 5 "
					 "--repeat-penalty 1.3 --mirostat 2 --mirostat-ent 3 --ids", &st));
	CHECK_EQ_INT(st, 0);
	fixture_run(&s, "config temp 1.1", &st);
	fixture_run(&s, "config top-k 30", &st);
	fixture_run(&s, "config seed 5", &st);
	fixture_run(&s, "config repeat-penalty 1.3", &st);
	fixture_run(&s, "config mirostat 2", &st);
	fixture_run(&s, "config mirostat-ent 3", &st);
	fixture_run(&s, "config n-predict 20", &st);
	snprintf(b, sizeof b, "%s", fixture_run(&s, "infer \"The cat\" --ids", &st));
	CHECK_EQ_INT(st, 0);
	CHECK_STR(a, b);
	/* a flag changes only its run */
	out = fixture_run(&s, "config temp", &st);
	CHECK(strstr(out, " 1.1 ") != NULL);
	out = fixture_run(&s, "infer \"x\" --temp 500", &st);
	CHECK_STR(out, "error: --temp: 500 is out of range [0, 100]\n");
	out = fixture_run(&s, "config temp 500", &st);
	CHECK_STR(out, "error: temp: 500 is out of range [0, 100]\n");
	out = fixture_run(&s, "infer \"x\" --mirostat 3", &st);
	CHECK_STR(out, "error: --mirostat: 3 is out of range [0, 2]\n");
	out = fixture_run(&s, "config mirostat 3", &st);
	CHECK_STR(out, "error: mirostat: 3 is out of range [0, 2]\n");
	/* every row with a flag is in `help`, and is a flag */
	snprintf(a, sizeof a, "%s", fixture_run(&s, "help", &st));
	const struct shell_config_key *k;
	for (int i = 0; (k = shell_config_at(i)); i++) {
		char flag[64], line[160];
		if (!k->flag)
			continue;
		flags++;
		snprintf(flag, sizeof flag, "--%s %s", k->name, k->flag);
		CHECK(strstr(a, flag) != NULL);
		snprintf(line, sizeof line, "infer \"x\" -n 1 --%s", k->name);
		out = fixture_run(&s, line, &st);
		CHECK(strstr(out, "needs a value") != NULL);
	}
	CHECK_EQ_INT(flags, 25);
	fixture_close(&s);
}
