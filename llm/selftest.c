/*
 * llm/selftest.c — parity of the selected (SIMD) rows with the scalar rows
 * (llm/selftest.h). Portable: runs in the host tests and in the kernel.
 */
#include "selftest.h"

#define ST_MAXN 1024

struct st_buf {
	_Alignas(64) uint8_t tile_scratch[QUANT_TILE_ROWS * (2 * ST_MAXN + ST_MAXN / 16 * 8) + 64];
	float prep[3 * QUANT_TILE_PREP_FLOATS(ST_MAXN)];
	float tout[3 * QUANT_TILE_ROWS];
	uint8_t w[ST_MAXN * 4];          /* weights, any type (F32 is the largest) */
	uint8_t a[ST_MAXN * 4];          /* activations in act_type (F32 is the largest) */
	uint8_t a2[ST_MAXN * 4];         /* the same, from the selected from_float */
	float x[ST_MAXN];                /* activations in float */
	float wf[ST_MAXN], af[ST_MAXN], wf2[ST_MAXN];
};

static uint64_t st_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void st_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* Float weights for the edge cases: big values (c 3), big alternating
 * signs (c 4), subnormals (c 5). */
static void st_float_case(uint32_t t, int c, uint8_t *w, size_t n, uint64_t *s)
{
	for (size_t k = 0; k < n; k++) {
		uint64_t r = st_rand(s);
		uint32_t sign = (c == 4 && (k & 1)) || (c == 5 && (r & 1)) ? 1 : 0;
		if (t == GGML_TYPE_F32) {
			uint32_t u = c == 5 ? (uint32_t)(r >> 41) + 1 : 0x7149f2cau; /* 1e30 */
			u |= sign << 31;
			memcpy(w + 4 * k, &u, 4);
		} else if (t == GGML_TYPE_F16) {
			st_put16(w + 2 * k, (uint16_t)((c == 5 ? (r >> 54) % 0x3ff + 1 : 0x7bff) | sign << 15));
		} else {
			st_put16(w + 2 * k, (uint16_t)((c == 5 ? (r >> 57) + 1 : 0x7000) | sign << 15));
		}
	}
}

/* Weight case c: 0, 1 random (two spreads), 2 zeros, 3 every byte 0xff,
 * 4 every byte 0x80 (scales 1.0 in both), 5 random quants with subnormal
 * f16 scales. */
static void st_weight_case(uint32_t t, int c, uint8_t *w, size_t n, uint64_t *s)
{
	const struct quant_type *q = quant_scalar(t);
	size_t nb = n / q->blck, bytes = nb * q->bytes;

	if (c <= 1 || (c == 5 && q->blck > 1)) {
		quant_fill_random(t, w, n, c == 0 ? 0.05f : 1.0f, s);
	} else if (c == 2) {
		memset(w, 0, bytes);
	} else if (q->blck == 1) {
		st_float_case(t, c, w, n, s);
		return;
	} else {
		memset(w, c == 3 ? 0xff : 0x80, bytes);
	}
	/* the f16 scales (the scalar row's f16_at): 1.0, or subnormal */
	for (size_t b = 0; b < nb && c >= 3; b++)
		for (int f = 0; f < q->n_f16; f++)
			st_put16(w + b * q->bytes + q->f16_at[f],
				 c == 5 ? (uint16_t)(st_rand(s) % 0x3ff + 1) : 0x3c00);
}

/* Activation case c: 0 random, 1 extremes (a few large values among tiny
 * ones, so most quants round to 0 and some hit +-127; the largest keeps
 * Q8_1's s = d sum(q) finite in f16), 2 zeros. */
static void st_act_case(int c, float *x, size_t n, uint64_t *s)
{
	if (c == 0) {
		quant_fill_random(GGML_TYPE_F32, x, n, 1.0f, s);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		uint64_t r = st_rand(s);
		float v = (float)(int)(r % 2001) - 1000.0f;
		x[k] = c == 2 ? 0.0f : (r >> 60) == 0 ? v * 1.9f : v * 1e-5f;
	}
}

static float st_fabs(float f)
{
	return f < 0 ? -f : f;
}

static struct selftest_type *st_entry(struct selftest_report *r, const struct quant_table *qt,
				      uint32_t t)
{
	for (uint32_t i = 0; i < r->n_types; i++)
		if (r->types[i].type == t)
			return &r->types[i];
	if (r->n_types == sizeof r->types / sizeof r->types[0])
		return &r->types[r->n_types - 1];
	r->types[r->n_types].type = t;
	r->types[r->n_types].impl = quant_table_get(qt, t)->impl;
	return &r->types[r->n_types++];
}

