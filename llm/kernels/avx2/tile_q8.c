/*
 * llm/kernels/avx2/tile_q8.c — Q8_0's prefill tile and packed form on AVX2
 * (llm/quant_isa.h, the tile contract and struct quant_packed), for CPUs
 * without AVX-512 VNNI.
 *
 * Q8_0 weights are signed bytes over their whole range, which vpmaddubsw
 * (unsigned times signed) cannot take as they are: the other tiles' form
 * (tile.c, weights + 128 as u8) would overflow its int16 sums. Each group
 * of four weights of a row (a dword) is taken as two pairs of int16 instead,
 * the even elements and the odd ones:
 *
 *     E = (q0, q2), O = (q1, q3)   (vpsllw 8 then vpsraw 8, and vpsraw 8)
 *
 * and the activations alike, so vpmaddwd gives q0 a0 + q2 a2 and
 * q1 a1 + q3 a3 in int32, exact, with no zero point to correct for. That is
 * 16 products per vpmaddwd against vpmaddubsw's 32, but vpmaddubsw with the
 * sign trick (vpsignb, then vpmaddwd to widen each result: two of its
 * int16 sums cannot add without overflow) takes three instructions of the
 * same two vector multiply ports per 32 products where this takes two
 * (docs/perf.md, "Rows and prefill tiles").
 *
 * The repacked tile holds E and O of each group of the 16 rows in int16
 * ([n / 4 groups][E rows 0-7, E rows 8-15, O rows 0-7, O rows 8-15], 128
 * bytes a group), then a float scale ws = d per row and block. The packed
 * tile reads the packed layout (llm/kernels/scalar/pack.c: a pair of blocks
 * is 64 bytes of the rows' d, then 8 lines of quant dwords a block) and
 * shifts E and O out of each line in registers. Both sum a block in int32
 * and take the same float steps, cols()'s of tile.c for Q8_0 activations
 * (x = isum * ws, then f += x * da), so the packed tile gives the repacked
 * tile's bits; an activation block's E and O go through the stack once per
 * block and token.
 */
#include "avx2_rows.h"
#include "tile2.h"

#define P8_UNIT 1088 /* bytes of a pair of blocks of the 16 rows, packed */
#define Q8_OFF 2     /* the quants in a block_q8_0 */
_Static_assert(sizeof(struct block_q8_0) == 34 &&
		       __builtin_offsetof(struct block_q8_0, qs) == Q8_OFF,
	       "q8_0 block");

/* The even and the odd bytes of each dword of x, as int16 pairs. */
static inline __m256i even16(__m256i x)
{
	return _mm256_srai_epi16(_mm256_slli_epi16(x, 8), 8);
}

static inline __m256i odd16(__m256i x)
{
	return _mm256_srai_epi16(x, 8);
}

/* A block's 32 activation quants as E and O dwords (group j: dword j). */
static inline void act16(const int8_t *qs, int32_t *e, int32_t *o)
{
	__m256i x = _mm256_loadu_si256((const __m256i *)qs);

	_mm256_store_si256((__m256i *)e, even16(x));
	_mm256_store_si256((__m256i *)o, odd16(x));
}

/* A dword of the stack broadcast by a load (vpbroadcastd m32): in asm, as
 * GCC otherwise takes what it knows was stored there out of the stored
 * register with a shift and a register broadcast each, two shuffles where
 * a load port is free. */
static inline __m256i bcast32(const int32_t *p)
{
	__m256i r;

	__asm__("vpbroadcastd %1, %0" : "=x"(r) : "m"(*p));
	return r;
}

/* acc[c][h] (rows 8 h ..) += one group of C tokens: E and O of both halves.
 * (The empty asm keeps each sum a running one: GCC otherwise reassociates
 * a block's 32 additions into a tree and keeps its leaves on the stack.) */
