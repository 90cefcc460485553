/*
 * tools/writer/mkmodel_write.c — writes synthetic GGUF models (mkmodel.h).
 *
 * Layout as llama.cpp's converter writes it (ggml docs/gguf.md): header,
 * metadata (architecture hyperparameters, an SPM vocabulary with byte
 * fallback), tensor infos, then each tensor's data at the next multiple of
 * 32 bytes. Tensor names and shapes follow llama.cpp (ne[0] = row length).
 */
#include "mkmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../llm/gguf.h"
#include "../../llm/model.h"
#include "../../llm/quant.h"

#define ALIGN 32
#define CHUNK_BYTES (4u << 20)

/* ---- types ---- */

/* Every weight type of the quant table by its name (quant_is_weight), and
 * llama-quantize's mix names: _S is the plain type, _M a mix (MKM_MIX_M). */
static const struct { const char *name; uint32_t type; enum mkm_mix mix; } mixes[] = {
	{"Q3_K_S", GGML_TYPE_Q3_K, MKM_MIX_DEFAULT}, {"Q4_K_S", GGML_TYPE_Q4_K, MKM_MIX_DEFAULT},
	{"Q5_K_S", GGML_TYPE_Q5_K, MKM_MIX_DEFAULT}, {"Q4_K_M", GGML_TYPE_Q4_K, MKM_MIX_M},
	{"Q5_K_M", GGML_TYPE_Q5_K, MKM_MIX_M},
};

const char *mkm_type_name(size_t i)
{
	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++)
		if (quant_is_weight(t) && i-- == 0)
			return quant_name(t);
	return i < sizeof mixes / sizeof mixes[0] ? mixes[i].name : NULL;
}

int mkm_parse_type(const char *s, uint32_t *type, enum mkm_mix *mix)
{
	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++)
		if (quant_is_weight(t) && strcasecmp(s, quant_name(t)) == 0) {
			*type = t;
			*mix = MKM_MIX_DEFAULT;
			return 0;
		}
	for (size_t i = 0; i < sizeof mixes / sizeof mixes[0]; i++)
		if (strcasecmp(s, mixes[i].name) == 0) {
			*type = mixes[i].type;
			*mix = mixes[i].mix;
			return 0;
		}
	return -1;
}

/* llama.cpp's ftype (general.file_type) for the spec; -1 for a type it
 * names no ftype for here (the key is then left out). */
static int file_type(const struct mkm_spec *s)
{
	bool m = s->mix == MKM_MIX_M;

	switch (s->type) {
	case GGML_TYPE_F32: return 0;
	case GGML_TYPE_F16: return 1;
	case GGML_TYPE_Q4_0: return 2;
	case GGML_TYPE_Q4_1: return 3;
	case GGML_TYPE_Q8_0: return 7;
	case GGML_TYPE_Q5_0: return 8;
	case GGML_TYPE_Q5_1: return 9;
	case GGML_TYPE_Q2_K: return 10;
	case GGML_TYPE_Q3_K: return 11;
	case GGML_TYPE_Q4_K: return m ? 15 : 14;
	case GGML_TYPE_Q5_K: return m ? 17 : 16;
	case GGML_TYPE_Q6_K: return 18;
	case GGML_TYPE_IQ4_NL: return 25;
	case GGML_TYPE_IQ4_XS: return 30;
	case GGML_TYPE_BF16: return 32;
	default: return -1;
	}
}

/* llama.cpp use_more_bits: the first and last eighth of the layers and every
 * third one in between get the larger type in _M mixes. */
