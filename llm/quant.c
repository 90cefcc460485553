/*
 * llm/quant.c — the quant type table (llm/quant.h).
 *
 * One const row per type with the scalar reference kernels
 * (llm/kernels/scalar/): the only place a type's geometry is written. A
 * table starts as these rows; each ISA directory this CPU runs hands over
 * its const descriptor (quant_<isa>_get, llm/quant_isa.h), whose entries
 * replace what is below them. This file calls the directories, never the
 * other way round. The CPU's own table is built once, on first use, and is
 * read-only after.
 */
#include "quant.h"

#include "gguf.h"

#include "kernels/scalar/scalar.h"
#if defined(__x86_64__)
#include "kernels/avx2/avx2_rows.h"
#include "kernels/avx512/avx512_rows.h"
#elif defined(__aarch64__)
#include "kernels/neon/neon_rows.h"
#endif

/* One scalar row: its name is the type's (GGML_TYPE_<T> is "<T>"); the
 * other fields by name (a field added later starts NULL, not misplaced). */
#define SCALAR(T, ...)                                                                    \
	[GGML_TYPE_##T] = {.name = #T, .type = GGML_TYPE_##T, .impl = "scalar",              \
			   .blck = GGML_BLCK_##T, .bytes = GGML_BYTES_##T, __VA_ARGS__}
/* the block's f16 scales, by field */
#define F16_AT(T, f) .n_f16 = 1, .f16_at = {offsetof(struct block_##T, f)}
#define F16_AT2(T, f, g) \
	.n_f16 = 2, .f16_at = {offsetof(struct block_##T, f), offsetof(struct block_##T, g)}

/* Block sizes from GGML_TYPES (llm/quant_blocks.h); act_type as ggml's vec_dot_type, except that
 * the float types take F32 activations (see q_float.c). */
static const struct quant_type scalar_rows[GGML_TYPE_COUNT] = {
	SCALAR(F32, .act_type = GGML_TYPE_F32, .to_float = q_f32_to_float,
	       .from_float = q_f32_from_float, .vec_dot = q_f32_vec_dot),
	SCALAR(F16, .act_type = GGML_TYPE_F32, .to_float = q_f16_to_float,
	       .from_float = q_f16_from_float, .vec_dot = q_f16_vec_dot),
	SCALAR(BF16, .act_type = GGML_TYPE_F32, .to_float = q_bf16_to_float,
	       .from_float = q_bf16_from_float, .vec_dot = q_bf16_vec_dot),
	SCALAR(Q4_0, .act_type = GGML_TYPE_Q8_0,
	       .to_float = q4_0_to_float, .vec_dot = q4_0_vec_dot, .fill = q4_0_fill,
	       F16_AT(q4_0, d)),
	SCALAR(Q4_1, .act_type = GGML_TYPE_Q8_1,
	       .to_float = q4_1_to_float, .vec_dot = q4_1_vec_dot, .fill = q4_1_fill,
	       F16_AT2(q4_1, d, m)),
	SCALAR(Q5_0, .act_type = GGML_TYPE_Q8_0,
	       .to_float = q5_0_to_float, .vec_dot = q5_0_vec_dot, .fill = q5_0_fill,
	       F16_AT(q5_0, d)),
	SCALAR(Q5_1, .act_type = GGML_TYPE_Q8_1,
	       .to_float = q5_1_to_float, .vec_dot = q5_1_vec_dot, .fill = q5_1_fill,
	       F16_AT2(q5_1, d, m)),
	SCALAR(Q8_0, .act_type = GGML_TYPE_Q8_0,
	       .to_float = q8_0_to_float, .from_float = q8_0_from_float, .vec_dot = q8_0_vec_dot,
	       .fill = q8_0_fill, F16_AT(q8_0, d)),
	SCALAR(Q8_1, .act_type = GGML_TYPE_Q8_1,
	       .to_float = q8_1_to_float, .from_float = q8_1_from_float),
	SCALAR(Q2_K, .act_type = GGML_TYPE_Q8_K,
	       .to_float = q2_K_to_float, .vec_dot = q2_K_vec_dot, .fill = q2_K_fill,
	       F16_AT2(q2_K, d, dmin)),
	SCALAR(Q3_K, .act_type = GGML_TYPE_Q8_K,
	       .to_float = q3_K_to_float, .vec_dot = q3_K_vec_dot, .fill = q3_K_fill,
	       F16_AT(q3_K, d)),
	SCALAR(Q4_K, .act_type = GGML_TYPE_Q8_K,
	       .to_float = q4_K_to_float, .vec_dot = q4_K_vec_dot, .fill = q4_K_fill,
	       F16_AT2(q4_K, d, dmin)),
	SCALAR(Q5_K, .act_type = GGML_TYPE_Q8_K,
	       .to_float = q5_K_to_float, .vec_dot = q5_K_vec_dot, .fill = q5_K_fill,
	       F16_AT2(q5_K, d, dmin)),
	SCALAR(Q6_K, .act_type = GGML_TYPE_Q8_K,
	       .to_float = q6_K_to_float, .vec_dot = q6_K_vec_dot, .fill = q6_K_fill,
	       F16_AT(q6_K, d)),
	SCALAR(Q8_K, .act_type = GGML_TYPE_Q8_K,
	       .to_float = q8_K_to_float, .from_float = q8_K_from_float),
	SCALAR(IQ4_NL, .act_type = GGML_TYPE_Q8_0,
	       .to_float = iq4_nl_to_float, .vec_dot = iq4_nl_vec_dot, .fill = iq4_nl_fill,
	       F16_AT(iq4_nl, d)),
	SCALAR(IQ4_XS, .act_type = GGML_TYPE_Q8_K,
	       .to_float = iq4_xs_to_float, .vec_dot = iq4_xs_vec_dot, .fill = iq4_xs_fill,
	       F16_AT(iq4_xs, d)),
};

const struct quant_type *quant_scalar(uint32_t t)
{
	if (t >= GGML_TYPE_COUNT || !scalar_rows[t].name)
		return NULL;
	return &scalar_rows[t];
}

bool quant_is_weight(uint32_t t)
{
	const struct quant_type *q = quant_scalar(t);

	return q && q->vec_dot;
}

/* An ISA's entry for type t replaces the row when it has the row's dot
 * product, or, for an activation-only type (no vec_dot), its quantizer. */
static bool isa_row_counts(const struct quant_type *ref, const struct quant_isa_row *r)
{
	return ref->vec_dot ? r->vec_dot != NULL : r->from_float != NULL;
}

static const struct quant_tune no_tune;

static void table_add(struct quant_table *qt, const struct quant_isa *isa)
{
	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
		const struct quant_type *ref = quant_scalar(t);
		struct quant_entry *e = &qt->type[t];
		if (!ref)
			continue;
		if (isa->row && isa_row_counts(ref, &isa->row[t])) {
			const struct quant_isa_row *r = &isa->row[t];
			e->row.to_float = r->to_float ? r->to_float : ref->to_float;
			e->row.from_float = r->from_float ? r->from_float : ref->from_float;
			e->row.vec_dot = r->vec_dot;
			e->row.gemm = r->gemm;
			e->row.rows = r->rows;
			e->row.impl = isa->impl;
		}
		if (isa->tile && isa->tile[t]) {
			e->tile = isa->tile[t];
			e->packed = isa->packed ? isa->packed[t] : NULL;
			e->tune = &isa->tune;
		}
	}
}

void quant_table_init(struct quant_table *qt, uint32_t cpu_features)
{
	/* most general first, so that a wider ISA's entries replace a
	 * narrower one's; NULL: this CPU cannot run that directory */
	const struct quant_isa *isa[] = {
#if defined(__x86_64__)
		quant_avx2_get(cpu_features),
		quant_avx512_get(cpu_features),
#elif defined(__aarch64__)
		quant_neon_get(cpu_features),
#endif
		NULL, /* (so that the list is never empty) */
	};

	memset(qt, 0, sizeof *qt);
	qt->cpu_features = cpu_features;
	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
		if (scalar_rows[t].name)
			qt->type[t].row = scalar_rows[t];
		qt->type[t].tune = &no_tune;
	}
	for (size_t i = 0; i + 1 < sizeof isa / sizeof isa[0]; i++)
		if (isa[i])
			table_add(qt, isa[i]);
}

/* Built by its first caller; a caller that finds another one building it
 * waits for it (once, at start, a few microseconds). */
static struct quant_table cpu_table;
static int cpu_table_state; /* 0 not built, 1 building, 2 built */

const struct quant_table *quant_cpu(void)
{
	int s = 0;

	if (__atomic_load_n(&cpu_table_state, __ATOMIC_ACQUIRE) == 2)
		return &cpu_table;
	if (__atomic_compare_exchange_n(&cpu_table_state, &s, 1, false, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED)) {
		quant_table_init(&cpu_table, plat_cpu_features());
		__atomic_store_n(&cpu_table_state, 2, __ATOMIC_RELEASE);
	}
	while (__atomic_load_n(&cpu_table_state, __ATOMIC_ACQUIRE) != 2)
		;
	return &cpu_table;
}

const struct quant_type *quant_table_get(const struct quant_table *qt, uint32_t t)
{
	return t < GGML_TYPE_COUNT && qt->type[t].row.name ? &qt->type[t].row : NULL;
}

const struct quant_tile *quant_table_tile(const struct quant_table *qt, uint32_t t)
{
	return t < GGML_TYPE_COUNT ? qt->type[t].tile : NULL;
}

const struct quant_packed *quant_table_packed(const struct quant_table *qt, uint32_t t)
{
	return t < GGML_TYPE_COUNT ? qt->type[t].packed : NULL;
}

const struct quant_tune *quant_table_tune(const struct quant_table *qt, uint32_t t)
{
	return t < GGML_TYPE_COUNT ? qt->type[t].tune : &no_tune;
}

bool quant_table_can_pack(const struct quant_table *qt, uint32_t t, uint64_t rows, uint64_t n)
{
	const struct quant_packed *p = quant_table_packed(qt, t);

	return p && rows && rows % QUANT_TILE_ROWS == 0 && n && n % p->unit == 0;
}

const struct quant_type *quant_get(uint32_t t)
{
	return quant_table_get(quant_cpu(), t);
}

bool quant_can_pack(uint32_t t, uint64_t rows, uint64_t n)
{
	return quant_table_can_pack(quant_cpu(), t, rows, n);
}

uint64_t quant_row_bytes(uint32_t t, uint64_t n)
{
	const struct quant_type *q = quant_scalar(t);

	if (!q || n % q->blck)
		return 0;
	return n / q->blck * q->bytes;
}

/* A type we do not compute is still named (gguf.c's table of every ggml
 * type), so that the line refusing it says which. */
const char *quant_name(uint32_t t)
{
	const struct quant_type *q = quant_scalar(t);

	return q ? q->name : gguf_type_name(t);
}

float quant_f16_to_f32(uint16_t h)
{
	return q_f16(h);
}

uint16_t quant_f32_to_f16(float f)
{
	return q_f32_to_f16(f);
}

float quant_bf16_to_f32(uint16_t h)
{
	return q_bits_f32((uint32_t)h << 16);
}

uint16_t quant_f32_to_bf16(float f)
{
	return q_f32_to_bf16(f);
}
