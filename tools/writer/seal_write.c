/*
 * tools/writer/seal_write.c — writing a sealed image (seal_write.h): the
 * header, each chunk's encryption and tag, the header tag. The format's
 * pieces (layout, header bytes, key schedule, nonces and AAD) are
 * llm/seal.c's, shared with the reader; the kernel only reads.
 */
#include "seal_write.h"

int seal_create(struct seal_ctx *c, const uint8_t key[SEAL_KEY_SIZE], uint64_t plain_size,
		const uint8_t sha[32], uint32_t chunk_size, const uint8_t random[SEAL_RANDOM_SIZE],
		char *err, size_t errlen)
{
	struct seal_header *h = &c->hdr;

	memset(c, 0, sizeof *c);
	c->chunk_idx = UINT64_MAX;
	if (!seal_chunk_size_ok(chunk_size)) {
		plat_snprintf(err, errlen, "seal: chunk size %u is not a power of two in [%u, %u]",
			      chunk_size, SEAL_CHUNK_MIN, SEAL_CHUNK_MAX);
		return -LLMK_EINVAL;
	}
	if (plain_size == 0 || plain_size > seal_max_plain(chunk_size)) {
		plat_snprintf(err, errlen, "seal: plaintext of %llu bytes out of range [1, %llu]",
			      (unsigned long long)plain_size,
			      (unsigned long long)seal_max_plain(chunk_size));
		return -LLMK_ERANGE;
	}
	h->version = SEAL_VERSION;
	h->header_size = SEAL_HEADER_SIZE;
	h->chunk_size = chunk_size;
	h->plain_size = plain_size;
	seal_header_layout(h);
	memcpy(h->plain_sha256, sha, 32);
	seal_key_id(key, h->key_id);
	memcpy(h->kdf_salt, random, SEAL_SALT_SIZE);
	memcpy(h->nonce_base, random + SEAL_SALT_SIZE, SEAL_NONCE_BASE_SIZE);
	memcpy(h->image_id, random + SEAL_SALT_SIZE + SEAL_NONCE_BASE_SIZE, SEAL_IMAGE_ID_SIZE);
	h->aead = SEAL_AEAD_AES256GCM;
	h->kdf = SEAL_KDF_HKDF_SHA256;
	seal_header_write(h, c->hdr_raw);
	seal_set_image_key(c, key);
	return 0;
}

void seal_encrypt_chunk(struct seal_ctx *c, uint64_t i, void *buf, uint8_t tag[SEAL_TAG_SIZE])
{
	br_gcm_context g;

	seal_chunk_gcm(c, &g, i);
	br_gcm_run(&g, 1, buf, c->hdr.chunk_size);
	br_gcm_get_tag(&g, tag);
	seal_zeroize(&g, sizeof g);
}

void seal_finish(struct seal_ctx *c, const uint8_t *region, size_t region_len,
		 uint8_t out[SEAL_HEADER_SIZE])
{
	br_gcm_context g;

	seal_gcm_start(c, &g, SEAL_HEADER_CHUNK, region, region_len);
	br_gcm_get_tag(&g, c->hdr.header_tag);
	seal_zeroize(&g, sizeof g);
	seal_header_write(&c->hdr, c->hdr_raw);
	memcpy(out, c->hdr_raw, SEAL_HEADER_SIZE);
}
