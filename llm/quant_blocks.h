/*
 * llm/quant_blocks.h — the GGUF tensor types (ids, names, block geometry:
 * the one table of it), and the block layouts of the types we compute with.
 *
 * Byte for byte the layouts of ggml (ggml-common.h, block_*): a tensor row of
 * type T is an array of these blocks, stored little-endian in the file. Half
 * floats are raw uint16_t bits (quant_f16_to_f32). Every struct has a size
 * assertion: a padding byte would silently misread every block after it.
 */
#ifndef LLM_QUANT_BLOCKS_H
#define LLM_QUANT_BLOCKS_H

#include "../kernel/platform.h"

/*
 * The one table of ggml's tensor types (ggml.h enum ggml_type, ggml.c
 * type_traits: blck_size, type_size), as stored in GGUF tensor infos: every
 * value, those we compute with or not (the gaps are ids ggml removed), so
 * that a file with e.g. IQ2_XXS tensors still parses and the loader can
 * refuse it by name. X(name, id, elements per block, bytes per block).
 * gguf.c answers gguf_type_geometry/gguf_type_name from it; quant.c's rows
 * and the block structs below take their sizes from it.
 */
#define GGML_TYPES(X) \
	X(F32, 0, 1, 4) \
	X(F16, 1, 1, 2) \
	X(Q4_0, 2, 32, 18) \
	X(Q4_1, 3, 32, 20) \
	X(Q5_0, 6, 32, 22) \
	X(Q5_1, 7, 32, 24) \
	X(Q8_0, 8, 32, 34) \
	X(Q8_1, 9, 32, 36) \
	X(Q2_K, 10, 256, 84) \
	X(Q3_K, 11, 256, 110) \
	X(Q4_K, 12, 256, 144) \
	X(Q5_K, 13, 256, 176) \
	X(Q6_K, 14, 256, 210) \
	X(Q8_K, 15, 256, 292) \
	X(IQ2_XXS, 16, 256, 66) \
	X(IQ2_XS, 17, 256, 74) \
	X(IQ3_XXS, 18, 256, 98) \
	X(IQ1_S, 19, 256, 50) \
	X(IQ4_NL, 20, 32, 18) \
	X(IQ3_S, 21, 256, 110) \
	X(IQ2_S, 22, 256, 82) \
	X(IQ4_XS, 23, 256, 136) \
	X(I8, 24, 1, 1) \
	X(I16, 25, 1, 2) \
	X(I32, 26, 1, 4) \
	X(I64, 27, 1, 8) \
	X(F64, 28, 1, 8) \
	X(IQ1_M, 29, 256, 56) \
	X(BF16, 30, 1, 2) \
	X(TQ1_0, 34, 256, 54) \
	X(TQ2_0, 35, 256, 66) \
	X(MXFP4, 39, 32, 17)

#define GGML_TYPE_ENUM_(T, id, b, n) GGML_TYPE_##T = id,
enum ggml_type { GGML_TYPES(GGML_TYPE_ENUM_) GGML_TYPE_COUNT = 40 };
#define GGML_TYPE_GEOM_(T, id, b, n) GGML_BLCK_##T = b, GGML_BYTES_##T = n,
enum ggml_type_geometry { GGML_TYPES(GGML_TYPE_GEOM_) };

#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK8_1 32
#define QK4_NL 32
#define QK_K 256          /* K-quant super-block */
#define K_SCALE_SIZE 12   /* Q4_K/Q5_K: 8 scales + 8 mins, 6 bits each */
_Static_assert(QK4_0 == GGML_BLCK_Q4_0 && QK4_1 == GGML_BLCK_Q4_1 && QK5_0 == GGML_BLCK_Q5_0 &&
		       QK5_1 == GGML_BLCK_Q5_1 && QK8_0 == GGML_BLCK_Q8_0 && QK8_1 == GGML_BLCK_Q8_1 &&
		       QK4_NL == GGML_BLCK_IQ4_NL && QK_K == GGML_BLCK_Q4_K,
	       "block lengths as GGML_TYPES");

/* x = d * (q - 8), q in 0..15; element j in the low nibble of qs[j], j+16 in the high. */
struct block_q4_0 {
	uint16_t d;
	uint8_t qs[QK4_0 / 2];
};
_Static_assert(sizeof(struct block_q4_0) == GGML_BYTES_Q4_0, "block_q4_0 size");

/* x = d * q + m, q in 0..15. */
struct block_q4_1 {
	uint16_t d;
	uint16_t m;
	uint8_t qs[QK4_1 / 2];
};
_Static_assert(sizeof(struct block_q4_1) == GGML_BYTES_Q4_1, "block_q4_1 size");

