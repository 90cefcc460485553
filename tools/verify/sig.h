/*
 * tools/verify/sig.h — the signature schemes the evidence uses, over
 * BearSSL: RSASSA-PSS with SHA-384 (AMD's ARK, ASK and VCEK certificates),
 * ECDSA on P-256 and P-384 (VCEK reports, Intel's certificates and quotes).
 *
 * BearSSL 0.6 (Debian's) has the raw RSA public operation and ECDSA but no
 * PSS, so EMSA-PSS-VERIFY (RFC 8017 §9.1.2) is written here on top of
 * br_rsa_public. Everything here handles public data only.
 */
#ifndef TOOLS_VERIFY_SIG_H
#define TOOLS_VERIFY_SIG_H

#include <stddef.h>
#include <stdint.h>

#define SIG_SHA384_LEN 48
#define SIG_PSS_SALT_LEN 48 /* AMD's certificates: saltLength 48 */

/*
 * RSASSA-PSS-VERIFY (RFC 8017 §8.1.2) with SHA-384, MGF1-SHA-384, salt
 * length 48, trailer 0xbc. n and e are big-endian magnitudes (n of 2048 to
 * 4096 bits), mhash = SHA-384 of the signed message. 1 if valid, else 0.
 */
int sig_rsa_pss_sha384_ok(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len,
			  const uint8_t mhash[SIG_SHA384_LEN], const uint8_t *sig, size_t sig_len);

/*
 * ECDSA verification; curve is BR_EC_secp256r1 or BR_EC_secp384r1, q the
 * uncompressed point (0x04 || X || Y), rs = r || s big-endian, each the
 * curve's size. 1 if valid, else 0.
 */
int sig_ecdsa_ok(int curve, const uint8_t *q, size_t q_len, const uint8_t *hash, size_t hash_len,
		 const uint8_t *rs, size_t rs_len);

#endif
