/*
 * tools/verify/snp_report.c — the SEV-SNP ATTESTATION_REPORT: its layout,
 * format checks and verification against a verified VCEK (snp_report.h).
 * The chain itself is snp_chain.c.
 */
#include "snp_report.h"

#include "sig.h"

#include <bearssl.h>
#include <stdio.h>
#include <string.h>

#define ALL 2, 255
#define V2 2, 2
#define V3 3, 255
#define V2_3 2, 4
#define V5 5, 255

/* ABI Table 23, in offset order; reserved rows differ by version. */
const struct snp_field snp_report_fields[] = {
	{"VERSION", SNP_VERSION, 4, SNP_FIELD, ALL},
	{"GUEST_SVN", SNP_GUEST_SVN, 4, SNP_FIELD, ALL},
	{"POLICY", SNP_POLICY, 8, SNP_FIELD, ALL},
	{"FAMILY_ID", SNP_FAMILY_ID, 16, SNP_FIELD, ALL},
	{"IMAGE_ID", SNP_IMAGE_ID, 16, SNP_FIELD, ALL},
	{"VMPL", SNP_VMPL, 4, SNP_FIELD, ALL},
	{"SIGNATURE_ALGO", SNP_SIGNATURE_ALGO, 4, SNP_FIELD, ALL},
	{"CURRENT_TCB", SNP_CURRENT_TCB, 8, SNP_FIELD, ALL},
	{"PLATFORM_INFO", SNP_PLATFORM_INFO, 8, SNP_FIELD, ALL},
	{"SIGNER_INFO", SNP_SIGNER_INFO, 4, SNP_FIELD, ALL},
	{"reserved 0x04C", 0x04c, 4, SNP_MBZ, ALL},
	{"REPORT_DATA", SNP_REPORT_DATA, 64, SNP_FIELD, ALL},
	{"MEASUREMENT", SNP_MEASUREMENT, 48, SNP_FIELD, ALL},
	{"HOST_DATA", SNP_HOST_DATA, 32, SNP_FIELD, ALL},
	{"ID_KEY_DIGEST", SNP_ID_KEY_DIGEST, 48, SNP_FIELD, ALL},
	{"AUTHOR_KEY_DIGEST", SNP_AUTHOR_KEY_DIGEST, 48, SNP_FIELD, ALL},
	{"REPORT_ID", SNP_REPORT_ID, 32, SNP_FIELD, ALL},
	{"REPORT_ID_MA", SNP_REPORT_ID_MA, 32, SNP_FIELD, ALL},
	{"REPORTED_TCB", SNP_REPORTED_TCB, 8, SNP_FIELD, ALL},
	{"reserved 0x188", 0x188, 24, SNP_MBZ, V2},
	{"CPUID_FAM_ID", SNP_CPUID_FAM_ID, 1, SNP_FIELD, V3},
	{"CPUID_MOD_ID", SNP_CPUID_MOD_ID, 1, SNP_FIELD, V3},
	{"CPUID_STEP", SNP_CPUID_STEP, 1, SNP_FIELD, V3},
	{"reserved 0x18B", 0x18b, 21, SNP_MBZ, V3},
	{"CHIP_ID", SNP_CHIP_ID, 64, SNP_FIELD, ALL},
	{"COMMITTED_TCB", SNP_COMMITTED_TCB, 8, SNP_FIELD, ALL},
	{"CURRENT_BUILD", SNP_CURRENT_BUILD, 1, SNP_FIELD, ALL},
	{"CURRENT_MINOR", SNP_CURRENT_BUILD + 1, 1, SNP_FIELD, ALL},
	{"CURRENT_MAJOR", SNP_CURRENT_BUILD + 2, 1, SNP_FIELD, ALL},
	{"reserved 0x1EB", 0x1eb, 1, SNP_MBZ, ALL},
	{"COMMITTED_BUILD", SNP_COMMITTED_BUILD, 1, SNP_FIELD, ALL},
	{"COMMITTED_MINOR", SNP_COMMITTED_BUILD + 1, 1, SNP_FIELD, ALL},
	{"COMMITTED_MAJOR", SNP_COMMITTED_BUILD + 2, 1, SNP_FIELD, ALL},
	{"reserved 0x1EF", 0x1ef, 1, SNP_MBZ, ALL},
	{"LAUNCH_TCB", SNP_LAUNCH_TCB, 8, SNP_FIELD, ALL},
	{"reserved 0x1F8", 0x1f8, 168, SNP_MBZ, V2_3},
	{"LAUNCH_MIT_VECTOR", SNP_LAUNCH_MIT_VECTOR, 8, SNP_FIELD, V5},
	{"CURRENT_MIT_VECTOR", SNP_CURRENT_MIT_VECTOR, 8, SNP_FIELD, V5},
	{"reserved 0x208", 0x208, 152, SNP_MBZ, V5},
	/* SIGNATURE (ABI Table 141): R and S zero-extended to 72 bytes, then zeros. */
	{"SIGNATURE.R", SNP_SIG_R, 48, SNP_FIELD, ALL},
	{"SIGNATURE.R bytes 48..71", SNP_SIG_R + 48, 24, SNP_MBZ, ALL},
	{"SIGNATURE.S", SNP_SIG_S, 48, SNP_FIELD, ALL},
	{"SIGNATURE.S bytes 48..71", SNP_SIG_S + 48, 24, SNP_MBZ, ALL},
	{"SIGNATURE reserved", 0x330, 0x170, SNP_MBZ, ALL},
};
const int snp_report_n_fields = sizeof snp_report_fields / sizeof snp_report_fields[0];

