/* tests/unit/test_sample.c — the sampling chain, step by step and end to end. */
#include "sample_fixture.h"

#define NV 8

static void init(struct sampler *s, struct llm_mem *mem, struct sample_params *p)
{
	llm_mem_init(mem, 0);
	CHECK_EQ_INT(sample_init(s, mem, NV, 64, p), 0);
}

/* Load logits into the candidate list as sample_next does. */
static void load(struct sampler *s, const float *l)
{
	for (uint32_t i = 0; i < NV; i++) {
		s->cand[i].id = i;
		s->cand[i].logit = l[i];
		s->cand[i].p = 0;
	}
	s->n_cand = NV;
	s->sorted = false;
}

static bool kept(const struct sampler *s, uint32_t id)
{
	for (uint32_t i = 0; i < s->n_cand; i++)
		if (s->cand[i].id == id)
			return true;
	return false;
}

static const float L[NV] = {1.0f, 3.0f, 2.0f, -1.0f, 0.5f, 2.5f, -3.0f, 0.0f};

TEST(sample_rng_is_seeded_and_uniform)
{
	struct sample_rng a, b;
	double sum = 0;

	sample_rng_seed(&a, 42);
	sample_rng_seed(&b, 42);
	for (int i = 0; i < 1000; i++)
		CHECK(sample_rng_next(&a) == sample_rng_next(&b));
	sample_rng_seed(&b, 43);
	CHECK(sample_rng_next(&a) != sample_rng_next(&b));
	for (int i = 0; i < 10000; i++) {
		float f = sample_rng_float(&a);
		CHECK(f >= 0.0f && f < 1.0f);
		sum += f;
	}
	CHECK_NEAR(sum / 10000, 0.5, 0.02);
}

TEST(sample_greedy_is_argmax)
{
	struct sample_params p;
	struct sampler s;
	struct llm_mem mem;

	sample_defaults(&p);
	p.temp = 0;
	init(&s, &mem, &p);
	CHECK_EQ_INT(sample_next(&s, L), 1);
	sample_free(&s);
	CHECK_EQ_INT(mem.used, 0);
}

TEST(sample_penalties_follow_llama_cpps_formula_in_their_window)
{
	struct sample_params p;
	struct sampler s;
	struct llm_mem mem;

	sample_defaults(&p);
	p.temp = 0;
	p.repeat_penalty = 2.0f;
	p.frequency_penalty = 0.25f;
	p.presence_penalty = 0.5f;
	p.repeat_last_n = 4;
	init(&s, &mem, &p);
	/* token 1 twice, token 3 once; the window of 4 forgets token 7 */
	sample_accept(&s, 7);
	sample_accept(&s, 1);
	sample_accept(&s, 3);
	sample_accept(&s, 1);
	sample_accept(&s, 0);
	load(&s, L);
	sample_apply_penalties(&s);
	CHECK_NEAR(s.cand[1].logit, 3.0 / 2 - 2 * 0.25 - 0.5, 1e-6);
	CHECK_NEAR(s.cand[3].logit, -1.0 * 2 - 0.25 - 0.5, 1e-6);
	CHECK_NEAR(s.cand[0].logit, 1.0 / 2 - 0.25 - 0.5, 1e-6);
	CHECK_NEAR(s.cand[7].logit, 0.0, 1e-6);
	CHECK_NEAR(s.cand[2].logit, 2.0, 1e-6);
	/* greedy now prefers 5 (2.5) over the penalised 1 */
	CHECK_EQ_INT(sample_next(&s, L), 5);
	sample_free(&s);
}

