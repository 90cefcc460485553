/*
 * llm/bench.c — memory bandwidth and matmul kernel measurements (bench.h).
 */
#include "bench.h"

struct bw_job {
	const uint64_t *buf;
	size_t words;
	int streams;          /* 1 or BW_STREAMS */
	int nta;              /* prefetch non-temporal (else into L2) */
	size_t ahead;         /* prefetch distance in bytes */
	uint64_t sink[64];   /* one slot per worker, 8 words apart (no false sharing) */
};

/* 16-byte vectors (GCC vector extension: SSE2 / NEON registers). */
typedef uint64_t bw_vec __attribute__((vector_size(16)));

/* Worker i sums its share as j->streams streams read side by side, one
 * 64-byte line of each per step in four independent chains of 16-byte
 * loads, so the loads, not the adds, set the pace; each step prefetches the
 * line j->ahead bytes ahead in each stream. The probe takes the better of
 * the two patterns decode reads with (llm/quant_isa.h, struct quant_tune), so
 * the figure is what the machine can read, not what a plain loop happens to
 * get: on the Xeon 4 streams with a 2 KiB prefetch into L2, on an EPYC
 * (Zen 4) one stream with a 4 KiB non-temporal prefetch read fastest, both
 * faster than the hardware prefetcher alone (docs/perf.md, "Read probe"). */
#define BW_STREAMS 4
static inline void bw_prefetch(const struct bw_job *j, const bw_vec *q)
{
	if (j->nta)
		__builtin_prefetch((const char *)q + j->ahead, 0, 0);
	else
		__builtin_prefetch((const char *)q + j->ahead, 0, 2);
}

static void bw_task(void *arg, int i, int n)
{
	struct bw_job *j = arg;
	size_t lines = j->words / 8;
	size_t l0 = lines * (size_t)i / (size_t)n, l1 = lines * (size_t)(i + 1) / (size_t)n;
	size_t per = (l1 - l0) / (size_t)j->streams;
	const bw_vec *p = (const bw_vec *)j->buf;
	bw_vec s0 = {0, 0}, s1 = s0, s2 = s0, s3 = s0;

	for (size_t k = 0; k < per; k++)
		for (int s = 0; s < j->streams; s++) {
			const bw_vec *q = p + 4 * (l0 + (size_t)s * per + k);
			bw_prefetch(j, q);
			s0 += q[0];
			s1 += q[1];
			s2 += q[2];
			s3 += q[3];
		}
	/* the lines the streams leave over, read as one */
	for (size_t k = 4 * (l0 + (size_t)j->streams * per); k < 4 * l1; k += 4) {
		s0 += p[k];
		s1 += p[k + 1];
		s2 += p[k + 2];
		s3 += p[k + 3];
	}
	s0 += s1 + s2 + s3;
	j->sink[(i & 7) * 8] = s0[0] + s0[1];
}

int bench_mem_read_buf(void *buf, size_t bytes, int threads, uint64_t min_ns, double *gbs)
{
	struct bw_job j;
	uint64_t start, best = 0;

	j.buf = buf;
	j.words = (bytes & ~(size_t)4095) / 8;
	start = plat_time_ns();
	/* the two patterns in turn, 3 passes each at least */
	for (int pass = 0; pass < 6 || plat_time_ns() - start < min_ns; pass++) {
		uint64_t t0, dt;
		j.streams = pass & 1 ? 1 : BW_STREAMS;
		j.nta = pass & 1;
		j.ahead = pass & 1 ? 4096 : 2048;
		t0 = plat_time_ns();
		plat_parallel(bw_task, &j, threads);
		dt = plat_time_ns() - t0;
		if (!best || dt < best)
			best = dt;
	}
	*gbs = (double)(j.words * 8) / (double)(best ? best : 1);
	return 0;
}

void *bench_mem_buf(struct llm_mem *mem, size_t *bytes, int *err)
{
	uint64_t *buf = NULL;
	size_t n = plat_emulated() ? BENCH_PROBE_MIN : BENCH_PROBE_BYTES;

	for (; !buf && n >= BENCH_PROBE_MIN; n /= 2) {
		*err = 0;
		buf = llm_mem_alloc(mem, n, err);
		if (buf)
			*bytes = n;
	}
	/* touch every page so the first pass measures memory, not page faults */
	for (size_t k = 0; buf && k < *bytes / 8; k += 512)
		buf[k] = k;
	return buf;
}

