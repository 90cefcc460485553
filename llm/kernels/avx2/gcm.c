/*
 * llm/kernels/avx2/gcm.c — AES-256-GCM decrypt-and-verify on ymm:
 * llm/aesgcm.h's "vaes256+vpclmul" (VAES and VPCLMULQDQ on 256 bits, AVX2),
 * for the CPUs that have those but no AVX-512 (AMD Zen 3: most SEV-SNP
 * hosts). The zmm implementation (avx512/gcm.c) is the same data path at
 * twice the width; this one is shaped by what AVX2 lacks: 16 vector
 * registers, not 32, and no masked byte loads and stores.
 *
 * GCM is NIST SP 800-38D; AES is FIPS 197. The data path, per 256 bytes
 * (16 blocks, eight ymm of two blocks):
 *
 *   CTR    counter blocks inc32^j(J0) (§6.5, §7.2), 15 rounds of AES each,
 *          eight ymm in flight (VAES has a latency of several cycles and
 *          issues more than one a cycle), XORed onto the ciphertext in place.
 *   GHASH  the ciphertext, each block times the power of H that brings it
 *          to the end of the group: X' = (X + C1) H^16 + C2 H^15 + ... + C16 H
 *          (SP 800-38D §6.4 unrolled), summed unreduced, reduced once; each
 *          product in three carry-less multiplies (Karatsuba), not four.
 *
 * The two are independent within a group (decryption hashes the ciphertext
 * it reads), so one pass does both: a ymm of ciphertext is hashed between
 * AES rounds, one per round, so the AES and carry-less multiply units run
 * side by side and the ciphertext never has to stay in registers (the eight
 * AES states, a round key and the three sums take most of the sixteen); it
 * is read again, from L1, for the final XOR. Tails (< 256 bytes) and the AAD
 * go through a zeroed buffer on the stack, which gives GHASH its zero
 * padding (AVX2 has no masked byte loads); a tail's plaintext there is
 * zeroized after. They take the plain four-multiply products.
 *
 * GHASH's representation (reflected, H kept as H y), the key schedule, the
 * powers of H, the GF products on xmm and the tag check are gcm_xmm.h's,
 * shared with the zmm implementation.
 *
 * Constant time: no branch or index depends on the key or the data (the
 * lengths are public); the tag is compared by one PTEST over its XOR.
 * Round keys and powers of H are read from the key struct inside the
 * loops, not copied to locals.
 */
#pragma GCC target("aes,pclmul,vaes,vpclmulqdq")
#include "gcm_xmm.h"

#define GCM_GROUP 256u /* bytes per pass of the main loop: 16 blocks, 8 ymm */
#define GCM_GROUP_BLOCKS (GCM_GROUP / 16)
/* where the key keeps the main loop's Karatsuba sums (vaes256_setkey):
 * below the powers it uses */
#define KX_AT 0u
_Static_assert(KX_AT + GCM_GROUP_BLOCKS / 2 <= AESGCM_HPOW - GCM_GROUP_BLOCKS,
	       "the sums and the powers do not overlap");

static __m256i bcast(const uint8_t b[16])
{
	return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)b));
}

static __m256i bswap_mask2(void)
{
	return _mm256_broadcastsi128_si256(gcm_bswap_mask());
}

/* x in lane 0 (lane = 0) or lane 1 of a ymm, the other lane zero. */
static __m256i in_lane(__m128i x, int lane)
{
	return lane ? _mm256_inserti128_si256(_mm256_setzero_si256(), x, 1)
		    : _mm256_inserti128_si256(_mm256_setzero_si256(), x, 0);
}

/* ---- two blocks a ymm ---- */
/* AES-256 (FIPS 197) of two blocks (tails). */
static __m256i aes_x2(const struct aesgcm_key *k, __m256i x)
{
	x = _mm256_xor_si256(x, bcast(k->rk[0]));
	for (unsigned r = 1; r < AESGCM_ROUNDS; r++)
		x = _mm256_aesenc_epi128(x, bcast(k->rk[r]));
	return _mm256_aesenclast_epi128(x, bcast(k->rk[AESGCM_ROUNDS]));
}

/* Unreduced sums of 256-bit products, two lanes each (schoolbook: the
 * 64x64 products lo*lo, hi*hi, and the two cross ones into mid). */
struct gf_acc {
	__m256i lo, mid, hi;
};

