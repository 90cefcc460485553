/*
 * tests/unit/test_seal.c — llm/seal.c: sealing round trips (a real GGUF read
 * back through gguf_open), and every kind of damage the format must refuse:
 * wrong key, a flipped bit in each region, swapped chunks, truncation,
 * appended bytes, a header from another image, a wrong plaintext digest.
 */
#include "test.h"

#include <stdlib.h>

#include "../../llm/engine.h"
#include "../../tools/writer/seal_write.h"
#include "../../tools/host/host.h"

static const uint8_t key_a[SEAL_KEY_SIZE] = {
	0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
	0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0,
};
static const uint8_t key_b[SEAL_KEY_SIZE] = {1};

struct img {
	uint8_t *p;
	size_t n;
};

/* Seal plain into a fresh image (random fields derived from seed); sha
 * NULL means the plaintext's true SHA-256. */
static struct img seal_buf(const uint8_t *plain, size_t n, const uint8_t *key, uint32_t cs,
			   int seed, const uint8_t *sha)
{
	struct seal_ctx c;
	struct img im = {0};
	uint8_t rnd[SEAL_RANDOM_SIZE], d[32];
	char err[256];
	br_sha256_context s;

	for (size_t i = 0; i < sizeof rnd; i++)
		rnd[i] = (uint8_t)(seed * 131 + i * 7);
	br_sha256_init(&s);
	br_sha256_update(&s, plain, n);
	br_sha256_out(&s, d);
	if (seal_create(&c, key, n, sha ? sha : d, cs, rnd, err, sizeof err)) {
		fprintf(stderr, "  seal_create: %s\n", err);
		return im;
	}
	im.n = c.hdr.image_size;
	im.p = calloc(1, im.n);
	for (uint64_t i = 0; i < c.hdr.n_chunks; i++) {
		uint8_t *ch = im.p + seal_chunk_offset(&c, i);
		size_t off = (size_t)(i * cs), k = n - off < cs ? n - off : cs;
		memcpy(ch, plain + off, k);
		seal_encrypt_chunk(&c, i, ch, im.p + SEAL_HEADER_SIZE + i * SEAL_TAG_SIZE);
	}
	seal_finish(&c, im.p + SEAL_HEADER_SIZE, c.hdr.data_off - SEAL_HEADER_SIZE, im.p);
	seal_close(&c);
	return im;
}

/* An opened image with its readers; open_img returns seal_open's result. */
struct opened {
	struct llm_membuf mb;
	struct llm_reader under, plain;
	struct llm_mem mem;
	struct seal_ctx c;
	char err[256];
};

static int open_img(struct opened *o, const struct img *im, const uint8_t *key)
{
	struct seal_keysrc ks;

	llm_mem_init(&o->mem, 0);
	llm_reader_mem(&o->under, &o->mb, im->p, im->n);
	seal_keysrc_raw(&ks, key, "test key", true);
	o->err[0] = 0;
	int e = seal_open(&o->c, &o->under, &ks, &o->mem, o->err, sizeof o->err);
	if (!e)
		seal_reader(&o->c, &o->plain);
	return e;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Nothing of the plaintext came out: no read happened, or it was zeroed. */
static bool nothing(const uint8_t *p, size_t n)
{
	return !p || all_zero(p, n);
}

/* Open im and read its whole plaintext into a buffer pre-filled with 0xa5:
 * the result; *out is the buffer (caller frees), NULL if seal_open failed
 * (so nothing was read). */
static int read_whole(const struct img *im, const uint8_t *key, size_t n, uint8_t **out,
		      char *err, size_t errlen)
{
	struct opened o;
	uint8_t *buf = malloc(n);

	memset(buf, 0xa5, n);
	*out = buf;
	int e = open_img(&o, im, key);
	if (!e) {
		e = o.plain.read(o.plain.ctx, 0, buf, n);
		if (e)
			snprintf(err, errlen, "%s", seal_error(&o.c));
		seal_close(&o.c);
		CHECK_EQ_INT(o.mem.used, 0);
	} else {
		snprintf(err, errlen, "%s", o.err);
		free(buf);
		*out = NULL;
	}
	return e;
}

static uint8_t *stories(size_t *n)
{
	char path[512];
	const char *dir = testdata_dir();

	if (!dir)
		return NULL;
	snprintf(path, sizeof path, "%s/stories260K/stories260K.gguf", dir);
	return test_read_file(path, n);
}

/* A synthetic plaintext that is not a multiple of the chunk size. */
static uint8_t *pattern(size_t n)
{
	uint8_t *p = malloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 2654435761u >> 13);
	return p;
}

