/*
 * tests/unit/test_model_arch.c — the architecture variants stories260K does
 * not exercise (qwen2's QKV biases and NeoX rotation, tied output, llama3
 * frequency factors, linear RoPE scaling, GQA, partial rotary dims), each on
 * a small random GGUF written here, against a plain double-precision forward
 * pass written from the papers (no cache: every position recomputed).
 */
#include "test.h"
#include "model_fixture.h"
#include "../../llm/model.h"

#include <stdlib.h>

/* ---- a minimal GGUF v3 writer (all tensors F32) ---- */
struct gw {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct gw *w, const void *x, size_t n)
{
	if (w->n + n > w->cap) {
		w->cap = (w->n + n) * 2 + 4096;
		w->p = realloc(w->p, w->cap);
	}
	memcpy(w->p + w->n, x, n);
	w->n += n;
}

static void put_u32(struct gw *w, uint32_t v) { put(w, &v, 4); }
static void put_u64(struct gw *w, uint64_t v) { put(w, &v, 8); }
static void put_str(struct gw *w, const char *s)
{
	put_u64(w, strlen(s));
	put(w, s, strlen(s));
}

static void kv_str(struct gw *w, const char *k, const char *v)
{
	put_str(w, k);
	put_u32(w, GGUF_VT_STRING);
	put_str(w, v);
}

static void kv_u32(struct gw *w, const char *k, uint32_t v)
{
	put_str(w, k);
	put_u32(w, GGUF_VT_UINT32);
	put_u32(w, v);
}

static void kv_f32(struct gw *w, const char *k, float v)
{
	put_str(w, k);
	put_u32(w, GGUF_VT_FLOAT32);
	put(w, &v, 4);
}

struct cfg {
	const char *arch;
	uint32_t n_layer, n_embd, n_head, n_head_kv, n_ff, n_vocab, rope_dim;
	float base, linear; /* linear: rope.scaling.factor, 0 = none */
	bool tied, bias, freqs;
};

struct tensor {
	char name[64];
	uint64_t ne0, ne1;
	float *data;
};

struct synth {
	struct cfg c;
	struct tensor t[64];
	int n;
	uint8_t *file;
	size_t len;
};

