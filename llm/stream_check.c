/*
 * llm/stream_check.c — the streamer's check (stream_int.h): a sealed slot's
 * chunks verified and decrypted, and a plain model bound to its
 * measurement: its bytes fed once, in order, to the digest (measure.h) and
 * the tags (bind.h), and every read after checked against the tags.
 */
#include "stream_int.h"

/* ---- the measurement of a bound plain model ----
 *
 * The digest (s->meas, which already holds the header) and the tags are fed
 * every byte from the data section on, in order, once. Where the first
 * pass reads the model in file order (defer_ok) the load feeds them only up
 * to layer 0 and the first pass the rest, from the slots it computes with:
 * a model then costs one read at load + first pass, not two. The blocks the
 * measurement has passed are checked (verify); the small tensors read for
 * use before it reached them are compared when it does.
 */
#define ST_GAP_MAX (1u << 20) /* bytes between items the first pass reads block by block */

uint64_t st_meas_pos(const struct wt_stream *s)
{
	return s->bind->base + s->bind->fed;
}

bool st_meas_pending(const struct wt_stream *s)
{
	return s->bind && s->bind->fed < s->bind->end - s->bind->base;
}

struct st_meas {
	struct wt_stream *s;
	const uint8_t *p;
	size_t n;
};

static void meas_worker(void *arg, int i, int n)
{
	struct st_meas *m = arg;

	if (n == 1 || i == 0)
		measure_update(m->s->meas, m->p, m->n);
	if (n == 1 || i == 1)
		bind_feed(m->s->bind, m->p, m->n);
}

static void digest_out(struct wt_stream *s)
{
	measure_complete(s->meas);
}

static void bg_sha(void *arg)
{
	struct wt_stream *s = arg;

	measure_update(s->meas, s->bg.p, s->bg.n);
}

/* The digest's update beside the pass, finished (the time waited counts
 * as checking); at the model's end, the digest out. */
void st_bg_wait(struct wt_stream *s)
{
	uint64_t t0;

	if (!s->bg.on)
		return;
	t0 = plat_time_ns();
	plat_background_wait();
	s->bg.on = false;
	if (s->bg.final)
		digest_out(s);
	s->bg.final = false;
	s->st.decrypt_ns += plat_time_ns() - t0;
}

/* Bytes [off, off + n) at p, just fed to the tags: a held small tensor they
 * overlap must be what was read for use. At the model's end, the last tag. */
static int tags_fed(struct wt_stream *s, const uint8_t *p, uint64_t off, uint64_t n)
{
	int e = 0;

	for (uint32_t i = 0; i < s->n_pin && !e; i++) {
		const struct st_pin *pn = &s->pin[i];
		uint64_t lo = off > pn->off ? off : pn->off;
		uint64_t hi = off + n < pn->off + pn->n ? off + n : pn->off + pn->n;
		if (lo < hi && memcmp(p + (lo - off), pn->p + (lo - pn->off), (size_t)(hi - lo)))
			e = bind_fail(s->bind, (lo - s->bind->base) / s->bind->block);
	}
	if (!e && off + n == s->bind->end)
		e = bind_finish(s->bind);
	return e;
}

/* Bytes [off, off + n) at p, off where the measurement stands: the digest
 * and the tags side by side; at the model's end, the digest out. */
int st_feed(struct wt_stream *s, const uint8_t *p, uint64_t off, uint64_t n)
{
	struct st_meas m = {s, p, (size_t)n};
	uint64_t t0;
	int e;

	st_bg_wait(s); /* the digest takes bytes in order */
	t0 = plat_time_ns();
	if (n)
		plat_parallel(meas_worker, &m, 2); /* (one CPU: one task, both) */
	if (!(e = tags_fed(s, p, off, n)) && off + n == s->bind->end)
		digest_out(s);
	s->st.decrypt_ns += plat_time_ns() - t0;
	return e;
}

