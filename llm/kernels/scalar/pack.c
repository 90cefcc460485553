/*
 * llm/kernels/scalar/pack.c — the packed weight layouts (llm/quant_isa.h,
 * struct quant_packed): portable packs that define them (an ISA's pack_to
 * must write the same bytes; test_matmul checks it) and the unpacks every
 * ISA's descriptor names.
 *
 * A group of 16 rows is cut into units (a pair of 32-element blocks, or a
 * superblock of 256) and each unit of the 16 rows is written as a list of
 * pieces, one after another: a half (2 bytes) of each row side by side (a
 * scale: 16 halves), or k dwords of each row interleaved, dword j of row r
 * at 4 (16 j + r) (so one 64-byte load holds dword j of all 16 rows). The
 * bytes are the rows' own, moved: the group keeps its size, and unpack
 * gives back the GGUF rows exactly.
 *
 *   Q4_0, 64 elements (2 blocks, 576 bytes): d of block 0, d of block 1,
 *         then the 4 quant dwords of block 0, then of block 1
 *   Q8_0, 64 elements (2 blocks, 1088 bytes): the same, 8 quant dwords
 *   Q4_K, 256 elements (2304 bytes): the block's 36 dwords (d and dmin,
 *         3 of scales, 32 of quants)
 *   Q6_K, 256 elements (3360 bytes): the 6-bit values v rearranged (below),
 *         then the 16 sub-blocks' int8 scales (16 rows side by side each),
 *         then d
 *
 * Where the unit's offsets are multiples of 64 from a 64-byte-aligned
 * group (all of these when the group is), no load of the tiles splits a
 * cache line.
 */
#include "scalar.h"

struct piece {
	uint8_t blk;     /* block within the unit */
	uint8_t dwords;  /* 0: one half */
	uint16_t off;    /* byte offset in the block */
};

struct layout {
	uint16_t blocks, block_bytes; /* per unit */
	uint8_t n;
	struct piece p[4];
};

static const struct layout lay_q4_0 = {2, 18, 4, {{0, 0, 0}, {1, 0, 0}, {0, 4, 2}, {1, 4, 2}}};
static const struct layout lay_q8_0 = {2, 34, 4, {{0, 0, 0}, {1, 0, 0}, {0, 8, 2}, {1, 8, 2}}};
static const struct layout lay_q4_K = {1, 144, 1, {{0, 36, 0}}};

_Static_assert(sizeof(struct block_q4_0) == 18 && sizeof(struct block_q8_0) == 34 &&
		       sizeof(struct block_q4_K) == 144 && sizeof(struct block_q6_K) == 210,
	       "packed layouts");

/* Move the group between row order (rows: 16 rows of rb bytes) and packed
 * order (p), either way. */
static void move(const struct layout *L, size_t n, size_t unit, uint8_t *rows, uint8_t *p,
		 int to_packed)
{
	const size_t rb = n / unit * L->blocks * L->block_bytes, bb = L->block_bytes;
	const int np = L->n;

	for (size_t u = 0; u < n / unit; u++)
		for (int k = 0; k < np; k++) {
			const size_t dw = L->p[k].dwords;
			uint8_t *src = rows + (u * L->blocks + L->p[k].blk) * bb + L->p[k].off;
			if (!dw) {
				for (size_t r = 0; r < QUANT_TILE_ROWS; r++, p += 2) {
					if (to_packed)
						memcpy(p, src + r * rb, 2);
					else
						memcpy(src + r * rb, p, 2);
				}
				continue;
			}
			/* a dword of each row per 64 bytes: rows outer, so each
			 * row's dwords are read (or written) in a run */
			for (size_t r = 0; r < QUANT_TILE_ROWS; r++) {
				uint8_t *s = src + r * rb, *d = p + 4 * r;
				if (to_packed)
					for (size_t j = 0; j < dw; j++)
						memcpy(d + 64 * j, s + 4 * j, 4);
				else
					for (size_t j = 0; j < dw; j++)
						memcpy(s + 4 * j, d + 64 * j, 4);
			}
			p += 64 * dw;
		}
}

static void pack_with(const struct layout *L, size_t unit, size_t n, void *group, void *tmp)
{
	memcpy(tmp, group, QUANT_TILE_ROWS * (n / unit * L->blocks * L->block_bytes));
	move(L, n, unit, tmp, group, 1);
}

static void unpack_with(const struct layout *L, size_t unit, size_t n, void *group, void *tmp)
{
	memcpy(tmp, group, QUANT_TILE_ROWS * (n / unit * L->blocks * L->block_bytes));
	move(L, n, unit, group, tmp, 0);
}

