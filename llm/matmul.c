/*
 * llm/matmul.c — weight x activation products over the worker pool.
 *
 * Two steps per call: (1) convert the B activation rows once to the weight
 * type's act_type (Q8_0, Q8_1, Q8_K or F32; llm/quant.h), (2) cut the M
 * weight rows into tiles of MM_TILE rows that the workers claim in turn.
 * Inside a tile every token is computed, QUANT_GEMM_COLS at a time by the
 * row's gemm where it has one: the tile's weights (at most a few hundred
 * KiB) stay in cache while the B activation rows stream past, so prefill
 * reads each weight byte from memory once per call, and decode (B == 1)
 * streams the weights exactly once.
 *
 * Where the weight type has tile functions (llm/quant_isa.h) and the batch is
 * at least MM_TILE_MIN_B tokens, a tile is handed to them whole instead:
 * they repack its weights once into the worker's scratch and run every
 * token against the repacked rows. Packed weights (mm_matmul_packed) go to
 * the type's packed tile, which reads them in place with the tile's bits;
 * a type that has a packed form on this CPU uses the tile for every batch
 * even unpacked, so both give the same numbers.
 */
#include "matmul.h"

/* Rows per tile: 16 rows of a 2048-wide Q8_0 matrix is 34 KiB, of a 5632-wide
 * one 94 KiB; both stay in L2 while the tokens pass. */
#define MM_TILE 16
_Static_assert(MM_TILE <= QUANT_TILE_ROWS, "a tile fits the tile functions");
#define MM_TILE_MIN_B 4
/* Every call claims runs of tiles: each worker then streams long contiguous
 * stretches of the matrix (the hardware prefetchers follow them; one tile at
 * a time interleaves the workers every 16 rows and reads slower, in decode
 * and in a pass of a few tokens alike: docs/perf.md, "Matmul scheduling and
 * memory"). Runs are guided: half of what is left over the
 * workers, down to a quarter of tiles / (MM_DECODE_CHUNKS x workers), so the
 * workers finish together instead of one waiting out the other's last long
 * run. Packed types with decode lanes (llm/quant_isa.h), where their
 * descriptor's tuning wants them (struct quant_tune, lanes), claim lane
 * steps instead, each a tile from each quarter of the matrix, so each
 * worker reads QUANT_LANES streams at once. */
#define MM_DECODE_CHUNKS 4

static size_t align64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

uint64_t mm_scratch_bytes(size_t K, size_t B, int n_threads)
{
	uint64_t act = align64(K * sizeof(float)) * B; /* the widest act type, F32 */

	act += align64(QUANT_TILE_PREP_FLOATS(K) * sizeof(float)) * B;
	act += (uint64_t)(n_threads < 1 ? 1 : n_threads) * align64(quant_tile_scratch(K));
	return (act + 4095) & ~(uint64_t)4095;
}

int mm_init(struct mm_ctx *c, struct llm_mem *mem, int n_threads)
{
	if (!c || !mem)
		return -LLMK_EINVAL;
	memset(c, 0, sizeof *c);
	c->qt = quant_cpu();
	c->mem = mem;
	c->n_threads = n_threads < 1 ? 1 : n_threads;
	return 0;
}

void mm_zeroize(struct mm_ctx *c)
{
	llm_mem_zeroize(c->act, c->act_cap);
}

void mm_free(struct mm_ctx *c)
{
	if (c && c->act)
		llm_mem_free(c->mem, c->act, c->act_cap);
	if (c) {
		c->act = NULL;
		c->act_cap = 0;
	}
}

/* Scratch for the converted activations; grows, never shrinks. The old
 * buffer goes back first (nothing in it is kept), so growing never holds
 * both against the budget. */