static inline __attribute__((always_inline)) void
group16(__m256i (*acc)[2], __m256i e0, __m256i e1, __m256i o0, __m256i o1,
	const int32_t (*ae)[8], const int32_t (*ao)[8], int j, const int C)
{
	_Pragma("GCC unroll 4") for (int c = 0; c < C; c++) {
		__m256i be = bcast32(&ae[c][j]), bo = bcast32(&ao[c][j]);
		acc[c][0] = _mm256_add_epi32(acc[c][0], _mm256_madd_epi16(e0, be));
		acc[c][1] = _mm256_add_epi32(acc[c][1], _mm256_madd_epi16(e1, be));
		acc[c][0] = _mm256_add_epi32(acc[c][0], _mm256_madd_epi16(o0, bo));
		acc[c][1] = _mm256_add_epi32(acc[c][1], _mm256_madd_epi16(o1, bo));
		__asm__("" : "+x"(acc[c][0]), "+x"(acc[c][1]));
	}
}

/* The float steps of block i for C tokens (tile.c cols(), Q8_0 activations:
 * prep holds da at 2 i). */
static inline __attribute__((always_inline)) void
block_f(__m256 (*f)[2], __m256i (*acc)[2], __m256 ws0, __m256 ws1, const float *const *p,
	size_t i, const int C)
{
	_Pragma("GCC unroll 4") for (int c = 0; c < C; c++) {
		__m256 da = _mm256_set1_ps(p[c][2 * i]);
		f[c][0] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc[c][0]), ws0), da,
					  f[c][0]);
		f[c][1] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc[c][1]), ws1), da,
					  f[c][1]);
	}
}

static inline __attribute__((always_inline)) void
store_f(__m256 (*f)[2], float *const *o, int nr, const int C)
{
	_Pragma("GCC unroll 4") for (int c = 0; c < C; c++) {
		float r[16];
		_mm256_storeu_ps(r, f[c][0]);
		_mm256_storeu_ps(r + 8, f[c][1]);
		memcpy(o[c], r, (size_t)nr * sizeof(float));
	}
}

/* ---- the repacked tile ---- */

struct q8_rtile {
	uint8_t *q; /* [n / 4][4][8] int32 (two int16): 32 n bytes */
	float *ws;  /* [n / 32][16] */
};

static inline struct q8_rtile q8_rtile_at(void *scratch, size_t n)
{
	struct q8_rtile t = {scratch, (float *)((uint8_t *)scratch + 32 * n)};

	return t;
}
_Static_assert(QUANT_TILE_ROWS == 16, "a tile is 16 rows");

/* Rows [0, nr) of plain Q8_0 rows into the tile (rows nr..15: zeros). */
static void q8_repack(const uint8_t *w, size_t w_stride, int nr, size_t n, struct q8_rtile *t)
{
	for (size_t i = 0; i < n / 32; i++) {
		__m256i E[16], O[16];
		uint8_t *q = t->q + i * 1024;
		for (int r = 0; r < 16; r++) {
			const struct block_q8_0 *b = (const struct block_q8_0 *)(w + (size_t)r * w_stride) + i;
			__m256i x = r < nr ? _mm256_loadu_si256((const __m256i *)b->qs)
					   : _mm256_setzero_si256();
			E[r] = even16(x);
			O[r] = odd16(x);
			t->ws[i * 16 + (size_t)r] = r < nr ? q_f16(b->d) : 0.0f;
		}
		put8_stride(q, E, 128);
		put8_stride(q + 32, E + 8, 128);
		put8_stride(q + 64, O, 128);
		put8_stride(q + 96, O + 8, 128);
	}
}