static bool more_bits(uint32_t i, uint32_t n)
{
	return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* llama.cpp's fallbacks when a row does not split into 256-element blocks. */
static uint32_t fit_type(uint32_t t, uint64_t ne0)
{
	if (quant_row_bytes(t, ne0))
		return t;
	switch (t) {
	case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K: t = GGML_TYPE_Q4_0; break;
	case GGML_TYPE_Q4_K: t = GGML_TYPE_Q5_0; break;
	case GGML_TYPE_Q5_K: t = GGML_TYPE_Q5_1; break;
	case GGML_TYPE_Q6_K: t = GGML_TYPE_Q8_0; break;
	case GGML_TYPE_IQ4_XS: t = GGML_TYPE_IQ4_NL; break;
	default: break;
	}
	return quant_row_bytes(t, ne0) ? t : GGML_TYPE_F16;
}

static bool is_low_bit(uint32_t t)
{
	return t != GGML_TYPE_F32 && t != GGML_TYPE_F16 && t != GGML_TYPE_BF16 &&
	       t != GGML_TYPE_Q8_0 && t != GGML_TYPE_Q6_K;
}

uint32_t mkm_tensor_type(const struct mkm_spec *s, const char *name, uint32_t layer, uint64_t ne0)
{
	uint32_t t = s->type;

	/* (llama.cpp's quantizer keeps the experts' router and the shared
	 * expert's gate vector F32 too) */
	if (strstr(name, "_norm") || strstr(name, ".bias") || strstr(name, "rope_freqs") ||
	    strstr(name, "rope_factors") || strstr(name, "ffn_gate_inp"))
		return GGML_TYPE_F32;
	if (s->mix != MKM_MIX_PURE && strcmp(name, "output.weight") == 0 && is_low_bit(t))
		t = GGML_TYPE_Q6_K;
	if (s->mix == MKM_MIX_M && (strstr(name, "attn_v.weight") || strstr(name, "ffn_down.weight")) &&
	    more_bits(layer, s->n_layers))
		t = GGML_TYPE_Q6_K;
	return fit_type(t, ne0);
}

/* ---- spec ---- */

void mkm_defaults(struct mkm_spec *s)
{
	memset(s, 0, sizeof *s);
	s->arch = "llama";
	s->name = "mkmodel";
	s->n_layers = 2;
	s->dim = 64;
	s->ffn = 172;
	s->heads = 4;
	s->kv_heads = 2;
	s->vocab = 512;
	s->ctx = 256;
	s->type = GGML_TYPE_F32;
	s->mix = MKM_MIX_DEFAULT;
	s->rope_base = 10000.0f;
	s->norm_eps = 1e-5f;
	s->std = 0.02f;
	s->seed = 1;
}

int mkm_ref_spec(struct mkm_spec *s, const char *arch)
{
	mkm_defaults(s);
	if (!model_arch_find(arch))
		return -1;
	s->arch = arch;
	s->name = "arch-ref";
	s->n_layers = 3;
	s->ffn = 128;
	s->ctx = 128;
	/* wide enough that the greedy choice is rarely a near-tie */
	s->std = 0.25f;
	s->rope_base = 10000.0f;
	s->seed = 29;
	s->rope_freqs = strcmp(arch, "llama") == 0;
	const struct model_arch *a = model_arch_find(arch);
	s->longrope = a->longrope;
	/* 4 experts, 2 a token; llama's (Mixtral) only as `--experts 4` */
	if (a->moe == MODEL_MOE_ALWAYS)
		mkm_set_experts(s, 4, 2);
	/* a NoPE layer among them; a global layer after the sliding ones */
	if (a->nope_every > s->n_layers)
		s->n_layers = a->nope_every;
	if (a->swa_pattern > s->n_layers)
		s->n_layers = a->swa_pattern;
	/* gemma's output is its embedding; the window shorter than the test's
	 * context; caps low enough to bite on these weights */
	s->tied = a->embd_scale;
	s->swa = a->swa_pattern ? 16 : 0;
	s->attn_cap = a->attn_cap != 0.0f ? 4.0f : 0.0f;
	s->final_cap = a->final_cap && a->final_cap_def != 0.0f ? 6.0f : 0.0f;
	/* qwen2.5's long-context YaRN */
	if (strcmp(arch, "qwen2") == 0)
		s->rope_yarn = 8.0f;
	/* gemma3: a global base and scaling apart from the local layers' */
	if (a->swa_rope_base != 0.0f) {
		s->rope_base = 1000000.0f;
		s->rope_linear = 8.0f;
	}
	return 0;
}

void mkm_set_experts(struct mkm_spec *s, uint32_t n_expert, uint32_t n_used)
{
	s->n_expert = n_expert;
	s->n_expert_used = n_used;
	/* widths of whole groups of 16 rows; llama's experts are ffn wide */
	s->ffn_exp = model_arch_find(s->arch)->moe == MODEL_MOE_ALWAYS ? 32 : s->ffn;
	s->ffn_shexp = 48;
}

size_t mkm_arch_names(char *buf, size_t n)
{
	size_t o = 0;

	buf[0] = 0;
	for (size_t i = 0; model_arch_at(i) && o < n; i++)
		o += (size_t)snprintf(buf + o, n - o, "%s%s", i ? ", " : "", model_arch_at(i)->name);
	return o;
}

int mkm_check(const struct mkm_spec *s, char *err, size_t errlen)
{
	char names[128];

	mkm_arch_names(names, sizeof names);
	if (!model_arch_find(s->arch))
		snprintf(err, errlen, "unsupported architecture '%s' (%s)", s->arch, names);
	else if (!s->n_layers || !s->dim || !s->ffn || !s->heads || !s->kv_heads || !s->ctx)
		snprintf(err, errlen, "layers, dim, ffn, heads, kv-heads and ctx must be > 0");
	else if (s->dim % s->heads || (s->dim / s->heads) % 2)
		snprintf(err, errlen, "dim %u is not heads (%u) x an even head size", s->dim, s->heads);
	else if (s->n_expert && (model_arch_find(s->arch)->moe == MODEL_MOE_NONE ||
				 s->n_expert_used > s->n_expert || !s->n_expert_used))
		snprintf(err, errlen, "%u experts, %u a token, are not for %s", s->n_expert,
			 s->n_expert_used, s->arch);
	else if (s->heads % s->kv_heads)
		snprintf(err, errlen, "heads %u is not a multiple of kv-heads %u", s->heads, s->kv_heads);
	else if (s->vocab < 300)
		snprintf(err, errlen, "vocab %u is below 300 (3 specials + 256 byte tokens + pieces)", s->vocab);
	else if (!quant_scalar(s->type))
		snprintf(err, errlen, "unsupported type %u", s->type);
	else
		return 0;
	return -1;
}

/* ---- vocabulary: SPM with byte fallback ---- */

struct vocab {
	char **tok;
	float *score;
	int32_t *type;
	uint32_t n;
	char **set;   /* open-addressing set of the pieces, for uniqueness */
	uint32_t set_cap;
};

static uint32_t str_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* Add piece if new and there is room; returns 1 if added. */
static int vocab_add(struct vocab *v, uint32_t cap, const char *piece, int32_t type, float score)
{
	uint32_t i = str_hash(piece) & (v->set_cap - 1);

	if (v->n >= cap)
		return 0;
	for (; v->set[i]; i = (i + 1) & (v->set_cap - 1))
		if (strcmp(v->set[i], piece) == 0)
			return 0;
	v->tok[v->n] = strdup(piece);
	v->set[i] = v->tok[v->n];
	v->type[v->n] = type;
	v->score[v->n] = score;
	v->n++;
	return 1;
}

#define SPACE "\xe2\x96\x81" /* U+2581, SentencePiece's word boundary */

static const char *const common_words[] = {
	"the", "and", "of", "to", "a", "in", "is", "it", "that", "was", "he", "she", "you",
	"Hello", "hello", "world", "Once", "upon", "time", "there", "little", "girl", "boy",
	"day", "happy", "said", "with", "for", "on", "they", "her", "his", "play", "big",
};

/* Pieces over [a-z] of length len, "▁"-prefixed or not, in counting order. */
static void vocab_enumerate(struct vocab *v, uint32_t cap, int len, bool space)
{
	char piece[32];
	uint64_t total = 1;

	for (int i = 0; i < len; i++)
		total *= 26;
	for (uint64_t c = 0; c < total && v->n < cap; c++) {
		int o = 0;
		uint64_t x = c;
		if (space) {
			memcpy(piece, SPACE, 3);
			o = 3;
		}
		for (int i = len - 1; i >= 0; i--, x /= 26)
			piece[o + i] = (char)('a' + x % 26);
		piece[o + len] = 0;
		vocab_add(v, cap, piece, 1, -(float)v->n);
	}
}

/* ChatML's markers: control tokens (llama.cpp token type 3), the last ids. */
static const char *const chatml_tokens[] = {"<|im_start|>", "<|im_end|>"};
#define N_CHATML 2u

static int vocab_build(struct vocab *v, uint32_t n, bool chatml)
{
	uint32_t total = n;
	char piece[32];

	v->tok = calloc(n, sizeof *v->tok);
	v->score = calloc(n, sizeof *v->score);
	v->type = calloc(n, sizeof *v->type);
	for (v->set_cap = 1024; v->set_cap < 2 * n; v->set_cap *= 2)
		;
	v->set = calloc(v->set_cap, sizeof *v->set);
	if (!v->tok || !v->score || !v->type || !v->set)
		return -1;
	if (chatml)
		n -= N_CHATML;
	vocab_add(v, n, "<unk>", 2, 0);   /* llama.cpp token types: 2 unknown, */
	vocab_add(v, n, "<s>", 3, 0);     /* 3 control, 6 byte, 1 normal */
	vocab_add(v, n, "</s>", 3, 0);
	for (int b = 0; b < 256; b++) {
		snprintf(piece, sizeof piece, "<0x%02X>", b);
		vocab_add(v, n, piece, 6, 0);
	}
	vocab_add(v, n, SPACE, 1, -(float)v->n);
	for (int c = 33; c < 127; c++) {
		piece[0] = (char)c;
		piece[1] = 0;
		vocab_add(v, n, piece, 1, -(float)v->n);
	}
	for (size_t i = 0; i < sizeof common_words / sizeof common_words[0]; i++) {
		snprintf(piece, sizeof piece, SPACE "%s", common_words[i]);
		vocab_add(v, n, piece, 1, -(float)v->n);
	}
	for (int len = 1; v->n < n && len < 8; len++) {
		vocab_enumerate(v, n, len, true);
		vocab_enumerate(v, n, len, false);
	}
	for (uint32_t i = 0; chatml && i < N_CHATML; i++)
		vocab_add(v, total, chatml_tokens[i], 3, 0);
	return v->n == total ? 0 : -1;
}

static void vocab_free(struct vocab *v)
{
	for (uint32_t i = 0; i < v->n; i++)
		free(v->tok[i]);
	free(v->tok);
	free(v->score);
	free(v->type);
	free(v->set);
}

/* ---- tensor plan ---- */

struct tensor {
	char name[64];
	uint32_t n_dims, type, layer;
	uint64_t ne[3];
	uint64_t offset, size;
	float std, mean;
};

struct plan {
	struct tensor *t;
	uint32_t n;
	uint64_t data_size;
};

/* A tensor of ne0 x ne1 (1-D when ne1 is 0), or ne2 of them stacked (3-D,
 * a layer's experts, when ne2 > 0). */
static void plan_add3(struct plan *p, const struct mkm_spec *s, const char *name, uint32_t layer,
		      uint64_t ne0, uint64_t ne1, uint64_t ne2)
{
	struct tensor *t = &p->t[p->n++];

	snprintf(t->name, sizeof t->name, "%s", name);
	t->layer = layer;
	t->n_dims = ne2 ? 3 : ne1 ? 2 : 1;
	t->ne[0] = ne0;
	t->ne[1] = ne1 ? ne1 : 1;
	t->ne[2] = ne2 ? ne2 : 1;
	t->type = mkm_tensor_type(s, name, layer, ne0);
	t->size = quant_row_bytes(t->type, ne0) * t->ne[1] * t->ne[2];
	t->offset = p->data_size;
	p->data_size += (t->size + ALIGN - 1) / ALIGN * ALIGN;
	t->std = s->std;
	t->mean = 0;
	if (strstr(name, "_norm")) {      /* RMSNorm gains: around 1 */
		t->std = 0.1f;
		t->mean = 1.0f;
	}
	/* gemma2/3's output norms: gains that let each block outweigh the
	 * sqrt(n_embd)-scaled embedding, or the head echoes the last token */
	/* the experts' router: wide, so that which experts a token takes is
	 * rarely a near-tie (a different choice is a different sum, beyond
	 * any rounding margin) */
	if (strstr(name, "ffn_gate_inp.weight"))
		t->std = 1.0f;
	if (strstr(name, "post_")) {
		t->std = 0.5f;
		t->mean = 4.0f;
	}
}

static void plan_add(struct plan *p, const struct mkm_spec *s, const char *name, uint32_t layer,
		     uint64_t ne0, uint64_t ne1)
{
	plan_add3(p, s, name, layer, ne0, ne1, 0);
}

static int plan_build(struct plan *p, const struct mkm_spec *s)
{
	uint32_t hd = s->dim / s->heads, q = s->heads * hd, kv = s->kv_heads * hd;
	const struct model_arch *a = model_arch_find(s->arch);
	char nm[64];

	p->t = calloc(6 + (size_t)s->n_layers * 24, sizeof *p->t);
	if (!p->t)
		return -1;
	plan_add(p, s, "token_embd.weight", 0, s->dim, s->vocab);
	if (s->rope_freqs)
		plan_add(p, s, "rope_freqs.weight", 0, hd / 2, 0);
	if (s->longrope) {
		plan_add(p, s, "rope_factors_long.weight", 0, hd / 2, 0);
		plan_add(p, s, "rope_factors_short.weight", 0, hd / 2, 0);
	}
	for (uint32_t l = 0; l < s->n_layers; l++) {
#define LT(suffix, ne0, ne1) \
	(snprintf(nm, sizeof nm, "blk.%u." suffix, l), plan_add(p, s, nm, l, ne0, ne1))
		if (!a->no_pre_norm)
			LT("attn_norm.weight", s->dim, 0);
		if (a->fused) {
			LT("attn_qkv.weight", s->dim, q + 2 * kv);
		} else {
			LT("attn_q.weight", s->dim, q);
			LT("attn_k.weight", s->dim, kv);
			LT("attn_v.weight", s->dim, kv);
		}
		if (a->qkv_bias) {
			LT("attn_q.bias", q, 0);
			LT("attn_k.bias", kv, 0);
			LT("attn_v.bias", kv, 0);
		}
		if (a->qk_norm) {
			LT("attn_q_norm.weight", a->qk_norm_whole ? q : hd, 0);
			LT("attn_k_norm.weight", a->qk_norm_whole ? kv : hd, 0);
		}
		if (a->post_norms)
			LT("post_attention_norm.weight", s->dim, 0);
		LT("attn_output.weight", q, s->dim);
		if (!a->no_pre_norm)
			LT("ffn_norm.weight", s->dim, 0);
		if (s->n_expert) {
#define LT3(suffix, ne0, ne1, ne2) \
	(snprintf(nm, sizeof nm, "blk.%u." suffix, l), plan_add3(p, s, nm, l, ne0, ne1, ne2))
			LT("ffn_gate_inp.weight", s->dim, s->n_expert);
			LT3("ffn_gate_exps.weight", s->dim, s->ffn_exp, s->n_expert);
			LT3("ffn_up_exps.weight", s->dim, s->ffn_exp, s->n_expert);
			LT3("ffn_down_exps.weight", s->ffn_exp, s->dim, s->n_expert);
#undef LT3
			if (a->moe_shexp) {
				LT("ffn_gate_inp_shexp.weight", s->dim, 0);
				LT("ffn_gate_shexp.weight", s->dim, s->ffn_shexp);
				LT("ffn_up_shexp.weight", s->dim, s->ffn_shexp);
				LT("ffn_down_shexp.weight", s->ffn_shexp, s->dim);
			}
		} else {
			if (!a->fused)
				LT("ffn_gate.weight", s->dim, s->ffn);
			LT("ffn_up.weight", s->dim, a->fused ? 2 * s->ffn : s->ffn);
			LT("ffn_down.weight", s->ffn, s->dim);
		}
		if (a->post_norms)
			LT("post_ffw_norm.weight", s->dim, 0);
#undef LT
	}
	plan_add(p, s, "output_norm.weight", 0, s->dim, 0);
	if (!s->tied)
		plan_add(p, s, "output.weight", 0, s->dim, s->vocab);
	return 0;
}

/* ---- writing ---- */

struct out {
	FILE *f;
	uint64_t pos;
	bool failed;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, o->f) != n)
		o->failed = true;
	o->pos += n;
}