#define PACK_FNS(T, UNIT)                                              \
	void pk_pack_##T(size_t n, void *group, void *tmp)                \
	{                                                              \
		pack_with(&lay_##T, (UNIT), n, group, tmp);            \
	}                                                              \
	void pk_unpack_##T(size_t n, void *group, void *tmp)              \
	{                                                              \
		unpack_with(&lay_##T, (UNIT), n, group, tmp);          \
	}

PACK_FNS(q4_0, 64)
PACK_FNS(q8_0, 64)
PACK_FNS(q4_K, 256)

/*
 * Q6_K. Element 128 h + 32 j + l (h < 2, j < 4, l < 32) has the value
 * v = low | high << 4, low from ql[64 h + 32 (j & 1) + l] (its low nibble for
 * j < 2, high for j >= 2) and high from bits 2 j, 2 j + 1 of qh[32 h + l].
 * Packed, for each h three runs of 8 64-byte registers X, Y, Z (at
 * 1536 h, + 512, + 1024; register k 64 k further) hold, for l = 4 k + q in
 * byte 4 r + q of row r:
 *
 *     X = v0 | (v2 >> 4) << 6      Y = v1 | (v3 >> 4) << 6
 *     Z = (v2 & 15) | (v3 & 15) << 4                       (vj: run j's v)
 *
 * so runs 0 and 1 are one mask each, runs 2 and 3 a shift, a mask and a
 * ternary op (llm/kernels/avx512/tile.c). Then at 3072 + 16 s + r the scale
 * of sub-block s of row r, and at 3328 + 2 r its d.
 */
_Static_assert(__builtin_offsetof(struct block_q6_K, qh) == 128 &&
		       __builtin_offsetof(struct block_q6_K, scales) == 192 &&
		       __builtin_offsetof(struct block_q6_K, d) == 208,
	       "q6_K fields");

#define Q6_UNIT 3360

static void q6_move(size_t n, uint8_t *rows, uint8_t *p, int to_packed)
{
	const size_t rb = n / QK_K * sizeof(struct block_q6_K);

	for (size_t u = 0; u < n / QK_K; u++, p += Q6_UNIT)
		for (size_t r = 0; r < QUANT_TILE_ROWS; r++) {
			struct block_q6_K *b = (struct block_q6_K *)(rows + r * rb) + u;
			for (int h = 0; h < 2; h++)
				for (int l = 0; l < 32; l++) {
					uint8_t *x = p + 1536 * (size_t)h + 64 * (size_t)(l / 4) + 4 * r + l % 4;
					uint8_t *ql0 = &b->ql[64 * h + l], *ql1 = ql0 + 32;
					uint8_t *qh = &b->qh[32 * h + l];
					if (to_packed) {
						int v[4];
						for (int j = 0; j < 4; j++)
							v[j] = (((j & 1 ? *ql1 : *ql0) >> (j >= 2 ? 4 : 0)) & 15) |
							       ((*qh >> (2 * j)) & 3) << 4;
						x[0] = (uint8_t)(v[0] | (v[2] >> 4) << 6);
						x[512] = (uint8_t)(v[1] | (v[3] >> 4) << 6);
						x[1024] = (uint8_t)((v[2] & 15) | (v[3] & 15) << 4);
					} else {
						int v0 = x[0] & 63, v1 = x[512] & 63;
						int v2 = (x[1024] & 15) | (x[0] >> 6) << 4;
						int v3 = (x[1024] >> 4) | (x[512] >> 6) << 4;
						*ql0 = (uint8_t)((v0 & 15) | (v2 & 15) << 4);
						*ql1 = (uint8_t)((v1 & 15) | (v3 & 15) << 4);
						*qh = (uint8_t)(v0 >> 4 | (v1 >> 4) << 2 | (v2 >> 4) << 4 |
								(v3 >> 4) << 6);
					}
				}
			for (int sb = 0; sb < 16; sb++) {
				uint8_t *sc = p + 3072 + 16 * (size_t)sb + r;
				if (to_packed)
					*sc = (uint8_t)b->scales[sb];
				else
					b->scales[sb] = (int8_t)*sc;
			}
			if (to_packed)
				memcpy(p + 3328 + 2 * r, &b->d, 2);
			else
				memcpy(&b->d, p + 3328 + 2 * r, 2);
		}
}

void pk_pack_q6_K(size_t n, void *group, void *tmp)
{
	memcpy(tmp, group, QUANT_TILE_ROWS * (n / QK_K * sizeof(struct block_q6_K)));
	q6_move(n, tmp, group, 1);
}

void pk_unpack_q6_K(size_t n, void *group, void *tmp)
{
	memcpy(tmp, group, QUANT_TILE_ROWS * (n / QK_K * sizeof(struct block_q6_K)));
	q6_move(n, group, tmp, 0);
}
