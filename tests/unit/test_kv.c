/* tests/unit/test_kv.c — the KV cache: sizes, round trips per type, slices. */
#include "test.h"
#include "../../llm/kv.h"

TEST(kv_sizes_each_cache_type_and_parses_its_name)
{
	uint32_t t;

	CHECK_EQ_INT(kv_bytes(GGML_TYPE_F16, 2, 10, 64), 2 * 2 * 10 * 64 * 2);
	CHECK_EQ_INT(kv_bytes(GGML_TYPE_F32, 1, 1, 8), 2 * 8 * 4);
	CHECK_EQ_INT(kv_bytes(GGML_TYPE_Q8_0, 1, 4, 64), 2 * 4 * 2 * 34);
	CHECK_EQ_INT(kv_bytes(GGML_TYPE_Q8_0, 1, 4, 48), 0); /* not whole blocks */
	CHECK_EQ_INT(kv_bytes(GGML_TYPE_Q4_0, 1, 4, 64), 0);
	CHECK_EQ_INT(kv_type_parse("q8_0", &t), 0);
	CHECK_EQ_INT(t, GGML_TYPE_Q8_0);
	CHECK_STR(kv_type_name(t), "q8_0");
	CHECK_EQ_INT(kv_type_parse("q4_0", &t), -LLMK_EINVAL);
}

static void round_trip(uint32_t type, double tol)
{
	struct llm_mem mem;
	struct kv_cache c;
	float k[64], v[64], out[64], part[64];

	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(kv_init(&c, &mem, type, 3, 5, 64), 0);
	for (uint32_t l = 0; l < 3; l++)
		for (uint32_t p = 0; p < 5; p++) {
			for (int i = 0; i < 64; i++) {
				k[i] = (float)(l * 100 + p * 10 + i) / 64.0f - 3.0f;
				v[i] = -k[i] * 0.5f;
			}
			kv_store(&c, l, p, k, v);
		}
	for (uint32_t l = 0; l < 3; l++)
		for (uint32_t p = 0; p < 5; p++) {
			kv_load_k(&c, l, p, out);
			for (int i = 0; i < 64; i++)
				CHECK_NEAR(out[i], (float)(l * 100 + p * 10 + i) / 64.0f - 3.0f, tol);
			/* slices agree with the whole row, across block edges too */
			kv_load_k_part(&c, l, p, 24, 16, part);
			CHECK(memcmp(part, out + 24, 16 * sizeof(float)) == 0);
			kv_load_v(&c, l, p, out);
			kv_load_v_part(&c, l, p, 8, 40, part);
			CHECK(memcmp(part, out + 8, 40 * sizeof(float)) == 0);
			CHECK_NEAR(out[5], -0.5 * ((l * 100 + p * 10 + 5) / 64.0 - 3.0), tol);
		}
	kv_free(&c);
	CHECK_EQ_INT(mem.used, 0);
}

TEST(kv_round_trip_f32_f16_q8_0)
{
	round_trip(GGML_TYPE_F32, 0);
	round_trip(GGML_TYPE_F16, 4e-3);
	round_trip(GGML_TYPE_Q8_0, 0.03);
}

/* Issue 28 defect 8: a cache of a long context, a few rows of it written:
 * its release and kv_zeroize wipe those rows, not the pages never used. */
TEST(kv_wipes_only_the_rows_written)
{
	struct llm_mem mem;
	struct kv_cache c;
	float k[64], v[64], out[64];
	uint64_t rows = 2 * 3 * 10 * 128; /* K and V, 3 layers, 10 positions, F16 */

	for (int i = 0; i < 64; i++)
		k[i] = v[i] = (float)i + 1;
	llm_mem_init(&mem, 0);
	CHECK_EQ_INT(kv_init(&c, &mem, GGML_TYPE_F16, 3, 1u << 20, 64), 0);
	for (uint32_t l = 0; l < 3; l++)
		for (uint32_t p = 0; p < 10; p++)
			kv_store(&c, l, p, k, v);
	kv_zeroize(&c);
	CHECK_EQ_INT(mem.wiped, rows);
	kv_load_k(&c, 2, 9, out);
	CHECK_EQ_INT(out[63] == 0.0f, 1);
	kv_store(&c, 1, 4, k, v);
	kv_free(&c);
	CHECK_EQ_INT(mem.wiped, rows + 2 * 3 * 5 * 128);
	CHECK_EQ_INT(mem.used, 0);
}

TEST(kv_respects_the_budget)
{
	struct llm_mem mem;
	struct kv_cache c;

	llm_mem_init(&mem, 1 << 16);
	CHECK_EQ_INT(kv_init(&c, &mem, GGML_TYPE_F16, 4, 1024, 64), -LLMK_EBUDGET);
	CHECK_EQ_INT(mem.used, 0);
}