static inline __attribute__((always_inline)) void gf_acc_first(struct gf_acc *s, __m256i a,
							       __m256i b)
{
	s->lo = _mm256_clmulepi64_epi128(a, b, 0x00);
	s->hi = _mm256_clmulepi64_epi128(a, b, 0x11);
	s->mid = _mm256_xor_si256(_mm256_clmulepi64_epi128(a, b, 0x01),
				  _mm256_clmulepi64_epi128(a, b, 0x10));
}

/* v as it is, in a register, here: GCC otherwise reassociates the chains of
 * XORs into the sums, computes every product of a group first and spills
 * them all to the stack. */
static inline __attribute__((always_inline)) __m256i here(__m256i v)
{
	__asm__("" : "+x"(v));
	return v;
}

static inline __attribute__((always_inline)) void gf_acc_add(struct gf_acc *s, __m256i a,
							     __m256i b)
{
	s->lo = here(_mm256_xor_si256(s->lo, _mm256_clmulepi64_epi128(a, b, 0x00)));
	s->hi = here(_mm256_xor_si256(s->hi, _mm256_clmulepi64_epi128(a, b, 0x11)));
	s->mid = here(_mm256_xor_si256(s->mid, _mm256_clmulepi64_epi128(a, b, 0x01)));
	s->mid = here(_mm256_xor_si256(s->mid, _mm256_clmulepi64_epi128(a, b, 0x10)));
}

/*
 * The main loop's products, Karatsuba's way: a b's middle term
 * a1 b0 + a0 b1 = (a0 + a1)(b0 + b1) + a0 b0 + a1 b1, three carry-less
 * multiplies a block, not four, for a shuffle and two XORs (the multiplies
 * are what competes with AES for the core's vector units). The sums
 * a0 + a1 of the data come from the shuffle and an XOR; those of the
 * powers are kept with the key (kx; sel: which of its qwords).
 * gf_acc_mid_fix turns the sums of (a0 + a1)(b0 + b1) into the middle
 * terms before the reduction.
 */
static inline __attribute__((always_inline)) void gf_acc_add_k(struct gf_acc *s, __m256i a,
							       __m256i b, __m256i kx, int sel)
{
	__m256i ax = _mm256_xor_si256(a, _mm256_shuffle_epi32(a, 0x4e));

	s->lo = here(_mm256_xor_si256(s->lo, _mm256_clmulepi64_epi128(a, b, 0x00)));
	s->hi = here(_mm256_xor_si256(s->hi, _mm256_clmulepi64_epi128(a, b, 0x11)));
	s->mid = here(_mm256_xor_si256(
		s->mid, sel ? _mm256_clmulepi64_epi128(ax, kx, 0x10)
			    : _mm256_clmulepi64_epi128(ax, kx, 0x00)));
}

static inline __attribute__((always_inline)) void gf_acc_mid_fix(struct gf_acc *s)
{
	s->mid = _mm256_xor_si256(s->mid, _mm256_xor_si256(s->lo, s->hi));
}

static inline __attribute__((always_inline)) __m128i gf_acc_reduce(const struct gf_acc *s)
{
	__m256i lo = _mm256_xor_si256(s->lo, _mm256_slli_si256(s->mid, 8));
	__m256i hi = _mm256_xor_si256(s->hi, _mm256_srli_si256(s->mid, 8));
	return gcm_reduce(_mm_xor_si128(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1)),
			  _mm_xor_si128(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1)));
}

/*
 * GHASH n more bytes at p into x (§6.4), the last block zero-padded, up to
 * 16 blocks a step, reduced once a step. A step of nb blocks is hashed as
 * np = ceil(nb / 2) ymm against the powers H^(2 np) .. H^1
 * (k->h[32 - 2 np ..]); when nb is odd, a zero block goes in front, which
 * adds nothing, and x goes into the lane of the first real block. A full
 * step is read in place, a shorter one (the last) from a zeroed copy.
 */
