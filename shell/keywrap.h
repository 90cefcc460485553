/*
 * shell/keywrap.h — a model key wrapped to an attested guest's ephemeral
 * X25519 key and, for a vTPM, to its TPM (docs/attestation.md, "Key
 * release").
 *
 * The host's `verifier wrap` calls keywrap_wrap after the evidence verified;
 * the guest's `unseal --wrapped` calls keywrap_unwrap with the key pair whose
 * public half went into the evidence. Blob (166 + C bytes):
 *   0       8  "LLMKWRP2"
 *   8      64  REPORT_DATA of the evidence it was made for
 *   72     32  the verifier's ephemeral X25519 public key
 *   104    12  AES-GCM IV
 *   116     2  C, the credential's length, little-endian (0: none)
 *   118     C  a TPM credential (tpm2_makecredential's file) made for the
 *              evidence's EK and the name of its AK (vtpm evidence; none for
 *              snp and tdx, whose reports the hardware signs)
 *   118+C  32  the model key, encrypted
 *   150+C  16  GCM tag
 * shared = X25519(verifier private, guest public) (RFC 7748 §5);
 * S      = the credential's secret, which only TPM2_ActivateCredential in the
 *          TPM holding both the certified EK and that AK recovers (empty
 *          without a credential);
 * k = HKDF-SHA-256(salt = REPORT_DATA, IKM = shared || S,
 *                  info = "llmk key wrap v2" || guest public || verifier public), 32 bytes
 *     (RFC 5869);
 * AES-256-GCM under k, AAD = bytes 0..118+C, plaintext the 32-byte model key.
 *
 * Why S: a quote proves only that the key in the bundle signed it. Whoever
 * makes a software key with the AK's template can sign a quote over old
 * PCR values and their own X25519 key; with S in the key schedule, what is
 * released to them opens only inside the TPM the EK certificate names
 * (TPM 2.0 Part 1 §24).
 *
 * Portable (BearSSL only: the kernel's freestanding build links it too).
 * Secrets (private keys, shared secret, S, k, the model key) pass through
 * no data-dependent branch or index and are zeroized before return.
 */
#ifndef SHELL_KEYWRAP_H
#define SHELL_KEYWRAP_H

#include "../kernel/platform.h"

#define KEYWRAP_MAGIC "LLMKWRP2"
#define KEYWRAP_HDR 118u        /* magic, report data, verifier public, IV, C */
#define KEYWRAP_CRED_MAX 1024u  /* an RSA 2048 EK's credential is ~330 bytes */
#define KEYWRAP_MIN (KEYWRAP_HDR + 48u)
#define KEYWRAP_MAX (KEYWRAP_MIN + KEYWRAP_CRED_MAX)
#define KEYWRAP_SECRET_MAX 64u

/*
 * Wrap key to guest_pub, with the credential cred[0..cred_n) whose secret
 * is secret[0..secret_n) (both empty, or both not: the caller made the
 * credential). eph_seed: 32 fresh random bytes from the caller (the
 * verifier: getrandom), used once. It is the verifier's ephemeral X25519
 * private key (X25519 clamps it, RFC 7748 §5), and the IV is the first 12
 * bytes of SHA-256("llmk key wrap iv v1" || eph_seed): as unpredictable as
 * the seed, and unique for as long as the seeds are (the GCM key is new for
 * every seed anyway). Returns the blob's length in *n; -LLMK_EINVAL if
 * guest_pub is a point of small order (the shared secret would be all
 * zeros, RFC 7748 §6.1) or the credential and secret do not go together,
 * -LLMK_ERANGE if out[cap] is too small.
 */
int keywrap_wrap(const uint8_t guest_pub[32], const uint8_t report_data[64], const uint8_t key[32],
		 const uint8_t eph_seed[32], const uint8_t *cred, size_t cred_n,
		 const uint8_t *secret, size_t secret_n, uint8_t *out, size_t cap, size_t *n);

/*
 * The blob's form, before anything is authenticated: its report data and
 * its credential (*cred_n 0: none). 0, or -LLMK_EFORMAT for a wrong size
 * or magic. The caller looks the report data up (which evidence, which
 * provider), activates the credential, then unwraps: nothing here is
 * trusted until keywrap_unwrap's tag verified.
 */
int keywrap_parse(const uint8_t *blob, size_t n, uint8_t report_data[64], const uint8_t **cred,
		  size_t *cred_n);

/*
 * Unwrap with the guest's key pair (priv, pub) and the credential's secret
 * (what TPM2_ActivateCredential gave; empty when the blob has no
 * credential). On success 0, with the blob's report data (the caller
 * checks it is one its current key pair produced) and the model key.
 * -LLMK_EFORMAT for a wrong size or magic; -LLMK_EAUTH when the tag does
 * not verify (another key pair, another report data, a wrong secret, any
 * byte changed). On failure key_out and report_data_out are zeroed.
 */
int keywrap_unwrap(const uint8_t priv[32], const uint8_t pub[32], const uint8_t *blob, size_t n,
		   const uint8_t *secret, size_t secret_n, uint8_t report_data_out[64],
		   uint8_t key_out[32]);

/* X25519(scalar, u) (RFC 7748 §5) into out; 0, or -LLMK_EINVAL when the
 * result is all zeros (u of small order). */
int keywrap_x25519(uint8_t out[32], const uint8_t scalar[32], const uint8_t u[32]);
/* The public key of priv: X25519(priv, 9). */
int keywrap_public(const uint8_t priv[32], uint8_t pub[32]);

#endif
