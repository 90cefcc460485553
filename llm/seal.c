/*
 * llm/seal.c — sealed model images (llm/seal.h, docs/sealed-format.md).
 *
 * AES-256-GCM through BearSSL's generic GCM over the fastest constant-time
 * pieces BearSSL finds at run time: AES-NI CTR and PCLMUL GHASH on x86 when
 * the CPU has them, else aes_ct64 and ghash_ctmul64 (pure integer, also
 * constant-time). Only br_* calls, so the kernel's freestanding BearSSL works.
 * The bulk work, decrypting chunks, goes through llm/aesgcm.h instead when
 * the CPU has an implementation there (VAES + VPCLMULQDQ on zmm or ymm:
 * several times BearSSL's speed); the same tags, the same errors.
 */
#include "seal.h"
#include "sha256.h"
#include "codec.h"

static const char seal_kdf_info[] = "llmk-seal v1 aes-256-gcm";
static const char seal_keyid_label[] = "llmk-seal key-id v1";

/* ---- header fields, offsets as in docs/sealed-format.md ---- */
enum {
	HO_MAGIC = 0, HO_VERSION = 8, HO_HEADER_SIZE = 12, HO_CHUNK_SIZE = 16, HO_FLAGS = 20,
	HO_PLAIN_SIZE = 24, HO_N_CHUNKS = 32, HO_TAG_OFF = 40, HO_DATA_OFF = 48,
	HO_IMAGE_SIZE = 56, HO_SHA = 64, HO_KEY_ID = 96, HO_SALT = 112, HO_NONCE = 144,
	HO_IMAGE_ID = 152, HO_AEAD = 168, HO_KDF = 172, HO_RESERVED = 176,
	HO_TAG = SEAL_AUTH_SIZE,
};
_Static_assert(HO_TAG + SEAL_TAG_SIZE == SEAL_HEADER_SIZE, "header layout");
_Static_assert(HO_KDF + 4 == HO_RESERVED, "header layout");

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void seal_zeroize(void *p, size_t n)
{
	if (!p)
		return;
	memset(p, 0, n);
	/* The asm claims to read the memory, so the stores cannot be dropped. */
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

char *seal_hex(const uint8_t *b, size_t n, char *out)
{
	return hex_encode(b, n, out);
}

/* The layout every field must agree with (docs/sealed-format.md "Layout"). */
void seal_header_layout(struct seal_header *h)
{
	h->n_chunks = (h->plain_size + h->chunk_size - 1) / h->chunk_size;
	h->tag_off = SEAL_HEADER_SIZE;
	h->data_off = (h->tag_off + h->n_chunks * SEAL_TAG_SIZE + SEAL_DATA_ALIGN - 1) &
		      ~(uint64_t)(SEAL_DATA_ALIGN - 1);
	h->image_size = h->data_off + h->n_chunks * h->chunk_size;
}

bool seal_chunk_size_ok(uint32_t cs)
{
	return cs >= SEAL_CHUNK_MIN && cs <= SEAL_CHUNK_MAX && (cs & (cs - 1)) == 0;
}

/* Largest plaintext whose chunk indices stay below SEAL_HEADER_CHUNK. */
uint64_t seal_max_plain(uint32_t cs)
{
	return (uint64_t)(SEAL_HEADER_CHUNK - 1) * cs;
}

static int check_layout(const struct seal_header *h, char *err, size_t errlen)
{
	struct seal_header want = *h;

	if (h->plain_size == 0 || h->plain_size > seal_max_plain(h->chunk_size)) {
		plat_snprintf(err, errlen, "seal: header plain_size %llu out of range [1, %llu]",
			      (unsigned long long)h->plain_size,
			      (unsigned long long)seal_max_plain(h->chunk_size));
		return -LLMK_EFORMAT;
	}
	seal_header_layout(&want);
	const struct { const char *name; uint64_t got, want; } f[] = {
		{"n_chunks", h->n_chunks, want.n_chunks},
		{"tag_off", h->tag_off, want.tag_off},
		{"data_off", h->data_off, want.data_off},
		{"image_size", h->image_size, want.image_size},
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (f[i].got != f[i].want) {
			plat_snprintf(err, errlen,
				      "seal: header %s is %llu but plain_size %llu in chunks of %u "
				      "makes it %llu",
				      f[i].name, (unsigned long long)f[i].got,
				      (unsigned long long)h->plain_size, h->chunk_size,
				      (unsigned long long)f[i].want);
			return -LLMK_EFORMAT;
		}
	return 0;
}

int seal_header_parse(const uint8_t *b, size_t n, struct seal_header *h, char *err,
		      size_t errlen)
{
	if (n < 8 || memcmp(b, SEAL_MAGIC, 8) != 0) {
		plat_snprintf(err, errlen, "seal: not a sealed image (no \"%s\" magic)", SEAL_MAGIC);
		return -LLMK_ENOENT;
	}
	if (n < SEAL_HEADER_SIZE) {
		plat_snprintf(err, errlen, "seal: header truncated (%zu of %u bytes)", n,
			      SEAL_HEADER_SIZE);
		return -LLMK_EFORMAT;
	}
	memset(h, 0, sizeof *h);
	h->version = get32(b + HO_VERSION);
	h->header_size = get32(b + HO_HEADER_SIZE);
	h->chunk_size = get32(b + HO_CHUNK_SIZE);
	h->flags = get32(b + HO_FLAGS);
	h->plain_size = get64(b + HO_PLAIN_SIZE);
	h->n_chunks = get64(b + HO_N_CHUNKS);
	h->tag_off = get64(b + HO_TAG_OFF);
	h->data_off = get64(b + HO_DATA_OFF);
	h->image_size = get64(b + HO_IMAGE_SIZE);
	memcpy(h->plain_sha256, b + HO_SHA, 32);
	memcpy(h->key_id, b + HO_KEY_ID, SEAL_KEY_ID_SIZE);
	memcpy(h->kdf_salt, b + HO_SALT, SEAL_SALT_SIZE);
	memcpy(h->nonce_base, b + HO_NONCE, SEAL_NONCE_BASE_SIZE);
	memcpy(h->image_id, b + HO_IMAGE_ID, SEAL_IMAGE_ID_SIZE);
	h->aead = get32(b + HO_AEAD);
	h->kdf = get32(b + HO_KDF);
	memcpy(h->header_tag, b + HO_TAG, SEAL_TAG_SIZE);

	if (h->version != SEAL_VERSION) {
		plat_snprintf(err, errlen, "seal: header version %u not supported (want %u)",
			      h->version, SEAL_VERSION);
		return -LLMK_ENOTSUP;
	}
	if (h->header_size != SEAL_HEADER_SIZE || h->flags != 0 ||
	    h->aead != SEAL_AEAD_AES256GCM || h->kdf != SEAL_KDF_HKDF_SHA256) {
		plat_snprintf(err, errlen,
			      "seal: header fields not v1 (header_size %u, flags %#x, aead %u, "
			      "kdf %u; want 512, 0, 1, 1)",
			      h->header_size, h->flags, h->aead, h->kdf);
		return -LLMK_EFORMAT;
	}
	if (!seal_chunk_size_ok(h->chunk_size)) {
		plat_snprintf(err, errlen,
			      "seal: header chunk_size %u is not a power of two in [%u, %u]",
			      h->chunk_size, SEAL_CHUNK_MIN, SEAL_CHUNK_MAX);
		return -LLMK_EFORMAT;
	}
	return check_layout(h, err, errlen);
}

int seal_probe(const struct llm_reader *r, struct seal_header *out)
{
	uint8_t b[SEAL_HEADER_SIZE];
	size_t n = r->size < sizeof b ? (size_t)r->size : sizeof b;
	char err[8];

	if (n < 8)
		return -LLMK_ENOENT;
	int e = r->read(r->ctx, 0, b, n);
	if (e)
		return e;
	return seal_header_parse(b, n, out, err, sizeof err);
}

/* ---- keys ---- */
void seal_key_id(const uint8_t key[SEAL_KEY_SIZE], uint8_t id[SEAL_KEY_ID_SIZE])
{
	br_sha256_context s;
	uint8_t d[32];

	br_sha256_init(&s);
	br_sha256_update(&s, seal_keyid_label, sizeof seal_keyid_label - 1);
	br_sha256_update(&s, key, SEAL_KEY_SIZE);
	br_sha256_out(&s, d);
	memcpy(id, d, SEAL_KEY_ID_SIZE);
	seal_zeroize(&s, sizeof s);
}

/* 0..15 for a hex digit, else 0 with *bad set; no branch or index on c
 * (hex_digit is constant time). */
static uint32_t hex_nibble(uint32_t c, uint32_t *bad)
{
	uint32_t v = (uint32_t)hex_digit((int)c);

	*bad |= v >> 31;
	return v & 15u;
}

int seal_key_parse_hex(const char *s, size_t n, uint8_t key[SEAL_KEY_SIZE])
{
	uint32_t bad = 0;

	if (n < 2 * SEAL_KEY_SIZE)
		bad = 1;
	for (size_t i = 0; i < SEAL_KEY_SIZE && !bad; i++) {
		uint32_t hi = hex_nibble((unsigned char)s[2 * i], &bad);
		uint32_t lo = hex_nibble((unsigned char)s[2 * i + 1], &bad);
		key[i] = (uint8_t)(hi << 4 | lo);
	}
	for (size_t i = 2 * SEAL_KEY_SIZE; i < n && !bad; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			bad = 1;
	if (bad) {
		seal_zeroize(key, SEAL_KEY_SIZE);
		return -LLMK_EINVAL;
	}
	return 0;
}

static int raw_get(void *ctx, const struct seal_header *h, uint8_t key[SEAL_KEY_SIZE], char *err,
		   size_t errlen)
{
	(void)h;
	(void)err;
	(void)errlen;
	memcpy(key, ctx, SEAL_KEY_SIZE);
	return 0;
}

void seal_keysrc_raw(struct seal_keysrc *ks, const uint8_t *key, const char *what, bool insecure)
{
	ks->get = raw_get;
	ks->ctx = (void *)key;
	ks->what = what;
	ks->insecure = insecure;
}

/*
 * The image key (HKDF-SHA256, RFC 5869) and the AES/GHASH implementations
 * BearSSL finds best on this CPU; sets up c->aes and the GCM template.
 * BearSSL asks CPUID itself, so AES-NI and PCLMULQDQ are taken only where
 * plat_cpu_features() has them too: with LLMK_CPU_MASK hiding them, its
 * constant-time rows run, as on a CPU without them.
 */
void seal_set_image_key(struct seal_ctx *c, const uint8_t key[SEAL_KEY_SIZE])
{
	br_hkdf_context hk;
	uint8_t ik[SEAL_KEY_SIZE];
	uint32_t f = plat_cpu_features();
	const br_block_ctr_class *aes = (f & PLAT_CPU_AES) ? br_aes_x86ni_ctr_get_vtable() : NULL;
	br_ghash gh = (f & PLAT_CPU_PCLMUL) ? br_ghash_pclmul_get() : 0;

	uint8_t info[sizeof seal_kdf_info - 1 + SEAL_IMAGE_ID_SIZE];
	memcpy(info, seal_kdf_info, sizeof seal_kdf_info - 1);
	memcpy(info + sizeof seal_kdf_info - 1, c->hdr.image_id, SEAL_IMAGE_ID_SIZE);
	br_hkdf_init(&hk, &br_sha256_vtable, c->hdr.kdf_salt, SEAL_SALT_SIZE);
	br_hkdf_inject(&hk, key, SEAL_KEY_SIZE);
	br_hkdf_flip(&hk);
	br_hkdf_produce(&hk, info, sizeof info, ik, sizeof ik);
	seal_zeroize(&hk, sizeof hk);

	c->aes_impl = aes ? "aes_x86ni" : "aes_ct64";
	if (!aes)
		aes = &br_aes_ct64_ctr_vtable;
	c->ghash_impl = gh ? "ghash_pclmul" : "ghash_ctmul64";
	if (!gh)
		gh = br_ghash_ctmul64;
	aes->init(&c->aes.vtable, ik, sizeof ik);
	br_gcm_init(&c->gcm, &c->aes.vtable, gh);

	/* Every chunk's AAD starts with H, 31 whole blocks: hashed once here. */
	_Static_assert(SEAL_AUTH_SIZE % 16 == 0, "H is whole GHASH blocks");
	c->fast = aesgcm_find(f);
	if (c->fast) {
		c->fast->setkey(&c->fast_key, ik);
		memset(&c->fast_h, 0, sizeof c->fast_h);
		c->fast->prefix(&c->fast_key, &c->fast_h, c->hdr_raw, SEAL_AUTH_SIZE);
		c->aes_impl = c->fast->aes_name;
		c->ghash_impl = c->fast->ghash_name;
	}
	seal_zeroize(ik, sizeof ik);
}

/* All 512 header bytes from h (the tag field too). */
void seal_header_write(const struct seal_header *h, uint8_t b[SEAL_HEADER_SIZE])
{
	memset(b, 0, SEAL_HEADER_SIZE);
	memcpy(b + HO_MAGIC, SEAL_MAGIC, 8);
	put32(b + HO_VERSION, h->version);
	put32(b + HO_HEADER_SIZE, h->header_size);
	put32(b + HO_CHUNK_SIZE, h->chunk_size);
	put32(b + HO_FLAGS, h->flags);
	put64(b + HO_PLAIN_SIZE, h->plain_size);
	put64(b + HO_N_CHUNKS, h->n_chunks);
	put64(b + HO_TAG_OFF, h->tag_off);
	put64(b + HO_DATA_OFF, h->data_off);
	put64(b + HO_IMAGE_SIZE, h->image_size);
	memcpy(b + HO_SHA, h->plain_sha256, 32);
	memcpy(b + HO_KEY_ID, h->key_id, SEAL_KEY_ID_SIZE);
	memcpy(b + HO_SALT, h->kdf_salt, SEAL_SALT_SIZE);
	memcpy(b + HO_NONCE, h->nonce_base, SEAL_NONCE_BASE_SIZE);
	memcpy(b + HO_IMAGE_ID, h->image_id, SEAL_IMAGE_ID_SIZE);
	put32(b + HO_AEAD, h->aead);
	put32(b + HO_KDF, h->kdf);
	memcpy(b + HO_TAG, h->header_tag, SEAL_TAG_SIZE);
}

/*
 * A GCM run for nonce index idx with AAD H || extra, ready for br_gcm_run
 * (docs/sealed-format.md "Encryption"). The template is copied, so c stays
 * unchanged and several threads may do this at once.
 */
void seal_gcm_start(const struct seal_ctx *c, br_gcm_context *g, uint32_t idx,
		    const void *extra, size_t extra_len)
{
	uint8_t nonce[SEAL_NONCE_BASE_SIZE + 4];

	*g = c->gcm;
	memcpy(nonce, c->hdr.nonce_base, SEAL_NONCE_BASE_SIZE);
	put_be32(nonce + SEAL_NONCE_BASE_SIZE, idx);
	br_gcm_reset(g, nonce, sizeof nonce);
	br_gcm_aad_inject(g, c->hdr_raw, SEAL_AUTH_SIZE);
	br_gcm_aad_inject(g, extra, extra_len);
	br_gcm_flip(g);
}

void seal_chunk_gcm(const struct seal_ctx *c, br_gcm_context *g, uint64_t i)
{
	uint8_t be[4];

	put_be32(be, (uint32_t)i);
	seal_gcm_start(c, g, (uint32_t)i, be, sizeof be);
}

/* Record the first failure (sticky); returns err. */
__attribute__((format(printf, 3, 4))) static int seal_fail(struct seal_ctx *c, int err,
							   const char *fmt, ...)
{
	int none = 0;
	va_list ap;

	if (!__atomic_compare_exchange_n(&c->failed, &none, err, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return err;
	va_start(ap, fmt);
	plat_vsnprintf(c->err, sizeof c->err, fmt, ap);
	va_end(ap);
	return err;
}

const char *seal_error(const struct seal_ctx *c)
{
	return c->err;
}

uint64_t seal_chunk_offset(const struct seal_ctx *c, uint64_t first)
{
	return c->hdr.data_off + first * c->hdr.chunk_size;
}

void seal_chunk_span(const struct seal_ctx *c, uint64_t off, uint64_t len, uint64_t *first,
		     uint64_t *count)
{
	uint64_t cs = c->hdr.chunk_size;

	*first = off / cs;
	*count = len ? (off + len - 1) / cs - *first + 1 : 0;
}

/*
 * Decrypt chunk i in place and check its tag: 1 if authentic. The same
 * nonce and AAD either way (docs/sealed-format.md "Encryption"); the fast
 * path starts from the GHASH of H that seal_set_image_key() kept. g is scratch for
 * BearSSL (the caller zeroizes it).
 */
static uint32_t chunk_decrypt(const struct seal_ctx *c, br_gcm_context *g, uint64_t i, uint8_t *p)
{
	uint8_t nonce[SEAL_NONCE_BASE_SIZE + 4];
	uint32_t cs = c->hdr.chunk_size;
	const uint8_t *tag = c->region + i * SEAL_TAG_SIZE;

	_Static_assert(sizeof nonce == AESGCM_IV_SIZE, "96-bit nonces");
	if (c->fast) {
		memcpy(nonce, c->hdr.nonce_base, SEAL_NONCE_BASE_SIZE);
		put_be32(nonce + SEAL_NONCE_BASE_SIZE, (uint32_t)i);
		/* the AAD after H is be32(i), the nonce's last 4 bytes */
		return (uint32_t)c->fast->decrypt(&c->fast_key, nonce, &c->fast_h,
						  nonce + SEAL_NONCE_BASE_SIZE, 4, p, cs, tag);
	}
	seal_chunk_gcm(c, g, i);
	br_gcm_run(g, 0, p, cs);
	return br_gcm_check_tag(g, tag);
}

int seal_decrypt_chunks(struct seal_ctx *c, uint64_t first, uint64_t n, void *buf)
{
	uint8_t *p = buf;
	uint32_t cs = c->hdr.chunk_size;
	br_gcm_context g;
	int failed = __atomic_load_n(&c->failed, __ATOMIC_ACQUIRE);

	if (first > c->hdr.n_chunks || n > c->hdr.n_chunks - first)
		return -LLMK_ERANGE;
	if (failed) {
		seal_zeroize(buf, n * cs);
		return failed;
	}
	for (uint64_t k = 0; k < n; k++, p += cs) {
		uint64_t i = first + k;
		if (!chunk_decrypt(c, &g, i, p)) {
			seal_zeroize(&g, sizeof g);
			seal_zeroize(buf, n * cs);
			return seal_fail(c, -LLMK_EAUTH,
					 "seal: chunk %llu (image bytes %llu..%llu) fails "
					 "authentication: modified, moved or from another image",
					 (unsigned long long)i,
					 (unsigned long long)seal_chunk_offset(c, i),
					 (unsigned long long)(seal_chunk_offset(c, i + 1) - 1));
		}
	}
	seal_zeroize(&g, sizeof g);
	return 0;
}

/* ---- open ---- */
static int read_header(struct seal_ctx *c, const struct llm_reader *r, char *err, size_t errlen)
{
	const struct seal_header *h = &c->hdr;

	if (r->size < 8) {
		plat_snprintf(err, errlen, "seal: not a sealed image (%llu bytes)",
			      (unsigned long long)r->size);
		return -LLMK_ENOENT;
	}
	size_t n = r->size < SEAL_HEADER_SIZE ? (size_t)r->size : SEAL_HEADER_SIZE;
	int e = r->read(r->ctx, 0, c->hdr_raw, n);
	if (e) {
		plat_snprintf(err, errlen, "seal: reading the header failed: %s", plat_strerror(e));
		return e;
	}
	e = seal_header_parse(c->hdr_raw, n, &c->hdr, err, errlen);
	if (e)
		return e;
	if (r->size < h->image_size) {
		plat_snprintf(err, errlen,
			      "seal: image truncated: %llu bytes but its header says %llu",
			      (unsigned long long)r->size, (unsigned long long)h->image_size);
		return -LLMK_EFORMAT;
	}
	if (r->size > h->image_size) {
		plat_snprintf(err, errlen,
			      "seal: image is %llu bytes but its header says %llu (%llu bytes "
			      "appended)",
			      (unsigned long long)r->size, (unsigned long long)h->image_size,
			      (unsigned long long)(r->size - h->image_size));
		return -LLMK_EFORMAT;
	}
	return 0;
}

/* Ask ks for the key, check its id, derive the image key. */
static int take_key(struct seal_ctx *c, const struct seal_keysrc *ks, char *err, size_t errlen)
{
	uint8_t key[SEAL_KEY_SIZE], id[SEAL_KEY_ID_SIZE];
	char want[2 * SEAL_KEY_ID_SIZE + 1], got[2 * SEAL_KEY_ID_SIZE + 1];

	if (!ks || !ks->get) {
		plat_snprintf(err, errlen, "seal: no key loaded for this sealed image (key id %s)",
			      seal_hex(c->hdr.key_id, SEAL_KEY_ID_SIZE, want));
		return -LLMK_ENOENT;
	}
	int e = ks->get(ks->ctx, &c->hdr, key, err, errlen);
	if (e) {
		seal_zeroize(key, sizeof key);
		return e;
	}
	seal_key_id(key, id);
	if (memcmp(id, c->hdr.key_id, sizeof id) != 0) {
		seal_zeroize(key, sizeof key);
		plat_snprintf(err, errlen,
			      "seal: wrong key: key id %s (%s), the image wants key id %s",
			      seal_hex(id, sizeof id, got), ks->what ? ks->what : "the key",
			      seal_hex(c->hdr.key_id, sizeof id, want));
		return -LLMK_EAUTH;
	}
	seal_set_image_key(c, key);
	seal_zeroize(key, sizeof key);
	return 0;
}

/* Read [512, data_off) and check the header tag over H || that region. */
static int read_region(struct seal_ctx *c, char *err, size_t errlen)
{
	br_gcm_context g;
	int e;

	c->region_len = (size_t)(c->hdr.data_off - SEAL_HEADER_SIZE);
	c->region = llm_mem_alloc(c->mem, c->region_len, &e);
	if (!c->region) {
		plat_snprintf(err, errlen, "seal: no memory for the tag table (%zu bytes): %s",
			      c->region_len, plat_strerror(e));
		return e;
	}
	e = c->under.read(c->under.ctx, SEAL_HEADER_SIZE, c->region, c->region_len);
	if (e) {
		plat_snprintf(err, errlen, "seal: reading the tag table failed: %s",
			      plat_strerror(e));
		return e;
	}
	seal_gcm_start(c, &g, SEAL_HEADER_CHUNK, c->region, c->region_len);
	uint32_t ok = br_gcm_check_tag(&g, c->hdr.header_tag);
	seal_zeroize(&g, sizeof g);
	if (!ok) {
		plat_snprintf(err, errlen,
			      "seal: header or tag table modified, or header from another image "
			      "(header tag does not verify)");
		return -LLMK_EAUTH;
	}
	return 0;
}

int seal_open(struct seal_ctx *c, const struct llm_reader *under, const struct seal_keysrc *ks,
	      struct llm_mem *mem, char *err, size_t errlen)
{
	int e;

	memset(c, 0, sizeof *c);
	c->under = *under;
	c->mem = mem;
	c->chunk_idx = UINT64_MAX;
	e = read_header(c, under, err, errlen);
	if (!e)
		e = take_key(c, ks, err, errlen);
	if (!e)
		e = read_region(c, err, errlen);
	if (!e) {
		c->chunk = llm_mem_alloc(mem, c->hdr.chunk_size, &e);
		if (!c->chunk)
			plat_snprintf(err, errlen, "seal: no memory for a chunk (%u bytes): %s",
				      c->hdr.chunk_size, plat_strerror(e));
	}
	if (e) {
		seal_close(c);
		return e;
	}
	llm_sha256_init(&c->sha);
	return 0;
}

int seal_wrap(struct seal_ctx *c, struct llm_reader *rd, const struct seal_keysrc *ks,
	      struct llm_mem *mem, char *err, size_t errlen)
{
	struct seal_header h;
	struct llm_reader under = *rd;

	if (seal_probe(rd, &h) == -LLMK_ENOENT)
		return 0;
	int e = seal_open(c, &under, ks, mem, err, errlen);
	if (e)
		return e;
	seal_reader(c, rd);
	return 1;
}

void seal_close(struct seal_ctx *c)
{
	if (c->region)
		llm_mem_free(c->mem, c->region, c->region_len);
	if (c->chunk)
		llm_mem_free(c->mem, c->chunk, c->hdr.chunk_size);
	seal_zeroize(c, sizeof *c);
}

/* ---- the plaintext reader ---- */
/* Constant-time equality of n bytes: 1 if equal. */
static uint32_t ct_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint32_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= (uint32_t)(a[i] ^ b[i]);
	return ((d - 1) >> 31) & 1u;
}

/* Feed chunk i's plaintext to the whole-file digest if it is the next one;
 * after the last chunk compare with the header (docs: "Plaintext digest"). */
static int digest_feed(struct seal_ctx *c, uint64_t i, const uint8_t *p)
{
	uint64_t cs = c->hdr.chunk_size, left = c->hdr.plain_size - i * cs;
	uint8_t d[32];
	char got[65], want[65];

	if (i != c->sha_next)
		return 0;
	llm_sha256_update(&c->sha, p, left < cs ? (size_t)left : (size_t)cs);
	if (++c->sha_next < c->hdr.n_chunks)
		return 0;
	llm_sha256_out(&c->sha, d);
	if (ct_equal(d, c->hdr.plain_sha256, sizeof d))
		return 0;
	return seal_fail(c, -LLMK_EAUTH,
			 "seal: plaintext SHA-256 %s does not match the header's %s",
			 seal_hex(d, sizeof d, got), seal_hex(c->hdr.plain_sha256, 32, want));
}

static int read_ciphertext(struct seal_ctx *c, uint64_t i, uint64_t n, void *buf)
{
	int e = c->under.read(c->under.ctx, seal_chunk_offset(c, i), buf,
			      (size_t)(n * c->hdr.chunk_size));
	if (e)
		return seal_fail(c, e, "seal: reading chunks %llu..%llu failed: %s",
				 (unsigned long long)i, (unsigned long long)(i + n - 1),
				 plat_strerror(e));
	return 0;
}

/* Make c->chunk hold chunk i's plaintext. */
static int load_chunk(struct seal_ctx *c, uint64_t i)
{
	int e;

	if (c->chunk_idx == i)
		return digest_feed(c, i, c->chunk); /* a no-op unless i is next */
	c->chunk_idx = UINT64_MAX;
	e = read_ciphertext(c, i, 1, c->chunk);
	if (!e)
		e = seal_decrypt_chunks(c, i, 1, c->chunk);
	if (!e)
		e = digest_feed(c, i, c->chunk);
	if (e) {
		seal_zeroize(c->chunk, c->hdr.chunk_size);
		return e;
	}
	c->chunk_idx = i;
	return 0;
}

/* Whole chunks [i, i+k) straight into out (no copy through c->chunk). */
static int read_direct(struct seal_ctx *c, uint64_t i, uint64_t k, uint8_t *out)
{
	uint32_t cs = c->hdr.chunk_size;
	int e = read_ciphertext(c, i, k, out);

	if (!e)
		e = seal_decrypt_chunks(c, i, k, out);
	for (uint64_t j = 0; !e && j < k; j++)
		e = digest_feed(c, i + j, out + j * cs);
	return e;
}

static int read_range(struct seal_ctx *c, uint64_t off, uint8_t *out, size_t n)
{
	uint64_t cs = c->hdr.chunk_size;
	int e = __atomic_load_n(&c->failed, __ATOMIC_ACQUIRE);

	if (e)
		return e;
	if (off > c->hdr.plain_size || n > c->hdr.plain_size - off)
		return -LLMK_ERANGE;
	while (n) {
		uint64_t i = off / cs, in = off % cs;
		if (in == 0 && n >= cs) {
			/* Every chunk here ends inside the plaintext: no padding. */
			uint64_t k = n / cs;
			e = read_direct(c, i, k, out);
			if (e)
				return e;
			off += k * cs;
			out += k * cs;
			n -= (size_t)(k * cs);
			continue;
		}
		size_t take = cs - in < n ? (size_t)(cs - in) : n;
		e = load_chunk(c, i);
		if (e)
			return e;
		memcpy(out, c->chunk + in, take);
		off += take;
		out += take;
		n -= take;
	}
	return 0;
}

static int sealed_read(void *ctx, uint64_t off, void *buf, size_t n)
{
	int e = read_range(ctx, off, buf, n);
	if (e)
		seal_zeroize(buf, n);
	return e;
}

void seal_reader(struct seal_ctx *c, struct llm_reader *out)
{
	out->read = sealed_read;
	out->ctx = c;
	out->size = c->hdr.plain_size;
}

int seal_verify_all(struct seal_ctx *c, bool (*cancel)(void *arg), void *arg, char *err,
		    size_t errlen)
{
	struct llm_sha256 s;
	uint64_t cs = c->hdr.chunk_size;
	uint8_t d[32];
	char got[65], want[65];
	int e = 0;

	c->chunk_idx = UINT64_MAX;
	llm_sha256_init(&s);
	for (uint64_t i = 0; !e && i < c->hdr.n_chunks; i++) {
		uint64_t left = c->hdr.plain_size - i * cs;
		if (cancel && cancel(arg)) {
			e = -LLMK_ECANCEL;
			break;
		}
		e = read_ciphertext(c, i, 1, c->chunk);
		if (!e)
			e = seal_decrypt_chunks(c, i, 1, c->chunk);
		if (!e)
			llm_sha256_update(&s, c->chunk, left < cs ? (size_t)left : (size_t)cs);
	}
	seal_zeroize(c->chunk, (size_t)cs);
	if (!e) {
		llm_sha256_out(&s, d);
		if (!ct_equal(d, c->hdr.plain_sha256, sizeof d))
			e = seal_fail(c, -LLMK_EAUTH,
				      "seal: plaintext SHA-256 %s does not match the header's %s",
				      seal_hex(d, sizeof d, got),
				      seal_hex(c->hdr.plain_sha256, 32, want));
	}
	seal_zeroize(&s, sizeof s);
	if (e == -LLMK_ECANCEL)
		plat_snprintf(err, errlen, "seal: verification cancelled");
	else if (e)
		plat_snprintf(err, errlen, "%s", c->err[0] ? c->err : plat_strerror(e));
	return e;
}
