/*
 * tests/fuzz/fuzz_snp_ovmf.c — libFuzzer target for the host's reading of an
 * OVMF image for SEV-SNP (tools/verify/snp_ovmf.c) and the launch digest
 * computed from it (snp_measure.c). The input is XORed onto the second page
 * of tests/unit/snp_syn.h's synthetic image, the page that holds the footer
 * table and the SEV metadata, so an input of zeros is the well-formed image
 * and every other input damages its tables.
 *
 * Any input must either parse and measure, or be refused with a negative
 * LLMK_E* code and a message; ASan/UBSan catch every read outside the image.
 * A damaged section size may ask for up to 4 GiB of pages, which measures
 * correctly but takes seconds: those images are parsed, not measured
 * (MEASURE_MAX), so each run stays in milliseconds.
 */
#include <stdlib.h>
#include <string.h>

#include "../unit/snp_syn.h"

/* snp_syn.h's CHECK-based helpers need the unit runner's counter; the
 * target never calls them. */
int test_failed_checks;

#define MEASURE_MAX (16u << 20) /* bytes of sections measured per input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct syn orig, s;
	static int built;
	struct snp_kernel_hashes h;
	struct snp_measure_params p = {3, 0x800F12, 0x21, &h};
	struct snp_ovmf o;
	uint8_t d[SNP_DIGEST_SIZE];
	char err[256] = "";
	int rc;

	if (!built) {
		syn_default(&orig);
		built = 1;
	}
	memcpy(&s, &orig, sizeof s);
	memset(&h, 7, sizeof h);
	for (size_t i = 0; i < size && i < SYN_LEN - 4096; i++)
		s.img[4096 + i] ^= data[i];
	rc = snp_ovmf_parse(&o, s.img, SYN_LEN, err, sizeof err);
	if (rc == 0) {
		uint64_t total = 0;
		for (unsigned i = 0; i < o.n_sections; i++)
			total += o.sections[i].size;
		if (total > MEASURE_MAX)
			return 0;
		rc = snp_measure(&o, &p, d, err, sizeof err);
	}
	if (rc > 0 || (rc < 0 && !err[0]))
		abort(); /* a refusal names its reason */
	if (size == 0 && rc != 0)
		abort(); /* the undamaged image measures */
	return 0;
}
