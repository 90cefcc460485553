/*
 * llm/weights.c — the layer slot table and the resident implementation of
 * the weights interface (weights.h).
 */
#include "weights.h"
#include "quant.h"

#define SLOT(sfx, field, kind, opt) {sfx, __builtin_offsetof(struct wt_layer, field), kind, opt}
const struct wt_slot wt_layer_slots[] = {
	SLOT("attn_norm.weight", attn_norm, WT_VEC, false),
	SLOT("attn_q.weight", wq, WT_MAT, false),
	SLOT("attn_k.weight", wk, WT_MAT, false),
	SLOT("attn_v.weight", wv, WT_MAT, false),
	SLOT("attn_output.weight", wo, WT_MAT, false),
	SLOT("attn_q.bias", bq, WT_VEC, true),
	SLOT("attn_k.bias", bk, WT_VEC, true),
	SLOT("attn_v.bias", bv, WT_VEC, true),
	SLOT("ffn_norm.weight", ffn_norm, WT_VEC, false),
	SLOT("ffn_gate.weight", w_gate, WT_MAT, false),
	SLOT("ffn_up.weight", w_up, WT_MAT, false),
	SLOT("ffn_down.weight", w_down, WT_MAT, false),
};
const uint32_t wt_n_layer_slots = sizeof wt_layer_slots / sizeof wt_layer_slots[0];

void wt_tensor_name(char *buf, size_t n, uint32_t layer, const char *suffix)
{
	plat_snprintf(buf, n, "blk.%u.%s", layer, suffix);
}

void wt_close(struct wt_ctx *w)
{
	if (w->ops)
		w->ops->close(w->impl);
	memset(w, 0, sizeof *w);
}

void wt_io_stats(struct wt_ctx *w, struct wt_io_stats *out, bool reset)
{
	memset(out, 0, sizeof *out);
	if (w->ops && w->ops->io_stats)
		w->ops->io_stats(w->impl, out, reset);
}

/* ---- resident: every tensor in memory, acquire is a table lookup ---- */
struct wt_resident {
	const struct gguf_file *g;
	struct llm_mem *mem;
	uint8_t *data;           /* the tensor data section */
	uint64_t data_bytes;
	uint32_t n_layer, n_embd;
	struct wt_layer *layers; /* filled at open */
	struct wt_mat embd, head;
};

static const void *res_ptr(const struct wt_resident *r, const struct gguf_tensor *t)
{
	return r->data + (t->offset - r->g->data_offset);
}

static struct wt_mat res_mat(const struct wt_resident *r, const struct gguf_tensor *t)
{
	struct wt_mat m = {res_ptr(r, t), t->type, t->ne[1], t->ne[0], false};
	return m;
}

/* Pack m in place, a group of 16 rows at a time, when its type has a packed
 * form here; tmp holds a group. Returns the bytes packed. */
static uint64_t res_pack(struct wt_mat *m, uint8_t *tmp, size_t tmp_bytes)
{
	const struct quant_packed *p = quant_get_packed(m->type);
	size_t g = QUANT_TILE_ROWS * (size_t)quant_row_bytes(m->type, m->cols);

	if (!quant_can_pack(m->type, m->rows, m->cols) || g > tmp_bytes)
		return 0;
	for (uint64_t r = 0; r < m->rows; r += QUANT_TILE_ROWS)
		p->pack((size_t)m->cols, (uint8_t *)m->data + r / QUANT_TILE_ROWS * g, tmp);
	m->packed = true;
	return (uint64_t)g * (m->rows / QUANT_TILE_ROWS);
}

/* The widest group of 16 rows among the matrices res_pack may pack. */
static size_t res_pack_tmp(const struct wt_resident *r)
{
	size_t most = 0;

	for (uint32_t l = 0; l < r->n_layer; l++)
		for (uint32_t s = 0; s < wt_n_layer_slots; s++) {
			const struct wt_mat *m;
			if (wt_layer_slots[s].kind != WT_MAT)
				continue;
			m = (const struct wt_mat *)((const uint8_t *)&r->layers[l] +
						    wt_layer_slots[s].offset);
			if (m->data && QUANT_TILE_ROWS * quant_row_bytes(m->type, m->cols) > most)
				most = QUANT_TILE_ROWS * quant_row_bytes(m->type, m->cols);
		}
	if (r->head.data != r->embd.data &&
	    QUANT_TILE_ROWS * quant_row_bytes(r->head.type, r->head.cols) > most)
		most = QUANT_TILE_ROWS * quant_row_bytes(r->head.type, r->head.cols);
	return most;
}

/* Pack what can be packed; without the memory for a group's copy, nothing
 * is (the plain rows work everywhere). */
static uint64_t res_pack_all(struct wt_resident *r)
{
	size_t tb = res_pack_tmp(r);
	uint64_t done = 0;
	int e = 0;
	uint8_t *tmp = tb ? llm_mem_alloc(r->mem, tb, &e) : NULL;

	if (!tmp)
		return 0;
	for (uint32_t l = 0; l < r->n_layer; l++)
		for (uint32_t s = 0; s < wt_n_layer_slots; s++)
			if (wt_layer_slots[s].kind == WT_MAT)
				done += res_pack((struct wt_mat *)((uint8_t *)&r->layers[l] +
								   wt_layer_slots[s].offset),
						 tmp, tb);
	/* a tied head is the embedding, whose rows are read one by one */
	if (r->head.data != r->embd.data)
		done += res_pack(&r->head, tmp, tb);
	llm_mem_free(r->mem, tmp, tb);
	return done;
}

