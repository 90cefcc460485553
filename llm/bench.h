/*
 * llm/bench.h — measurements behind `llmctl bench`: memory read bandwidth,
 * matmul throughput per quant type (SIMD rows against scalar rows), and the
 * model benchmark (llama-bench's pp and tg tests on the loaded model).
 */
#ifndef LLM_BENCH_H
#define LLM_BENCH_H

#include "engine.h"
#include "matmul.h"

/*
 * Read bandwidth: `threads` workers each sum their share of a buffer
 * (allocated from mem, BENCH_PROBE_BYTES when memory allows, else
 * BENCH_PROBE_MIN), repeated for at least min_ns; the best pass counts.
 * *gbs in 1e9 bytes/s. The buffer must dwarf the last-level cache: a victim
 * L3 keeps enough of a buffer a few times its size between passes that the
 * probe overstates what memory gives (docs/perf.md, "Read probe"); under
 * emulation (plat_emulated) the smaller buffer, as time matters more there
 * than the figure.
 */
#define BENCH_PROBE_BYTES ((size_t)1 << 30)
#define BENCH_PROBE_MIN ((size_t)256 << 20)
int bench_mem_read(struct llm_mem *mem, int threads, uint64_t min_ns, double *gbs);
/* The same in two steps, to measure again and again (the model benchmark
 * probes before each repetition): a buffer (its size, page-rounded, in
 * *bytes; every page touched; free it with llm_mem_free), and one
 * measurement. */
void *bench_mem_buf(struct llm_mem *mem, size_t *bytes, int *err);
int bench_mem_read_buf(void *buf, size_t bytes, int threads, uint64_t min_ns, double *gbs);

struct bench_kernel {
	uint32_t type;
	const char *impl;       /* the selected row's impl */
	size_t tg_bytes;        /* weight bytes of the decode matrix */
	double tg_gbs[2];       /* decode (B = 1) weight GB/s: [0] selected rows, [1] scalar */
	double pp_gops[2];      /* prefill (B = pp_batch) GOP/s (2 ops per weight x token) */
	uint32_t pp_batch;
};

/*
 * Decode: an M x K matrix of about tg_bytes (K = 4096) times one vector;
 * prefill: a 512 x 4096 matrix times pp_batch vectors. Each timed for at
 * least min_ns with c's threads, once with the selected rows and once with
 * the scalar rows (c->scalar is restored). Weights from quant_fill_random.
 */
int bench_kernel_run(struct mm_ctx *c, uint32_t type, size_t tg_bytes, uint32_t pp_batch,
		     uint64_t min_ns, struct bench_kernel *r);

/* ---- the model benchmark ---- */
#define BENCH_MAX_SEQS 64    /* sequences decoding together, at most */
#define BENCH_MAX_REPS 1000

struct bench_model_opts {
	uint32_t pp;            /* prompt test: tokens in one batch (0: no prompt test) */
	uint32_t tg;            /* generation test: tokens one step at a time (0: none) */
	uint32_t reps;          /* repetitions of each test, 1..BENCH_MAX_REPS */
	uint32_t depth;         /* both tests after this many tokens in the cache */
	uint32_t batch;         /* generation: sequences decoding together (>1: no depth) */
	int threads;            /* matmul workers for the run */
	bool (*cancel)(void *ctx); /* asked before each repetition (NULL: never) */
	void *ctx;
};

struct bench_model {
	const char *name;       /* general.name, else the architecture */
	const char *quant;      /* llama.cpp's general.file_type name ("Q4_K_M") */
	const char *kernels;    /* the selected rows' implementation */
	uint64_t size;          /* weight bytes */
	uint64_t n_params;
	uint64_t token_bytes;   /* weight bytes one decode pass reads */
	double pp_mean, pp_sd;  /* tok/s over the repetitions */
	double tg_mean, tg_sd;  /* tok/s, every sequence's tokens counted */
	double eff_gbs;         /* token_bytes per pass x passes/s, in GB/s */
	double mem_gbs;         /* read bandwidth: median of the probes */
	uint64_t probe_mib;     /* the probe's buffer */
	/* tg: each repetition's effective GB/s over the probe just before it:
	 * the median and the range, as fractions */
	double frac, frac_lo, frac_hi;
};

/*
 * Random token ids (a fixed seed, as llama-bench) through the loaded model:
 * a warm-up run, then o->reps timed runs of each test, the read-bandwidth
 * probe (bench_mem_read_buf) before each generation repetition, since the
 * bandwidth drifts with other tenants. The cache no longer holds a
 * conversation afterwards. 0; -LLMK_EINVAL (no model, vocabulary only,
 * depth with batch > 1, reps out of range), -LLMK_ERANGE (depth + tokens
 * past the context, batch past BENCH_MAX_SEQS or the model's batch, or tg
 * past a sequence's share of the context), -LLMK_ENOMEM, -LLMK_ECANCEL, or
 * the forward pass's error; err says which.
 */
int bench_model_run(struct engine *e, const struct bench_model_opts *o, struct bench_model *r,
		    char *err, size_t errlen);

#endif
