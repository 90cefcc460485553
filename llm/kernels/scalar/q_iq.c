/*
 * llm/kernels/scalar/q_iq.c — the i-quants with 4-bit indices into a
 * non-linear table: IQ4_NL (32-element blocks, Q8_0 activations) and IQ4_XS
 * (256-element super-blocks with 6-bit sub-block scales, Q8_K activations).
 *
 * A quant is an index into kvalues_iq4nl (ggml-common.h), element order as
 * Q4_0 in each 32 (low nibbles, then high nibbles). to_float does ggml's
 * dequantize_row_iq4_* float operations in its order; vec_dot sums integers
 * exactly and applies the block scales once per block.
 */
#include "scalar.h"

/* ggml-common.h kvalues_iq4nl */
const int8_t q_iq4nl_values[16] = {
	-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};

/* sum of a[j] * value(q) over one 32-element group of nibbles qs[0..15] */
static int dot_nl32(const uint8_t *qs, const int8_t *a)
{
	int s = 0;

	for (int j = 0; j < 16; j++) {
		s += q_iq4nl_values[qs[j] & 0xf] * a[j];
		s += q_iq4nl_values[qs[j] >> 4] * a[j + 16];
	}
	return s;
}

void iq4_nl_to_float(const void *src, float *dst, size_t n)
{
	const struct block_iq4_nl *b = src;

	for (size_t i = 0; i < n / QK4_NL; i++, dst += QK4_NL) {
		float d = q_f16(b[i].d);
		for (int j = 0; j < 16; j++) {
			dst[j] = d * (float)q_iq4nl_values[b[i].qs[j] & 0xf];
			dst[j + 16] = d * (float)q_iq4nl_values[b[i].qs[j] >> 4];
		}
	}
}

float iq4_nl_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_iq4_nl *x = w;
	const struct block_q8_0 *y = act;
	float sum = 0;

	for (size_t i = 0; i < n / QK4_NL; i++)
		sum += (float)dot_nl32(x[i].qs, y[i].qs) * (q_f16(x[i].d) * q_f16(y[i].d));
	return sum;
}

/* ggml: dl = d * (ls - 32) first, then dl * value. */
void iq4_xs_to_float(const void *src, float *dst, size_t n)
{
	const struct block_iq4_xs *b = src;

	for (size_t i = 0; i < n / QK_K; i++) {
		float d = q_f16(b[i].d);
		for (int s = 0; s < QK_K / 32; s++, dst += 32) {
			const uint8_t *qs = b[i].qs + 16 * s;
			float dl = d * (float)(q_iq4_xs_scale(&b[i], s) - 32);
			for (int j = 0; j < 16; j++) {
				dst[j] = dl * (float)q_iq4nl_values[qs[j] & 0xf];
				dst[j + 16] = dl * (float)q_iq4nl_values[qs[j] >> 4];
			}
		}
	}
}

/* |isum| <= 256 * 127 * 127 * 32 < 2^31 */
float iq4_xs_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_iq4_xs *x = w;
	const struct block_q8_K *y = act;
	float sum = 0;

	for (size_t i = 0; i < n / QK_K; i++) {
		int isum = 0;
		for (int s = 0; s < QK_K / 32; s++)
			isum += (q_iq4_xs_scale(&x[i], s) - 32) *
				dot_nl32(x[i].qs + 16 * s, y[i].qs + 32 * s);
		sum += q_f16(x[i].d) * y[i].d * (float)isum;
	}
	return sum;
}

/* ---- random blocks (quant_fill_random) ---- */

/* The table's root mean square: uniform indices give values of that
 * standard deviation about a mean the random scale signs cancel. */
#define IQ4NL_RMS 67.44f

void iq4_nl_fill(void *dst, size_t nb, float std, uint64_t *s)
{
	struct block_iq4_nl *b = dst;

	for (size_t i = 0; i < nb; i++) {
		b[i].d = q_rng_sscale(s, std / IQ4NL_RMS);
		q_rng_bytes(s, b[i].qs, sizeof b[i].qs);
	}
}

/* Sub-block scales +-(8..31) (stored + 32; rms 20.7) as Q3_K's. */
void iq4_xs_fill(void *dst, size_t nb, float std, uint64_t *s)
{
	struct block_iq4_xs *b = dst;

	for (size_t i = 0; i < nb; i++) {
		b[i].scales_h = 0;
		memset(b[i].scales_l, 0, sizeof b[i].scales_l);
		for (int j = 0; j < QK_K / 32; j++) {
			int l = q_rng_next(s) & 1 ? q_rng_int(s, 40, 63) : q_rng_int(s, 1, 24);
			b[i].scales_l[j / 2] |= (uint8_t)((l & 0xf) << (4 * (j % 2)));
			b[i].scales_h |= (uint16_t)((l >> 4) << (2 * j));
		}
		b[i].d = q_rng_scale(s, std / (20.7f * IQ4NL_RMS));
		q_rng_bytes(s, b[i].qs, sizeof b[i].qs);
	}
}
