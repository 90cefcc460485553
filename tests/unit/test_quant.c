/* tests/unit/test_quant.c — llm/quant.c and the scalar rows. */
#include "test.h"

#include <stdlib.h>

#include "../../llm/gguf.h"
#include "../../llm/quant.h"
#include "../../llm/quant_blocks.h"

/* Every scalar row against ggml's geometry (gguf.c's table of every ggml
 * type): block, bytes, name; its activation type quantizes; a weight type
 * can make test data, and its f16 scales (selftest's edge cases) lie in
 * the block. */
TEST(quant_table_matches_ggml_geometry)
{
	int rows = 0, weights = 0;

	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
		const struct quant_type *q = quant_scalar(t);
		uint32_t blck, bytes;
		if (!q)
			continue;
		rows++;
		weights += quant_is_weight(t);
		CHECK_EQ_INT(q->type, t);
		CHECK_EQ_INT(gguf_type_geometry(t, &blck, &bytes), 0);
		CHECK_EQ_INT(q->blck, blck);
		CHECK_EQ_INT(q->bytes, bytes);
		CHECK_STR(q->name, gguf_type_name(t));
		CHECK(q->to_float != NULL);
		const struct quant_type *a = quant_scalar(q->act_type);
		CHECK(a && a->from_float && a->act_type == a->type);
		CHECK(q->fill || q->from_float);
		CHECK(q->n_f16 <= 2);
		for (int f = 0; f < q->n_f16; f++)
			CHECK(q->blck > 1 && q->f16_at[f] + 2u <= q->bytes);
	}
	/* the 15 weight types and Q8_1, Q8_K at least */
	CHECK(rows >= 17 && weights >= 15);
	CHECK(!quant_is_weight(GGML_TYPE_Q8_K) && quant_is_weight(GGML_TYPE_Q4_K));
	CHECK(quant_get(GGML_TYPE_COUNT) == NULL);
	CHECK(quant_get(4) == NULL);
	CHECK_STR(quant_name(GGML_TYPE_IQ2_XXS), "IQ2_XXS"); /* named, not computed */
	CHECK_STR(quant_name(GGML_TYPE_MXFP4), "MXFP4");
	CHECK_STR(quant_name(4), "?");
	for (uint32_t t = 0; t < GGML_TYPE_COUNT + 2; t++)
		CHECK_STR(quant_name(t), gguf_type_name(t));
	CHECK_EQ_INT(quant_row_bytes(GGML_TYPE_Q4_K, 4096), 16 * 144);
	CHECK_EQ_INT(quant_row_bytes(GGML_TYPE_Q4_K, 100), 0);
	CHECK_EQ_INT(quant_row_bytes(GGML_TYPE_F16, 3), 6);
}

/* f16 against the compiler's own _Float16 conversions, every half value. */
TEST(quant_f16_converts_every_half_value_exactly)
{
	int bad = 0;

	for (uint32_t h = 0; h < 65536; h++) {
		_Float16 x;
		uint16_t hh = (uint16_t)h;
		memcpy(&x, &hh, 2);
		float want = (float)x, got = quant_f16_to_f32(hh);
		if (isnan(want)) {
			bad += !isnan(got);
			bad += !(quant_f32_to_f16(got) & 0x200); /* quiet NaN back */
			continue;
		}
		bad += memcmp(&want, &got, 4) != 0;
		bad += quant_f32_to_f16(got) != hh;
	}
	CHECK_EQ_INT(bad, 0);
}

