/*
 * tools/kbench.c — build/host/kbench: per-core speed of the quant rows,
 * measured in this thread's CPU time, so a busy shared machine (other
 * processes taking turns on the cores) does not distort it the way wall-clock
 * numbers (`llmctl bench --kernels`) are distorted.
 *
 *   kbench [-K N] [TYPE...]      default: K = 4096, every weight type
 *                                (quant_is_weight, in enum order)
 *
 * For each type: decode (vec_dot, one activation row) in weight GB/s and
 * GOP/s, prefill (gemm, 4 activation rows; vec_dot when the row has none)
 * in GOP/s, for the selected rows and the scalar rows, and the speedups.
 * The 64 weight rows stay in L2: this is compute speed, not memory speed.
 * Types with a prefill tile (llm/quant_isa.h) also get the tile's speed over
 * TILE_B tokens, and the share of it spent repacking the weights (a tile
 * call with no tokens).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../llm/quant.h"

#define ROWS 64
#define TILE_B 128

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Seconds of CPU per weight row: decode (nc 0) or prefill of 4 rows (nc 4). */
static double time_rows(const struct quant_type *q, const uint8_t *w, size_t rb, size_t K,
			const uint8_t *act, size_t ab, int nc)
{
	volatile float sink = 0;
	double t0 = cpu_s(), t;
	long reps = 0;
	float o[QUANT_GEMM_COLS];

	do {
		for (size_t r = 0; r < ROWS; r++) {
			if (!nc) {
				sink += q->vec_dot(K, w + r * rb, act);
			} else if (q->gemm) {
				q->gemm(K, w + r * rb, act, ab, o, 1, nc);
				sink += o[0];
			} else {
				for (int j = 0; j < nc; j++)
					sink += q->vec_dot(K, w + r * rb, act + (size_t)j * ab);
			}
		}
		reps++;
		t = cpu_s() - t0;
	} while (t < 0.25);
	return t / (double)(reps * ROWS);
}

/* Seconds of CPU per 16-row tile against B tokens (B = 0: the repack alone):
 * the best of 8 windows, as the other vCPU's neighbours come and go. */
static double time_tile(const struct quant_tile *qt, const struct quant_tune *tune,
			const uint8_t *w, size_t rb, size_t K, const uint8_t *act, size_t ab,
			const float *prep, size_t B, float *out, void *scratch)
{
	double best = 1e30;

	for (int win = 0; win < 8; win++) {
		double t0 = cpu_s(), t;
		long reps = 0;
		do {
			for (size_t r = 0; r < ROWS; r += QUANT_TILE_ROWS)
				qt->tile(K, w + r * rb, rb, QUANT_TILE_ROWS, act, ab, prep, B,
					 out, QUANT_TILE_ROWS, scratch, tune);
			reps++;
			t = cpu_s() - t0;
		} while (t < 0.04);
		t /= (double)(reps * (ROWS / QUANT_TILE_ROWS));
		best = t < best ? t : best;
	}
	return best;
}

/* The tile line for type t, if it has a tile: GMAC/s over TILE_B tokens and
 * the repack's share of that time. */
