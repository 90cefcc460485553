/*
 * llm/kernels/avx512/gcm.c — AES-256-GCM decrypt-and-verify on zmm:
 * llm/aesgcm.h's "vaes512+vpclmul" (VAES, VPCLMULQDQ, AVX-512 F/BW/VL).
 *
 * GCM is NIST SP 800-38D; AES is FIPS 197. The data path, per 512 bytes
 * (32 blocks, eight zmm of four blocks):
 *
 *   GHASH  the ciphertext, each block times the power of H that brings it
 *          to the end of the group: X' = (X + C1) H^32 + C2 H^31 + ... + C32 H
 *          (SP 800-38D §6.4 unrolled), summed unreduced, reduced once.
 *   CTR    counter blocks inc32^j(J0) (§6.5, §7.2), 15 rounds of AES each,
 *          XORed onto the ciphertext in place.
 *
 * The two are independent within a group (decryption hashes the ciphertext
 * it reads), so one pass does both and the core's AES and carry-less
 * multiply units run side by side. Tails (< 512 bytes) and the AAD take
 * masked loads and stores, zero-padding the last block as GHASH wants.
 *
 * GHASH's carry-less products and their reduction, the AES key schedule,
 * the key set-up and the tag check are avx2/gcm_xmm.h's, shared with the ymm
 * implementation.
 *
 * Constant time: no branch or index depends on the key or the data (the
 * lengths are public); the tag is compared by one PTEST over its XOR.
 * Round keys and powers of H are read from the key struct inside the
 * loops, not copied to locals.
 */
#pragma GCC target("aes,pclmul,vaes,vpclmulqdq")
#include "../avx2/gcm_xmm.h"

#define GCM_GROUP 512u /* bytes per pass of the main loop: 32 blocks, 8 zmm */
/* Prefetch distance of the main loop: a streamer slot is larger than the
 * caches, and a core decrypts faster than the hardware prefetcher alone
 * keeps up with (docs/perf.md, "Remarks moved from the code"). */
#define GCM_PREFETCH 2048u

static __m512i bcast(const uint8_t b[16])
{
	return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)b));
}

/* ---- four blocks a zmm ---- */
/* AES-256 (FIPS 197) of four blocks (tails). */
static __m512i aes_x4(const struct aesgcm_key *k, __m512i x)
{
	x = _mm512_xor_si512(x, bcast(k->rk[0]));
	for (unsigned r = 1; r < AESGCM_ROUNDS; r++)
		x = _mm512_aesenc_epi128(x, bcast(k->rk[r]));
	return _mm512_aesenclast_epi128(x, bcast(k->rk[AESGCM_ROUNDS]));
}

/* Unreduced sums of 256-bit products, four lanes each (schoolbook: the
 * 64x64 products lo*lo, hi*hi, and the two cross ones into mid). */
struct gf_acc {
	__m512i lo, mid, hi;
};

static void gf_acc_first(struct gf_acc *s, __m512i a, __m512i b)
{
	s->lo = _mm512_clmulepi64_epi128(a, b, 0x00);
	s->hi = _mm512_clmulepi64_epi128(a, b, 0x11);
	s->mid = _mm512_xor_si512(_mm512_clmulepi64_epi128(a, b, 0x01),
				  _mm512_clmulepi64_epi128(a, b, 0x10));
}

static void gf_acc_add(struct gf_acc *s, __m512i a, __m512i b)
{
	/* 0x96: three-way XOR */
	s->lo = _mm512_xor_si512(s->lo, _mm512_clmulepi64_epi128(a, b, 0x00));
	s->hi = _mm512_xor_si512(s->hi, _mm512_clmulepi64_epi128(a, b, 0x11));
	s->mid = _mm512_ternarylogic_epi64(s->mid, _mm512_clmulepi64_epi128(a, b, 0x01),
					   _mm512_clmulepi64_epi128(a, b, 0x10), 0x96);
}