static uint64_t rng_state;
static float frand(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((rng_state >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

static struct tensor *add(struct synth *s, const char *name, uint64_t ne0, uint64_t ne1,
			  float scale, float offset)
{
	struct tensor *t = &s->t[s->n++];
	snprintf(t->name, sizeof t->name, "%s", name);
	t->ne0 = ne0;
	t->ne1 = ne1;
	t->data = malloc(ne0 * ne1 * sizeof(float));
	for (uint64_t i = 0; i < ne0 * ne1; i++)
		t->data[i] = offset + scale * frand();
	return t;
}

static const float *get(const struct synth *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->t[i].name, name))
			return s->t[i].data;
	return NULL;
}

static void synth_write(struct synth *s);

static void synth_build(struct synth *s, const struct cfg *c)
{
	uint32_t hd = c->n_embd / c->n_head, Q = c->n_embd, KV = c->n_head_kv * hd;
	char name[64];

	memset(s, 0, sizeof *s);
	s->c = *c;
	rng_state = 12345;
	add(s, "token_embd.weight", c->n_embd, c->n_vocab, 1.0f, 0);
	add(s, "output_norm.weight", c->n_embd, 1, 0.2f, 1.0f);
	if (!c->tied)
		add(s, "output.weight", c->n_embd, c->n_vocab, 0.3f, 0);
	if (c->freqs)
		add(s, "rope_freqs.weight", c->rope_dim / 2, 1, 0.5f, 2.0f);
	for (uint32_t l = 0; l < c->n_layer; l++) {
		static const char *const sfx[] = {"attn_norm.weight", "attn_q.weight",
			"attn_k.weight", "attn_v.weight", "attn_output.weight", "ffn_norm.weight",
			"ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"};
		const uint64_t sh[][2] = {{Q, 1}, {Q, Q}, {Q, KV}, {Q, KV}, {Q, Q}, {Q, 1},
					  {Q, c->n_ff}, {Q, c->n_ff}, {c->n_ff, Q}};
		for (int i = 0; i < 9; i++) {
			snprintf(name, sizeof name, "blk.%u.%s", l, sfx[i]);
			bool norm = sh[i][1] == 1;
			add(s, name, sh[i][0], sh[i][1], norm ? 0.2f : 0.25f, norm ? 1.0f : 0);
		}
		if (c->bias) {
			snprintf(name, sizeof name, "blk.%u.attn_q.bias", l);
			add(s, name, Q, 1, 0.5f, 0);
			snprintf(name, sizeof name, "blk.%u.attn_k.bias", l);
			add(s, name, KV, 1, 0.5f, 0);
			snprintf(name, sizeof name, "blk.%u.attn_v.bias", l);
			add(s, name, KV, 1, 0.5f, 0);
		}
	}

	synth_write(s);
}

/* The GGUF of s's tensors, as they are now, into s->file. */
static void synth_write(struct synth *s)
{
	const struct cfg *c = &s->c;
	struct gw w = {0};
	char key[96];

	free(s->file);
	put(&w, "GGUF", 4);
	put_u32(&w, 3);
	put_u64(&w, (uint64_t)s->n);
	put_u64(&w, 9 + (c->linear ? 2 : 0));
	kv_str(&w, "general.architecture", c->arch);
#define K(sfx) (snprintf(key, sizeof key, "%s.%s", c->arch, sfx), key)
	kv_u32(&w, K("block_count"), c->n_layer);
	kv_u32(&w, K("embedding_length"), c->n_embd);
	kv_u32(&w, K("feed_forward_length"), c->n_ff);
	kv_u32(&w, K("attention.head_count"), c->n_head);
	kv_u32(&w, K("attention.head_count_kv"), c->n_head_kv);
	kv_u32(&w, K("context_length"), 64);
	kv_u32(&w, K("rope.dimension_count"), c->rope_dim);
	kv_f32(&w, K("rope.freq_base"), c->base);
	if (c->linear) {
		kv_str(&w, K("rope.scaling.type"), "linear");
		kv_f32(&w, K("rope.scaling.factor"), c->linear);
	}
#undef K
	uint64_t off = 0;
	for (int i = 0; i < s->n; i++) {
		put_str(&w, s->t[i].name);
		put_u32(&w, s->t[i].ne1 > 1 ? 2 : 1);
		put_u64(&w, s->t[i].ne0);
		if (s->t[i].ne1 > 1)
			put_u64(&w, s->t[i].ne1);
		put_u32(&w, GGML_TYPE_F32);
		put_u64(&w, off);
		off += (s->t[i].ne0 * s->t[i].ne1 * 4 + 31) & ~31ull;
	}
	while (w.n % 32)
		put(&w, "", 1);
	for (int i = 0; i < s->n; i++) {
		size_t b = s->t[i].ne0 * s->t[i].ne1 * 4;
		put(&w, s->t[i].data, b);
		while (b % 32) {
			put(&w, "", 1);
			b++;
		}
	}
	s->file = w.p;
	s->len = w.n;
}

static void synth_free(struct synth *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->t[i].data);
	free(s->file);
}

/* ---- the reference: double precision, whole sequence each time ---- */
static void ref_rmsnorm(double *o, const double *x, const float *w, uint32_t n)
{
	double ss = 0;
	for (uint32_t i = 0; i < n; i++)
		ss += x[i] * x[i];
	ss = 1.0 / sqrt(ss / n + 1e-5);
	for (uint32_t i = 0; i < n; i++)
		o[i] = x[i] * ss * w[i];
}