TEST(seal_roundtrip_stories_gguf)
{
	size_t n;
	uint8_t *plain = stories(&n);
	if (!plain)
		SKIP("no testdata (stories260K.gguf)");
	struct img im = seal_buf(plain, n, key_a, SEAL_CHUNK_DEFAULT, 1, NULL);
	struct opened o;
	CHECK_EQ_INT(open_img(&o, &im, key_a), 0);
	CHECK_EQ_INT(o.plain.size, n);

	/* gguf_open through the sealed reader sees the same file as through
	 * the plain bytes. */
	struct gguf_file gs, gp;
	struct llm_membuf pmb;
	struct llm_reader pr;
	struct llm_mem pm;
	char err[256];
	llm_mem_init(&pm, 0);
	llm_reader_mem(&pr, &pmb, plain, n);
	CHECK_EQ_INT(gguf_open(&gp, &pr, &pm, err, sizeof err), 0);
	int e = gguf_open(&gs, &o.plain, &o.mem, err, sizeof err);
	CHECK_EQ_INT(e, 0);
	if (!e) {
		CHECK_EQ_INT(gs.n_tensors, gp.n_tensors);
		CHECK_EQ_INT(gs.n_kv, gp.n_kv);
		CHECK_EQ_INT(gs.extent, gp.extent);
		CHECK_STR(gs.tensors[3].name, gp.tensors[3].name);
		gguf_close(&gs);
	}
	gguf_close(&gp);

	/* Byte equality: whole, then pieces at odd offsets across chunks. */
	uint8_t *buf = malloc(n);
	CHECK_EQ_INT(o.plain.read(o.plain.ctx, 0, buf, n), 0);
	CHECK(memcmp(buf, plain, n) == 0);
	uint64_t seed = 12345;
	for (int k = 0; k < 200; k++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		size_t off = (size_t)(seed >> 33) % n;
		size_t len = (size_t)(seed >> 13) % 200000 % (n - off) + 1;
		memset(buf, 0, len);
		CHECK_EQ_INT(o.plain.read(o.plain.ctx, off, buf, len), 0);
		CHECK(memcmp(buf, plain + off, len) == 0);
	}
	CHECK_EQ_INT(o.plain.read(o.plain.ctx, n - 1, buf, 2), -LLMK_ERANGE);
	CHECK_EQ_INT(seal_verify_all(&o.c, NULL, NULL, err, sizeof err), 0);
	CHECK_STR(seal_error(&o.c), "");
	seal_close(&o.c);
	CHECK_EQ_INT(o.mem.used, 0);
	free(buf);
	free(im.p);
	free(plain);
}

TEST(seal_chunk_sizes_and_decrypt_in_place)
{
	static const uint32_t sizes[] = {4096, 8192, 65536};
	static const size_t lens[] = {1, 4095, 4096, 4097, 3 * 65536, 200000};
	for (size_t si = 0; si < 3; si++)
		for (size_t li = 0; li < 6; li++) {
			uint32_t cs = sizes[si];
			size_t n = lens[li];
			uint8_t *plain = pattern(n), *out;
			struct img im = seal_buf(plain, n, key_a, cs, (int)(si * 10 + li), NULL);
			char err[256];
			CHECK_EQ_INT(im.n % 512, 0);
			CHECK_EQ_INT(read_whole(&im, key_a, n, &out, err, sizeof err), 0);
			CHECK(memcmp(out, plain, n) == 0);
			free(out);

			/* The streamer's path: aligned ciphertext, decrypt in place. */
			struct opened o;
			CHECK_EQ_INT(open_img(&o, &im, key_a), 0);
			uint64_t first, count;
			seal_chunk_span(&o.c, 0, n, &first, &count);
			CHECK_EQ_INT(first, 0);
			CHECK_EQ_INT(count, o.c.hdr.n_chunks);
			uint64_t at = seal_chunk_offset(&o.c, 0);
			CHECK_EQ_INT(at % 512, 0);
			uint8_t *slot = malloc(count * cs);
			memcpy(slot, im.p + at, count * cs);
			CHECK_EQ_INT(seal_decrypt_chunks(&o.c, 0, count, slot), 0);
			CHECK(memcmp(slot, plain, n) == 0);
			CHECK(all_zero(slot + n, count * cs - n)); /* padding */
			CHECK_EQ_INT(seal_decrypt_chunks(&o.c, count, 1, slot), -LLMK_ERANGE);
			CHECK_EQ_INT(seal_verify_all(&o.c, NULL, NULL, err, sizeof err), 0);
			seal_close(&o.c);
			free(slot);
			free(im.p);
			free(plain);
		}
}

