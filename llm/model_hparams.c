/*
 * llm/model_hparams.c — the architectures (model_archs[]), the
 * hyperparameters read from GGUF metadata and the tensor layout check
 * (model.h). docs/architectures.md lists each row's traits and keys.
 */
#include "model.h"
#include "math.h"
#include "quant.h"

#include <float.h>

/* ---- hyperparameters ---- */
static int get_u32(const struct gguf_file *g, const struct model_hparams *hp, const char *sfx,
		   uint32_t *out, bool required, char *err, size_t errlen)
{
	char key[96];
	int e;

	plat_snprintf(key, sizeof key, "%s.%s", hp->arch_name, sfx);
	e = gguf_get_u32(g, key, out);
	if (e == -LLMK_ENOENT && !required)
		return 0;
	if (e == -LLMK_ENOENT)
		plat_snprintf(err, errlen, "model: metadata key '%s' missing", key);
	else if (e)
		plat_snprintf(err, errlen, "model: metadata key '%s' is not a 32-bit count "
			      "(per-layer arrays are not supported)", key);
	return e;
}

static int get_f32(const struct gguf_file *g, const struct model_hparams *hp, const char *sfx,
		   float *out, char *err, size_t errlen)
{
	char key[96];
	int e;

	plat_snprintf(key, sizeof key, "%s.%s", hp->arch_name, sfx);
	e = gguf_get_f32(g, key, out);
	if (e == -LLMK_ENOENT)
		return 0;
	if (e)
		plat_snprintf(err, errlen, "model: metadata key '%s' is not a number", key);
	return e;
}

/* A float hyperparameter must lie in [lo, hi] (NaN lies nowhere): every
 * range below starts at a normal number and ends at a finite one, so the
 * values derived from it (1 / factor, log(base), rsqrt(mean + eps)) stay
 * finite instead of turning the logits to NaN. */
static int check_f32(const struct model_hparams *hp, const char *sfx, float v, float lo,
		     float hi, const char *what, char *err, size_t errlen)
{
	if (v >= lo && v <= hi)
		return 0;
	plat_snprintf(err, errlen, "model: %s.%s = %g is not %s", hp->arch_name, sfx, (double)v,
		      what);
	return -LLMK_EFORMAT;
}

/* The architectures, by general.architecture (model.h). */
static const struct model_arch model_archs[] = {
	{.name = "llama", .rope = MODEL_ROPE_NORM, .act = MODEL_ACT_SILU, .norm = MODEL_NORM_RMS,
	 .moe = MODEL_MOE_OPTIONAL, .moe_norm = true},
	{.name = "qwen2", .rope = MODEL_ROPE_NEOX, .act = MODEL_ACT_SILU, .norm = MODEL_NORM_RMS,
	 .qkv_bias = true},
	{.name = "mistral3", .rope = MODEL_ROPE_NORM, .act = MODEL_ACT_SILU,
	 .norm = MODEL_NORM_RMS},
	{.name = "smollm3", .rope = MODEL_ROPE_NORM, .act = MODEL_ACT_SILU, .norm = MODEL_NORM_RMS,
	 .nope_every = 4},
	{.name = "granite", .rope = MODEL_ROPE_NORM, .act = MODEL_ACT_SILU, .norm = MODEL_NORM_RMS,
	 .scalars = true},
	{.name = "gemma", .rope = MODEL_ROPE_NEOX, .act = MODEL_ACT_GELU, .norm = MODEL_NORM_RMS,
	 .embd_scale = true},
	{.name = "gemma2", .rope = MODEL_ROPE_NEOX, .act = MODEL_ACT_GELU, .norm = MODEL_NORM_RMS,
	 .embd_scale = true, .post_norms = true, .attn_cap = 50.0f, .final_cap = true,
	 .final_cap_def = 30.0f, .swa_pattern = 2, .swa_def = 4096, .q_scale_embd_layers = 46},
	{.name = "gemma3", .rope = MODEL_ROPE_NEOX, .act = MODEL_ACT_GELU, .norm = MODEL_NORM_RMS,
	 .embd_scale = true, .post_norms = true, .qk_norm = true,
	 .swa_pattern = 6, .swa_rope_base = 10000.0f, .q_scale_embd_layers = 62},
	{.name = "phi3", .rope = MODEL_ROPE_NEOX, .act = MODEL_ACT_SILU, .norm = MODEL_NORM_RMS,
	 .fused = true, .longrope = true},
	{.name = "qwen3", .rope = MODEL_ROPE_NEOX, .act = MODEL_ACT_SILU, .norm = MODEL_NORM_RMS,
	 .qk_norm = true},
	{.name = "qwen2moe", .rope = MODEL_ROPE_NEOX, .act = MODEL_ACT_SILU,
	 .norm = MODEL_NORM_RMS, .qkv_bias = true, .moe = MODEL_MOE_ALWAYS, .moe_shexp = true},
	{.name = "qwen3moe", .rope = MODEL_ROPE_NEOX, .act = MODEL_ACT_SILU,
	 .norm = MODEL_NORM_RMS, .qk_norm = true, .moe = MODEL_MOE_ALWAYS, .moe_norm = true},
	{.name = "olmo2", .rope = MODEL_ROPE_NEOX, .act = MODEL_ACT_SILU, .norm = MODEL_NORM_RMS,
	 .qk_norm = true, .qk_norm_whole = true, .no_pre_norm = true, .post_norms = true,
	 .swa_refused = true},
};
#define N_ARCHS (sizeof model_archs / sizeof model_archs[0])