static void st_fail(struct selftest_report *r, struct selftest_type *e, bool verbose,
		    const char *what, size_t n, int wc, int ac, float got, float want)
{
	e->failures++;
	r->failures++;
	if (verbose)
		plat_printf("selftest: %s %s (%s) n=%zu weights case %d acts case %d: %g vs scalar %g\n",
			    quant_name(e->type), what, e->impl, n, wc, ac, (double)got, (double)want);
}

/* from_float of the act type, byte for byte; leaves the scalar result in b->a. */
static void st_check_act(struct selftest_report *r, const struct quant_table *qt,
			 struct st_buf *b, uint32_t at, size_t n, int ac, bool verbose)
{
	const struct quant_type *sel = quant_table_get(qt, at), *ref = quant_scalar(at);
	struct selftest_type *e = st_entry(r, qt, at);
	size_t bytes = (size_t)quant_row_bytes(at, n);

	ref->from_float(b->x, b->a, n);
	if (sel == ref || at == GGML_TYPE_F32)
		return;
	sel->from_float(b->x, b->a2, n);
	e->checks++;
	r->checks++;
	if (memcmp(b->a, b->a2, bytes))
		st_fail(r, e, verbose, "from_float differs", n, -1, ac, 0, 0);
}

/* The packed form (quant_isa.h struct quant_packed): a group of 16 copies
 * of the row, packed, against 3 tokens, against 1 (decode) and in decode
 * lanes gives the unpacked tile's bits (tile). The group and pack's copy
 * use the tile scratch, which packed tiles do not need. */
static void st_check_packed(struct selftest_report *r, const struct quant_table *qt,
			    struct st_buf *b, uint32_t t, size_t n, int wc, int ac, float tile,
			    bool verbose)
{
	const struct quant_packed *p = quant_table_packed(qt, t);
	const struct quant_tune *tune = quant_table_tune(qt, t);
	struct selftest_type *e = st_entry(r, qt, t);
	size_t rb = (size_t)quant_row_bytes(t, n);
	uint8_t *rows = b->tile_scratch, *g = rows + QUANT_TILE_ROWS * rb;

	if (!p || n % p->unit || 2 * QUANT_TILE_ROWS * rb > sizeof b->tile_scratch)
		return;
	for (int k = 0; k < QUANT_TILE_ROWS; k++)
		memcpy(rows + k * rb, b->w, rb);
	p->pack_to(n, rows, g, tune);
	p->tile.tile(n, g, rb, QUANT_TILE_ROWS, b->a, 0, b->prep, 3, b->tout, QUANT_TILE_ROWS, NULL,
		     tune);
	p->tile.tile(n, g, rb, QUANT_TILE_ROWS, b->a, 0, b->prep, 1,
		     b->tout + 3 * QUANT_TILE_ROWS - QUANT_TILE_ROWS, QUANT_TILE_ROWS, NULL, tune);
	if (p->lanes) {
		/* decode lanes: the group twice, over the first two tokens' results */
		const void *gl[2] = {g, g};
		float *ol[2] = {b->tout, b->tout + QUANT_TILE_ROWS};
		p->lanes(n, gl, 2, b->a, b->prep, ol, tune);
	}
	e->checks++;
	r->checks++;
	for (int k = 0; k < 3 * QUANT_TILE_ROWS; k++)
		if (memcmp(&b->tout[k], &tile, sizeof tile)) {
			st_fail(r, e, verbose, "packed tile differs from the tile", n, wc, ac,
				b->tout[k], tile);
			return;
		}
}

/* The tile functions: 16 copies of the row against 3 copies of the
 * activations give vec_dot within the bound, all the same bits, and the
 * same bits again as a tile of 3 rows and 1 token (a result depends only on
 * its row and token). */
