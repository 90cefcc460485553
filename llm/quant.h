/*
 * llm/quant.h — the quant type table: one row per GGUF tensor type.
 *
 * Layouts follow ggml (ggml-common.h block_* structs); each block struct in
 * llm/quant_blocks.h has a _Static_assert on its size. The scalar row of each
 * type is the reference; SIMD rows (llm/kernels/{avx2,avx512,neon}) are chosen
 * once by quant_init() from the CPU features and checked against the scalar
 * rows by tests and `llmctl selftest`.
 */
#ifndef LLM_QUANT_H
#define LLM_QUANT_H

#include "../kernel/platform.h"

/* ggml.h enum ggml_type values, as stored in GGUF tensor infos. */
enum ggml_type {
	GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1, GGML_TYPE_Q4_0 = 2, GGML_TYPE_Q4_1 = 3,
	GGML_TYPE_Q5_0 = 6, GGML_TYPE_Q5_1 = 7, GGML_TYPE_Q8_0 = 8, GGML_TYPE_Q8_1 = 9,
	GGML_TYPE_Q2_K = 10, GGML_TYPE_Q3_K = 11, GGML_TYPE_Q4_K = 12, GGML_TYPE_Q5_K = 13,
	GGML_TYPE_Q6_K = 14, GGML_TYPE_Q8_K = 15, GGML_TYPE_BF16 = 30,
	GGML_TYPE_COUNT = 40
};

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
 * tile contract (optional; prefill with many tokens). prep runs once per
 * activation row after from_float: it writes QUANT_TILE_PREP_FLOATS(n)
 * floats (per-sub-block scales and sums) for that row. tile then computes
 * weight rows [0, nr) of w (w_stride bytes apart, 1 <= nr <= QUANT_TILE_ROWS)
 * against B activation rows act + b * as bytes (in the row's act_type) with
 * their prep rows prep + b * QUANT_TILE_PREP_FLOATS(n): out[b * os + r].
 * scratch holds quant_tile_scratch(n) bytes, 64-byte aligned, owned by the
 * calling worker. Each result depends only on its weight row and activation
 * row (never on nr, B, the tile or the thread) and is within the selftest's
 * bound of vec_dot. n must be a multiple of the type's block and of 32.
 * Types whose act_type is F32 (the float tiles) see the F32 activations in
 * place: no from_float and no prep rows (prep NULL; their prep does nothing).
 */
#define QUANT_TILE_ROWS 16
#define QUANT_TILE_PREP_FLOATS(n) ((n) / 8)
typedef void (*quant_tile_prep_fn)(size_t n, const void *act, float *prep);
typedef void (*quant_tile_fn)(size_t n, const void *w, size_t w_stride, int nr,
			      const void *act, size_t as, const float *prep, size_t B,
			      float *out, size_t os, void *scratch);
size_t quant_tile_scratch(size_t n);
struct quant_tile {
	quant_tile_fn tile;
	quant_tile_prep_fn prep;
	const char *impl;
};

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
 * once for a batch (the AVX2 tiles do from 4 tokens up). Its results are the same bits as the type's unpacked tile,
 * which a type with a packed form must have; matmul gives those bits for
 * unpacked rows of such a type at every batch too. A matrix is packed only
 * when its rows are a multiple of 16 and n a multiple of unit. The layouts
 * are in llm/kernels/scalar/pack.c.
 */
typedef void (*quant_pack_fn)(size_t n, void *group, void *tmp);
/* pack_to: 16 rows at src (contiguous) packed into dst, out of place (in
 * place: the group copied to tmp, then packed back from it). */
typedef void (*quant_pack_to_fn)(size_t n, const void *src, void *dst);
/* lanes (optional): decode, one token (B = 1, the prep and converted
 * activation of tile) against ng <= QUANT_LANES packed groups at once, read
 * side by side; out[i] gets group i's 16 results, the bits tile gives. */
#define QUANT_LANES 4
typedef void (*quant_lanes_fn)(size_t n, const void *const *groups, int ng, const void *act,
			       const float *prep, float *const *out);
/* Whether decode of packed weights takes the lanes (quant_init() decides
 * from the CPU). A Xeon read 10-15% more with 4 streams a worker than with
 * one; an EPYC (Zen 4) read the same or less (packed decode, 2 threads:
 * Q8_0 88-99% of the read probe with lanes against 97-104% without), so on
 * AMD's CPUs (PLAT_CPU_AMD) each group goes through its tile alone. The
 * bits are the same either way. */
bool quant_decode_lanes(void);
struct quant_packed {
	quant_pack_to_fn pack_to;
	quant_pack_fn unpack;
	struct quant_tile tile;
	uint32_t unit;         /* n % unit == 0 */
	quant_lanes_fn lanes;
};

struct quant_type {
	const char *name;      /* "Q4_K" */
	uint32_t type;         /* enum ggml_type */
	uint32_t blck;         /* elements per block */
	uint32_t bytes;        /* bytes per block */
	uint32_t act_type;     /* activation format vec_dot wants (F32, Q8_0, Q8_1, Q8_K) */
	quant_to_float_fn to_float;     /* dequantize n elements (n % blck == 0) */
	quant_from_float_fn from_float; /* quantize n floats into this type (may be NULL for
	                                   weight-only types; required for act types) */
	quant_vec_dot_fn vec_dot;      /* NULL for activation-only types (Q8_1, Q8_K) */
	const char *impl;      /* "scalar", "avx2", "avx512", "avx512vnni", "neon", "neon-dotprod" */
	quant_gemm_fn gemm;    /* NULL: matmul calls vec_dot per activation row */
	quant_rows_fn rows;    /* NULL: decode calls vec_dot per weight row */
};

/* Select SIMD rows for features (plat_cpu_features()); scalar rows stay available.
 * Call once at start, before any worker runs. Until then quant_get() returns
 * the scalar rows. */
void quant_init(uint32_t cpu_features);

/*
 * Adding SIMD rows: a directory llm/kernels/<isa>/ defines its rows (const
 * struct quant_type, impl = "<isa>") and one function
 *     void quant_<isa>_init(uint32_t cpu_features);
 * that calls quant_register() for each row the features allow. quant_init()
 * calls it (add the call there, guarded by the features and the target
 * architecture). A row must keep the scalar row's blck, bytes and act_type,
 * and have every function the scalar row has; vec_dot sees the same
 * activation blocks as the scalar row's. Returns 0 or -LLMK_EINVAL.
 */
int quant_register(const struct quant_type *row);
/* The tile functions of weight type t (see the tile contract); the last
 * registered wins, quant_init() clears them. quant_get_tile(): NULL when
 * there are none. */
int quant_register_tile(uint32_t t, const struct quant_tile *tile);
const struct quant_tile *quant_get_tile(uint32_t t);
/* The packed-weight functions of weight type t (as tiles: the last
 * registered wins, quant_init() clears them); NULL when there are none. */
int quant_register_packed(uint32_t t, const struct quant_packed *p);
const struct quant_packed *quant_get_packed(uint32_t t);
/* Whether a rows x n matrix of type t can be packed on this CPU. */
bool quant_can_pack(uint32_t t, uint64_t rows, uint64_t n);
/* The selected row for type t, or NULL if the type is unknown. */
const struct quant_type *quant_get(uint32_t t);
/* The scalar reference row for type t, or NULL. */
const struct quant_type *quant_scalar(uint32_t t);
/* Bytes for n elements of type t; 0 if unknown type or n % blck != 0. */
uint64_t quant_row_bytes(uint32_t t, uint64_t n);
const char *quant_name(uint32_t t); /* "?" if unknown */

/* IEEE half and bfloat16 conversions (exact, round-to-nearest-even on the way in). */
float quant_f16_to_f32(uint16_t h);
uint16_t quant_f32_to_f16(float f);
float quant_bf16_to_f32(uint16_t h);
uint16_t quant_f32_to_bf16(float f);

/*
 * Deterministic pseudo-random data of type t: n elements (n % blck == 0) with
 * mean about 0 and standard deviation about std, as valid blocks with sane
 * scales (no quantizer runs). *state is the generator state (any seed) and is
 * advanced. For tests, selftest, benchmarks and tools/mkmodel. Returns 0, or
 * -LLMK_EINVAL for an unknown type or a partial block.
 */
int quant_fill_random(uint32_t t, void *dst, size_t n, float std, uint64_t *state);

#endif
