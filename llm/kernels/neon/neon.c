/*
 * llm/kernels/neon/neon.c — the NEON rows for every AArch64 CPU: the int8
 * dot is SMULL/SMLAL2-style widening multiplies and pairwise adds (products
 * fit int16; a pair |w| <= 128, |a| <= 127 fits too). Also registers the
 * rows (quant_neon_init).
 */
#if defined(__aarch64__)
#include <arm_neon.h>

#include "../scalar/scalar.h"
#include "neon_rows.h"

#define FN(name) neon_##name

static inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b)
{
	acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
	return vpadalq_s16(acc, vmull_high_s8(a, b));
}

#include "rows.inc"

#define ROWS(P)                                                                            \
	{GGML_TYPE_F32, NULL, P##_f32_vec_dot}, {GGML_TYPE_F16, NULL, P##_f16_vec_dot},     \
	{GGML_TYPE_BF16, NULL, P##_bf16_vec_dot},                                          \
	{GGML_TYPE_Q8_0, P##_q8_0_from_float, P##_q8_0_vec_dot},                           \
	{GGML_TYPE_Q8_1, P##_q8_1_from_float, NULL},                                       \
	{GGML_TYPE_Q8_K, P##_q8_K_from_float, NULL},                                       \
	{GGML_TYPE_Q4_0, NULL, P##_q4_0_vec_dot}, {GGML_TYPE_Q4_1, NULL, P##_q4_1_vec_dot}, \
	{GGML_TYPE_Q5_0, NULL, P##_q5_0_vec_dot}, {GGML_TYPE_Q5_1, NULL, P##_q5_1_vec_dot}, \
	{GGML_TYPE_Q2_K, NULL, P##_q2_K_vec_dot}, {GGML_TYPE_Q3_K, NULL, P##_q3_K_vec_dot}, \
	{GGML_TYPE_Q4_K, NULL, P##_q4_K_vec_dot}, {GGML_TYPE_Q5_K, NULL, P##_q5_K_vec_dot}, \
	{GGML_TYPE_Q6_K, NULL, P##_q6_K_vec_dot}

struct neon_row {
	uint32_t type;
	quant_from_float_fn from_float;
	quant_vec_dot_fn vec_dot;
};

static const struct neon_row neon_plain[] = {ROWS(neon)};
static const struct neon_row neon_sdot[] = {ROWS(neondot)};
#define N_NEON (sizeof neon_plain / sizeof neon_plain[0])

/* The rows quant_register() points into: filled once at start. */
static struct quant_type neon_table[N_NEON];

void quant_neon_init(uint32_t cpu_features)
{
	bool sdot = (cpu_features & PLAT_CPU_DOTPROD) != 0;
	const struct neon_row *rows = sdot ? neon_sdot : neon_plain;

	if (!(cpu_features & PLAT_CPU_NEON))
		return;
	for (size_t i = 0; i < N_NEON; i++) {
		struct quant_type *q = &neon_table[i];
		*q = *quant_scalar(rows[i].type);
		if (rows[i].from_float)
			q->from_float = rows[i].from_float;
		if (rows[i].vec_dot)
			q->vec_dot = rows[i].vec_dot;
		q->impl = sdot ? "neon-dotprod" : "neon";
		quant_register(q);
	}
}
#endif