TEST(quant_f32_to_f16_rounding)
{
	uint64_t s = 12345;
	int bad = 0;

	for (int i = 0; i < 2000000; i++) {
		uint32_t u;
		float f;
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		u = (uint32_t)(s >> 32);
		/* Concentrate on the half range (and its edges) half the time. */
		if (i & 1)
			u = (u & 0x807fffff) | ((uint32_t)(98 + (s >> 20) % 48) << 23);
		memcpy(&f, &u, 4);
		if (isnan(f))
			continue;
		_Float16 h = (_Float16)f;
		uint16_t want;
		memcpy(&want, &h, 2);
		if (quant_f32_to_f16(f) != want && bad++ < 3)
			fprintf(stderr, "  f16(%a): %04x want %04x\n", f, quant_f32_to_f16(f), want);
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(quant_f32_to_f16(65519.0f), 0x7bff);
	CHECK_EQ_INT(quant_f32_to_f16(65520.0f), 0x7c00);
	CHECK_EQ_INT(quant_f32_to_f16(-INFINITY), 0xfc00);
}

TEST(quant_bf16_rounds_to_nearest_even)
{
	CHECK_EQ_INT(quant_f32_to_bf16(1.0f), 0x3f80);
	/* 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: ties to even (1). */
	CHECK_EQ_INT(quant_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
	CHECK_EQ_INT(quant_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
	CHECK_EQ_INT(quant_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
	CHECK(isnan(quant_bf16_to_f32(quant_f32_to_bf16(NAN))));
	CHECK_EQ_INT(quant_bf16_to_f32(0xc040), -3.0f);
}

/* ---- dequantization against ggml's own output, bit for bit ---- */

static const struct { const char *name, *file; } zoo[] = {
	{"f32", "zoo-f32.gguf"},      {"F16", "zoo-F16.gguf"},     {"BF16", "zoo-BF16.gguf"},
	{"Q8_0", "zoo-Q8_0.gguf"},    {"Q4_0", "zoo-Q4_0.gguf"},   {"Q4_1", "zoo-Q4_1.gguf"},
	{"Q5_0", "zoo-Q5_0.gguf"},    {"Q5_1", "zoo-Q5_1.gguf"},   {"Q2_K", "zoo-Q2_K.gguf"},
	{"Q3_K_S", "zoo-Q3_K_S.gguf"}, {"Q4_K_S", "zoo-Q4_K_S.gguf"}, {"Q5_K_S", "zoo-Q5_K_S.gguf"},
	{"Q6_K", "zoo-Q6_K.gguf"},
};
static const char *const ref_tensors[] = {
	"token_embd.weight", "blk.0.attn_q.weight", "blk.1.ffn_down.weight",
};

static void check_ref_tensor(const char *td, const char *zname, const struct gguf_file *g,
			     const uint8_t *file, const char *tname)
{
	const struct gguf_tensor *t = gguf_find_tensor(g, tname);
	const struct quant_type *q;
	char path[700];
	size_t len, diff = 0;
	float *ref, *got;

	snprintf(path, sizeof path, "%s/quant/ref/%s.%s.f32", td, zname, tname);
	ref = test_read_file(path, &len);
	CHECK(t != NULL && ref != NULL);
	if (!t || !ref) {
		free(ref);
		return;
	}
	q = quant_scalar(t->type);
	CHECK(q != NULL);
	CHECK_EQ_INT(len, t->n_elems * 4);
	if (q && len == t->n_elems * 4) {
		got = malloc(len);
		q->to_float(file + t->offset, got, t->n_elems);
		for (size_t i = 0; i < t->n_elems; i++)
			if (memcmp(&got[i], &ref[i], 4) != 0 && diff++ < 2)
				fprintf(stderr, "  %s %s [%zu]: %a != %a\n", zname, tname, i,
					got[i], ref[i]);
		CHECK_EQ_INT(diff, 0);
		free(got);
	}
	free(ref);
}

TEST(quant_to_float_matches_ggml_bit_for_bit)
{
	const char *td = testdata_dir();
	char path[700], err[256];

	if (!td)
		SKIP("no testdata");
	for (size_t z = 0; z < sizeof zoo / sizeof zoo[0]; z++) {
		struct llm_reader r;
		struct llm_membuf mb;
		struct llm_mem mem;
		struct gguf_file g;
		size_t len;
		uint8_t *file;

		snprintf(path, sizeof path, "%s/quant/%s", td, zoo[z].file);
		file = test_read_file(path, &len);
		CHECK(file != NULL);
		if (!file)
			continue;
		llm_mem_init(&mem, 0);
		llm_reader_mem(&r, &mb, file, len);
		CHECK_EQ_INT(gguf_open(&g, &r, &mem, err, sizeof err), 0);
		for (size_t i = 0; i < 3 && g.tensors; i++)
			check_ref_tensor(td, zoo[z].name, &g, file, ref_tensors[i]);
		gguf_close(&g);
		free(file);
	}
}

/* ---- vec_dot ---- */

static double dot_d(const float *a, const float *b, size_t n, double *mag)
{
	double s = 0, m = 0;

	for (size_t i = 0; i < n; i++) {
		s += (double)a[i] * b[i];
		m += fabs((double)a[i] * b[i]);
	}
	*mag = m;
	return s;
}

/* Q8_1 stores s = d * sum(q) as f16: the min term m * s carries that
 * rounding (2^-11 relative), which the dequantized activations do not. */
static double q8_1_s_rounding(uint32_t t, const uint8_t *w, const uint8_t *a, size_t n)
{
	const struct block_q8_1 *y = (const void *)a;
	double e = 0;

	for (size_t i = 0; i < n / 32; i++) {
		uint16_t m = t == GGML_TYPE_Q4_1 ? ((const struct block_q4_1 *)w)[i].m
						 : ((const struct block_q5_1 *)w)[i].m;
		e += fabs(quant_f16_to_f32(m) * quant_f16_to_f32(y[i].s)) * 0x1p-11;
	}
	return e;
}

/*
 * For every type: vec_dot(w, quantize(x)) equals the double dot of the
 * dequantized weights and dequantized activations within 1e-5 of sum|w a|
 * (only float rounding of the block sums; plus the f16 rounding of Q8_1's
 * sums for Q4_1/Q5_1), and the double dot with the float
 * activations within 1% of sum|w x| (the activations' 8-bit rounding; exact
 * for the float types, checked at 1e-6 there).
 */
TEST(quant_vec_dot_vs_dequantized_dot)
{
	const size_t n = 2048;
	float *x = malloc(n * 4), *wf = malloc(n * 4), *af = malloc(n * 4);
	uint8_t *w = malloc(n * 4), *a = malloc(n * 4 + 1024);
	uint64_t seed = 42;

	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
		const struct quant_type *q = quant_scalar(t);
		if (!quant_is_weight(t))
			continue;
		const struct quant_type *at = quant_scalar(q->act_type);
		for (int rep = 0; rep < 20; rep++) {
			double mag_q, mag_x;
			CHECK_EQ_INT(quant_fill_random(q->type, w, n, 0.05f, &seed), 0);
			CHECK_EQ_INT(quant_fill_random(GGML_TYPE_F32, x, n, 1.0f, &seed), 0);
			if (rep == 0)
				x[7] = 40.0f; /* an outlier activation */
			q->to_float(w, wf, n);
			at->from_float(x, a, n);
			at->to_float(a, af, n);
			float got = q->vec_dot(n, w, a);
			double want_q = dot_d(wf, af, n, &mag_q);
			double want_x = dot_d(wf, x, n, &mag_x);
			double tol_x = at->type == GGML_TYPE_F32 ? 1e-6 : 1e-2;
			double tol_q = 1e-5 * mag_q;
			if (at->type == GGML_TYPE_Q8_1)
				tol_q += q8_1_s_rounding(q->type, w, a, n);
			if (fabs(got - want_q) > tol_q || fabs(got - want_x) > tol_x * mag_x) {
				fprintf(stderr, "  %s rep %d: vec_dot %.9g, dequantized %.9g, float x %.9g (mag %.4g)\n",
					q->name, rep, got, want_q, want_x, mag_x);
				test_failed_checks++;
				break;
			}
		}
	}
	free(x);
	free(wf);
	free(af);
	free(w);
	free(a);
}

/* Random blocks are sane: finite, mean ~0, standard deviation ~ as asked. */
TEST(quant_fill_random_statistics)
{
	const size_t n = 65536;
	float *f = malloc(n * 4);
	uint8_t *w = malloc(n * 4);

	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
		const struct quant_type *q = quant_scalar(t);
		uint64_t s1 = 7, s2 = 7;
		if (!quant_is_weight(t))
			continue;
		double sum = 0, sq = 0;
		q->to_float(w, f, 0);
		CHECK_EQ_INT(quant_fill_random(q->type, w, n, 0.02f, &s1), 0);
		q->to_float(w, f, n);
		for (size_t i = 0; i < n; i++) {
			sum += f[i];
			sq += (double)f[i] * f[i];
		}
		double mean = sum / n, sd = sqrt(sq / n - mean * mean);
		if (!(fabs(mean) < 0.004 && sd > 0.014 && sd < 0.026)) {
			fprintf(stderr, "  %s: mean %g sd %g\n", q->name, mean, sd);
			test_failed_checks++;
		}
		/* Deterministic: the same seed gives the same bytes. */
		uint8_t *w2 = malloc(n * 4);
		quant_fill_random(q->type, w2, n, 0.02f, &s2);
		CHECK(memcmp(w, w2, quant_row_bytes(q->type, n)) == 0);
		free(w2);
	}
	uint64_t s = 1;
	CHECK_EQ_INT(quant_fill_random(GGML_TYPE_Q4_K, w, 100, 1, &s), -LLMK_EINVAL);
	CHECK_EQ_INT(quant_fill_random(16, w, 256, 1, &s), -LLMK_EINVAL);
	free(f);
	free(w);
}

/* ---- the table: scalar rows, then the ISA descriptors over them ---- */

TEST(quant_table_without_features_is_the_scalar_rows)
{
	static struct quant_table qt;

	quant_table_init(&qt, 0);
	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
		const struct quant_type *q = quant_table_get(&qt, t), *ref = quant_scalar(t);
		CHECK(ref ? q && !memcmp(q, ref, sizeof *q) : q == NULL);
		CHECK(quant_table_tile(&qt, t) == NULL);
		CHECK(quant_table_packed(&qt, t) == NULL);
		CHECK(quant_table_tune(&qt, t) != NULL);
		CHECK(!quant_table_can_pack(&qt, t, 16, 4096));
	}
	CHECK(quant_table_get(&qt, GGML_TYPE_COUNT) == NULL);
	CHECK(quant_table_tile(&qt, GGML_TYPE_COUNT) == NULL);
}

TEST(quant_cpu_table_is_built_once_for_this_cpu)
{
	const struct quant_table *qt = quant_cpu();

	CHECK(qt == quant_cpu());
	CHECK_EQ_INT(qt->cpu_features, plat_cpu_features());
	CHECK(quant_get(GGML_TYPE_Q4_K) == quant_table_get(qt, GGML_TYPE_Q4_K));
}

#if defined(__x86_64__)
#include "../../llm/kernels/avx2/avx2_rows.h"
#include "../../llm/kernels/avx512/avx512_rows.h"
#elif defined(__aarch64__)
#include "../../llm/kernels/neon/neon_rows.h"
#endif

/* Every descriptor a feature set can select (only inspected, never run). */
static int all_descriptors(const struct quant_isa **d, int max)
{
	const uint32_t all = ~(uint32_t)0;
	const uint32_t drop[] = {0, PLAT_CPU_AMD, PLAT_CPU_GFNI, PLAT_CPU_GFNI | PLAT_CPU_AMD,
				 PLAT_CPU_DOTPROD};
	int n = 0;

	for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++) {
		const struct quant_isa *got[3] = {NULL, NULL, NULL};
#if defined(__x86_64__)
		got[0] = quant_avx2_get(all & ~drop[i]);
		got[1] = quant_avx512_get(all & ~drop[i]);
#elif defined(__aarch64__)
		got[0] = quant_neon_get(all & ~drop[i]);
#endif
		for (int k = 0; k < 3; k++) {
			bool seen = !got[k];
			for (int j = 0; j < n; j++)
				seen |= d[j] == got[k];
			if (!seen && n < max)
				d[n++] = got[k];
		}
	}
	return n;
}