static int mm_reserve(struct mm_ctx *c, size_t bytes)
{
	int err = 0;
	void *p;

	if (bytes <= c->act_cap)
		return 0;
	bytes = (bytes + 4095) & ~(size_t)4095;
	if (c->act)
		llm_mem_free(c->mem, c->act, c->act_cap);
	c->act = NULL;
	c->act_cap = 0;
	p = llm_mem_alloc(c->mem, bytes, &err);
	if (!p)
		return err ? err : -LLMK_ENOMEM;
	c->act = p;
	c->act_cap = bytes;
	return 0;
}

/* One matrix of a call: its claims are [first, first + tiles) of the call's. */
struct mm_part {
	const uint8_t *w;
	float *out;
	size_t M;
	size_t tiles;         /* claims: ceil(M / MM_TILE), or lane steps */
	size_t lane_tiles;    /* with lanes: ceil(M / MM_TILE) */
	size_t first;
};

struct mm_job {
	const struct quant_type *wt, *at;
	struct mm_part part[MM_MAX_PARTS];
	size_t w_stride;      /* bytes per weight row */
	const float *x;
	const uint8_t *act;   /* converted activations */
	size_t a_stride;      /* bytes per converted activation row */
	size_t K, B;
	size_t tiles;         /* claims of all the parts */
	size_t next;          /* next unclaimed tile (atomic) */
	size_t claim;         /* tiles a worker claims at once */
	const struct quant_tile *tile; /* NULL: gemm / vec_dot */
	const struct quant_tune *tune; /* of the tile's descriptor */
	float *prep;          /* B rows of QUANT_TILE_PREP_FLOATS(K) */
	size_t p_stride;      /* floats per prep row */
	uint8_t *scratch;     /* per worker, s_stride bytes each */
	size_t s_stride;
	quant_pack_fn unpack; /* packed weights for the rows: each tile unpacked first */
	quant_pack_to_fn pack_to; /* plain rows for the packed tile: each tile packed first */
	/* Decode of packed weights with lanes: a part's lane_tiles tiles are
	 * QUANT_LANES lanes of `tiles` tiles each (the last may be short), and
	 * its claim k is a lane step, tile k of every lane read side by side. */
	quant_lanes_fn lanes;
	/* decode: the next product's weights, prefetched by idle workers */
	const uint8_t *pf;
	size_t pf_bytes;
	size_t pf_next;       /* next unclaimed prefetch chunk (atomic) */
	int done;             /* workers out of tiles (atomic) */
};

#define MM_PF_CHUNK 4096
#define MM_PF_MAX ((size_t)4 << 20)

/* A worker out of tiles: while another still works, prefetch the next
 * product's weights a chunk at a time (the chunks claimed, so two idle
 * workers do not fetch the same lines) into L2 and the last-level cache. */
static void mm_idle(struct mm_job *j, int n)
{
	int done = __atomic_add_fetch(&j->done, 1, __ATOMIC_ACQ_REL);

	while (j->pf && done < n) {
		size_t o = __atomic_fetch_add(&j->pf_next, MM_PF_CHUNK, __ATOMIC_RELAXED);
		if (o >= j->pf_bytes)
			return;
		const uint8_t *p = j->pf + o;
		size_t e = j->pf_bytes - o < MM_PF_CHUNK ? j->pf_bytes - o : MM_PF_CHUNK;
		for (size_t k = 0; k < e; k += 64)
			__builtin_prefetch(p + k, 0, 2);
		done = __atomic_load_n(&j->done, __ATOMIC_ACQUIRE);
	}
}

/* Worker i of n converts activation rows [B i / n, B (i + 1) / n). */
static void mm_convert_task(void *arg, int i, int n)
{
	struct mm_job *j = arg;
	size_t b0 = j->B * (size_t)i / (size_t)n, b1 = j->B * (size_t)(i + 1) / (size_t)n;

	for (size_t b = b0; b < b1; b++) {
		j->at->from_float(j->x + b * j->K, (void *)(j->act + b * j->a_stride), j->K);
		if (j->tile)
			j->tile->prep(j->K, j->act + b * j->a_stride, j->prep + b * j->p_stride);
	}
}

