/*
 * llm/kernels/avx2/gcm_xmm.h — the one-block parts of AES-256-GCM that the
 * ymm ("vaes256+vpclmul", avx2/gcm.c) and zmm ("vaes512+vpclmul",
 * avx512/gcm.c) implementations of llm/aesgcm.h share: the AES-256 key
 * schedule and single-block cipher, GF(2^128) products on xmm, the key
 * set-up (round keys and the powers of H) and the tag check. The includer
 * enables "aes,pclmul" (and SSE4.1) for its functions before including this.
 *
 * GCM is NIST SP 800-38D; AES is FIPS 197.
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
 * (y^121 + y^126 + y^127) / y^64 = 0xc200000000000000 (gcm_reduce). The
 * powers H^i are kept the same way (H^i y), since
 * (H^i y)(H y) y^-128 = H^(i+1) y in this form; a sum of products over a
 * group of blocks is reduced once, because the reduction is linear.
 *
 * Constant time: no branch or index depends on the key or the data (the
 * lengths are public); the tag is compared by one PTEST over its XOR.
 */
#ifndef LLM_KERNELS_AVX2_GCM_XMM_H
#define LLM_KERNELS_AVX2_GCM_XMM_H

#include <immintrin.h>

#include "../../aesgcm.h"

/* (y^121 + y^126 + y^127) / y^64: the low terms of g*, above its y^0 */
#define GCM_POLY 0xc200000000000000ull

/* Reverses a block's 16 bytes (GCM's bit order to the integer one). */
static inline __m128i gcm_bswap_mask(void)
{
	return _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/* Swaps only bytes 12..15: the counter blocks are kept with their 32-bit
 * counter (SP 800-38D §6.2 inc32, big-endian) in host order, so one vpaddd
 * steps them. */
static inline __m128i gcm_ctr_mask(void)
{
	return _mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
}

/* ---- AES-256 (FIPS 197) ---- */
/*
 * Key expansion, §5.2 with Nk = 8: round key 2m is the previous even one
 * with each word XORed with all the words before it, and with
 * RotWord(SubWord(last word of round key 2m-1)) ^ Rcon in every word:
 * AESKEYGENASSIST gives that in its dword 3. Odd round keys use
 * SubWord(last word of round key 2m), its dword 2, and no Rcon.
 */
static inline __m128i gcm_key_prefix_xor(__m128i k)
{
	k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
	return _mm_xor_si128(k, _mm_slli_si128(k, 8));
}

static inline __m128i gcm_key_even(__m128i prev, __m128i assist)
{
	return _mm_xor_si128(gcm_key_prefix_xor(prev), _mm_shuffle_epi32(assist, 0xff));
}

static inline __m128i gcm_key_odd(__m128i prev, __m128i assist)
{
	return _mm_xor_si128(gcm_key_prefix_xor(prev), _mm_shuffle_epi32(assist, 0xaa));
}

static inline void gcm_aes256_expand(const uint8_t key[AESGCM_KEY_SIZE],
				     __m128i rk[AESGCM_ROUNDS + 1])
{
	rk[0] = _mm_loadu_si128((const __m128i *)key);
	rk[1] = _mm_loadu_si128((const __m128i *)(key + 16));
	rk[2] = gcm_key_even(rk[0], _mm_aeskeygenassist_si128(rk[1], 0x01));
	rk[3] = gcm_key_odd(rk[1], _mm_aeskeygenassist_si128(rk[2], 0));
	rk[4] = gcm_key_even(rk[2], _mm_aeskeygenassist_si128(rk[3], 0x02));
	rk[5] = gcm_key_odd(rk[3], _mm_aeskeygenassist_si128(rk[4], 0));
	rk[6] = gcm_key_even(rk[4], _mm_aeskeygenassist_si128(rk[5], 0x04));
	rk[7] = gcm_key_odd(rk[5], _mm_aeskeygenassist_si128(rk[6], 0));
	rk[8] = gcm_key_even(rk[6], _mm_aeskeygenassist_si128(rk[7], 0x08));
	rk[9] = gcm_key_odd(rk[7], _mm_aeskeygenassist_si128(rk[8], 0));
	rk[10] = gcm_key_even(rk[8], _mm_aeskeygenassist_si128(rk[9], 0x10));
	rk[11] = gcm_key_odd(rk[9], _mm_aeskeygenassist_si128(rk[10], 0));
	rk[12] = gcm_key_even(rk[10], _mm_aeskeygenassist_si128(rk[11], 0x20));
	rk[13] = gcm_key_odd(rk[11], _mm_aeskeygenassist_si128(rk[12], 0));
	rk[14] = gcm_key_even(rk[12], _mm_aeskeygenassist_si128(rk[13], 0x40));
}

/* One block (the hash key and the tag mask). */
static inline __m128i gcm_aes_block(const struct aesgcm_key *k, __m128i x)
{
	x = _mm_xor_si128(x, _mm_loadu_si128((const __m128i *)k->rk[0]));
	for (unsigned r = 1; r < AESGCM_ROUNDS; r++)
		x = _mm_aesenc_si128(x, _mm_loadu_si128((const __m128i *)k->rk[r]));
	return _mm_aesenclast_si128(x, _mm_loadu_si128((const __m128i *)k->rk[AESGCM_ROUNDS]));
}

/* ---- GF(2^128) in the reflected form (top of file) ---- */
/* (hi:lo) y^-128 mod g*: two Montgomery steps of 64 bits. */
static inline __m128i gcm_reduce(__m128i lo, __m128i hi)
{
	const __m128i poly = _mm_set_epi64x(0, (long long)GCM_POLY);

	/* lo = (w1:w0): adding w0 g* clears w0; dividing by y^64 leaves w1 in the
	 * low half, w0 (from w0 y^128) in the high half, plus w0 * poly. */
	lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), _mm_clmulepi64_si128(lo, poly, 0x00));
	lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), _mm_clmulepi64_si128(lo, poly, 0x00));
	return _mm_xor_si128(lo, hi);
}

