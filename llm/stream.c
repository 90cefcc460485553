/*
 * llm/stream.c — the layer streamer (stream.h).
 *
 * Items are numbered in the order a forward pass uses them: 0 .. n_layer-1
 * are the layers, n_layer .. n_items-1 the output-head row chunks. After the
 * last head chunk comes layer 0 of the next token, so read-ahead runs round
 * the ring. An acquire that finds its item not read ahead (the pass skipped
 * the head, or the first pass) waits for what is in flight, drops it and
 * restarts the ring at the item asked for.
 *
 * No read depends on a token: the token embedding table is read whole at
 * open and held (issue 27: a row read by id would show the host every
 * prompt and answer token by its offset), so a pass reads the same items
 * whatever it computes.
 *
 * This file is the read ring; what a slot's bytes are checked against
 * before a pass uses them is stream_check.c's.
 */
#include "stream_int.h"
#include "quant.h"

static uint64_t charge(uint64_t n)
{
	return st_up(n ? n : 1, 4096);
}

/* What a read is made of: a sealed image's chunks (plaintext offsets from
 * 0), a bound plain model's blocks (from the 512-byte sector the data
 * section starts in), else sectors. */
static struct st_grid grid_of(const struct gguf_file *g, const struct seal_ctx *seal, bool bind)
{
	if (seal)
		return (struct st_grid){0, seal->hdr.chunk_size};
	if (bind)
		return (struct st_grid){g->data_offset / ST_ALIGN * ST_ALIGN,
					bind_block(g->data_offset / ST_ALIGN * ST_ALIGN, g->extent)};
	return (struct st_grid){0, ST_ALIGN};
}

/* Disk bytes a plaintext range occupies once widened to what can be read. */
static uint64_t span(struct st_grid gr, uint64_t lo, uint64_t hi)
{
	return st_up(hi - gr.base, gr.unit) - (lo - gr.base) / gr.unit * gr.unit;
}

static const struct gguf_tensor *head_tensor(const struct gguf_file *g)
{
	const struct gguf_tensor *h = gguf_find_tensor(g, "output.weight");

	/* tied output: no output.weight means the head is the embedding matrix */
	return h ? h : gguf_find_tensor(g, "token_embd.weight");
}

/* The plaintext range of layer l's tensors. */
static struct st_range layer_range(const struct gguf_file *g, uint32_t l)
{
	struct st_range r = {UINT64_MAX, 0};
	char name[96];

	for (uint32_t s = 0; s < wt_n_layer_slots; s++) {
		const struct gguf_tensor *t;
		wt_tensor_name(name, sizeof name, l, wt_layer_slots[s].suffix);
		if (!(t = gguf_find_tensor(g, name)))
			continue;
		if (t->offset < r.lo)
			r.lo = t->offset;
		if (t->offset + t->size > r.hi)
			r.hi = t->offset + t->size;
	}
	if (r.lo > r.hi)
		r.lo = r.hi = 0;
	return r;
}

/*
 * Slot size: the largest layer's span, and at least one head row plus the
 * widening at both ends. Head chunks then take as many rows as a slot holds
 * with that widening.
 */
static void measure(const struct gguf_file *g, struct st_grid gr, uint32_t n_layer,
		    uint64_t *slot, uint32_t *head_rows, uint32_t *n_items)
{
	const struct gguf_tensor *h = head_tensor(g);
	uint64_t rb = quant_row_bytes(h->type, h->ne[0]), rows;
	uint64_t u = gr.unit, s = rb + 2 * u;

	for (uint32_t l = 0; l < n_layer; l++) {
		struct st_range r = layer_range(g, l);
		uint64_t b = span(gr, r.lo, r.hi);
		if (b > s)
			s = b;
	}
	rows = (s - 2 * u) / rb;
	if (rows > h->ne[1])
		rows = h->ne[1];
	*slot = s;
	*head_rows = (uint32_t)rows;
	*n_items = n_layer + (uint32_t)((h->ne[1] + rows - 1) / rows);
}

