/*
 * llm/bind.h — binding a plain model's streamed reads to its measurement.
 *
 * A plain (unsealed) GGUF that streams is read from its disk again on every
 * forward pass, and the host serves the disk. The streamer measures it once
 * at load, reading every byte in order (SHA-256: the attestation digest),
 * and from the same bytes keeps a tag per block of bytes: GHASH (NIST SP
 * 800-38D §6.4) under a hash key drawn from the platform's entropy at load.
 * Key and tags stay in the guest's memory. Every later read of a block is
 * checked against its tag before the pass uses it, so a pass computes with
 * the bytes that were measured, or fails.
 *
 * GHASH under a secret key is almost XOR-universal: a block of L 16-byte
 * units that differs from the one tagged matches the tag with probability at
 * most L / 2^128 over the key (2^-111 for a 64 KiB block), and the host sees
 * neither key nor tags to aim with. Blocks have fixed positions and lengths
 * (block i is bytes [base + i * block, ...) up to end), so a block
 * moved or cut short is a block that differs.
 */
#ifndef LLM_BIND_H
#define LLM_BIND_H

#include "aesgcm.h"
#include "mem.h"
#include "sha256.h"

#include <bearssl.h>

/* A block is 4 KiB, or larger (to 64 KiB) as the model needs to keep
 * its tags at 65536 or fewer (1 MiB): bind_block. */
#define BIND_BLOCK_MIN (4u << 10)
#define BIND_BLOCK_MAX (64u << 10)

struct bind_ctx {
	uint64_t base;            /* file offset of block 0 (a multiple of 512) */
	uint64_t end;             /* the model's extent: bytes from here on are not tagged */
	uint64_t n_blocks;
	uint32_t block;           /* bytes a block (bind_block) */
	uint8_t (*tag)[16];
	const struct aesgcm_ops *fast; /* VPCLMULQDQ GHASH, or NULL: BearSSL's */
	struct aesgcm_key key;    /* fast: its powers of H */
	br_ghash gh;              /* else */
	uint8_t h[16];
	bool sha;                 /* no key: SHA-256 of each block, cut to 16 bytes */
	const char *impl;         /* "ghash_vpclmul512", "ghash_pclmul", ... */
	/* building the tags (bind_feed) */
	uint64_t fed;
	uint8_t y[16], part[16];
	size_t part_len;
	struct llm_sha256 sc;
	/* the first block that failed its check: its index + 1, 0 = none */
	uint64_t bad;
	char why[200];
};

/* The block size for [base, end), and the bytes bind_init allocates. */
uint32_t bind_block(uint64_t base, uint64_t end);
uint64_t bind_bytes(uint64_t base, uint64_t end);
/* Draw a key and allocate the tags for [base, end) (base <= end, base a
 * multiple of 512). 0 or -LLMK_E*. Where the platform has no entropy
 * (aarch64 without RNDR) there is no secret key to be had: the tags are
 * then each block's SHA-256 cut to 128 bits (bind_init_sha), which needs no
 * secret (a changed block that keeps them is a second preimage) but runs
 * at SHA-256's speed. */
int bind_init(struct bind_ctx *b, struct llm_mem *mem, uint64_t base, uint64_t end);
int bind_init_sha(struct bind_ctx *b, struct llm_mem *mem, uint64_t base, uint64_t end);
/* The model's bytes from base on, in order, in pieces of any size. */
void bind_feed(struct bind_ctx *b, const void *p, size_t n);
/* After end - base bytes were fed: the last tag. -LLMK_EINVAL if the count
 * is not that. */
int bind_finish(struct bind_ctx *b);
/* Check blocks [first, first + count) held at buf (block first at buf[0],
 * b->block bytes each; bytes past end ignored). 0, or -LLMK_EAUTH with the
 * block named in b->why (the first failure is kept). Read-only on b except
 * for the failure record: threads may check different blocks at once. */
int bind_check(struct bind_ctx *b, uint64_t first, uint64_t count, const uint8_t *buf);
/* Record block blk as differing from what was measured (the first failure
 * is kept, with its line in b->why); -LLMK_EAUTH. */
int bind_fail(struct bind_ctx *b, uint64_t blk);
/* Zeroize the key and free the tags. */
void bind_free(struct bind_ctx *b, struct llm_mem *mem);

#endif
