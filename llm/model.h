/*
 * llm/model.h — the transformer: hyperparameters from GGUF metadata and
 * the tensor layout check (model_hparams.c), the model's scratch and RoPE
 * table (model.c), and the forward pass (model_forward.c).
 *
 * Architectures (GGUF general.architecture), one row each of model_hparams.c's
 * model_archs[] (struct model_arch below):
 *   llama — Llama 2/3, TinyLlama, Mistral, SmolLM: RMSNorm, RoPE (GGUF keeps
 *           llama's q/k rows in Meta's interleaved order, so rotation pairs
 *           are adjacent elements: llama.cpp LLAMA_ROPE_TYPE_NORM), GQA,
 *           SwiGLU, output tied to token_embd when output.weight is absent.
 *   qwen2 — the same with Q/K/V biases and NeoX rotation (pairs i, i + d/2).
 *   mistral3 — llama's graph (Ministral / Mistral Small 3.x); its attention
 *           temperature scaling (Llama 4 style) is refused.
 *   smollm3 — llama with no RoPE in every 4th layer (NoPE: llama.cpp's
 *           n_no_rope_layer_step, a constant, no GGUF key).
 *   granite — llama with four scalars: embeddings, each block's output
 *           before its residual add, the attention scores, and the logits
 *           (divided by granite.logit_scale).
 *   gemma — NeoX rotation, embeddings x sqrt(n_embd), GeGLU, tied head.
 *   gemma2 — gemma with post-attention/FFN norms, soft-capped scores and
 *           logits, sliding-window attention in every other layer.
 *   gemma3 — gemma2's norms with Q/K head norms, 5 sliding layers in 6
 *           (their own RoPE base), no soft-capping.
 *   phi3 — llama with NeoX rotation, Q/K/V in one matrix (attn_qkv) and
 *           gate and up in one (ffn_up, 2 n_ff rows, gate first); LongRoPE
 *           (rope_factors_long/short: the long ones when the cache is
 *           longer than rope.scaling.original_context_length).
 *   qwen3 — qwen2's rotation, no biases, and an RMSNorm of each Q and K head
 *           (blk.N.attn_{q,k}_norm.weight, head_dim gains) before RoPE.
 *   qwen2moe — qwen2 with a mixture of experts for the FFN (softmax router,
 *           top-k, weights not renormalised) and a shared expert behind a
 *           sigmoid gate.
 *   qwen3moe — qwen3 with a mixture of experts (top-k renormalised).
 *   (llama with <arch>.expert_count > 0: Mixtral's experts, renormalised.)
 *   olmo2 — NeoX rotation, no norm before attention or FFN, gemma2's post
 *           norms before each residual add, and an RMSNorm of the whole Q
 *           and K rows (n_head x head_dim gains) before RoPE.
 */
#ifndef LLM_MODEL_H
#define LLM_MODEL_H

#include "gguf.h"
#include "kv.h"
#include "matmul.h"
#include "vmath.h"
#include "weights.h"

/* RoPE's pairs (llama.cpp's rope types): NORM rotates adjacent elements
 * (2i, 2i + 1), NEOX the halves (i, i + d/2). */
enum model_rope { MODEL_ROPE_NORM, MODEL_ROPE_NEOX };
/* The gated FFN's activation: down(act(gate(x)) * up(x)). SILU is SwiGLU. */
enum model_act { MODEL_ACT_SILU, MODEL_ACT_GELU }; /* GELU: GeGLU, tanh approximation */
/* The normalisation before attention, FFN and head. */
enum model_norm { MODEL_NORM_RMS };
/* Experts: none (ffn_gate_inp refused), when <arch>.expert_count > 0
 * (llama: Mixtral), always (qwen2moe, qwen3moe). */
enum model_moe { MODEL_MOE_NONE, MODEL_MOE_OPTIONAL, MODEL_MOE_ALWAYS };

/*
 * What sets an architecture apart beyond its sizes. The forward pass asks
 * these, never the name; an architecture whose trait is not listed here
 * (Gemma's GELU, Phi-3's fused QKV) adds the value and the code for it.
 */
