/* tests/unit/test_bind.c — llm/bind.c: the tags of a plain model's blocks
 * are a function of the bytes (any split of the feed gives the same), every
 * block's bytes pass their check and a changed byte fails it, naming the
 * block; bytes past the model's end do not count. Both kinds of tag: GHASH
 * under a drawn key, and the keyless SHA-256 for platforms without entropy. */
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

typedef int (*bind_init_fn)(struct bind_ctx *, struct llm_mem *, uint64_t, uint64_t);

static void tags_do_not_depend_on_the_feed(bind_init_fn init)
{
	struct llm_mem mem;
	struct bind_ctx b;
	const size_t n = 3 * 4096 + 1000; /* three blocks and a partial one */
	uint8_t *data = malloc(n), (*first)[16] = malloc(4 * 16);

	llm_mem_init(&mem, 0);
	for (size_t i = 0; i < n; i++)
		data[i] = (uint8_t)(i * 131 + (i >> 7));
	CHECK_EQ_INT(init(&b, &mem, BASE, BASE + n), 0);
	CHECK_EQ_INT((int)b.block, 4096);
	CHECK_EQ_INT((int)b.n_blocks, 4);
	fprintf(stderr, "  tags: %s\n", b.impl);
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

static void check_passes_the_bytes_fed_only(bind_init_fn init)
{
	struct llm_mem mem;
	struct bind_ctx b;
	const size_t n = 3 * 4096 + 1000;
	uint8_t *data = malloc(4 * 4096);

	llm_mem_init(&mem, 0);
	for (size_t i = 0; i < 4 * 4096; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	CHECK_EQ_INT(init(&b, &mem, BASE, BASE + n), 0);
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
			 "what was measured");
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

TEST(bind_tags_do_not_depend_on_how_the_bytes_are_fed)
{
	tags_do_not_depend_on_the_feed(bind_init);
	tags_do_not_depend_on_the_feed(bind_init_sha);
}

TEST(bind_check_passes_the_bytes_fed_and_fails_a_changed_one)
{
	check_passes_the_bytes_fed_only(bind_init);
	check_passes_the_bytes_fed_only(bind_init_sha);
}

/* The keyless tag is the block's SHA-256, cut: a value anyone can compute. */
TEST(bind_keyless_tag_is_the_blocks_sha256)
{
	struct llm_mem mem;
	struct bind_ctx b;
	uint8_t data[4096 + 100], d[32];
	struct llm_sha256 c;

	llm_mem_init(&mem, 0);
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i ^ 0x5c);
	CHECK_EQ_INT(bind_init_sha(&b, &mem, 0, sizeof data), 0);
	feed_split(&b, data, sizeof data, 3);
	CHECK_EQ_INT(bind_finish(&b), 0);
	llm_sha256_init(&c);
	llm_sha256_update(&c, data + 4096, 100);
	llm_sha256_out(&c, d);
	CHECK(memcmp(b.tag[1], d, 16) == 0);
	bind_free(&b, &mem);
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
