/*
 * llm/seal.h — sealed model images: a GGUF encrypted and authenticated in
 * fixed-size chunks with AES-256-GCM (BearSSL), readable a range at a time.
 *
 * The format is docs/sealed-format.md; in short:
 *
 *   [0, 512)            header (fields below; bytes [0, 496) are "H", the
 *                       authenticated header; [496, 512) is the header tag)
 *   [512, data_off)     tag table: 16 bytes per chunk, then zeros up to
 *                       data_off (a multiple of 4096)
 *   [data_off, +n*cs)   chunk i at data_off + i*cs: cs bytes of ciphertext of
 *                       the GGUF's bytes [i*cs, (i+1)*cs), the last chunk
 *                       zero-padded before encryption
 *
 *   image key  = HKDF-SHA256(IKM = key, salt = kdf_salt,
 *                            info = "llmk-seal v1 aes-256-gcm" || image_id)
 *   chunk i    : nonce = nonce_base || be32(i), AAD = H || be32(i)
 *   header tag : nonce = nonce_base || be32(0xffffffff),
 *                AAD = H || bytes [512, data_off), empty plaintext
 *
 * So a changed header field, tag, chunk, chunk order, chunk count or a header
 * from another image each fails a GCM tag; the image size is fixed by the
 * header, so truncation and appended bytes are refused before any key use.
 *
 * Reading: seal_open() checks the header, the key id, the header tag (over the
 * whole tag table) and keeps the tags; seal_reader() then gives an llm_reader
 * over the plaintext GGUF that decrypts the chunks each read needs. The layer
 * streamer reads ciphertext itself (512-aligned, async) and calls
 * seal_decrypt_chunks() on its slot.
 *
 * Secrets: keys and plaintext are zeroized on release; tag checks and key
 * parsing are constant-time.
 */
#ifndef LLM_SEAL_H
#define LLM_SEAL_H

#include "aesgcm.h"
#include "mem.h"
#include "reader.h"

#include <bearssl.h>

#include "sha256.h"

#define SEAL_MAGIC "LLMKSEAL"
#define SEAL_VERSION 1u
#define SEAL_HEADER_SIZE 512u
#define SEAL_AUTH_SIZE 496u           /* H: header bytes covered as AAD */
#define SEAL_TAG_SIZE 16u
#define SEAL_KEY_SIZE 32u             /* AES-256 */
#define SEAL_KEY_ID_SIZE 16u
#define SEAL_SALT_SIZE 32u
#define SEAL_NONCE_BASE_SIZE 8u
#define SEAL_IMAGE_ID_SIZE 16u
#define SEAL_DATA_ALIGN 4096u         /* data_off alignment; chunks stay 512-aligned */
#define SEAL_CHUNK_MIN (4u << 10)
#define SEAL_CHUNK_MAX (16u << 20)
#define SEAL_CHUNK_DEFAULT (64u << 10)
#define SEAL_HEADER_CHUNK 0xffffffffu /* nonce index of the header tag; chunks stay below */
#define SEAL_AEAD_AES256GCM 1u
#define SEAL_KDF_HKDF_SHA256 1u
/* Randomness one image needs: kdf_salt, nonce_base, image_id. */
#define SEAL_RANDOM_SIZE (SEAL_SALT_SIZE + SEAL_NONCE_BASE_SIZE + SEAL_IMAGE_ID_SIZE)

/* The header's fields (docs/sealed-format.md "Header"), host byte order. */
struct seal_header {
	uint32_t version;
	uint32_t header_size;
	uint32_t chunk_size;
	uint32_t flags;
	uint64_t plain_size;   /* bytes of the plaintext GGUF */
	uint64_t n_chunks;     /* ceil(plain_size / chunk_size) */
	uint64_t tag_off;      /* 512 */
	uint64_t data_off;     /* align_up(512 + 16 * n_chunks, 4096) */
	uint64_t image_size;   /* data_off + n_chunks * chunk_size: exactly the image's size */
	uint8_t plain_sha256[32];
	uint8_t key_id[SEAL_KEY_ID_SIZE];
	uint8_t kdf_salt[SEAL_SALT_SIZE];
	uint8_t nonce_base[SEAL_NONCE_BASE_SIZE];
	uint8_t image_id[SEAL_IMAGE_ID_SIZE];
	uint32_t aead;         /* SEAL_AEAD_AES256GCM */
	uint32_t kdf;          /* SEAL_KDF_HKDF_SHA256 */
	uint8_t header_tag[SEAL_TAG_SIZE];
};