const struct model_arch *model_arch_at(size_t i)
{
	return i < N_ARCHS ? &model_archs[i] : NULL;
}

const struct model_arch *model_arch_find(const char *name)
{
	for (size_t i = 0; i < N_ARCHS; i++)
		if (strcmp(name, model_archs[i].name) == 0)
			return &model_archs[i];
	return NULL;
}

static int read_arch(struct model_hparams *hp, const struct gguf_file *g, char *err, size_t errlen)
{
	const struct gguf_str *s;

	if (gguf_get_str(g, "general.architecture", &s)) {
		plat_snprintf(err, errlen, "model: metadata key 'general.architecture' missing");
		return -LLMK_EFORMAT;
	}
	for (size_t i = 0; i < N_ARCHS && !hp->arch; i++)
		if (strcmp(s->s, model_archs[i].name) == 0)
			hp->arch = &model_archs[i];
	if (!hp->arch) {
		char names[160];
		size_t o = 0;
		for (size_t i = 0; i < N_ARCHS && o < sizeof names; i++)
			o += (size_t)plat_snprintf(names + o, sizeof names - o, "%s%s", i ? ", " : "",
						   model_archs[i].name);
		char what[48];
		gguf_safe_name(what, sizeof what, s->s, s->len);
		plat_snprintf(err, errlen, "model: architecture '%s' is not supported "
			      "(supported: %s)", what, names);
		return -LLMK_ENOTSUP;
	}
	plat_snprintf(hp->arch_name, sizeof hp->arch_name, "%s", s->s);
	if (gguf_get_str(g, "general.name", &s) == 0)
		plat_snprintf(hp->name, sizeof hp->name, "%s", s->s);
	return 0;
}

/* The original context yarn and LongRoPE ask for: 1 or more. */
static int orig_ctx_check(const struct model_hparams *hp, char *err, size_t errlen)
{
	if (hp->yarn_orig_ctx)
		return 0;
	plat_snprintf(err, errlen, "model: %s.rope.scaling.original_context_length = 0 is not "
		      "a context length", hp->arch_name);
	return -LLMK_EFORMAT;
}

/* YaRN's keys (llama.cpp _YARN_BETA_FAST/_SLOW): the betas positive and
 * finite. */
static int read_yarn(struct model_hparams *hp, const struct gguf_file *g, char *err,
		     size_t errlen)
{
	int e;

	hp->yarn_beta_fast = 32.0f;
	hp->yarn_beta_slow = 1.0f;
	if ((e = get_f32(g, hp, "rope.scaling.yarn_beta_fast", &hp->yarn_beta_fast, err,
			 errlen)) ||
	    (e = get_f32(g, hp, "rope.scaling.yarn_beta_slow", &hp->yarn_beta_slow, err,
			 errlen)) ||
	    (e = check_f32(hp, "rope.scaling.yarn_beta_fast", hp->yarn_beta_fast, FLT_MIN,
			   FLT_MAX, "a positive finite number", err, errlen)) ||
	    (e = check_f32(hp, "rope.scaling.yarn_beta_slow", hp->yarn_beta_slow, FLT_MIN,
			   FLT_MAX, "a positive finite number", err, errlen)))
		return e;
	return orig_ctx_check(hp, err, errlen);
}

/* The keys every scaling reads (llama.cpp LLM_KV_ROPE_SCALING_ORIG_CTX_LEN,
 * _ATTN_FACTOR): the original context 1 or more (yarn's ramp, LongRoPE's
 * choice of factors), the attention factor on cos and sin (phi3's LongRoPE:
 * sqrt(1 + ln(scale) / ln(original context))) positive and finite. */
static int read_orig_ctx(struct model_hparams *hp, const struct gguf_file *g, char *err,
			 size_t errlen)
{
	int e;

	hp->yarn_orig_ctx = hp->n_ctx_train;
	hp->rope_mscale = 1.0f;
	if ((e = get_u32(g, hp, "rope.scaling.original_context_length", &hp->yarn_orig_ctx,
			 false, err, errlen)) ||
	    (e = get_f32(g, hp, "rope.scaling.attn_factor", &hp->rope_mscale, err, errlen)) ||
	    (e = check_f32(hp, "rope.scaling.attn_factor", hp->rope_mscale, FLT_MIN, FLT_MAX,
			   "a positive finite number", err, errlen)))
		return e;
	return 0;
}

