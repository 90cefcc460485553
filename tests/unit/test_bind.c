/* tests/unit/test_bind.c — llm/bind.c: the tags of a plain model's blocks
 * are a function of the bytes (any split of the feed gives the same), every
 * block's bytes pass their check and a changed byte fails it, naming the
 * block; bytes past the model's end do not count. */
#include "test.h"

#include <stdlib.h>

#include "../../llm/bind.h"

#define BASE 1024u

static void feed_split(struct bind_ctx *b, const uint8_t *p, size_t n, unsigned seed)
{
	while (n) {
		seed = seed * 1103515245u + 12345u;
		size_t k = (seed >> 16) % 5000 + 1;
		if (seed & 0x100)
			k = (seed >> 16) % 17 + 1; /* short pieces straddling the 16-byte units */
		if (k > n)
			k = n;
		bind_feed(b, p, k);
		p += k;
		n -= k;
	}
}

TEST(bind_tags_do_not_depend_on_how_the_bytes_are_fed)
{
	struct llm_mem mem;
	struct bind_ctx b;
	const size_t n = 3 * 4096 + 1000; /* three blocks and a partial one */
	uint8_t *data = malloc(n), (*first)[16] = malloc(4 * 16);

	llm_mem_init(&mem, 0);
	for (size_t i = 0; i < n; i++)
		data[i] = (uint8_t)(i * 131 + (i >> 7));
	CHECK_EQ_INT(bind_init(&b, &mem, BASE, BASE + n), 0);
	CHECK_EQ_INT((int)b.block, 4096);
	CHECK_EQ_INT((int)b.n_blocks, 4);
	fprintf(stderr, "  GHASH: %s\n", b.impl);
	bind_feed(&b, data, n);
	CHECK_EQ_INT(bind_finish(&b), 0);
	memcpy(first, b.tag, 4 * 16);
	for (unsigned seed = 1; seed < 6; seed++) {
		b.fed = 0;
		feed_split(&b, data, n, seed);
		CHECK_EQ_INT(bind_finish(&b), 0);
		CHECK(memcmp(first, b.tag, 4 * 16) == 0);
	}
	b.fed = 0;
	bind_feed(&b, data, n - 1);
	CHECK_EQ_INT(bind_finish(&b), -LLMK_EINVAL); /* a byte short */
	bind_free(&b, &mem);
	CHECK_EQ_INT((int)mem.used, 0);
	free(data);
	free(first);
}

TEST(bind_check_passes_the_bytes_fed_and_fails_a_changed_one)
{
	struct llm_mem mem;
	struct bind_ctx b;
	const size_t n = 3 * 4096 + 1000;
	uint8_t *data = malloc(4 * 4096);

	llm_mem_init(&mem, 0);
	for (size_t i = 0; i < 4 * 4096; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	CHECK_EQ_INT(bind_init(&b, &mem, BASE, BASE + n), 0);
	feed_split(&b, data, n, 9);
	CHECK_EQ_INT(bind_finish(&b), 0);
	CHECK_EQ_INT(bind_check(&b, 0, 4, data), 0);
	CHECK_EQ_INT(bind_check(&b, 2, 2, data + 2 * 4096), 0);
	/* past the end: not the model's, not checked */
	data[n + 5] ^= 1;
	CHECK_EQ_INT(bind_check(&b, 3, 1, data + 3 * 4096), 0);
	CHECK(b.bad == 0 && b.why[0] == 0);
	/* the last byte of block 2 */
	data[3 * 4096 - 1] ^= 0x80;
	CHECK_EQ_INT(bind_check(&b, 1, 1, data + 4096), 0);
	CHECK_EQ_INT(bind_check(&b, 0, 4, data), -LLMK_EAUTH);
	CHECK_EQ_INT((int)b.bad, 3);
	CHECK_STR(b.why, "the disk changed under the model: bytes 0x2400-0x33ff differ from "
			 "what load measured");
	/* the first failure is the one kept */
	data[3 * 4096 - 1] ^= 0x80;
	data[0] ^= 1;
	CHECK_EQ_INT(bind_check(&b, 0, 1, data), -LLMK_EAUTH);
	CHECK_EQ_INT((int)b.bad, 3);
	/* out of range */
	CHECK_EQ_INT(bind_check(&b, 4, 1, data), -LLMK_ERANGE);
	bind_free(&b, &mem);
	free(data);
}

TEST(bind_block_grows_to_keep_the_tags_at_1_mib)
{
	CHECK_EQ_INT((int)bind_block(0, 1u << 20), 4096);
	CHECK_EQ_INT((int)bind_block(0, 256ull << 20), 4096);
	CHECK_EQ_INT((int)bind_block(0, (256ull << 20) + 1), 8192);
	CHECK_EQ_INT((int)bind_block(0, 1ull << 30), 16384);
	CHECK_EQ_INT((int)bind_block(0, 4ull << 30), 65536);
	CHECK_EQ_INT((int)bind_block(0, 1ull << 40), 65536);
	CHECK(bind_bytes(0, 4ull << 30) <= 1u << 20);
}
