/*
 * llm/kernels/scalar/tile_prep.c — the prep rows of the prefill tiles (the
 * tile contract in llm/quant_isa.h), shared by every ISA's tiles: per activation
 * row, a pair of floats per weight sub-block of G elements: the activation
 * scale da, then either -o * sa as an int32 (o the weight type's zero point,
 * sa the sum of the sub-block's activation quants: the tiles start each
 * sub-block's integer sum from it) or, for types with mins, sa as a float.
 * Q8_0 da is per block of 32; Q8_K da is per superblock (the tiles apply it
 * once per superblock).
 */
#include "scalar.h"

static inline void prep_put(float *o, float da, int sa, int off)
{
	o[0] = da;
	if (off) {
		int32_t v = -off * sa;
		memcpy(&o[1], &v, sizeof v);
	} else {
		o[1] = (float)sa;
	}
}

static void prep_q8_0(size_t n, const void *act, float *prep, int off)
{
	const struct block_q8_0 *b = act;

	for (size_t i = 0; i < n / QK8_0; i++) {
		int s = 0;
		for (int k = 0; k < QK8_0; k++)
			s += b[i].qs[k];
		prep_put(prep + 2 * i, q_f16(b[i].d), s, off);
	}
}

/* Q8_K: each sub-block of G = 16 or 32 from the 16-quant bsums */
static void prep_q8_K(size_t n, const void *act, float *prep, int G, int off)
{
	const struct block_q8_K *b = act;

	for (size_t i = 0; i < n / QK_K; i++)
		for (int s = 0; s < QK_K / G; s++) {
			int sum = 0;
			for (int k = 0; k < G / 16; k++)
				sum += b[i].bsums[s * (G / 16) + k];
			prep_put(prep + 2 * (i * (size_t)(QK_K / G) + (size_t)s), b[i].d, sum, off);
		}
}

void tile_prep_q4_0(size_t n, const void *act, float *prep)
{
	prep_q8_0(n, act, prep, 8);
}

void tile_prep_q8_0(size_t n, const void *act, float *prep)
{
	prep_q8_0(n, act, prep, 128);
}

void tile_prep_kmins32(size_t n, const void *act, float *prep)
{
	prep_q8_K(n, act, prep, 32, 0);
}

void tile_prep_kmins16(size_t n, const void *act, float *prep)
{
	prep_q8_K(n, act, prep, 16, 0);
}

void tile_prep_q6_K(size_t n, const void *act, float *prep)
{
	prep_q8_K(n, act, prep, 16, 32);
}

void tile_prep_q3_K(size_t n, const void *act, float *prep)
{
	prep_q8_K(n, act, prep, 16, 4);
}