/* <arch>.rope.scaling.type: none, linear and yarn are supported (linear
 * divides positions by the factor: llama.cpp freq_scale = 1 / factor; yarn
 * mixes that with the unscaled frequencies pair by pair, rope_freq). */
static int read_rope_scaling(struct model_hparams *hp, const struct gguf_file *g,
			     char *err, size_t errlen)
{
	char key[96];
	const struct gguf_str *s;
	float factor = 0.0f;
	int e;

	hp->rope_scale = 1.0f;
	if ((e = read_orig_ctx(hp, g, err, errlen)))
		return e;
	plat_snprintf(key, sizeof key, "%s.rope.scaling.type", hp->arch_name);
	if (gguf_get_str(g, key, &s) == 0 && strcmp(s->s, "none") != 0 &&
	    strcmp(s->s, "linear") != 0 && strcmp(s->s, "yarn") != 0) {
		char what[40];
		gguf_safe_name(what, sizeof what, s->s, s->len);
		plat_snprintf(err, errlen, "model: rope scaling '%s' (%s) is not supported "
			      "(supported: none, linear, yarn)", what, key);
		return -LLMK_ENOTSUP;
	}
	hp->yarn = gguf_get_str(g, key, &s) == 0 && strcmp(s->s, "yarn") == 0;
	if (hp->yarn && (e = read_yarn(hp, g, err, errlen)))
		return e;
	if (gguf_get_str(g, key, &s) == 0 && strcmp(s->s, "none") == 0)
		return 0;
	const char *sfx = "rope.scaling.factor";
	if ((e = get_f32(g, hp, sfx, &factor, err, errlen)))
		return e;
	/* older converters wrote the linear factor as <arch>.rope.scale_linear */
	if (factor == 0.0f) {
		sfx = "rope.scale_linear";
		if ((e = get_f32(g, hp, sfx, &factor, err, errlen)))
			return e;
	}
	if (factor == 0.0f) /* 0: no scaling, as llama.cpp reads it */
		return 0;
	/* linear scaling stretches positions (the context grows by the factor) */
	if ((e = check_f32(hp, sfx, factor, 1.0f, FLT_MAX, "0 (none) or a finite number >= 1",
			   err, errlen)))
		return e;
	hp->rope_scale = 1.0f / factor;
	/* YaRN's attention temperature, on cos and sin (ggml rope_yarn) */
	if (hp->yarn)
		hp->rope_mscale *= 1.0f + 0.1f * math_logf(factor);
	return 0;
}

/* gemma2's soft-capping of scores and logits, gemma3's of logits, and
 * their sliding window (llama.cpp llama_model::load_hparams, LLM_ARCH_GEMMA2
 * and GEMMA3): caps 0 (none) or a positive finite number; a window of 0 is
 * none (gemma3 without the key: no sliding layers). */
static int read_caps(struct model_hparams *hp, const struct gguf_file *g, char *err,
		     size_t errlen)
{
	const struct model_arch *a = hp->arch;
	int e;

	hp->attn_cap = a->attn_cap;
	hp->final_cap = a->final_cap_def;
	hp->n_swa = a->swa_pattern ? a->swa_def : 0;
	if ((a->attn_cap != 0.0f &&
	     (e = get_f32(g, hp, "attn_logit_softcapping", &hp->attn_cap, err, errlen))) ||
	    (a->final_cap &&
	     (e = get_f32(g, hp, "final_logit_softcapping", &hp->final_cap, err, errlen))) ||
	    (a->swa_pattern &&
	     (e = get_u32(g, hp, "attention.sliding_window", &hp->n_swa, false, err, errlen))))
		return e;
	if (a->swa_refused) {
		uint32_t win = 0;
		if ((e = get_u32(g, hp, "attention.sliding_window", &win, false, err, errlen)))
			return e;
		if (win) {
			plat_snprintf(err, errlen, "model: %s.attention.sliding_window = %u: sliding-"
				      "window attention is not supported for %s", hp->arch_name, win,
				      a->name);
			return -LLMK_ENOTSUP;
		}
	}
	if ((hp->attn_cap != 0.0f &&
	     (e = check_f32(hp, "attn_logit_softcapping", hp->attn_cap, FLT_MIN, FLT_MAX,
			    "0 (none) or a positive finite number", err, errlen))) ||
	    (hp->final_cap != 0.0f &&
	     (e = check_f32(hp, "final_logit_softcapping", hp->final_cap, FLT_MIN, FLT_MAX,
			    "0 (none) or a positive finite number", err, errlen))))
		return e;
	return 0;
}

bool model_layer_swa(const struct model_hparams *hp, uint32_t l)
{
	uint32_t n = hp->arch->swa_pattern;

	return hp->n_swa && n && l % n < n - 1;
}