/* A held slot's bytes [off, off + n) at p: the digest beside the pass
 * (until the slot is dropped, or the next update), the tags here. */
static int feed_beside(struct wt_stream *s, struct st_slot *sl, const uint8_t *p, uint64_t off,
		       uint64_t n)
{
	uint64_t t0;
	int e;

	st_bg_wait(s);
	t0 = plat_time_ns();
	s->bg.on = true;
	s->bg.final = false;
	s->bg.slot = (int32_t)(sl - s->slots);
	s->bg.p = p;
	s->bg.n = (size_t)n;
	plat_background(bg_sha, s);
	bind_feed(s->bind, p, (size_t)n);
	if (!(e = tags_fed(s, p, off, n)) && off + n == s->bind->end)
		s->bg.final = true; /* (read only after the wait) */
	s->st.decrypt_ns += plat_time_ns() - t0;
	return e;
}

/* Measure on to `to` block by block through s->blk (the few bytes between
 * the items a first pass reads). */
static int feed_gap(struct wt_stream *s, uint64_t to)
{
	uint64_t u = s->grid.unit;
	int e = 0;

	while (!e && st_meas_pos(s) < to) {
		uint64_t pos = st_meas_pos(s), a = s->grid.base + (pos - s->grid.base) / u * u;
		uint64_t hi = a + u < to ? a + u : to, have;

		if (a >= s->disk_size)
			return -LLMK_ERANGE;
		have = s->disk_size - a < u ? s->disk_size - a : u;
		if ((e = plat_disk_read(s->disk, a, s->blk, (size_t)have)))
			return e;
		s->st.reads++;
		s->st.bytes_read += have;
		e = st_feed(s, s->blk + (pos - a), pos, hi - pos);
	}
	return e;
}

/*
 * Whether the first pass can finish the measurement: it reads the items in
 * file order, all of the token embeddings lie before layer 0 (measured at
 * load: rows are read one by one), and what lies between the items and
 * after the last is a few blocks.
 */
bool st_defer_ok(const struct wt_stream *s)
{
	uint64_t gaps = s->g->extent - s->items[s->n_items - 1].hi;

	if (s->items[s->n_items - 1].hi > s->g->extent || s->embd->offset + s->embd->size > s->items[0].lo)
		return false;
	for (uint32_t i = 1; i < s->n_items; i++) {
		if (s->items[i].lo < s->items[i - 1].hi)
			return false;
		gaps += s->items[i].lo - s->items[i - 1].hi;
	}
	return gaps <= ST_GAP_MAX;
}

struct st_dec {
	struct wt_stream *s;
	struct st_slot *sl;
	uint64_t k0, k1; /* the slot's chunks (blocks) to do */
	int err[64];
};

static void dec_worker(void *arg, int i, int n)
{
	struct st_dec *d = arg;
	uint64_t c = d->k1 - d->k0, a = d->k0 + c * (uint64_t)i / (uint64_t)n;
	uint64_t b = d->k0 + c * (uint64_t)(i + 1) / (uint64_t)n;
	uint32_t cs = d->s->seal->hdr.chunk_size;

	if (b > a)
		d->err[i] = seal_decrypt_chunks(d->s->seal, d->sl->first + a, b - a,
						d->sl->buf + a * cs);
}

static void check_worker(void *arg, int i, int n)
{
	struct st_dec *d = arg;
	uint64_t c = d->k1 - d->k0, a = d->k0 + c * (uint64_t)i / (uint64_t)n;
	uint64_t b = d->k0 + c * (uint64_t)(i + 1) / (uint64_t)n;

	if (b > a)
		d->err[i] = bind_check(d->s->bind, d->sl->first + a, b - a,
				       d->sl->buf + a * d->s->grid.unit);
}

/* Verify chunks [k0, k1) of a slot (sealed: and decrypt them in place) or
 * check those blocks (a bound plain model), spread over the CPUs; the time
 * counts as decrypt time. A sealed slot that fails is zeroized. */
