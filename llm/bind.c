/*
 * llm/bind.c — binds a plain model's streamed reads to the bytes measured at
 * load: a GHASH tag per block, taken while the model is hashed, checked on
 * every later read of that block (bind.h).
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

static int init_common(struct bind_ctx *b, struct llm_mem *mem, uint64_t base, uint64_t end)
{
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
	return 0;
}

/* No secret key: each block's SHA-256, cut to 16 bytes. */
static int keyless(struct bind_ctx *b)
{
	b->sha = true;
	b->impl = "sha256, no hardware entropy for a GHASH key";
	llm_sha256_init(&b->sc);
	return 0;
}

int bind_init_sha(struct bind_ctx *b, struct llm_mem *mem, uint64_t base, uint64_t end)
{
	int e = init_common(b, mem, base, end);

	return e ? e : keyless(b);
}

int bind_init(struct bind_ctx *b, struct llm_mem *mem, uint64_t base, uint64_t end)
{
	uint32_t f = plat_cpu_features();
	uint8_t k[AESGCM_KEY_SIZE];
	int e = init_common(b, mem, base, end);

	if (e)
		return e;
	if (plat_entropy(k, sizeof k)) {
		aesgcm_zeroize(k, sizeof k);
		return keyless(b);
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

/* Absorb n more bytes of the current block: SHA-256 takes any length; GHASH
 * whole 16-byte units, the rest held in part (units start at the block's
 * start, so part_len = fed % 16). */
static void absorb(struct bind_ctx *b, const uint8_t *s, size_t n)
{
	if (b->sha) {
		llm_sha256_update(&b->sc, s, n);
		return;
	}
	if (b->part_len) {
		size_t k = 16 - b->part_len < n ? 16 - b->part_len : n;
		memcpy(b->part + b->part_len, s, k);
		b->part_len += k;
		s += k;
		n -= k;
		if (b->part_len == 16) {
			mac(b, b->y, b->part, 16);
			b->part_len = 0;
		}
	}
	size_t whole = n / 16 * 16;
	mac(b, b->y, s, whole);
	if (n > whole) {
		memcpy(b->part, s + whole, n - whole);
		b->part_len = n - whole;
	}
}

/* The current block is whole (or the last, short): its tag, and a fresh
 * state for the next. */
static void close_block(struct bind_ctx *b, uint64_t i)
{
	if (b->sha) {
		uint8_t d[32];
		llm_sha256_out(&b->sc, d);
		memcpy(b->tag[i], d, 16);
		llm_sha256_init(&b->sc);
		return;
	}
	mac(b, b->y, b->part, b->part_len);
	b->part_len = 0;
	memcpy(b->tag[i], b->y, 16);
	memset(b->y, 0, 16);
}

void bind_feed(struct bind_ctx *b, const void *p, size_t n)
{
	const uint8_t *s = p;

	while (n) {
		size_t room = b->block - (size_t)(b->fed % b->block), take = n < room ? n : room;

		absorb(b, s, take);
		s += take;
		n -= take;
		b->fed += take;
		if (b->fed % b->block == 0)
			close_block(b, b->fed / b->block - 1);
	}
}

int bind_finish(struct bind_ctx *b)
{
	if (b->fed != b->end - b->base)
		return -LLMK_EINVAL;
	if (b->fed % b->block)
		close_block(b, b->fed / b->block);
	return 0;
}

/* The tag of one block's n bytes, as bind_feed made it. */
static void tag_of(const struct bind_ctx *b, const uint8_t *p, size_t n, uint8_t out[16])
{
	if (b->sha) {
		struct llm_sha256 c;
		uint8_t d[32];
		llm_sha256_init(&c);
		llm_sha256_update(&c, p, n);
		llm_sha256_out(&c, d);
		memcpy(out, d, 16);
	} else {
		memset(out, 0, 16);
		mac(b, out, p, n);
	}
}

int bind_fail(struct bind_ctx *b, uint64_t blk)
{
	uint64_t none = 0, start = b->base + blk * b->block;
	uint64_t len = b->end - start < b->block ? b->end - start : b->block;

	if (__atomic_compare_exchange_n(&b->bad, &none, blk + 1, false, __ATOMIC_SEQ_CST,
					__ATOMIC_SEQ_CST))
		plat_snprintf(b->why, sizeof b->why,
			      "the disk changed under the model: bytes 0x%llx-0x%llx "
			      "differ from what was measured",
			      (unsigned long long)start, (unsigned long long)(start + len - 1));
	return -LLMK_EAUTH;
}

int bind_check(struct bind_ctx *b, uint64_t first, uint64_t count, const uint8_t *buf)
{
	for (uint64_t i = 0; i < count; i++) {
		uint64_t blk = first + i, start = b->base + blk * b->block;
		uint8_t y[16], diff = 0;

		if (blk >= b->n_blocks)
			return -LLMK_ERANGE;
		size_t len = b->end - start < b->block ? (size_t)(b->end - start) : b->block;
		tag_of(b, buf + i * b->block, len, y);
		for (int j = 0; j < 16; j++)
			diff |= (uint8_t)(y[j] ^ b->tag[blk][j]);
		if (diff)
			return bind_fail(b, blk);
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