/* What quant.c takes from a descriptor is all it holds: a row entry
 * counts only with its vec_dot (an activation-only type: its from_float),
 * so an entry with only a gemm would be dropped unseen; a packed form needs
 * the same descriptor's tile of its type and a unit of whole blocks. */
TEST(quant_descriptors_hold_only_what_the_table_takes)
{
	const struct quant_isa *d[16];
	int n = all_descriptors(d, 16);

#if defined(__x86_64__) || defined(__aarch64__)
	CHECK(n >= 2);
#endif
	for (int i = 0; i < n; i++)
		for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
			const struct quant_type *ref = quant_scalar(t);
			const struct quant_isa_row *r = d[i]->row ? &d[i]->row[t] : NULL;
			const struct quant_tile *tl = d[i]->tile ? d[i]->tile[t] : NULL;
			const struct quant_packed *pk = d[i]->packed ? d[i]->packed[t] : NULL;
			bool any = r && (r->to_float || r->from_float || r->vec_dot || r->gemm ||
					 r->rows);
			if (!ref) {
				CHECK(!any && !tl && !pk);
				continue;
			}
			if (any && ref->vec_dot)
				CHECK(r->vec_dot != NULL);
			if (any && !ref->vec_dot)
				CHECK(r->from_float && !r->vec_dot && !r->gemm && !r->rows);
			if (tl)
				CHECK(ref->vec_dot && tl->tile && tl->prep && tl->impl);
			if (pk) {
				CHECK(tl != NULL);
				CHECK(pk->pack_to && pk->unpack && pk->tile.tile && pk->tile.prep);
				CHECK(pk->unit && pk->unit % ref->blck == 0);
			}
		}
}