/* The AES-GCM rows (BearSSL's, or llm/aesgcm.h's fast path) follow
 * plat_cpu_features(), LLMK_CPU_MASK included, so hiding AES-NI and
 * PCLMULQDQ reaches BearSSL's constant-time rows as a CPU without them
 * would; each choice seals the same bytes and reads them back. */
TEST(seal_rows_follow_the_cpu_features_and_agree)
{
	static const uint32_t hide[] = {
		0, PLAT_CPU_VAES | PLAT_CPU_VPCLMUL,
		PLAT_CPU_AES | PLAT_CPU_PCLMUL | PLAT_CPU_VAES | PLAT_CPU_VPCLMUL,
	};
	const char *env = getenv("LLMK_CPU_MASK");
	char saved[32] = "", mask[32], err[256];
	uint32_t base = env && *env ? (uint32_t)strtoul(env, NULL, 16) : 0xffffffffu;
	size_t n = 3 * 65536 + 1000;
	uint8_t *plain = pattern(n), *out, rnd[SEAL_RANDOM_SIZE] = {9}, sha[32] = {0};
	struct img first = {0};

	if (env)
		snprintf(saved, sizeof saved, "%s", env);
	for (size_t i = 0; i < sizeof hide / sizeof hide[0]; i++) {
		struct seal_ctx c;
		uint32_t f;

		snprintf(mask, sizeof mask, "%x", base & ~hide[i]);
		setenv("LLMK_CPU_MASK", mask, 1);
		f = plat_cpu_features();
		CHECK_EQ_INT(seal_create(&c, key_a, n, sha, 65536, rnd, err, sizeof err), 0);
		CHECK(c.fast == aesgcm_find(f));
		if (!c.fast) {
			CHECK_STR(c.aes_impl, (f & PLAT_CPU_AES) && br_aes_x86ni_ctr_get_vtable()
						      ? "aes_x86ni" : "aes_ct64");
			CHECK_STR(c.ghash_impl, (f & PLAT_CPU_PCLMUL) && br_ghash_pclmul_get()
							? "ghash_pclmul" : "ghash_ctmul64");
		}
		if (i == sizeof hide / sizeof hide[0] - 1) {
			CHECK_STR(c.aes_impl, "aes_ct64");
			CHECK_STR(c.ghash_impl, "ghash_ctmul64");
		}
		seal_close(&c);

		struct img im = seal_buf(plain, n, key_a, 65536, 4, NULL);
		if (!first.p) {
			first = im;
		} else {
			CHECK(im.n == first.n && memcmp(im.p, first.p, im.n) == 0);
			free(im.p);
		}
		CHECK_EQ_INT(read_whole(&first, key_a, n, &out, err, sizeof err), 0);
		CHECK(memcmp(out, plain, n) == 0);
		free(out);
	}
	if (saved[0])
		setenv("LLMK_CPU_MASK", saved, 1);
	else
		unsetenv("LLMK_CPU_MASK");
	free(first.p);
	free(plain);
}

TEST(seal_wrong_key_is_refused_before_decrypting)
{
	size_t n = 100000;
	uint8_t *plain = pattern(n), *out;
	struct img im = seal_buf(plain, n, key_a, 4096, 2, NULL);
	char err[256];
	CHECK_EQ_INT(read_whole(&im, key_b, n, &out, err, sizeof err), -LLMK_EAUTH);
	CHECK(strstr(err, "wrong key") != NULL);
	CHECK(strstr(err, "test key") != NULL);
	free(out);
	free(im.p);
	free(plain);
}