static void put_u32(struct out *o, uint32_t v) { put(o, &v, 4); }
static void put_u64(struct out *o, uint64_t v) { put(o, &v, 8); }

static void put_str(struct out *o, const char *s)
{
	put_u64(o, strlen(s));
	put(o, s, strlen(s));
}

static void kv_u32(struct out *o, uint32_t *n, const char *k, uint32_t v)
{
	put_str(o, k); put_u32(o, GGUF_VT_UINT32); put_u32(o, v); (*n)++;
}

static void kv_f32(struct out *o, uint32_t *n, const char *k, float v)
{
	put_str(o, k); put_u32(o, GGUF_VT_FLOAT32); put(o, &v, 4); (*n)++;
}

static void kv_str(struct out *o, uint32_t *n, const char *k, const char *v)
{
	put_str(o, k); put_u32(o, GGUF_VT_STRING); put_str(o, v); (*n)++;
}

static void kv_bool(struct out *o, uint32_t *n, const char *k, bool v)
{
	uint8_t b = v;
	put_str(o, k); put_u32(o, GGUF_VT_BOOL); put(o, &b, 1); (*n)++;
}

static void kv_arr(struct out *o, uint32_t *n, const char *k, uint32_t type, const void *data,
		   uint32_t count)
{
	put_str(o, k);
	put_u32(o, GGUF_VT_ARRAY);
	put_u32(o, type);
	put_u64(o, count);
	if (type == GGUF_VT_STRING)
		for (uint32_t i = 0; i < count; i++)
			put_str(o, ((char *const *)data)[i]);
	else
		put(o, data, (size_t)count * 4);
	(*n)++;
}

