/*
 * llm/kernels/scalar/q_legacy.c — the 32-element block types: Q4_0, Q4_1,
 * Q5_0, Q5_1, Q8_0, and the activation types Q8_0 and Q8_1.
 *
 * Element order (ggml): in a 4-bit block, element j (< 16) is the low nibble
 * of qs[j] and element j + 16 the high nibble; the 5-bit types take bit 4 of
 * element j from bit j of qh read as a little-endian u32.
 */
#include "scalar.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Unsigned 4- or 5-bit quants of one block, in element order. */
static void unpack4(const uint8_t *qs, uint8_t q[32])
{
	for (int j = 0; j < 16; j++) {
		q[j] = qs[j] & 0xf;
		q[j + 16] = qs[j] >> 4;
	}
}

static void unpack5(const uint8_t *qs, const uint8_t *qh, uint8_t q[32])
{
	uint32_t h = le32(qh);

	unpack4(qs, q);
	for (int j = 0; j < 32; j++)
		q[j] |= ((h >> j) & 1) << 4;
}

/* ggml: y = (q - 8) * d, the integer converted first. */
void q4_0_to_float(const void *src, float *dst, size_t n)
{
	const struct block_q4_0 *b = src;
	uint8_t q[32];

	for (size_t i = 0; i < n / QK4_0; i++, dst += QK4_0) {
		float d = q_f16(b[i].d);
		unpack4(b[i].qs, q);
		for (int j = 0; j < 32; j++)
			dst[j] = (float)(q[j] - 8) * d;
	}
}

void q4_1_to_float(const void *src, float *dst, size_t n)
{
	const struct block_q4_1 *b = src;
	uint8_t q[32];

	for (size_t i = 0; i < n / QK4_1; i++, dst += QK4_1) {
		float d = q_f16(b[i].d), m = q_f16(b[i].m);
		unpack4(b[i].qs, q);
		for (int j = 0; j < 32; j++)
			dst[j] = (float)q[j] * d + m;
	}
}

void q5_0_to_float(const void *src, float *dst, size_t n)
{
	const struct block_q5_0 *b = src;
	uint8_t q[32];

	for (size_t i = 0; i < n / QK5_0; i++, dst += QK5_0) {
		float d = q_f16(b[i].d);
		unpack5(b[i].qs, b[i].qh, q);
		for (int j = 0; j < 32; j++)
			dst[j] = (float)(q[j] - 16) * d;
	}
}

void q5_1_to_float(const void *src, float *dst, size_t n)
{
	const struct block_q5_1 *b = src;
	uint8_t q[32];

	for (size_t i = 0; i < n / QK5_1; i++, dst += QK5_1) {
		float d = q_f16(b[i].d), m = q_f16(b[i].m);
		unpack5(b[i].qs, b[i].qh, q);
		for (int j = 0; j < 32; j++)
			dst[j] = (float)q[j] * d + m;
	}
}

void q8_0_to_float(const void *src, float *dst, size_t n)
{
	const struct block_q8_0 *b = src;

	for (size_t i = 0; i < n / QK8_0; i++, dst += QK8_0) {
		float d = q_f16(b[i].d);
		for (int j = 0; j < 32; j++)
			dst[j] = (float)b[i].qs[j] * d;
	}
}

void q8_1_to_float(const void *src, float *dst, size_t n)
{
	const struct block_q8_1 *b = src;

	for (size_t i = 0; i < n / QK8_1; i++, dst += QK8_1) {
		float d = q_f16(b[i].d);
		for (int j = 0; j < 32; j++)
			dst[j] = (float)b[i].qs[j] * d;
	}
}

/* Symmetric 8-bit: d = max|x| / 127, q = round(x / d). Returns d (as float,
 * before its f16 rounding; the quants are computed with it, like ggml). */
static float quant8(const float *x, int8_t *q)
{
	float amax = 0, d, id;

	for (int j = 0; j < 32; j++)
		if (q_fabs(x[j]) > amax)
			amax = q_fabs(x[j]);
	d = amax / 127.0f;
	id = d != 0.0f ? 1.0f / d : 0.0f;
	for (int j = 0; j < 32; j++)
		q[j] = (int8_t)q_round(x[j] * id);
	return d;
}

void q8_0_from_float(const float *src, void *dst, size_t n)
{
	struct block_q8_0 *b = dst;

	for (size_t i = 0; i < n / QK8_0; i++, src += QK8_0)
		b[i].d = q_f32_to_f16(quant8(src, b[i].qs));
}

void q8_1_from_float(const float *src, void *dst, size_t n)
{
	struct block_q8_1 *b = dst;

	for (size_t i = 0; i < n / QK8_1; i++, src += QK8_1) {
		float d = quant8(src, b[i].qs);
		int sum = 0;
		for (int j = 0; j < 32; j++)
			sum += b[i].qs[j];
		b[i].d = q_f32_to_f16(d);
		b[i].s = q_f32_to_f16((float)sum * d);
	}
}