TEST(sample_logit_bias_bans_and_favours)
{
	struct sample_params p;
	struct sampler s;
	struct llm_mem mem;

	sample_defaults(&p);
	p.temp = 0;
	p.n_bias = 2;
	p.bias[0].id = 1;
	p.bias[0].bias = -1e30f;
	p.bias[1].id = 6;
	p.bias[1].bias = 6.0f;
	init(&s, &mem, &p);
	CHECK_EQ_INT(sample_next(&s, L), 6);
	p.bias[1].bias = 0;
	sample_reset(&s, &p);
	CHECK_EQ_INT(sample_next(&s, L), 5);
	sample_free(&s);
}

TEST(sample_top_k_top_p_min_p_and_typical_keep_the_right_tokens)
{
	struct sample_params p;
	struct sampler s;
	struct llm_mem mem;

	sample_defaults(&p);
	init(&s, &mem, &p);

	load(&s, L);
	sample_top_k(&s, 3);
	CHECK_EQ_INT(s.n_cand, 3);
	CHECK_EQ_INT(s.cand[0].id, 1);
	CHECK_EQ_INT(s.cand[1].id, 5);
	CHECK_EQ_INT(s.cand[2].id, 2);

	/* softmax of L: p(1) = .40, p(5) = .24, p(2) = .15, ...: 0.5 needs two */
	load(&s, L);
	sample_top_p(&s, 0.5f);
	CHECK_EQ_INT(s.n_cand, 2);
	CHECK(kept(&s, 1) && kept(&s, 5));

	/* min-p 0.3: p >= 0.3 * p(1) means logit >= 3 + ln 0.3 = 1.80 */
	load(&s, L);
	sample_min_p(&s, 0.3f);
	CHECK_EQ_INT(s.n_cand, 3);
	CHECK(kept(&s, 1) && kept(&s, 5) && kept(&s, 2) && !kept(&s, 0));

	/* typical keeps the tokens nearest the entropy first; a small mass
	 * keeps one token that is not necessarily the most likely */
	load(&s, L);
	sample_typical(&s, 0.2f);
	CHECK(s.n_cand >= 1 && s.n_cand < NV);
	load(&s, L);
	sample_typical(&s, 1.0f);
	CHECK_EQ_INT(s.n_cand, NV);

	sample_softmax(&s);
	double sum = 0;
	for (uint32_t i = 0; i < s.n_cand; i++)
		sum += s.cand[i].p;
	CHECK_NEAR(sum, 1.0, 1e-5);
	sample_free(&s);
}

static void draw_many(struct sample_params *p, uint32_t *out, int n)
{
	struct sampler s;
	struct llm_mem mem;

	init(&s, &mem, p);
	for (int i = 0; i < n; i++)
		out[i] = sample_next(&s, L);
	sample_free(&s);
}

TEST(sample_seed_reproduces_a_run)
{
	struct sample_params p;
	uint32_t a[200], b[200], c[200];
	int hist[NV] = {0}, diff = 0;

	sample_defaults(&p);
	p.top_k = 0;
	p.top_p = 1;
	p.min_p = 0;
	p.temp = 1;
	p.seed = 1234;
	draw_many(&p, a, 200);
	draw_many(&p, b, 200);
	p.seed = 1235;
	draw_many(&p, c, 200);
	for (int i = 0; i < 200; i++) {
		CHECK_EQ_INT(a[i], b[i]);
		diff += a[i] != c[i];
		hist[a[i]]++;
	}
	CHECK(diff > 20);
	/* the most likely token is drawn most, the least likely rarely */
	CHECK(hist[1] > hist[2] && hist[1] > 50 && hist[6] < 10);
}

TEST(sample_temperature_sharpens)
{
	struct sample_params p;
	uint32_t a[200];
	int top = 0;

	sample_defaults(&p);
	p.top_k = 0;
	p.top_p = 1;
	p.min_p = 0;
	p.temp = 0.05f;
	draw_many(&p, a, 200);
	for (int i = 0; i < 200; i++)
		top += a[i] == 1;
	CHECK(top >= 195);
}