/* Granite's scalars (llama.cpp llama_model_granite::load_arch_hparams):
 * logit_scale required, the others optional (0: none); each finite and
 * positive. Other rows keep the neutral values. Keys no row reads but whose
 * meaning would change the graph are refused by name. */
static int read_scalars(struct model_hparams *hp, const struct gguf_file *g, char *err,
			size_t errlen)
{
	static const char *const refused[] = {"attention.temperature_scale",
					      "rope.scaling.finetuned"};
	float v[4] = {0, 0, 0, 0};
	static const char *const keys[4] = {"embedding_scale", "residual_scale",
					    "attention.scale", "logit_scale"};
	char key[96];
	int e;

	hp->embd_mul = hp->res_mul = hp->logit_mul = 1.0f;
	hp->att_scale = 1.0f / math_sqrtf((float)hp->head_dim);
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		plat_snprintf(key, sizeof key, "%s.%s", hp->arch_name, refused[i]);
		if (gguf_find(g, key)) {
			plat_snprintf(err, errlen, "model: metadata key '%s' is not supported", key);
			return -LLMK_ENOTSUP;
		}
	}
	/* gemma 2/3 27B: query_pre_attn_scalar = n_embd / n_head (llama.cpp
	 * tells it by the layer count) */
	if (hp->arch->q_scale_embd_layers && hp->n_layer == hp->arch->q_scale_embd_layers)
		hp->att_scale = 1.0f / math_sqrtf((float)(hp->n_embd / hp->n_head));
	if ((e = read_caps(hp, g, err, errlen)))
		return e;
	if (!hp->arch->scalars)
		return 0;
	for (int i = 0; i < 4; i++) {
		if ((e = get_f32(g, hp, keys[i], &v[i], err, errlen)))
			return e;
		if (v[i] == 0.0f && i < 3)
			continue;
		if ((e = check_f32(hp, keys[i], v[i], FLT_MIN, FLT_MAX,
				   i < 3 ? "0 (none) or a positive finite number"
					 : "a positive finite number", err, errlen)))
			return e;
	}
	if (v[0] != 0.0f)
		hp->embd_mul = v[0];
	if (v[1] != 0.0f)
		hp->res_mul = v[1];
	if (v[2] != 0.0f)
		hp->att_scale = v[2];
	hp->logit_mul = 1.0f / v[3];
	return 0;
}

/* The experts' keys (llama.cpp LLM_KV_EXPERT_*): a row that always has
 * experts needs expert_count and expert_used_count; llama has experts when
 * expert_count > 0 (Mixtral). 1 <= used <= count <= MODEL_MAX_EXPERTS; the
 * widths default as llama.cpp's (qwen2moe/qwen3moe: n_ff / used; the shared
 * expert n_ff) and each expert's a multiple of 16 rows (packed groups). */
static int read_experts(struct model_hparams *hp, const struct gguf_file *g, char *err,
			size_t errlen)
{
	const struct model_arch *a = hp->arch;
	int e;

	if (a->moe == MODEL_MOE_NONE)
		return 0;
	if ((e = get_u32(g, hp, "expert_count", &hp->n_expert, a->moe == MODEL_MOE_ALWAYS, err,
			 errlen)))
		return e;
	if (!hp->n_expert && a->moe == MODEL_MOE_OPTIONAL)
		return 0;
	if ((e = get_u32(g, hp, "expert_used_count", &hp->n_expert_used, true, err, errlen)))
		return e;
	if (!hp->n_expert || hp->n_expert > MODEL_MAX_EXPERTS || !hp->n_expert_used ||
	    hp->n_expert_used > hp->n_expert) {
		plat_snprintf(err, errlen, "model: %s.expert_count = %u, expert_used_count = %u: "
			      "1 <= used <= count <= %u", hp->arch_name, hp->n_expert,
			      hp->n_expert_used, MODEL_MAX_EXPERTS);
		return -LLMK_EFORMAT;
	}
	hp->n_ff_exp = a->moe == MODEL_MOE_ALWAYS ? hp->n_ff / hp->n_expert_used : hp->n_ff;
	hp->n_ff_shexp = a->moe_shexp ? hp->n_ff : 0;
	if ((a->moe == MODEL_MOE_ALWAYS &&
	     (e = get_u32(g, hp, "expert_feed_forward_length", &hp->n_ff_exp, false, err,
			  errlen))) ||
	    (a->moe_shexp &&
	     (e = get_u32(g, hp, "expert_shared_feed_forward_length", &hp->n_ff_shexp, false,
			  err, errlen))))
		return e;
	if (!hp->n_ff_exp || hp->n_ff_exp % 16 || hp->n_embd % 16 ||
	    (a->moe_shexp && !hp->n_ff_shexp)) {
		plat_snprintf(err, errlen, "model: %s experts %u wide (shared %u), embd %u: an "
			      "expert's rows must be a non-zero multiple of 16", hp->arch_name,
			      hp->n_ff_exp, hp->n_ff_shexp, hp->n_embd);
		return -LLMK_ENOTSUP;
	}
	return 0;
}

