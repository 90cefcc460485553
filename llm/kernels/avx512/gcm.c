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
 * ---- GHASH with carry-less multiplication ----
 *
 * A GCM block is a polynomial over GF(2): bit 0 (the top bit of byte 0) is
 * the coefficient of x^0, and products are reduced mod
 * g = x^128 + x^7 + x^2 + x + 1 (§6.3). Reverse the 16 bytes and read them
 * as a little-endian 128-bit integer A: then integer bit 127 - i is the
 * coefficient of x^i, i.e. as a polynomial in y (integer bit k = coefficient
 * of y^k) A(y) = y^127 a(1/y). PCLMULQDQ multiplies such integers as
 * polynomials in y. Writing a b = q g + r (deg r < 128) and
 * g*(y) = y^128 g(1/y) = y^128 + y^127 + y^126 + y^121 + 1:
 *
 *   A(y) B(y) = y^254 (ab)(1/y) = [y^126 q(1/y)] g*(y) + y^127 R(y)
 *
 * so the product of a and b, in this form, is R = A B y^-127 mod g*. With
 * the hash key kept as H' = H y mod g*, a product with it is
 * A H' y^-128 mod g*: a Montgomery multiplication by y^128, whose reduction
 * (g* = 1 mod y^64) is two steps of "clear the low 64 bits by adding a
 * multiple of g*, then drop them", each one PCLMULQDQ by
 * (y^121 + y^126 + y^127) / y^64 = 0xc200000000000000 (gf_reduce). The
 * powers H^i are kept the same way (H^i y), since
 * (H^i y)(H y) y^-128 = H^(i+1) y in this form; a sum of products over a
 * group is reduced once, because the reduction is linear.
 *
 * Constant time: no branch or index depends on the key or the data (the
 * lengths are public); the tag is compared by one PTEST over its XOR.
 * Round keys and powers of H are read from the key struct inside the
 * loops, not copied to locals.
 */
#pragma GCC target("aes,pclmul,vaes,vpclmulqdq")
#include <immintrin.h>

#include "../../aesgcm.h"

#define GCM_GROUP 512u /* bytes per pass of the main loop: 32 blocks, 8 zmm */
/* Prefetch distance of the main loop. A streamer slot is larger than the
 * caches and a core here decrypts faster than the hardware prefetcher keeps
 * up with: 64 MiB in place went from ~6 to ~7-8 GB/s on one core. */
#define GCM_PREFETCH 2048u

/* (y^121 + y^126 + y^127) / y^64: the low terms of g*, above its y^0 */
#define GCM_POLY 0xc200000000000000ull

/* Reverses a block's 16 bytes (GCM's bit order to the integer one). */
static __m128i bswap_mask(void)
{
	return _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/* Swaps only bytes 12..15: the counter blocks are kept with their 32-bit
 * counter (SP 800-38D §6.2 inc32, big-endian) in host order, so one vpaddd
 * steps them. */
static __m128i ctr_mask(void)
{
	return _mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
}

static __m512i bcast(const uint8_t b[16])
{
	return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)b));
}

/* ---- AES-256 (FIPS 197) ---- */
/*
 * Key expansion, §5.2 with Nk = 8: round key 2m is the previous even one
 * with each word XORed with all the words before it, and with
 * RotWord(SubWord(last word of round key 2m-1)) ^ Rcon in every word:
 * AESKEYGENASSIST gives that in its dword 3. Odd round keys use
 * SubWord(last word of round key 2m), its dword 2, and no Rcon.
 */
static __m128i key_prefix_xor(__m128i k)
{
	k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
	return _mm_xor_si128(k, _mm_slli_si128(k, 8));
}

static __m128i key_even(__m128i prev, __m128i assist)
{
	return _mm_xor_si128(key_prefix_xor(prev), _mm_shuffle_epi32(assist, 0xff));
}

static __m128i key_odd(__m128i prev, __m128i assist)
{
	return _mm_xor_si128(key_prefix_xor(prev), _mm_shuffle_epi32(assist, 0xaa));
}

