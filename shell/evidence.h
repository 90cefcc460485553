/*
 * shell/evidence.h — the evidence bundle and the report data (docs/attestation.md).
 *
 * The guest's `attest` and the host's `verifier` share this file: the guest
 * composes the report data and writes the bundle, the verifier reads the
 * bundle and recomputes the report data from the inputs it carries. Portable
 * (platform.h, BearSSL); no provider is named here.
 *
 * Report data (64 bytes) = SHA-512 over a fixed 193-byte layout:
 *   0    16  "LLMK-REPORT-V2\0\0"
 *   16    1  nonce length (1..64)
 *   17   64  nonce, zero-padded
 *   81   32  model digest (SHA-256 of the plaintext GGUF; zeros: no model)
 *   113  32  the guest's ephemeral X25519 public key
 *   145  16  build id (ASCII, plat_build_id(), zero-padded)
 *   161  32  config digest: SHA-256 of the llmk.cfg bytes the guest measured
 *            and obeys (of zero bytes when it has none: the empty configuration)
 *
 * Bundle: "LLMKEV01" then records (kernel/attest.h: u16 type, u16 flags,
 * u32 length, value, little-endian), the common ones first. On the console it
 * is one line "evidence: " + base64 (RFC 4648 §4, padded).
 */
#ifndef SHELL_EVIDENCE_H
#define SHELL_EVIDENCE_H

#include "../kernel/attest.h"
#include "../llm/codec.h"

#define EVIDENCE_MAGIC "LLMKEV01"
#define EVIDENCE_MAGIC_LEN 8u
#define EVIDENCE_NONCE_MAX 64u
#define EVIDENCE_REPORT_LAYOUT 193u
#define EVIDENCE_MAX (1u << 20) /* a bundle with two event logs and certificates */

struct evidence_inputs {
	uint8_t nonce[EVIDENCE_NONCE_MAX];
	size_t nonce_len; /* 1..64 */
	uint8_t model_digest[32];
	uint8_t pubkey[32];
	char build_id[17]; /* 16 hex digits, NUL-terminated */
	uint8_t config_digest[32];
};

/* The config digest of n bytes of configuration text: SHA-256 of them (n = 0,
 * no file at all included, is the empty configuration). */
void evidence_config_digest(const void *text, size_t n, uint8_t out[32]);

/* The 161-byte layout above, then its SHA-512. -LLMK_EINVAL for a bad nonce length. */
int evidence_layout(const struct evidence_inputs *in, uint8_t out[EVIDENCE_REPORT_LAYOUT]);
int evidence_report_data(const struct evidence_inputs *in, uint8_t out[64]);

/* Start a bundle: the magic, then PROVIDER, REPORT_DATA, NONCE, MODEL_DIGEST,
 * PUBKEY, BUILD_ID, CONFIG_DIGEST records (report_data computed here and
 * returned). */
int evidence_begin(uint8_t *buf, size_t cap, size_t *len, const char *provider,
		   const struct evidence_inputs *in, uint8_t report_data[64]);

/* A record found in a bundle. */
struct evidence_rec {
	uint16_t type;
	const uint8_t *val;
	uint32_t len;
};

/* Walk a bundle: the magic, then every record, each inside the buffer.
 * Returns the number of records (<= max stored in recs), or -LLMK_EFORMAT
 * with why in err (one line, no "error:"). */
int evidence_parse(const uint8_t *buf, size_t len, struct evidence_rec *recs, int max,
		   char *err, size_t errn);
/* The one record of type t; NULL if none, or if there are several (*dup set). */
const struct evidence_rec *evidence_find(const struct evidence_rec *recs, int n, uint16_t t,
					 bool *dup);

/* The evidence line's base64 is llm/codec.h's b64_encode/b64_decode. These
 * two names remain only for shell/cmd_attest.c and tools/host/connect.c,
 * which other branches are rewriting; use the codec's names. */
static inline long evidence_b64_encode(const void *src, size_t n, char *dst, size_t cap)
{
	return b64_encode(src, n, dst, cap);
}
static inline long evidence_b64_decode(const char *src, size_t n, uint8_t *dst, size_t cap)
{
	return b64_decode(src, n, dst, cap);
}

#endif
