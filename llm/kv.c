/*
 * llm/kv.c — the key/value cache (see kv.h). Conversions go through the
 * quant table's rows so F16 and Q8_0 round exactly as ggml's do.
 */
#include "kv.h"

static bool kv_type_ok(uint32_t type, uint32_t kv_dim)
{
	if (type == GGML_TYPE_F32 || type == GGML_TYPE_F16)
		return true;
	return type == GGML_TYPE_Q8_0 && kv_dim % 32 == 0;
}

uint64_t kv_bytes(uint32_t type, uint32_t n_layer, uint32_t n_ctx, uint32_t kv_dim)
{
	if (!kv_type_ok(type, kv_dim))
		return 0;
	return 2 * (uint64_t)n_layer * n_ctx * quant_row_bytes(type, kv_dim);
}

int kv_type_parse(const char *s, uint32_t *type)
{
	if (strcmp(s, "f16") == 0)
		*type = GGML_TYPE_F16;
	else if (strcmp(s, "q8_0") == 0)
		*type = GGML_TYPE_Q8_0;
	else if (strcmp(s, "f32") == 0)
		*type = GGML_TYPE_F32;
	else
		return -LLMK_EINVAL;
	return 0;
}

const char *kv_type_name(uint32_t type)
{
	switch (type) {
	case GGML_TYPE_F16: return "f16";
	case GGML_TYPE_Q8_0: return "q8_0";
	case GGML_TYPE_F32: return "f32";
	}
	return "?";
}

int kv_init(struct kv_cache *c, struct llm_mem *mem, uint32_t type, uint32_t n_layer,
	    uint32_t n_ctx, uint32_t kv_dim)
{
	int err = 0;

	memset(c, 0, sizeof *c);
	if (!kv_type_ok(type, kv_dim) || !n_layer || !n_ctx)
		return -LLMK_EINVAL;
	c->type = type;
	c->n_layer = n_layer;
	c->n_ctx = n_ctx;
	c->kv_dim = kv_dim;
	c->row_bytes = quant_row_bytes(type, kv_dim);
	/* In the sanitizer build each layer's rows end in a poisoned redzone,
	 * 64-byte aligned: a position past the context lands there, not in
	 * the next layer's rows. Elsewhere the layers are back to back. */
	c->layer_bytes = (size_t)n_ctx * c->row_bytes;
	if (LLM_MEM_REDZONE)
		c->layer_bytes = ((c->layer_bytes + 63) & ~(size_t)63) + LLM_MEM_REDZONE;
	c->bytes = (size_t)n_layer * c->layer_bytes;
	c->mem = mem;
	c->k = llm_mem_alloc_sparse(mem, c->bytes, &err);
	if (!c->k)
		return err;
	c->v = llm_mem_alloc_sparse(mem, c->bytes, &err);
	if (!c->v) {
		llm_mem_free_sparse(mem, c->k, c->bytes); /* nothing written */
		c->k = NULL;
		return err;
	}
	for (uint32_t l = 0; l < n_layer && LLM_MEM_REDZONE; l++) {
		size_t rows = (size_t)n_ctx * c->row_bytes, at = l * c->layer_bytes + rows;
		llm_mem_poison(c->k + at, c->layer_bytes - rows);
		llm_mem_poison(c->v + at, c->layer_bytes - rows);
	}
	return 0;
}

/* The rows written, layer by layer: a wipe of all of a long context's
 * cache faulted in (on the host, backed) gigabytes no run had touched. */
static void kv_wipe(struct kv_cache *c)
{
	size_t n = (size_t)c->n_written * c->row_bytes;

	for (uint32_t l = 0; l < c->n_layer && n; l++) {
		if (c->k)
			llm_mem_wipe(c->mem, c->k + (size_t)l * c->layer_bytes, n);
		if (c->v)
			llm_mem_wipe(c->mem, c->v + (size_t)l * c->layer_bytes, n);
	}
	c->n_written = 0;
}

