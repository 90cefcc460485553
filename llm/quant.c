/*
 * llm/quant.c — the quant type table (llm/quant.h).
 *
 * One const row per type with the scalar reference kernels
 * (llm/kernels/scalar/), and one dispatch table that quant_init() fills with
 * the fastest row each type has on this CPU. The dispatch table is the one
 * piece of process-wide state in the engine: written once at start, before
 * any worker runs, read-only afterwards.
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

static const struct quant_type *selected[GGML_TYPE_COUNT];

const struct quant_type *quant_scalar(uint32_t t)
{
	if (t >= GGML_TYPE_COUNT || !scalar_rows[t].name)
		return NULL;
	return &scalar_rows[t];
}

const struct quant_type *quant_get(uint32_t t)
{
	if (t >= GGML_TYPE_COUNT)
		return NULL;
	return selected[t] ? selected[t] : quant_scalar(t);
}

static const struct quant_tile *tiles[GGML_TYPE_COUNT];

int quant_register_tile(uint32_t t, const struct quant_tile *tile)
{
	const struct quant_type *ref = quant_scalar(t);

	if (!ref || !ref->vec_dot || !tile || !tile->tile || !tile->prep)
		return -LLMK_EINVAL;
	tiles[t] = tile;
	return 0;
}

const struct quant_tile *quant_get_tile(uint32_t t)
{
	return t < GGML_TYPE_COUNT ? tiles[t] : NULL;
}

static const struct quant_packed *packed[GGML_TYPE_COUNT];

int quant_register_packed(uint32_t t, const struct quant_packed *p)
{
	const struct quant_type *ref = quant_scalar(t);

	if (!ref || !ref->vec_dot || !p || !p->pack_to || !p->unpack || !p->tile.tile ||
	    !p->tile.prep || !p->unit || p->unit % ref->blck || !tiles[t])
		return -LLMK_EINVAL;
	packed[t] = p;
	return 0;
}

const struct quant_packed *quant_get_packed(uint32_t t)
{
	return t < GGML_TYPE_COUNT ? packed[t] : NULL;
}

bool quant_can_pack(uint32_t t, uint64_t rows, uint64_t n)
{
	const struct quant_packed *p = quant_get_packed(t);

	return p && rows && rows % QUANT_TILE_ROWS == 0 && n && n % p->unit == 0;
}

/* The repacked weights of QUANT_TILE_ROWS rows: a byte per element, and a
 * scale and an offset (floats) per row per 16 elements at the finest; or the
 * float tiles' two bytes (F16, BF16) per element. */
size_t quant_tile_scratch(size_t n)
{
	return QUANT_TILE_ROWS * (2 * n + n / 16 * 2 * sizeof(float)) + 64;
}

int quant_register(const struct quant_type *row)
{
	const struct quant_type *ref = quant_scalar(row->type);

	/* A SIMD row must describe the same data as the scalar row it replaces. */
	if (!ref || row->blck != ref->blck || row->bytes != ref->bytes ||
	    row->act_type != ref->act_type || !row->to_float ||
	    (ref->vec_dot && !row->vec_dot) || (ref->from_float && !row->from_float))
		return -LLMK_EINVAL;
	selected[row->type] = row;
	return 0;
}

static bool decode_lanes;

bool quant_decode_lanes(void)
{
	return decode_lanes;
}

void quant_init(uint32_t cpu_features)
{
	decode_lanes = (cpu_features & PLAT_CPU_AMD) == 0;
	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
		selected[t] = quant_scalar(t);
		tiles[t] = NULL;
		packed[t] = NULL;
	}
	/* Per-ISA registration, most general first so that the wider ISA's
	 * rows win (see quant.h, "Adding SIMD rows"). */
#if defined(__x86_64__)
	quant_avx2_init(cpu_features);
	quant_avx512_init(cpu_features);
#elif defined(__aarch64__)
	quant_neon_init(cpu_features);
#endif
	(void)cpu_features;
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
	uint32_t u = q_f32_bits(f);

	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40); /* NaN stays NaN (quiet) */
	u += 0x7fff + ((u >> 16) & 1);               /* round to nearest even */
	return (uint16_t)(u >> 16);
}