const char *snp_product_name(enum snp_product p)
{
	switch (p) {
	case SNP_MILAN:
		return "Milan";
	case SNP_GENOA:
		return "Genoa";
	case SNP_TURIN:
		return "Turin";
	default:
		return "unknown";
	}
}

void snp_tcb_decode(enum snp_product p, const uint8_t raw[8], struct snp_tcb *t)
{
	if (p == SNP_TURIN) { /* Table 4: FMC, BOOT_LOADER, TEE, SNP, reserved[3], MICROCODE */
		t->fmc = raw[0];
		t->bl = raw[1];
		t->tee = raw[2];
		t->snp = raw[3];
	} else { /* Table 3: BOOT_LOADER, TEE, reserved[4], SNP, MICROCODE */
		t->fmc = 0;
		t->bl = raw[0];
		t->tee = raw[1];
		t->snp = raw[6];
	}
	t->ucode = raw[7];
}

static const char *bits_text(uint64_t v, const char *const *names, int n, uint64_t known,
			     char *buf, size_t cap)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < n; i++)
		if (names[i] && (v >> i & 1))
			o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "%s%s", o ? " " : "", names[i]);
	if ((v & ~known) && o < cap)
		o += (size_t)snprintf(buf + o, cap - o, "%sunknown bits 0x%llx", o ? " " : "",
				      (unsigned long long)(v & ~known));
	if (!o)
		snprintf(buf, cap, "none");
	return buf;
}

const char *snp_policy_text(uint64_t policy, char *buf, size_t n)
{
	static const char *const names[26] = {
		[16] = "SMT", [18] = "MIGRATE_MA", [19] = "DEBUG", [20] = "SINGLE_SOCKET",
		[21] = "CXL_ALLOW", [22] = "MEM_AES_256_XTS", [23] = "RAPL_DIS",
		[24] = "CIPHERTEXT_HIDING", [25] = "PAGE_SWAP_DISABLE",
	};
	size_t o = (size_t)snprintf(buf, n, "ABI >= %u.%u, ", (unsigned)(policy >> 8 & 0xff),
				    (unsigned)(policy & 0xff));
	bits_text(policy & ~(SNP_POLICY_RESERVED_ONE | 0xffff), names, 26, SNP_POLICY_KNOWN,
		  buf + o, o < n ? n - o : 0);
	return buf;
}

const char *snp_platform_info_text(uint64_t info, char *buf, size_t n)
{
	/* ABI Table 24; bit 6 as go-sev-guest and others name it. */
	static const char *const names[8] = {
		"SMT_EN", "TSME_EN", "ECC_EN", "RAPL_DIS", "CIPHERTEXT_HIDING_EN",
		"ALIAS_CHECK_COMPLETE", "IOMMU_WRITE_SAFE", "SEV_TIO_EN",
	};
	return bits_text(info, names, 8, 0xff, buf, n);
}

