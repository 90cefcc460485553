/*
 * tests/unit/test_sample_rep.c — the steps of llm/sample_rep.c: DRY against
 * penalties worked out by hand and against a direct (quadratic) reading of
 * its definition, the repetition penalties on a list in any order, and the
 * breaker marks.
 */
#include "sample_fixture.h"

#define V 8

static void accept_all(struct fix *f, const uint32_t *t, int n)
{
	for (int i = 0; i < n; i++)
		sample_accept(&f->s, t[i]);
}

/* DRY over all-zero logits: what each token loses is minus its logit. */
static void dry_run(struct fix *f)
{
	static const float zero[V];

	fix_load(f, zero);
	sample_dry(&f->s);
}

static void dry_params(struct sample_params *p)
{
	fix_params(p);
	p->dry_multiplier = 0.8f;
	p->dry_base = 1.75f;
	p->dry_allowed_length = 2;
	p->dry_last_n = -1;
}

TEST(sample_dry_penalises_the_token_that_extends_a_repeat)
{
	struct fix f;
	/* a b c d a b c: the run "a b c" ending now came before, followed by
	 * d: emitting d would make it a repeat of 4; len = 3 */
	static const uint32_t h[] = {0, 1, 2, 3, 0, 1, 2};

	dry_params(&f.p);
	fix_init(&f, V);
	accept_all(&f, h, 7);

	/* allowed 2: 0.8 * 1.75^(3 - 2) = 1.4 for d, nothing for the others */
	dry_run(&f);
	CHECK_NEAR(fix_logit(&f, 3), -1.4, 1e-6);
	for (uint32_t i = 0; i < V; i++)
		if (i != 3)
			CHECK_NEAR(fix_logit(&f, i), 0.0, 0);
	/* allowed 3: 0.8 * 1.75^0 = 0.8 */
	f.s.par.dry_allowed_length = 3;
	dry_run(&f);
	CHECK_NEAR(fix_logit(&f, 3), -0.8, 1e-6);
	/* allowed 4: a repeat of 3 is free */
	f.s.par.dry_allowed_length = 4;
	dry_run(&f);
	CHECK_NEAR(fix_logit(&f, 3), 0.0, 0);

	/* a window of the last 4 (d a b c) holds no repeat; of the last 5
	 * (c d a b c) a repeat of 1 ("c", followed by d): free at allowed 2,
	 * 0.8 * 1.75^0 at allowed 1 */
	f.s.par.dry_allowed_length = 2;
	f.s.par.dry_last_n = 4;
	dry_run(&f);
	CHECK_NEAR(fix_logit(&f, 3), 0.0, 0);
	f.s.par.dry_last_n = 5;
	dry_run(&f);
	CHECK_NEAR(fix_logit(&f, 3), 0.0, 0);
	f.s.par.dry_allowed_length = 1;
	dry_run(&f);
	CHECK_NEAR(fix_logit(&f, 3), -0.8, 1e-6);
	/* window 0 or multiplier 0: off */
	f.s.par.dry_last_n = 0;
	dry_run(&f);
	CHECK_NEAR(fix_logit(&f, 3), 0.0, 0);
	f.s.par.dry_last_n = -1;
	f.s.par.dry_multiplier = 0;
	dry_run(&f);
	CHECK_NEAR(fix_logit(&f, 3), 0.0, 0);
	fix_free(&f);
}

TEST(sample_dry_takes_the_longest_repeat_and_grows_by_the_base)
{
	struct fix f;
	/* 1 2 5 0 1 2 5 0 1 2: the run ending now (..5 0 1 2) matches the one
	 * ending at position 5 back to position 0 (1 2 5 0 1 2 = its last 6),
	 * followed by 5: len 6; it also matches "1 2" at positions 0-1, again
	 * followed by 5 (len 2). The longest counts: 0.8 * 1.75^(6 - 2) =
	 * 0.8 * 9.37890625 = 7.503125. Token 0 followed "2 5" (no match with
	 * the run ending now, "1 2"): nothing. */
	static const uint32_t h[] = {1, 2, 5, 0, 1, 2, 5, 0, 1, 2};
	/* 0 1 2 3 4 5 0 1 2 3 4: a repeat of 5 followed by 5: 0.8 * 1.75^3 =
	 * 4.2875 */
	static const uint32_t g[] = {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4};

	dry_params(&f.p);
	fix_init(&f, V);
	accept_all(&f, h, 10);
	dry_run(&f);
	CHECK_NEAR(fix_logit(&f, 5), -7.503125, 1e-5);
	for (uint32_t i = 0; i < V; i++)
		if (i != 5)
			CHECK_NEAR(fix_logit(&f, i), 0.0, 0);

	sample_reset(&f.s, &f.p);
	accept_all(&f, g, 11);
	dry_run(&f);
	CHECK_NEAR(fix_logit(&f, 5), -4.2875, 1e-5);
	fix_free(&f);
}