int bench_mem_read(struct llm_mem *mem, int threads, uint64_t min_ns, double *gbs)
{
	int err = 0;
	size_t bytes = 0;
	void *buf = bench_mem_buf(mem, &bytes, &err);

	if (!buf)
		return err ? err : -LLMK_ENOMEM;
	bench_mem_read_buf(buf, bytes, threads, min_ns, gbs);
	llm_mem_free(mem, buf, bytes);
	return 0;
}

/* Seconds per call of mm_matmul, the best of repeated calls for min_ns. */
static int bench_time(struct mm_ctx *c, float *out, const void *w, uint32_t t, size_t M,
		      size_t K, const float *x, size_t B, uint64_t min_ns, double *sec)
{
	uint64_t start = plat_time_ns(), best = 0;
	int err;

	for (int rep = 0; rep < 2 || plat_time_ns() - start < min_ns; rep++) {
		uint64_t t0 = plat_time_ns(), dt;
		err = mm_matmul(c, out, w, t, M, K, x, B);
		if (err)
			return err;
		dt = plat_time_ns() - t0;
		if (!best || dt < best)
			best = dt;
	}
	*sec = (double)best * 1e-9;
	return 0;
}

#define BK_K 4096
#define BK_PP_M 512

int bench_kernel_run(struct mm_ctx *c, uint32_t type, size_t tg_bytes, uint32_t pp_batch,
		     uint64_t min_ns, struct bench_kernel *r)
{
	size_t row = (size_t)quant_row_bytes(type, BK_K), M, wbytes, xbytes, obytes;
	bool was_scalar = c->scalar;
	uint64_t seed = 7 + type;
	uint8_t *w = NULL;
	float *x = NULL, *o = NULL;
	int err = 0;

	const struct quant_type *q = quant_table_get(c->qt, type);

	if (!row || !q || !q->vec_dot || !pp_batch)
		return -LLMK_EINVAL;
	memset(r, 0, sizeof *r);
	r->type = type;
	r->impl = q->impl;
	r->pp_batch = pp_batch;
	M = tg_bytes / row < BK_PP_M ? BK_PP_M : tg_bytes / row;
	r->tg_bytes = M * row;
	wbytes = M * row;
	xbytes = (size_t)pp_batch * BK_K * sizeof(float);
	obytes = (size_t)pp_batch * (M > BK_PP_M ? M : BK_PP_M) * sizeof(float);
	w = llm_mem_alloc(c->mem, wbytes, &err);
	x = w ? llm_mem_alloc(c->mem, xbytes, &err) : NULL;
	o = x ? llm_mem_alloc(c->mem, obytes, &err) : NULL;
	if (!o)
		goto out;
	err = quant_fill_random(type, w, M * BK_K, 0.02f, &seed);
	if (!err)
		err = quant_fill_random(GGML_TYPE_F32, x, (size_t)pp_batch * BK_K, 1.0f, &seed);
	for (int s = 0; s < 2 && !err; s++) {
		double sec;
		/* the scalar rows are compute-bound: a sixteenth of the matrix
		 * (still past the caches) measures them in a sixteenth of the time */
		size_t m = s == 1 && M / 16 > BK_PP_M ? M / 16 : M;
		c->scalar = s == 1;
		err = bench_time(c, o, w, type, m, BK_K, x, 1, min_ns, &sec);
		if (err)
			break;
		r->tg_gbs[s] = (double)(m * row) / sec * 1e-9;
		err = bench_time(c, o, w, type, BK_PP_M, BK_K, x, pp_batch, min_ns, &sec);
		r->pp_gops[s] = 2.0 * BK_PP_M * BK_K * pp_batch / sec * 1e-9;
	}
	c->scalar = was_scalar;
out:
	if (o)
		llm_mem_free(c->mem, o, obytes);
	if (x)
		llm_mem_free(c->mem, x, xbytes);
	if (w)
		llm_mem_free(c->mem, w, wbytes);
	return err;
}
