/*
 * tests/unit/test_sample_cut.c — the steps of llm/sample_cut.c against
 * distributions worked out by hand (the arithmetic is in the comments).
 *
 * Most tests use the vocabulary of four with logits ln 4, ln 2, ln 1, ln 1:
 * its softmax is exactly 4/8, 2/8, 1/8, 1/8 = .5, .25, .125, .125.
 */
#include "sample_fixture.h"

static void quarter_logits(float *l)
{
	l[0] = math_logf(4.0f);
	l[1] = math_logf(2.0f);
	l[2] = 0.0f;
	l[3] = 0.0f;
}

TEST(sample_xtc_removes_all_top_choices_but_the_least_likely)
{
	struct fix f;
	float l[4];

	quarter_logits(l);
	fix_params(&f.p);
	f.p.xtc_probability = 1.0f; /* a coin in [0, 1) is never above 1: always cut */
	f.p.xtc_threshold = 0.2f;
	fix_init(&f, 4);

	/* .5 and .25 are >= .2: the .5 goes, the .25 (least likely of them)
	 * stays; left .25 .125 .125 -> .5 .25 .25 */
	fix_load(&f, l);
	sample_xtc(&f.s);
	CHECK_EQ_INT(f.s.n_cand, 3);
	CHECK(!fix_kept(&f, 0));
	CHECK_NEAR(fix_prob(&f, 1), 0.5, 1e-6);
	CHECK_NEAR(fix_prob(&f, 2), 0.25, 1e-6);
	CHECK_NEAR(fix_prob(&f, 3), 0.25, 1e-6);

	/* threshold .1: all four are above; the last of them in probability
	 * order is kept alone (of the tied .125s the higher id sorts last) */
	f.s.par.xtc_threshold = 0.1f;
	fix_load(&f, l);
	sample_xtc(&f.s);
	CHECK_EQ_INT(f.s.n_cand, 1);
	CHECK_EQ_INT(f.s.cand[0].id, 3);

	/* threshold .3: only .5 is above; one top choice is never removed */
	f.s.par.xtc_threshold = 0.3f;
	fix_load(&f, l);
	sample_xtc(&f.s);
	CHECK_EQ_INT(f.s.n_cand, 4);

	/* threshold above .5 (two tokens cannot both pass it): off */
	f.s.par.xtc_threshold = 0.51f;
	fix_load(&f, l);
	sample_xtc(&f.s);
	CHECK_EQ_INT(f.s.n_cand, 4);

	/* probability 0: off */
	f.s.par.xtc_threshold = 0.2f;
	f.s.par.xtc_probability = 0.0f;
	fix_load(&f, l);
	sample_xtc(&f.s);
	CHECK_EQ_INT(f.s.n_cand, 4);
	fix_free(&f);
}

TEST(sample_xtc_cuts_with_its_probability)
{
	struct fix f;
	float l[4];
	int cut = 0;

	quarter_logits(l);
	fix_params(&f.p);
	f.p.xtc_probability = 0.3f;
	f.p.xtc_threshold = 0.2f;
	fix_init(&f, 4);
	for (int i = 0; i < 4000; i++) {
		fix_load(&f, l);
		sample_xtc(&f.s);
		cut += f.s.n_cand == 3;
	}
	/* binomial(4000, .3): mean 1200, sd 29 */
	CHECK(cut > 1080 && cut < 1320);
	fix_free(&f);
}

TEST(sample_top_n_sigma_keeps_logits_within_n_deviations_of_the_max)
{
	struct fix f;
	/* logits 4 3 2 1 0: mean 2, variance (4+1+0+1+4)/5 = 2, sigma = sqrt 2
	 * = 1.41421; the -inf token is left out of both (llama.cpp counts only
	 * finite logits) and is never kept */
	const float l[6] = {4, 3, 2, 1, 0, -INFINITY};

	fix_params(&f.p);
	fix_init(&f, 6);

	/* n = 1: keep logit >= 4 - 1.414 = 2.586: {4, 3}; softmax of (4, 3) is
	 * 1 / (1 + e^-1) = .731059 and .268941 */
	fix_load(&f, l);
	sample_top_n_sigma(&f.s, 1.0f);
	CHECK_EQ_INT(f.s.n_cand, 2);
	CHECK_NEAR(fix_prob(&f, 0), 0.731059, 1e-5);
	CHECK_NEAR(fix_prob(&f, 1), 0.268941, 1e-5);

	/* n = 2: >= 4 - 2.828 = 1.172: {4, 3, 2} */
	fix_load(&f, l);
	sample_top_n_sigma(&f.s, 2.0f);
	CHECK_EQ_INT(f.s.n_cand, 3);
	CHECK(fix_kept(&f, 2) && !fix_kept(&f, 3));

	/* n = .5: >= 4 - .707 = 3.293: {4} */
	fix_load(&f, l);
	sample_top_n_sigma(&f.s, 0.5f);
	CHECK_EQ_INT(f.s.n_cand, 1);
	CHECK_EQ_INT(f.s.cand[0].id, 0);

	/* n = 3: >= 4 - 4.243 = -.243: the five finite ones */
	fix_load(&f, l);
	sample_top_n_sigma(&f.s, 3.0f);
	CHECK_EQ_INT(f.s.n_cand, 5);
	CHECK(!fix_kept(&f, 5));

	/* n <= 0 (llama.cpp's default -1): off */
	fix_load(&f, l);
	sample_top_n_sigma(&f.s, -1.0f);
	CHECK_EQ_INT(f.s.n_cand, 6);
	fix_free(&f);
}

