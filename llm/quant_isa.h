/*
 * llm/quant_isa.h — what a kernel directory (llm/kernels/<isa>/) gives the
 * quant table: the contracts of its functions and the one const descriptor
 * it exports.
 *
 * A directory exports
 *     const struct quant_isa *quant_<isa>_get(uint32_t cpu_features);
 * which returns its descriptor for a CPU with these features (plat_cpu_
 * features()), or NULL when they lack what the directory was compiled for
 * (BearSSL's br_*_get_vtable() way). The descriptor holds the directory's
 * functions by type (designated initialisers, [GGML_TYPE_Q4_K] = ...) and
 * its tuning; llm/quant.c builds the table from the descriptors
 * (llm/quant.h). Kernels include this header and quant_blocks.h only and
 * never call into llm/quant.c.
 */
#ifndef LLM_QUANT_ISA_H
#define LLM_QUANT_ISA_H

#include "quant_blocks.h"

/*
 * vec_dot contract: the dot product of one weight row (n elements of this
 * row's type, n a multiple of blck) with one activation row already converted
 * to act_type by the act_type row's from_float. Returns the float result.
 */
typedef float (*quant_vec_dot_fn)(size_t n, const void *w, const void *act);
typedef void (*quant_to_float_fn)(const void *src, float *dst, size_t n);
typedef void (*quant_from_float_fn)(const float *src, void *dst, size_t n);
/*
 * gemm contract (optional; prefill): one weight row against nc (1..QUANT_GEMM_COLS)
 * activation rows act + j * act_stride bytes, out[j * out_stride] = vec_dot of
 * row j. Each weight block is unpacked once for all nc rows.
 */
#define QUANT_GEMM_COLS 4
typedef void (*quant_gemm_fn)(size_t n, const void *w, const void *act, size_t act_stride,
			      float *out, size_t out_stride, int nc);

/*
 * rows: QUANT_ROWS weight rows (w_stride bytes apart) against one activation
 * row, for decode: out[k] for row k, each with exactly vec_dot's bits (the
 * work that depends on the activations alone is shared by the rows).
 */
#define QUANT_ROWS 4
typedef void (*quant_rows_fn)(size_t n, const void *w, size_t w_stride, const void *act,
			      float *out);

/*
 * How a descriptor's packed kernels read memory, chosen per CPU by its
 * quant_<isa>_get(). Tiles, lanes and pack_to take it as their last
 * argument and read it once per call; none of it changes a bit of a result.
 */
struct quant_tune {
	uint32_t ahead; /* prefetch distance in bytes: a packed tile's first pass
			   over a group, the lanes (AVX2), pack_to's next group */
	bool nta;       /* non-temporal prefetches, else into L2 */
	bool nta_sb;    /* the same for the AVX2 K-quant steps, which prefetch a
			   superblock's 36 or 53 lines a quarter at a time */
	bool lanes;     /* decode of packed weights through the lanes (QUANT_LANES
			   streams a worker), else each group through its tile */
};

/*
 * tile contract (optional; prefill with many tokens). prep runs once per
 * activation row after from_float: it writes QUANT_TILE_PREP_FLOATS(n)
 * floats (per-sub-block scales and sums) for that row. tile then computes
 * weight rows [0, nr) of w (w_stride bytes apart, 1 <= nr <= QUANT_TILE_ROWS)
 * against B activation rows act + b * as bytes (in the row's act_type) with
 * their prep rows prep + b * QUANT_TILE_PREP_FLOATS(n): out[b * os + r].
 * scratch holds quant_tile_scratch(n) bytes, 64-byte aligned, owned by the
 * calling worker; tune is the descriptor's (struct quant_tune). Each result
 * depends only on its weight row and activation row (never on nr, B, the
 * tile, the thread or the tuning) and is within the selftest's bound of
 * vec_dot. n must be a multiple of the type's block and of 32.
 * Types whose act_type is F32 (the float tiles) see the F32 activations in
 * place: no from_float and no prep rows (prep NULL; their prep does nothing).
 */