/* The packed group g into the tile: E and O of each line, the d widened. */
static void q8_repack_packed(const uint8_t *g, size_t n, struct q8_rtile *t, size_t ahead,
			     bool nta)
{
	for (size_t i = 0; i < n / 32; i++) {
		const uint8_t *u = g + (i / 2) * P8_UNIT, *l = u + 64 + (i & 1) * 512;
		uint8_t *q = t->q + i * 1024;
		p2_prefetch(u + (i & 1) * (P8_UNIT / 2), P8_UNIT / 2, ahead, nta);
		for (int h = 0; h < 2; h++)
			_mm256_storeu_ps(t->ws + i * 16 + 8 * (size_t)h,
					 _mm256_cvtph_ps(_mm_loadu_si128(
						 (const __m128i *)(u + 32 * (i & 1) + 16 * h))));
		for (int j = 0; j < 8; j++)
			for (int h = 0; h < 2; h++) {
				__m256i x = _mm256_loadu_si256((const __m256i *)(l + 64 * j + 32 * h));
				_mm256_store_si256((__m256i *)(q + 128 * j + 32 * h), even16(x));
				_mm256_store_si256((__m256i *)(q + 128 * j + 64 + 32 * h), odd16(x));
			}
	}
}

/* C tokens against the repacked tile. */
static inline __attribute__((always_inline)) void
q8_cols(const struct q8_rtile *t, size_t n, const int8_t *const *a, const float *const *p,
	float *const *o, int nr, const int C)
{
	__m256 f[4][2];

	_Pragma("GCC unroll 4") for (int c = 0; c < C; c++)
		f[c][0] = f[c][1] = _mm256_setzero_ps();
	for (size_t i = 0; i < n / 32; i++) {
		_Alignas(32) int32_t ae[4][8], ao[4][8];
		__m256i acc[4][2];
		const uint8_t *q = t->q + i * 1024;
		_Pragma("GCC unroll 4") for (int c = 0; c < C; c++) {
			act16(a[c] + i * sizeof(struct block_q8_0) + Q8_OFF, ae[c], ao[c]);
			acc[c][0] = acc[c][1] = _mm256_setzero_si256();
		}
		_Pragma("GCC unroll 8") for (int j = 0; j < 8; j++)
			group16(acc, _mm256_load_si256((const __m256i *)(q + 128 * j)),
				_mm256_load_si256((const __m256i *)(q + 128 * j + 32)),
				_mm256_load_si256((const __m256i *)(q + 128 * j + 64)),
				_mm256_load_si256((const __m256i *)(q + 128 * j + 96)),
				(const int32_t(*)[8])ae, (const int32_t(*)[8])ao, j, C);
		block_f(f, acc, _mm256_loadu_ps(t->ws + i * 16), _mm256_loadu_ps(t->ws + i * 16 + 8),
			p, i, C);
	}
	store_f(f, o, nr, C);
}

/* Tokens b .. of the batch, C at a time, against the repacked tile. */
#define Q8_COLS(C)                                                                        \
	for (; b + (C) <= B; b += (C)) {                                                 \
		const int8_t *a[4];                                                      \
		const float *p[4];                                                       \
		float *o[4];                                                             \
		for (int c = 0; c < (C); c++) {                                          \
			a[c] = (const int8_t *)act + (b + (size_t)c) * as;               \
			p[c] = prep + (b + (size_t)c) * QUANT_TILE_PREP_FLOATS(n);       \
			o[c] = out + (b + (size_t)c) * os;                               \
		}                                                                        \
		q8_cols(&t, n, a, p, o, nr, (C));                                        \
	}

static void tile2_q8_0(size_t n, const void *w, size_t w_stride, int nr, const void *act,
		       size_t as, const float *prep, size_t B, float *out, size_t os, void *scratch,
		       const struct quant_tune *tune)
{
	struct q8_rtile t = q8_rtile_at(scratch, n);
	size_t b = 0;

	(void)tune;
	q8_repack(w, w_stride, nr, n, &t);
	Q8_COLS(4)
	Q8_COLS(2)
	Q8_COLS(1)
}

/* ---- the packed form ---- */

/*
 * Block i of packed group g for C tokens (1 or 2) into f[c][h]. One token
 * (decode) takes the sign trick on the line as it is: |q| (vpsignb q, q)
 * times the activation with q's sign (vpsignb a, q) by vpmaddubsw, each
 * int16 pair sum at most 2 * 128 * 127, then vpmaddwd by ones: it read
 * faster in cache than shifting E and O out first (docs/perf.md, "Rows and
 * prefill tiles"). Two
 * tokens share each line's E and O, taken as 256 E (vpsllw 8) and 256 O
 * (the high bytes in place), the block's sums shifted back at its end
 * (exact: |sum| <= 32 * 128 * 127 * 256 < 2^31).
 */
