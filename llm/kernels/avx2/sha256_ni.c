/*
 * llm/kernels/avx2/sha256_ni.c — the SHA-256 block function (FIPS 180-4
 * §6.2.2) on the x86 SHA extensions (Intel SDM: SHA256RNDS2, SHA256MSG1,
 * SHA256MSG2). The state lives as ABEF and CDGH in two xmm, as SHA256RNDS2
 * wants it; each SHA256RNDS2 does two rounds with the two message-plus-
 * constant words in the low half of its third operand. Message words
 * W[16..63] come four at a time: MSG1 adds sigma0, then the W[t-7] terms
 * (PALIGNR of the two previous groups) and MSG2 adds sigma1.
 */
#pragma GCC target("sha,sse4.1,ssse3")
#include <immintrin.h>

#include "../../sha256.h"

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

void sha256_ni_blocks(uint32_t h[8], const uint8_t *p, size_t n)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i t = _mm_loadu_si128((const __m128i *)h);       /* a b c d */
	__m128i s1 = _mm_loadu_si128((const __m128i *)(h + 4)); /* e f g h */
	__m128i s0;

	t = _mm_shuffle_epi32(t, 0xb1);      /* b a d c */
	s1 = _mm_shuffle_epi32(s1, 0x1b);    /* h g f e */
	s0 = _mm_alignr_epi8(t, s1, 8);      /* ABEF */
	s1 = _mm_blend_epi16(s1, t, 0xf0);   /* CDGH */
	for (; n; n--, p += 64) {
		__m128i save0 = s0, save1 = s1, m[4], msg;
		/* unrolled, so m[] lives in registers: as a loop GCC kept it on
		 * the stack with a test and branch per group, well behind
		 * OpenSSL's SHA-NI code (docs/perf.md, "Streaming reads") */
		_Pragma("GCC unroll 16") for (int g = 0; g < 16; g++) {
			if (g < 4)
				m[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)),
							bswap);
			msg = _mm_add_epi32(m[g % 4], _mm_loadu_si128((const __m128i *)(K256 + 4 * g)));
			s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
			if (g >= 3 && g < 15) {
				/* W of group g + 1: + W[t-7] terms, then sigma1 */
				__m128i w7 = _mm_alignr_epi8(m[g % 4], m[(g + 3) % 4], 4);
				m[(g + 1) % 4] = _mm_add_epi32(m[(g + 1) % 4], w7);
				m[(g + 1) % 4] = _mm_sha256msg2_epu32(m[(g + 1) % 4], m[g % 4]);
			}
			msg = _mm_shuffle_epi32(msg, 0x0e);
			s0 = _mm_sha256rnds2_epu32(s0, s1, msg);
			if (g >= 1 && g < 13) /* sigma0 for the group three on */
				m[(g + 3) % 4] = _mm_sha256msg1_epu32(m[(g + 3) % 4], m[g % 4]);
		}
		s0 = _mm_add_epi32(s0, save0);
		s1 = _mm_add_epi32(s1, save1);
	}
	t = _mm_shuffle_epi32(s0, 0x1b);     /* F E B A */
	s1 = _mm_shuffle_epi32(s1, 0xb1);    /* D C H G */
	s0 = _mm_blend_epi16(t, s1, 0xf0);   /* D C B A */
	s1 = _mm_alignr_epi8(s1, t, 8);      /* H G F E */
	_mm_storeu_si128((__m128i *)h, s0);
	_mm_storeu_si128((__m128i *)(h + 4), s1);
}