struct model_arch {
	const char *name;     /* general.architecture, and the metadata keys' prefix */
	enum model_rope rope;
	enum model_act act;
	enum model_norm norm;
	bool embd_scale;      /* embeddings times sqrt(n_embd) before the first layer */
	bool qkv_bias;        /* Q, K and V biases required (else taken if present) */
	bool qk_norm;         /* Q and K heads RMS-normed before RoPE (required) */
	bool qk_norm_whole;   /* those norms span the whole Q and K rows (olmo2) */
	bool no_pre_norm;     /* no attn_norm/ffn_norm: the blocks read x itself (olmo2) */
	uint32_t nope_every;  /* layer l skips RoPE when (l + 1) % nope_every == 0; 0 never */
	bool scalars;         /* granite's embedding, residual, attention and logit scales */
	bool fused;           /* Q/K/V in attn_qkv, gate and up in ffn_up (gate rows first) */
	bool longrope;        /* LongRoPE's rope_factors_long/short taken (phi3 128k) */
	enum model_moe moe;   /* a mixture of experts instead of the dense FFN */
	bool moe_norm;        /* the chosen experts' weights divided by their sum */
	bool moe_shexp;       /* a shared expert beside them, behind a sigmoid gate */
	bool post_norms;      /* RMSNorm of the attention and FFN outputs before each
				 residual add (blk.N.post_attention_norm, post_ffw_norm) */
	float attn_cap;       /* <arch>.attn_logit_softcapping's default (0: not read, none) */
	bool final_cap;       /* <arch>.final_logit_softcapping read (default final_cap_def) */
	float final_cap_def;
	uint32_t swa_pattern; /* layer l slides when l % swa_pattern < swa_pattern - 1 */
	uint32_t swa_def;     /* <arch>.attention.sliding_window's default (0: no window) */
	bool swa_refused;     /* a sliding window > 0 is refused (olmo3's layout under olmo2) */
	float swa_rope_base;  /* sliding layers' own RoPE base, unscaled (0: the model's) */
	uint32_t q_scale_embd_layers; /* at this many layers, scores scale by
				 1/sqrt(n_embd/n_head) (gemma 27B), else 1/sqrt(head_dim) */
};

/* Row i of model_archs[] (NULL past the last): the one list of
 * architectures, which the writer (tools/writer) and the tests read too. */
const struct model_arch *model_arch_at(size_t i);
/* The row named name (general.architecture), or NULL. */
const struct model_arch *model_arch_find(const char *name);

struct model_hparams {
	const struct model_arch *arch; /* a row of model_archs[] */
	char arch_name[16];
	char name[64];          /* general.name, "" if absent */
	uint32_t n_layer;       /* <arch>.block_count */
	uint32_t n_embd;        /* <arch>.embedding_length */
	uint32_t n_ff;          /* <arch>.feed_forward_length */
	uint32_t n_head;        /* <arch>.attention.head_count */
	uint32_t n_head_kv;     /* <arch>.attention.head_count_kv (default n_head) */
	uint32_t head_dim;      /* <arch>.attention.key_length (default n_embd / n_head) */
	uint32_t n_vocab;       /* rows of token_embd.weight */
	uint32_t n_ctx_train;   /* <arch>.context_length */
	uint32_t rope_dim;      /* <arch>.rope.dimension_count (default head_dim) */
	float rope_base;        /* <arch>.rope.freq_base (default 10000) */
	float rope_scale;       /* 1 / <arch>.rope.scaling.factor (linear, yarn), else 1 */
	bool yarn;              /* rope.scaling.type yarn (YaRN, Peng et al. 2023) */
	uint32_t yarn_orig_ctx; /* <arch>.rope.scaling.original_context_length (default
				   context_length; yarn and LongRoPE) */
	float yarn_beta_fast, yarn_beta_slow; /* rope.scaling.yarn_beta_fast / _slow (32, 1) */
	float rope_mscale;      /* cos and sin times this: <arch>.rope.scaling.attn_factor
				   (default 1), times 1 + 0.1 ln(factor) for yarn */
	float norm_eps;         /* <arch>.attention.layer_norm_rms_epsilon (default 1e-5) */
	float embd_mul;         /* <arch>.embedding_scale (scalars; default 1) */
	float res_mul;          /* <arch>.residual_scale (scalars; default 1) */
	float att_scale;        /* <arch>.attention.scale (scalars; default 1 / sqrt(head_dim)) */
	float logit_mul;        /* 1 / <arch>.logit_scale (scalars, required; else 1) */
	float attn_cap;         /* scores -> cap tanh(scores / cap); 0 none */
	float final_cap;        /* logits -> cap tanh(logits / cap); 0 none */
	uint32_t n_swa;         /* sliding window of the sliding layers; 0 none */
	bool qkv_bias;
	bool qk_norm;           /* blk.0.attn_q_norm.weight present */
	bool tied_output;
	bool rope_freqs;        /* rope_freqs.weight present (llama3 frequency factors) */
	bool longrope;          /* rope_factors_long/short.weight present (LongRoPE) */
	uint32_t n_expert;      /* <arch>.expert_count (0: a dense FFN) */
	uint32_t n_expert_used; /* <arch>.expert_used_count: experts per token */
	uint32_t n_ff_exp;      /* <arch>.expert_feed_forward_length (default n_ff, or
				   n_ff / n_expert_used for qwen2moe/qwen3moe) */
	uint32_t n_ff_shexp;    /* <arch>.expert_shared_feed_forward_length (default n_ff) */
	uint64_t n_params;      /* elements of every tensor */
};