#define QUANT_TILE_ROWS 16
#define QUANT_TILE_PREP_FLOATS(n) ((n) / 8)
typedef void (*quant_tile_prep_fn)(size_t n, const void *act, float *prep);
typedef void (*quant_tile_fn)(size_t n, const void *w, size_t w_stride, int nr,
			      const void *act, size_t as, const float *prep, size_t B,
			      float *out, size_t os, void *scratch, const struct quant_tune *tune);
struct quant_tile {
	quant_tile_fn tile;
	quant_tile_prep_fn prep;
	const char *impl;
};

/* The repacked weights of QUANT_TILE_ROWS rows: a byte per element, and a
 * scale and an offset (floats) per row per 16 elements at the finest; or the
 * float tiles' two bytes (F16, BF16) per element. */
static inline size_t quant_tile_scratch(size_t n)
{
	return QUANT_TILE_ROWS * (2 * n + n / 16 * 2 * sizeof(float)) + 64;
}

/*
 * Packed weights (optional; a loaded model's resident weight matrices).
 * pack_to rewrites one group of QUANT_TILE_ROWS consecutive rows of n
 * elements (the group keeps its 16 row-bytes) into a layout its tile reads
 * directly, with no repack into scratch: the scales of the 16 rows side by
 * side, then their quants interleaved a dword per row, so one 512-bit load
 * holds four bytes of every row. unpack restores the GGUF rows exactly, in
 * place (tmp holds the group's bytes). tile and prep follow the tile
 * contract with w a packed group (w_stride the row bytes, nr 16) and B from
 * 1 up: a packed matrix is read by nothing else, decode included. scratch
 * may be NULL; given the tile scratch, a tile may unpack the group into it
 * once for a batch (the AVX2 tiles do from 4 tokens up). Its results are
 * the same bits as the unpacked tile of the same descriptor, which a type
 * with a packed form must have; matmul gives those bits for unpacked rows
 * of such a type at every batch too. A matrix is packed only when its rows
 * are a multiple of 16 and n a multiple of unit. The layouts are in
 * llm/kernels/scalar/pack.c.
 */
typedef void (*quant_pack_fn)(size_t n, void *group, void *tmp);
/* pack_to: 16 rows at src (contiguous) packed into dst, out of place (in
 * place: the group copied to tmp, then packed back from it). */
typedef void (*quant_pack_to_fn)(size_t n, const void *src, void *dst,
				 const struct quant_tune *tune);
/* lanes (optional): decode, one token (B = 1, the prep and converted
 * activation of tile) against ng <= QUANT_LANES packed groups at once, read
 * side by side; out[i] gets group i's 16 results, the bits tile gives.
 * matmul takes them where the tuning says so (struct quant_tune, lanes). */
#define QUANT_LANES 4
typedef void (*quant_lanes_fn)(size_t n, const void *const *groups, int ng, const void *act,
			       const float *prep, float *const *out,
			       const struct quant_tune *tune);
struct quant_packed {
	quant_pack_to_fn pack_to;
	quant_pack_fn unpack;
	struct quant_tile tile;
	uint32_t unit;         /* n % unit == 0; a multiple of the type's block */
	quant_lanes_fn lanes;
};

/* An ISA's functions for one type. Left NULL, to_float and from_float are
 * the scalar row's; gemm and rows are then absent. A type's entry counts
 * when it has vec_dot (a weight type) or from_float (an activation-only
 * type, which has no vec_dot): then it replaces the whole row below it. */
struct quant_isa_row {
	quant_to_float_fn to_float;
	quant_from_float_fn from_float;
	quant_vec_dot_fn vec_dot;
	quant_gemm_fn gemm;
	quant_rows_fn rows;
};

/*
 * One ISA's descriptor. Each array has GGML_TYPE_COUNT entries, indexed by
 * type (NULL array: none of that kind). A packed form counts only beside
 * the same descriptor's tile of its type (their bits must agree), and a
 * tile brings its packed form, or none, and the descriptor's tuning.
 */
struct quant_isa {
	const char *impl;                        /* the rows' impl: "avx2", "neon-dotprod" */
	const struct quant_isa_row *row;
	const struct quant_tile *const *tile;
	const struct quant_packed *const *packed;
	struct quant_tune tune;
};

#endif