int model_read_hparams(struct model_hparams *hp, const struct gguf_file *g,
		       char *err, size_t errlen)
{
	const struct gguf_tensor *embd;
	int e;

	memset(hp, 0, sizeof *hp);
	if ((e = read_arch(hp, g, err, errlen)))
		return e;
	if ((e = get_u32(g, hp, "block_count", &hp->n_layer, true, err, errlen)) ||
	    (e = get_u32(g, hp, "embedding_length", &hp->n_embd, true, err, errlen)) ||
	    (e = get_u32(g, hp, "feed_forward_length", &hp->n_ff, true, err, errlen)) ||
	    (e = get_u32(g, hp, "attention.head_count", &hp->n_head, true, err, errlen)) ||
	    (e = get_u32(g, hp, "context_length", &hp->n_ctx_train, true, err, errlen)))
		return e;
	hp->n_head_kv = hp->n_head;
	if ((e = get_u32(g, hp, "attention.head_count_kv", &hp->n_head_kv, false, err, errlen)))
		return e;
	if (!hp->n_layer || !hp->n_embd || !hp->n_ff || !hp->n_head || !hp->n_head_kv ||
	    hp->n_head % hp->n_head_kv || hp->n_embd % hp->n_head || !hp->n_ctx_train) {
		plat_snprintf(err, errlen, "model: bad shape (layers %u, embd %u, ff %u, heads %u, "
			      "kv heads %u, context %u)", hp->n_layer, hp->n_embd, hp->n_ff,
			      hp->n_head, hp->n_head_kv, hp->n_ctx_train);
		return -LLMK_EFORMAT;
	}
	hp->head_dim = hp->n_embd / hp->n_head;
	uint32_t vlen = 0;
	if ((e = get_u32(g, hp, "attention.key_length", &hp->head_dim, false, err, errlen)) ||
	    (e = get_u32(g, hp, "attention.value_length", &vlen, false, err, errlen)))
		return e;
	if ((vlen && vlen != hp->head_dim) || !hp->head_dim || hp->head_dim % 2) {
		plat_snprintf(err, errlen, "model: key length %u / value length %u not supported",
			      hp->head_dim, vlen);
		return -LLMK_ENOTSUP;
	}
	/* a row of Q (heads x head size) is a 32-bit count from here on */
	if ((uint64_t)hp->n_head * hp->head_dim > UINT32_MAX) {
		plat_snprintf(err, errlen, "model: %s.attention.key_length = %u times %u heads "
			      "does not fit 32 bits", hp->arch_name, hp->head_dim, hp->n_head);
		return -LLMK_EFORMAT;
	}
	hp->rope_dim = hp->head_dim;
	hp->rope_base = 10000.0f;
	hp->norm_eps = 1e-5f;
	if ((e = get_u32(g, hp, "rope.dimension_count", &hp->rope_dim, false, err, errlen)) ||
	    (e = get_f32(g, hp, "rope.freq_base", &hp->rope_base, err, errlen)) ||
	    (e = get_f32(g, hp, "attention.layer_norm_rms_epsilon", &hp->norm_eps, err, errlen)))
		return e;
	/* base^(-2i/d): below 1 the frequencies grow with i instead of falling */
	if ((e = check_f32(hp, "rope.freq_base", hp->rope_base, 1.0f, FLT_MAX,
			   "a finite number >= 1", err, errlen)) ||
	    (e = check_f32(hp, "attention.layer_norm_rms_epsilon", hp->norm_eps, FLT_MIN, 1.0f,
			   "a positive normal number at most 1", err, errlen)) ||
	    (e = read_rope_scaling(hp, g, err, errlen)) ||
	    (e = read_scalars(hp, g, err, errlen)) ||
	    (e = read_experts(hp, g, err, errlen)))
		return e;
	if (!hp->rope_dim || hp->rope_dim > hp->head_dim || hp->rope_dim > MODEL_MAX_ROPE_DIM ||
	    hp->rope_dim % 2) {
		plat_snprintf(err, errlen, "model: %s.rope.dimension_count = %u is not an even "
			      "number from 2 to %u (head size %u)", hp->arch_name, hp->rope_dim,
			      hp->head_dim < MODEL_MAX_ROPE_DIM ? hp->head_dim : MODEL_MAX_ROPE_DIM,
			      hp->head_dim);
		return -LLMK_EFORMAT;
	}
	embd = gguf_find_tensor(g, "token_embd.weight");
	if (!embd) {
		plat_snprintf(err, errlen, "model: tensor 'token_embd.weight' missing");
		return -LLMK_EFORMAT;
	}
	/* token ids are int32; 0 rows would leave the head (and the streamer's
	 * head chunks) empty */
	if (embd->ne[1] == 0 || embd->ne[1] > INT32_MAX) {
		plat_snprintf(err, errlen, "model: tensor 'token_embd.weight' has %llu rows: a "
			      "vocabulary is 1 to %d tokens", (unsigned long long)embd->ne[1],
			      INT32_MAX);
		return -LLMK_EFORMAT;
	}
	hp->n_vocab = (uint32_t)embd->ne[1];
	hp->tied_output = gguf_find_tensor(g, "output.weight") == NULL;
	hp->rope_freqs = gguf_find_tensor(g, "rope_freqs.weight") != NULL;
	hp->longrope = gguf_find_tensor(g, "rope_factors_long.weight") != NULL;
	hp->qkv_bias = gguf_find_tensor(g, "blk.0.attn_q.bias") != NULL;
	hp->qk_norm = gguf_find_tensor(g, "blk.0.attn_q_norm.weight") != NULL;
	for (uint64_t i = 0; i < g->n_tensors; i++)
		hp->n_params += g->tensors[i].n_elems;
	return 0;
}