int snp_report_parse(struct snp_report *r, const uint8_t *b, size_t len, struct vfy_log *log)
{
	memset(r, 0, sizeof *r);
	if (len != SNP_REPORT_SIZE)
		return vfy_fail(log, LLMK_EFORMAT, "report: %zu bytes, an ATTESTATION_REPORT has %u",
				len, SNP_REPORT_SIZE);
	r->raw = b;
	r->version = vfy_le32(b + SNP_VERSION);
	if (r->version != 2 && r->version != 3 && r->version != 5)
		return vfy_fail(log, LLMK_ENOTSUP, "report: VERSION %u is not supported (2, 3 and 5 are)",
				r->version);
	for (int i = 0; i < snp_report_n_fields; i++) {
		const struct snp_field *f = &snp_report_fields[i];
		if (f->kind != SNP_MBZ || r->version < f->min_version || r->version > f->max_version)
			continue;
		for (unsigned k = 0; k < f->len; k++)
			if (b[f->off + k])
				return vfy_fail(log, LLMK_EFORMAT, "report: %s (0x%03X..0x%03X) must be zero "
						"in a version %u report, byte 0x%03X is 0x%02x", f->name,
						f->off, f->off + f->len - 1, r->version, f->off + k,
						b[f->off + k]);
	}
	r->guest_svn = vfy_le32(b + SNP_GUEST_SVN);
	r->policy = vfy_le64(b + SNP_POLICY);
	r->vmpl = vfy_le32(b + SNP_VMPL);
	r->sig_algo = vfy_le32(b + SNP_SIGNATURE_ALGO);
	r->platform_info = vfy_le64(b + SNP_PLATFORM_INFO);
	r->signer_info = vfy_le32(b + SNP_SIGNER_INFO);
	r->has_cpuid = r->version >= 3;
	r->cpuid_fam = b[SNP_CPUID_FAM_ID];
	r->cpuid_mod = b[SNP_CPUID_MOD_ID];
	r->cpuid_step = b[SNP_CPUID_STEP];
	r->has_mit = r->version >= 5;
	r->launch_mit_vector = vfy_le64(b + SNP_LAUNCH_MIT_VECTOR);
	r->current_mit_vector = vfy_le64(b + SNP_CURRENT_MIT_VECTOR);
	r->current_build = b[SNP_CURRENT_BUILD];
	r->current_minor = b[SNP_CURRENT_BUILD + 1];
	r->current_major = b[SNP_CURRENT_BUILD + 2];
	r->committed_build = b[SNP_COMMITTED_BUILD];
	r->committed_minor = b[SNP_COMMITTED_BUILD + 1];
	r->committed_major = b[SNP_COMMITTED_BUILD + 2];
	/* Fields with a fixed set of values. */
	if (r->sig_algo != 1)
		return vfy_fail(log, LLMK_ENOTSUP, "report: SIGNATURE_ALGO %u is not 1 (ECDSA P-384 "
				"with SHA-384)", r->sig_algo);
	if (r->vmpl > 3)
		return vfy_fail(log, LLMK_EFORMAT, "report: VMPL %u is not 0..3", r->vmpl);
	if (r->signer_info >> 5)
		return vfy_fail(log, LLMK_EFORMAT, "report: SIGNER_INFO 0x%08x has reserved bits 31:5 set",
				r->signer_info);
	vfy_ok(log, "report: version %u layout, %u bytes, reserved fields zero", r->version,
	       SNP_REPORT_SIZE);
	return 0;
}

/* The product a v3+ report's CPUID names (family 19h: Milan 0x0X, Genoa 0x1X/0xAX; 1Ah: Turin). */
static enum snp_product cpuid_product(uint8_t fam, uint8_t mod)
{
	if (fam == 0x19 && mod <= 0x0f)
		return SNP_MILAN;
	if (fam == 0x19 && ((mod >= 0x10 && mod <= 0x1f) || (mod >= 0xa0 && mod <= 0xaf)))
		return SNP_GENOA;
	if (fam == 0x1a && mod <= 0x1f)
		return SNP_TURIN;
	return SNP_PRODUCT_NONE;
}