TEST(sample_top_k_1_is_greedy_at_any_temperature)
{
	struct sample_params p;
	uint32_t a[50];

	sample_defaults(&p);
	p.top_k = 1;
	p.temp = 5;
	draw_many(&p, a, 50);
	for (int i = 0; i < 50; i++)
		CHECK_EQ_INT(a[i], 1);
}

TEST(sample_mirostat2_adapts_mu)
{
	struct sample_params p;
	struct sampler s;
	struct llm_mem mem;
	uint32_t first;

	sample_defaults(&p);
	p.mirostat = 2;
	p.mirostat_tau = 0.1f;
	p.mirostat_eta = 0.1f;
	p.temp = 1;
	init(&s, &mem, &p);
	CHECK_NEAR(s.mu, 0.2, 1e-6);
	first = sample_next(&s, L);
	CHECK(first < NV);
	CHECK(s.mu != 0.2f);
	/* a low target surprise drives mu down until only the best token is left */
	for (int i = 0; i < 50; i++)
		sample_next(&s, L);
	int best = 0;
	for (int i = 0; i < 50; i++)
		best += sample_next(&s, L) == 1;
	CHECK(best > 40);
	sample_free(&s);
}

/* ---- the chain and its order ---- */

TEST(sample_defaults_are_llama_cpps)
{
	struct sample_params p;
	char order[128];

	/* llama.cpp common/common.h, common_params_sampling */
	sample_defaults(&p);
	CHECK_NEAR(p.temp, 0.8, 1e-7);
	CHECK_EQ_INT(p.top_k, 40);
	CHECK_NEAR(p.top_p, 0.95, 1e-7);
	CHECK_NEAR(p.min_p, 0.05, 1e-7);
	CHECK_NEAR(p.typical, 1.0, 0);
	CHECK_NEAR(p.top_nsigma, -1.0, 0);
	CHECK_NEAR(p.xtc_probability, 0.0, 0);
	CHECK_NEAR(p.xtc_threshold, 0.1, 1e-7);
	CHECK_NEAR(p.dynatemp_range, 0.0, 0);
	CHECK_NEAR(p.dynatemp_exp, 1.0, 0);
	CHECK_NEAR(p.repeat_penalty, 1.0, 0);
	CHECK_EQ_INT(p.repeat_last_n, 64);
	CHECK_NEAR(p.dry_multiplier, 0.0, 0);
	CHECK_NEAR(p.dry_base, 1.75, 0);
	CHECK_EQ_INT(p.dry_allowed_length, 2);
	CHECK_EQ_INT(p.dry_last_n, -1);
	CHECK_EQ_INT(p.mirostat, 0);
	CHECK_NEAR(p.mirostat_tau, 5.0, 0);
	CHECK_NEAR(p.mirostat_eta, 0.1, 1e-7);
	sample_order_format(&p, order, sizeof order);
	CHECK_STR(order, "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature");
}

