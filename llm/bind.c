/*
 * llm/bind.c — tags for a plain model's streamed blocks (bind.h).
 */
#include "bind.h"

uint32_t bind_block(uint64_t base, uint64_t end)
{
	uint32_t b = BIND_BLOCK_MIN;

	while (b < BIND_BLOCK_MAX && (end - base + b - 1) / b > 65536)
		b *= 2;
	return b;
}

static uint64_t blocks(uint64_t base, uint64_t end)
{
	uint32_t b = bind_block(base, end);

	return (end - base + b - 1) / b;
}

uint64_t bind_bytes(uint64_t base, uint64_t end)
{
	uint64_t n = blocks(base, end);

	return (n ? n : 1) * 16;
}

/* y = GHASH continued over p[0, n), a partial last unit zero-padded. */
static void mac(const struct bind_ctx *b, uint8_t y[16], const void *p, size_t n)
{
	if (!n)
		return;
	if (b->fast) {
		struct aesgcm_prefix pre;
		memcpy(pre.x, y, 16);
		pre.len = 0;
		b->fast->prefix(&b->key, &pre, p, n);
		memcpy(y, pre.x, 16);
	} else {
		b->gh(y, b->h, p, n);
	}
}

int bind_init(struct bind_ctx *b, struct llm_mem *mem, uint64_t base, uint64_t end)
{
	uint32_t f = plat_cpu_features();
	uint8_t k[AESGCM_KEY_SIZE];
	int e = 0;

	memset(b, 0, sizeof *b);
	if (base > end || base % 512)
		return -LLMK_EINVAL;
	b->base = base;
	b->end = end;
	b->n_blocks = blocks(base, end);
	b->block = bind_block(base, end);
	if (!(b->tag = llm_mem_alloc(mem, (size_t)bind_bytes(base, end), &e)))
		return e;
	if ((e = plat_entropy(k, sizeof k))) {
		llm_mem_free(mem, b->tag, (size_t)bind_bytes(base, end));
		b->tag = NULL;
		return e;
	}
	b->fast = aesgcm_find(f);
	if (b->fast) {
		b->fast->setkey(&b->key, k);
		b->impl = b->fast->ghash_name;
	} else {
		memcpy(b->h, k, 16);
		b->gh = (f & PLAT_CPU_PCLMUL) ? br_ghash_pclmul_get() : 0;
		b->impl = b->gh ? "ghash_pclmul" : "ghash_ctmul64";
		if (!b->gh)
			b->gh = br_ghash_ctmul64;
	}
	aesgcm_zeroize(k, sizeof k);
	return 0;
}

void bind_feed(struct bind_ctx *b, const void *p, size_t n)
{
	const uint8_t *s = p;

	while (n) {
		size_t room = b->block - (size_t)(b->fed % b->block), take = n < room ? n : room;
		size_t left = take;

		/* units start at the block's start (part_len = fed % 16) */
		if (b->part_len) {
			size_t k = 16 - b->part_len < left ? 16 - b->part_len : left;
			memcpy(b->part + b->part_len, s, k);
			b->part_len += k;
			s += k;
			left -= k;
			if (b->part_len == 16) {
				mac(b, b->y, b->part, 16);
				b->part_len = 0;
			}
		}
		size_t whole = left / 16 * 16;
		mac(b, b->y, s, whole);
		s += whole;
		left -= whole;
		if (left) {
			memcpy(b->part, s, left);
			b->part_len = left;
			s += left;
		}
		b->fed += take;
		n -= take;
		if (b->fed % b->block == 0) {
			memcpy(b->tag[b->fed / b->block - 1], b->y, 16);
			memset(b->y, 0, 16);
		}
	}
}

int bind_finish(struct bind_ctx *b)
{
	if (b->fed != b->end - b->base)
		return -LLMK_EINVAL;
	if (b->fed % b->block) {
		mac(b, b->y, b->part, b->part_len);
		memcpy(b->tag[b->fed / b->block], b->y, 16);
	}
	memset(b->y, 0, 16);
	memset(b->part, 0, 16);
	b->part_len = 0;
	return 0;
}

int bind_check(struct bind_ctx *b, uint64_t first, uint64_t count, const uint8_t *buf)
{
	for (uint64_t i = 0; i < count; i++) {
		uint64_t blk = first + i, start = b->base + blk * b->block;
		uint8_t y[16] = {0}, diff = 0;

		if (blk >= b->n_blocks)
			return -LLMK_ERANGE;
		size_t len = b->end - start < b->block ? (size_t)(b->end - start) : b->block;
		mac(b, y, buf + i * b->block, len);
		for (int j = 0; j < 16; j++)
			diff |= (uint8_t)(y[j] ^ b->tag[blk][j]);
		if (diff) {
			uint64_t none = 0;
			if (__atomic_compare_exchange_n(&b->bad, &none, blk + 1, false, __ATOMIC_SEQ_CST,
							__ATOMIC_SEQ_CST))
				plat_snprintf(b->why, sizeof b->why,
					      "the disk changed under the model: bytes 0x%llx-0x%llx "
					      "differ from what load measured",
					      (unsigned long long)start,
					      (unsigned long long)(start + len - 1));
			return -LLMK_EAUTH;
		}
	}
	return 0;
}

void bind_free(struct bind_ctx *b, struct llm_mem *mem)
{
	if (b->tag)
		llm_mem_free(mem, b->tag, (size_t)bind_bytes(b->base, b->end));
	aesgcm_zeroize(&b->key, sizeof b->key);
	aesgcm_zeroize(b->h, sizeof b->h);
	memset(b, 0, sizeof *b);
}