/* The report names the chain's chip and TCB (VCEK spec §3: hwID, TCB extensions). */
static int check_binding(const struct snp_chain *ch, const struct snp_report *r, struct vfy_log *log)
{
	const uint8_t *b = r->raw;
	unsigned key = r->signer_info >> 2 & 7;
	char h1[129], h2[129];

	if (key != 0)
		return vfy_fail(log, LLMK_ENOTSUP, "report: SIGNER_INFO.SIGNING_KEY is %u (%s), only "
				"VCEK-signed reports (0) are verified", key,
				key == 1 ? "VLEK" : key == 7 ? "none: the report is unsigned" : "reserved");
	if (r->signer_info & 2)
		return vfy_fail(log, LLMK_EAUTH, "report: MASK_CHIP_KEY is set, so CHIP_ID is zeroed and "
				"the report cannot be tied to the VCEK's hwID");
	if (r->has_cpuid) {
		enum snp_product p = cpuid_product(r->cpuid_fam, r->cpuid_mod);
		if (p != ch->product)
			return vfy_fail(log, LLMK_EAUTH, "report: CPUID family 0x%02x model 0x%02x is %s, "
					"but the VCEK is %s's", r->cpuid_fam, r->cpuid_mod,
					p ? snp_product_name(p) : "no SEV-SNP product we know",
					snp_product_name(ch->product));
	}
	/* Turin's hwID is 8 bytes: the first 8 of CHIP_ID, the rest zero. */
	if (memcmp(b + SNP_CHIP_ID, ch->hwid, ch->hwid_len) ||
	    !vfy_is_zero(b + SNP_CHIP_ID + ch->hwid_len, 64 - ch->hwid_len))
		return vfy_fail(log, LLMK_EAUTH, "report: CHIP_ID %s is not the VCEK's hwID %s",
				vfy_hex(b + SNP_CHIP_ID, 64, h1), vfy_hex(ch->hwid, ch->hwid_len, h2));
	vfy_ok(log, "binding: CHIP_ID equals the VCEK's hwID (%zu bytes)", ch->hwid_len);

	/* REPORTED_TCB is the TCB the VCEK was derived for: each component equals its extension. */
	const uint8_t *tcb = b + SNP_REPORTED_TCB;
	struct snp_tcb t;
	snp_tcb_decode(ch->product, tcb, &t);
	struct {
		const char *name;
		int ext; /* .3.n */
		uint8_t got;
	} comp[] = {{"BOOT_LOADER", 1, t.bl}, {"TEE", 2, t.tee}, {"SNP", 3, t.snp},
		    {"MICROCODE", 8, t.ucode}, {"FMC", 9, t.fmc}};
	int n = ch->product == SNP_TURIN ? 5 : 4;
	for (int i = 0; i < n; i++)
		if (ch->spl[comp[i].ext] != comp[i].got)
			return vfy_fail(log, LLMK_EAUTH, "report: REPORTED_TCB %s SVN is %u, the VCEK was "
					"issued for %d (extension 1.3.6.1.4.1.3704.1.3.%d)", comp[i].name,
					comp[i].got, ch->spl[comp[i].ext], comp[i].ext);
	static const uint8_t reserved_milan[8] = {0, 0, 1, 1, 1, 1, 0, 0};
	static const uint8_t reserved_turin[8] = {0, 0, 0, 0, 1, 1, 1, 0};
	const uint8_t *rsv = ch->product == SNP_TURIN ? reserved_turin : reserved_milan;
	for (int i = 0; i < 8; i++)
		if (rsv[i] && tcb[i])
			return vfy_fail(log, LLMK_EFORMAT, "report: REPORTED_TCB byte %d is reserved, but "
					"0x%02x", i, tcb[i]);
	char fmc[16] = "";
	if (ch->product == SNP_TURIN)
		snprintf(fmc, sizeof fmc, " fmc %u", t.fmc);
	vfy_ok(log, "binding: REPORTED_TCB equals the VCEK's TCB (bl %u tee %u snp %u ucode %u%s)",
	       t.bl, t.tee, t.snp, t.ucode, fmc);
	return 0;
}