static void aes256_expand(const uint8_t key[AESGCM_KEY_SIZE], __m128i rk[AESGCM_ROUNDS + 1])
{
	rk[0] = _mm_loadu_si128((const __m128i *)key);
	rk[1] = _mm_loadu_si128((const __m128i *)(key + 16));
	rk[2] = key_even(rk[0], _mm_aeskeygenassist_si128(rk[1], 0x01));
	rk[3] = key_odd(rk[1], _mm_aeskeygenassist_si128(rk[2], 0));
	rk[4] = key_even(rk[2], _mm_aeskeygenassist_si128(rk[3], 0x02));
	rk[5] = key_odd(rk[3], _mm_aeskeygenassist_si128(rk[4], 0));
	rk[6] = key_even(rk[4], _mm_aeskeygenassist_si128(rk[5], 0x04));
	rk[7] = key_odd(rk[5], _mm_aeskeygenassist_si128(rk[6], 0));
	rk[8] = key_even(rk[6], _mm_aeskeygenassist_si128(rk[7], 0x08));
	rk[9] = key_odd(rk[7], _mm_aeskeygenassist_si128(rk[8], 0));
	rk[10] = key_even(rk[8], _mm_aeskeygenassist_si128(rk[9], 0x10));
	rk[11] = key_odd(rk[9], _mm_aeskeygenassist_si128(rk[10], 0));
	rk[12] = key_even(rk[10], _mm_aeskeygenassist_si128(rk[11], 0x20));
	rk[13] = key_odd(rk[11], _mm_aeskeygenassist_si128(rk[12], 0));
	rk[14] = key_even(rk[12], _mm_aeskeygenassist_si128(rk[13], 0x40));
}

/* One block (the hash key and the tag mask). */
static __m128i aes_block(const struct aesgcm_key *k, __m128i x)
{
	x = _mm_xor_si128(x, _mm_loadu_si128((const __m128i *)k->rk[0]));
	for (unsigned r = 1; r < AESGCM_ROUNDS; r++)
		x = _mm_aesenc_si128(x, _mm_loadu_si128((const __m128i *)k->rk[r]));
	return _mm_aesenclast_si128(x, _mm_loadu_si128((const __m128i *)k->rk[AESGCM_ROUNDS]));
}

/* Four blocks (tails). */
static __m512i aes_x4(const struct aesgcm_key *k, __m512i x)
{
	x = _mm512_xor_si512(x, bcast(k->rk[0]));
	for (unsigned r = 1; r < AESGCM_ROUNDS; r++)
		x = _mm512_aesenc_epi128(x, bcast(k->rk[r]));
	return _mm512_aesenclast_epi128(x, bcast(k->rk[AESGCM_ROUNDS]));
}

/* ---- GF(2^128) in the reflected form (top of file) ---- */
/* (hi:lo) y^-128 mod g*: two Montgomery steps of 64 bits. */
static __m128i gf_reduce(__m128i lo, __m128i hi)
{
	const __m128i poly = _mm_set_epi64x(0, (long long)GCM_POLY);

	/* lo = (w1:w0): adding w0 g* clears w0; dividing by y^64 leaves w1 in the
	 * low half, w0 (from w0 y^128) in the high half, plus w0 * poly. */
	lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), _mm_clmulepi64_si128(lo, poly, 0x00));
	lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), _mm_clmulepi64_si128(lo, poly, 0x00));
	return _mm_xor_si128(lo, hi);
}