TEST(sample_order_reads_llama_cpp_names_and_letters)
{
	struct sample_params p;
	const char *bad;
	size_t n;
	char out[128];

	sample_defaults(&p);
	CHECK_EQ_INT(sample_order_parse(&p, "penalties;dry;top_k;typ_p;top_p;min_p;xtc;temperature",
					&bad, &n), 0);
	CHECK_EQ_INT(p.n_order, 8);
	CHECK_EQ_INT(p.order[2], SAMPLE_TOP_K);
	CHECK_EQ_INT(p.order[7], SAMPLE_TEMPERATURE);
	/* llama.cpp's other spellings, and a sampler twice */
	CHECK_EQ_INT(sample_order_parse(&p, "top-k;nucleus;temp;top_k", &bad, &n), 0);
	sample_order_format(&p, out, sizeof out);
	CHECK_STR(out, "top_k;top_p;temperature;top_k");
	/* the letters (--sampling-seq), and a one-word name that is no letters */
	CHECK_EQ_INT(sample_order_parse(&p, "kyt", &bad, &n), 0);
	sample_order_format(&p, out, sizeof out);
	CHECK_STR(out, "top_k;typ_p;temperature");
	CHECK_EQ_INT(sample_order_parse(&p, "xtc", &bad, &n), 0);
	CHECK_EQ_INT(p.n_order, 1);
	CHECK_EQ_INT(p.order[0], SAMPLE_XTC);
	/* unknown names: the item is named, the order is kept */
	CHECK_EQ_INT(sample_order_parse(&p, "top_k;bogus;xtc", &bad, &n), -LLMK_EINVAL);
	CHECK_EQ_INT(n, 5);
	CHECK(!strncmp(bad, "bogus", 5));
	CHECK_EQ_INT(sample_order_parse(&p, "top_k;", &bad, &n), -LLMK_EINVAL);
	CHECK_EQ_INT(n, 0);
	CHECK_EQ_INT(sample_order_parse(&p, "", &bad, &n), -LLMK_EINVAL);
	CHECK_EQ_INT(sample_order_parse(&p, "kqt", &bad, &n), -LLMK_EINVAL);
	CHECK_EQ_INT(n, 3);
	CHECK_EQ_INT(sample_order_parse(&p, "infill", &bad, &n), -LLMK_EINVAL);
	CHECK_EQ_INT(sample_order_parse(&p, "kkkkkkkkkkkkkkkkk", &bad, &n), -LLMK_ERANGE);
	CHECK_EQ_INT(p.n_order, 1);
	CHECK_EQ_INT(p.order[0], SAMPLE_XTC);
	/* sixteen names do not fit 128 bytes: shown as letters */
	CHECK_EQ_INT(sample_order_parse(&p, "ttttttttttttttte", &bad, &n), 0);
	sample_order_format(&p, out, sizeof out);
	CHECK_STR(out, "ttttttttttttttte");
}

TEST(sample_greedy_is_the_argmax_under_the_default_chain)
{
	struct fix f;
	struct sample_rng r;
	float l[100];

	sample_defaults(&f.p);
	f.p.temp = 0;
	llm_mem_init(&f.mem, 0);
	CHECK_EQ_INT(sample_init(&f.s, &f.mem, 100, FIX_CTX, &f.p), 0);
	sample_rng_seed(&r, 3);
	for (int round = 0; round < 500; round++) {
		uint32_t best = 0;
		for (int i = 0; i < 100; i++) {
			/* coarse values, so ties happen: the lower id wins them */
			l[i] = (float)(sample_rng_next(&r) % 64) * 0.25f - 8.0f;
			if (l[i] > l[best])
				best = (uint32_t)i;
		}
		CHECK_EQ_INT(sample_next(&f.s, l), best);
	}
	fix_free(&f);
}

TEST(sample_greedy_sees_dry_and_xtc_as_llama_cpp_does)
{
	struct fix f;
	static const uint32_t h[] = {0, 1, 2, 3, 0, 1, 2};
	float l[8] = {0, 0, 0, 1, 0, 0, 0, 0};

	/* temp 0 is an argmax after the chain: DRY takes 1.4 from token 3
	 * (see test_sample_rep.c), 1 - 1.4 < 0: token 0 wins the tie of zeros */
	sample_defaults(&f.p);
	f.p.temp = 0;
	fix_init(&f, 8);
	for (int i = 0; i < 7; i++)
		sample_accept(&f.s, h[i]);
	CHECK_EQ_INT(sample_next(&f.s, l), 3);
	f.s.par.dry_multiplier = 0.8f;
	CHECK_EQ_INT(sample_next(&f.s, l), 0);
	f.s.par.dry_multiplier = 0;

	/* XTC (always, threshold .2) on .5 .25 .125 .125 leaves .25 on top */
	l[0] = math_logf(4.0f);
	l[1] = math_logf(2.0f);
	l[3] = 0;
	for (int i = 4; i < 8; i++)
		l[i] = -INFINITY;
	f.s.par.xtc_probability = 1.0f;
	f.s.par.xtc_threshold = 0.2f;
	CHECK_EQ_INT(sample_next(&f.s, l), 1);
	fix_free(&f);
}