static inline __attribute__((always_inline)) void
p8_step(const uint8_t *g, size_t i, const int8_t *const *a, const float *const *p,
	__m256 (*f)[2], const int C, size_t ahead, bool nta)
{
	const uint8_t *u = g + (i / 2) * P8_UNIT, *l = u + 64 + (i & 1) * 512;
	const size_t aoff = i * sizeof(struct block_q8_0) + Q8_OFF;
	_Alignas(32) int32_t ae[2][8], ao[2][8];
	__m256i acc[2][2];

	p2_prefetch(u + (i & 1) * (P8_UNIT / 2), P8_UNIT / 2, ahead, nta);
	_Pragma("GCC unroll 2") for (int c = 0; c < C; c++) {
		if (C == 2)
			act16(a[c] + aoff, ae[c], ao[c]);
		acc[c][0] = acc[c][1] = _mm256_setzero_si256();
	}
	_Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) {
		const __m256i ones = _mm256_set1_epi16(1), hi = _mm256_set1_epi16((short)0xff00);
		__m256i w0 = _mm256_loadu_si256((const __m256i *)(l + 64 * j));
		__m256i w1 = _mm256_loadu_si256((const __m256i *)(l + 64 * j + 32));
		if (C == 2) {
			group16(acc, _mm256_slli_epi16(w0, 8), _mm256_slli_epi16(w1, 8),
				_mm256_and_si256(w0, hi), _mm256_and_si256(w1, hi),
				(const int32_t(*)[8])ae, (const int32_t(*)[8])ao, j, C);
			continue;
		}
		int32_t x;
		memcpy(&x, a[0] + aoff + 4 * j, sizeof x);
		__m256i av = _mm256_set1_epi32(x);
		acc[0][0] = _mm256_add_epi32(
			acc[0][0], _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w0, w0),
									  _mm256_sign_epi8(av, w0)),
						     ones));
		acc[0][1] = _mm256_add_epi32(
			acc[0][1], _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w1, w1),
									  _mm256_sign_epi8(av, w1)),
						     ones));
	}
	_Pragma("GCC unroll 2") for (int c = 0; c < C; c++)
		if (C == 2) {
			acc[c][0] = _mm256_srai_epi32(acc[c][0], 8);
			acc[c][1] = _mm256_srai_epi32(acc[c][1], 8);
		}
	block_f(f, acc, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(u + 32 * (i & 1)))),
		_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(u + 32 * (i & 1) + 16))), p, i, C);
}

static inline __attribute__((always_inline)) void
p8_cols(const uint8_t *g, size_t n, const int8_t *const *a, const float *const *p,
	float *const *o, const int C, size_t ahead, bool nta)
{
	__m256 f[2][2];

	for (int c = 0; c < C; c++)
		f[c][0] = f[c][1] = _mm256_setzero_ps();
	for (size_t i = 0; i < n / 32; i++)
		p8_step(g, i, a, p, f, C, ahead, nta);
	store_f(f, o, 16, C);
}

/* A packed tile: from 4 tokens up with the tile scratch, the group into the
 * repacked tile once and the tokens as tile2_q8_0's; else the tokens two at
 * a time straight off the group, the first pass prefetching ahead. */