static uint32_t io_per_slot(uint64_t slot)
{
	return (uint32_t)((slot + STREAM_PIECE - 1) / STREAM_PIECE) + 1;
}

static uint64_t small_bytes(const struct gguf_file *g, const char *name)
{
	const struct gguf_tensor *t = gguf_find_tensor(g, name);
	return t ? t->size : 0;
}

void stream_measure(const struct gguf_file *g, const struct seal_ctx *seal, bool bind,
		    uint32_t n_layer, uint32_t n_embd, uint32_t n_slots, struct stream_need *out)
{
	const struct gguf_tensor *e = gguf_find_tensor(g, "token_embd.weight");
	struct st_grid gr = grid_of(g, seal, bind && !seal);
	uint64_t slot, fixed;

	measure(g, gr, n_layer, &slot, &out->head_rows, &out->n_items);
	out->slot_bytes = charge(slot + ST_ALIGN);
	fixed = charge(sizeof(struct wt_stream)) +
		charge((uint64_t)out->n_items * sizeof(struct st_range)) +
		charge((uint64_t)n_layer * wt_n_layer_slots * sizeof(void *)) +
		charge(n_embd * sizeof(float)) + charge(e->size);
	for (size_t i = 0; i < 3; i++) {
		const char *rn = i == 0 ? "rope_freqs.weight" : i == 1 ? "rope_factors_long.weight"
									: "rope_factors_short.weight";
		if (gguf_find_tensor(g, rn))
			fixed += charge(small_bytes(g, rn));
	}
	fixed += (uint64_t)n_slots * charge(io_per_slot(slot) * sizeof(struct plat_io));
	if (bind && !seal)
		fixed += charge(bind_bytes(gr.base, g->extent)) + charge(gr.unit);
	out->fixed_bytes = fixed;
	out->embd_bytes = charge(e->size);
	(void)n_embd;
}

/* ---- reading a slot ---- */
static struct st_slot *find(struct wt_stream *s, uint32_t item)
{
	for (uint32_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].item == (int32_t)item)
			return &s->slots[i];
	return NULL;
}

static struct st_slot *find_free(struct wt_stream *s)
{
	for (uint32_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].state == ST_FREE)
			return &s->slots[i];
	return NULL;
}

/* Start reading disk bytes [a, b) into sl: pieces of STREAM_PIECE bytes,
 * all in flight. */
void st_read_range(struct wt_stream *s, struct st_slot *sl, uint64_t a, uint64_t b)
{
	sl->state = ST_LOADING;
	sl->len = b - a;
	sl->n_io = 0;
	sl->sync_io = -1;
	for (uint64_t off = a; off < b; off += STREAM_PIECE) {
		uint64_t n = b - off < STREAM_PIECE ? b - off : STREAM_PIECE;
		struct plat_io *io = &sl->io[sl->n_io];
		uint8_t *dst = sl->buf + (off - a);

		if (off + n > s->disk_size) {
			/* the file's last sector is partial (host image files): read
			 * what exists synchronously, the rest is beyond every tensor */
			uint64_t have = s->disk_size > off ? s->disk_size - off : 0;
			memset(dst + have, 0, (size_t)(n - have));
			io->status = have ? plat_disk_read(s->disk, off, dst, (size_t)have) : 0;
			io->done = 1;
			sl->sync_io = (int32_t)sl->n_io;
		} else if ((io->status = plat_disk_read_async(s->disk, off, dst, (size_t)n, io))) {
			/* refused at submission: the slot fails with this error
			 * when acquired; nothing after it is issued */
			io->done = 1;
			sl->sync_io = (int32_t)sl->n_io++;
			break;
		}
		sl->n_io++;
		s->st.reads++;
		s->st.bytes_read += n;
	}
}

