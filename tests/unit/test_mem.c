/* tests/unit/test_mem.c — llm/mem.c: budget accounting and the arena. */
#include "test.h"

#include "../../llm/mem.h"

TEST(mem_alloc_charges_pages_and_stops_at_the_budget)
{
	struct llm_mem m;
	int err = 1;
	void *a, *b;

	llm_mem_init(&m, 3 * 4096);
	a = llm_mem_alloc(&m, 5000, &err); /* charged as 2 pages */
	CHECK(a != NULL);
	CHECK_EQ_INT(err, 0);
	CHECK_EQ_INT(m.used, 8192);
	b = llm_mem_alloc(&m, 8192, &err);
	CHECK(b == NULL);
	CHECK_EQ_INT(err, -LLMK_EBUDGET);
	CHECK_EQ_INT(m.used, 8192);
	b = llm_mem_alloc(&m, 4096, &err);
	CHECK(b != NULL);
	CHECK_EQ_INT(m.peak, 3 * 4096);
	CHECK_EQ_INT(((unsigned char *)b)[4095], 0);
	llm_mem_free(&m, a, 5000);
	llm_mem_free(&m, b, 4096);
	CHECK_EQ_INT(m.used, 0);
	CHECK_EQ_INT(m.n_allocs, 0);
	CHECK_EQ_INT(m.peak, 3 * 4096);
	llm_mem_reset_peak(&m);
	CHECK_EQ_INT(m.peak, 0);
	CHECK(llm_mem_alloc(&m, 0, &err) == NULL && err == -LLMK_EINVAL);
}

TEST(mem_arena_small_and_big)
{
	struct llm_mem m;
	struct llm_arena a;
	char *s, *big, *after;

	llm_mem_init(&m, 0);
	llm_arena_init(&a, &m);
	s = llm_arena_strndup(&a, "hello world", 5);
	CHECK_STR(s, "hello");
	for (int i = 0; i < 1000; i++) {
		uint64_t *p = llm_arena_alloc(&a, 24, 8);
		CHECK(p && ((uintptr_t)p & 7) == 0 && p[0] == 0 && p[2] == 0);
		p[2] = (uint64_t)i;
	}
	void *al = llm_arena_alloc(&a, 10, 256);
	CHECK(al && ((uintptr_t)al & 255) == 0);
	big = llm_arena_alloc(&a, 3 << 20, 64); /* its own chunk */
	CHECK(big != NULL);
	big[(3 << 20) - 1] = 1;
	after = llm_arena_alloc(&a, 16, 1);
	CHECK(after != NULL);
	CHECK(a.bytes >= (4u << 20));
	CHECK_EQ_INT(m.used, a.bytes);
	CHECK(llm_arena_alloc(&a, 8, 3) == NULL); /* not a power of two */
	llm_arena_free(&a);
	CHECK_EQ_INT(m.used, 0);
	CHECK_EQ_INT(a.bytes, 0);
}

TEST(mem_arena_refuses_a_chunk_over_the_budget)
{
	struct llm_mem m;
	struct llm_arena a;

	llm_mem_init(&m, 1 << 20);
	llm_arena_init(&a, &m);
	CHECK(llm_arena_alloc(&a, 2 << 20, 8) == NULL);
	CHECK_EQ_INT(m.used, 0);
	llm_arena_free(&a);
}
