/*
 * tests/unit/test_grammar_lazy.c — lazy grammars (grammar.h): the trigger
 * words alone (gram_trig_*), then a grammar constraining a real vocabulary
 * (mkmodel's SPM one: single characters, words like " world") only from
 * the trigger on.
 */
#include "test.h"

#include <math.h>
#include <stdlib.h>

#include "../../llm/gguf.h"
#include "../../llm/grammar.h"
#include "../../llm/tok.h"
#include "../../tools/writer/mkmodel.h"

static int trig(struct gram_trig *t, const char *a, const char *b)
{
	const char *w[2] = {a, b};
	char err[160];

	return gram_trig_init(t, w, b ? 2 : 1, err, sizeof err);
}

static int find(const struct gram_trig *t, const char *p, size_t *rest)
{
	return gram_trig_find(t, p, strlen(p), rest);
}

static void push(struct gram_trig *t, const char *p)
{
	gram_trig_push(t, p, strlen(p));
}

TEST(grammar_trigger_split_over_pieces_is_found_where_it_ends)
{
	struct gram_trig t;
	size_t rest = 99;

	CHECK_EQ_INT(trig(&t, "<tool_call>", NULL), 0);
	CHECK_EQ_INT(find(&t, "I will call <tool", &rest), -1);
	push(&t, "I will call <tool");
	CHECK_EQ_INT(find(&t, "_ca", &rest), -1);
	push(&t, "_ca");
	CHECK_EQ_INT(find(&t, "ll>\n{\"name", &rest), 0);
	CHECK_EQ_INT((int)rest, 3); /* the grammar's text: "<tool_call>" "\n{\"name" */
	/* one byte at a time */
	CHECK_EQ_INT(trig(&t, "<tool_call>", NULL), 0);
	for (const char *s = "ab<tool_call"; *s; s++) {
		char c[2] = {*s, 0};
		CHECK_EQ_INT(find(&t, c, &rest), -1);
		push(&t, c);
	}
	CHECK_EQ_INT(find(&t, ">", &rest), 0);
	CHECK_EQ_INT((int)rest, 1);
}

TEST(grammar_trigger_inside_one_piece_leaves_the_rest_after_it)
{
	struct gram_trig t;
	size_t rest = 0;

	CHECK_EQ_INT(trig(&t, "<tool_call>", NULL), 0);
	CHECK_EQ_INT(find(&t, "ok <tool_call>\n{", &rest), 0);
	CHECK_EQ_INT((int)rest, 14);
	CHECK_EQ_INT(find(&t, "<tool_call>", &rest), 0); /* at the very start, nothing after */
	CHECK_EQ_INT((int)rest, 11);
	CHECK_EQ_INT(find(&t, "<tool_cal", &rest), -1);
	CHECK_EQ_INT(find(&t, "tool_call>", &rest), -1);
}

TEST(grammar_trigger_of_two_the_first_to_end_wins_then_the_longer)
{
	struct gram_trig t;
	size_t rest = 0;

	CHECK_EQ_INT(trig(&t, "<a>", "<bb>"), 0);
	CHECK_EQ_INT(find(&t, "x<bb>y<a>", &rest), 1);
	CHECK_EQ_INT((int)rest, 5);
	CHECK_EQ_INT(find(&t, "<a><bb>", &rest), 0);
	CHECK_EQ_INT((int)rest, 3);
	CHECK_EQ_INT(trig(&t, "b>", "<b>"), 0); /* both end at one byte */
	CHECK_EQ_INT(find(&t, "<b>!", &rest), 1);
	CHECK_EQ_INT((int)rest, 3);
	CHECK_EQ_INT(find(&t, "xb>", &rest), 0);
}

TEST(grammar_trigger_absent_stays_absent_over_long_text)
{
	struct gram_trig t;
	size_t rest;
	char buf[300];

	CHECK_EQ_INT(trig(&t, "<tool_call>", "^{\"name\""), 0);
	memset(buf, 'x', sizeof buf - 1);
	buf[sizeof buf - 1] = 0;
	for (int i = 0; i < 20; i++) {
		CHECK_EQ_INT(find(&t, buf, &rest), -1);
		push(&t, buf);
		CHECK(t.n_hist <= GRAM_MAX_TRIGGER - 1);
	}
	CHECK_EQ_INT(find(&t, "<tool_call {\"name\" tool_call>", &rest), -1);
	CHECK(t.seen == 20 * (sizeof buf - 1));
}