void kv_free(struct kv_cache *c)
{
	kv_wipe(c);
	if (c->k)
		llm_mem_free_sparse(c->mem, c->k, c->bytes);
	if (c->v)
		llm_mem_free_sparse(c->mem, c->v, c->bytes);
	memset(c, 0, sizeof *c);
}

void kv_zeroize(struct kv_cache *c)
{
	kv_wipe(c);
}

static uint8_t *kv_row(const struct kv_cache *c, uint8_t *base, uint32_t layer, uint32_t pos)
{
	return base + (size_t)layer * c->layer_bytes + (size_t)pos * c->row_bytes;
}

/* Through the quant table's selected rows: F16 <-> F32 is exact either
 * way, and SIMD rows (F16C, NEON) convert a row at a time. */
static void put_row(const struct kv_cache *c, uint8_t *dst, const float *src)
{
	quant_get(c->type)->from_float(src, dst, c->kv_dim);
}

static void get_row(const struct kv_cache *c, const uint8_t *src, float *dst)
{
	quant_get(c->type)->to_float(src, dst, c->kv_dim);
}

void kv_store(struct kv_cache *c, uint32_t layer, uint32_t pos, const float *k, const float *v)
{
	/* the workers of a pass store rows at once: the mark only grows */
	uint32_t hi = __atomic_load_n(&c->n_written, __ATOMIC_RELAXED);

	while (pos >= hi && !__atomic_compare_exchange_n(&c->n_written, &hi, pos + 1, true,
							 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	put_row(c, kv_row(c, c->k, layer, pos), k);
	put_row(c, kv_row(c, c->v, layer, pos), v);
}

void kv_load_k(const struct kv_cache *c, uint32_t layer, uint32_t pos, float *out)
{
	get_row(c, kv_row(c, c->k, layer, pos), out);
}

void kv_load_v(const struct kv_cache *c, uint32_t layer, uint32_t pos, float *out)
{
	get_row(c, kv_row(c, c->v, layer, pos), out);
}

static void get_part(const struct kv_cache *c, const uint8_t *row, uint32_t off, uint32_t n,
		     float *dst)
{
	const struct quant_type *q = quant_get(c->type);
	float blk[32];

	if (q->blck == 1) {
		q->to_float(row + (size_t)off * q->bytes, dst, n);
		return;
	}
	/* Q8_0: convert the blocks of 32 the range touches */
	for (uint32_t i = off; i < off + n;) {
		uint32_t b = i / 32, lo = i % 32, take = 32 - lo;
		if (take > off + n - i)
			take = off + n - i;
		q->to_float(row + (size_t)b * q->bytes, blk, 32);
		memcpy(dst + (i - off), blk + lo, take * sizeof(float));
		i += take;
	}
}

void kv_load_k_part(const struct kv_cache *c, uint32_t layer, uint32_t pos, uint32_t off,
		    uint32_t n, float *out)
{
	get_part(c, kv_row(c, c->k, layer, pos), off, n, out);
}

void kv_load_v_part(const struct kv_cache *c, uint32_t layer, uint32_t pos, uint32_t off,
		    uint32_t n, float *out)
{
	get_part(c, kv_row(c, c->v, layer, pos), off, n, out);
}

void kv_prefetch_parts(const struct kv_cache *c, uint32_t layer, uint32_t pos, uint32_t np,
		       uint32_t off, uint32_t n)
{
	const struct quant_type *q = quant_get(c->type);
	/* the bytes of the blocks the range touches */
	size_t b0 = (size_t)(off / q->blck) * q->bytes;
	size_t b1 = (size_t)((off + n + q->blck - 1) / q->blck) * q->bytes;

	for (uint32_t t = pos; t < pos + np && t < c->n_ctx; t++) {
		const uint8_t *k = kv_row(c, c->k, layer, t), *v = kv_row(c, c->v, layer, t);
		for (size_t o = b0 & ~(size_t)63; o < b1; o += 64) {
			__builtin_prefetch(k + o, 0, 3);
			__builtin_prefetch(v + o, 0, 3);
		}
	}
}
