/*
 * tools/verify/pe.c — the Authenticode SHA-256 of a PE/COFF image
 * (Microsoft "Windows Authenticode Portable Executable Signature Format",
 * "Calculating the PE Image Hash"), which is the digest UEFI firmware
 * extends into PCR4 when it starts an application from a boot option, and
 * the PCR4 value OVMF ends with.
 *
 * The hash covers: the headers up to SizeOfHeaders, except the optional
 * header's CheckSum and the Certificate Table data directory entry (both
 * change when an image is signed); then every section's raw data in order of
 * PointerToRawData; then whatever the file holds after the last section,
 * less the attribute certificate table at its end.
 */
#include "verify.h"

#include <bearssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

struct pe_section {
	uint32_t raw_off, raw_size;
};

static int cmp_section(const void *a, const void *b)
{
	const struct pe_section *x = a, *y = b;
	return x->raw_off < y->raw_off ? -1 : x->raw_off > y->raw_off;
}

int pe_authenticode_sha256(const uint8_t *img, size_t n, uint8_t out[32], char *err, size_t errn)
{
	/* MS-DOS stub: "MZ", e_lfanew at 0x3c; then "PE\0\0", the COFF file header
	 * (20 bytes) and the optional header (PE format spec §3, §3.3, §3.4). */
	if (n < 0x40 || img[0] != 'M' || img[1] != 'Z') {
		snprintf(err, errn, "not a PE image (no MZ header)");
		return -LLMK_EFORMAT;
	}
	uint32_t pe = le32(img + 0x3c);
	if (pe > n || n - pe < 24 || memcmp(img + pe, "PE\0\0", 4) != 0) {
		snprintf(err, errn, "not a PE image (no PE signature at 0x%x)", pe);
		return -LLMK_EFORMAT;
	}
	uint16_t nsec = le16(img + pe + 6), opt_size = le16(img + pe + 20);
	size_t opt = (size_t)pe + 24;
	if (opt_size < 96 || n - opt < opt_size) {
		snprintf(err, errn, "PE optional header of %u bytes does not fit", opt_size);
		return -LLMK_EFORMAT;
	}
	uint16_t magic = le16(img + opt);
	if (magic != 0x10b && magic != 0x20b) {
		snprintf(err, errn, "PE optional header magic 0x%x, expected PE32 0x10b or PE32+ 0x20b",
			 magic);
		return -LLMK_EFORMAT;
	}
	/* field offsets inside the optional header: CheckSum at 64 in both;
	 * NumberOfRvaAndSizes and the data directories move by 16 in PE32+ */
	size_t checksum = opt + 64;
	size_t nrva_off = opt + (magic == 0x20b ? 108 : 92);
	size_t dirs = nrva_off + 4;
	uint32_t nrva = le32(img + nrva_off);
	uint32_t size_of_headers = le32(img + opt + 60);
	if (nrva > 16 || dirs + 8 * (size_t)nrva > opt + opt_size || size_of_headers > n ||
	    size_of_headers < opt + opt_size) {
		snprintf(err, errn, "PE headers inconsistent (SizeOfHeaders %u, %u data directories)",
			 size_of_headers, nrva);
		return -LLMK_EFORMAT;
	}
	size_t cert_dir = dirs + 8 * 4; /* IMAGE_DIRECTORY_ENTRY_SECURITY */
	uint32_t cert_size = nrva > 4 ? le32(img + cert_dir + 4) : 0;

	br_sha256_context c;
	br_sha256_init(&c);
	br_sha256_update(&c, img, checksum);
	if (nrva > 4) {
		br_sha256_update(&c, img + checksum + 4, cert_dir - (checksum + 4));
		br_sha256_update(&c, img + cert_dir + 8, size_of_headers - (cert_dir + 8));
	} else {
		br_sha256_update(&c, img + checksum + 4, size_of_headers - (checksum + 4));
	}
	size_t hashed = size_of_headers;

	size_t sec = opt + opt_size;
	if (nsec > 96 || n - sec < 40u * nsec) {
		snprintf(err, errn, "PE section table (%u sections) does not fit", nsec);
		return -LLMK_EFORMAT;
	}
	struct pe_section s[96];
	int k = 0;
	for (int i = 0; i < nsec; i++) {
		const uint8_t *h = img + sec + 40 * (size_t)i;
		uint32_t size = le32(h + 16), off = le32(h + 20);
		if (size == 0)
			continue;
		if (off > n || n - off < size) {
			snprintf(err, errn, "PE section %d (%.8s): raw data 0x%x + %u past the end (%zu)",
				 i, (const char *)h, off, size, n);
			return -LLMK_EFORMAT;
		}
		s[k].raw_off = off;
		s[k++].raw_size = size;
	}
	qsort(s, (size_t)k, sizeof s[0], cmp_section);
	for (int i = 0; i < k; i++) {
		br_sha256_update(&c, img + s[i].raw_off, s[i].raw_size);
		hashed += s[i].raw_size;
	}
	if (n > hashed) {
		if (n - hashed < cert_size) {
			snprintf(err, errn, "PE certificate table (%u bytes) larger than the data after the "
				 "sections", cert_size);
			return -LLMK_EFORMAT;
		}
		br_sha256_update(&c, img + hashed, n - hashed - cert_size);
	}
	br_sha256_out(&c, out);
	return 0;
}

/* OVMF's Tcg2Dxe and DxeTpm2MeasureBootLib on the first boot attempt (PFP
 * §3.3.4.5, §10.4.4): at ReadyToBoot EV_EFI_ACTION "Calling EFI Application
 * from Boot Option" (digest of the string without its NUL), then
 * EV_SEPARATOR (digest of four zero bytes) in PCRs 0-7; then, when the boot
 * manager loads the image, EV_EFI_BOOT_SERVICES_APPLICATION with its
 * Authenticode digest. */
void pe_pcr4_ovmf(const uint8_t authenticode[32], uint8_t pcr4[32])
{
	static const char action[] = "Calling EFI Application from Boot Option";
	static const uint8_t sep[4] = {0};
	uint8_t d[32];
	br_sha256_context c;

	memset(pcr4, 0, 32);
	br_sha256_init(&c);
	br_sha256_update(&c, action, sizeof action - 1);
	br_sha256_out(&c, d);
	evlog_extend(pcr4, d);
	br_sha256_init(&c);
	br_sha256_update(&c, sep, sizeof sep);
	br_sha256_out(&c, d);
	evlog_extend(pcr4, d);
	evlog_extend(pcr4, authenticode);
}