TEST(sample_order_changes_the_outcome)
{
	struct fix f;
	float l[4] = {math_logf(4.0f), math_logf(2.0f), 0, 0};
	const char *bad;
	size_t n;
	int ones = 0;

	/* p = .5 .25 .125 .125. top_p .7 then temperature .5: top-p keeps .5
	 * and .25 (.75 >= .7), the temperature squares the ratio: .8 and .2.
	 * Temperature first: p ~ 16 4 1 1, so .727 alone reaches .7: always 0. */
	fix_params(&f.p);
	f.p.temp = 0.5f;
	f.p.top_p = 0.7f;
	CHECK_EQ_INT(sample_order_parse(&f.p, "temperature;top_p", &bad, &n), 0);
	fix_init(&f, 4);
	for (int i = 0; i < 500; i++)
		CHECK_EQ_INT(sample_next(&f.s, l), 0);
	CHECK_EQ_INT(sample_order_parse(&f.p, "top_p;temperature", &bad, &n), 0);
	CHECK_EQ_INT(sample_reset(&f.s, &f.p), 0);
	for (int i = 0; i < 2000; i++) {
		uint32_t id = sample_next(&f.s, l);
		CHECK(id <= 1);
		ones += id == 1;
	}
	/* binomial(2000, .2): mean 400, sd 18 */
	CHECK(ones > 330 && ones < 470);
	fix_free(&f);
}

/* logits -s ln(i + 1): p_i is proportional to (i + 1)^-s, a Zipf law, whose
 * exponent Mirostat's estimate finds exactly: b_i = ln(p_i / p_(i+1)) =
 * s ln((i+2)/(i+1)) = s t_i, so sum t_i b_i / sum t_i^2 = s. */
static void zipf(float *l, int n, float s)
{
	for (int i = 0; i < n; i++)
		l[i] = -s * math_logf((float)(i + 1));
}

TEST(sample_mirostat1_cuts_to_the_estimated_k)
{
	struct fix f;
	float l[8];
	static const struct {
		float tau;
		uint32_t k;
	} want[] = {
		/* s = 1.5, eps = .5, N = 8: 1 - 8^-.5 = .646447, mu = 2 tau;
		 * k = (.5 * 2^mu / .646447)^(1/1.5):
		 * tau .1: (.5 * 1.148698 / .646447)^(2/3) = .888477^(2/3) = .924 -> 1
		 * tau 1:  (.5 * 4 / .646447)^(2/3) = 3.093836^(2/3) = 2.123 -> 2
		 * tau 2:  (.5 * 16 / .646447)^(2/3) = 12.375346^(2/3) = 5.350 -> 5
		 * tau 5:  (.5 * 1024 / .646447)^(2/3) = 85.6 -> all 8 */
		{0.1f, 1}, {1.0f, 2}, {2.0f, 5}, {5.0f, 8},
	};

	zipf(l, 8, 1.5f);
	fix_params(&f.p);
	f.p.mirostat = 1;
	fix_init(&f, 8);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		f.p.mirostat_tau = want[i].tau;
		CHECK_EQ_INT(sample_reset(&f.s, &f.p), 0);
		fix_load(&f, l);
		sample_mirostat1_top_k(&f.s);
		CHECK_EQ_INT(f.s.n_cand, want[i].k);
		CHECK_EQ_INT(f.s.cand[0].id, 0);
	}
	fix_free(&f);
}