/*
 * Parse and check a header from its first n bytes (n >= 512 needed). No key:
 * checks magic, version, sizes and that the layout fields agree with each
 * other. 0; -LLMK_ENOENT if the magic is absent (not a sealed image);
 * -LLMK_EFORMAT / -LLMK_ENOTSUP with one line in err otherwise.
 */
int seal_header_parse(const uint8_t *b, size_t n, struct seal_header *h, char *err,
		      size_t errlen);
/* The same, reading the first 512 bytes through r (fewer if r is shorter:
 * then -LLMK_EFORMAT if the magic is there, else -LLMK_ENOENT). */
int seal_probe(const struct llm_reader *r, struct seal_header *out);

/* key id = first 16 bytes of SHA-256("llmk-seal key-id v1" || key). Public. */
void seal_key_id(const uint8_t key[SEAL_KEY_SIZE], uint8_t id[SEAL_KEY_ID_SIZE]);
/* 64 hex digits (either case), optionally followed by whitespace only, into
 * key. Constant-time in the digits. 0 or -LLMK_EINVAL (key left zeroed). */
int seal_key_parse_hex(const char *s, size_t n, uint8_t key[SEAL_KEY_SIZE]);
/* Lower-case hex of n bytes into out (2n+1 bytes). Returns out. For public
 * values (ids, digests); not for keys. */
char *seal_hex(const uint8_t *b, size_t n, char *out);
/* Overwrite n bytes with zeros in a way the compiler keeps. */
void seal_zeroize(void *p, size_t n);

/*
 * Where the key comes from. Today: a raw key (shell `unseal KEYHEX`, a key
 * file); later attestation-bound key release fills the same slot. get()
 * writes the key for the image whose header is h, or returns -LLMK_ENOENT /
 * -LLMK_EAUTH with one line in err. The caller zeroizes key after use.
 */
struct seal_keysrc {
	int (*get)(void *ctx, const struct seal_header *h, uint8_t key[SEAL_KEY_SIZE], char *err,
		   size_t errlen);
	void *ctx;
	const char *what; /* "development key from `unseal`" for messages and `info` */
	bool insecure;    /* a development key: info/version say so */
};
/* A key source over a raw key held by the caller (key must outlive ks). */
void seal_keysrc_raw(struct seal_keysrc *ks, const uint8_t *key, const char *what,
		     bool insecure);

/* An open sealed image (caller-owned; must not move between open and close). */
struct seal_ctx {
	struct seal_header hdr;
	uint8_t hdr_raw[SEAL_HEADER_SIZE];
	struct llm_reader under;      /* the ciphertext image */
	struct llm_mem *mem;
	br_aes_gen_ctr_keys aes;      /* image key schedule */
	br_gcm_context gcm;           /* initialised template; copied per chunk */
	/* chunks: "aes_vaes512" / "aes_vaes256" / "aes_x86ni" / "aes_ct64" and
	 * "ghash_vpclmul512" / "ghash_vpclmul256" / "ghash_pclmul" / "ghash_ctmul64" */
	const char *aes_impl;
	const char *ghash_impl;
	/* The chunks' fast path (llm/aesgcm.h), NULL when the CPU has none; its
	 * key and the GHASH of H are set with the image key, then only read. */
	const struct aesgcm_ops *fast;
	struct aesgcm_key fast_key;
	struct aesgcm_prefix fast_h;
	uint8_t *region;              /* bytes [512, data_off): the tag table */
	size_t region_len;
	uint8_t *chunk;               /* one chunk of plaintext (cache for read()) */
	uint64_t chunk_idx;           /* chunk held in `chunk`, or UINT64_MAX */
	struct llm_sha256 sha;        /* whole-file digest, fed in chunk order */
	uint64_t sha_next;            /* next chunk the digest wants */
	int failed;                   /* sticky: first -LLMK_EAUTH, set atomically */
	char err[200];                /* that failure's message */
};

/*
 * Open the sealed image readable through under (its size must be exactly
 * the header's image_size) with the key from ks. Allocates the tag table and
 * one chunk buffer from mem. On error returns -LLMK_E* with one line in err
 * (wrong key, truncated, appended bytes, header or tag table modified, ...)
 * and holds nothing.
 */
