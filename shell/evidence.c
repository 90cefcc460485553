/*
 * shell/evidence.c — the evidence bundle and the report data; the format is
 * in shell/evidence.h and docs/attestation.md.
 */
#include "evidence.h"

#include <bearssl.h>

static const char layout_tag[16] = "LLMK-REPORT-V2";

int evidence_layout(const struct evidence_inputs *in, uint8_t out[EVIDENCE_REPORT_LAYOUT])
{
	if (in->nonce_len < 1 || in->nonce_len > EVIDENCE_NONCE_MAX)
		return -LLMK_EINVAL;
	memset(out, 0, EVIDENCE_REPORT_LAYOUT);
	memcpy(out, layout_tag, sizeof layout_tag);
	out[16] = (uint8_t)in->nonce_len;
	memcpy(out + 17, in->nonce, in->nonce_len);
	memcpy(out + 81, in->model_digest, 32);
	memcpy(out + 113, in->pubkey, 32);
	size_t n = strlen(in->build_id);
	memcpy(out + 145, in->build_id, n > 16 ? 16 : n);
	memcpy(out + 161, in->config_digest, 32);
	return 0;
}

void evidence_config_digest(const void *text, size_t n, uint8_t out[32])
{
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, text, n);
	br_sha256_out(&c, out);
}

int evidence_report_data(const struct evidence_inputs *in, uint8_t out[64])
{
	uint8_t lay[EVIDENCE_REPORT_LAYOUT];
	int r = evidence_layout(in, lay);
	if (r < 0)
		return r;
	br_sha512_context c;
	br_sha512_init(&c);
	br_sha512_update(&c, lay, sizeof lay);
	br_sha512_out(&c, out);
	return 0;
}

int evidence_begin(uint8_t *buf, size_t cap, size_t *len, const char *provider,
		   const struct evidence_inputs *in, uint8_t report_data[64])
{
	int r = evidence_report_data(in, report_data);
	if (r < 0)
		return r;
	if (cap < EVIDENCE_MAGIC_LEN)
		return -LLMK_ERANGE;
	memcpy(buf, EVIDENCE_MAGIC, EVIDENCE_MAGIC_LEN);
	*len = EVIDENCE_MAGIC_LEN;
	if ((r = attest_rec_put(buf, cap, len, ATTEST_REC_PROVIDER, provider, strlen(provider))) < 0 ||
	    (r = attest_rec_put(buf, cap, len, ATTEST_REC_REPORT_DATA, report_data, 64)) < 0 ||
	    (r = attest_rec_put(buf, cap, len, ATTEST_REC_NONCE, in->nonce, in->nonce_len)) < 0 ||
	    (r = attest_rec_put(buf, cap, len, ATTEST_REC_MODEL_DIGEST, in->model_digest, 32)) < 0 ||
	    (r = attest_rec_put(buf, cap, len, ATTEST_REC_PUBKEY, in->pubkey, 32)) < 0 ||
	    (r = attest_rec_put(buf, cap, len, ATTEST_REC_BUILD_ID, in->build_id,
				strlen(in->build_id))) < 0 ||
	    (r = attest_rec_put(buf, cap, len, ATTEST_REC_CONFIG_DIGEST, in->config_digest, 32)) < 0)
		return r;
	return 0;
}

int evidence_parse(const uint8_t *buf, size_t len, struct evidence_rec *recs, int max,
		   char *err, size_t errn)
{
	if (len < EVIDENCE_MAGIC_LEN || memcmp(buf, EVIDENCE_MAGIC, EVIDENCE_MAGIC_LEN) != 0) {
		plat_snprintf(err, errn, "not an llmk evidence bundle (no %s magic)", EVIDENCE_MAGIC);
		return -LLMK_EFORMAT;
	}
	int n = 0;
	size_t off = EVIDENCE_MAGIC_LEN;
	while (off < len) {
		if (len - off < ATTEST_REC_HDR) {
			plat_snprintf(err, errn, "record %d at byte %zu: header truncated (%zu bytes left)",
				      n, off, len - off);
			return -LLMK_EFORMAT;
		}
		const uint8_t *p = buf + off;
		uint16_t type = (uint16_t)(p[0] | p[1] << 8);
		uint16_t flags = (uint16_t)(p[2] | p[3] << 8);
		uint32_t rl = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			      (uint32_t)p[7] << 24;
		if (flags != 0) {
			plat_snprintf(err, errn, "record %d (type 0x%04x): flags 0x%04x, expected 0", n,
				      type, flags);
			return -LLMK_EFORMAT;
		}
		if (rl > len - off - ATTEST_REC_HDR) {
			plat_snprintf(err, errn,
				      "record %d (type 0x%04x): length %u past the end (%zu bytes left)", n,
				      type, rl, len - off - ATTEST_REC_HDR);
			return -LLMK_EFORMAT;
		}
		if (n < max) {
			recs[n].type = type;
			recs[n].val = p + ATTEST_REC_HDR;
			recs[n].len = rl;
		}
		n++;
		off += ATTEST_REC_HDR + rl;
	}
	if (n > max) {
		plat_snprintf(err, errn, "%d records, more than the %d expected", n, max);
		return -LLMK_EFORMAT;
	}
	return n;
}

const struct evidence_rec *evidence_find(const struct evidence_rec *recs, int n, uint16_t t,
					 bool *dup)
{
	const struct evidence_rec *found = NULL;
	if (dup)
		*dup = false;
	for (int i = 0; i < n; i++) {
		if (recs[i].type != t)
			continue;
		if (found) {
			if (dup)
				*dup = true;
			return NULL;
		}
		found = &recs[i];
	}
	return found;
}

