/* tests/unit/test_matmul.c — llm/matmul.c against a plain loop over the
 * scalar rows, for decode (B = 1) and prefill (B > 1), 1 and 2 threads. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

#include "../../llm/matmul.h"
#include "../../llm/kernels/scalar/scalar.h"

/* Reference: convert with the scalar act row, dot with the scalar row; mag
 * gets sum |w_k x_k| (dequantized weights), the scale of rounding errors. */
static void mm_reference(float *out, float *mag, const uint8_t *w, uint32_t t, size_t M,
			 size_t K, const float *x, size_t B)
{
	const struct quant_type *wt = quant_scalar(t), *at = quant_scalar(wt->act_type);
	size_t ws = quant_row_bytes(t, K), as = quant_row_bytes(at->type, K);
	uint8_t *a = malloc(as);
	float *f = malloc(K * sizeof(float));

	for (size_t b = 0; b < B; b++) {
		at->from_float(x + b * K, a, K);
		for (size_t i = 0; i < M; i++) {
			double m = 0;
			out[b * M + i] = wt->vec_dot(K, w + i * ws, a);
			wt->to_float(w + i * ws, f, K);
			for (size_t k = 0; k < K; k++)
				m += fabs((double)f[k] * x[b * K + k]);
			mag[b * M + i] = (float)m;
		}
	}
	free(f);
	free(a);
}

static void mm_check_type(uint32_t t, size_t M, size_t K, size_t B, int threads, bool scalar)
{
	struct llm_mem mem;
	struct mm_ctx c;
	uint64_t seed = 42 + t;
	size_t ws = quant_row_bytes(t, K);
	uint8_t *w = malloc(ws * M);
	float *x = malloc(B * K * sizeof(float)), *o = malloc(B * M * 4), *r = malloc(B * M * 4);
	float *mag = malloc(B * M * 4);
	int bad = 0;

	CHECK(ws != 0);
	CHECK_EQ_INT(quant_fill_random(t, w, K * M, 0.02f, &seed), 0);
	CHECK_EQ_INT(quant_fill_random(GGML_TYPE_F32, x, K * B, 1.0f, &seed), 0);
	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(mm_init(&c, &mem, threads), 0);
	c.scalar = scalar;
	CHECK_EQ_INT(mm_matmul(&c, o, w, t, M, K, x, B), 0);
	mm_reference(r, mag, w, t, M, K, x, B);
	for (size_t i = 0; i < B * M; i++) {
		/* The scalar path must be bit-identical; a SIMD row sums in another
		 * order: float rounding, bounded relative to sum |w x| (the
		 * activations' 8-bit rounding is the same on both sides). */
		float tol = scalar ? 0.0f : 1e-5f * mag[i];
		if (!(fabsf(o[i] - r[i]) <= tol) && bad++ < 3)
			fprintf(stderr, "  %s M=%zu K=%zu B=%zu t=%d: out[%zu] %.9g vs %.9g\n",
				quant_name(t), M, K, B, threads, i, o[i], r[i]);
	}
	CHECK_EQ_INT(bad, 0);
	mm_free(&c);
	CHECK_EQ_INT(mem.used, 0);
	free(w);
	free(x);
	free(o);
	free(r);
	free(mag);
}

TEST(matmul_matches_reference_all_types)
{
	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
		if (!quant_is_weight(t))
			continue;
		mm_check_type(t, 37, 512, 1, 1, true);
		mm_check_type(t, 37, 512, 5, 2, true);
		mm_check_type(t, 70, 256, 1, 2, false);
		mm_check_type(t, 70, 512, 9, 2, false);
	}
}

TEST(matmul_rejects_bad_shapes)
{
	struct llm_mem mem;
	struct mm_ctx c;
	float x[100] = {0}, o[4];
	uint8_t w[4096] = {0};

	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(mm_init(&c, &mem, 1), 0);
	/* K not a multiple of the block size */
	CHECK_EQ_INT(mm_matmul(&c, o, w, GGML_TYPE_Q4_0, 2, 48, x, 1), -LLMK_EINVAL);
	CHECK_EQ_INT(mm_matmul(&c, o, w, 99, 2, 32, x, 1), -LLMK_ENOTSUP);
	CHECK_EQ_INT(mm_matmul(&c, o, w, GGML_TYPE_Q4_0, 0, 32, x, 1), -LLMK_EINVAL);
	mm_free(&c);
}

