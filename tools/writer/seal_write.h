/*
 * tools/writer/seal_write.h — sealed images written (tools/seal.c, tests):
 * llm/seal.h's format, from the writing side.
 *
 *   seal_create(&c, key, size, sha, chunk_size, random, ...)
 *   for each chunk i: seal_encrypt_chunk(&c, i, chunk, tag[i])
 *   seal_finish(&c, region, region_len, header)   (region: tags, then zeros)
 */
#ifndef TOOLS_WRITER_SEAL_WRITE_H
#define TOOLS_WRITER_SEAL_WRITE_H

#include "../../llm/seal.h"

/*
 * Start a new image for a plaintext of plain_size bytes whose SHA-256 is
 * sha: fills c->hdr (layout, key id, random = kdf_salt || nonce_base ||
 * image_id) and derives the image key. No reader, no memory. 0 or -LLMK_E*.
 */
int seal_create(struct seal_ctx *c, const uint8_t key[SEAL_KEY_SIZE], uint64_t plain_size,
		const uint8_t sha[32], uint32_t chunk_size, const uint8_t random[SEAL_RANDOM_SIZE],
		char *err, size_t errlen);
/* Encrypt chunk i in place (chunk_size bytes, the last one zero-padded by the
 * caller) and write its tag. */
void seal_encrypt_chunk(struct seal_ctx *c, uint64_t i, void *buf, uint8_t tag[SEAL_TAG_SIZE]);
/* Given the region [512, data_off) (tags in chunk order, then zeros), write
 * the 512-byte header with its tag into out. */
void seal_finish(struct seal_ctx *c, const uint8_t *region, size_t region_len,
		 uint8_t out[SEAL_HEADER_SIZE]);

#endif