/* Rows [t0, t0 + MM_TILE) of part p for every token; s: the worker's scratch. */
static void mm_tile(const struct mm_job *j, const struct mm_part *p, size_t t0, uint8_t *s)
{
	size_t M = p->M, t1 = t0 + MM_TILE < M ? t0 + MM_TILE : M, b;
	quant_vec_dot_fn dot = j->wt->vec_dot;
	quant_gemm_fn gemm = j->wt->gemm;
	const uint8_t *w = p->w;

	if (j->unpack) {
		/* a packed group (whole: M % 16 == 0) back in row order */
		size_t g = MM_TILE * j->w_stride;
		memcpy(s, p->w + t0 * j->w_stride, g);
		j->unpack(j->K, s, s + g);
		w = s - t0 * j->w_stride;
	}

	/* groups of QUANT_GEMM_COLS tokens share each unpacked weight block */
	for (b = 0; gemm && b + QUANT_GEMM_COLS <= j->B; b += QUANT_GEMM_COLS)
		for (size_t r = t0; r < t1; r++)
			gemm(j->K, w + r * j->w_stride, j->act + b * j->a_stride, j->a_stride,
			     p->out + b * M + r, M, QUANT_GEMM_COLS);
	for (; b < j->B; b++) {
		const void *a = j->act + b * j->a_stride;
		float *o = p->out + b * M;
		size_t r = t0;
		/* QUANT_ROWS rows share the activation work (vec_dot's bits) */
		for (; j->wt->rows && r + QUANT_ROWS <= t1; r += QUANT_ROWS)
			j->wt->rows(j->K, w + r * j->w_stride, j->w_stride, a, o + r);
		for (; r < t1; r++)
			o[r] = dot(j->K, w + r * j->w_stride, a);
	}
}

/*
 * Workers claim tiles one at a time from a shared counter, so a worker that
 * starts late (a busy host, a slower core) does less of the work instead of
 * holding everyone up. Each row is computed whole by one worker, so the
 * result does not depend on the thread count. Two tiles never share a
 * cache line of out when out is 64-byte aligned (16 floats per tile).
 */