/* Rows are split between workers, never the sum of one row: any thread count
 * gives the same bits (the QEMU -smp 2 test relies on it). */
TEST(matmul_threads_give_identical_bits)
{
	const uint32_t types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, GGML_TYPE_F16};
	struct llm_mem mem;
	struct mm_ctx c1, c2;
	size_t M = 200, K = 512, B = 7;
	float *x = malloc(B * K * sizeof(float)), *o1 = malloc(B * M * 4), *o2 = malloc(B * M * 4);
	uint8_t *w = malloc(quant_row_bytes(GGML_TYPE_F16, K) * M);
	uint64_t seed = 5;

	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(mm_init(&c1, &mem, 1), 0);
	CHECK_EQ_INT(mm_init(&c2, &mem, 2), 0);
	quant_fill_random(GGML_TYPE_F32, x, B * K, 1.0f, &seed);
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		quant_fill_random(types[i], w, M * K, 0.02f, &seed);
		for (size_t b = 1; b <= B; b += B - 1) {
			CHECK_EQ_INT(mm_matmul(&c1, o1, w, types[i], M, K, x, b), 0);
			CHECK_EQ_INT(mm_matmul(&c2, o2, w, types[i], M, K, x, b), 0);
			CHECK(memcmp(o1, o2, b * M * sizeof(float)) == 0);
		}
	}
	mm_free(&c1);
	mm_free(&c2);
	free(x);
	free(o1);
	free(o2);
	free(w);
}

/* A prefetch hint (mm_prefetch_next) changes no bits, whatever it names,
 * and is dropped after the one call it is for. */
TEST(matmul_prefetch_hint_changes_nothing)
{
	const uint32_t types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q8_0};
	struct llm_mem mem;
	struct mm_ctx c1, c2;
	size_t M = 4096, K = 256;
	float *x = malloc(K * sizeof(float)), *o1 = malloc(M * 4), *o2 = malloc(M * 4);
	uint8_t *w = malloc(quant_row_bytes(GGML_TYPE_Q8_0, K) * M);
	uint8_t *other = malloc(1 << 20);
	uint64_t seed = 9;

	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(mm_init(&c1, &mem, 1), 0);
	CHECK_EQ_INT(mm_init(&c2, &mem, 2), 0);
	memset(other, 0x5a, 1 << 20);
	quant_fill_random(GGML_TYPE_F32, x, K, 1.0f, &seed);
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		quant_fill_random(types[i], w, M * K, 0.02f, &seed);
		CHECK_EQ_INT(mm_matmul(&c1, o1, w, types[i], M, K, x, 1), 0);
		for (int k = 0; k < 3; k++) {
			/* the next matrix, the product's own, a short tail */
			mm_prefetch_next(&c2, k == 1 ? (const void *)w : other,
					 k == 2 ? 100 : 1 << 20);
			memset(o2, 0xff, M * 4);
			CHECK_EQ_INT(mm_matmul(&c2, o2, w, types[i], M, K, x, 1), 0);
			CHECK(memcmp(o1, o2, M * sizeof(float)) == 0);
			CHECK(c2.next_w == NULL && c2.next_bytes == 0);
		}
	}
	mm_free(&c1);
	mm_free(&c2);
	free(x);
	free(o1);
	free(o2);
	free(w);
	free(other);
}

/* Decode's multi-row kernels (quant rows) give each row vec_dot's bits, for
 * every type that has them, on distinct rows and block counts that leave a
 * tail for the AVX2 row. */