/* Start reading item into sl. */
static void issue(struct wt_stream *s, struct st_slot *sl, uint32_t item)
{
	struct st_range r = s->items[item];
	uint64_t a, b;

	if (s->seal) {
		seal_chunk_span(s->seal, r.lo, r.hi - r.lo, &sl->first, &sl->count);
		a = seal_chunk_offset(s->seal, sl->first);
		b = a + sl->count * s->seal->hdr.chunk_size;
		sl->base = sl->first * s->seal->hdr.chunk_size;
	} else { /* whole units of the grid: a bound model's blocks, else sectors */
		uint64_t u = s->grid.unit;
		sl->first = (r.lo - s->grid.base) / u;
		sl->count = st_up(r.hi - s->grid.base, u) / u - sl->first;
		a = s->grid.base + sl->first * u;
		b = a + sl->count * u;
		sl->base = a;
	}
	sl->item = (int32_t)item;
	st_read_range(s, sl, a, b);
}

/* Wait for every piece of sl; the first error. */
int st_wait_io(struct wt_stream *s, struct st_slot *sl)
{
	int first = 0;

	for (uint32_t k = 0; k < sl->n_io; k++) {
		int e = (int32_t)k == sl->sync_io ? sl->io[k].status : plat_io_wait(&sl->io[k]);
		if (e && !first)
			first = e;
	}
	sl->n_io = 0;
	return first;
}

/* Give a slot back; plaintext of a sealed model is zeroized first. */

void st_drop(struct wt_stream *s, struct st_slot *sl)
{
	if (s->bg.on && s->bg.slot == (int32_t)(sl - s->slots))
		st_bg_wait(s); /* its bytes are still being hashed */
	if (sl->state == ST_LOADING)
		st_wait_io(s, sl);
	if (s->seal && sl->len)
		seal_zeroize(sl->buf, (size_t)sl->len);
	sl->state = ST_FREE;
	sl->item = -1;
	sl->len = 0;
}

/* Wait for and drop every slot still reading (their buffers must not be
 * reused or freed under a transfer). */
void st_drain(struct wt_stream *s)
{
	for (uint32_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].state == ST_LOADING)
			st_drop(s, &s->slots[i]);
}

/* Read ahead round the ring into every free slot. */
void st_fill(struct wt_stream *s)
{
	struct st_slot *sl;

	while ((sl = find_free(s)) && !find(s, s->next)) {
		issue(s, sl, s->next);
		s->next = (s->next + 1) % s->n_items;
	}
}

/*
 * Slots reading items the pass skipped (the head after a prompt batch that
 * needs no logits): anything not within the n_slots items from item onward
 * in ring order will not be asked for before the ring comes round again.
 */
static void drop_skipped(struct wt_stream *s, uint32_t item)
{
	for (uint32_t i = 0; i < s->n_slots; i++) {
		struct st_slot *sl = &s->slots[i];
		uint32_t ahead = ((uint32_t)sl->item + s->n_items - item) % s->n_items;
		if (sl->state == ST_LOADING && ahead >= s->n_slots)
			st_drop(s, sl);
	}
}

/* The slot holding item, read, verified and held; NULL with *err on failure. */
static struct st_slot *get(struct wt_stream *s, uint32_t item, int *err)
{
	struct st_slot *sl = find(s, item);
	uint64_t t0 = plat_time_ns();
	int e;

	if (s->bind && s->bind->bad) { /* failed once: every run fails until a load */
		*err = -LLMK_EAUTH;
		return NULL;
	}
	if (sl)
		drop_skipped(s, item);
	if (!sl) {
		s->st.misses++;
		st_drain(s);
		s->next = item;
		st_fill(s);
		if (!(sl = find(s, item))) {
			*err = -LLMK_EBUSY;
			return NULL;
		}
	}
	e = st_wait_io(s, sl);
	s->st.wait_ns += plat_time_ns() - t0;
	if (!e && st_meas_pending(s))
		e = st_measure_slot(s, sl);
	else if (!e && (s->seal || s->bind))
		e = st_verify(s, sl, 0, sl->count);
	if (e) {
		st_drop(s, sl);
		*err = e;
		return NULL;
	}
	sl->state = ST_HELD;
	st_fill(s);
	return sl;
}