/* ---- layout check ---- */
static int check_tensor3(const struct gguf_file *g, const char *name, uint64_t ne0,
			 uint64_t ne1, uint64_t ne2, bool vec, bool optional, char *err,
			 size_t errlen)
{
	const struct gguf_tensor *t = gguf_find_tensor(g, name);
	const struct quant_type *q;

	if (!t) {
		if (optional)
			return 0;
		plat_snprintf(err, errlen, "model: tensor '%s' missing", name);
		return -LLMK_EFORMAT;
	}
	if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != ne2 || t->ne[3] != 1) {
		char third[32] = "";
		if (ne2 != 1) /* a layer's stacked experts */
			plat_snprintf(third, sizeof third, ", %llu", (unsigned long long)ne2);
		plat_snprintf(err, errlen, "model: tensor '%s' has shape [%llu, %llu, %llu], "
			      "expected [%llu, %llu%s]", name, (unsigned long long)t->ne[0],
			      (unsigned long long)t->ne[1], (unsigned long long)t->ne[2],
			      (unsigned long long)ne0, (unsigned long long)ne1, third);
		return -LLMK_EFORMAT;
	}
	/* The kernels read F32 values and the blocks' F16 scales in place, from
	 * buffers that keep the file's offsets modulo 512 (streaming) or the
	 * data section's (resident): both must be multiples of 4. gguf.md asks
	 * for a general.alignment that is a multiple of 8; 1 or 2 gets here. */
	if (t->offset % 4 || (t->offset - g->data_offset) % 4) {
		plat_snprintf(err, errlen, "model: tensor '%s' at offset 0x%llx (0x%llx into the "
			      "data section) is not 4-byte aligned (general.alignment = %u; gguf.md "
			      "asks for a multiple of 8)", name, (unsigned long long)t->offset,
			      (unsigned long long)(t->offset - g->data_offset), g->alignment);
		return -LLMK_EFORMAT;
	}
	if (vec && t->type != GGML_TYPE_F32) {
		plat_snprintf(err, errlen, "model: tensor '%s' is %s; 1-D tensors must be F32",
			      name, quant_name(t->type));
		return -LLMK_ENOTSUP;
	}
	q = quant_get(t->type);
	if (!q || !q->vec_dot || !q->to_float || ne0 % q->blck) {
		plat_snprintf(err, errlen, "model: tensor '%s' type %s (%u) is not supported",
			      name, quant_name(t->type), t->type);
		return -LLMK_ENOTSUP;
	}
	return 0;
}

static int check_tensor(const struct gguf_file *g, const char *name, uint64_t ne0, uint64_t ne1,
			bool vec, bool optional, char *err, size_t errlen)
{
	return check_tensor3(g, name, ne0, ne1, 1, vec, optional, err, errlen);
}

/* A dimension of wt_layer_slots' shapes in this model's sizes. */
static uint64_t dim(const struct model_hparams *hp, enum wt_dim d)
{
	switch (d) {
	case WT_DIM_1:
		return 1;
	case WT_DIM_EMBD:
		return hp->n_embd;
	case WT_DIM_Q:
		return (uint64_t)hp->n_head * hp->head_dim;
	case WT_DIM_KV:
		return (uint64_t)hp->n_head_kv * hp->head_dim;
	case WT_DIM_FF:
		return hp->n_ff;
	case WT_DIM_HEAD:
		return hp->head_dim;
	case WT_DIM_QKV:
		return (uint64_t)(hp->n_head + 2 * hp->n_head_kv) * hp->head_dim;
	case WT_DIM_UP:
		return (uint64_t)hp->n_ff * (hp->arch->fused ? 2 : 1);
	case WT_DIM_QNORM:
		return hp->arch->qk_norm_whole ? dim(hp, WT_DIM_Q) : hp->head_dim;
	case WT_DIM_KNORM:
		return hp->arch->qk_norm_whole ? dim(hp, WT_DIM_KV) : hp->head_dim;
	case WT_DIM_EXPERTS:
		return hp->n_expert;
	case WT_DIM_FF_EXP:
		return hp->n_ff_exp;
	case WT_DIM_FF_SHEXP:
		return hp->n_ff_shexp;
	}
	return 0;
}