static int dot32(const int8_t *a, const uint8_t *q, int offset)
{
	int s = 0;

	for (int j = 0; j < 32; j++)
		s += (q[j] - offset) * a[j];
	return s;
}

float q4_0_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q4_0 *x = w;
	const struct block_q8_0 *y = act;
	uint8_t q[32];
	float sum = 0;

	for (size_t i = 0; i < n / QK4_0; i++) {
		unpack4(x[i].qs, q);
		sum += (float)dot32(y[i].qs, q, 8) * (q_f16(x[i].d) * q_f16(y[i].d));
	}
	return sum;
}

/* With a min: sum((q d + m) a_q d_a) = d d_a sum(q a_q) + m s, s = d_a sum(a_q). */
float q4_1_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q4_1 *x = w;
	const struct block_q8_1 *y = act;
	uint8_t q[32];
	float sum = 0;

	for (size_t i = 0; i < n / QK4_1; i++) {
		unpack4(x[i].qs, q);
		sum += (float)dot32(y[i].qs, q, 0) * (q_f16(x[i].d) * q_f16(y[i].d)) +
		       q_f16(x[i].m) * q_f16(y[i].s);
	}
	return sum;
}

float q5_0_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q5_0 *x = w;
	const struct block_q8_0 *y = act;
	uint8_t q[32];
	float sum = 0;

	for (size_t i = 0; i < n / QK5_0; i++) {
		unpack5(x[i].qs, x[i].qh, q);
		sum += (float)dot32(y[i].qs, q, 16) * (q_f16(x[i].d) * q_f16(y[i].d));
	}
	return sum;
}

float q5_1_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q5_1 *x = w;
	const struct block_q8_1 *y = act;
	uint8_t q[32];
	float sum = 0;

	for (size_t i = 0; i < n / QK5_1; i++) {
		unpack5(x[i].qs, x[i].qh, q);
		sum += (float)dot32(y[i].qs, q, 0) * (q_f16(x[i].d) * q_f16(y[i].d)) +
		       q_f16(x[i].m) * q_f16(y[i].s);
	}
	return sum;
}

float q8_0_vec_dot(size_t n, const void *w, const void *act)
{
	const struct block_q8_0 *x = w, *y = act;
	float sum = 0;

	for (size_t i = 0; i < n / QK8_0; i++) {
		int s = 0;
		for (int j = 0; j < 32; j++)
			s += x[i].qs[j] * y[i].qs[j];
		sum += (float)s * (q_f16(x[i].d) * q_f16(y[i].d));
	}
	return sum;
}

/* ---- random blocks (quant_fill_random) ---- */

void q4_0_fill(void *dst, size_t nb, float std, uint64_t *s)
{
	struct block_q4_0 *b = dst;

	for (size_t i = 0; i < nb; i++) {
		b[i].d = q_rng_sscale(s, std * Q_SQRT12 / 16);
		q_rng_bytes(s, b[i].qs, sizeof b[i].qs);
	}
}

void q4_1_fill(void *dst, size_t nb, float std, uint64_t *s)
{
	struct block_q4_1 *b = dst;
	float d = std * Q_SQRT12 / 16;

	for (size_t i = 0; i < nb; i++) {
		b[i].d = q_rng_scale(s, d);
		b[i].m = q_f32_to_f16(-7.5f * d * (0.9f + 0.2f * q_rng_unit(s)));
		q_rng_bytes(s, b[i].qs, sizeof b[i].qs);
	}
}

void q5_0_fill(void *dst, size_t nb, float std, uint64_t *s)
{
	struct block_q5_0 *b = dst;

	for (size_t i = 0; i < nb; i++) {
		b[i].d = q_rng_sscale(s, std * Q_SQRT12 / 32);
		q_rng_bytes(s, b[i].qh, sizeof b[i].qh);
		q_rng_bytes(s, b[i].qs, sizeof b[i].qs);
	}
}

void q5_1_fill(void *dst, size_t nb, float std, uint64_t *s)
{
	struct block_q5_1 *b = dst;
	float d = std * Q_SQRT12 / 32;

	for (size_t i = 0; i < nb; i++) {
		b[i].d = q_rng_scale(s, d);
		b[i].m = q_f32_to_f16(-15.5f * d * (0.9f + 0.2f * q_rng_unit(s)));
		q_rng_bytes(s, b[i].qh, sizeof b[i].qh);
		q_rng_bytes(s, b[i].qs, sizeof b[i].qs);
	}
}

/* quants in -127..127, as the quantizer writes them */
void q8_0_fill(void *dst, size_t nb, float std, uint64_t *s)
{
	struct block_q8_0 *b = dst;

	for (size_t i = 0; i < nb; i++) {
		b[i].d = q_rng_sscale(s, std * Q_SQRT12 / 255);
		q_rng_bytes(s, (uint8_t *)b[i].qs, sizeof b[i].qs);
		for (int j = 0; j < QK8_0; j++)
			if (b[i].qs[j] == -128)
				b[i].qs[j] = -127;
	}
}
