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

#include "kernels/scalar/scalar.h"
#if defined(__x86_64__)
#include "kernels/avx2/avx2_rows.h"
#include "kernels/avx512/avx512_rows.h"
#elif defined(__aarch64__)
#include "kernels/neon/neon_rows.h"
#endif

/* Designated fields: a field added later (gemm) starts NULL, not misplaced. */
#define ROW(T, NAME, BLCK, BYTES, ACT, TO, FROM, DOT)                               \
	[T] = {.name = NAME, .type = T, .blck = BLCK, .bytes = BYTES, .act_type = ACT, \
	       .to_float = TO, .from_float = FROM, .vec_dot = DOT, .impl = "scalar"}

/* ggml-common.h block sizes; act_type as ggml's vec_dot_type, except that
 * the float types take F32 activations (see q_float.c). */
static const struct quant_type scalar_rows[GGML_TYPE_COUNT] = {
	ROW(GGML_TYPE_F32, "F32", 1, 4, GGML_TYPE_F32, q_f32_to_float, q_f32_from_float, q_f32_vec_dot),
	ROW(GGML_TYPE_F16, "F16", 1, 2, GGML_TYPE_F32, q_f16_to_float, q_f16_from_float, q_f16_vec_dot),
	ROW(GGML_TYPE_BF16, "BF16", 1, 2, GGML_TYPE_F32, q_bf16_to_float, q_bf16_from_float, q_bf16_vec_dot),
	ROW(GGML_TYPE_Q4_0, "Q4_0", QK4_0, sizeof(struct block_q4_0), GGML_TYPE_Q8_0, q4_0_to_float, NULL, q4_0_vec_dot),
	ROW(GGML_TYPE_Q4_1, "Q4_1", QK4_1, sizeof(struct block_q4_1), GGML_TYPE_Q8_1, q4_1_to_float, NULL, q4_1_vec_dot),
	ROW(GGML_TYPE_Q5_0, "Q5_0", QK5_0, sizeof(struct block_q5_0), GGML_TYPE_Q8_0, q5_0_to_float, NULL, q5_0_vec_dot),
	ROW(GGML_TYPE_Q5_1, "Q5_1", QK5_1, sizeof(struct block_q5_1), GGML_TYPE_Q8_1, q5_1_to_float, NULL, q5_1_vec_dot),
	ROW(GGML_TYPE_Q8_0, "Q8_0", QK8_0, sizeof(struct block_q8_0), GGML_TYPE_Q8_0, q8_0_to_float, q8_0_from_float, q8_0_vec_dot),
	ROW(GGML_TYPE_Q8_1, "Q8_1", QK8_1, sizeof(struct block_q8_1), GGML_TYPE_Q8_1, q8_1_to_float, q8_1_from_float, NULL),
	ROW(GGML_TYPE_Q2_K, "Q2_K", QK_K, sizeof(struct block_q2_K), GGML_TYPE_Q8_K, q2_K_to_float, NULL, q2_K_vec_dot),
	ROW(GGML_TYPE_Q3_K, "Q3_K", QK_K, sizeof(struct block_q3_K), GGML_TYPE_Q8_K, q3_K_to_float, NULL, q3_K_vec_dot),
	ROW(GGML_TYPE_Q4_K, "Q4_K", QK_K, sizeof(struct block_q4_K), GGML_TYPE_Q8_K, q4_K_to_float, NULL, q4_K_vec_dot),
	ROW(GGML_TYPE_Q5_K, "Q5_K", QK_K, sizeof(struct block_q5_K), GGML_TYPE_Q8_K, q5_K_to_float, NULL, q5_K_vec_dot),
	ROW(GGML_TYPE_Q6_K, "Q6_K", QK_K, sizeof(struct block_q6_K), GGML_TYPE_Q8_K, q6_K_to_float, NULL, q6_K_vec_dot),
	ROW(GGML_TYPE_Q8_K, "Q8_K", QK_K, sizeof(struct block_q8_K), GGML_TYPE_Q8_K, q8_K_to_float, q8_K_from_float, NULL),
};

const struct quant_type *quant_scalar(uint32_t t)
{
	if (t >= GGML_TYPE_COUNT || !scalar_rows[t].name)
		return NULL;
	return &scalar_rows[t];
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

const char *quant_name(uint32_t t)
{
	const struct quant_type *q = quant_scalar(t);

	return q ? q->name : "?";
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
