/*
 * tools/verify/eventlog.c — TCG PC Client Platform Firmware Profile event
 * logs (PFP §10): parse and replay into the SHA-256 PCR bank.
 *
 * A firmware (crypto-agile) log starts with one TCG_PCClientPCREvent in the
 * old SHA-1 format (§10.2.1) whose event is a TCG_EfiSpecIDEvent (§10.4.5.1):
 * it lists every digest algorithm of the log with its size, which is how the
 * TCG_PCR_EVENT2 records that follow (§10.2.2) can be walked at all. All
 * fields are little-endian. EV_NO_ACTION events are not extended (§10.4.1);
 * one of them, the StartupLocality event (§10.4.5.3), gives PCR 0 its initial
 * value: the locality the TPM was started from, in the last byte.
 */
#include "verify.h"

#include <bearssl.h>
#include <stdio.h>
#include <string.h>

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void evlog_init(struct evlog_replay *r)
{
	memset(r, 0, sizeof *r);
	/* PC client PTP: PCRs 17-22 (dynamic launch) come out of TPM2_Startup as all ones */
	for (int i = 17; i <= 22; i++)
		memset(r->pcr[i], 0xff, 32);
	r->startup_locality = -1;
}

void evlog_extend(uint8_t pcr[32], const uint8_t digest[32])
{
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, pcr, 32);
	br_sha256_update(&c, digest, 32);
	br_sha256_out(&c, pcr);
}

/* The standard sizes, for a log without a header (the kernel's alone). */
static int std_size(uint16_t alg)
{
	switch (alg) {
	case TPM_ALG_SHA1: return 20;
	case TPM_ALG_SHA256: return 32;
	case TPM_ALG_SHA384: return 48;
	case TPM_ALG_SHA512: return 64;
	case TPM_ALG_SM3_256: return 32;
	default: return -1;
	}
}

static int digest_size(const struct evlog_replay *r, uint16_t alg)
{
	if (!r->nalg)
		return std_size(alg);
	for (int i = 0; i < r->nalg; i++)
		if (r->alg[i] == alg)
			return r->size[i];
	return -1;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void sha256_of(const void *p, size_t n, uint8_t out[32])
{
	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, p, n);
	br_sha256_out(&c, out);
}

/*
 * What an event says must be what was extended, where the digest is of
 * the event data (TCG PC Client PFP §10.4.4 and EDK2's measurements): a
 * separator, an action string, a driver-config variable (the whole
 * UEFI_VARIABLE_DATA), a boot variable (its VariableData alone); the
 * kernel's records end with their digest in hex. Other firmware events
 * (images, handoff tables, GPT) measure what the data only points at: the
 * replay against the quoted PCR is what checks them.
 */