/* Layer l of the model attends to a sliding window (hp->n_swa). */
bool model_layer_swa(const struct model_hparams *hp, uint32_t l);

/* Read hparams from g and check every tensor the forward pass uses exists
 * with the shape they imply, a type the quant table can multiply, F32 for
 * 1-D tensors, and data at 4-byte aligned offsets. Counts must be non-zero
 * (the vocabulary 1 to INT32_MAX rows), the float keys in range (finite,
 * normal: rms epsilon in (0, 1], rope.freq_base >= 1, a linear scaling
 * factor 0 or >= 1). One line in err on failure, naming the key or tensor
 * and the value. */
int model_read_hparams(struct model_hparams *hp, const struct gguf_file *g,
		       char *err, size_t errlen);
int model_check_layout(const struct model_hparams *hp, const struct gguf_file *g,
		       char *err, size_t errlen);

/* Positions RoPE turns into angles as floats: exact integers below 2^24
 * (a float's 24-bit significand), so the context stays below it. */
#define MODEL_MAX_POS (1u << 24)

/* The frequency factors of w (rope_freqs.weight, LongRoPE's
 * rope_factors_long/short.weight; NULL: none), read from the weights: each
 * must be positive and finite, and the frequency it gives small enough that
 * position x frequency stays finite below MODEL_MAX_POS (a NaN or infinite
 * angle makes NaN logits). 0, or -LLMK_EFORMAT with one line in err. */
int model_check_rope_freqs(const struct model_hparams *hp, const struct wt_ctx *w, char *err,
			   size_t errlen);

/* Experts a mixture may have (llama.cpp LLAMA_MAX_EXPERTS). */
#define MODEL_MAX_EXPERTS 512

/* Attention reads the cache in tiles of this many positions. */
#define MODEL_ATT_TILE 64
/* RoPE dimensions a model may rotate (real models: 64 to 256) */
#define MODEL_MAX_ROPE_DIM 1024

/* Scratch for a batch of up to n_batch tokens and n_workers attention workers. */
struct model_scratch {
	uint32_t n_batch, n_workers;
	const struct vmath_ops *vm; /* this CPU's exp, SwiGLU and attention loops */
	float *x, *xb, *q, *k, *v, *att, *hb, *hb2; /* batch-major rows */
	float *router;         /* experts: the router's logits, then the chosen weights */
	float *ex, *ey, *acc;  /* experts: the rows routed to one, its output, the sum */
	uint32_t *rows;        /* experts: B x n_expert_used chosen experts, then the rows */
	float *tiles;          /* per worker: K and V tiles, MODEL_ATT_TILE x head_dim each */
	float *amax, *asum;    /* online softmax state per (token, head) */
	float *logits;         /* n_vocab */
	void *base;
	size_t bytes;
};