TEST(sample_mirostat1_estimates_from_the_first_100_tokens)
{
	struct fix f;
	float l[200];

	/* Zipf 1.5 for the first 100 tokens, then a cliff of 30 nats: the
	 * pair (99, 100) is past m - 1 = 99 pairs and must not count. N = 200:
	 * 1 - 200^-.5 = .929289; tau 4 (mu 8): (.5 * 256 / .929289)^(2/3) =
	 * 137.74^(2/3) = 26.67 -> 26; tau 3: (.5 * 64 / .929289)^(2/3) =
	 * 10.58 -> 10. With the cliff's pair, s would be 1.81 and k(tau 4) 19. */
	zipf(l, 100, 1.5f);
	for (int i = 100; i < 200; i++)
		l[i] = l[99] - 30.0f - 0.01f * (float)(i - 100);
	fix_params(&f.p);
	f.p.mirostat = 1;
	f.p.mirostat_tau = 4.0f;
	fix_init(&f, 200);
	fix_load(&f, l);
	sample_mirostat1_top_k(&f.s);
	CHECK_EQ_INT(f.s.n_cand, 26);
	f.p.mirostat_tau = 3.0f;
	sample_reset(&f.s, &f.p);
	fix_load(&f, l);
	sample_mirostat1_top_k(&f.s);
	CHECK_EQ_INT(f.s.n_cand, 10);
	fix_free(&f);
}

TEST(sample_mirostat1_moves_mu_by_the_surprise)
{
	struct fix f;
	float l[8];
	int seen[2] = {0, 0};

	/* tau 1: mu = 2, k = 2 (above); the two are 1 : 2^-1.5, p = .738796
	 * and .261204, surprises -log2 p = .436752 and 1.936752 bits;
	 * mu -= .1 (surprise - 1): 2.056325 or 1.906325 */
	zipf(l, 8, 1.5f);
	fix_params(&f.p);
	f.p.mirostat = 1;
	f.p.mirostat_tau = 1.0f;
	f.p.mirostat_eta = 0.1f;
	fix_init(&f, 8);
	for (uint64_t seed = 1; seed <= 40; seed++) {
		f.p.seed = seed;
		sample_reset(&f.s, &f.p);
		uint32_t id = sample_next(&f.s, l);
		CHECK(id <= 1);
		if (id > 1)
			continue;
		seen[id]++;
		CHECK_NEAR(f.s.mu, id == 0 ? 2.056325 : 1.906325, 1e-5);
	}
	CHECK(seen[0] > 0 && seen[1] > 0);
	/* temp 0 is greedy under Mirostat too */
	f.p.temp = 0;
	sample_reset(&f.s, &f.p);
	CHECK_EQ_INT(sample_next(&f.s, l), 0);
	fix_free(&f);
}

TEST(sample_zeroize_clears_the_history_and_dry_state)
{
	struct fix f;
	const float l[8] = {1, 3, 2, -1, 0.5f, 2.5f, -3, 0};
	bool clean = true;

	fix_params(&f.p);
	f.p.dry_multiplier = 0.8f;
	f.p.repeat_penalty = 1.3f;
	fix_init(&f, 8);
	sample_dry_breaker(&f.s, 6, "\"", 1);
	for (int i = 0; i < 100; i++)
		sample_accept(&f.s, (uint32_t)(i % 5) + 1);
	sample_next(&f.s, l);
	sample_zeroize(&f.s);
	for (uint32_t i = 0; i < f.s.hist_cap; i++)
		clean = clean && f.s.hist[i] == 0 && f.s.zbuf[i] == 0;
	for (uint32_t i = 0; i < 8; i++)
		clean = clean && f.s.tally[i] == 0 && f.s.cand[i].id == 0 &&
			f.s.cand[i].logit == 0 && f.s.cand[i].p == 0;
	for (int i = 0; i < 4; i++)
		clean = clean && f.s.rng.s[i] == 0;
	CHECK(clean);
	CHECK(f.s.hist_len == 0 && f.s.mu == 0 && f.s.par.dry_multiplier == 0);
	CHECK_EQ_INT(f.s.breaker[0], 1u << 6); /* from the vocabulary, kept */
	fix_free(&f);
}