static int res_layer_acquire(void *impl, uint32_t layer, struct wt_layer *out)
{
	struct wt_resident *r = impl;

	if (layer >= r->n_layer)
		return -LLMK_ERANGE;
	*out = r->layers[layer];
	return 0;
}

static void res_layer_release(void *impl, uint32_t layer)
{
}

static int res_embed_row(void *impl, int32_t id, float *out)
{
	struct wt_resident *r = impl;
	const struct quant_type *q = quant_get(r->embd.type);
	size_t rb = quant_row_bytes(r->embd.type, r->embd.cols);

	if (id < 0 || (uint64_t)id >= r->embd.rows || !q)
		return -LLMK_ERANGE;
	q->to_float((const uint8_t *)r->embd.data + rb * (size_t)id, out, r->embd.cols);
	return 0;
}

static int res_head_acquire(void *impl, uint32_t row0, uint32_t n, struct wt_mat *out)
{
	struct wt_resident *r = impl;
	size_t rb = quant_row_bytes(r->head.type, r->head.cols);

	if ((uint64_t)row0 + n > r->head.rows)
		return -LLMK_ERANGE;
	*out = r->head;
	out->data = (const uint8_t *)r->head.data + rb * row0;
	out->rows = n;
	return 0;
}

static void res_head_release(void *impl, uint32_t row0)
{
}

static void res_close(void *impl)
{
	struct wt_resident *r = impl;
	struct llm_mem *mem = r->mem;

	if (r->data)
		llm_mem_free(mem, r->data, r->data_bytes);
	if (r->layers)
		llm_mem_free(mem, r->layers, r->n_layer * sizeof *r->layers);
	llm_mem_free(mem, r, sizeof *r);
}

static const struct wt_ops res_ops = {
	res_layer_acquire, res_layer_release, res_embed_row,
	res_head_acquire, res_head_release, res_close, NULL,
};

/* Read the data section in 1 MiB pieces (a reader need not take huge reads). */
static int res_read(struct wt_resident *r, const struct llm_reader *rd)
{
	const uint64_t piece = 1u << 20;

	for (uint64_t off = 0; off < r->data_bytes; off += piece) {
		uint64_t n = r->data_bytes - off < piece ? r->data_bytes - off : piece;
		int e = rd->read(rd->ctx, r->g->data_offset + off, r->data + off, (size_t)n);
		if (e)
			return e;
	}
	return 0;
}

static void res_fill_layer(struct wt_resident *r, uint32_t l)
{
	char name[96];

	for (uint32_t s = 0; s < wt_n_layer_slots; s++) {
		const struct wt_slot *sl = &wt_layer_slots[s];
		const struct gguf_tensor *t;
		uint8_t *field = (uint8_t *)&r->layers[l] + sl->offset;

		wt_tensor_name(name, sizeof name, l, sl->suffix);
		t = gguf_find_tensor(r->g, name);
		if (!t)
			continue; /* optional (the layout check ran before) */
		if (sl->kind == WT_VEC)
			*(const float **)field = res_ptr(r, t);
		else
			*(struct wt_mat *)field = res_mat(r, t);
	}
}

int wt_resident_open(struct wt_ctx *w, const struct gguf_file *g, const struct llm_reader *rd,
		     struct llm_mem *mem, uint32_t n_layer, uint32_t n_embd, bool pack,
		     char *err, size_t errlen)
{
	const struct gguf_tensor *embd = gguf_find_tensor(g, "token_embd.weight");
	const struct gguf_tensor *head = gguf_find_tensor(g, "output.weight");
	const struct gguf_tensor *onorm = gguf_find_tensor(g, "output_norm.weight");
	const struct gguf_tensor *rf = gguf_find_tensor(g, "rope_freqs.weight");
	struct wt_resident *r;
	int e = 0;

	memset(w, 0, sizeof *w);
	if (!embd || !onorm) {
		plat_snprintf(err, errlen, "weights: tensor '%s' missing",
			      embd ? "output_norm.weight" : "token_embd.weight");
		return -LLMK_EFORMAT;
	}
	r = llm_mem_alloc(mem, sizeof *r, &e);
	if (!r)
		goto oom;
	r->g = g;
	r->mem = mem;
	r->n_layer = n_layer;
	r->n_embd = n_embd;
	r->data_bytes = g->extent - g->data_offset;
	r->layers = llm_mem_alloc(mem, n_layer * sizeof *r->layers, &e);
	if (!r->layers || !(r->data = llm_mem_alloc(mem, r->data_bytes ? r->data_bytes : 1, &e))) {
		res_close(r);
		goto oom;
	}
	e = res_read(r, rd);
	if (e) {
		plat_snprintf(err, errlen, "weights: reading %llu bytes of tensor data at 0x%llx: %s",
			      (unsigned long long)r->data_bytes,
			      (unsigned long long)g->data_offset, plat_strerror(e));
		res_close(r);
		return e;
	}
	for (uint32_t l = 0; l < n_layer; l++)
		res_fill_layer(r, l);
	r->embd = res_mat(r, embd);
	/* tied output: no output.weight means the head is the embedding matrix */
	r->head = res_mat(r, head ? head : embd);
	if (pack)
		w->packed_bytes = res_pack_all(r);

	w->ops = &res_ops;
	w->impl = r;
	w->output_norm = res_ptr(r, onorm);
	w->rope_freqs = rf ? res_ptr(r, rf) : NULL;
	w->head_chunk = (uint32_t)r->head.rows;
	w->resident_bytes = r->data_bytes;
	w->kind = "resident";
	return 0;
oom:
	plat_snprintf(err, errlen, "weights: cannot hold %llu bytes of tensor data: %s",
		      (unsigned long long)(g->extent - g->data_offset), plat_strerror(e));
	return e;
}