/* Where forward time goes (`profile on`): per stage and per layer. Each
 * step of the pass charges its own stage (model_forward.c): acquiring a
 * layer's weights, the weight products (and their biases), the per-token
 * norms and residual adds, the Q/K norms + RoPE + cache store, attention,
 * the FFN's activation; the embedding and the head. */
enum model_stage {
	MS_EMBED, MS_ACQUIRE, MS_NORM, MS_MATMUL, MS_ROPE_KV, MS_ATTN, MS_ACT, MS_HEAD, MS_N
};
extern const char *const model_stage_names[MS_N];

struct model_prof {
	bool on;
	uint64_t ns[MS_N];
	uint64_t *layer_ns;     /* n_layer; acquire included */
	uint64_t tokens, passes;
};

struct model {
	struct model_hparams hp;
	struct wt_ctx w;
	float *inv_freq;        /* rope_dim / 2 rotation frequencies */
	float *inv_freq_long;   /* LongRoPE's past the original context, or inv_freq */
	float *inv_freq_swa;    /* the sliding layers' (swa_rope_base), or inv_freq */
	struct model_prof prof;
	struct llm_mem *mem;
};

/* Zero the counters (keeps on/off). */
void model_prof_reset(struct model *m);

/* Bytes model_scratch_init will take. n_workers: the matmul thread count
 * (attention spreads KV heads over the same pool). */
uint64_t model_scratch_bytes(const struct model_hparams *hp, uint32_t n_batch,
			     uint32_t n_workers);
int model_scratch_init(struct model_scratch *s, const struct model_hparams *hp,
		       uint32_t n_batch, uint32_t n_workers, struct llm_mem *mem);
void model_scratch_free(struct model_scratch *s, struct llm_mem *mem);
/* Zeroize the activations, attention state and logits (they derive from
 * the last prompt); the scratch stays allocated. */
void model_scratch_zeroize(struct model_scratch *s);

/* Take over hp and an opened weights context; computes the RoPE table. */
int model_init(struct model *m, const struct model_hparams *hp, struct wt_ctx *w,
	       struct llm_mem *mem);
void model_free(struct model *m);

/*
 * Run n tokens at positions pos.. through the model (in pieces of
 * s->n_batch), writing their keys and values into kv. If want_logits, the
 * last token's logits end in s->logits. Returns 0 or -LLMK_E*
 * (-LLMK_ERANGE if pos + n passes the cache).
 */
int model_forward(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
		  struct kv_cache *kv, const int32_t *tokens, uint32_t n, uint32_t pos,
		  bool want_logits);

/*
 * One decode step of n sequences together (n <= s->n_batch): token
 * tokens[i] of sequence i at position pos[i] in that sequence, whose cache
 * rows start at base[i] (sequences own disjoint ranges of kv; base[i] +
 * pos[i] < kv->n_ctx). The n tokens share each pass over the weights. If
 * logits is not NULL, row i's logits go to logits + i * n_vocab. Returns 0
 * or -LLMK_E* (-LLMK_ERANGE for a position outside the cache, n = 0 or more
 * than s->n_batch, or, with logits, more than n_vocab).
 */
int model_forward_seqs(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
		       struct kv_cache *kv, const int32_t *tokens, const uint32_t *base,
		       const uint32_t *pos, uint32_t n, float *logits);
/*
 * The same pass, with the logits only of the tokens whose want[i] is set,
 * their rows in order (continuous batching: a pass carries decode tokens
 * and pieces of prompts, whose logits but the last are not needed). Token
 * i of a sequence may be followed in the pass by that sequence's next
 * positions: every token's keys and values are stored before any attends.
 */
int model_forward_seqs_some(struct model *m, struct model_scratch *s, struct mm_ctx *mm,
			    struct kv_cache *kv, const int32_t *tokens, const uint32_t *base,
			    const uint32_t *pos, uint32_t n, const uint8_t *want, float *logits);

#endif