static void write_hparams(struct out *o, uint32_t *n, const struct mkm_spec *s)
{
	char k[96];
	const char *a = s->arch;

#define AK(suffix) (snprintf(k, sizeof k, "%s." suffix, a), k)
	kv_str(o, n, "general.architecture", a);
	kv_str(o, n, "general.name", s->name);
	if (file_type(s) >= 0)
		kv_u32(o, n, "general.file_type", (uint32_t)file_type(s));
	kv_u32(o, n, "general.quantization_version", 2);
	kv_u32(o, n, AK("context_length"), s->ctx);
	kv_u32(o, n, AK("embedding_length"), s->dim);
	kv_u32(o, n, AK("block_count"), s->n_layers);
	kv_u32(o, n, AK("feed_forward_length"), s->ffn);
	kv_u32(o, n, AK("attention.head_count"), s->heads);
	kv_u32(o, n, AK("attention.head_count_kv"), s->kv_heads);
	kv_f32(o, n, AK("attention.layer_norm_rms_epsilon"), s->norm_eps);
	kv_f32(o, n, AK("rope.freq_base"), s->rope_base);
	kv_u32(o, n, AK("rope.dimension_count"), s->dim / s->heads);
	kv_u32(o, n, AK("vocab_size"), s->vocab);
	if (s->swa)
		kv_u32(o, n, AK("attention.sliding_window"), s->swa);
	if (s->attn_cap > 0)
		kv_f32(o, n, AK("attn_logit_softcapping"), s->attn_cap);
	if (s->final_cap > 0)
		kv_f32(o, n, AK("final_logit_softcapping"), s->final_cap);
	if (s->rope_yarn > 0) {
		kv_str(o, n, AK("rope.scaling.type"), "yarn");
		kv_f32(o, n, AK("rope.scaling.factor"), s->rope_yarn);
		kv_u32(o, n, AK("rope.scaling.original_context_length"), s->ctx / 4);
	}
	if (s->n_expert) {
		kv_u32(o, n, AK("expert_count"), s->n_expert);
		kv_u32(o, n, AK("expert_used_count"), s->n_expert_used);
		if (model_arch_find(a)->moe == MODEL_MOE_ALWAYS)
			kv_u32(o, n, AK("expert_feed_forward_length"), s->ffn_exp);
		if (model_arch_find(a)->moe_shexp)
			kv_u32(o, n, AK("expert_shared_feed_forward_length"), s->ffn_shexp);
	}
	if (s->longrope) { /* phi3's converter: sqrt(1 + ln(scale) / ln(original)) */
		kv_u32(o, n, AK("rope.scaling.original_context_length"), s->ctx / 4);
		kv_f32(o, n, AK("rope.scaling.attn_factor"),
		       (float)sqrt(1.0 + log(4.0) / log((double)(s->ctx / 4))));
	}
	if (s->rope_linear > 0) {
		kv_str(o, n, AK("rope.scaling.type"), "linear");
		kv_f32(o, n, AK("rope.scaling.factor"), s->rope_linear);
	}
	if (model_arch_find(a)->scalars) { /* granite's, away from 1 */
		kv_f32(o, n, AK("embedding_scale"), 2.0f);
		kv_f32(o, n, AK("residual_scale"), 0.5f);
		kv_f32(o, n, AK("attention.scale"), 0.375f);
		kv_f32(o, n, AK("logit_scale"), 0.5f);
	}
#undef AK
}