static __m128i ghash_bytes(const struct aesgcm_key *k, __m128i x, const uint8_t *p, size_t n)
{
	const __m256i bs = bswap_mask2();
	uint8_t tmp[GCM_GROUP];

	while (n) {
		size_t take = n < GCM_GROUP ? n : GCM_GROUP, nb = (take + 15) / 16;
		size_t np = (nb + 1) / 2, pad = 2 * np - nb;
		const uint8_t(*h)[16] = k->h + AESGCM_HPOW - 2 * np;
		const uint8_t *src = p;
		struct gf_acc s;

		if (take < GCM_GROUP) {
			memset(tmp, 0, 32 * np);
			memcpy(tmp + 16 * pad, p, take);
			src = tmp;
		}
		gf_acc_first(&s,
			     _mm256_xor_si256(_mm256_shuffle_epi8(
						      _mm256_loadu_si256((const __m256i *)src), bs),
					      in_lane(x, (int)pad)),
			     _mm256_loadu_si256((const __m256i *)h));
		for (size_t j = 1; j < np; j++)
			gf_acc_add(&s,
				   _mm256_shuffle_epi8(
					   _mm256_loadu_si256((const __m256i *)(src + 32 * j)), bs),
				   _mm256_loadu_si256((const __m256i *)(h + 2 * j)));
		x = gf_acc_reduce(&s);
		p += take;
		n -= take;
	}
	return x;
}

/* XOR the keystream from counter blocks ctr (two: this and the next)
 * onto n bytes at p (n < GCM_GROUP: the tail), through a copy on the stack
 * that is zeroized after. */
static void ctr_xor(const struct aesgcm_key *k, __m256i ctr, uint8_t *p, size_t n)
{
	const __m256i cs = _mm256_broadcastsi128_si256(gcm_ctr_mask());
	const __m256i two = _mm256_set_epi32(2, 0, 0, 0, 2, 0, 0, 0);
	uint8_t tmp[GCM_GROUP];

	if (!n)
		return;
	memcpy(tmp, p, n);
	for (size_t off = 0; off < n; off += 32) {
		__m256i ks = aes_x2(k, _mm256_shuffle_epi8(ctr, cs));
		__m256i d = _mm256_loadu_si256((const __m256i *)(tmp + off));
		_mm256_storeu_si256((__m256i *)(tmp + off), _mm256_xor_si256(d, ks));
		ctr = _mm256_add_epi32(ctr, two);
	}
	memcpy(p, tmp, n);
	aesgcm_zeroize(tmp, sizeof tmp);
}

/*
 * The main loop: `groups` groups of 256 bytes at p, decrypted in place, their
 * ciphertext hashed into x. *ctr holds the next two counter blocks (host
 * order counters) and is advanced. The round keys and powers are loaded
 * from k each pass (the stores to p may alias them as far as the compiler
 * knows, which keeps them out of stack spills).
 */
static __m128i gcm_dec_groups(const struct aesgcm_key *k, __m256i *ctr, __m128i x, uint8_t *p,
			      size_t groups)
{
	const __m256i bs = bswap_mask2();
	const __m256i cs = _mm256_broadcastsi128_si256(gcm_ctr_mask());
	const __m256i two = _mm256_set_epi32(2, 0, 0, 0, 2, 0, 0, 0);
	const uint8_t(*h)[16] = k->h + AESGCM_HPOW - GCM_GROUP_BLOCKS;
	const uint8_t(*kx)[16] = k->h + KX_AT;
	__m256i c = *ctr;

	for (; groups; groups--, p += GCM_GROUP) {
		__m256i a[8];
		struct gf_acc s = {_mm256_setzero_si256(), _mm256_setzero_si256(),
				   _mm256_setzero_si256()};

#pragma GCC unroll 8
		for (int j = 0; j < 8; j++) {
			a[j] = _mm256_xor_si256(_mm256_shuffle_epi8(c, cs), bcast(k->rk[0]));
			c = _mm256_add_epi32(c, two);
		}
		/* rounds 1-8 each hash ymm r - 1 of the ciphertext */
#pragma GCC unroll 14
		for (unsigned r = 1; r < AESGCM_ROUNDS; r++) {
			__m256i key = bcast(k->rk[r]);
#pragma GCC unroll 8
			for (int j = 0; j < 8; j++)
				a[j] = _mm256_aesenc_epi128(a[j], key);
			if (r <= 8) {
				unsigned j = r - 1;
				__m256i d = _mm256_shuffle_epi8(
					_mm256_loadu_si256((const __m256i *)(p + 32 * j)), bs);
				if (j == 0)
					d = _mm256_xor_si256(d, in_lane(x, 0));
				gf_acc_add_k(&s, d, _mm256_loadu_si256((const __m256i *)(h + 2 * j)),
					     _mm256_loadu_si256((const __m256i *)(kx + 2 * (j / 2))),
					     (int)(j & 1));
			}
		}
		__m256i last = bcast(k->rk[AESGCM_ROUNDS]);
#pragma GCC unroll 8
		for (int j = 0; j < 8; j++) {
			__m256i d = _mm256_loadu_si256((const __m256i *)(p + 32 * j));
			_mm256_storeu_si256((__m256i *)(p + 32 * j),
					    _mm256_xor_si256(_mm256_aesenclast_epi128(a[j], last), d));
		}
		gf_acc_mid_fix(&s);
		x = gf_acc_reduce(&s);
	}
	*ctr = c;
	return x;
}