/* out[r] = sum_k W[r][k] x[k], W rows of cols (GGUF ne0) */
static void ref_mv(double *o, const float *W, const double *x, uint64_t cols, uint64_t rows)
{
	for (uint64_t r = 0; r < rows; r++) {
		double s = 0;
		for (uint64_t k = 0; k < cols; k++)
			s += W[r * cols + k] * x[k];
		o[r] = s;
	}
}

static void ref_rope(const struct synth *s, double *v, uint32_t pos)
{
	const struct cfg *c = &s->c;
	const float *ff = get(s, "rope_freqs.weight");
	uint32_t half = c->rope_dim / 2;
	bool neox = model_arch_find(c->arch)->rope == MODEL_ROPE_NEOX;

	for (uint32_t i = 0; i < half; i++) {
		double th = pos * pow(c->base, -2.0 * i / c->rope_dim);
		if (c->linear)
			th /= c->linear;
		if (ff)
			th /= ff[i];
		uint32_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
		double x0 = v[a], x1 = v[b];
		v[a] = x0 * cos(th) - x1 * sin(th);
		v[b] = x0 * sin(th) + x1 * cos(th);
	}
}

/* A test's own traits for the model under test (NULL: its row's), so a
 * trait no architecture row has yet is checked against the reference. */
static const struct model_arch *arch_override;

/* Logits of the last of toks[0..n). */
static void ref_forward(const struct synth *s, const int32_t *toks, uint32_t n, double *logits)
{
	const struct cfg *c = &s->c;
	uint32_t E = c->n_embd, hd = E / c->n_head, KV = c->n_head_kv * hd, F = c->n_ff;
	double *x = calloc((size_t)n * E, sizeof *x), *K = calloc((size_t)n * KV, sizeof *K);
	double *V = calloc((size_t)n * KV, sizeof *V), *q = calloc((size_t)n * E, sizeof *q);
	double xb[512], att[512], h1[512], h2[512], o[512], sc[64];
	char nm[64];

	for (uint32_t p = 0; p < n; p++)
		for (uint32_t i = 0; i < E; i++)
			x[p * E + i] = get(s, "token_embd.weight")[(size_t)toks[p] * E + i] *
				       (arch_override && arch_override->embd_scale ? sqrt((double)E) : 1.0);
	for (uint32_t l = 0; l < c->n_layer; l++) {
#define W(sfx) (snprintf(nm, sizeof nm, "blk.%u.%s", l, sfx), get(s, nm))
		for (uint32_t p = 0; p < n; p++) {
			ref_rmsnorm(xb, x + p * E, W("attn_norm.weight"), E);
			ref_mv(q + p * E, W("attn_q.weight"), xb, E, E);
			ref_mv(K + p * KV, W("attn_k.weight"), xb, E, KV);
			ref_mv(V + p * KV, W("attn_v.weight"), xb, E, KV);
			if (c->bias) {
				for (uint32_t i = 0; i < E; i++)
					q[p * E + i] += W("attn_q.bias")[i];
				for (uint32_t i = 0; i < KV; i++) {
					K[p * KV + i] += W("attn_k.bias")[i];
					V[p * KV + i] += W("attn_v.bias")[i];
				}
			}
			for (uint32_t h = 0; h < c->n_head; h++)
				ref_rope(s, q + p * E + h * hd, p);
			for (uint32_t h = 0; h < c->n_head_kv; h++)
				ref_rope(s, K + p * KV + h * hd, p);
		}
		for (uint32_t p = 0; p < n; p++) {
			for (uint32_t h = 0; h < c->n_head; h++) {
				uint32_t g = h / (c->n_head / c->n_head_kv);
				double mx = -1e300, sum = 0;
				for (uint32_t t = 0; t <= p; t++) {
					double d = 0;
					for (uint32_t i = 0; i < hd; i++)
						d += q[p * E + h * hd + i] * K[t * KV + g * hd + i];
					sc[t] = d / sqrt((double)hd);
					mx = sc[t] > mx ? sc[t] : mx;
				}
				for (uint32_t t = 0; t <= p; t++)
					sum += (sc[t] = exp(sc[t] - mx));
				for (uint32_t i = 0; i < hd; i++) {
					double a = 0;
					for (uint32_t t = 0; t <= p; t++)
						a += sc[t] / sum * V[t * KV + g * hd + i];
					att[h * hd + i] = a;
				}
			}
			ref_mv(o, W("attn_output.weight"), att, E, E);
			for (uint32_t i = 0; i < E; i++)
				x[p * E + i] += o[i];
			ref_rmsnorm(xb, x + p * E, W("ffn_norm.weight"), E);
			ref_mv(h1, W("ffn_gate.weight"), xb, E, F);
			ref_mv(h2, W("ffn_up.weight"), xb, E, F);
			for (uint32_t i = 0; i < F; i++)
				h1[i] = h1[i] / (1 + exp(-h1[i])) * h2[i];
			ref_mv(o, W("ffn_down.weight"), h1, F, E);
			for (uint32_t i = 0; i < E; i++)
				x[p * E + i] += o[i];
		}
#undef W
	}
	ref_rmsnorm(xb, x + (size_t)(n - 1) * E, get(s, "output_norm.weight"), E);
	ref_mv(logits, get(s, c->tied ? "token_embd.weight" : "output.weight"), xb, E, c->n_vocab);
	free(x);
	free(K);
	free(V);
	free(q);
}

