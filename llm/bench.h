/*
 * llm/bench.h — measurements behind `llmctl bench`: memory read bandwidth
 * and matmul throughput per quant type (SIMD rows against scalar rows).
 * The model benchmark (pp/tg tok/s) is in shell/cmd_bench.c on top of these.
 */
#ifndef LLM_BENCH_H
#define LLM_BENCH_H

#include "matmul.h"

/*
 * Read bandwidth: `threads` workers each sum their share of a buffer
 * (allocated from mem, BENCH_PROBE_BYTES when memory allows, else
 * BENCH_PROBE_MIN), repeated for at least min_ns; the best pass counts.
 * *gbs in 1e9 bytes/s. The buffer must dwarf the last-level cache: a 32 MiB
 * victim L3 (an EPYC host here) kept enough of a 256 MiB buffer between
 * passes to read it faster than 1 or 2 GiB, which read alike (docs/perf.md,
 * "Read probe"); under
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

#endif