static void write_vocab(struct out *o, uint32_t *n, const struct mkm_spec *s, const struct vocab *v)
{
	kv_str(o, n, "tokenizer.ggml.model", "llama");
	kv_arr(o, n, "tokenizer.ggml.tokens", GGUF_VT_STRING, v->tok, v->n);
	kv_arr(o, n, "tokenizer.ggml.scores", GGUF_VT_FLOAT32, v->score, v->n);
	kv_arr(o, n, "tokenizer.ggml.token_type", GGUF_VT_INT32, v->type, v->n);
	kv_u32(o, n, "tokenizer.ggml.unknown_token_id", 0);
	kv_u32(o, n, "tokenizer.ggml.bos_token_id", 1);
	kv_u32(o, n, "tokenizer.ggml.eos_token_id", 2);
	kv_bool(o, n, "tokenizer.ggml.add_bos_token", true);
	kv_bool(o, n, "tokenizer.ggml.add_eos_token", false);
	if (s->chat_template || s->chatml)
		kv_str(o, n, "tokenizer.chat_template", s->chat_template ? s->chat_template :
			"{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
			"{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}");
}

static void pad(struct out *o)
{
	static const uint8_t zero[ALIGN];

	put(o, zero, (ALIGN - o->pos % ALIGN) % ALIGN);
}

