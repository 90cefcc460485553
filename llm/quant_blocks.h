/*
 * llm/quant_blocks.h — the GGUF tensor type ids, and the block layouts of
 * the types we compute with.
 *
 * Byte for byte the layouts of ggml (ggml-common.h, block_*): a tensor row of
 * type T is an array of these blocks, stored little-endian in the file. Half
 * floats are raw uint16_t bits (quant_f16_to_f32). Every struct has a size
 * assertion: a padding byte would silently misread every block after it.
 */
#ifndef LLM_QUANT_BLOCKS_H
#define LLM_QUANT_BLOCKS_H

#include "../kernel/platform.h"

/* ggml.h enum ggml_type, as stored in GGUF tensor infos: every value, those
 * we compute with or not (the gaps are ids ggml removed). */
enum ggml_type {
	GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1, GGML_TYPE_Q4_0 = 2, GGML_TYPE_Q4_1 = 3,
	GGML_TYPE_Q5_0 = 6, GGML_TYPE_Q5_1 = 7, GGML_TYPE_Q8_0 = 8, GGML_TYPE_Q8_1 = 9,
	GGML_TYPE_Q2_K = 10, GGML_TYPE_Q3_K = 11, GGML_TYPE_Q4_K = 12, GGML_TYPE_Q5_K = 13,
	GGML_TYPE_Q6_K = 14, GGML_TYPE_Q8_K = 15, GGML_TYPE_IQ2_XXS = 16, GGML_TYPE_IQ2_XS = 17,
	GGML_TYPE_IQ3_XXS = 18, GGML_TYPE_IQ1_S = 19, GGML_TYPE_IQ4_NL = 20, GGML_TYPE_IQ3_S = 21,
	GGML_TYPE_IQ2_S = 22, GGML_TYPE_IQ4_XS = 23, GGML_TYPE_I8 = 24, GGML_TYPE_I16 = 25,
	GGML_TYPE_I32 = 26, GGML_TYPE_I64 = 27, GGML_TYPE_F64 = 28, GGML_TYPE_IQ1_M = 29,
	GGML_TYPE_BF16 = 30, GGML_TYPE_TQ1_0 = 34, GGML_TYPE_TQ2_0 = 35, GGML_TYPE_MXFP4 = 39,
	GGML_TYPE_COUNT = 40
};

#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK8_1 32
#define QK4_NL 32
#define QK_K 256          /* K-quant super-block */
#define K_SCALE_SIZE 12   /* Q4_K/Q5_K: 8 scales + 8 mins, 6 bits each */

/* x = d * (q - 8), q in 0..15; element j in the low nibble of qs[j], j+16 in the high. */
struct block_q4_0 {
	uint16_t d;
	uint8_t qs[QK4_0 / 2];
};
_Static_assert(sizeof(struct block_q4_0) == 18, "block_q4_0 size");

/* x = d * q + m, q in 0..15. */
struct block_q4_1 {
	uint16_t d;
	uint16_t m;
	uint8_t qs[QK4_1 / 2];
};
_Static_assert(sizeof(struct block_q4_1) == 20, "block_q4_1 size");

/* x = d * (q - 16), q in 0..31; bit 4 of element j is bit j of qh (LE u32). */
struct block_q5_0 {
	uint16_t d;
	uint8_t qh[4];
	uint8_t qs[QK5_0 / 2];
};
_Static_assert(sizeof(struct block_q5_0) == 22, "block_q5_0 size");

/* x = d * q + m, q in 0..31. */
struct block_q5_1 {
	uint16_t d;
	uint16_t m;
	uint8_t qh[4];
	uint8_t qs[QK5_1 / 2];
};
_Static_assert(sizeof(struct block_q5_1) == 24, "block_q5_1 size");

/* x = d * q, q in -127..127 (weights and activations). */
struct block_q8_0 {
	uint16_t d;
	int8_t qs[QK8_0];
};
_Static_assert(sizeof(struct block_q8_0) == 34, "block_q8_0 size");

/* Activations for Q4_1/Q5_1: s = d * sum(qs) carries the mins' contribution. */
struct block_q8_1 {
	uint16_t d;
	uint16_t s;
	int8_t qs[QK8_1];
};
_Static_assert(sizeof(struct block_q8_1) == 36, "block_q8_1 size");

/* 16 sub-blocks of 16: x = d * (scales[i] & 15) * q - dmin * (scales[i] >> 4), q in 0..3. */
struct block_q2_K {
	uint8_t scales[QK_K / 16];
	uint8_t qs[QK_K / 4];
	uint16_t d;
	uint16_t dmin;
};
_Static_assert(sizeof(struct block_q2_K) == 84, "block_q2_K size");

/* 16 sub-blocks of 16: x = d * (s - 32) * (q - 4); 6-bit scales s packed in 12 bytes,
 * the third bit of q in hmask (set = no -4 offset). */
struct block_q3_K {
	uint8_t hmask[QK_K / 8];
	uint8_t qs[QK_K / 4];
	uint8_t scales[12];
	uint16_t d;
};
_Static_assert(sizeof(struct block_q3_K) == 110, "block_q3_K size");

/* 8 sub-blocks of 32: x = d * sc * q - dmin * m; 6-bit sc, m packed in scales. */
struct block_q4_K {
	uint16_t d;
	uint16_t dmin;
	uint8_t scales[K_SCALE_SIZE];
	uint8_t qs[QK_K / 2];
};
_Static_assert(sizeof(struct block_q4_K) == 144, "block_q4_K size");

/* As Q4_K with a fifth bit per element in qh. */
struct block_q5_K {
	uint16_t d;
	uint16_t dmin;
	uint8_t scales[K_SCALE_SIZE];
	uint8_t qh[QK_K / 8];
	uint8_t qs[QK_K / 2];
};
_Static_assert(sizeof(struct block_q5_K) == 176, "block_q5_K size");

/* 16 sub-blocks of 16: x = d * scales[i] * (q - 32), q in 0..63 (4 low bits in ql,
 * 2 high bits in qh). */
struct block_q6_K {
	uint8_t ql[QK_K / 2];
	uint8_t qh[QK_K / 4];
	int8_t scales[QK_K / 16];
	uint16_t d;
};
_Static_assert(sizeof(struct block_q6_K) == 210, "block_q6_K size");

/* x = d * kvalues_iq4nl[q], q in 0..15 (the non-linear table, q_iq4nl_values);
 * nibble order as Q4_0. */
struct block_iq4_nl {
	uint16_t d;
	uint8_t qs[QK4_NL / 2];
};
_Static_assert(sizeof(struct block_iq4_nl) == 18, "block_iq4_nl size");

/* 8 sub-blocks of 32: x = d * (ls - 32) * kvalues_iq4nl[q]; 6-bit ls, low 4 bits
 * in nibble s % 2 of scales_l[s / 2], high 2 bits at bit 2 s of scales_h; each
 * sub-block's quants as an IQ4_NL block's qs. */
struct block_iq4_xs {
	uint16_t d;
	uint16_t scales_h;
	uint8_t scales_l[QK_K / 64];
	uint8_t qs[QK_K / 2];
};
_Static_assert(sizeof(struct block_iq4_xs) == 136, "block_iq4_xs size");

/* Activations for the K-quants: float scale, and sums of each 16 quants so the
 * weights' mins cost one multiply per sub-block. */
struct block_q8_K {
	float d;
	int8_t qs[QK_K];
	int16_t bsums[QK_K / 16];
};
_Static_assert(sizeof(struct block_q8_K) == 292, "block_q8_K size");

#endif