static int check_data(const struct evlog_replay *r, uint32_t pcr, uint32_t type,
		      const uint8_t *data, uint32_t esz, const uint8_t sha[32], const char *what,
		      int ev, char *err, size_t errn)
{
	uint8_t d[32];
	if (r->kernel) {
		char hex[65];
		if (pcr != 23 || type != EV_EVENT_TAG || esz < 6 || esz > 512 || data[esz - 1] != 0 ||
		    memcmp(data, "llmk ", 5) != 0) {
			snprintf(err, errn, "%s: event %d (PCR %u, type 0x%08x, %u bytes) is not one of the "
				 "kernel's (PCR 23, EV_EVENT_TAG, \"llmk ...\")", what, ev, pcr, type,
				 esz);
			return -LLMK_EAUTH;
		}
		for (uint32_t i = 0; i + 1 < esz; i++)
			if (data[i] < 0x20 || data[i] > 0x7e) {
				snprintf(err, errn, "%s: event %d: byte %u of its text is 0x%02x", what, ev,
					 i, data[i]);
				return -LLMK_EAUTH;
			}
		verify_hex(sha, 32, hex);
		if (esz < 66 || data[esz - 66] != ' ' || memcmp(data + esz - 65, hex, 64) != 0) {
			snprintf(err, errn, "%s: event %d says \"%.120s\" but extended %s: its text does "
				 "not end with its digest", what, ev, (const char *)data, hex);
			return -LLMK_EAUTH;
		}
		return 0;
	}
	const uint8_t *m = data;
	size_t mn = esz;
	switch (type) {
	case EV_SEPARATOR:
	case EV_ACTION:
	case EV_EFI_ACTION:
	case EV_EFI_VARIABLE_DRIVER_CONFIG:
		break;
	case EV_EFI_VARIABLE_BOOT:
	case EV_EFI_VARIABLE_BOOT2: {
		/* UEFI_VARIABLE_DATA: VariableName GUID, u64 UnicodeNameLength, u64
		 * VariableDataLength, the name (UTF-16), the data */
		if (esz < 32)
			goto short_var;
		uint64_t nl = (uint64_t)le32(data + 16) | (uint64_t)le32(data + 20) << 32;
		uint64_t dl = (uint64_t)le32(data + 24) | (uint64_t)le32(data + 28) << 32;
		if (nl > esz || dl > esz || 32 + 2 * nl + dl != esz)
			goto short_var;
		m = data + 32 + 2 * nl;
		mn = (size_t)dl;
		break;
	}
	default:
		return 0;
	}
	sha256_of(m, mn, d);
	if (memcmp(d, sha, 32) != 0) {
		snprintf(err, errn, "%s: event %d (PCR %u, type 0x%08x): its SHA-256 digest is not the "
			 "digest of its event data (the log says one thing, the TPM was told another)",
			 what, ev, pcr, type);
		return -LLMK_EAUTH;
	}
	return 0;
short_var:
	snprintf(err, errn, "%s: event %d (PCR %u, type 0x%08x): UEFI_VARIABLE_DATA of %u bytes does "
		 "not hold its name and data", what, ev, pcr, type, esz);
	return -LLMK_EFORMAT;
}

int evlog_replay_events(struct evlog_replay *r, const uint8_t *p, size_t n, const char *what,
			char *err, size_t errn)
{
	size_t off = 0;
	r->used = 0;
	for (int ev = 0; off < n; ev++) {
		/* a log copied out of a fixed-size area may end in zeros: nothing more was logged */
		if (all_zero(p + off, n - off))
			break;
		size_t at = off;
		if (n - off < 12) {
			snprintf(err, errn, "%s: event %d at byte %zu: header truncated (%zu bytes left)",
				 what, ev, at, n - off);
			return -LLMK_EFORMAT;
		}
		uint32_t pcr = le32(p + off), type = le32(p + off + 4), count = le32(p + off + 8);
		off += 12;
		if (pcr >= TPM_PCRS) {
			snprintf(err, errn, "%s: event %d at byte %zu: PCR index %u, expected 0..23", what,
				 ev, at, pcr);
			return -LLMK_EFORMAT;
		}
		if (count == 0 || count > 8) {
			snprintf(err, errn, "%s: event %d at byte %zu: %u digests, expected 1..8", what, ev,
				 at, count);
			return -LLMK_EFORMAT;
		}
		const uint8_t *sha256 = NULL;
		for (uint32_t d = 0; d < count; d++) {
			if (n - off < 2)
				goto truncated;
			uint16_t alg = le16(p + off);
			int sz = digest_size(r, alg);
			if (sz < 0) {
				snprintf(err, errn,
					 "%s: event %d at byte %zu: digest algorithm 0x%04x not in the log's "
					 "header", what, ev, at, alg);
				return -LLMK_EFORMAT;
			}
			off += 2;
			if (n - off < (size_t)sz)
				goto truncated;
			if (alg == TPM_ALG_SHA256)
				sha256 = p + off;
			off += (size_t)sz;
		}
		if (n - off < 4)
			goto truncated;
		uint32_t esz = le32(p + off);
		off += 4;
		if (n - off < esz)
			goto truncated;
		const uint8_t *data = p + off;
		off += esz;
		if (type == EV_NO_ACTION) {
			/* §10.4.5.3: "StartupLocality\0" then the locality, before PCR 0 moved */
			if (pcr == 0 && esz == 17 && memcmp(data, "StartupLocality", 16) == 0) {
				if (r->extended & 1u) {
					snprintf(err, errn, "%s: event %d: StartupLocality after PCR 0 was "
						 "extended", what, ev);
					return -LLMK_EFORMAT;
				}
				memset(r->pcr[0], 0, 32);
				r->pcr[0][31] = data[16];
				r->startup_locality = data[16];
			}
			r->used = off;
			continue;
		}
		if (!sha256) {
			snprintf(err, errn, "%s: event %d at byte %zu (PCR %u, type 0x%08x): no SHA-256 "
				 "digest", what, ev, at, pcr, type);
			return -LLMK_EFORMAT;
		}
		int c = check_data(r, pcr, type, data, esz, sha256, what, ev, err, errn);
		if (c < 0)
			return c;
		if (pcr == 23 && !r->first23) {
			r->first23 = data;
			r->first23_len = esz;
			memcpy(r->first23_digest, sha256, 32);
		}
		evlog_extend(r->pcr[pcr], sha256);
		r->extended |= 1u << pcr;
		r->events++;
		r->used = off;
		continue;
truncated:
		snprintf(err, errn, "%s: event %d at byte %zu runs past the end of the log (%zu bytes)",
			 what, ev, at, n);
		return -LLMK_EFORMAT;
	}
	return 0;
}