/* XOR of a zmm's four 128-bit lanes. */
static __m128i fold4(__m512i v)
{
	__m256i t = _mm256_xor_si256(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
	return _mm_xor_si128(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

static inline __attribute__((always_inline)) __m128i gf_acc_reduce(const struct gf_acc *s)
{
	__m512i lo = _mm512_xor_si512(s->lo, _mm512_bslli_epi128(s->mid, 8));
	__m512i hi = _mm512_xor_si512(s->hi, _mm512_bsrli_epi128(s->mid, 8));
	return gcm_reduce(fold4(lo), fold4(hi));
}

/* Qword mask of the first `blocks` blocks of a zmm (0..4 or more). */
static __mmask8 block_mask(size_t blocks)
{
	return blocks >= 4 ? (__mmask8)0xff : (__mmask8)((1u << (2 * blocks)) - 1);
}

/* Byte mask of the first n bytes of a zmm. */
static __mmask64 byte_mask(size_t n)
{
	return n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
}

/*
 * GHASH n more bytes at p into x (§6.4), the last block zero-padded, 16
 * blocks a step: block j of a step of nb is multiplied by H^(nb - j), the
 * powers being k->h[32 - nb ..]. Reads nothing past p + n.
 */
static __m128i ghash_bytes(const struct aesgcm_key *k, __m128i x, const uint8_t *p, size_t n)
{
	const __m512i bs = _mm512_broadcast_i32x4(gcm_bswap_mask());

	while (n) {
		size_t take = n < 256 ? n : 256, nb = (take + 15) / 16;
		const uint8_t(*h)[16] = k->h + AESGCM_HPOW - nb;
		struct gf_acc s;

		for (size_t j = 0; j < 4 && 64 * j < take; j++) {
			__m512i d = _mm512_maskz_loadu_epi8(byte_mask(take - 64 * j), p + 64 * j);
			__m512i hv = _mm512_maskz_loadu_epi64(block_mask(nb - 4 * j), h + 4 * j);
			d = _mm512_shuffle_epi8(d, bs);
			if (j == 0) {
				d = _mm512_xor_si512(d, _mm512_zextsi128_si512(x));
				gf_acc_first(&s, d, hv);
			} else {
				gf_acc_add(&s, d, hv);
			}
		}
		x = gf_acc_reduce(&s);
		p += take;
		n -= take;
	}
	return x;
}

/* XOR the keystream from counter blocks *ctr, *ctr + 1, ... onto n bytes at
 * p (n < GCM_GROUP: the tail). */
static void ctr_xor(const struct aesgcm_key *k, __m512i ctr, uint8_t *p, size_t n)
{
	const __m512i cs = _mm512_broadcast_i32x4(gcm_ctr_mask());
	const __m512i four = _mm512_set4_epi32(4, 0, 0, 0);

	while (n) {
		size_t take = n < 64 ? n : 64;
		__mmask64 m = byte_mask(take);
		__m512i ks = aes_x4(k, _mm512_shuffle_epi8(ctr, cs));
		__m512i d = _mm512_maskz_loadu_epi8(m, p);
		_mm512_mask_storeu_epi8(p, m, _mm512_xor_si512(d, ks));
		ctr = _mm512_add_epi32(ctr, four);
		p += take;
		n -= take;
	}
}

/*
 * The main loop: `groups` groups of 512 bytes at p, decrypted in place, their
 * ciphertext hashed into x. *ctr holds the next four counter blocks (host
 * order counters) and is advanced. The round keys and powers are loaded
 * from k each pass (the stores to p may alias them as far as the compiler
 * knows, which keeps them out of stack spills).
 */
static __m128i gcm_dec_groups(const struct aesgcm_key *k, __m512i *ctr, __m128i x, uint8_t *p,
			      size_t groups)
{
	const __m512i bs = _mm512_broadcast_i32x4(gcm_bswap_mask());
	const __m512i cs = _mm512_broadcast_i32x4(gcm_ctr_mask());
	const __m512i four = _mm512_set4_epi32(4, 0, 0, 0);
	__m512i c = *ctr;

	for (; groups; groups--, p += GCM_GROUP) {
		__m512i a[8], d[8];
		struct gf_acc s;

#pragma GCC unroll 8
		for (int j = 0; j < 8; j++)
			_mm_prefetch((const char *)p + GCM_PREFETCH + 64 * j, _MM_HINT_T0);
#pragma GCC unroll 8
		for (int j = 0; j < 8; j++) {
			a[j] = _mm512_xor_si512(_mm512_shuffle_epi8(c, cs), bcast(k->rk[0]));
			c = _mm512_add_epi32(c, four);
			d[j] = _mm512_loadu_si512(p + 64 * j);
		}
		gf_acc_first(&s, _mm512_xor_si512(_mm512_shuffle_epi8(d[0], bs),
						  _mm512_zextsi128_si512(x)),
			     _mm512_loadu_si512(k->h[0]));
#pragma GCC unroll 8
		for (int j = 1; j < 8; j++)
			gf_acc_add(&s, _mm512_shuffle_epi8(d[j], bs), _mm512_loadu_si512(k->h[4 * j]));
#pragma GCC unroll 14
		for (unsigned r = 1; r < AESGCM_ROUNDS; r++) {
			__m512i key = bcast(k->rk[r]);
#pragma GCC unroll 8
			for (int j = 0; j < 8; j++)
				a[j] = _mm512_aesenc_epi128(a[j], key);
		}
		__m512i last = bcast(k->rk[AESGCM_ROUNDS]);
#pragma GCC unroll 8
		for (int j = 0; j < 8; j++) {
			a[j] = _mm512_aesenclast_epi128(a[j], last);
			_mm512_storeu_si512(p + 64 * j, _mm512_xor_si512(a[j], d[j]));
		}
		x = gf_acc_reduce(&s);
	}
	*ctr = c;
	return x;
}

/* ---- llm/aesgcm.h ---- */
static void vaes_prefix(const struct aesgcm_key *k, struct aesgcm_prefix *pre, const void *aad,
			size_t n)
{
	__m128i x = _mm_loadu_si128((const __m128i *)pre->x);

	x = ghash_bytes(k, x, aad, n);
	_mm_storeu_si128((__m128i *)pre->x, x);
	pre->len += n;
}

static int vaes_decrypt(const struct aesgcm_key *k, const uint8_t iv[AESGCM_IV_SIZE],
			const struct aesgcm_prefix *pre, const void *aad, size_t aad_len,
			void *buf, size_t len, const uint8_t tag[AESGCM_TAG_SIZE])
{
	uint8_t *p = buf;
	uint64_t aad_total = (pre ? pre->len : 0) + aad_len;
	__m128i x = pre ? _mm_loadu_si128((const __m128i *)pre->x) : _mm_setzero_si128();
	size_t groups = len / GCM_GROUP;

	if ((uint64_t)len > AESGCM_MAX_LEN)
		return 0;
	x = ghash_bytes(k, x, aad, aad_len);

	/* the data's counter blocks inc32^j(J0), j = 1.., one a lane */
	__m512i ctr = _mm512_add_epi32(_mm512_broadcast_i32x4(gcm_first_ctr(iv)),
				       _mm512_set_epi32(3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0));
	x = gcm_dec_groups(k, &ctr, x, p, groups);
	p += groups * GCM_GROUP;
	len -= groups * GCM_GROUP;
	x = ghash_bytes(k, x, p, len);
	ctr_xor(k, ctr, p, len);
	len += groups * GCM_GROUP;

	return gcm_check_tag(k, iv, x, aad_total, buf, len, tag);
}

const struct aesgcm_ops aesgcm_vaes512 = {
	.name = "vaes512+vpclmul",
	.aes_name = "aes_vaes512",
	.ghash_name = "ghash_vpclmul512",
	.need = PLAT_CPU_AVX512F | PLAT_CPU_AVX512BW | PLAT_CPU_AVX512VL | PLAT_CPU_AES |
		PLAT_CPU_PCLMUL | PLAT_CPU_VAES | PLAT_CPU_VPCLMUL,
	.setkey = gcm_setkey_xmm,
	.prefix = vaes_prefix,
	.decrypt = vaes_decrypt,
};