/* ---- engine vs reference: prefill 7 tokens, then 3 decode steps ---- */
static void check_arch(const struct cfg *c, uint32_t kv_type, uint32_t n_batch)
{
	struct synth s;
	struct tmodel t;
	int32_t toks[10] = {3, 17, 42, 5, 99, 0, 64, 23, 8, 71};
	double ref[256], worst = 0;
	int e;

	synth_build(&s, c);
	e = tmodel_read(&t, s.file, s.len, c->arch);
	CHECK_EQ_INT(e, 0);
	if (arch_override)
		t.hp.arch = arch_override;
	CHECK_EQ_INT(t.hp.tied_output, c->tied);
	CHECK_EQ_INT(t.hp.qkv_bias, c->bias);
	CHECK_EQ_INT(t.hp.rope_freqs, c->freqs);
	if (!e)
		e = tmodel_load(&t, kv_type, 16, n_batch, 2);
	if (!e)
		e = model_forward(&t.m, &t.s, &t.mm, &t.kv, toks, 7, 0, true);
	CHECK_EQ_INT(e, 0);
	for (uint32_t n = 7; !e && n <= 10; n++) {
		ref_forward(&s, toks, n, ref);
		for (uint32_t i = 0; i < c->n_vocab; i++) {
			double d = fabs(t.s.logits[i] - ref[i]);
			worst = d > worst ? d : worst;
		}
		if (n < 10)
			CHECK_EQ_INT(model_forward(&t.m, &t.s, &t.mm, &t.kv, &toks[n], 1, n, true), 0);
	}
	double tol = kv_type == GGML_TYPE_F32 ? 2e-3 : 5e-2;
	if (worst > tol)
		fprintf(stderr, "  %s%s%s%s: logits off by %g\n", c->arch, c->tied ? " tied" : "",
			c->freqs ? " freqs" : "", c->linear ? " linear" : "", worst);
	CHECK(worst <= tol);
	tmodel_close(&t);
	synth_free(&s);
}

TEST(model_arch_llama_gqa_untied)
{
	struct cfg c = {"llama", 2, 64, 4, 2, 96, 100, 16, 10000, 0, false, false, false};
	check_arch(&c, GGML_TYPE_F32, 64);
	check_arch(&c, GGML_TYPE_F32, 2);
}

TEST(model_arch_llama3_freq_factors_tied_linear_scaling)
{
	struct cfg c = {"llama", 2, 64, 4, 1, 96, 100, 16, 500000, 2.0f, true, false, true};
	check_arch(&c, GGML_TYPE_F32, 64);
}