/* Flip bit `bit` of byte at; the whole read must fail and return only zeros. */
static void flip_case(const struct img *good, size_t n, size_t at, int bit, const char *region)
{
	struct img im = {malloc(good->n), good->n};
	uint8_t *out;
	char err[256] = "";

	memcpy(im.p, good->p, im.n);
	im.p[at] ^= (uint8_t)(1u << bit);
	int e = read_whole(&im, key_a, n, &out, err, sizeof err);
	if (e >= 0 || !nothing(out, n))
		fprintf(stderr, "  flip in %s at byte %zu bit %d: result %d, err '%s'\n", region,
			at, bit, e, err);
	CHECK(e < 0);
	CHECK(nothing(out, n));
	CHECK(err[0] != 0);
	free(out);
	free(im.p);
}

TEST(seal_flipped_bit_in_every_region_fails)
{
	size_t n = 150000; /* 37 chunks of 4096, the last one short */
	uint8_t *plain = pattern(n);
	struct img im = seal_buf(plain, n, key_a, 4096, 3, NULL);
	struct seal_header h;
	char err[256];
	CHECK_EQ_INT(seal_header_parse(im.p, im.n, &h, err, sizeof err), 0);

	/* Header: every byte, a bit chosen by position (fields, reserved, tag). */
	for (size_t at = 0; at < SEAL_HEADER_SIZE; at++)
		flip_case(&im, n, at, (int)(at % 8), "header");
	/* Tag table: each tag, and the zero padding after the table. */
	for (uint64_t i = 0; i < h.n_chunks; i++)
		flip_case(&im, n, SEAL_HEADER_SIZE + i * SEAL_TAG_SIZE + i % 16, (int)(i % 8),
			  "tag table");
	flip_case(&im, n, SEAL_HEADER_SIZE + h.n_chunks * SEAL_TAG_SIZE, 0, "table padding");
	flip_case(&im, n, h.data_off - 1, 7, "table padding");
	/* Chunks: first, middle and last byte of each (the padding included). */
	for (uint64_t i = 0; i < h.n_chunks; i++) {
		size_t at = h.data_off + i * h.chunk_size;
		flip_case(&im, n, at, 0, "chunk");
		flip_case(&im, n, at + h.chunk_size / 2 + i, (int)(i % 8), "chunk");
		flip_case(&im, n, at + h.chunk_size - 1, 7, "chunk");
	}
	free(im.p);
	free(plain);
}

TEST(seal_chunk_error_is_clear_and_sticky)
{
	size_t n = 40000;
	uint8_t *plain = pattern(n), buf[100];
	struct img im = seal_buf(plain, n, key_a, 4096, 4, NULL);
	struct opened o;
	CHECK_EQ_INT(open_img(&o, &im, key_a), 0);
	im.p[seal_chunk_offset(&o.c, 5) + 17] ^= 1;
	CHECK_EQ_INT(o.plain.read(o.plain.ctx, 0, buf, sizeof buf), 0);
	CHECK(memcmp(buf, plain, sizeof buf) == 0);
	memset(buf, 0xa5, sizeof buf);
	CHECK_EQ_INT(o.plain.read(o.plain.ctx, 5 * 4096 + 10, buf, sizeof buf), -LLMK_EAUTH);
	CHECK(all_zero(buf, sizeof buf));
	CHECK(strstr(seal_error(&o.c), "chunk 5 ") != NULL);
	/* Later reads of good chunks fail the same way: the image is poisoned. */
	memset(buf, 0xa5, sizeof buf);
	CHECK_EQ_INT(o.plain.read(o.plain.ctx, 0, buf, sizeof buf), -LLMK_EAUTH);
	CHECK(all_zero(buf, sizeof buf));
	seal_close(&o.c);
	free(im.p);
	free(plain);
}

