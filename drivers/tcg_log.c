/*
 * drivers/tcg_log.c — TCG crypto-agile event logs (PC Client Platform
 * Firmware Profile 1.05 §10.2, §10.4.5); see tcg_log.h.
 *
 * Every length comes from the log itself, so each is checked against the
 * bytes that remain before it is used; a record that does not fit ends the
 * walk with an error naming its offset.
 */
#include "tcg_log.h"

#include <bearssl.h>

#define SPEC_ID_SIG "Spec ID Event03"  /* §10.4.5.1, 16 bytes with the NUL */
#define STARTUP_LOCALITY_SIG "StartupLocality" /* §10.4.5.3 */
#define ALG_SHA256 0x000B
#define SHA1_EVENT_HDR 32 /* TCG_PCR_EVENT: PCRIndex, EventType, Digest[20], EventSize */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int tcg_log_header(const uint8_t *p, size_t n, struct tcg_log_algs *a, size_t *hdr_len, char *err,
		   size_t errn)
{
	/* §10.2.1 TCG_PCR_EVENT, then §10.4.5.1 TCG_EfiSpecIDEventStruct:
	 * signature[16], platformClass u32, versions and errata 3 u8,
	 * uintnSize u8, numberOfAlgorithms u32, {algorithmId u16,
	 * digestSize u16}[n], vendorInfoSize u8, vendorInfo. */
	if (n < SHA1_EVENT_HDR) {
		plat_snprintf(err, errn, "event log of %zu bytes: no room for its header", n);
		return -LLMK_EFORMAT;
	}
	uint32_t type = le32(p + 4), size = le32(p + 28);
	if (type != TCG_EV_NO_ACTION || size > n - SHA1_EVENT_HDR || size < 29 ||
	    memcmp(p + SHA1_EVENT_HDR, SPEC_ID_SIG, sizeof SPEC_ID_SIG) != 0) {
		plat_snprintf(err, errn, "event log does not start with a Spec ID Event03 "
			      "(type %#x, size %u)", type, size);
		return -LLMK_EFORMAT;
	}
	const uint8_t *e = p + SHA1_EVENT_HDR;
	uint32_t algs = le32(e + 24);
	if (algs == 0 || algs > TCG_LOG_ALGS || 28 + 4 * algs + 1 > size) {
		plat_snprintf(err, errn, "Spec ID event: %u algorithms in %u bytes", algs, size);
		return -LLMK_EFORMAT;
	}
	a->n = (int)algs;
	for (uint32_t i = 0; i < algs; i++) {
		a->id[i] = le16(e + 28 + 4 * i);
		a->size[i] = le16(e + 30 + 4 * i);
		if (a->size[i] == 0 || a->size[i] > 64) {
			plat_snprintf(err, errn, "Spec ID event: algorithm %#x with %u-byte digests",
				      a->id[i], a->size[i]);
			return -LLMK_EFORMAT;
		}
	}
	uint32_t vendor = e[28 + 4 * algs];
	if (28 + 4 * algs + 1 + vendor != size) {
		plat_snprintf(err, errn, "Spec ID event: %u bytes, its fields need %u", size,
			      28 + 4 * algs + 1 + vendor);
		return -LLMK_EFORMAT;
	}
	*hdr_len = SHA1_EVENT_HDR + size;
	return 0;
}

/* §10.2.2 TCG_PCR_EVENT2: PCRIndex u32, EventType u32, TPML_DIGEST_VALUES
 * (count u32, {hashAlg u16, digest}[count]), EventSize u32, Event. */