static int check_layer(const struct model_hparams *hp, const struct gguf_file *g, uint32_t l,
		       char *err, size_t errlen)
{
	char name[96];
	int e;

	for (uint32_t s = 0; s < wt_n_layer_slots; s++) {
		const struct wt_slot *sl = &wt_layer_slots[s];
		char first[96];
		/* an optional tensor is in every layer or none, as layer 0 says */
		wt_tensor_name(first, sizeof first, 0, sl->suffix);
		bool optional = sl->optional && !gguf_find_tensor(g, first);
		wt_tensor_name(name, sizeof name, l, sl->suffix);
		if (optional && gguf_find_tensor(g, name)) {
			plat_snprintf(err, errlen, "model: tensor '%s' in a model whose layer 0 "
				      "has no '%s' (it is in every layer or none)", name, first);
			return -LLMK_EFORMAT;
		}
		if ((e = check_tensor3(g, name, dim(hp, sl->ne[0]), dim(hp, sl->ne[1]),
				       dim(hp, sl->ne[2]), sl->kind == WT_VEC, optional, err,
				       errlen)))
			return e;
	}
	return 0;
}

/* The FFN's tensors in layer 0 (as in all: an optional slot is in every
 * layer or none): dense ffn_up/ffn_down, or, in a model with experts, the
 * router and the stacked experts' gate, up and down (and qwen2moe's shared
 * expert); never both, never one of a kind's set alone. */
static int check_ffn_kind(const struct model_hparams *hp, const struct gguf_file *g, char *err,
			  size_t errlen)
{
	static const char *const dense[] = {"blk.0.ffn_up.weight", "blk.0.ffn_down.weight"};
	static const char *const moe[] = {"blk.0.ffn_gate_inp.weight", "blk.0.ffn_gate_exps.weight",
		"blk.0.ffn_up_exps.weight", "blk.0.ffn_down_exps.weight"};
	static const char *const shexp[] = {"blk.0.ffn_gate_inp_shexp.weight",
		"blk.0.ffn_gate_shexp.weight", "blk.0.ffn_up_shexp.weight",
		"blk.0.ffn_down_shexp.weight"};
	bool ex = hp->n_expert > 0;
	const char *bad = NULL;
	bool have = false;

	for (int i = 0; i < 2 && !bad; i++)
		if ((gguf_find_tensor(g, dense[i]) != NULL) == ex)
			bad = dense[i], have = ex;
	for (int i = 0; i < 4 && !bad; i++)
		if ((gguf_find_tensor(g, moe[i]) != NULL) != ex)
			bad = moe[i], have = !ex;
	for (int i = 0; i < 4 && !bad; i++)
		if ((gguf_find_tensor(g, shexp[i]) != NULL) != (ex && hp->arch->moe_shexp))
			bad = shexp[i], have = !(ex && hp->arch->moe_shexp);
	if (ex && !bad && gguf_find_tensor(g, "blk.0.ffn_gate.weight"))
		bad = "blk.0.ffn_gate.weight", have = true;
	if (!bad)
		return 0;
	plat_snprintf(err, errlen, "model: tensor '%s' %s: %s", bad, have ? "present" : "missing",
		      ex ? "a model of experts has ffn_gate_inp and ffn_{gate,up,down}_exps"
		      : hp->arch->moe == MODEL_MOE_NONE ? "mixtures of experts are not supported "
		      "for this architecture" : "a dense model (expert_count 0) has ffn_up and ffn_down");
	return have && (!ex && hp->arch->moe == MODEL_MOE_NONE) ? -LLMK_ENOTSUP : -LLMK_EFORMAT;
}