int evlog_replay_firmware(struct evlog_replay *r, const uint8_t *p, size_t n, char *err,
			  size_t errn)
{
	/* §10.2.1 TCG_PCClientPCREvent: pcrIndex, eventType, SHA-1 digest[20],
	 * eventDataSize, event */
	if (n < 32) {
		snprintf(err, errn, "firmware event log: %zu bytes, too short for its header event", n);
		return -LLMK_EFORMAT;
	}
	uint32_t type = le32(p + 4), esz = le32(p + 28);
	if (le32(p) != 0 || type != EV_NO_ACTION || esz > n - 32) {
		snprintf(err, errn, "firmware event log: the first event is not a Spec ID header "
			 "(PCR %u, type 0x%08x, %u bytes)", le32(p), type, esz);
		return -LLMK_EFORMAT;
	}
	const uint8_t *e = p + 32;
	/* §10.4.5.1 TCG_EfiSpecIDEvent: signature[16], platformClass, specVersionMinor,
	 * specVersionMajor, specErrata, uintnSize, numberOfAlgorithms, digestSizes[] */
	if (esz < 28 || memcmp(e, "Spec ID Event03", 16) != 0) {
		snprintf(err, errn, "firmware event log: header event is not \"Spec ID Event03\" (not a "
			 "crypto-agile log)");
		return -LLMK_EFORMAT;
	}
	uint32_t nalg = le32(e + 24);
	if (nalg == 0 || nalg > 8 || esz < 28 + 4 * nalg + 1) {
		snprintf(err, errn, "firmware event log: Spec ID event lists %u algorithms in %u bytes",
			 nalg, esz);
		return -LLMK_EFORMAT;
	}
	r->nalg = 0;
	for (uint32_t i = 0; i < nalg; i++) {
		uint16_t alg = le16(e + 28 + 4 * i), sz = le16(e + 30 + 4 * i);
		if (sz == 0 || sz > 64 || (std_size(alg) > 0 && std_size(alg) != sz)) {
			snprintf(err, errn, "firmware event log: algorithm 0x%04x with digest size %u",
				 alg, sz);
			return -LLMK_EFORMAT;
		}
		r->alg[r->nalg] = alg;
		r->size[r->nalg++] = sz;
	}
	if (digest_size(r, TPM_ALG_SHA256) != 32) {
		snprintf(err, errn, "firmware event log: no SHA-256 bank in the log's algorithms");
		return -LLMK_EFORMAT;
	}
	int rc = evlog_replay_events(r, p + 32 + esz, n - 32 - esz, "firmware event log", err, errn);
	r->used += 32 + esz;
	return rc;
}

long evlog_put_event(uint8_t *buf, size_t cap, uint32_t pcr, uint32_t type,
		     const uint8_t digest[32], const void *data, uint32_t data_len)
{
	size_t need = 4 + 4 + 4 + 2 + 32 + 4 + (size_t)data_len;
	if (cap < need)
		return -LLMK_ERANGE;
	put_le32(buf, pcr);
	put_le32(buf + 4, type);
	put_le32(buf + 8, 1);
	buf[12] = (uint8_t)TPM_ALG_SHA256;
	buf[13] = (uint8_t)(TPM_ALG_SHA256 >> 8);
	memcpy(buf + 14, digest, 32);
	put_le32(buf + 46, data_len);
	if (data_len)
		memcpy(buf + 50, data, data_len);
	return (long)need;
}