TEST(quant_rows_give_vec_dot_bits)
{
	const size_t Ks[] = {256, 288, 4096 + 96};
	uint64_t seed = 13;
	int have = 0;

	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
		const struct quant_type *q = quant_get(t);
		if (!q || !q->rows)
			continue;
		have++;
		const struct quant_type *at = quant_get(q->act_type);
		for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++) {
			size_t K = Ks[ki];
			if (K % q->blck)
				continue;
			size_t rb = quant_row_bytes(t, K);
			uint8_t *w = malloc(rb * QUANT_ROWS), *a = malloc(quant_row_bytes(at->type, K));
			float *x = malloc(K * sizeof(float)), out[QUANT_ROWS];
			quant_fill_random(GGML_TYPE_F32, x, K, 1.0f, &seed);
			at->from_float(x, a, K);
			for (int r = 0; r < QUANT_ROWS; r++)
				quant_fill_random(t, w + (size_t)r * rb, K, 0.01f * (float)(r + 1), &seed);
			q->rows(K, w, rb, a, out);
			for (int r = 0; r < QUANT_ROWS; r++) {
				float want = q->vec_dot(K, w + (size_t)r * rb, a);
				if (memcmp(&want, &out[r], sizeof want)) {
					fprintf(stderr, "  %s K %zu row %d: rows %.9g, vec_dot %.9g\n",
						q->name, K, r, out[r], want);
					CHECK(0);
				}
			}
			free(w);
			free(a);
			free(x);
		}
	}
	if (plat_cpu_features() & PLAT_CPU_AVX512VNNI)
		CHECK(have > 0);
}

/* A prompt batch (the tiles, distinct rows) against one token at a time
 * (vec_dot): the same within a small relative bound, so a tile that mixed up
 * rows or sub-block scales would fail here even if it did so consistently. */
/* The CPU features without AVX-512: the AVX2 tiles and rows. */
static uint32_t avx2_only(void)
{
	return plat_cpu_features() &
	       ~(uint32_t)(PLAT_CPU_AVX512F | PLAT_CPU_AVX512BW | PLAT_CPU_AVX512VL |
			   PLAT_CPU_AVX512DQ | PLAT_CPU_AVX512VNNI | PLAT_CPU_AVX512BF16);
}

/*
 * Row r of type t with every quant at its largest (all quant bits set) and
 * its f16 scales 1: the products a tile sums in narrow integers are then at
 * their extremes against activations of +-1 (quants +-127).
 */
static void extreme_row(uint32_t t, uint8_t *row, size_t K)
{
	const struct quant_type *q = quant_scalar(t);
	size_t bytes = quant_row_bytes(t, K);

	if (t == GGML_TYPE_F16 || t == GGML_TYPE_BF16)
		return; /* no narrow integer sums to overflow */
	memset(row, t == GGML_TYPE_Q8_0 ? 0x7f : 0xff, bytes);
	for (size_t o = 0; o < bytes; o += q->bytes)
		for (int k = 0; k < q->n_f16; k++) {
			row[o + q->f16_at[k]] = 0x00; /* f16 1.0 */
			row[o + q->f16_at[k] + 1] = 0x3c;
		}
}

static void tiles_match_vec_dot(uint32_t features)
{
	const uint32_t types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,
				  GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_F16,
				  GGML_TYPE_BF16};
	struct llm_mem mem;
	struct mm_ctx c;
	size_t M = 37, K = 768, B = 9;
	float *x = malloc(B * K * sizeof(float)), *o1 = malloc(B * M * 4), *o2 = malloc(M * 4);
	uint8_t *w = malloc(quant_row_bytes(GGML_TYPE_F16, K) * M); /* the widest listed */
	uint64_t seed = 11;
	struct quant_table qt;

	quant_table_init(&qt, features);
	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(mm_init(&c, &mem, 2), 0);
	c.qt = &qt;
	quant_fill_random(GGML_TYPE_F32, x, B * K, 1.0f, &seed);
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		int bad = 0;
		/* rows of different sizes, so a row's scales are its own */
		for (size_t r = 0; r < M; r++)
			quant_fill_random(types[i], w + r * quant_row_bytes(types[i], K), K,
					  0.02f * (float)(r % 5 + 1), &seed);
		/* and two rows at the extremes, against tokens of all +1 and all -1 */
		extreme_row(types[i], w + 5 * quant_row_bytes(types[i], K), K);
		extreme_row(types[i], w + 20 * quant_row_bytes(types[i], K), K);
		for (size_t k = 0; k < K; k++) {
			x[3 * K + k] = 1.0f;
			x[6 * K + k] = -1.0f;
		}
		CHECK_EQ_INT(mm_matmul(&c, o1, w, types[i], M, K, x, B), 0);
		for (size_t b = 0; b < B && !bad; b++) {
			CHECK_EQ_INT(mm_matmul(&c, o2, w, types[i], M, K, x + b * K, 1), 0);
			for (size_t r = 0; r < M && !bad; r++) {
				float d = o1[b * M + r] - o2[r], mag = o2[r] < 0 ? -o2[r] : o2[r];
				if ((d < 0 ? -d : d) > 1e-3f * (mag + 1.0f)) {
					fprintf(stderr, "  %s token %zu row %zu: tile %.9g, vec_dot %.9g\n",
						quant_name(types[i]), b, r, o1[b * M + r], o2[r]);
					bad = 1;
				}
			}
		}
		CHECK(!bad);
	}
	mm_free(&c);
	free(x);
	free(o1);
	free(o2);
	free(w);
}