/* llama 3.x's frequency factors as its converter computes them
 * (convert_hf_to_gguf.py, LlamaModel, rope_type "llama3"): pair i of a
 * head of hd keeps its frequency when its wavelength is below
 * old_ctx / high, is slowed by factor above old_ctx / low, and between the
 * two by a smooth mix. */
static void llama3_factors(float *out, uint32_t hd, float base, uint32_t old_ctx)
{
	const double factor = 8, low = 1, high = 4, pi = 3.14159265358979323846;

	for (uint32_t i = 0; i < hd / 2; i++) {
		double wavelen = 2 * pi / pow(base, -2.0 * i / hd);
		double smooth = (old_ctx / wavelen - low) / (high - low);
		if (wavelen < old_ctx / high)
			out[i] = 1.0f;
		else if (wavelen > old_ctx / low)
			out[i] = (float)factor;
		else
			out[i] = (float)(1 / ((1 - smooth) / factor + smooth));
	}
}

/* One tensor's data in chunks of whole rows; the seed mixes in the name so
 * every tensor's bytes are independent of the others and of their order. */
static int write_tensor_data(struct out *o, const struct mkm_spec *s, const struct tensor *t)
{
	uint64_t row = quant_row_bytes(t->type, t->ne[0]);
	uint64_t rows = row >= CHUNK_BYTES ? 1 : CHUNK_BYTES / row;
	uint64_t state = s->seed ^ ((uint64_t)str_hash(t->name) << 32 | str_hash(t->name + 1));
	uint8_t *buf = malloc(rows * row);

	if (!buf)
		return -1;
	if (strncmp(t->name, "rope_factors_", 13) == 0) {
		/* LongRoPE's factors: 1 for the fastest pair, growing with the
		 * pair's wavelength to 6 (long) or 1.5 (short) for the slowest */
		float top = t->name[13] == 'l' ? 6.0f : 1.5f;
		for (uint64_t i = 0; i < t->ne[0]; i++)
			((float *)buf)[i] = 1.0f + (top - 1.0f) * (float)i / (float)(t->ne[0] - 1);
		put(o, buf, t->size);
		free(buf);
		pad(o);
		return o->failed ? -1 : 0;
	}
	if (strcmp(t->name, "rope_freqs.weight") == 0) {
		llama3_factors((float *)buf, s->dim / s->heads, s->rope_base, s->ctx / 2);
		put(o, buf, t->size);
		free(buf);
		pad(o);
		return o->failed ? -1 : 0;
	}
	for (uint64_t r = 0; r < t->ne[1] * t->ne[2]; r += rows) {
		uint64_t nr = t->ne[1] * t->ne[2] - r < rows ? t->ne[1] * t->ne[2] - r : rows;
		quant_fill_random(t->type, buf, nr * t->ne[0], t->std, &state);
		if (t->mean != 0) {              /* only F32 tensors carry a mean */
			float *f = (float *)buf;
			for (uint64_t i = 0; i < nr * t->ne[0]; i++)
				f[i] += t->mean;
		}
		put(o, buf, nr * row);
	}
	free(buf);
	pad(o);
	return o->failed ? -1 : 0;
}