static int event_walk(const uint8_t *p, size_t n, const struct tcg_log_algs *a, size_t *len,
		      const uint8_t **sha256, const uint8_t **data, uint32_t *dlen)
{
	if (n < 12)
		return -LLMK_EFORMAT;
	uint32_t count = le32(p + 8);
	size_t off = 12;
	if (count == 0 || count > TCG_LOG_ALGS)
		return -LLMK_EFORMAT;
	if (sha256)
		*sha256 = NULL;
	for (uint32_t i = 0; i < count; i++) {
		if (n - off < 2)
			return -LLMK_EFORMAT;
		uint16_t alg = le16(p + off);
		int k = 0;
		while (k < a->n && a->id[k] != alg)
			k++;
		if (k == a->n || n - off - 2 < a->size[k])
			return -LLMK_EFORMAT;
		if (alg == ALG_SHA256 && sha256)
			*sha256 = p + off + 2;
		off += 2u + a->size[k];
	}
	if (n - off < 4)
		return -LLMK_EFORMAT;
	uint32_t es = le32(p + off);
	off += 4;
	if (es > n - off)
		return -LLMK_EFORMAT;
	if (data) {
		*data = p + off;
		*dlen = es;
	}
	*len = off + es;
	return 0;
}

int tcg_log_event_len(const uint8_t *p, size_t n, const struct tcg_log_algs *a, size_t *len)
{
	return event_walk(p, n, a, len, NULL, NULL, NULL);
}

int tcg_log_append(uint8_t *buf, size_t cap, size_t *len, uint32_t pcr, uint32_t type,
		   const uint8_t digest[32], const void *data, size_t n)
{
	size_t need = 4 + 4 + 4 + 2 + 32 + 4 + n;
	if (n > 0xffffffffu || *len > cap || cap - *len < need)
		return -LLMK_ERANGE;
	uint8_t *p = buf + *len;
	put32(p, pcr);
	put32(p + 4, type);
	put32(p + 8, 1);
	p[12] = (uint8_t)ALG_SHA256;
	p[13] = (uint8_t)(ALG_SHA256 >> 8);
	memcpy(p + 14, digest, 32);
	put32(p + 46, (uint32_t)n);
	if (n)
		memcpy(p + 50, data, n);
	*len += need;
	return 0;
}

static void extend(uint8_t pcr[32], const uint8_t digest[32])
{
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, pcr, 32);
	br_sha256_update(&c, digest, 32);
	br_sha256_out(&c, pcr);
}

int tcg_log_replay(const uint8_t *p, size_t n, bool header, uint8_t pcrs[TCG_LOG_PCRS][32],
		   char *err, size_t errn)
{
	struct tcg_log_algs a = {1, {ALG_SHA256}, {32}};
	size_t off = 0;
	int records = 0;

	if (header) {
		int e = tcg_log_header(p, n, &a, &off, err, errn);
		if (e)
			return e;
	}
	while (off < n) {
		const uint8_t *d, *data;
		uint32_t dlen;
		size_t len;
		if (event_walk(p + off, n - off, &a, &len, &d, &data, &dlen)) {
			plat_snprintf(err, errn, "event log record %d at byte %zu does not fit the "
				      "%zu bytes left", records, off, n - off);
			return -LLMK_EFORMAT;
		}
		uint32_t pcr = le32(p + off), type = le32(p + off + 4);
		if (type == TCG_EV_NO_ACTION) {
			/* §10.4.5.3: PCR 0 started at locality 3 or 4 */
			if (dlen == 17 && memcmp(data, STARTUP_LOCALITY_SIG,
						 sizeof STARTUP_LOCALITY_SIG) == 0 && pcr == 0) {
				memset(pcrs[0], 0, 32);
				pcrs[0][31] = data[16];
			}
		} else if (pcr >= TCG_LOG_PCRS) {
			plat_snprintf(err, errn, "event log record %d at byte %zu: PCR %u", records,
				      off, pcr);
			return -LLMK_EFORMAT;
		} else if (!d) {
			plat_snprintf(err, errn, "event log record %d at byte %zu (PCR %u) has no "
				      "SHA-256 digest", records, off, pcr);
			return -LLMK_EFORMAT;
		} else {
			extend(pcrs[pcr], d);
		}
		off += len;
		records++;
	}
	return records;
}