TEST(matmul_tiles_match_vec_dot_on_distinct_rows)
{
	tiles_match_vec_dot(plat_cpu_features());
	if (plat_cpu_features() & PLAT_CPU_AVX512VNNI) /* and the AVX2 tiles */
		tiles_match_vec_dot(avx2_only());
}

/* Prefill tiles (llm/quant_isa.h, tile contract): a result depends only on its
 * weight row and its token, not on the batch size or where the tile cuts the
 * rows, so a prompt gives the same numbers however it is batched. */
static void tiles_depend_only_on_row_and_token(uint32_t features)
{
	const uint32_t types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,
				  GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_F16,
				  GGML_TYPE_BF16};
	struct llm_mem mem;
	struct mm_ctx c;
	size_t M = 70, K = 512, B = 13;
	float *x = malloc(B * K * sizeof(float)), *o1 = malloc(B * M * 4), *o2 = malloc(B * M * 4);
	uint8_t *w = malloc(quant_row_bytes(GGML_TYPE_F16, K) * M); /* the widest listed */
	uint64_t seed = 9;
	int tiles = 0;
	struct quant_table qt;

	quant_table_init(&qt, features);
	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(mm_init(&c, &mem, 2), 0);
	c.qt = &qt;
	quant_fill_random(GGML_TYPE_F32, x, B * K, 1.0f, &seed);
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		tiles += quant_table_tile(&qt, types[i]) != NULL;
		quant_fill_random(types[i], w, M * K, 0.02f, &seed);
		CHECK_EQ_INT(mm_matmul(&c, o1, w, types[i], M, K, x, B), 0);
		/* 5 tokens; rows 3..39 (tiles cut at 19 and 35 instead of 16 and 32) */
		CHECK_EQ_INT(mm_matmul(&c, o2, w + 3 * quant_row_bytes(types[i], K), types[i], 37,
				       K, x + 4 * K, 5), 0);
		for (size_t b = 0; b < 5; b++)
			for (size_t r = 0; r < 37; r++)
				if (memcmp(&o2[b * 37 + r], &o1[(b + 4) * M + r + 3], sizeof(float))) {
					fprintf(stderr, "  %s token %zu row %zu: %.9g vs %.9g\n",
						quant_name(types[i]), b + 4, r + 3, o2[b * 37 + r],
						o1[(b + 4) * M + r + 3]);
					CHECK(0);
					b = 5;
					break;
				}
	}
	if (features & PLAT_CPU_AVX512VNNI)
		CHECK_EQ_INT(tiles, 9);
	else if (features & PLAT_CPU_AVX2)
		CHECK_EQ_INT(tiles, 7); /* not F16, BF16 */
	mm_free(&c);
	free(x);
	free(o1);
	free(o2);
	free(w);
}

TEST(matmul_tile_results_depend_only_on_row_and_token)
{
	tiles_depend_only_on_row_and_token(plat_cpu_features());
	if (plat_cpu_features() & PLAT_CPU_AVX512VNNI) /* and the AVX2 tiles */
		tiles_depend_only_on_row_and_token(avx2_only());
}

