/*
 * llm/vmath.h — the engine's vector loops outside the matmuls: exp over an
 * array, SwiGLU, and the attention inner loops.
 *
 * One source (llm/vmath_impl.inc, GCC vector extensions of 16 floats)
 * compiled twice: for the baseline target (llm/vmath.c) and with AVX-512
 * (llm/kernels/avx512/vmath.c, and with AVX2 in llm/kernels/avx2/vmath.c);
 * vmath_get() picks one from the CPU features. Vector-extension arithmetic is lane-wise IEEE with no
 * reassociation (-ffp-contract=off everywhere), so both give the very bits
 * of the scalar code they replace (math_expf, the scalar attention loops):
 * tests/unit/test_math.c checks it.
 */
#ifndef LLM_VMATH_H
#define LLM_VMATH_H

#include "../kernel/platform.h"

#define VM_ATT_LD 64 /* the transposed K tile's row length (positions) */
#define VM_ATT_HEADS 8 /* heads the attention ops run side by side */

struct vmath_ops {
	const char *impl;
	/* y[i] = math_expf(x[i]) */
	void (*expf_n)(float *y, const float *x, size_t n);
	/* h[i] = h[i] / (1 + math_expf(-h[i])) * h2[i] */
	void (*swiglu)(float *h, const float *h2, size_t n);
	/* For each head h < nh (one KV head's group of queries, which share
	 * the K tile): sc[h * ldsc + t] = (sum_i q[h * ldq + i] kT[i *
	 * VM_ATT_LD + t], summed in i order) * scale, t < nt <= VM_ATT_LD (kT:
	 * hd rows of VM_ATT_LD positions); mx[h] = the largest of the head's
	 * nt scores, -1e30f if none is larger (NaN never counts). The lanes
	 * of sc from nt up to the next multiple of 16 may be written too. */
	void (*att_scores)(float *sc, size_t ldsc, float *mx, const float *q, size_t ldq,
			   uint32_t nh, const float *kT, uint32_t nt, uint32_t hd, float scale);
	/* For each head h < nh: o[h * ldo + i] += w[h * ldw + t] v[t * hd + i]
	 * for t = 0, 1, .. nt - 1 in turn */
	void (*att_accum)(float *o, size_t ldo, const float *v, const float *w, size_t ldw,
			  uint32_t nh, uint32_t nt, uint32_t hd);
	/* kT[i * VM_ATT_LD + t] = kt[t * hd + i], t < nt <= VM_ATT_LD, i < hd (K
	 * tile rows to the positions-as-lanes layout att_scores reads; lanes
	 * from nt up to the next 16 may be written too) */
	void (*att_transpose)(float *kT, const float *kt, uint32_t nt, uint32_t hd);
};

/* The fastest build of the ops these CPU features run (never NULL: the
 * baseline build runs everywhere). A pure function of its argument: the
 * caller keeps the answer (struct model_scratch). */
const struct vmath_ops *vmath_get(uint32_t cpu_features);
/* The baseline build of the ops (always available; tests compare against it). */
extern const struct vmath_ops vmath_generic;
#if defined(__x86_64__)
/* Each SIMD build's own answer (llm/kernels/<isa>/vmath.c): its ops, or
 * NULL when the features lack what it was compiled for. */
const struct vmath_ops *vmath_avx512_get(uint32_t cpu_features);
const struct vmath_ops *vmath_avx2_get(uint32_t cpu_features);
#endif

#endif
