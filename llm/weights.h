/*
 * llm/weights.h — the one way the forward pass reaches the model's tensors.
 *
 * The forward pass asks for one layer at a time (acquire, use, release), for
 * token-embedding rows by id, and for the output head in row chunks. Behind
 * this interface the weights may all be resident (wt_resident_open: the
 * model's tensor data read from its disk into memory at load) or streamed
 * layer by layer off the disk (the layer streamer, another implementation of
 * struct wt_ops), so nothing else in the engine may hold a tensor pointer
 * across a release.
 *
 * Tensor names are llama.cpp's GGUF names (llama.cpp src/llama-arch.cpp
 * LLM_TENSOR_NAMES): token_embd, output_norm, output, rope_freqs,
 * rope_factors_{long,short},
 * blk.N.{attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm, ffn_gate,
 * ffn_up, ffn_down}.weight, blk.N.attn_{q,k,v}.bias and
 * blk.N.attn_{q,k}_norm.weight.
 */
#ifndef LLM_WEIGHTS_H
#define LLM_WEIGHTS_H

#include "gguf.h"

/* A weight matrix: rows of cols elements (cols = GGUF ne[0]) of one quant
 * type, row stride quant_row_bytes(type, cols); a 3-D tensor's rows are
 * ne[1] x ne[2]. */
struct wt_mat {
	const void *data;
	uint32_t type;
	uint64_t rows, cols;
	bool packed; /* groups of 16 rows in the type's packed layout (quant.h) */
};

/* One transformer block. 1-D tensors (norms, biases) are always F32. */
struct wt_layer {
	const float *attn_norm;    /* NULL for olmo2 (no norm before attention or FFN) */
	struct wt_mat wq, wk, wv, wo;
	struct wt_mat wqkv;        /* phi3: Q, K and V rows in one matrix (wq.. empty) */
	const float *bq, *bk, *bv; /* qwen2: QKV biases; NULL when the model has none */
	const float *q_norm, *k_norm; /* qwen3: RMSNorm gains of each Q and K head (olmo2:
				       of the whole Q and K rows); or NULL */
	const float *attn_post_norm, *ffn_post_norm; /* gemma2/3: output norms; or NULL */
	const float *ffn_norm;
	struct wt_mat w_gate, w_up, w_down; /* empty in a layer of experts */
	/* a mixture of experts: the router (n_expert rows), every expert's
	 * gate, up and down stacked (expert e's rows from e x its row count:
	 * GGUF's 3-D [cols, rows, n_expert]); qwen2moe's shared expert and the
	 * gains of its sigmoid gate. Empty / NULL in a dense layer. */
	struct wt_mat gate_inp, gate_exps, up_exps, down_exps;
	struct wt_mat gate_shexp, up_shexp, down_shexp;
	const float *gate_inp_shexp;
};

/* The per-layer tensors by name suffix, for every implementation, and the
 * shape the layout check (model_hparams.c) expects of each. */
enum wt_slot_kind { WT_VEC, WT_MAT };
/* A tensor dimension in the model's sizes (struct model_hparams). */
enum wt_dim {
	WT_DIM_1,    /* 1: the second dimension of a vector */
	WT_DIM_EMBD, /* n_embd */
	WT_DIM_Q,    /* n_head x head_dim */
	WT_DIM_KV,   /* n_head_kv x head_dim */
	WT_DIM_FF,   /* n_ff */
	WT_DIM_HEAD, /* head_dim */
	WT_DIM_QKV,  /* (n_head + 2 n_head_kv) x head_dim: fused Q, K, V rows */
	WT_DIM_UP,   /* n_ff, or 2 n_ff where gate and up are one matrix (phi3) */
	WT_DIM_QNORM, /* Q norm gains: head_dim, or n_head x head_dim (olmo2's whole row) */
	WT_DIM_KNORM, /* K norm gains: head_dim, or n_head_kv x head_dim */
	WT_DIM_EXPERTS, /* n_expert */
	WT_DIM_FF_EXP,  /* an expert's FFN width */
	WT_DIM_FF_SHEXP, /* the shared expert's FFN width */
};
struct wt_slot {
	const char *suffix;   /* "attn_q.weight": full name "blk.<N>.<suffix>" */
	size_t offset;        /* of the field in struct wt_layer */
	enum wt_slot_kind kind;
	bool optional;        /* in every layer or none, as layer 0 says */
	enum wt_dim ne[3];    /* GGUF ne[0] (the row length), ne[1] (the rows), ne[2]
				 (the experts of a stacked matrix, else 1) */
};
extern const struct wt_slot wt_layer_slots[];
extern const uint32_t wt_n_layer_slots;
/* "blk.<layer>.<suffix>" into buf. */
void wt_tensor_name(char *buf, size_t n, uint32_t layer, const char *suffix);