/*
 * Packed weights (llm/quant_isa.h, struct quant_packed): pack then unpack gives
 * the rows back byte for byte; the packed tile gives the unpacked tile's
 * bits for a prompt batch (11 tokens: the tiles take 4, 2 and 1 at a time),
 * for 2 and 3 tokens (off the packed group, plain rows packed first) and for
 * each token alone (decode, the lanes: 7 groups make lanes of 2, 2, 2 and 1
 * groups); with the scalar rows forced, packed groups are unpacked first and
 * give the plain bits.
 */
static void packed_gives_the_tile_bits(uint32_t features)
{
	const uint32_t types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K};
	struct llm_mem mem;
	struct mm_ctx c;
	size_t M = 112, K = 768, B = 11;
	float *x = malloc(B * K * sizeof(float)), *o1 = malloc(B * M * 4), *o2 = malloc(B * M * 4);
	uint8_t *w = malloc(quant_row_bytes(GGML_TYPE_Q8_0, K) * M); /* the widest listed */
	uint8_t *wp = malloc(quant_row_bytes(GGML_TYPE_Q8_0, K) * M);
	uint8_t *tmp = malloc(quant_row_bytes(GGML_TYPE_Q8_0, K) * 16);
	uint64_t seed = 5;
	int have = 0;
	struct quant_table qt;

	quant_table_init(&qt, features);
	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(mm_init(&c, &mem, 2), 0);
	c.qt = &qt;
	quant_fill_random(GGML_TYPE_F32, x, B * K, 1.0f, &seed);
	for (size_t k = 0; k < K; k++)
		x[3 * K + k] = 1.0f;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		const struct quant_packed *p = quant_table_packed(&qt, types[i]);
		const struct quant_tune *tune = quant_table_tune(&qt, types[i]);
		size_t rb = quant_row_bytes(types[i], K);
		if (!p) {
			CHECK_EQ_INT(mm_matmul_packed(&c, o2, w, types[i], M, K, x, 1), -LLMK_EINVAL);
			continue;
		}
		have++;
		/* where the CPU has GFNI, Q4_0's packed form is the GFNI one, so
		 * the bits compared below are its */
		if (types[i] == GGML_TYPE_Q4_0 && (features & PLAT_CPU_GFNI) &&
		    (features & PLAT_CPU_AVX512VNNI))
			CHECK(strstr(p->tile.impl, "gfni") != NULL);
		for (size_t r = 0; r < M; r++)
			quant_fill_random(types[i], w + r * rb, K, 0.02f * (float)(r % 5 + 1), &seed);
		extreme_row(types[i], w + 5 * rb, K);
		memcpy(wp, w, M * rb);
		for (size_t g = 0; g < M / 16; g++)
			p->pack_to(K, w + g * 16 * rb, wp + g * 16 * rb, tune);
		CHECK(memcmp(wp, w, M * rb) != 0);
		{
			/* the registered pack writes the reference layout (pack.c) */
			quant_pack_fn ref = types[i] == GGML_TYPE_Q4_0   ? pk_pack_q4_0
					    : types[i] == GGML_TYPE_Q8_0 ? pk_pack_q8_0
					    : types[i] == GGML_TYPE_Q4_K ? pk_pack_q4_K
									 : pk_pack_q6_K;
			uint8_t *wr = malloc(M * rb);
			memcpy(wr, w, M * rb);
			for (size_t g = 0; g < M / 16; g++)
				ref(K, wr + g * 16 * rb, tmp);
			CHECK(memcmp(wr, wp, M * rb) == 0);
			free(wr);
		}
		CHECK_EQ_INT(mm_matmul(&c, o1, w, types[i], M, K, x, B), 0);
		CHECK_EQ_INT(mm_matmul_packed(&c, o2, wp, types[i], M, K, x, B), 0);
		for (size_t k = 0; k < B * M; k++)
			if (memcmp(&o1[k], &o2[k], 4)) {
				fprintf(stderr, "  %s token %zu row %zu: packed %.9g, tile %.9g\n",
					quant_name(types[i]), k / M, k % M, o2[k], o1[k]);
				CHECK(0);
				break;
			}
		for (size_t nb = 2; nb <= 3; nb++) {
			CHECK_EQ_INT(mm_matmul_packed(&c, o2, wp, types[i], M, K, x, nb), 0);
			CHECK(memcmp(o2, o1, nb * M * 4) == 0);
			CHECK_EQ_INT(mm_matmul(&c, o2, w, types[i], M, K, x, nb), 0);
			CHECK(memcmp(o2, o1, nb * M * 4) == 0);
		}
		for (size_t b = 0; b < B; b++) {
			/* unpacked rows of a type that packs take the tile too */
			CHECK_EQ_INT(mm_matmul(&c, o2, w, types[i], M, K, x + b * K, 1), 0);
			CHECK(memcmp(o2, o1 + b * M, M * 4) == 0);
			CHECK_EQ_INT(mm_matmul_packed(&c, o2, wp, types[i], M, K, x + b * K, 1), 0);
			for (size_t r = 0; r < M; r++)
				if (memcmp(&o2[r], &o1[b * M + r], 4)) {
					fprintf(stderr, "  %s token %zu row %zu: decode %.9g, tile %.9g\n",
						quant_name(types[i]), b, r, o2[r], o1[b * M + r]);
					CHECK(0);
					b = B;
					break;
				}
		}
		c.scalar = true;
		CHECK_EQ_INT(mm_matmul(&c, o1, w, types[i], M, K, x, 2), 0);
		CHECK_EQ_INT(mm_matmul_packed(&c, o2, wp, types[i], M, K, x, 2), 0);
		CHECK(memcmp(o1, o2, 2 * M * 4) == 0);
		c.scalar = false;
		/* not a whole number of groups */
		CHECK_EQ_INT(mm_matmul_packed(&c, o2, wp, types[i], M - 8, K, x, 1), -LLMK_EINVAL);
		for (size_t g = 0; g < M / 16; g++)
			p->unpack(K, wp + g * 16 * rb, tmp);
		CHECK(memcmp(wp, w, M * rb) == 0);
	}
	if (features & PLAT_CPU_AVX512VNNI)
		CHECK_EQ_INT(have, 4);
	else if (features & PLAT_CPU_AVX2)
		CHECK_EQ_INT(have, 4); /* Q4_0, Q8_0, Q4_K, Q6_K */
	mm_free(&c);
	free(x);
	free(o1);
	free(o2);
	free(w);
	free(wp);
	free(tmp);
}