TEST(seal_swapped_chunks_fail)
{
	size_t n = 10 * 4096;
	uint8_t *plain = pattern(n), *out, tmp[4096];
	struct img im = seal_buf(plain, n, key_a, 4096, 5, NULL);
	struct seal_header h;
	char err[256];
	CHECK_EQ_INT(seal_header_parse(im.p, im.n, &h, err, sizeof err), 0);
	uint8_t *c2 = im.p + h.data_off + 2 * 4096, *c7 = im.p + h.data_off + 7 * 4096;
	memcpy(tmp, c2, 4096);
	memcpy(c2, c7, 4096);
	memcpy(c7, tmp, 4096);
	CHECK_EQ_INT(read_whole(&im, key_a, n, &out, err, sizeof err), -LLMK_EAUTH);
	CHECK(strstr(err, "chunk 2 ") != NULL);
	CHECK(nothing(out, n));
	free(out);
	/* Swapping the two tags as well: the tag table no longer matches its
	 * header tag. */
	uint8_t *t2 = im.p + SEAL_HEADER_SIZE + 2 * 16, *t7 = im.p + SEAL_HEADER_SIZE + 7 * 16;
	memcpy(tmp, t2, 16);
	memcpy(t2, t7, 16);
	memcpy(t7, tmp, 16);
	CHECK_EQ_INT(read_whole(&im, key_a, n, &out, err, sizeof err), -LLMK_EAUTH);
	CHECK(strstr(err, "tag table") != NULL);
	free(out);
	free(im.p);
	free(plain);
}

TEST(seal_truncated_and_appended_images_fail)
{
	size_t n = 50000;
	uint8_t *plain = pattern(n), *out;
	struct img im = seal_buf(plain, n, key_a, 4096, 6, NULL);
	struct img big = {calloc(1, im.n + 4096), 0};
	static const size_t cut[] = {0, 7, 100, 511, 512, 4096, 4096 + 4095};
	char err[256];

	for (size_t k = 0; k < sizeof cut / sizeof cut[0]; k++) {
		struct img t = {im.p, cut[k]};
		CHECK(read_whole(&t, key_a, n, &out, err, sizeof err) < 0);
		CHECK(err[0] != 0);
		free(out);
	}
	struct img t = {im.p, im.n - 512};
	CHECK_EQ_INT(read_whole(&t, key_a, n, &out, err, sizeof err), -LLMK_EFORMAT);
	CHECK(strstr(err, "truncated") != NULL);
	free(out);

	memcpy(big.p, im.p, im.n);
	big.n = im.n + 1;
	CHECK_EQ_INT(read_whole(&big, key_a, n, &out, err, sizeof err), -LLMK_EFORMAT);
	CHECK(strstr(err, "appended") != NULL);
	free(out);
	big.n = im.n + 4096;
	CHECK_EQ_INT(read_whole(&big, key_a, n, &out, err, sizeof err), -LLMK_EFORMAT);
	free(out);
	free(big.p);
	free(im.p);
	free(plain);
}

TEST(seal_header_from_another_image_fails)
{
	size_t n = 30000;
	uint8_t *plain = pattern(n), *out;
	/* Same plaintext, same key, so only the per-image fields differ. */
	struct img a = seal_buf(plain, n, key_a, 4096, 7, NULL);
	struct img b = seal_buf(plain, n, key_a, 4096, 8, NULL);
	struct seal_header ha;
	char err[256];
	CHECK_EQ_INT(a.n, b.n);
	CHECK_EQ_INT(seal_header_parse(a.p, a.n, &ha, err, sizeof err), 0);

	struct img m = {malloc(a.n), a.n};
	memcpy(m.p, a.p, a.n);
	memcpy(m.p, b.p, SEAL_HEADER_SIZE); /* header only */
	CHECK_EQ_INT(read_whole(&m, key_a, n, &out, err, sizeof err), -LLMK_EAUTH);
	CHECK(strstr(err, "another image") != NULL);
	CHECK(nothing(out, n));
	free(out);
	memcpy(m.p, b.p, ha.data_off); /* header and tag table */
	CHECK_EQ_INT(read_whole(&m, key_a, n, &out, err, sizeof err), -LLMK_EAUTH);
	CHECK(strstr(err, "chunk 0 ") != NULL);
	CHECK(nothing(out, n));
	free(out);
	free(m.p);
	free(a.p);
	free(b.p);
	free(plain);
}