static void write_header(struct out *o, const struct mkm_spec *s, const struct plan *p,
			 const struct vocab *v)
{
	uint32_t n_kv = 0;

	put(o, "GGUF", 4);
	put_u32(o, 3);
	put_u64(o, p->n);
	put_u64(o, 0);                        /* n_kv, patched below */
	write_hparams(o, &n_kv, s);
	write_vocab(o, &n_kv, s, v);
	for (uint32_t i = 0; i < p->n; i++) {
		const struct tensor *t = &p->t[i];
		put_str(o, t->name);
		put_u32(o, t->n_dims);
		for (uint32_t d = 0; d < t->n_dims; d++)
			put_u64(o, t->ne[d]);
		put_u32(o, t->type);
		put_u64(o, t->offset);
	}
	pad(o);
	if (fseek(o->f, 16, SEEK_SET) != 0 || fwrite(&(uint64_t){n_kv}, 8, 1, o->f) != 1 ||
	    fseek(o->f, 0, SEEK_END) != 0)
		o->failed = true;
}

int mkm_write(const struct mkm_spec *s, const char *path, char *err, size_t errlen)
{
	struct vocab v = {0};
	struct plan p = {0};
	struct out o = {0};
	int rc = -1;

	if (mkm_check(s, err, errlen) < 0)
		return -1;
	if (vocab_build(&v, s->vocab, s->chatml) < 0 || plan_build(&p, s) < 0) {
		snprintf(err, errlen, "cannot build a %u-token vocabulary", s->vocab);
		goto out;
	}
	o.f = fopen(path, "wb");
	if (!o.f) {
		snprintf(err, errlen, "cannot create %s", path);
		goto out;
	}
	write_header(&o, s, &p, &v);
	for (uint32_t i = 0; i < p.n && !o.failed; i++)
		write_tensor_data(&o, s, &p.t[i]);
	if (fclose(o.f) != 0 || o.failed)
		snprintf(err, errlen, "write error on %s", path);
	else
		rc = 0;
out:
	vocab_free(&v);
	free(p.t);
	return rc;
}