TEST(sample_typical_keeps_the_tokens_nearest_the_entropy)
{
	struct fix f;
	float l[4];

	/* p = .5 .25 .125 .125: entropy H = .5 ln 2 + .25 ln 4 + .25 ln 8 =
	 * 1.75 ln 2 = 1.2130; surprises -ln p = .693, 1.386, 2.079, 2.079 are
	 * .520, .173, .866, .866 from H: the order is id 1, 0, 2, 3 */
	quarter_logits(l);
	fix_params(&f.p);
	fix_init(&f, 4);

	/* mass .5: .25 is not more than .5, .25 + .5 = .75 is: {1, 0} */
	fix_load(&f, l);
	sample_typical(&f.s, 0.5f);
	CHECK_EQ_INT(f.s.n_cand, 2);
	CHECK_EQ_INT(f.s.cand[0].id, 1);
	CHECK_EQ_INT(f.s.cand[1].id, 0);
	/* the logits are the model's still (a later penalty or DRY sees them) */
	CHECK_NEAR(fix_logit(&f, 0), math_logf(4.0f), 1e-6);
	CHECK_NEAR(fix_logit(&f, 1), math_logf(2.0f), 1e-6);
	/* mass .2: the first token's .25 is more: {1} */
	fix_load(&f, l);
	sample_typical(&f.s, 0.2f);
	CHECK_EQ_INT(f.s.n_cand, 1);
	CHECK_EQ_INT(f.s.cand[0].id, 1);
	fix_free(&f);
}

TEST(sample_dynatemp_sets_the_temperature_from_the_entropy)
{
	struct fix f;
	/* p = 2/3, 1/3: H = -(2/3 ln 2/3 + 1/3 ln 1/3) = .636514, the most a
	 * list of two can have is ln 2 = .693147: normalised .918296 */
	const float l[2] = {math_logf(2.0f), 0.0f};

	fix_params(&f.p);
	f.p.temp = 1.0f;
	f.p.dynatemp_range = 0.5f;
	fix_init(&f, 2);

	/* range .5 around 1: t = .5 + (1.5 - .5) * .918296 = 1.418296; logits
	 * ln 2 / t = .488718 and 0: p = 1 / (1 + e^-.488718) = .619804 */
	fix_load(&f, l);
	sample_temperature(&f.s);
	CHECK_NEAR(fix_logit(&f, 0), math_logf(2.0f) / 1.418296, 1e-5);
	CHECK_NEAR(fix_prob(&f, 0), 0.619804, 1e-5);

	/* exponent 2: t = .5 + .918296^2 = 1.343267: p = .626216 */
	f.s.par.dynatemp_exp = 2.0f;
	fix_load(&f, l);
	sample_temperature(&f.s);
	CHECK_NEAR(fix_prob(&f, 0), 0.626216, 1e-5);

	/* temp .5, range 1: the low end is max(0, -.5) = 0, the high 1.5:
	 * t = 1.5 * .918296 = 1.377444: p = .623214 */
	f.s.par.dynatemp_exp = 1.0f;
	f.s.par.temp = 0.5f;
	f.s.par.dynatemp_range = 1.0f;
	fix_load(&f, l);
	sample_temperature(&f.s);
	CHECK_NEAR(fix_prob(&f, 0), 0.623214, 1e-5);

	/* range 0: plain temperature, logits / .5 */
	f.s.par.dynatemp_range = 0.0f;
	fix_load(&f, l);
	sample_temperature(&f.s);
	CHECK_NEAR(fix_logit(&f, 0), 2.0 * math_logf(2.0f), 1e-6);

	/* temp 0: only the most likely token is left */
	f.s.par.temp = 0.0f;
	fix_load(&f, l);
	sample_temperature(&f.s);
	CHECK_EQ_INT(f.s.n_cand, 1);
	CHECK_EQ_INT(f.s.cand[0].id, 0);
	fix_free(&f);
}