int st_verify(struct wt_stream *s, struct st_slot *sl, uint64_t k0, uint64_t k1)
{
	struct st_dec d = {s, sl, k0, k1, {0}};
	void (*fn)(void *, int, int) = s->seal ? dec_worker : check_worker;
	int n = plat_cpu_count();
	uint64_t t0 = plat_time_ns();

	if (n > 64)
		n = 64;
	if ((uint64_t)n > k1 - k0)
		n = (int)(k1 - k0);
	if (n > 1)
		plat_parallel(fn, &d, n);
	else if (n == 1)
		fn(&d, 0, 1);
	s->st.decrypt_ns += plat_time_ns() - t0;
	for (int i = 0; i < n; i++)
		if (d.err[i]) {
			if (s->seal)
				seal_zeroize(sl->buf, (size_t)sl->len);
			return d.err[i];
		}
	return 0;
}

/* A bound slot in a pass the measurement has not yet passed (the first):
 * the blocks it has passed are checked, the rest measured from the slot,
 * after the bytes between the last item measured and this one. */
int st_measure_slot(struct wt_stream *s, struct st_slot *sl)
{
	uint64_t u = s->grid.unit, a = sl->base, b = a + sl->count * u, k;
	int e;

	if (b > s->bind->end)
		b = s->bind->end;
	if (st_meas_pos(s) < a && (e = feed_gap(s, a)))
		return e;
	k = st_meas_pos(s) >= b ? sl->count : (st_meas_pos(s) - a) / u;
	if ((e = st_verify(s, sl, 0, k)))
		return e;
	if (k < sl->count && (e = feed_beside(s, sl, sl->buf + k * u, a + k * u, b - (a + k * u))))
		return e;
	/* the last item: what follows it to the model's end */
	if (sl->item == (int32_t)s->n_items - 1 && st_meas_pos(s) < s->bind->end)
		e = feed_gap(s, s->bind->end);
	return e;
}

/*
 * Bytes [off, off + n) of the model outside the slots (an embedding row,
 * the small tensors): through rd (sealed: it verifies and decrypts), or
 * (a bound plain model) block by block into s->blk, each block checked
 * before its bytes are copied out: a block the measurement has not reached
 * is measured first, or (pin: the caller keeps the bytes, which the
 * measurement compares when it reaches them) read as it is.
 */
int st_read_outside(struct wt_stream *s, uint64_t off, void *dst, size_t n, bool pin)
{
	uint8_t *d = dst;

	if (!s->bind) {
		s->st.reads++;
		s->st.bytes_read += n;
		return s->rd.read(s->rd.ctx, off, dst, n);
	}
	if (s->bind->bad)
		return -LLMK_EAUTH;
	while (n) {
		uint64_t u = s->grid.unit, blk = (off - s->grid.base) / u, a = s->grid.base + blk * u;
		uint64_t have, k = a + u - off < n ? a + u - off : n, hi = a + u;
		bool measured;
		int e;

		if (a >= s->disk_size)
			return -LLMK_ERANGE;
		if (hi > s->bind->end)
			hi = s->bind->end;
		measured = st_meas_pos(s) >= hi;
		if (!measured && !pin && (e = feed_gap(s, hi)))
			return e;
		have = s->disk_size - a < u ? s->disk_size - a : u;
		memset(s->blk + have, 0, (size_t)(u - have));
		if ((e = plat_disk_read(s->disk, a, s->blk, (size_t)have)) ||
		    ((measured || !pin) && (e = bind_check(s->bind, blk, 1, s->blk))))
			return e;
		s->st.reads++;
		s->st.bytes_read += have;
		memcpy(d, s->blk + (off - a), (size_t)k);
		d += k;
		off += k;
		n -= (size_t)k;
	}
	return 0;
}