static void tile_line(uint32_t t, const struct quant_type *at, size_t K, const float *x,
		      uint64_t *seed)
{
	const struct quant_tile *qt = quant_table_tile(quant_cpu(), t);
	const struct quant_tune *tune = quant_table_tune(quant_cpu(), t);
	if (!qt)
		return;
	size_t rb = quant_row_bytes(t, K), ab = quant_row_bytes(at->type, K);
	size_t pf = QUANT_TILE_PREP_FLOATS(K);
	uint8_t *w = malloc(rb * ROWS), *act = malloc(ab * TILE_B);
	float *prep = malloc(pf * TILE_B * sizeof(float));
	float *out = malloc(TILE_B * QUANT_TILE_ROWS * sizeof(float));
	void *scratch = aligned_alloc(64, (quant_tile_scratch(K) + 63) / 64 * 64);

	quant_fill_random(t, w, K * ROWS, 0.02f, seed);
	for (size_t j = 0; j < TILE_B; j++) {
		at->from_float(x + j % QUANT_GEMM_COLS * K, act + j * ab, K);
		qt->prep(K, act + j * ab, prep + j * pf);
	}
	double full = time_tile(qt, tune, w, rb, K, act, ab, prep, TILE_B, out, scratch);
	double repack = time_tile(qt, tune, w, rb, K, act, ab, prep, 0, out, scratch);
	printf("| %-4s | tile %-7s | %d tokens: %.1f GMAC/s, repack %.0f%% of it (%.1f GB/s of weights)\n",
	       quant_name(t), qt->impl, TILE_B,
	       (double)K * QUANT_TILE_ROWS * TILE_B / full * 1e-9, 100.0 * repack / full,
	       (double)rb * QUANT_TILE_ROWS / repack * 1e-9);
	const struct quant_packed *pk = quant_table_packed(quant_cpu(), t);
	if (pk && K % pk->unit == 0) {
		/* the same rows packed: decode (one token) and the prompt batch */
		for (size_t r = 0; r < ROWS; r += QUANT_TILE_ROWS) {
			memcpy(scratch, w + r * rb, QUANT_TILE_ROWS * rb);
			pk->pack_to(K, scratch, w + r * rb, tune);
		}
		double one = time_tile(&pk->tile, tune, w, rb, K, act, ab, prep, 1, out, scratch);
		double many = time_tile(&pk->tile, tune, w, rb, K, act, ab, prep, TILE_B, out, scratch);
		printf("| %-4s | %-12s | decode %.2f GB/s, %d tokens: %.1f GMAC/s\n", quant_name(t),
		       pk->tile.impl, (double)rb * QUANT_TILE_ROWS / one * 1e-9, TILE_B,
		       (double)K * QUANT_TILE_ROWS * TILE_B / many * 1e-9);
	}
	free(w);
	free(act);
	free(prep);
	free(out);
	free(scratch);
}

int main(int argc, char **argv)
{
	size_t K = 4096;
	int first = 1;
	uint64_t seed = 1;

	if (argc > 2 && !strcmp(argv[1], "-K")) {
		K = (size_t)strtoul(argv[2], NULL, 0);
		first = 3;
	}
	if (!K || K % 256) {
		fprintf(stderr, "kbench: -K %zu: must be a positive multiple of 256\n", K);
		return 2;
	}
	float *x = malloc(K * QUANT_GEMM_COLS * sizeof(float));
	quant_fill_random(GGML_TYPE_F32, x, K * QUANT_GEMM_COLS, 1.0f, &seed);
	printf("per core, CPU time, K = %zu, %d rows in cache\n", K, ROWS);
	printf("| type | impl         | decode GB/s | scalar | speedup | prefill GOP/s | scalar | speedup |\n");
	printf("| ---- | ------------ | ----------- | ------ | ------- | ------------- | ------ | ------- |\n");
	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
		int want = argc <= first && quant_is_weight(t);
		for (int a = first; a < argc; a++)
			want |= quant_is_weight(t) && !strcmp(argv[a], quant_name(t));
		if (!want)
			continue;
		const struct quant_type *q[2] = {quant_get(t), quant_scalar(t)};
		const struct quant_type *at[2] = {quant_get(q[0]->act_type), quant_scalar(q[0]->act_type)};
		size_t rb = quant_row_bytes(t, K), ab = quant_row_bytes(at[1]->type, K);
		uint8_t *w = malloc(rb * ROWS), *act = malloc(ab * QUANT_GEMM_COLS);
		double dec[2], pre[2];
		quant_fill_random(t, w, K * ROWS, 0.02f, &seed);
		for (int s = 0; s < 2; s++) {
			for (int j = 0; j < QUANT_GEMM_COLS; j++)
				at[s]->from_float(x + (size_t)j * K, act + (size_t)j * ab, K);
			dec[s] = time_rows(q[s], w, rb, K, act, ab, 0);
			pre[s] = time_rows(q[s], w, rb, K, act, ab, QUANT_GEMM_COLS);
		}
		printf("| %-4s | %-12s | %11.2f | %6.2f | %6.1fx | %13.1f | %6.2f | %6.1fx |\n",
		       quant_name(t), q[0]->impl, rb / dec[0] * 1e-9, rb / dec[1] * 1e-9,
		       dec[1] / dec[0], 2.0 * K * QUANT_GEMM_COLS / pre[0] * 1e-9,
		       2.0 * K * QUANT_GEMM_COLS / pre[1] * 1e-9, pre[1] / pre[0]);
		free(w);
		free(act);
		tile_line(t, at[0], K, x, &seed);
	}
	free(x);
	return 0;
}