static void mm_dot_task(void *arg, int i, int n)
{
	struct mm_job *j = arg;
	const struct mm_part *p = j->part;
	size_t t = 0, r0, step = 0, k = 0, u;
	/* NULL when the job has none (the float tiles): NULL + 0 is undefined */
	uint8_t *scratch = j->scratch ? j->scratch + (size_t)i * j->s_stride : NULL;

	for (;;) {
		if (k == step) {
			/* guided: a share of what is left (at least j->claim / 4 and
			 * 1), so runs start long and the last ones are short */
			size_t cur = __atomic_load_n(&j->next, __ATOMIC_RELAXED), want;
			do {
				if (cur >= j->tiles)
					goto idle;
				want = j->claim > 1 ? (j->tiles - cur) / (2 * (size_t)n) : 1;
				if (want < j->claim / 4)
					want = j->claim / 4;
				if (want < 1)
					want = 1;
			} while (!__atomic_compare_exchange_n(&j->next, &cur, cur + want, true,
							      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
			t = cur;
			step = want;
			k = 0;
		}
		if (t + k >= j->tiles)
			break;
		/* a worker's claims only move forward, and so does its part */
		u = t + k++;
		while (u >= p->first + p->tiles)
			p++;
		u -= p->first;
		if (j->lanes) {
			const void *g[QUANT_LANES];
			float *o[QUANT_LANES];
			int ng = 0;
			for (size_t tt = u; ng < QUANT_LANES && tt < p->lane_tiles;
			     tt += p->tiles, ng++) {
				g[ng] = p->w + tt * MM_TILE * j->w_stride;
				o[ng] = p->out + tt * MM_TILE;
			}
			j->lanes(j->K, g, ng, j->act, j->prep, o, j->tune);
			continue;
		}
		r0 = u * MM_TILE;
		if (j->pack_to) {
			/* plain rows into the worker's scratch, packed (whole
			 * groups: M % 16 == 0), for the packed tile */
			j->pack_to(j->K, p->w + r0 * j->w_stride, scratch, j->tune);
			j->tile->tile(j->K, scratch, j->w_stride, MM_TILE, j->act, j->a_stride, j->prep,
				      j->B, p->out + r0, p->M, NULL, j->tune);
		} else if (j->tile)
			j->tile->tile(j->K, p->w + r0 * j->w_stride, j->w_stride,
				      (int)(p->M - r0 < MM_TILE ? p->M - r0 : MM_TILE), j->act,
				      j->a_stride, j->prep, j->B, p->out + r0, p->M, scratch, j->tune);
		else
			mm_tile(j, p, r0, scratch);
	}
idle:
	mm_idle(j, n);
}

static int mm_run(struct mm_ctx *c, int n, float *const out[], const void *const w[],
		  const size_t Ms[], uint32_t wtype, bool packed, size_t K, const float *x, size_t B)
{
	struct mm_job j;
	size_t abytes, M = 0;
	int err, nt;
	bool can_pack;
	const struct quant_table *qt = c ? c->qt : NULL;
	const struct quant_packed *pk = packed && qt ? quant_table_packed(qt, wtype) : NULL;

	if (!c || !qt || !out || !w || !Ms || !x || !B || n < 1 || n > MM_MAX_PARTS)
		return -LLMK_EINVAL;
	/* the parts must take the same path (a plain part packs for the packed
	 * tile where quant_table_can_pack says so) */
	can_pack = quant_table_can_pack(qt, wtype, Ms[0], K);
	for (int p = 0; p < n; p++) {
		if (!out[p] || !w[p] || !Ms[p])
			return -LLMK_EINVAL;
		if (quant_table_can_pack(qt, wtype, Ms[p], K) != can_pack)
			return -LLMK_EINVAL;
		M += Ms[p];
	}
	if (packed && !can_pack)
		return -LLMK_EINVAL;
	j.wt = c->scalar ? quant_scalar(wtype) : quant_table_get(qt, wtype);
	if (!j.wt || !j.wt->vec_dot)
		return -LLMK_ENOTSUP;
	j.at = c->scalar ? quant_scalar(j.wt->act_type) : quant_table_get(qt, j.wt->act_type);
	if (!j.at || !j.at->from_float)
		return -LLMK_ENOTSUP;
	j.w_stride = (size_t)quant_row_bytes(wtype, K);
	abytes = (size_t)quant_row_bytes(j.at->type, K);
	if (!j.w_stride || !abytes)
		return -LLMK_EINVAL;
	j.x = x;
	j.K = K;
	j.B = B;
	j.next = 0;
	j.claim = 1;
	j.a_stride = align64(abytes);
	nt = c->n_threads < 1 ? 1 : c->n_threads;
	j.tile = NULL;
	j.tune = quant_table_tune(qt, wtype);
	j.unpack = NULL;
	j.pack_to = NULL;
	j.s_stride = 0;
	j.scratch = NULL;
	j.lanes = NULL;
	j.pf = NULL;
	j.pf_bytes = 0;
	j.pf_next = 0;
	j.done = 0;
	if (B == 1 && c->next_w) {
		j.pf = c->next_w;
		j.pf_bytes = c->next_bytes < MM_PF_MAX ? c->next_bytes : MM_PF_MAX;
	}
	c->next_w = NULL;
	c->next_bytes = 0;
	if (pk && !c->scalar) {
		j.tile = &pk->tile; /* every batch: nothing else reads packed rows */
		if (B == 1 && pk->lanes && j.tune->lanes)
			j.lanes = pk->lanes;
	} else if (pk) {
		j.unpack = pk->unpack;
	} else if (!c->scalar && K % 32 == 0 && B >= MM_TILE_MIN_B) {
		j.tile = quant_table_tile(qt, wtype);
	} else if (!c->scalar && can_pack) {
		/* A type that packs here gives the tile's bits for every batch,
		 * packed or not, so packing (and streaming, which does not pack)
		 * never changes a result: a few tokens take the packed tile on
		 * each tile packed into scratch (cheaper than the repack). */
		pk = quant_table_packed(qt, wtype);
		j.tile = &pk->tile;
		j.pack_to = pk->pack_to;
	}
	j.tiles = 0;
	for (int p = 0; p < n; p++) {
		struct mm_part *q = &j.part[p];
		q->w = w[p];
		q->out = out[p];
		q->M = Ms[p];
		q->lane_tiles = (Ms[p] + MM_TILE - 1) / MM_TILE;
		q->tiles = j.lanes ? (q->lane_tiles + QUANT_LANES - 1) / QUANT_LANES
				   : q->lane_tiles;
		q->first = j.tiles;
		j.tiles += q->tiles;
	}
	if (j.unpack && 2 * MM_TILE * j.w_stride > align64(quant_tile_scratch(K)))
		return -LLMK_EINVAL; /* (every packed type fits: at most 34 K bytes) */
	if (j.at->type == GGML_TYPE_F32) {
		/* Float activations are used in place: no copy, and no prep rows
		 * (the float tiles have none); tiles get each worker's scratch. */
		j.act = (const uint8_t *)x;
		j.a_stride = K * sizeof(float);
		j.prep = NULL;
		j.p_stride = 0;
		if (j.tile || j.unpack) {
			j.s_stride = align64(quant_tile_scratch(K));
			if ((err = mm_reserve(c, j.s_stride * (size_t)nt)))
				return err;
			j.scratch = (uint8_t *)c->act;
		}
	} else {
		/* converted activations; with tiles, their prep rows and each
		 * worker's tile scratch after them */
		size_t abytes_all = j.a_stride * B, pbytes = 0;
		if (j.tile) {
			j.p_stride = QUANT_TILE_PREP_FLOATS(K);
			pbytes = align64(j.p_stride * sizeof(float)) * B;
		}
		if (j.tile || j.unpack)
			j.s_stride = align64(quant_tile_scratch(K));
		err = mm_reserve(c, abytes_all + pbytes + j.s_stride * (size_t)nt);
		if (err)
			return err;
		j.act = c->act;
		j.prep = (float *)((uint8_t *)c->act + abytes_all);
		j.scratch = (uint8_t *)c->act + abytes_all + pbytes;
		if (B >= (size_t)nt && nt > 1)
			plat_parallel(mm_convert_task, &j, nt);
		else
			mm_convert_task(&j, 0, 1);
	}
	/* (sized over all the parts: a part's share gave attention's Q, K and
	 * V, 40 lane steps, claims of one step, and the workers then
	 * interleaved every 64 rows) */
	if (j.tiles / ((size_t)nt * MM_DECODE_CHUNKS) > 1)
		j.claim = j.tiles / ((size_t)nt * MM_DECODE_CHUNKS);
	if (nt > 1 && M >= 2 * MM_TILE)
		plat_parallel(mm_dot_task, &j, nt);
	else
		mm_dot_task(&j, 0, 1);
	return 0;
}

void mm_prefetch_next(struct mm_ctx *c, const void *w, size_t bytes)
{
	c->next_w = w;
	c->next_bytes = bytes;
}

int mm_matmul(struct mm_ctx *c, float *out, const void *w, uint32_t wtype,
	      size_t M, size_t K, const float *x, size_t B)
{
	return mm_run(c, 1, &out, &w, &M, wtype, false, K, x, B);
}

int mm_matmul_packed(struct mm_ctx *c, float *out, const void *w, uint32_t wtype,
		     size_t M, size_t K, const float *x, size_t B)
{
	return mm_run(c, 1, &out, &w, &M, wtype, true, K, x, B);
}

int mm_matmul_n(struct mm_ctx *c, int n, float *const out[], const void *const w[],
		const size_t M[], uint32_t wtype, bool packed, size_t K, const float *x, size_t B)
{
	return mm_run(c, n, out, w, M, wtype, packed, K, x, B);
}