static void put(struct wt_stream *s, uint32_t item)
{
	struct st_slot *sl = find(s, item);

	if (sl && sl->state == ST_HELD) {
		st_drop(s, sl);
		st_fill(s);
	}
}

/* ---- the weights interface ---- */
static int st_layer_acquire(void *impl, uint32_t l, struct wt_layer *out)
{
	struct wt_stream *s = impl;
	struct st_slot *sl;
	int e = 0;

	if (l >= s->n_layer)
		return -LLMK_ERANGE;
	if (!(sl = get(s, l, &e)))
		return e;
	memset(out, 0, sizeof *out);
	for (uint32_t k = 0; k < wt_n_layer_slots; k++) {
		const struct gguf_tensor *t = s->lt[(size_t)l * wt_n_layer_slots + k];
		uint8_t *field = (uint8_t *)out + wt_layer_slots[k].offset;
		const void *p;

		if (!t)
			continue;
		p = sl->buf + (t->offset - sl->base);
		if (wt_layer_slots[k].kind == WT_VEC) {
			*(const float **)field = p;
		} else {
			struct wt_mat m = {p, t->type, t->ne[1] * t->ne[2], t->ne[0], false};
			*(struct wt_mat *)field = m;
		}
	}
	return 0;
}

static void st_layer_release(void *impl, uint32_t l)
{
	put(impl, l);
}

static int st_embed_row(void *impl, int32_t id, float *out)
{
	struct wt_stream *s = impl;
	const struct quant_type *q = quant_get(s->embd->type);

	if (id < 0 || (uint64_t)id >= s->embd->ne[1] || !q)
		return -LLMK_ERANGE;
	q->to_float(s->emb + s->row_bytes * (uint64_t)id, out, s->embd->ne[0]);
	return 0;
}

static int st_head_acquire(void *impl, uint32_t row0, uint32_t n, struct wt_mat *out)
{
	struct wt_stream *s = impl;
	uint64_t rb = quant_row_bytes(s->head->type, s->head->ne[0]);
	struct st_slot *sl;
	int e = 0;

	if (row0 % s->head_rows || n > s->head_rows || (uint64_t)row0 + n > s->head->ne[1])
		return -LLMK_ERANGE;
	if (!(sl = get(s, s->n_layer + row0 / s->head_rows, &e)))
		return e;
	out->data = sl->buf + (s->head->offset + rb * row0 - sl->base);
	out->type = s->head->type;
	out->rows = n;
	out->cols = s->head->ne[0];
	out->packed = false;
	return 0;
}

static void st_head_release(void *impl, uint32_t row0)
{
	struct wt_stream *s = impl;

	put(s, s->n_layer + row0 / s->head_rows);
}

static void st_io_stats(void *impl, struct wt_io_stats *out, bool reset)
{
	struct wt_stream *s = impl;

	*out = s->st;
	if (reset)
		memset(&s->st, 0, sizeof s->st);
}