int model_check_layout(const struct model_hparams *hp, const struct gguf_file *g,
		       char *err, size_t errlen)
{
	int e;

	if (hp->arch->qkv_bias && !hp->qkv_bias) {
		plat_snprintf(err, errlen, "model: %s without 'blk.0.attn_q.bias' is not supported",
			      hp->arch->name);
		return -LLMK_ENOTSUP;
	}
	if (hp->arch->post_norms) {
		char name[96];
		wt_tensor_name(name, sizeof name, 0, "post_attention_norm.weight");
		if (!gguf_find_tensor(g, name) ||
		    !gguf_find_tensor(g, "blk.0.post_ffw_norm.weight")) {
			plat_snprintf(err, errlen, "model: %s without '%s' or "
				      "'blk.0.post_ffw_norm.weight' is not supported",
				      hp->arch->name, name);
			return -LLMK_ENOTSUP;
		}
	}
	/* the projections: separate, or (phi3) fused, in layer 0 as in all */
	bool sep = gguf_find_tensor(g, "blk.0.attn_q.weight") != NULL;
	bool fused = gguf_find_tensor(g, "blk.0.attn_qkv.weight") != NULL;
	bool gate = gguf_find_tensor(g, "blk.0.ffn_gate.weight") != NULL;
	const char *want = hp->arch->fused ? "blk.0.attn_qkv.weight" : "blk.0.attn_q.weight";
	if (sep == hp->arch->fused || fused != hp->arch->fused ||
	    (!hp->n_expert && gate == hp->arch->fused)) {
		const char *bad = sep == hp->arch->fused ? (sep ? "blk.0.attn_q.weight" : want)
			: fused != hp->arch->fused ? (fused ? "blk.0.attn_qkv.weight" : want)
			: (gate ? "blk.0.ffn_gate.weight" : "blk.0.ffn_gate.weight");
		bool have = gguf_find_tensor(g, bad) != NULL;
		plat_snprintf(err, errlen, "model: tensor '%s' %s: %s %s", bad,
			      have ? "present" : "missing", hp->arch->name,
			      hp->arch->fused ? "has fused Q/K/V and gate/up tensors (attn_qkv, "
					       "ffn_up)" : "has separate attn_q/k/v and ffn_gate tensors");
		return have ? -LLMK_ENOTSUP : -LLMK_EFORMAT;
	}
	/* LongRoPE: both factor tensors or neither, in a row that takes them,
	 * never with llama3's rope_freqs (llama.cpp would take those alone) */
	bool rlong = gguf_find_tensor(g, "rope_factors_long.weight") != NULL;
	bool rshort = gguf_find_tensor(g, "rope_factors_short.weight") != NULL;
	if (gguf_find_tensor(g, "blk.0.rope_factors_long.weight") ||
	    ((rlong || rshort) && !hp->arch->longrope)) {
		plat_snprintf(err, errlen, "model: LongRoPE (rope_factors_long.weight) is not "
			      "supported for %s", hp->arch->name);
		return -LLMK_ENOTSUP;
	}
	if (rlong != rshort || ((rlong || rshort) && hp->rope_freqs) ||
	    ((rlong || rshort) && hp->yarn)) {
		plat_snprintf(err, errlen, "model: tensor '%s' %s", rlong != rshort
			      ? (rlong ? "rope_factors_short.weight" : "rope_factors_long.weight")
			      : hp->rope_freqs ? "rope_freqs.weight" : "rope_factors_long.weight",
			      rlong != rshort ? "missing: LongRoPE needs long and short factors"
			      : hp->rope_freqs ? "beside LongRoPE's factors"
					       : "with yarn scaling is not supported");
		return rlong != rshort ? -LLMK_EFORMAT : -LLMK_ENOTSUP;
	}
	if (rlong && (e = orig_ctx_check(hp, err, errlen)))
		return e;
	if ((e = check_ffn_kind(hp, g, err, errlen)))
		return e;
	/* the norms before attention and FFN: in every row's models but olmo2's */
	bool pre = gguf_find_tensor(g, "blk.0.attn_norm.weight") != NULL;
	bool pre_ffn = gguf_find_tensor(g, "blk.0.ffn_norm.weight") != NULL;
	if (pre != !hp->arch->no_pre_norm || pre_ffn != !hp->arch->no_pre_norm) {
		const char *bad = pre != !hp->arch->no_pre_norm ? "blk.0.attn_norm.weight"
								 : "blk.0.ffn_norm.weight";
		plat_snprintf(err, errlen, "model: tensor '%s' %s: %s %s", bad,
			      hp->arch->no_pre_norm ? "present" : "missing", hp->arch->name,
			      hp->arch->no_pre_norm ? "has no norm before attention or FFN"
						    : "norms before attention and FFN");
		return hp->arch->no_pre_norm ? -LLMK_ENOTSUP : -LLMK_EFORMAT;
	}
	if (hp->arch->qk_norm && !hp->qk_norm) {
		plat_snprintf(err, errlen, "model: %s without 'blk.0.attn_q_norm.weight' is not "
			      "supported", hp->arch->name);
		return -LLMK_ENOTSUP;
	}
	if ((e = check_tensor(g, "token_embd.weight", hp->n_embd, hp->n_vocab, false, false,
			      err, errlen)) ||
	    (e = check_tensor(g, "output_norm.weight", hp->n_embd, 1, true, false, err, errlen)) ||
	    (e = check_tensor(g, "output.weight", hp->n_embd, hp->n_vocab, false, true,
			      err, errlen)) ||
	    (e = check_tensor(g, "rope_freqs.weight", hp->rope_dim / 2, 1, true, true,
			      err, errlen)) ||
	    (e = check_tensor(g, "rope_factors_long.weight", hp->rope_dim / 2, 1, true, true,
			      err, errlen)) ||
	    (e = check_tensor(g, "rope_factors_short.weight", hp->rope_dim / 2, 1, true, true,
			      err, errlen)))
		return e;
	for (uint32_t l = 0; l < hp->n_layer; l++)
		if ((e = check_layer(hp, g, l, err, errlen)))
			return e;
	return 0;
}

