/*
 * llm/matmul.h — weight x activation products, spread over the worker pool.
 *
 * Decode (B == 1) is a matrix-vector product that streams each weight row once;
 * prefill (B > 1) is a matrix-matrix product that reuses each weight block
 * across many activation rows. Activations are converted once per call to the
 * weight type's act_type (llm/quant.h), then vec_dot / gemm rows do the work.
 */
#ifndef LLM_MATMUL_H
#define LLM_MATMUL_H

#include "mem.h"
#include "quant.h"

struct mm_ctx {
	int n_threads;         /* workers used by plat_parallel (>= 1) */
	/* The quant table the products dispatch through: mm_init sets this
	 * CPU's (quant_cpu()); a test may point it at one built for fewer
	 * features. Packed weights must come from the same table. */
	const struct quant_table *qt;
	bool scalar;           /* force the scalar reference rows (tests, bench) */
	struct llm_mem *mem;   /* scratch for converted activations comes from here */
	void *act;             /* scratch */
	size_t act_cap;
	/* The weights of the product after the next call (mm_prefetch_next). */
	const void *next_w;
	size_t next_bytes;
};

int mm_init(struct mm_ctx *c, struct llm_mem *mem, int n_threads);
/* The most scratch mm_matmul takes for K-wide inputs in batches of B with
 * n_threads workers (activation copy, tile prep, per-worker tile scratch). */
uint64_t mm_scratch_bytes(size_t K, size_t B, int n_threads);
void mm_free(struct mm_ctx *c);
/* Zeroize the scratch (converted activations of the last product). */
void mm_zeroize(struct mm_ctx *c);

/*
 * out[b*M + i] = sum_k W[i][k] * x[b*K + k]   for b < B, i < M.
 * W: M rows of K elements of type wtype, row stride quant_row_bytes(wtype, K).
 * K must be a multiple of the type's block size. Returns 0 or -LLMK_E*.
 */
int mm_matmul(struct mm_ctx *c, float *out, const void *w, uint32_t wtype,
	      size_t M, size_t K, const float *x, size_t B);
/* The same product with W packed (quant_isa.h struct quant_packed; M % 16
 * == 0, quant_table_can_pack()): the type's packed tile for every batch,
 * or, with the scalar rows forced, each group unpacked into the worker's
 * scratch first. -LLMK_EINVAL when the type has no packed form in c->qt. */
int mm_matmul_packed(struct mm_ctx *c, float *out, const void *w, uint32_t wtype,
		     size_t M, size_t K, const float *x, size_t B);
/* n (<= MM_MAX_PARTS) products of one input in one call: out[p] = W_p x,
 * W_p with M[p] rows, every W_p of type wtype, K wide, packed or not. The
 * input is converted once and the workers claim tiles over all the parts in
 * turn, so a small matrix's tail overlaps the next one's start (attention's
 * Q, K and V; the feed-forward's gate and up). Each part gets the bits its
 * own mm_matmul / mm_matmul_packed would give. -LLMK_EINVAL when the parts
 * would not take the same path (quant_table_can_pack differs between them). */
#define MM_MAX_PARTS 3
int mm_matmul_n(struct mm_ctx *c, int n, float *const out[], const void *const w[],
		const size_t M[], uint32_t wtype, bool packed, size_t K, const float *x, size_t B);

/* Names the weights the product after the next one will read: in decode, a
 * worker that runs out of tiles while the others finish theirs prefetches
 * them instead of waiting with the memory bus idle. Only a hint, used by the
 * next call and then dropped; w must stay valid until that call returns. */
void mm_prefetch_next(struct mm_ctx *c, const void *w, size_t bytes);

#endif