TEST(seal_plaintext_digest_is_checked)
{
	size_t n = 20000;
	uint8_t *plain = pattern(n), wrong[32] = {0xde, 0xad}, *out;
	struct img im = seal_buf(plain, n, key_a, 4096, 9, wrong);
	struct opened o;
	char err[256];

	CHECK_EQ_INT(read_whole(&im, key_a, n, &out, err, sizeof err), -LLMK_EAUTH);
	CHECK(strstr(err, "SHA-256") != NULL);
	free(out);
	CHECK_EQ_INT(open_img(&o, &im, key_a), 0);
	CHECK_EQ_INT(seal_verify_all(&o.c, NULL, NULL, err, sizeof err), -LLMK_EAUTH);
	CHECK(strstr(err, "SHA-256") != NULL);
	seal_close(&o.c);
	/* Partial reads do not complete the digest, so they succeed. */
	CHECK_EQ_INT(open_img(&o, &im, key_a), 0);
	uint8_t buf[5000];
	CHECK_EQ_INT(o.plain.read(o.plain.ctx, 9000, buf, sizeof buf), 0);
	CHECK(memcmp(buf, plain + 9000, sizeof buf) == 0);
	seal_close(&o.c);
	free(im.p);
	free(plain);
}

TEST(seal_probe_and_header_parse)
{
	size_t n = 12345;
	uint8_t *plain = pattern(n);
	struct img im = seal_buf(plain, n, key_a, 8192, 10, NULL);
	struct llm_membuf mb;
	struct llm_reader r;
	struct seal_header h;
	uint8_t id[SEAL_KEY_ID_SIZE];

	llm_reader_mem(&r, &mb, im.p, im.n);
	CHECK_EQ_INT(seal_probe(&r, &h), 0);
	CHECK_EQ_INT(h.plain_size, n);
	CHECK_EQ_INT(h.chunk_size, 8192);
	CHECK_EQ_INT(h.n_chunks, 2);
	CHECK_EQ_INT(h.data_off, 4096);
	CHECK_EQ_INT(h.image_size, im.n);
	seal_key_id(key_a, id);
	CHECK(memcmp(id, h.key_id, sizeof id) == 0);
	llm_reader_mem(&r, &mb, plain, n);
	CHECK_EQ_INT(seal_probe(&r, &h), -LLMK_ENOENT);
	im.p[16] = 0x13; /* chunk size 0x2013: not a power of two */
	llm_reader_mem(&r, &mb, im.p, im.n);
	CHECK_EQ_INT(seal_probe(&r, &h), -LLMK_EFORMAT);
	free(im.p);
	free(plain);
}

TEST(seal_key_hex_parsing)
{
	uint8_t k[SEAL_KEY_SIZE];
	char hex[80];
	const char *good = "00112233445566778899AABBCCDDEEFF0f1e2d3c4b5a69788796a5b4c3d2e1f0";

	CHECK_EQ_INT(seal_key_parse_hex(good, strlen(good), k), 0);
	CHECK(memcmp(k, key_a, sizeof k) == 0);
	snprintf(hex, sizeof hex, "%s \n", good);
	CHECK_EQ_INT(seal_key_parse_hex(hex, strlen(hex), k), 0);
	snprintf(hex, sizeof hex, "%sx", good);
	CHECK_EQ_INT(seal_key_parse_hex(hex, strlen(hex), k), -LLMK_EINVAL);
	CHECK(all_zero(k, sizeof k));
	CHECK_EQ_INT(seal_key_parse_hex(good, 63, k), -LLMK_EINVAL);
	for (const char *bad = "g/:@G`"; *bad; bad++) {
		snprintf(hex, sizeof hex, "%s", good);
		hex[10] = *bad;
		CHECK_EQ_INT(seal_key_parse_hex(hex, 64, k), -LLMK_EINVAL);
	}
	uint8_t z[SEAL_KEY_SIZE];
	memset(z, 0x5a, sizeof z);
	seal_zeroize(z, sizeof z);
	CHECK(all_zero(z, sizeof z));
}

/* Several workers decrypting different chunks of one image at once (the
 * streamer's use), one chunk of them damaged. */
struct par {
	struct seal_ctx *c;
	uint8_t *slot;
	uint64_t n_chunks;
	int rc[64];
};

static void par_task(void *arg, int w, int nw)
{
	struct par *p = arg;
	uint32_t cs = p->c->hdr.chunk_size;
	for (uint64_t i = (uint64_t)w; i < p->n_chunks; i += (uint64_t)nw) {
		int e = seal_decrypt_chunks(p->c, i, 1, p->slot + i * cs);
		if (e)
			p->rc[w] = e;
	}
}