static void st_close(void *impl)
{
	struct wt_stream *s = impl;
	struct llm_mem *mem = s->mem;

	st_bg_wait(s);
	st_drain(s);
	for (uint32_t i = 0; i < s->n_slots; i++) {
		struct st_slot *sl = &s->slots[i];
		if (sl->alloc)
			llm_mem_free(mem, sl->alloc, (size_t)(s->slot_bytes + ST_ALIGN));
		if (sl->io)
			llm_mem_free(mem, sl->io, s->io_cap * sizeof *sl->io);
	}
	if (s->items)
		llm_mem_free(mem, s->items, s->n_items * sizeof *s->items);
	if (s->lt)
		llm_mem_free(mem, s->lt, (size_t)s->n_layer * wt_n_layer_slots * sizeof *s->lt);
	if (s->onorm)
		llm_mem_free(mem, s->onorm, (size_t)s->onorm_bytes);
	if (s->rfreq)
		llm_mem_free(mem, s->rfreq, (size_t)s->rfreq_bytes);
	if (s->rlong)
		llm_mem_free(mem, s->rlong, (size_t)s->rlong_bytes);
	if (s->rshort)
		llm_mem_free(mem, s->rshort, (size_t)s->rshort_bytes);
	if (s->emb) /* (llm_mem_free zeroizes: a sealed model's plaintext) */
		llm_mem_free(mem, s->emb, (size_t)s->emb_bytes);
	if (s->blk)
		llm_mem_free(mem, s->blk, (size_t)s->grid.unit);
	if (s->bind)
		bind_free(s->bind, mem);
	llm_mem_free(mem, s, sizeof *s);
}

static const struct wt_ops st_ops = {
	st_layer_acquire, st_layer_release, st_embed_row,
	st_head_acquire, st_head_release, st_close, st_io_stats, NULL,
};

/* ---- the measurement read through the slots (the check: stream_check.c) ---- */
/* Measure on to `to`, reading through the slots (two windows in flight when
 * there are two). No slot may be in use; all are free after. */
static int measure_to(struct wt_stream *s, uint64_t to)
{
	uint64_t at = st_meas_pos(s) / ST_ALIGN * ST_ALIGN, stop = st_up(to, ST_ALIGN);
	uint64_t win = s->slot_bytes / ST_ALIGN * ST_ALIGN;
	struct st_slot *cur = &s->slots[0], *nxt = s->n_slots > 1 ? &s->slots[1] : NULL;
	int e = 0;

	if (at < stop)
		st_read_range(s, cur, at, at + win < stop ? at + win : stop);
	while (at < stop) {
		uint64_t len = cur->len, lo = st_meas_pos(s), hi = at + len < to ? at + len : to;

		if ((e = st_wait_io(s, cur)))
			break;
		cur->state = ST_HELD;
		if (nxt && at + len < stop)
			st_read_range(s, nxt, at + len, at + len + win < stop ? at + len + win : stop);
		if (hi > lo && (e = st_feed(s, cur->buf + (lo - at), lo, hi - lo)))
			break;
		cur->state = ST_FREE;
		at += len;
		if (at < stop && !nxt)
			st_read_range(s, cur, at, at + win < stop ? at + win : stop);
		else if (nxt) {
			struct st_slot *t = cur;
			cur = nxt;
			nxt = t;
		}
	}
	st_drain(s);
	for (uint32_t i = 0; i < s->n_slots; i++) {
		s->slots[i].state = ST_FREE;
		s->slots[i].item = -1;
		s->slots[i].len = 0;
	}
	return e;
}

int wt_stream_measure_rest(struct wt_ctx *w)
{
	struct wt_stream *s = w->impl;
	int e;

	if (w->ops != &st_ops || !s->bind || s->meas->done)
		return 0;
	if (s->bind->bad) /* (a failure may have left it fed but not done) */
		return -LLMK_EAUTH;
	for (uint32_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].state == ST_HELD)
			return -LLMK_EBUSY;
	st_bg_wait(s);
	st_drain(s);
	e = measure_to(s, s->bind->end);
	s->next = 0; /* read ahead again for the next pass */
	st_fill(s);
	return e;
}