static __m128i gf_mul(__m128i a, __m128i b)
{
	__m128i lo = _mm_clmulepi64_si128(a, b, 0x00), hi = _mm_clmulepi64_si128(a, b, 0x11);
	__m128i mid = _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x01),
				    _mm_clmulepi64_si128(a, b, 0x10));

	lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
	hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));
	return gf_reduce(lo, hi);
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
	return gf_reduce(fold4(lo), fold4(hi));
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
	const __m512i bs = _mm512_broadcast_i32x4(bswap_mask());

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
	const __m512i cs = _mm512_broadcast_i32x4(ctr_mask());
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
	const __m512i bs = _mm512_broadcast_i32x4(bswap_mask());
	const __m512i cs = _mm512_broadcast_i32x4(ctr_mask());
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
static void vaes_setkey(struct aesgcm_key *k, const uint8_t key[AESGCM_KEY_SIZE])
{
	__m128i rk[AESGCM_ROUNDS + 1], hk;
	uint64_t w[2], m;

	aes256_expand(key, rk);
	for (unsigned r = 0; r <= AESGCM_ROUNDS; r++)
		_mm_storeu_si128((__m128i *)k->rk[r], rk[r]);
	/* H = E_K(0^128) (§6.4), in the reflected form, times y mod g*: a
	 * one-bit shift left, adding g* - y^128 when y^128 falls out. */
	hk = _mm_shuffle_epi8(aes_block(k, _mm_setzero_si128()), bswap_mask());
	_mm_storeu_si128((__m128i *)w, hk);
	m = 0 - (w[1] >> 63);
	w[1] = (w[1] << 1 | w[0] >> 63) ^ (m & GCM_POLY);
	w[0] = (w[0] << 1) ^ (m & 1);
	hk = _mm_loadu_si128((const __m128i *)w);
	/* k->h[32 - i] = H^i */
	__m128i pw = hk;
	for (unsigned i = 1; i <= AESGCM_HPOW; i++) {
		_mm_storeu_si128((__m128i *)k->h[AESGCM_HPOW - i], pw);
		pw = gf_mul(pw, hk);
	}
	aesgcm_zeroize(rk, sizeof rk);
	aesgcm_zeroize(w, sizeof w);
}

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
	uint8_t j0[16], *p = buf;
	uint64_t aad_total = (pre ? pre->len : 0) + aad_len;
	__m128i x = pre ? _mm_loadu_si128((const __m128i *)pre->x) : _mm_setzero_si128();
	size_t groups = len / GCM_GROUP;

	if ((uint64_t)len > AESGCM_MAX_LEN)
		return 0;
	x = ghash_bytes(k, x, aad, aad_len);

	/* J0 = IV || 0^31 || 1 (§7.2 step 2); the data's counters start at
	 * inc32(J0) = IV || be32(2), here with the counter in host order, one a
	 * lane. */
	memcpy(j0, iv, AESGCM_IV_SIZE);
	j0[12] = 2;
	j0[13] = j0[14] = j0[15] = 0;
	__m512i ctr = _mm512_add_epi32(bcast(j0), _mm512_set_epi32(3, 0, 0, 0, 2, 0, 0, 0, 1, 0,
								     0, 0, 0, 0, 0, 0));
	x = gcm_dec_groups(k, &ctr, x, p, groups);
	p += groups * GCM_GROUP;
	len -= groups * GCM_GROUP;
	x = ghash_bytes(k, x, p, len);
	ctr_xor(k, ctr, p, len);
	len += groups * GCM_GROUP;

	/* The length block [len(A)]64 || [len(C)]64 in bits (§7.2 step 5),
	 * reflected: len(A) in the high qword. */
	__m128i lb = _mm_set_epi64x((long long)(aad_total * 8), (long long)((uint64_t)len * 8));
	x = gf_mul(_mm_xor_si128(x, lb), _mm_loadu_si128((const __m128i *)k->h[AESGCM_HPOW - 1]));

	/* T = E_K(J0) ^ S (§7.2 steps 6-7), compared with tag in constant time */
	j0[12] = j0[13] = j0[14] = 0;
	j0[15] = 1;
	__m128i t = _mm_xor_si128(aes_block(k, _mm_loadu_si128((const __m128i *)j0)),
				  _mm_shuffle_epi8(x, bswap_mask()));
	t = _mm_xor_si128(t, _mm_loadu_si128((const __m128i *)tag));
	int ok = _mm_testz_si128(t, t);
	if (!ok)
		aesgcm_zeroize(buf, len);
	return ok;
}

const struct aesgcm_ops aesgcm_vaes512 = {
	.name = "vaes512+vpclmul",
	.aes_name = "aes_vaes512",
	.ghash_name = "ghash_vpclmul512",
	.setkey = vaes_setkey,
	.prefix = vaes_prefix,
	.decrypt = vaes_decrypt,
};