/* ---- llm/aesgcm.h ---- */
/*
 * The key: gcm_setkey_xmm's round keys and powers, of which this code uses
 * H^16 .. H^1 (k->h[16 ..]); k->h[KX_AT ..] then holds, for the main loop,
 * the sums of the two halves of each power (gf_acc_add_k), in the order it
 * loads them: ymm m (two entries) serves the power pairs 2m and 2m + 1 of a
 * group, lane l holding power pair 2m's lane-l sum in qword 0 and pair
 * 2m + 1's in qword 1.
 */
static void vaes256_setkey(struct aesgcm_key *k, const uint8_t key[AESGCM_KEY_SIZE])
{
	const uint8_t(*h)[16] = k->h + AESGCM_HPOW - GCM_GROUP_BLOCKS;
	uint64_t w[2], kx[GCM_GROUP_BLOCKS];

	gcm_setkey_xmm(k, key);
	for (unsigned i = 0; i < GCM_GROUP_BLOCKS; i++) {
		memcpy(w, h[i], 16);
		kx[i] = w[0] ^ w[1];
	}
	for (unsigned m = 0; m < GCM_GROUP_BLOCKS / 4; m++)
		for (unsigned l = 0; l < 2; l++) {
			/* power pair j covers powers 2j (lane 0) and 2j + 1 (lane 1) */
			w[0] = kx[2 * (2 * m) + l];
			w[1] = kx[2 * (2 * m + 1) + l];
			memcpy(k->h[KX_AT + 2 * m + l], w, 16);
		}
	aesgcm_zeroize(w, sizeof w);
	aesgcm_zeroize(kx, sizeof kx);
}

static void vaes256_prefix(const struct aesgcm_key *k, struct aesgcm_prefix *pre,
			   const void *aad, size_t n)
{
	__m128i x = _mm_loadu_si128((const __m128i *)pre->x);

	x = ghash_bytes(k, x, aad, n);
	_mm_storeu_si128((__m128i *)pre->x, x);
	pre->len += n;
}

static int vaes256_decrypt(const struct aesgcm_key *k, const uint8_t iv[AESGCM_IV_SIZE],
			   const struct aesgcm_prefix *pre, const void *aad, size_t aad_len,
			   void *buf, size_t len, const uint8_t tag[AESGCM_TAG_SIZE])
{
	uint8_t *p = buf;
	uint64_t aad_total = (pre ? pre->len : 0) + aad_len;
	__m128i x = pre ? _mm_loadu_si128((const __m128i *)pre->x) : _mm_setzero_si128();
	size_t groups = len / GCM_GROUP, tail = len % GCM_GROUP;

	if ((uint64_t)len > AESGCM_MAX_LEN)
		return 0;
	x = ghash_bytes(k, x, aad, aad_len);

	/* the data's counter blocks inc32^j(J0), j = 1.., one a lane */
	__m256i ctr = _mm256_add_epi32(_mm256_broadcastsi128_si256(gcm_first_ctr(iv)),
				       _mm256_set_epi32(1, 0, 0, 0, 0, 0, 0, 0));
	x = gcm_dec_groups(k, &ctr, x, p, groups);
	p += groups * GCM_GROUP;
	x = ghash_bytes(k, x, p, tail);
	ctr_xor(k, ctr, p, tail);

	return gcm_check_tag(k, iv, x, aad_total, buf, len, tag);
}

const struct aesgcm_ops aesgcm_vaes256 = {
	.name = "vaes256+vpclmul",
	.aes_name = "aes_vaes256",
	.ghash_name = "ghash_vpclmul256",
	.need = PLAT_CPU_AVX2 | PLAT_CPU_AES | PLAT_CPU_PCLMUL | PLAT_CPU_VAES | PLAT_CPU_VPCLMUL,
	.setkey = vaes256_setkey,
	.prefix = vaes256_prefix,
	.decrypt = vaes256_decrypt,
};