TEST(grammar_trigger_at_start_counts_only_at_the_texts_start)
{
	struct gram_trig t;
	size_t rest = 0;

	CHECK_EQ_INT(trig(&t, "^{\"name\"", NULL), 0);
	CHECK_EQ_INT(find(&t, "{\"name\": \"f\"", &rest), 0);
	CHECK_EQ_INT((int)rest, 7);
	push(&t, "{\"na");
	CHECK_EQ_INT(find(&t, "me\":", &rest), 0);
	CHECK_EQ_INT((int)rest, 3);
	CHECK_EQ_INT(trig(&t, "^{\"name\"", NULL), 0);
	push(&t, " ");
	CHECK_EQ_INT(find(&t, "{\"name\"", &rest), -1);
	CHECK_EQ_INT(trig(&t, "^{\"name\"", NULL), 0);
	CHECK_EQ_INT(find(&t, "x{\"name\"", &rest), -1);
}

TEST(grammar_trigger_words_are_checked)
{
	struct gram_trig t;
	char err[160], big[100];
	const char *w[5] = {"a", "b", "c", "d", "e"};

	memset(big, 'y', sizeof big - 1);
	big[sizeof big - 1] = 0;
	CHECK_EQ_INT(gram_trig_init(&t, w, 0, err, sizeof err), -LLMK_EINVAL);
	CHECK_EQ_INT(gram_trig_init(&t, w, 5, err, sizeof err), -LLMK_EINVAL);
	CHECK_EQ_INT(trig(&t, "", NULL), -LLMK_EINVAL);
	CHECK_EQ_INT(trig(&t, "^", NULL), -LLMK_EINVAL);
	CHECK_EQ_INT(trig(&t, big, NULL), -LLMK_EINVAL);
	CHECK_EQ_INT(gram_trig_init(&t, w, 4, err, sizeof err), 0);
}

/* ---- over a vocabulary ---- */

struct lz {
	struct llm_mem mem;
	struct gguf_file g;
	struct tok t;
	void *buf;
	struct gram gr;
	struct gram_gen gx;
};

static int32_t id_of(const struct tok *t, const char *s)
{
	char p[64];

	for (uint32_t id = 0; id < t->n_vocab; id++) {
		int n = tok_piece(t, (int32_t)id, 0, p, sizeof p);
		if (n == (int)strlen(s) && memcmp(p, s, (size_t)n) == 0 && !tok_is_eog(t, (int32_t)id))
			return (int32_t)id;
	}
	return -1;
}

static int lz_open(struct lz *z, const char *grammar, const char *w0, const char *w1)
{
	struct mkm_spec s;
	struct llm_reader r;
	struct llm_membuf mb;
	char path[600], err[256];
	const char *w[2] = {w0, w1};
	size_t len;

	memset(z, 0, sizeof *z);
	mkm_defaults(&s);
	snprintf(path, sizeof path, "%s/lazy_vocab.gguf", test_tmpdir());
	if (mkm_write(&s, path, err, sizeof err) || !(z->buf = test_read_file(path, &len)))
		return -1;
	llm_mem_init(&z->mem, 0);
	llm_reader_mem(&r, &mb, z->buf, len);
	if (gguf_open(&z->g, &r, &z->mem, err, sizeof err) < 0 ||
	    tok_init(&z->t, &z->g, &z->mem, err, sizeof err) < 0) {
		fprintf(stderr, "  %s\n", err);
		return -1;
	}
	gguf_close(&z->g);
	if (gram_parse(&z->gr, &z->mem, grammar, strlen(grammar), err, sizeof err)) {
		fprintf(stderr, "  grammar: %s\n", err);
		return -1;
	}
	if (gram_gen_init(&z->gx, &z->gr, &z->t, z->t.n_vocab, &z->mem))
		return -1;
	if (w0 && gram_gen_lazy(&z->gx, w, w1 ? 2 : 1, err, sizeof err))
		return -1;
	return 0;
}

static void lz_close(struct lz *z)
{
	gram_gen_free(&z->gx);
	gram_free(&z->gr);
	tok_free(&z->t);
	free(z->buf);
	CHECK_EQ_INT((int)z->mem.used, 0);
}

/* Each piece of s[] allowed, then accepted. */
static bool take(struct lz *z, const char *const *s)
{
	for (; *s; s++) {
		int32_t id = id_of(&z->t, *s);
		if (id < 0 || !gram_gen_allows(&z->gx, id)) {
			fprintf(stderr, "  piece '%s' (id %d) refused\n", *s, id);
			return false;
		}
		gram_gen_accept(&z->gx, id);
	}
	return true;
}

