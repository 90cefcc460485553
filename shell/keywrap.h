/*
 * shell/keywrap.h — a model key wrapped to an attested guest's ephemeral
 * X25519 key (docs/attestation.md, "Key release").
 *
 * The host's `verifier wrap` calls keywrap_wrap after the evidence verified;
 * the guest's `unseal --wrapped` calls keywrap_unwrap with the key pair whose
 * public half went into the evidence. Blob (164 bytes):
 *   0    8  "LLMKWRP1"
 *   8   64  REPORT_DATA of the evidence it was made for
 *   72  32  the verifier's ephemeral X25519 public key
 *   104 12  AES-GCM IV
 *   116 32  the model key, encrypted
 *   148 16  GCM tag
 * shared = X25519(verifier private, guest public) (RFC 7748 §5);
 * k = HKDF-SHA-256(salt = REPORT_DATA, IKM = shared,
 *                  info = "llmk key wrap v1" || guest public || verifier public), 32 bytes
 *     (RFC 5869);
 * AES-256-GCM under k, AAD = bytes 0..103, plaintext the 32-byte model key.
 *
 * Portable (BearSSL only: the kernel's freestanding build links it too).
 * Secrets (private keys, shared secret, k, the model key) pass through no
 * data-dependent branch or index and are zeroized before return.
 */
#ifndef SHELL_KEYWRAP_H
#define SHELL_KEYWRAP_H

#include "../kernel/platform.h"

#define KEYWRAP_MAGIC "LLMKWRP1"
#define KEYWRAP_SIZE 164u
#define KEYWRAP_AAD_SIZE 104u /* magic, report data, verifier public */

/*
 * Wrap key to guest_pub. eph_seed: 32 fresh random bytes from the caller (the
 * verifier: getrandom), used once. It is the verifier's ephemeral X25519
 * private key (X25519 clamps it, RFC 7748 §5), and the IV is the first 12
 * bytes of SHA-256("llmk key wrap iv v1" || eph_seed): as unpredictable as
 * the seed, and unique for as long as the seeds are (the GCM key is new for
 * every seed anyway). Returns 0; -LLMK_EINVAL if guest_pub is a point of
 * small order (the shared secret would be all zeros, RFC 7748 §6.1).
 */
int keywrap_wrap(const uint8_t guest_pub[32], const uint8_t report_data[64], const uint8_t key[32],
		 const uint8_t eph_seed[32], uint8_t out[KEYWRAP_SIZE]);

/*
 * Unwrap with the guest's key pair (priv, pub). On success 0, with the blob's
 * report data (the caller checks it is one its current key pair produced)
 * and the model key. -LLMK_EFORMAT for a wrong size or magic; -LLMK_EAUTH
 * when the tag does not verify (another key pair, another report data, any
 * byte changed). On failure key_out and report_data_out are zeroed.
 */
int keywrap_unwrap(const uint8_t priv[32], const uint8_t pub[32], const uint8_t *blob, size_t n,
		   uint8_t report_data_out[64], uint8_t key_out[32]);

/* X25519(scalar, u) (RFC 7748 §5) into out; 0, or -LLMK_EINVAL when the
 * result is all zeros (u of small order). */
int keywrap_x25519(uint8_t out[32], const uint8_t scalar[32], const uint8_t u[32]);
/* The public key of priv: X25519(priv, 9). */
int keywrap_public(const uint8_t priv[32], uint8_t pub[32]);

#endif