/* ---- open ---- */
static void fill_tables(struct wt_stream *s)
{
	uint64_t rb = quant_row_bytes(s->head->type, s->head->ne[0]);
	char name[96];

	for (uint32_t l = 0; l < s->n_layer; l++) {
		s->items[l] = layer_range(s->g, l);
		for (uint32_t k = 0; k < wt_n_layer_slots; k++) {
			wt_tensor_name(name, sizeof name, l, wt_layer_slots[k].suffix);
			s->lt[(size_t)l * wt_n_layer_slots + k] = gguf_find_tensor(s->g, name);
		}
	}
	for (uint32_t i = s->n_layer; i < s->n_items; i++) {
		uint64_t r0 = (uint64_t)(i - s->n_layer) * s->head_rows;
		uint64_t r1 = r0 + s->head_rows < s->head->ne[1] ? r0 + s->head_rows : s->head->ne[1];
		s->items[i].lo = s->head->offset + r0 * rb;
		s->items[i].hi = s->head->offset + r1 * rb;
	}
}

/* A tensor read whole into a new allocation (the small ones, the token
 * embeddings); held, so compared when the measurement reaches it if it has
 * not yet. */
static int read_held(struct wt_stream *s, const struct gguf_tensor *t, void **out,
		     uint64_t *bytes, int *err)
{
	bool pin = s->bind && st_meas_pos(s) < t->offset + t->size;

	if (!(*out = llm_mem_alloc(s->mem, (size_t)t->size, err)))
		return *err;
	*bytes = t->size;
	if ((*err = st_read_outside(s, t->offset, *out, (size_t)t->size, pin)))
		return *err;
	if (pin)
		s->pin[s->n_pin++] = (struct st_pin){(const uint8_t *)*out, t->offset, t->size};
	return 0;
}

/* The measurement at open: the header's tail into the tags (the digest
 * holds the header), then every byte, or (defer_ok) those before layer 0's
 * first block ends, the first pass measuring the rest. */
static int measure_open(struct wt_stream *s, const struct stream_bind *sb)
{
	uint64_t base = s->grid.base, end = s->g->extent, to = end;

	const struct llm_measure *m = sb->meas;

	if (sb->from < base || sb->from - base != m->tail_len || sb->from > end)
		return -LLMK_EINVAL;
	bind_feed(s->bind, m->tail, m->tail_len);
	if (st_defer_ok(s)) {
		to = base + st_up(s->items[0].lo - base, s->grid.unit);
		if (to > end)
			to = end;
	}
	if (sb->from == end) /* no tensor bytes: done */
		return st_feed(s, NULL, end, 0);
	return measure_to(s, to);
}

static int alloc_all(struct wt_stream *s, int *e)
{
	struct llm_mem *m = s->mem;

	if (!(s->items = llm_mem_alloc(m, s->n_items * sizeof *s->items, e)) ||
	    !(s->lt = llm_mem_alloc(m, (size_t)s->n_layer * wt_n_layer_slots * sizeof *s->lt, e)))
		return *e;
	for (uint32_t i = 0; i < s->n_slots; i++) {
		struct st_slot *sl = &s->slots[i];
		sl->item = -1;
		if (!(sl->io = llm_mem_alloc(m, s->io_cap * sizeof *sl->io, e)) ||
		    !(sl->alloc = llm_mem_alloc(m, (size_t)(s->slot_bytes + ST_ALIGN), e)))
			return *e;
		sl->buf = (uint8_t *)st_up((uintptr_t)sl->alloc, ST_ALIGN);
	}
	return 0;
}