TEST(grammar_lazy_is_free_until_the_trigger_then_constrains)
{
	struct lz z;
	const char *free_text[] = {"a", " world", "<", "t", NULL};

	if (lz_open(&z, "root ::= \"<t>\" [0-9]+ \"</t>\"", "<t>", NULL)) {
		test_failed_checks++;
		lz_close(&z);
		return;
	}
	CHECK(z.gx.waiting);
	/* waiting: every token the trigger does not complete is allowed, and
	 * the end of generation */
	uint32_t refused = 0;
	for (uint32_t id = 0; id < z.t.n_vocab; id++)
		refused += !gram_gen_allows(&z.gx, (int32_t)id);
	CHECK_EQ_INT((int)refused, 0);
	CHECK(take(&z, free_text));
	CHECK(z.gx.waiting && !gram_gen_done(&z.gx));
	CHECK(gram_gen_allows(&z.gx, z.t.eos) || z.t.eos < 0);
	/* "<t" then "x": no trigger, free; ">" completes it: the grammar reads "<t>" */
	CHECK(gram_gen_allows(&z.gx, id_of(&z.t, "x")));
	CHECK(gram_gen_allows(&z.gx, id_of(&z.t, ">")));
	const char *gt[] = {">", NULL};
	CHECK(take(&z, gt));
	CHECK(!z.gx.waiting);
	CHECK(!gram_gen_allows(&z.gx, id_of(&z.t, "x")));
	CHECK(!gram_gen_allows(&z.gx, id_of(&z.t, " world")));
	CHECK(!gram_gen_allows(&z.gx, z.t.eos) || z.t.eos < 0);
	const char *call[] = {"4", "2", "<", "/", "t", ">", NULL};
	CHECK(take(&z, call));
	CHECK(gram_gen_done(&z.gx));
	lz_close(&z);
}

TEST(grammar_lazy_trigger_inside_a_token_must_fit_with_its_rest)
{
	struct lz z;
	float *lg;
	int32_t world, wo, a;

	/* " world" holds the trigger "wor" and "ld" after it */
	if (lz_open(&z, "root ::= \"world\" [0-9]", "wor", NULL)) {
		test_failed_checks++;
		lz_close(&z);
		return;
	}
	world = id_of(&z.t, " world");
	wo = id_of(&z.t, "w");
	a = id_of(&z.t, "a");
	CHECK(world >= 0 && wo >= 0 && a >= 0);
	CHECK(gram_gen_allows(&z.gx, world));
	lz_close(&z);
	if (lz_open(&z, "root ::= \"worx\" [0-9]", "wor", NULL)) {
		test_failed_checks++;
		lz_close(&z);
		return;
	}
	CHECK(!gram_gen_allows(&z.gx, world)); /* "wor" "ld": the grammar refuses "l" */
	CHECK(gram_gen_allows(&z.gx, wo));
	CHECK(gram_gen_allows(&z.gx, a));
	/* the mask while waiting: only the refused completions go */
	lg = calloc(z.t.n_vocab, sizeof *lg);
	gram_gen_mask(&z.gx, lg);
	CHECK(isinf(lg[world]) && lg[world] < 0);
	CHECK(lg[wo] == 0 && lg[a] == 0);
	uint32_t masked = 0, other = 0;
	for (uint32_t id = 0; id < z.t.n_vocab; id++) {
		char p[64] = {0};
		int n = tok_piece(&z.t, (int32_t)id, 0, p, sizeof p - 1);
		bool holds = n > 0 && strstr(p, "wor") && !strstr(p, "worx");
		masked += isinf(lg[id]) != 0;
		other += (isinf(lg[id]) != 0) != holds;
	}
	CHECK(masked >= 1);
	CHECK_EQ_INT((int)other, 0); /* masked: exactly the pieces with "wor" not "worx" */
	free(lg);
	/* the trigger split: "w" "o" then "r" completes it, "x" must follow */
	const char *wor[] = {"w", "o", "r", NULL};
	CHECK(take(&z, wor));
	CHECK(!z.gx.waiting);
	CHECK(!gram_gen_allows(&z.gx, a));
	CHECK(gram_gen_allows(&z.gx, id_of(&z.t, "x")));
	lz_close(&z);
}

TEST(grammar_lazy_two_triggers_and_one_at_the_start)
{
	struct lz z;

	if (lz_open(&z, "root ::= (\"{\" [a-z]+ \"}\") | (\"<c>\" [a-z]+ \"</c>\")", "^{", "<c>")) {
		test_failed_checks++;
		lz_close(&z);
		return;
	}
	const char *start[] = {"{", "a", NULL};
	CHECK(take(&z, start)); /* "{" at the very start: the grammar from there */
	CHECK(!z.gx.waiting);
	CHECK(!gram_gen_allows(&z.gx, id_of(&z.t, "<")));
	lz_close(&z);
	if (lz_open(&z, "root ::= (\"{\" [a-z]+ \"}\") | (\"<c>\" [a-z]+ \"</c>\")", "^{", "<c>")) {
		test_failed_checks++;
		lz_close(&z);
		return;
	}
	const char *later[] = {"a", "{", "!", "<", "c", ">", "z", NULL};
	CHECK(take(&z, later)); /* "{" not at the start: free; "<c>" then fires */
	CHECK(!z.gx.waiting);
	CHECK(!gram_gen_allows(&z.gx, id_of(&z.t, "!")));
	lz_close(&z);
}