TEST(sample_dry_stops_at_sequence_breakers)
{
	struct fix f;
	static const uint32_t h[] = {0, 1, 2, 3, 0, 1, 2};

	dry_params(&f.p);
	fix_init(&f, V);
	sample_dry_breaker(&f.s, 1, "x:", 2); /* token 1 is text holding ':' */
	accept_all(&f, h, 7);
	/* the most recent breaker (1) is 1 token back: repeats are cut to 1 <
	 * allowed 2: nothing */
	dry_run(&f);
	CHECK_NEAR(fix_logit(&f, 3), 0.0, 0);
	/* allowed 1: the repeat "c" (1 long, cut at the breaker) -> 0.8 */
	f.s.par.dry_allowed_length = 1;
	dry_run(&f);
	CHECK_NEAR(fix_logit(&f, 3), -0.8, 1e-6);
	sample_free(&f.s);

	/* token 3 a breaker: the repeat "a b c" (3 back to the breaker) would
	 * be extended by 3 itself, and a breaker is never penalised */
	fix_init(&f, V);
	sample_dry_breaker(&f.s, 3, "\n", 1);
	sample_dry_breaker(&f.s, 4, "abc", 3); /* no breaker character */
	accept_all(&f, h, 7);
	dry_run(&f);
	for (uint32_t i = 0; i < V; i++)
		CHECK_NEAR(fix_logit(&f, i), 0.0, 0);
	CHECK(f.s.breaker[0] == 1u << 3);
	fix_free(&f);
}

/* DRY read off its definition: for every earlier position j, the longest
 * run ending at j - 1 that equals the run ending now, no longer than the
 * tokens since the last breaker, extends by h[j]. */
static void dry_naive(const uint32_t *h, int n, const bool *brk, uint32_t allowed, float mult,
		      float base, float *out)
{
	int lim = n;
	int best[V];

	for (int v = 0; v < V; v++) {
		best[v] = -1;
		out[v] = 0;
	}
	if (n <= (int)allowed)
		return;
	for (int i = n - 1; i >= 0; i--)
		if (brk[h[i]]) {
			lim = n - 1 - i;
			break;
		}
	if (lim < (int)allowed)
		return;
	for (int j = 1; j < n; j++) {
		int len = 0;
		while (len < j && h[j - 1 - len] == h[n - 1 - len])
			len++;
		if (len > lim)
			len = lim;
		if (len >= (int)allowed && len > best[h[j]])
			best[h[j]] = len;
	}
	for (int v = 0; v < V; v++)
		if (best[v] >= 0 && !brk[v])
			out[v] = -mult * (float)pow(base, best[v] - (int)allowed);
}

TEST(sample_dry_matches_its_definition_on_random_histories)
{
	struct fix f;
	struct sample_rng r;
	uint32_t h[300];
	float want[V];
	int penalised = 0, spared = 0;

	sample_rng_seed(&r, 7);
	for (int round = 0; round < 300; round++) {
		int n = 1 + (int)(sample_rng_next(&r) % 200), alpha = 2 + (int)(sample_rng_next(&r) % 3);
		int last_n = (int)(sample_rng_next(&r) % 100) - 1, w;
		bool brk[V] = {false};

		dry_params(&f.p);
		f.p.dry_allowed_length = (uint32_t)(sample_rng_next(&r) % 4);
		f.p.dry_last_n = last_n == 0 ? -1 : last_n;
		fix_init(&f, V); /* FIX_CTX + 1 tokens of history: longer runs wrap the ring */
		if (round % 3 == 0) {
			uint32_t b = (uint32_t)(sample_rng_next(&r) % V);
			brk[b] = true;
			sample_dry_breaker(&f.s, b, "*", 1);
		}
		for (int i = 0; i < n; i++) {
			h[i] = (uint32_t)(sample_rng_next(&r) % (uint64_t)alpha);
			sample_accept(&f.s, h[i]);
		}
		/* the window: what the ring holds, cut to dry_last_n */
		w = n < FIX_CTX + 1 ? n : FIX_CTX + 1;
		if (f.p.dry_last_n > 0 && f.p.dry_last_n < w)
			w = f.p.dry_last_n;
		dry_naive(h + n - w, w, brk, f.p.dry_allowed_length, f.p.dry_multiplier,
			  f.p.dry_base, want);
		dry_run(&f);
		for (uint32_t v = 0; v < V; v++) {
			CHECK_NEAR(fix_logit(&f, v), want[v], 1e-4 * (1 + fabs(want[v])));
			penalised += want[v] != 0;
			spared += want[v] == 0 && v < (uint32_t)alpha;
		}
		/* the tally is left clean for the next step */
		for (uint32_t v = 0; v < V; v++)
			CHECK_EQ_INT(f.s.tally[v], 0);
		fix_free(&f);
	}
	/* both outcomes were exercised, many times */
	CHECK(penalised > 200 && spared > 200);
}

TEST(sample_penalties_apply_to_a_list_in_any_order)
{
	struct fix f;
	const float l[V] = {1.0f, 3.0f, 2.0f, -1.0f, 0.5f, 2.5f, -3.0f, 0.0f};

	fix_params(&f.p);
	f.p.repeat_penalty = 2.0f;
	f.p.frequency_penalty = 0.25f;
	f.p.presence_penalty = 0.5f;
	f.p.repeat_last_n = 4;
	fix_init(&f, V);
	sample_accept(&f.s, 1);
	sample_accept(&f.s, 3);
	sample_accept(&f.s, 1);
	/* after top-k 4 the list is 1 5 2 0 (sorted, no longer by id): token 1
	 * (twice, logit 3): 3 / 2 - 2 * .25 - .5 = .5; 5 and 2 untouched */
	fix_load(&f, l);
	sample_top_k(&f.s, 4);
	sample_apply_penalties(&f.s);
	CHECK_NEAR(fix_logit(&f, 1), 0.5, 1e-6);
	CHECK_NEAR(fix_logit(&f, 5), 2.5, 0);
	CHECK_NEAR(fix_logit(&f, 2), 2.0, 0);
	CHECK_NEAR(fix_logit(&f, 0), 1.0, 0);
	for (uint32_t v = 0; v < V; v++)
		CHECK_EQ_INT(f.s.tally[v], 0);
	fix_free(&f);
}