TEST(seal_decrypt_chunks_from_parallel_workers)
{
	size_t n = 64 * 4096 - 100;
	uint8_t *plain = pattern(n);
	struct img im = seal_buf(plain, n, key_a, 4096, 11, NULL);
	for (int round = 0; round < 2; round++) {
		struct opened o;
		struct par p = {0};
		CHECK_EQ_INT(open_img(&o, &im, key_a), 0);
		p.c = &o.c;
		p.n_chunks = o.c.hdr.n_chunks;
		p.slot = malloc(p.n_chunks * 4096);
		memcpy(p.slot, im.p + seal_chunk_offset(&o.c, 0), p.n_chunks * 4096);
		if (round == 1)
			p.slot[40 * 4096 + 5] ^= 0x10;
		plat_parallel(par_task, &p, plat_cpu_count());
		int bad = 0;
		for (int w = 0; w < 64; w++)
			bad |= p.rc[w] != 0;
		if (round == 0) {
			CHECK_EQ_INT(bad, 0);
			CHECK(memcmp(p.slot, plain, n) == 0);
		} else {
			CHECK_EQ_INT(bad, 1);
			CHECK(strstr(seal_error(&o.c), "chunk 40 ") != NULL);
			CHECK(all_zero(p.slot + 40 * 4096, 4096));
		}
		seal_close(&o.c);
		free(p.slot);
	}
	free(im.p);
	free(plain);
}

TEST(seal_open_without_a_key_source)
{
	size_t n = 5000;
	uint8_t *plain = pattern(n);
	struct img im = seal_buf(plain, n, key_a, 4096, 12, NULL);
	struct llm_membuf mb;
	struct llm_reader r;
	struct llm_mem mem;
	struct seal_ctx c;
	char err[256];
	llm_mem_init(&mem, 0);
	llm_reader_mem(&r, &mb, im.p, im.n);
	CHECK_EQ_INT(seal_open(&c, &r, NULL, &mem, err, sizeof err), -LLMK_ENOENT);
	CHECK(strstr(err, "no key") != NULL);
	CHECK_EQ_INT(mem.used, 0);
	free(im.p);
	free(plain);
}

TEST(seal_wrap_only_wraps_sealed_readers)
{
	size_t n;
	uint8_t *plain = stories(&n);
	if (!plain)
		SKIP("no testdata (stories260K.gguf)");
	struct img im = seal_buf(plain, n, key_a, SEAL_CHUNK_DEFAULT, 13, NULL);
	struct llm_membuf mb;
	struct llm_reader r;
	struct llm_mem mem;
	struct seal_keysrc ks;
	struct seal_ctx c;
	struct gguf_file g;
	char err[256];

	llm_mem_init(&mem, 0);
	seal_keysrc_raw(&ks, key_a, "test key", true);
	llm_reader_mem(&r, &mb, plain, n);
	CHECK_EQ_INT(seal_wrap(&c, &r, &ks, &mem, err, sizeof err), 0);
	CHECK(r.ctx == &mb);
	llm_reader_mem(&r, &mb, im.p, im.n);
	CHECK_EQ_INT(seal_wrap(&c, &r, &ks, &mem, err, sizeof err), 1);
	CHECK(r.ctx == &c);
	CHECK_EQ_INT(r.size, n);
	CHECK_EQ_INT(gguf_open(&g, &r, &mem, err, sizeof err), 0);
	gguf_close(&g);
	seal_close(&c);
	llm_reader_mem(&r, &mb, im.p, im.n);
	CHECK_EQ_INT(seal_wrap(&c, &r, NULL, &mem, err, sizeof err), -LLMK_ENOENT);
	CHECK_EQ_INT(mem.used, 0);
	free(im.p);
	free(plain);
}

/* Random damage to the header and tag table (several bytes at once, random
 * values, random image sizes): never accepted, never a crash. */