static void st_check_tile(struct selftest_report *r, const struct quant_table *qt,
			  struct st_buf *b, uint32_t t, size_t n, int wc, int ac, float want,
			  float bound, bool verbose)
{
	const struct quant_tile *tl = quant_table_tile(qt, t);
	const struct quant_tune *tune = quant_table_tune(qt, t);
	struct selftest_type *e = st_entry(r, qt, t);
	float one[QUANT_TILE_ROWS];

	if (!tl || n % 32 || quant_tile_scratch(n) > sizeof b->tile_scratch)
		return;
	for (int k = 0; k < 3; k++) /* a prep row per token */
		tl->prep(n, b->a, b->prep + k * QUANT_TILE_PREP_FLOATS(n));
	tl->tile(n, b->w, 0, QUANT_TILE_ROWS, b->a, 0, b->prep, 3, b->tout, QUANT_TILE_ROWS,
		 b->tile_scratch, tune);
	tl->tile(n, b->w, 0, 3, b->a, 0, b->prep, 1, one, QUANT_TILE_ROWS, b->tile_scratch, tune);
	e->checks++;
	r->checks++;
	if (!(st_fabs(b->tout[0] - want) <= bound)) {
		st_fail(r, e, verbose, "tile outside bound", n, wc, ac, b->tout[0], want);
		return;
	}
	if (bound > 0 && st_fabs(b->tout[0] - want) / bound > e->worst)
		e->worst = st_fabs(b->tout[0] - want) / bound;
	for (int k = 0; k < 3 * QUANT_TILE_ROWS; k++) {
		float g = k < 3 ? one[k] : b->tout[k];
		if (memcmp(&g, &b->tout[0], sizeof g)) {
			st_fail(r, e, verbose, "tile result depends on its place", n, wc, ac, g,
				b->tout[0]);
			return;
		}
	}
	st_check_packed(r, qt, b, t, n, wc, ac, b->tout[0], verbose);
}

static void st_check_dot(struct selftest_report *r, const struct quant_table *qt,
			 struct st_buf *b, uint32_t t, size_t n, int wc, int ac, bool verbose)
{
	const struct quant_type *sel = quant_table_get(qt, t), *ref = quant_scalar(t);
	const struct quant_type *aref = quant_scalar(ref->act_type);
	struct selftest_type *e = st_entry(r, qt, t);
	float got, want, wmax = 0, bound, err;
	double mag = 0, asum = 0;

	ref->to_float(b->w, b->wf, n);
	sel->to_float(b->w, b->wf2, n);
	e->checks++;
	r->checks++;
	if (memcmp(b->wf, b->wf2, n * sizeof(float)))
		st_fail(r, e, verbose, "to_float differs", n, wc, ac, 0, 0);
	aref->to_float(b->a, b->af, n);
	for (size_t k = 0; k < n; k++) {
		mag += st_fabs(b->wf[k] * b->af[k]);
		asum += st_fabs(b->af[k]);
		if (st_fabs(b->wf[k]) > wmax)
			wmax = st_fabs(b->wf[k]);
	}
	bound = (float)((double)(n / 32 + 16) * (1.0 / 4194304.0) * (mag + wmax * asum));
	got = sel->vec_dot(n, b->w, b->a);
	want = ref->vec_dot(n, b->w, b->a);
	err = st_fabs(got - want);
	e->checks++;
	r->checks++;
	if (!(err <= bound)) {
		st_fail(r, e, verbose, "vec_dot outside bound", n, wc, ac, got, want);
		return;
	}
	if (bound > 0 && err / bound > e->worst)
		e->worst = err / bound;
	st_check_tile(r, qt, b, t, n, wc, ac, want, bound, verbose);
	if (sel->gemm) {
		/* gemm takes vec_dot's float steps: the same bits, 4 columns and 3 */
		float g[QUANT_GEMM_COLS];
		for (int nc = QUANT_GEMM_COLS; nc >= QUANT_GEMM_COLS - 1; nc--) {
			sel->gemm(n, b->w, b->a, 0, g, 1, nc);
			for (int j = 0; j < nc; j++) {
				e->checks++;
				r->checks++;
				if (memcmp(&g[j], &got, sizeof got))
					st_fail(r, e, verbose, "gemm differs from vec_dot", n, wc, ac, g[j], got);
			}
		}
	}
}

int selftest_quant(struct selftest_report *r, const struct quant_table *qt, uint64_t seed,
		   bool verbose)
{
	struct st_buf *b = plat_alloc(sizeof *b, 64);

	if (!b)
		return -LLMK_ENOMEM;
	memset(r, 0, sizeof *r);
	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
		const struct quant_type *q = quant_scalar(t);
		if (!quant_is_weight(t))
			continue;
		size_t lens[3] = {q->blck, 3 * q->blck, ST_MAXN};
		if (q->blck == 1)
			lens[1] = 37;
		for (int l = 0; l < 3; l++)
			for (int wc = 0; wc < 6; wc++)
				for (int ac = 0; ac < 3; ac++) {
					st_weight_case(t, wc, b->w, lens[l], &seed);
					st_act_case(ac, b->x, lens[l], &seed);
					st_check_act(r, qt, b, q->act_type, lens[l], ac, verbose);
					st_check_dot(r, qt, b, t, lens[l], wc, ac, verbose);
				}
	}
	plat_free(b, sizeof *b);
	return r->failures ? -LLMK_EFORMAT : 0;
}
