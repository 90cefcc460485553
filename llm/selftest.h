/*
 * llm/selftest.h — the SIMD rows against the scalar rows, on this machine.
 *
 * The same checks run in tests/unit/test_simd.c (host, and aarch64 under
 * qemu-user) and in `llmctl selftest` on whatever machine llmk booted on.
 */
#ifndef LLM_SELFTEST_H
#define LLM_SELFTEST_H

#include "quant.h"

struct selftest_type {
	uint32_t type;
	const char *impl;     /* the selected row's impl */
	uint32_t checks;      /* comparisons made */
	uint32_t failures;
	float worst;          /* largest |simd - scalar| / bound seen (< 1 passes) */
};

struct selftest_report {
	struct selftest_type types[GGML_TYPE_COUNT];
	uint32_t n_types;
	uint32_t checks, failures;
};

/*
 * Compare qt's row of each type (quant_table_get; quant_cpu() for this
 * machine's) with quant_scalar(t), for every weight type (quant_is_weight)
 * and its activation type: vec_dot on random, all-zero, extreme (every
 * quant bit set, 0x80 bytes) and subnormal-scale blocks, at several
 * lengths; from_float and to_float byte for byte; the tiles and packed
 * forms against vec_dot. Bounds: the quantizers and to_float must be exact;
 * vec_dot, whose block sums are exact integers but whose float accumulation
 * runs in another order, must satisfy
 *     |simd - scalar| <= (n / 32 + 16) * 2^-22 * (sum |w_k a_k| + max|w| sum |a_k|)
 * with w, a the dequantized weights and activations; a row's gemm must give
 * its vec_dot's bits exactly. Each failure is printed
 * as one line when verbose. Returns 0, -LLMK_ENOMEM, or -LLMK_EFORMAT if any
 * check failed (details in *r).
 */
int selftest_quant(struct selftest_report *r, const struct quant_table *qt, uint64_t seed,
		   bool verbose);

#endif