TEST(model_arch_qwen2_bias_neox_partial_rope)
{
	struct cfg c = {"qwen2", 2, 64, 4, 2, 96, 100, 16, 1000000, 0, true, true, false};
	check_arch(&c, GGML_TYPE_F32, 64);
	c.rope_dim = 8; /* rotate half of each head */
	check_arch(&c, GGML_TYPE_F32, 3);
}

/* Gemma's embedding scale (x sqrt(n_embd)), a trait no supported row has
 * yet, on a llama model. */
TEST(model_arch_embedding_scale)
{
	static const struct model_arch scaled = {.name = "llama", .rope = MODEL_ROPE_NORM,
						 .act = MODEL_ACT_SILU, .norm = MODEL_NORM_RMS,
						 .embd_scale = true};
	struct cfg c = {"llama", 2, 64, 4, 2, 96, 100, 16, 10000, 0, false, false, false};

	arch_override = &scaled;
	check_arch(&c, GGML_TYPE_F32, 64);
	arch_override = NULL;
}

TEST(model_arch_f16_cache_close)
{
	struct cfg c = {"qwen2", 1, 64, 4, 2, 96, 100, 16, 1000000, 0, false, true, false};
	check_arch(&c, GGML_TYPE_F16, 64);
}

/* model_check_layout's answer for s's file as it is now (gguf_open's, if
 * that refuses it). */
static int layout_check(const struct synth *s, char *err, size_t errlen)
{
	struct tmodel t;
	int e = tmodel_read(&t, s->file, s->len, NULL);

	snprintf(err, errlen, "%s", t.err);
	tmodel_close(&t);
	return e;
}

/* Each layer tensor in turn given the right number of elements in the
 * wrong shape (half the row length, twice the rows): the layout check
 * refuses it, naming the tensor; the table of shapes is weights.c's. */
TEST(model_layout_refuses_each_layer_tensor_in_a_wrong_shape)
{
	struct cfg c = {"qwen2", 2, 64, 4, 2, 96, 100, 16, 1000000, 0, true, true, false};
	struct synth s;
	int refused = 0;

	synth_build(&s, &c);
	for (int i = 0; i < s.n; i++) {
		struct tensor *t = &s.t[i];
		char err[256];
		if (strncmp(t->name, "blk.1.", 6) != 0)
			continue;
		t->ne0 /= 2;
		t->ne1 *= 2;
		synth_write(&s);
		CHECK_EQ_INT(layout_check(&s, err, sizeof err), -LLMK_EFORMAT);
		CHECK(strstr(err, t->name) != NULL && strstr(err, "has shape") != NULL);
		t->ne0 *= 2;
		t->ne1 /= 2;
		refused++;
	}
	CHECK_EQ_INT(refused, 12); /* every slot of wt_layer_slots, biases included */
	synth_write(&s);
	synth_free(&s);
}

/* Biases are in every layer or none, as layer 0 says: a llama file whose
 * layer 1 alone carries one of Q/K/V's biases is refused by name (the
 * forward pass once added all three when it saw Q's: fuzz_load's find). */
TEST(model_layout_refuses_a_bias_in_a_later_layer_only)
{
	static const char *const which[] = {"blk.1.attn_q.bias", "blk.1.attn_k.bias",
					    "blk.1.attn_v.bias"};
	struct cfg c = {"llama", 2, 64, 4, 2, 96, 100, 16, 10000, 0, false, false, false};

	for (int i = 0; i < 3; i++) {
		struct synth s;
		char err[256] = "";

		synth_build(&s, &c);
		add(&s, which[i], i ? 32 : 64, 1, 0.5f, 0);
		synth_write(&s);
		CHECK_EQ_INT(layout_check(&s, err, sizeof err), -LLMK_EFORMAT);
		CHECK(strstr(err, which[i]) != NULL && strstr(err, "layer 0") != NULL);
		synth_free(&s);
	}
}