/* What the weights cost in disk traffic (the streamer; zeros when resident). */
struct wt_io_stats {
	uint64_t bytes_read;  /* disk bytes read: slots, blocks outside them */
	uint64_t reads;       /* requests issued (async pieces and row reads) */
	uint64_t wait_ns;     /* acquire blocked waiting on the disk */
	uint64_t decrypt_ns;  /* verifying and decrypting sealed chunks */
	uint64_t misses;      /* acquires whose item was not read ahead */
};

struct wt_ops {
	int (*layer_acquire)(void *impl, uint32_t layer, struct wt_layer *out);
	void (*layer_release)(void *impl, uint32_t layer);
	/* Token-embedding row id as n_embd floats. */
	int (*embed_row)(void *impl, int32_t id, float *out);
	/* Output-head rows [row0, row0 + n), n <= head_chunk. */
	int (*head_acquire)(void *impl, uint32_t row0, uint32_t n, struct wt_mat *out);
	void (*head_release)(void *impl, uint32_t row0);
	void (*close)(void *impl);
	/* Optional (NULL: no disk traffic after open). reset zeroes after copying. */
	void (*io_stats)(void *impl, struct wt_io_stats *out, bool reset);
	/* Optional (NULL: never known ahead): where the first product of layer
	 * `layer` (n_layer: the output head) reads, with *bytes, when the
	 * weights stay in memory between acquires; NULL otherwise. For
	 * prefetching only (mm_prefetch_next). */
	const void *(*peek)(void *impl, uint32_t layer, size_t *bytes);
};

struct wt_ctx {
	const struct wt_ops *ops;
	void *impl;
	/* Small tensors every implementation keeps resident. */
	const float *output_norm; /* n_embd */
	const float *rope_freqs;  /* rope_dim / 2 frequency factors (llama3), or NULL */
	const float *rope_long, *rope_short; /* LongRoPE's (phi3 128k), or NULL */
	uint32_t head_chunk;      /* rows per head_acquire */
	uint64_t resident_bytes;  /* weight bytes this implementation holds */
	const char *kind;         /* "resident", "streaming" */
	uint64_t packed_bytes;    /* weight bytes held packed (quant.h) */
	uint64_t packed_types;    /* bit t: some matrix of ggml type t is held packed */
	uint64_t pack_ns;         /* time packing them took at open */
};

static inline int wt_layer_acquire(struct wt_ctx *w, uint32_t layer, struct wt_layer *out)
{
	return w->ops->layer_acquire(w->impl, layer, out);
}
static inline void wt_layer_release(struct wt_ctx *w, uint32_t layer)
{
	w->ops->layer_release(w->impl, layer);
}
static inline int wt_embed_row(struct wt_ctx *w, int32_t id, float *out)
{
	return w->ops->embed_row(w->impl, id, out);
}
static inline int wt_head_acquire(struct wt_ctx *w, uint32_t row0, uint32_t n, struct wt_mat *out)
{
	return w->ops->head_acquire(w->impl, row0, n, out);
}
static inline void wt_head_release(struct wt_ctx *w, uint32_t row0)
{
	w->ops->head_release(w->impl, row0);
}
static inline const void *wt_peek(struct wt_ctx *w, uint32_t layer, size_t *bytes)
{
	return w->ops->peek ? w->ops->peek(w->impl, layer, bytes) : NULL;
}
void wt_close(struct wt_ctx *w);
/* The counters since the last reset (zeros for an implementation without
 * disk traffic); reset: start counting again. */
void wt_io_stats(const struct wt_ctx *w, struct wt_io_stats *out, bool reset);

/*
 * Resident weights: the tensor data section [g->data_offset, g->extent) read
 * from r into one allocation from mem. The tensor layout must already have
 * been checked (model_check_layout). n_layer and n_embd come from the model.
 * With pack > 0, each layer matrix and an untied output head whose type has
 * a packed form on this CPU (quant_can_pack) is packed in place after the
 * read, by that many workers (anything that hashes the model reads it
 * before); 0 leaves the rows as they are. With meas, every byte of the
 * section is fed to it (measure_update) in order as it is read, before anything uses it (the
 * engine measures a plain model by the bytes it computes with). On error
 * returns -LLMK_E* with one line in err.
 */
struct llm_measure;
int wt_resident_open(struct wt_ctx *w, const struct gguf_file *g, const struct llm_reader *r,
		     struct llm_mem *mem, uint32_t n_layer, uint32_t n_embd, int pack,
		     struct llm_measure *meas, char *err, size_t errlen);

#endif