/* A wider ISA's entries replace a narrower one's type by type; the
 * narrower one's stay where the wider has none (AVX-512 has no quantizer
 * for Q8_1 and Q8_K), and a packed form comes with its own tile. */
TEST(quant_table_layers_the_descriptors)
{
	static struct quant_table qt;
	uint32_t f = plat_cpu_features();

	quant_table_init(&qt, f);
#if defined(__x86_64__)
	if (!quant_avx512_get(f) || !quant_avx2_get(f))
		SKIP_CPU("AVX512VNNI", "the two x86 descriptors layered");
	CHECK_STR(quant_table_get(&qt, GGML_TYPE_Q4_0)->impl, "avx512vnni");
	CHECK_STR(quant_table_get(&qt, GGML_TYPE_Q8_1)->impl, "avx2");
	CHECK_STR(quant_table_get(&qt, GGML_TYPE_Q8_K)->impl, "avx2");
	CHECK(quant_table_get(&qt, GGML_TYPE_Q4_0)->rows != NULL);
	CHECK(quant_table_get(&qt, GGML_TYPE_Q4_1)->rows == NULL);
	/* left out of the descriptor: the scalar row's to_float */
	CHECK(quant_table_get(&qt, GGML_TYPE_Q4_K)->to_float ==
	      quant_scalar(GGML_TYPE_Q4_K)->to_float);
	for (uint32_t t = 0; t < GGML_TYPE_COUNT; t++) {
		const struct quant_packed *pk = quant_table_packed(&qt, t);
		if (pk)
			CHECK(!strncmp(pk->tile.impl, quant_table_tile(&qt, t)->impl,
				       strlen(quant_table_tile(&qt, t)->impl)));
		if (quant_table_tile(&qt, t))
			CHECK(quant_table_tune(&qt, t) == &quant_avx512_get(f)->tune);
	}
#elif defined(__aarch64__)
	if (!quant_neon_get(f))
		SKIP_CPU("NEON", "the NEON descriptor");
	/* one descriptor: every row is its (SDOT or plain), no tiles */
	CHECK_STR(quant_table_get(&qt, GGML_TYPE_Q4_0)->impl,
		  f & PLAT_CPU_DOTPROD ? "neon-dotprod" : "neon");
	CHECK_STR(quant_table_get(&qt, GGML_TYPE_Q8_K)->impl, quant_neon_get(f)->impl);
	CHECK(quant_table_tile(&qt, GGML_TYPE_Q4_0) == NULL);
#else
	SKIP_CPU("AVX512VNNI or NEON", "no SIMD descriptor for this architecture");
#endif
}
