/*
 * tools/verify/cmd_pcr4.c — `verifier measure pcr4 FILE.efi`: the image's
 * Authenticode SHA-256 and the PCR4 OVMF produces booting it from the ESP
 * (pe.c), for --expect-pcr4. Computed from the reproducible build alone.
 */
#include "verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int verify_cmd_measure_pcr4(int argc, char **argv)
{
	uint8_t *img, digest[32], pcr4[32];
	size_t n;
	char err[200], h[65];
	if (argc != 2)
		return cmd_fail("usage: verifier measure pcr4 FILE.efi");
	if (verify_read_file(argv[1], &img, &n, 1u << 30) < 0)
		return cmd_fail("'%s': %s", argv[1], strerror(errno));
	int r = pe_authenticode_sha256(img, n, digest, err, sizeof err);
	free(img);
	if (r < 0)
		return cmd_fail("'%s': %s", argv[1], err);
	pe_pcr4_ovmf(digest, pcr4);
	verify_hex(digest, 32, h);
	printf("authenticode-sha256: %s\n", h);
	verify_hex(pcr4, 32, h);
	printf("pcr4: %s\n", h);
	return 0;
}