int wt_stream_open(struct wt_ctx *w, const struct gguf_file *g, const struct llm_reader *rd,
		   int disk, struct seal_ctx *seal, const struct stream_bind *sb,
		   struct llm_mem *mem, uint32_t n_layer, uint32_t n_embd, uint32_t n_slots,
		   char *err, size_t errlen)
{
	const struct gguf_tensor *onorm = gguf_find_tensor(g, "output_norm.weight");
	const struct gguf_tensor *rf = gguf_find_tensor(g, "rope_freqs.weight");
	const struct gguf_tensor *rl = gguf_find_tensor(g, "rope_factors_long.weight");
	const struct gguf_tensor *rs = gguf_find_tensor(g, "rope_factors_short.weight");
	struct plat_disk_info di;
	struct wt_stream *s;
	uint64_t slot = 0;
	int e = 0;

	memset(w, 0, sizeof *w);
	if (!gguf_find_tensor(g, "token_embd.weight") || !onorm) {
		plat_snprintf(err, errlen, "weights: tensor '%s' missing",
			      onorm ? "token_embd.weight" : "output_norm.weight");
		return -LLMK_EFORMAT;
	}
	if ((e = plat_disk_info(disk, &di))) {
		plat_snprintf(err, errlen, "stream: disk %d: %s", disk, plat_strerror(e));
		return e;
	}
	if (!(s = llm_mem_alloc(mem, sizeof *s, &e)))
		goto fail;
	s->g = g;
	s->rd = *rd;
	s->mem = mem;
	s->seal = seal;
	s->disk = disk;
	s->disk_size = di.capacity;
	s->n_layer = n_layer;
	s->n_embd = n_embd;
	s->embd = gguf_find_tensor(g, "token_embd.weight");
	s->head = head_tensor(g);
	s->row_bytes = quant_row_bytes(s->embd->type, s->embd->ne[0]);
	s->grid = grid_of(g, seal, sb && !seal);
	measure(g, s->grid, n_layer, &s->slot_bytes, &s->head_rows, &s->n_items);
	s->n_slots = n_slots < 1 ? 1 : n_slots > STREAM_MAX_SLOTS ? STREAM_MAX_SLOTS : n_slots;
	s->io_cap = io_per_slot(s->slot_bytes);
	slot = s->slot_bytes;
	if (alloc_all(s, &e)) {
		st_close(s);
		goto fail;
	}
	fill_tables(s);
	if (sb && !seal) {
		if ((e = bind_init(&sb->meas->tags, mem, s->grid.base, g->extent))) {
			st_close(s);
			plat_snprintf(err, errlen, "stream: keying the checks of the disk's blocks: %s",
				      plat_strerror(e));
			return e;
		}
		s->bind = &sb->meas->tags;
		s->meas = sb->meas;
		if (!(s->blk = llm_mem_alloc(mem, (size_t)s->grid.unit, &e))) {
			st_close(s);
			goto fail;
		}
		if ((e = measure_open(s, sb))) {
			st_close(s);
			plat_snprintf(err, errlen, "stream: measuring the model (%llu bytes): %s",
				      (unsigned long long)g->extent, plat_strerror(e));
			return e;
		}
	}
	if (read_held(s, s->embd, (void **)&s->emb, &s->emb_bytes, &e) ||
	    read_held(s, onorm, (void **)&s->onorm, &s->onorm_bytes, &e) ||
	    (rf && read_held(s, rf, (void **)&s->rfreq, &s->rfreq_bytes, &e)) ||
	    (rl && read_held(s, rl, (void **)&s->rlong, &s->rlong_bytes, &e)) ||
	    (rs && read_held(s, rs, (void **)&s->rshort, &s->rshort_bytes, &e))) {
		if (s->bind && s->bind->bad) {
			plat_snprintf(err, errlen, "stream: %s", s->bind->why);
			st_close(s);
			return e;
		}
		st_close(s);
		goto fail;
	}
	/* start reading the first items now, so the first pass (a prompt) does
	 * not wait for layer 0 to be read from scratch */
	st_fill(s);
	w->ops = &st_ops;
	w->impl = s;
	w->output_norm = s->onorm;
	w->rope_freqs = s->rfreq;
	w->rope_long = s->rlong;
	w->rope_short = s->rshort;
	w->head_chunk = s->head_rows;
	w->resident_bytes = (uint64_t)s->n_slots * s->slot_bytes + s->emb_bytes;
	w->kind = "streaming";
	return 0;
fail:
	plat_snprintf(err, errlen, "stream: setting up %u slots of %llu bytes: %s", n_slots,
		      (unsigned long long)slot, plat_strerror(e));
	return e;
}