static void ptile2_q8_0(size_t n, const void *w, size_t w_stride, int nr, const void *act,
			size_t as, const float *prep, size_t B, float *out, size_t os,
			void *scratch, const struct quant_tune *tune)
{
	size_t b = 0;

	(void)w_stride;
	if (scratch && B >= 4) {
		struct q8_rtile t = q8_rtile_at(scratch, n);
		q8_repack_packed(w, n, &t, tune->ahead, tune->nta);
		nr = 16;
		Q8_COLS(4)
		Q8_COLS(2)
		Q8_COLS(1)
		return;
	}
	for (; b < B;) {
		const int8_t *a[2];
		const float *p[2];
		float *o[2];
		int C = B - b >= 2 ? 2 : 1;
		size_t ahead = b ? 0 : tune->ahead;
		for (int c = 0; c < C; c++) {
			a[c] = (const int8_t *)act + (b + (size_t)c) * as;
			p[c] = prep + (b + (size_t)c) * QUANT_TILE_PREP_FLOATS(n);
			o[c] = out + (b + (size_t)c) * os;
		}
		if (C == 2)
			p8_cols(w, n, a, p, o, 2, ahead, tune->nta);
		else
			p8_cols(w, n, a, p, o, 1, ahead, tune->nta);
		b += (size_t)C;
	}
}

/* Decode lanes: one token against ng groups, a block of each in turn. */
static inline __attribute__((always_inline)) void
p8_lanes(const uint8_t *const *g, const int G, size_t n, const int8_t *a, const float *p,
	 float *const *o, size_t ahead, bool nta)
{
	__m256 f[QUANT_LANES][1][2];

	for (int l = 0; l < G; l++)
		f[l][0][0] = f[l][0][1] = _mm256_setzero_ps();
	for (size_t i = 0; i < n / 32; i++)
		for (int l = 0; l < G; l++)
			p8_step(g[l], i, &a, &p, f[l], 1, ahead, nta);
	for (int l = 0; l < G; l++)
		store_f(f[l], &o[l], 16, 1);
}

static void lanes2_q8_0(size_t n, const void *const *groups, int ng, const void *act,
			const float *prep, float *const *out, const struct quant_tune *tune)
{
	const uint8_t *const *g = (const uint8_t *const *)groups;

	switch (ng) {
	case 4: p8_lanes(g, 4, n, act, prep, out, tune->ahead, tune->nta); break;
	case 3: p8_lanes(g, 3, n, act, prep, out, tune->ahead, tune->nta); break;
	case 2: p8_lanes(g, 2, n, act, prep, out, tune->ahead, tune->nta); break;
	default: p8_lanes(g, 1, n, act, prep, out, tune->ahead, tune->nta); break;
	}
}
_Static_assert(QUANT_LANES == 4, "lanes2_q8_0 has a case for each lane count");

/* 16 rows into the packed layout: per pair of blocks the d halves, then
 * each block's 32 quant bytes of the rows, transposed 8 rows at a time. */
static void pack2_q8_0_to(size_t n, const void *src, void *dst, const struct quant_tune *tune)
{
	const size_t rb = n / 32 * sizeof(struct block_q8_0);
	const uint8_t *rows = src;
	uint8_t *p = dst;

	for (size_t i = 0; i < n / 64; i++, p += P8_UNIT) {
		__m256i R[16], S[16];
		p2_prefetch(rows + 16 * rb + P8_UNIT * i, P8_UNIT, tune->ahead, tune->nta); /* the next group */
		for (int r = 0; r < 16; r++) {
			const uint8_t *b = rows + (size_t)r * rb + 68 * i;
			memcpy(p + 2 * r, b, 2);
			memcpy(p + 32 + 2 * r, b + 34, 2);
			R[r] = _mm256_loadu_si256((const __m256i *)(b + Q8_OFF));
			S[r] = _mm256_loadu_si256((const __m256i *)(b + 34 + Q8_OFF));
		}
		put8(p + 64, R);
		put8(p + 64 + 32, R + 8);
		put8(p + 576, S);
		put8(p + 576 + 32, S + 8);
	}
}

const struct quant_tile avx2_tile_q8_0 = {tile2_q8_0, tile_prep_q8_0, "avx2"};
const struct quant_packed avx2_packed_q8_0 = {
	pack2_q8_0_to, pk_unpack_q8_0, {ptile2_q8_0, tile_prep_q8_0, "avx2 packed"}, 64, lanes2_q8_0};
