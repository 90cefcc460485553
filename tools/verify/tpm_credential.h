/*
 * tools/verify/tpm_credential.h — TPM2_MakeCredential done in software, the
 * verifier's side of credential activation (TPM 2.0 Part 1 §24 "Credential
 * Protection"; Part 3 §12.6 describes the same computation in a TPM).
 *
 * A verifier that holds a TPM's EK public key (from its certificate) and
 * the name of a key that claims to live in the same TPM (the AK that signs
 * the quotes) wraps a secret so that only a TPM holding both can recover
 * it (TPM2_ActivateCredential, the guest's `attest --activate`). If the
 * guest gives the secret back, the AK is in the TPM the EK certificate
 * names.
 *
 *   seed       RSA EK: 32 random bytes, RSA-OAEP (SHA-256, label
 *              "IDENTITY\0") encrypted to the EK; ECC EK: KDFe(SHA-256,
 *              ECDH(ephemeral, EK).x, "IDENTITY", ephemeral.x, EK.x), the
 *              ephemeral public point sent instead
 *   symKey     KDFa(SHA-256, seed, "STORAGE", name, -, EK's symmetric bits)
 *   encIdentity AES-CFB(symKey, IV 0) of TPM2B_DIGEST(secret)
 *   HMACkey    KDFa(SHA-256, seed, "INTEGRITY", -, -, 256)
 *   outerHMAC  HMAC-SHA-256(HMACkey, encIdentity || name)
 *   blob       TPM2B_DIGEST(outerHMAC) || encIdentity
 *
 * The output is the file tpm2_makecredential writes (u32 0xBADCC0DE, u32 1,
 * TPM2B_ID_OBJECT, TPM2B_ENCRYPTED_SECRET, big-endian), so tpm2-tools'
 * tpm2_activatecredential and the guest read the same bytes. Host only:
 * libc and BearSSL.
 */
#ifndef LLMK_TPM_CREDENTIAL_H
#define LLMK_TPM_CREDENTIAL_H

#include <stddef.h>
#include <stdint.h>

#define TPM_CREDENTIAL_MAX 1024 /* the file, RSA 2048 EK and a 32-byte secret: ~330 bytes */

/* name (TPM2B_NAME contents) of a TPMT_PUBLIC with nameAlg SHA-256:
 * 0x000B || SHA-256(pub). 0, or -LLMK_ENOTSUP for another nameAlg. */
int tpm_credential_name(const uint8_t *pub, size_t n, uint8_t name[34]);

/*
 * Make the credential file for ek_pub (the EK's TPMT_PUBLIC: RSA 2048 or
 * ECC P-256, nameAlg SHA-256, AES-128 CFB) and the object name (34 bytes),
 * protecting secret (1..32 bytes). rnd: 64 bytes of fresh randomness (the
 * seed / ephemeral key and the padding come from it; tests pass fixed
 * bytes). Returns the file's length in out, or -LLMK_E* with why in err.
 */
int tpm_credential_make(const uint8_t *ek_pub, size_t ek_len, const uint8_t *name,
			size_t name_len, const uint8_t *secret, size_t secret_len,
			const uint8_t rnd[64], uint8_t *out, size_t cap, char *err, size_t errn);

#endif