/* ECDSA P-384 / SHA-384 over bytes 0x000..0x29F (ABI §7.3, Table 141). */
static int check_signature(const struct snp_chain *ch, const uint8_t *b, struct vfy_log *log)
{
	uint8_t hash[48], rs[96];
	br_sha384_context h;

	br_sha384_init(&h);
	br_sha384_update(&h, b, SNP_SIGNED_SIZE);
	br_sha384_out(&h, hash);
	/* R and S are little-endian; BearSSL wants r || s big-endian. */
	for (int i = 0; i < 48; i++) {
		rs[i] = b[SNP_SIG_R + 47 - i];
		rs[48 + i] = b[SNP_SIG_S + 47 - i];
	}
	if (!sig_ecdsa_ok(ch->vcek.ec_curve, ch->vcek.ec_point.p, ch->vcek.ec_point.n, hash, 48, rs, 96))
		return vfy_fail(log, LLMK_EAUTH, "report: the signature does not verify with the VCEK "
				"(ECDSA P-384 with SHA-384 over bytes 0x000..0x29F)");
	vfy_ok(log, "signature: ECDSA P-384 over 0x000..0x29F with the VCEK");
	return 0;
}

static int check_policy(const struct snp_report *r, const struct snp_expect *x, struct vfy_log *log)
{
	char buf[160];
	if (!(r->policy & SNP_POLICY_RESERVED_ONE))
		return vfy_fail(log, LLMK_EFORMAT, "report: POLICY 0x%016llx has reserved bit 17 clear "
				"(it must be one)", (unsigned long long)r->policy);
	if (r->policy & ~SNP_POLICY_KNOWN)
		return vfy_fail(log, LLMK_EFORMAT, "report: POLICY 0x%016llx has reserved bits 63:26 set",
				(unsigned long long)r->policy);
	if ((r->policy & SNP_POLICY_DEBUG) && !x->allow_debug)
		return vfy_fail(log, LLMK_EAUTH, "policy: DEBUG is allowed (POLICY bit 19): the host "
				"can read and change this guest's memory; pass --allow-debug to accept it");
	if (x->check_policy && r->policy != x->policy)
		return vfy_fail(log, LLMK_EAUTH, "policy: POLICY is 0x%016llx, expected 0x%016llx",
				(unsigned long long)r->policy, (unsigned long long)x->policy);
	vfy_ok(log, "policy: 0x%016llx (%s)%s%s", (unsigned long long)r->policy,
	       snp_policy_text(r->policy, buf, sizeof buf),
	       x->check_policy ? ", as expected" : "",
	       (r->policy & SNP_POLICY_DEBUG) ? ", DEBUG accepted by --allow-debug" : ", no DEBUG");
	return 0;
}

static int check_expected(const uint8_t *b, const char *name, unsigned off, const uint8_t *want,
			  size_t n, struct vfy_log *log)
{
	char h1[129], h2[129];
	if (!want)
		return 0;
	if (memcmp(b + off, want, n))
		return vfy_fail(log, LLMK_EAUTH, "%s: the report has %s, expected %s", name,
				vfy_hex(b + off, n, h1), vfy_hex(want, n, h2));
	vfy_ok(log, "%s: as expected", name);
	return 0;
}

int snp_report_verify(const struct snp_chain *ch, const uint8_t *buf, size_t len,
		      const struct snp_expect *x, struct snp_report *r, struct vfy_log *log)
{
	static const struct snp_expect none;
	int e;

	if (!x)
		x = &none;
	if ((e = snp_report_parse(r, buf, len, log)) || (e = check_binding(ch, r, log)) ||
	    (e = check_signature(ch, buf, log)) || (e = check_policy(r, x, log)) ||
	    (e = check_expected(buf, "measurement", SNP_MEASUREMENT, x->measurement, 48, log)) ||
	    (e = check_expected(buf, "host_data", SNP_HOST_DATA, x->host_data, 32, log)) ||
	    (e = check_expected(buf, "report_data", SNP_REPORT_DATA, x->report_data, 64, log)))
		return e;
	return 0;
}
