/*
 * shell/evidence.h — the evidence bundle and the report data (docs/attestation.md).
 *
 * The guest's `attest` and the host's `verifier` share this file: the guest
 * composes the report data and writes the bundle, the verifier reads the
 * bundle and recomputes the report data from the inputs it carries. Portable
 * (platform.h, BearSSL); no provider is named here.
 *
 * The format (the report data's layout, the bundle, its records) is
 * kernel/evidence_format.h's; this is the code that writes and reads it.
 */
#ifndef SHELL_EVIDENCE_H
#define SHELL_EVIDENCE_H

#include "../kernel/evidence_format.h"
#include "../llm/codec.h"

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

/* Walk a bundle: the magic, then every record, each inside the buffer.
 * Returns the number of records (<= max stored in recs), or -LLMK_EFORMAT
 * with why in err (one line, no "error:"). */
int evidence_parse(const uint8_t *buf, size_t len, struct evidence_rec *recs, int max,
		   char *err, size_t errn);
/* The one record of type t; NULL if none, or if there are several (*dup set). */
const struct evidence_rec *evidence_find(const struct evidence_rec *recs, int n, uint16_t t,
					 bool *dup);


#endif
