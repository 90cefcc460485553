/*
 * llm/kv.h — the attention key/value cache.
 *
 * One K row and one V row (n_head_kv * head_dim values) per layer and
 * position, stored as F16 (default), Q8_0 (half the bytes again, ggml's
 * block_q8_0 so the quant table converts it) or F32 (exact, for tests).
 * Layout: k[layer][pos][kv_dim], the same for v. The cache is sized once
 * from the context length; kv_plan_ctx shrinks the context to a budget.
 */
#ifndef LLM_KV_H
#define LLM_KV_H

#include "mem.h"
#include "quant.h"

struct kv_cache {
	uint32_t type;      /* GGML_TYPE_F32, _F16 or _Q8_0 */
	uint32_t n_layer;
	uint32_t n_ctx;     /* positions held */
	uint32_t kv_dim;
	size_t row_bytes;   /* bytes of one K (or V) row */
	size_t layer_bytes; /* from one layer's rows to the next's (n_ctx rows, and a
			     * poisoned redzone in the sanitizer build: llm/mem.h) */
	uint8_t *k, *v;
	size_t bytes;       /* of each of k and v: n_layer * layer_bytes */
	uint32_t n_written; /* rows [0, n_written) of a layer may have been
			     * written: what a wipe covers (the rest of the
			     * sparse pages were never touched) */
	struct llm_mem *mem;
};

/* Bytes K+V need; 0 if the type cannot hold rows of kv_dim (Q8_0 wants a
 * multiple of 32) or is not a KV type. */
uint64_t kv_bytes(uint32_t type, uint32_t n_layer, uint32_t n_ctx, uint32_t kv_dim);
/* "f16", "q8_0", "f32" -> type; -LLMK_EINVAL for other names. */
int kv_type_parse(const char *s, uint32_t *type);
const char *kv_type_name(uint32_t type);

int kv_init(struct kv_cache *c, struct llm_mem *mem, uint32_t type, uint32_t n_layer,
	    uint32_t n_ctx, uint32_t kv_dim);
void kv_free(struct kv_cache *c);
/* Zeroize every row of K and V written (a conversation is forgotten, not
 * only unreferenced); the cache stays allocated. kv_free wipes them too. */
void kv_zeroize(struct kv_cache *c);

/* Write position pos of layer from float rows k and v (kv_dim each). */
void kv_store(struct kv_cache *c, uint32_t layer, uint32_t pos, const float *k, const float *v);
/* Read them back as floats. */
void kv_load_k(const struct kv_cache *c, uint32_t layer, uint32_t pos, float *out);
void kv_load_v(const struct kv_cache *c, uint32_t layer, uint32_t pos, float *out);
/* Elements [off, off + n) of a row (one KV head's slice). */
void kv_load_k_part(const struct kv_cache *c, uint32_t layer, uint32_t pos, uint32_t off,
		    uint32_t n, float *out);
void kv_load_v_part(const struct kv_cache *c, uint32_t layer, uint32_t pos, uint32_t off,
		    uint32_t n, float *out);
/* Ask for the K and V parts [off, off + n) of positions [pos, pos + np) to
 * be fetched into the cache (a hint; attention asks for the next tile while
 * it works on one: the parts of consecutive positions are a row apart, a
 * pattern the hardware prefetchers do not follow). */
void kv_prefetch_parts(const struct kv_cache *c, uint32_t layer, uint32_t pos, uint32_t np,
		       uint32_t off, uint32_t n);

#endif