/* x = d * (q - 16), q in 0..31; bit 4 of element j is bit j of qh (LE u32). */
struct block_q5_0 {
	uint16_t d;
	uint8_t qh[4];
	uint8_t qs[QK5_0 / 2];
};
_Static_assert(sizeof(struct block_q5_0) == GGML_BYTES_Q5_0, "block_q5_0 size");

/* x = d * q + m, q in 0..31. */
struct block_q5_1 {
	uint16_t d;
	uint16_t m;
	uint8_t qh[4];
	uint8_t qs[QK5_1 / 2];
};
_Static_assert(sizeof(struct block_q5_1) == GGML_BYTES_Q5_1, "block_q5_1 size");

/* x = d * q, q in -127..127 (weights and activations). */
struct block_q8_0 {
	uint16_t d;
	int8_t qs[QK8_0];
};
_Static_assert(sizeof(struct block_q8_0) == GGML_BYTES_Q8_0, "block_q8_0 size");

/* Activations for Q4_1/Q5_1: s = d * sum(qs) carries the mins' contribution. */
struct block_q8_1 {
	uint16_t d;
	uint16_t s;
	int8_t qs[QK8_1];
};
_Static_assert(sizeof(struct block_q8_1) == GGML_BYTES_Q8_1, "block_q8_1 size");

/* 16 sub-blocks of 16: x = d * (scales[i] & 15) * q - dmin * (scales[i] >> 4), q in 0..3. */
struct block_q2_K {
	uint8_t scales[QK_K / 16];
	uint8_t qs[QK_K / 4];
	uint16_t d;
	uint16_t dmin;
};
_Static_assert(sizeof(struct block_q2_K) == GGML_BYTES_Q2_K, "block_q2_K size");

/* 16 sub-blocks of 16: x = d * (s - 32) * (q - 4); 6-bit scales s packed in 12 bytes,
 * the third bit of q in hmask (set = no -4 offset). */
struct block_q3_K {
	uint8_t hmask[QK_K / 8];
	uint8_t qs[QK_K / 4];
	uint8_t scales[12];
	uint16_t d;
};
_Static_assert(sizeof(struct block_q3_K) == GGML_BYTES_Q3_K, "block_q3_K size");

/* 8 sub-blocks of 32: x = d * sc * q - dmin * m; 6-bit sc, m packed in scales. */
struct block_q4_K {
	uint16_t d;
	uint16_t dmin;
	uint8_t scales[K_SCALE_SIZE];
	uint8_t qs[QK_K / 2];
};
_Static_assert(sizeof(struct block_q4_K) == GGML_BYTES_Q4_K, "block_q4_K size");

/* As Q4_K with a fifth bit per element in qh. */
struct block_q5_K {
	uint16_t d;
	uint16_t dmin;
	uint8_t scales[K_SCALE_SIZE];
	uint8_t qh[QK_K / 8];
	uint8_t qs[QK_K / 2];
};
_Static_assert(sizeof(struct block_q5_K) == GGML_BYTES_Q5_K, "block_q5_K size");

/* 16 sub-blocks of 16: x = d * scales[i] * (q - 32), q in 0..63 (4 low bits in ql,
 * 2 high bits in qh). */
struct block_q6_K {
	uint8_t ql[QK_K / 2];
	uint8_t qh[QK_K / 4];
	int8_t scales[QK_K / 16];
	uint16_t d;
};
_Static_assert(sizeof(struct block_q6_K) == GGML_BYTES_Q6_K, "block_q6_K size");

/* x = d * kvalues_iq4nl[q], q in 0..15 (the non-linear table, q_iq4nl_values);
 * nibble order as Q4_0. */
struct block_iq4_nl {
	uint16_t d;
	uint8_t qs[QK4_NL / 2];
};
_Static_assert(sizeof(struct block_iq4_nl) == GGML_BYTES_IQ4_NL, "block_iq4_nl size");

/* 8 sub-blocks of 32: x = d * (ls - 32) * kvalues_iq4nl[q]; 6-bit ls, low 4 bits
 * in nibble s % 2 of scales_l[s / 2], high 2 bits at bit 2 s of scales_h; each
 * sub-block's quants as an IQ4_NL block's qs. */
struct block_iq4_xs {
	uint16_t d;
	uint16_t scales_h;
	uint8_t scales_l[QK_K / 64];
	uint8_t qs[QK_K / 2];
};
_Static_assert(sizeof(struct block_iq4_xs) == GGML_BYTES_IQ4_XS, "block_iq4_xs size");

/* Activations for the K-quants: float scale, and sums of each 16 quants so the
 * weights' mins cost one multiply per sub-block. */
struct block_q8_K {
	float d;
	int8_t qs[QK_K];
	int16_t bsums[QK_K / 16];
};
_Static_assert(sizeof(struct block_q8_K) == GGML_BYTES_Q8_K, "block_q8_K size");

#endif
