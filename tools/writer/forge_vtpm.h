/*
 * tools/writer/forge_vtpm.h — THE ATTACK, for tests only: vtpm evidence
 * forged the way a host that has seen one genuine bundle would forge it
 * (issue "the host can still win", route 1).
 *
 * From a genuine bundle (it crosses the serial line in clear) keep the
 * PCRs, both event logs, the EK certificate and the EK's public area; make
 * a fresh software P-256 key with the AK's template (drivers/tpm2_public.c)
 * and put its public area in TPM_AK_PUB; set NONCE and PUBKEY to the
 * attacker's choice and REPORT_DATA to what they give; and sign a quote
 * that is the genuine one with qualifiedSigner the new key's qualified name
 * and extraData SHA-256(new report data). Every check a quote alone allows
 * passes; what fails is credential activation: the new key is not in the
 * TPM (tools/verify/release.c, shell/cmd_attest.c).
 */
#ifndef TOOLS_WRITER_FORGE_VTPM_H
#define TOOLS_WRITER_FORGE_VTPM_H

#include <stddef.h>
#include <stdint.h>

/*
 * Forge from genuine[0..n) a bundle over nonce[0..nonce_n) and the
 * attacker's X25519 public key, into out[0..cap) (*out_n). seed makes the
 * software AK (any bytes; the same seed, the same key). 0, or -1 with why
 * in err.
 */
int forge_vtpm(const uint8_t *genuine, size_t n, const uint8_t *nonce, size_t nonce_n,
	       const uint8_t attacker_pub[32], const void *seed, size_t seed_n, uint8_t *out,
	       size_t cap, size_t *out_n, char *err, size_t errn);

#endif