TEST(matmul_packed_gives_the_tile_bits)
{
	/* and with the other vendor's decode read pattern (lanes or each
	 * group alone, the prefetch hint and distance: PLAT_CPU_AMD, struct
	 * quant_tune), which must not change a bit */
	for (uint32_t amd = 0; amd <= PLAT_CPU_AMD; amd += PLAT_CPU_AMD) {
		uint32_t f = plat_cpu_features() ^ amd;
		struct quant_table qt;
		packed_gives_the_tile_bits(f);
		quant_table_init(&qt, f);
		if (quant_table_packed(&qt, GGML_TYPE_Q4_0)) {
			CHECK(quant_table_tune(&qt, GGML_TYPE_Q4_0)->lanes == !(f & PLAT_CPU_AMD));
			CHECK(quant_table_tune(&qt, GGML_TYPE_Q4_0)->nta == !!(f & PLAT_CPU_AMD));
		}
		if (plat_cpu_features() & PLAT_CPU_AVX512VNNI) /* and the AVX2 packed form */
			packed_gives_the_tile_bits(avx2_only() ^ amd);
	}
}

/* Q, K and V (or gate and up) in one mm_matmul_n call: each part gets the
 * bits of its own call, packed and plain, for one token (packed: the lanes)
 * and a batch, with parts whose tiles do not fill a lane step. */