TEST(seal_random_header_damage_is_refused)
{
	size_t n = 70000;
	uint8_t *plain = pattern(n);
	struct img im = seal_buf(plain, n, key_a, 4096, 14, NULL);
	struct img t = {malloc(im.n + 8192), 0};
	uint64_t seed = 99;
	int accepted = 0;

	for (int k = 0; k < 2000; k++) {
		struct opened o;
		memcpy(t.p, im.p, im.n);
		t.n = im.n;
		int nb = 1 + k % 6;
		for (int j = 0; j < nb; j++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			size_t at = (size_t)(seed >> 33) % 4096;
			uint8_t v = (uint8_t)(seed >> 20);
			t.p[at] = v == t.p[at] ? (uint8_t)(v ^ 0x80) : v;
		}
		if (k % 7 == 0)
			t.n = (size_t)(seed >> 40) % (im.n + 8192);
		if (open_img(&o, &t, key_a) == 0) {
			accepted++;
			seal_close(&o.c);
		}
		CHECK_EQ_INT(o.mem.used, 0);
	}
	CHECK_EQ_INT(accepted, 0);
	free(t.p);
	free(im.p);
	free(plain);
}

/* The engine through a sealed disk: same greedy ids as the plain file; no
 * key, the wrong key and a damaged chunk each refused, and the engine then
 * loads the good image. */
static int greedy(struct engine *e, int disk, const struct seal_keysrc *ks, int32_t *ids,
		  char *err, size_t errlen)
{
	struct engine_gen g;

	e->cfg.keysrc = ks;
	int r = engine_load(e, disk, false, err, errlen);
	if (r)
		return r;
	engine_gen_init(e, &g);
	g.samp.temp = 0;
	g.n_predict = 24;
	g.out_ids = ids;
	g.out_cap = 24;
	r = engine_infer(e, "Once upon a time", &g, err, errlen);
	return r ? r : (int)g.n_out;
}

static bool write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(p, 1, n, f) == n;
	if (f)
		fclose(f);
	return ok;
}

TEST(seal_engine_loads_sealed_disks)
{
	char dir[512], good[600], bad[600];
	size_t n;
	uint8_t *plain = stories(&n);
	if (!plain)
		SKIP("no testdata (stories260K.gguf)");
	struct img im = seal_buf(plain, n, key_a, SEAL_CHUNK_DEFAULT, 15, NULL);
	snprintf(dir, sizeof dir, "%s/stories260K/stories260K.gguf", testdata_dir());
	snprintf(good, sizeof good, "%s/seal-good.sealed", test_tmpdir());
	snprintf(bad, sizeof bad, "%s/seal-bad.sealed", test_tmpdir());
	CHECK(write_file(good, im.p, im.n));
	im.p[4096 + 3 * SEAL_CHUNK_DEFAULT + 77] ^= 2;
	CHECK(write_file(bad, im.p, im.n));
	host_remove_disks();
	CHECK_EQ_INT(host_add_disk(dir), 0);
	CHECK_EQ_INT(host_add_disk(good), 1);
	CHECK_EQ_INT(host_add_disk(bad), 2);

	struct engine *e = calloc(1, sizeof *e);
	struct seal_keysrc ka, kb;
	int32_t want[24], got[24];
	char err[256];
	seal_keysrc_raw(&ka, key_a, "test key", true);
	seal_keysrc_raw(&kb, key_b, "other key", true);
	engine_init(e);
	CHECK_EQ_INT(greedy(e, 0, NULL, want, err, sizeof err), 24);
	CHECK(!e->sealed);
	CHECK_EQ_INT(greedy(e, 1, NULL, got, err, sizeof err), -LLMK_ENOENT);
	CHECK(strstr(err, "no key") != NULL);
	CHECK_EQ_INT(greedy(e, 1, &kb, got, err, sizeof err), -LLMK_EAUTH);
	CHECK(strstr(err, "wrong key") != NULL);
	CHECK_EQ_INT(greedy(e, 2, &ka, got, err, sizeof err), -LLMK_EAUTH);
	CHECK(strstr(err, "chunk 3 ") != NULL);
	CHECK(!e->loaded);
	CHECK_EQ_INT(e->mem.used, 0);
	memset(got, 0, sizeof got);
	CHECK_EQ_INT(greedy(e, 1, &ka, got, err, sizeof err), 24);
	CHECK(e->sealed);
	CHECK(memcmp(got, want, sizeof want) == 0);
	engine_unload(e);
	CHECK(!e->sealed);
	free(e);
	host_remove_disks();
	free(im.p);
	free(plain);
}
