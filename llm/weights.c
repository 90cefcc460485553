/*
 * llm/weights.c — the layer slot table and the resident implementation of
 * the weights interface (weights.h).
 */
#include "weights.h"
#include "quant.h"
#include "measure.h"

#define SLOT3(sfx, field, kind, opt, ne0, ne1, ne2)                                      \
	{sfx, __builtin_offsetof(struct wt_layer, field), kind, opt,                       \
	 {WT_DIM_##ne0, WT_DIM_##ne1, WT_DIM_##ne2}}
#define SLOT(sfx, field, kind, opt, ne0, ne1) SLOT3(sfx, field, kind, opt, ne0, ne1, 1)
const struct wt_slot wt_layer_slots[] = {
	SLOT("attn_norm.weight", attn_norm, WT_VEC, true, EMBD, 1),
	SLOT("attn_q.weight", wq, WT_MAT, true, EMBD, Q),
	SLOT("attn_k.weight", wk, WT_MAT, true, EMBD, KV),
	SLOT("attn_v.weight", wv, WT_MAT, true, EMBD, KV),
	SLOT("attn_qkv.weight", wqkv, WT_MAT, true, EMBD, QKV),
	SLOT("attn_output.weight", wo, WT_MAT, false, Q, EMBD),
	SLOT("attn_q.bias", bq, WT_VEC, true, Q, 1),
	SLOT("attn_k.bias", bk, WT_VEC, true, KV, 1),
	SLOT("attn_v.bias", bv, WT_VEC, true, KV, 1),
	SLOT("attn_q_norm.weight", q_norm, WT_VEC, true, QNORM, 1),
	SLOT("attn_k_norm.weight", k_norm, WT_VEC, true, KNORM, 1),
	SLOT("ffn_norm.weight", ffn_norm, WT_VEC, true, EMBD, 1),
	SLOT("post_attention_norm.weight", attn_post_norm, WT_VEC, true, EMBD, 1),
	SLOT("post_ffw_norm.weight", ffn_post_norm, WT_VEC, true, EMBD, 1),
	SLOT("ffn_gate.weight", w_gate, WT_MAT, true, EMBD, FF),
	SLOT("ffn_up.weight", w_up, WT_MAT, true, EMBD, UP),
	SLOT("ffn_down.weight", w_down, WT_MAT, true, FF, EMBD),
	SLOT("ffn_gate_inp.weight", gate_inp, WT_MAT, true, EMBD, EXPERTS),
	SLOT3("ffn_gate_exps.weight", gate_exps, WT_MAT, true, EMBD, FF_EXP, EXPERTS),
	SLOT3("ffn_up_exps.weight", up_exps, WT_MAT, true, EMBD, FF_EXP, EXPERTS),
	SLOT3("ffn_down_exps.weight", down_exps, WT_MAT, true, FF_EXP, EMBD, EXPERTS),
	SLOT("ffn_gate_inp_shexp.weight", gate_inp_shexp, WT_VEC, true, EMBD, 1),
	SLOT("ffn_gate_shexp.weight", gate_shexp, WT_MAT, true, EMBD, FF_SHEXP),
	SLOT("ffn_up_shexp.weight", up_shexp, WT_MAT, true, EMBD, FF_SHEXP),
	SLOT("ffn_down_shexp.weight", down_shexp, WT_MAT, true, FF_SHEXP, EMBD),
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

void wt_io_stats(const struct wt_ctx *w, struct wt_io_stats *out, bool reset)
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
	struct wt_mat m = {res_ptr(r, t), t->type, t->ne[1] * t->ne[2], t->ne[0], false};
	return m;
}

struct pack_job {
	const struct quant_packed *p;
	const struct quant_tune *tune;
	uint8_t *data, *tmp;  /* tmp: tmp_bytes per worker */
	size_t group, tmp_bytes, groups, cols;
};

static void pack_task(void *arg, int i, int n)
{
	struct pack_job *j = arg;
	size_t g0 = j->groups * (size_t)i / (size_t)n, g1 = j->groups * (size_t)(i + 1) / (size_t)n;

	for (size_t g = g0; g < g1; g++) {
		uint8_t *rows = j->data + g * j->group, *tmp = j->tmp + (size_t)i * j->tmp_bytes;
		memcpy(tmp, rows, j->group); /* in place: packed back from a copy */
		j->p->pack_to(j->cols, tmp, rows, j->tune);
	}
}

/* Bytes of a group of 16 rows of such a matrix when it can be packed on
 * this CPU (quant_can_pack), else 0. */
static size_t pack_group_bytes(uint32_t type, uint64_t rows, uint64_t cols)
{
	if (!quant_can_pack(type, rows, cols))
		return 0;
	return QUANT_TILE_ROWS * (size_t)quant_row_bytes(type, cols);
}

_Static_assert(GGML_TYPE_COUNT <= 64, "wt_ctx.packed_types: a bit per ggml type");

/* m packed in place by nw workers, each with tmp_bytes of tmp (at least a
 * group), runs of groups each; the bytes packed (0: m left as it is), and
 * m's type added to *types when packed. */
static uint64_t pack_mat(struct wt_mat *m, uint8_t *tmp, size_t tmp_bytes, int nw,
			 uint64_t *types)
{
	struct pack_job j;

	j.group = pack_group_bytes(m->type, m->rows, m->cols);
	if (!j.group || j.group > tmp_bytes || m->packed)
		return 0;
	j.p = quant_table_packed(quant_cpu(), m->type);
	j.tune = quant_table_tune(quant_cpu(), m->type);
	j.tmp = tmp;
	j.tmp_bytes = tmp_bytes;
	j.data = (uint8_t *)m->data;
	j.groups = (size_t)(m->rows / QUANT_TILE_ROWS);
	j.cols = (size_t)m->cols;
	if (nw > 1 && j.groups >= (size_t)nw)
		plat_parallel(pack_task, &j, nw);
	else
		pack_task(&j, 0, 1);
	m->packed = true;
	*types |= (uint64_t)1 << m->type; /* quant_can_pack: m->type < GGML_TYPE_COUNT */
	return (uint64_t)j.group * j.groups;
}

/* threads, at most the CPUs plat_parallel has */
static int pack_workers(int threads)
{
	int n = plat_cpu_count();

	if (threads < 1)
		threads = 1;
	return n >= 1 && threads > n ? n : threads;
}

/* The widest group of 16 rows among the matrices res_pack_all may pack. */
static size_t res_pack_tmp(const struct wt_resident *r)
{
	size_t most = 0, g;

	for (uint32_t l = 0; l < r->n_layer; l++)
		for (uint32_t s = 0; s < wt_n_layer_slots; s++) {
			const struct wt_mat *m;
			if (wt_layer_slots[s].kind != WT_MAT)
				continue;
			m = (const struct wt_mat *)((const uint8_t *)&r->layers[l] +
						    wt_layer_slots[s].offset);
			if (m->data && (g = pack_group_bytes(m->type, m->rows, m->cols)) > most)
				most = g;
		}
	if (r->head.data != r->embd.data &&
	    (g = pack_group_bytes(r->head.type, r->head.rows, r->head.cols)) > most)
		most = g;
	return most;
}

/* Pack what can be packed with threads workers; without the memory for
 * the groups' copies, nothing is (the plain rows work everywhere). The
 * bytes packed; *types gets a bit per type packed. */
static uint64_t res_pack_all(struct wt_resident *r, int threads, uint64_t *types)
{
	uint64_t done = 0;
	size_t tb = (res_pack_tmp(r) + 63) & ~(size_t)63;
	int e = 0, nw = pack_workers(threads);
	uint8_t *tmp;

	if (!tb || !(tmp = llm_mem_alloc(r->mem, tb * (size_t)nw, &e)))
		return 0;
	for (uint32_t l = 0; l < r->n_layer; l++)
		for (uint32_t s = 0; s < wt_n_layer_slots; s++)
			if (wt_layer_slots[s].kind == WT_MAT)
				done += pack_mat((struct wt_mat *)((uint8_t *)&r->layers[l] +
								      wt_layer_slots[s].offset),
						    tmp, tb, nw, types);
	/* a tied head is the embedding, whose rows are read one by one */
	if (r->head.data != r->embd.data)
		done += pack_mat(&r->head, tmp, tb, nw, types);
	llm_mem_free(r->mem, tmp, tb * (size_t)nw);
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

static const void *res_peek(void *impl, uint32_t layer, size_t *bytes)
{
	struct wt_resident *r = impl;
	const struct wt_mat *m = layer < r->n_layer ? &r->layers[layer].wq : &r->head;

	if (layer < r->n_layer && !m->data) /* fused Q, K, V */
		m = &r->layers[layer].wqkv;

	*bytes = (size_t)(m->rows * quant_row_bytes(m->type, m->cols));
	return m->data;
}

static const struct wt_ops res_ops = {
	res_layer_acquire, res_layer_release, res_embed_row,
	res_head_acquire, res_head_release, res_close, NULL, res_peek,
};

/* Read the data section in 1 MiB pieces (a reader need not take huge reads),
 * each fed to meas (when given) once it is in memory. */
static int res_read(struct wt_resident *r, const struct llm_reader *rd, struct llm_measure *meas)
{
	const uint64_t piece = 1u << 20;

	for (uint64_t off = 0; off < r->data_bytes; off += piece) {
		uint64_t n = r->data_bytes - off < piece ? r->data_bytes - off : piece;
		int e = rd->read(rd->ctx, r->g->data_offset + off, r->data + off, (size_t)n);
		if (e)
			return e;
		if (meas)
			measure_update(meas, r->data + off, (size_t)n);
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

/* In the sanitizer build (llm/mem.h) the bytes of the data section that are
 * no tensor's (alignment padding, what a file leaves between tensors) are
 * poisoned, once it is read: the whole section is poisoned, then each
 * tensor's bytes unpoisoned again. */
static void res_poison_gaps(struct wt_resident *r)
{
	if (!LLM_MEM_REDZONE)
		return;
	llm_mem_poison(r->data, (size_t)r->data_bytes);
	for (uint64_t i = 0; i < r->g->n_tensors; i++) {
		const struct gguf_tensor *t = &r->g->tensors[i];
		llm_mem_unpoison(res_ptr(r, t), (size_t)t->size);
	}
}

int wt_resident_open(struct wt_ctx *w, const struct gguf_file *g, const struct llm_reader *rd,
		     struct llm_mem *mem, uint32_t n_layer, uint32_t n_embd, int pack,
		     struct llm_measure *meas, char *err, size_t errlen)
{
	const struct gguf_tensor *embd = gguf_find_tensor(g, "token_embd.weight");
	const struct gguf_tensor *head = gguf_find_tensor(g, "output.weight");
	const struct gguf_tensor *onorm = gguf_find_tensor(g, "output_norm.weight");
	const struct gguf_tensor *rf = gguf_find_tensor(g, "rope_freqs.weight");
	const struct gguf_tensor *rl = gguf_find_tensor(g, "rope_factors_long.weight");
	const struct gguf_tensor *rs = gguf_find_tensor(g, "rope_factors_short.weight");
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
	e = res_read(r, rd, meas);
	if (e) {
		plat_snprintf(err, errlen, "weights: reading %llu bytes of tensor data at 0x%llx: %s",
			      (unsigned long long)r->data_bytes,
			      (unsigned long long)g->data_offset, plat_strerror(e));
		res_close(r);
		return e;
	}
	res_poison_gaps(r);
	for (uint32_t l = 0; l < n_layer; l++)
		res_fill_layer(r, l);
	r->embd = res_mat(r, embd);
	/* tied output: no output.weight means the head is the embedding matrix */
	r->head = res_mat(r, head ? head : embd);
	if (pack > 0) {
		uint64_t t0 = plat_time_ns();
		w->packed_bytes = res_pack_all(r, pack, &w->packed_types);
		w->pack_ns = plat_time_ns() - t0;
	}

	w->ops = &res_ops;
	w->impl = r;
	w->output_norm = res_ptr(r, onorm);
	w->rope_freqs = rf ? res_ptr(r, rf) : NULL;
	w->rope_long = rl ? res_ptr(r, rl) : NULL;
	w->rope_short = rs ? res_ptr(r, rs) : NULL;
	w->head_chunk = (uint32_t)r->head.rows;
	w->resident_bytes = r->data_bytes;
	w->kind = "resident";
	return 0;
oom:
	plat_snprintf(err, errlen, "weights: cannot hold %llu bytes of tensor data: %s",
		      (unsigned long long)(g->extent - g->data_offset), plat_strerror(e));
	return e;
}
