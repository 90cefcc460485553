/*
 * llm/quant.h — the quant type table: one row per GGUF tensor type.
 *
 * Layouts follow ggml (ggml-common.h block_* structs); each block struct in
 * llm/quant_blocks.h has a _Static_assert on its size. The scalar row of each
 * type (llm/quant.c, kernels in llm/kernels/scalar) is the reference and the
 * only home of the type's geometry. A table (struct quant_table) is built
 * once from the scalar rows and the descriptors of the ISA directories this
 * CPU runs (llm/quant_isa.h), most general first, and never changes after;
 * its SIMD rows are checked against the scalar rows by tests and `llmctl
 * selftest`.
 */
#ifndef LLM_QUANT_H
#define LLM_QUANT_H

#include "quant_isa.h"

/* nb pseudo-random valid blocks of a type (quant_fill_random). */
typedef void (*quant_fill_fn)(void *dst, size_t nb, float std, uint64_t *state);

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
	const char *impl;      /* "scalar", "avx2", "avx512vnni", "neon", "neon-dotprod" */
	quant_gemm_fn gemm;    /* NULL: matmul calls vec_dot per activation row */
	quant_rows_fn rows;    /* NULL: decode calls vec_dot per weight row */
	/* Test data, from the scalar row: */
	quant_fill_fn fill;    /* random blocks; NULL: random floats through from_float */
	uint8_t n_f16;         /* the block's f16 scales (d, then m or dmin), */
	uint16_t f16_at[2];    /* at these byte offsets (selftest's edge cases) */
};

/* One type of a table: its row and, where it has them, its tile and packed
 * form (from one descriptor) with that descriptor's tuning. */
struct quant_entry {
	struct quant_type row;               /* row.name NULL: a type we do not compute */
	const struct quant_tile *tile;       /* NULL: none */
	const struct quant_packed *packed;   /* NULL: none */
	const struct quant_tune *tune;       /* never NULL */
};

struct quant_table {
	uint32_t cpu_features;               /* what it was built for */
	struct quant_entry type[GGML_TYPE_COUNT];
};

/* The table for a CPU with these features: the scalar rows, then each ISA
 * descriptor the features allow over them. The table depends on
 * cpu_features alone; a caller may build one for fewer features than the
 * CPU has (tests of the scalar and AVX2 paths) and hand it to a matmul
 * context (struct mm_ctx, qt). */
void quant_table_init(struct quant_table *qt, uint32_t cpu_features);
/* The table of this CPU (plat_cpu_features()), built on the first call
 * (any thread) and never changed after. */
const struct quant_table *quant_cpu(void);

/* A table's row of type t, or NULL if the type is unknown. */
const struct quant_type *quant_table_get(const struct quant_table *qt, uint32_t t);
/* Its tile functions, packed form (NULL: none) and tuning of type t. */
const struct quant_tile *quant_table_tile(const struct quant_table *qt, uint32_t t);
const struct quant_packed *quant_table_packed(const struct quant_table *qt, uint32_t t);
const struct quant_tune *quant_table_tune(const struct quant_table *qt, uint32_t t);
/* Whether a rows x n matrix of type t can be packed with this table. */
bool quant_table_can_pack(const struct quant_table *qt, uint32_t t, uint64_t rows, uint64_t n);

/* The same of this CPU's table (quant_cpu()). */
const struct quant_type *quant_get(uint32_t t);
bool quant_can_pack(uint32_t t, uint64_t rows, uint64_t n);

/* The scalar reference row for type t, or NULL. */
const struct quant_type *quant_scalar(uint32_t t);
/* Whether t is a weight type: one with a scalar row and a vec_dot (the
 * activation-only types Q8_1 and Q8_K are not). Every list of the types we
 * compute with (selftest, benchmarks, mkmodel, tests) walks the enum with
 * it, in enum order. */
bool quant_is_weight(uint32_t t);
/* Bytes for n elements of type t; 0 if unknown type or n % blck != 0. */
uint64_t quant_row_bytes(uint32_t t, uint64_t n);
const char *quant_name(uint32_t t); /* any ggml type, "IQ2_XXS"; "?" if unknown */

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
