/* tests/unit/test_sample.c — the sampling chain, step by step and end to end. */
#include "test.h"
#include "../../llm/sample.h"

#define NV 8

static void init(struct sampler *s, struct llm_mem *mem, struct sample_params *p)
{
	llm_mem_init(mem, 0);
	CHECK_EQ_INT(sample_init(s, mem, NV, p), 0);
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

TEST(sample_penalties)
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

TEST(sample_filters)
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
