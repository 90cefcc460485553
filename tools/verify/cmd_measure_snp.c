/*
 * tools/verify/cmd_measure_snp.c — `verifier measure snp`: read the OVMF
 * image, hash -kernel/-initrd/-append the way QEMU does, print the launch
 * digest (tools/verify/snp_measure.h). Host program: libc is fine here.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bearssl.h>

#include "cmd.h"
#include "cmd_measure_snp.h"
#include "snp_measure.h"

static const char usage[] =
	"usage: verifier measure snp --ovmf FILE --vcpus N --vcpu-sig SIG --guest-features F\n"
	"                            [--kernel FILE [--initrd FILE] [--append TEXT]]\n"
	"  the SEV-SNP launch digest (SHA-384, hex) of QEMU booting OVMF FILE (-bios) as an\n"
	"  SEV-SNP guest, with -kernel/-initrd/-append when given (OVMF's AmdSev build)\n"
	"  --vcpus N            vCPUs (-smp N), 1..4096\n"
	"  --vcpu-sig SIG       CPUID(1).EAX of QEMU's -cpu model: 0x800F12 (EPYC, EPYC-v4),\n"
	"                       0x830F10 (EPYC-Rome), 0xA00F11 (EPYC-Milan), 0xA10F10\n"
	"                       (EPYC-Genoa), 0xB00F00 (EPYC-Turin)\n"
	"  --guest-features F   the VMSA's SEV_FEATURES, e.g. 0x1 (SNPActive) or 0x21\n"
	"                       (SNPActive + DebugSwap, sev-snp-measure's default)\n"
	"  --kernel FILE        the -kernel file (any PE image or bzImage: QEMU hashes it whole)\n"
	"  --initrd FILE        the -initrd file (default: none, hashed as empty)\n"
	"  --append TEXT        the -append text (default: none, hashed as \"\")\n";

struct opts {
	const char *ovmf, *vcpus, *vcpu_sig, *features, *kernel, *initrd, *append;
};

/* An unsigned integer, decimal or 0x-hex, all of s, in [min, max]. */
static int parse_uint(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!*s || *s == '-' || *s == '+' || *s == ' ' || *end || errno || v < min || v > max)
		return cmd_fail("%s '%s': want an integer in [%llu, 0x%llx] (decimal or 0x-hex)", opt,
				s, (unsigned long long)min, (unsigned long long)max);
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct cmd_opt names[] = {
		{"--ovmf", offsetof(struct opts, ovmf)},
		{"--vcpus", offsetof(struct opts, vcpus)},
		{"--vcpu-sig", offsetof(struct opts, vcpu_sig)},
		{"--guest-features", offsetof(struct opts, features)},
		{"--kernel", offsetof(struct opts, kernel)},
		{"--initrd", offsetof(struct opts, initrd)},
		{"--append", offsetof(struct opts, append)},
	};

	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '='), *val;
		const struct cmd_opt *k = cmd_opt_find(names, sizeof names / sizeof names[0], a,
						       eq ? (size_t)(eq - a) : strlen(a));
		const char **slot;

		if (!k)
			return cmd_fail("unknown option '%s' (verifier measure snp --help)", a);
		if (eq)
			val = eq + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			return cmd_fail("%s needs a value", k->name);
		slot = cmd_opt_slot(o, k);
		if (*slot)
			return cmd_fail("%s given twice", k->name);
		*slot = val;
	}
	if (!o->ovmf)
		return cmd_fail("--ovmf FILE is required (the firmware QEMU boots with -bios)");
	if (!o->vcpus || !o->vcpu_sig || !o->features)
		return cmd_fail("--vcpus, --vcpu-sig and --guest-features are required: the digest "
				"covers each vCPU's initial state, so they must match the launch");
	if ((o->initrd || o->append) && !o->kernel)
		return cmd_fail("%s needs --kernel: QEMU measures -initrd and -append only with "
				"-kernel", o->initrd ? "--initrd" : "--append");
	return 0;
}

/* The whole OVMF image, size checked before the allocation. */
static uint8_t *read_ovmf(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;

	if (!f) {
		cmd_fail("--ovmf %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SNP_OVMF_MAX_SIZE || st.st_size % SNP_PAGE_SIZE) {
		cmd_fail("--ovmf %s: want a regular file whose size is a non-zero multiple of 4096 "
			 "up to %u bytes (size %lld)",
			 path, SNP_OVMF_MAX_SIZE, (long long)st.st_size);
		fclose(f);
		return NULL;
	}
	*len = (size_t)st.st_size;
	buf = malloc(*len);
	if (!buf || fread(buf, 1, *len, f) != *len) {
		cmd_fail("--ovmf %s: %s", path, buf ? "short read" : "out of memory");
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* SHA-256 of a file's bytes, streamed (a kernel or initrd may be large). */
static int sha256_file(const char *opt, const char *path, uint8_t out[32])
{
	static uint8_t buf[1 << 16];
	br_sha256_context c;
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return cmd_fail("%s %s: %s", opt, path, strerror(errno));
	br_sha256_init(&c);
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		br_sha256_update(&c, buf, n);
	if (ferror(f)) {
		fclose(f);
		return cmd_fail("%s %s: read error", opt, path);
	}
	fclose(f);
	br_sha256_out(&c, out);
	return 0;
}

int verifier_measure_snp_main(int argc, char **argv)
{
	struct opts o;
	struct snp_measure_params p;
	struct snp_kernel_hashes h;
	struct snp_ovmf ovmf;
	uint8_t digest[SNP_DIGEST_SIZE], *img;
	uint64_t v;
	size_t len;
	char err[256];
	int rc;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			return 0;
		}
	if (parse_opts(argc, argv, &o))
		return 1;
	memset(&p, 0, sizeof p);
	if (parse_uint("--vcpus", o.vcpus, 1, SNP_MAX_VCPUS, &v))
		return 1;
	p.vcpus = (unsigned)v;
	if (parse_uint("--vcpu-sig", o.vcpu_sig, 0, UINT32_MAX, &v))
		return 1;
	p.vcpu_sig = (uint32_t)v;
	if (parse_uint("--guest-features", o.features, 0, UINT64_MAX, &p.guest_features))
		return 1;
	if (o.kernel) {
		if (sha256_file("--kernel", o.kernel, h.kernel))
			return 1;
		if (o.initrd) {
			if (sha256_file("--initrd", o.initrd, h.initrd))
				return 1;
		} else {
			br_sha256_context c; /* no -initrd: QEMU hashes an empty buffer */
			br_sha256_init(&c);
			br_sha256_out(&c, h.initrd);
		}
		snp_cmdline_hash(o.append, h.cmdline);
		p.hashes = &h;
	}
	img = read_ovmf(o.ovmf, &len);
	if (!img)
		return 1;
	rc = snp_ovmf_parse(&ovmf, img, len, err, sizeof err);
	if (rc == 0)
		rc = snp_measure(&ovmf, &p, digest, err, sizeof err);
	free(img);
	if (rc) /* messages about the image start "ovmf:"; name the file too */
		return strncmp(err, "ovmf:", 5) ? cmd_fail("%s", err)
						: cmd_fail("%s (%s)", err, o.ovmf);
	for (int i = 0; i < SNP_DIGEST_SIZE; i++)
		printf("%02x", digest[i]);
	putchar('\n');
	return fflush(stdout) == 0 ? 0 : 1;
}