static void matmul_n_case(struct mm_ctx *c, uint32_t t, bool packed, const size_t *M, size_t K,
			  const float *x, size_t B, uint64_t *seed)
{
	size_t rb = quant_row_bytes(t, K);
	const struct quant_packed *pk = quant_table_packed(c->qt, t);
	uint8_t *w[3];
	float *o[3], *want = malloc(B * 128 * sizeof(float)); /* every M <= 128 */

	for (int p = 0; p < 3; p++) {
		w[p] = malloc(M[p] * rb);
		o[p] = malloc(B * M[p] * sizeof(float));
		quant_fill_random(t, w[p], M[p] * K, 0.02f * (float)(p + 1), seed);
		if (packed) { /* (pack_to is out of place) */
			uint8_t *plain = malloc(M[p] * rb);
			memcpy(plain, w[p], M[p] * rb);
			for (size_t g = 0; g < M[p] / 16; g++)
				pk->pack_to(K, plain + g * 16 * rb, w[p] + g * 16 * rb,
					    quant_table_tune(c->qt, t));
			free(plain);
		}
	}
	CHECK_EQ_INT(mm_matmul_n(c, 3, o, (const void *const *)w, M, t, packed, K, x, B), 0);
	for (int p = 0; p < 3; p++) {
		int e = packed ? mm_matmul_packed(c, want, w[p], t, M[p], K, x, B)
			       : mm_matmul(c, want, w[p], t, M[p], K, x, B);
		CHECK_EQ_INT(e, 0);
		if (memcmp(want, o[p], B * M[p] * sizeof(float))) {
			fprintf(stderr, "  %s%s B %zu part %d: not its own call's bits\n",
				quant_name(t), packed ? " packed" : "", B, p);
			CHECK(0);
		}
		free(w[p]);
		free(o[p]);
	}
	free(want);
}

TEST(matmul_n_gives_each_parts_bits)
{
	const uint32_t types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K,
				  GGML_TYPE_Q6_K, GGML_TYPE_Q5_K, GGML_TYPE_F16};
	const size_t whole[3] = {48, 16, 112}, ragged[3] = {37, 5, 70}, K = 512, B = 5;
	struct llm_mem mem;
	struct mm_ctx c;
	float *x = malloc(B * K * sizeof(float)), *o[3];
	const void *w[3];
	uint64_t seed = 21;

	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(mm_init(&c, &mem, 2), 0);
	quant_fill_random(GGML_TYPE_F32, x, B * K, 1.0f, &seed);
	/* (the third pass: the other vendor's decode pattern, PLAT_CPU_AMD) */
	for (int scalar = 0; scalar < 3; scalar++) {
		struct quant_table qt;
		quant_table_init(&qt, plat_cpu_features() ^ (scalar == 2 ? PLAT_CPU_AMD : 0));
		c.qt = &qt;
		c.scalar = scalar == 1;
		for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
			bool packs = quant_table_can_pack(&qt, types[i], 16, K);
			for (size_t b = 1; b <= B; b += B - 1) {
				matmul_n_case(&c, types[i], false, whole, K, x, b, &seed);
				if (packs)
					matmul_n_case(&c, types[i], true, whole, K, x, b, &seed);
				else
					matmul_n_case(&c, types[i], false, ragged, K, x, b, &seed);
			}
		}
	}
	c.qt = quant_cpu();
	c.scalar = false;
	/* parts that would take different paths, and part counts out of range */
	for (int p = 0; p < 3; p++) {
		o[p] = malloc(128 * sizeof(float));
		w[p] = x;
	}
	if (quant_can_pack(GGML_TYPE_Q4_0, 16, K))
		CHECK_EQ_INT(mm_matmul_n(&c, 2, o, w, (size_t[]){48, 37}, GGML_TYPE_Q4_0, false, K,
					 x, 1), -LLMK_EINVAL);
	CHECK_EQ_INT(mm_matmul_n(&c, 0, o, w, whole, GGML_TYPE_Q4_0, false, K, x, 1), -LLMK_EINVAL);
	CHECK_EQ_INT(mm_matmul_n(&c, MM_MAX_PARTS + 1, o, w, whole, GGML_TYPE_Q4_0, false, K, x, 1),
		     -LLMK_EINVAL);
	for (int p = 0; p < 3; p++)
		free(o[p]);
	mm_free(&c);
	free(x);
}