int seal_open(struct seal_ctx *c, const struct llm_reader *under, const struct seal_keysrc *ks,
	      struct llm_mem *mem, char *err, size_t errlen);
/* Zeroize and free everything (keys, cached plaintext, tags). */
void seal_close(struct seal_ctx *c);
/*
 * For loaders: if *rd holds a sealed image, open it into c (seal_open) and
 * replace *rd with the plaintext reader (seal_reader): returns 1. Returns 0
 * and leaves *rd alone when it is not sealed; -LLMK_E* with one line in err
 * when it is sealed but cannot be opened (ks NULL: "no key loaded").
 */
int seal_wrap(struct seal_ctx *c, struct llm_reader *rd, const struct seal_keysrc *ks,
	      struct llm_mem *mem, char *err, size_t errlen);

/*
 * An llm_reader over the plaintext GGUF (size = plain_size). read(off, n)
 * reads and verifies every chunk the range touches; on any failure the
 * output is zeroed and -LLMK_EAUTH (or the underlying -LLMK_EIO) returned,
 * seal_error() says why, and every later read fails the same way. When the
 * chunks have all passed through read() in order 0..n-1 (e.g. the whole file
 * read front to back), the plaintext SHA-256 is checked against the header;
 * a mismatch fails that read. Not thread-safe.
 */
void seal_reader(struct seal_ctx *c, struct llm_reader *out);
/* The first failure's message ("" if none). */
const char *seal_error(const struct seal_ctx *c);

/* Byte range of chunks [first, first+n) in the image: 512-aligned. */
uint64_t seal_chunk_offset(const struct seal_ctx *c, uint64_t first);
/* Chunks covering plaintext [off, off+len): *first and *count. */
void seal_chunk_span(const struct seal_ctx *c, uint64_t off, uint64_t len, uint64_t *first,
		     uint64_t *count);
/*
 * Decrypt in place n whole chunks of ciphertext (n * chunk_size bytes, as
 * read from seal_chunk_offset(c, first)). 0, or -LLMK_EAUTH with buf zeroed
 * (all of it) and the reason recorded for seal_error(). Safe to call from
 * several threads at once on different buffers (c is only read, except
 * for recording the first failure). Does not feed the whole-file digest.
 */
int seal_decrypt_chunks(struct seal_ctx *c, uint64_t first, uint64_t n, void *buf);
/*
 * Read, verify and hash every chunk (ignores the reader's cache and state):
 * 0, or -LLMK_E* with one line in err. cancel (may be NULL) is asked
 * between chunks; when it returns true, -LLMK_ECANCEL. For `seal inspect
 * --key`, the shell's `unseal --verify` and tests.
 */
int seal_verify_all(struct seal_ctx *c, bool (*cancel)(void *arg), void *arg, char *err,
		    size_t errlen);

/* ---- the format's pieces a writer shares (tools/writer/seal_write.c) ---- */
/* Chunk sizes: powers of two in [SEAL_CHUNK_MIN, SEAL_CHUNK_MAX]. */
bool seal_chunk_size_ok(uint32_t chunk_size);
/* The largest plaintext whose chunk indices stay below SEAL_HEADER_CHUNK. */
uint64_t seal_max_plain(uint32_t chunk_size);
/* n_chunks, tag_off, data_off and image_size from plain_size and
 * chunk_size (docs/sealed-format.md "Layout"). */
void seal_header_layout(struct seal_header *h);
/* All 512 header bytes from h, the tag field too (seal_header_parse's
 * inverse). */
void seal_header_write(const struct seal_header *h, uint8_t out[SEAL_HEADER_SIZE]);
/* The image key from key (HKDF over c->hdr's salt and image id) into c's
 * AES/GHASH (and fast path); c->hdr and c->hdr_raw must be set. */
void seal_set_image_key(struct seal_ctx *c, const uint8_t key[SEAL_KEY_SIZE]);
/* A GCM run for nonce index idx with AAD = H || extra, ready for
 * br_gcm_run (docs/sealed-format.md "Encryption"); c is only read, so
 * several threads may do this at once. seal_chunk_gcm: chunk i's run (extra
 * = be32(i)). */
void seal_gcm_start(const struct seal_ctx *c, br_gcm_context *g, uint32_t idx,
		    const void *extra, size_t extra_len);
void seal_chunk_gcm(const struct seal_ctx *c, br_gcm_context *g, uint64_t i);

#endif