static inline __m128i gcm_mul(__m128i a, __m128i b)
{
	__m128i lo = _mm_clmulepi64_si128(a, b, 0x00), hi = _mm_clmulepi64_si128(a, b, 0x11);
	__m128i mid = _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x01),
				    _mm_clmulepi64_si128(a, b, 0x10));

	lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
	hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));
	return gcm_reduce(lo, hi);
}

/* ---- the key and the tag ---- */
/* Round keys into k->rk and H^i into k->h[AESGCM_HPOW - i], i = 1..32. */
static inline void gcm_setkey_xmm(struct aesgcm_key *k, const uint8_t key[AESGCM_KEY_SIZE])
{
	__m128i rk[AESGCM_ROUNDS + 1], hk;
	uint64_t w[2], m;

	gcm_aes256_expand(key, rk);
	for (unsigned r = 0; r <= AESGCM_ROUNDS; r++)
		_mm_storeu_si128((__m128i *)k->rk[r], rk[r]);
	/* H = E_K(0^128) (§6.4), in the reflected form, times y mod g*: a
	 * one-bit shift left, adding g* - y^128 when y^128 falls out. */
	hk = _mm_shuffle_epi8(gcm_aes_block(k, _mm_setzero_si128()), gcm_bswap_mask());
	_mm_storeu_si128((__m128i *)w, hk);
	m = 0 - (w[1] >> 63);
	w[1] = (w[1] << 1 | w[0] >> 63) ^ (m & GCM_POLY);
	w[0] = (w[0] << 1) ^ (m & 1);
	hk = _mm_loadu_si128((const __m128i *)w);
	__m128i pw = hk;
	for (unsigned i = 1; i <= AESGCM_HPOW; i++) {
		_mm_storeu_si128((__m128i *)k->h[AESGCM_HPOW - i], pw);
		pw = gcm_mul(pw, hk);
	}
	aesgcm_zeroize(rk, sizeof rk);
	aesgcm_zeroize(w, sizeof w);
}

/* The data's first counter block inc32(J0) = IV || be32(2) (§7.2 step 2,
 * J0 = IV || 0^31 || 1), with its counter in host order (gcm_ctr_mask). */
static inline __m128i gcm_first_ctr(const uint8_t iv[AESGCM_IV_SIZE])
{
	uint8_t b[16];

	memcpy(b, iv, AESGCM_IV_SIZE);
	b[12] = 2;
	b[13] = b[14] = b[15] = 0;
	return _mm_loadu_si128((const __m128i *)b);
}

/*
 * The end of a decryption: x is the GHASH of the AAD and the ciphertext;
 * with the length block [len(A)]64 || [len(C)]64 in bits (§7.2 step 5) it
 * gives S, and T = E_K(J0) ^ S (steps 6-7) is compared with tag in constant
 * time. 1 if they match; else 0 and buf[0, len) zeroed.
 */
static inline int gcm_check_tag(const struct aesgcm_key *k, const uint8_t iv[AESGCM_IV_SIZE],
				__m128i x, uint64_t aad_len, void *buf, size_t len,
				const uint8_t tag[AESGCM_TAG_SIZE])
{
	uint8_t j0[16];

	/* reflected: len(A) in the high qword */
	__m128i lb = _mm_set_epi64x((long long)(aad_len * 8), (long long)((uint64_t)len * 8));
	x = gcm_mul(_mm_xor_si128(x, lb), _mm_loadu_si128((const __m128i *)k->h[AESGCM_HPOW - 1]));

	memcpy(j0, iv, AESGCM_IV_SIZE);
	j0[12] = j0[13] = j0[14] = 0;
	j0[15] = 1;
	__m128i t = _mm_xor_si128(gcm_aes_block(k, _mm_loadu_si128((const __m128i *)j0)),
				  _mm_shuffle_epi8(x, gcm_bswap_mask()));
	t = _mm_xor_si128(t, _mm_loadu_si128((const __m128i *)tag));
	int ok = _mm_testz_si128(t, t);
	if (!ok)
		aesgcm_zeroize(buf, len);
	return ok;
}

#endif
