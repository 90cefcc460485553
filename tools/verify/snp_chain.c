/*
 * tools/verify/snp_chain.c — AMD's certificate chain for SEV-SNP reports:
 * ARK (self-signed, one per product, its key pinned) -> ASK -> VCEK, all
 * RSASSA-PSS SHA-384 (AMD 57230, "VCEK Certificate and KDS Interface
 * Specification", §2-3), and the VCEK's extensions read for the report.
 */
#include "snp_report.h"

#include "der.h"
#include "roots.h"

#include <bearssl.h>
#include <stdio.h>
#include <string.h>

/* 1.3.6.1.4.1.3704.1 (AMD) .2 productName, .3.n TCB components, .4 hwID. */
#define AMD_ARC 0x2b, 0x06, 0x01, 0x04, 0x01, 0x9c, 0x78, 0x01
static const uint8_t OID_PRODUCT_NAME[] = {AMD_ARC, 0x02};
static const uint8_t OID_HWID[] = {AMD_ARC, 0x04};

/* The product names AMD uses in ARK/ASK subjects and VCEK productName. */
static enum snp_product product_of(const char *name)
{
	static const struct {
		const char *name;
		enum snp_product p;
	} names[] = {{"Milan", SNP_MILAN}, {"Genoa", SNP_GENOA}, {"Turin", SNP_TURIN}};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(name, names[i].name))
			return names[i].p;
	return SNP_PRODUCT_NONE;
}

/* An extension's value: one DER value of the given tag filling it. */
static int ext_value(const struct x509_cert *c, const struct x509_ext *x, uint8_t tag,
		     const char *field, struct der_tlv *t, struct vfy_log *log)
{
	struct der d;
	int e;
	der_init(&d, x->value.p, x->value.n, c->what, log);
	d.base = c->der.p;
	if ((e = der_expect(&d, tag, t, field)) || (e = der_end(&d, field)))
		return e;
	return 0;
}

/* The VCEK's productName, hwID and TCB SPLs (57230 §3, Table 8). */
static int read_vcek_extensions(struct snp_chain *ch, struct vfy_log *log)
{
	const struct x509_cert *c = &ch->vcek;
	const struct x509_ext *x;
	struct der_tlv t;
	int e;

	if (!(x = x509_ext_find(c, OID_PRODUCT_NAME, sizeof OID_PRODUCT_NAME)))
		return vfy_fail(log, LLMK_EFORMAT, "VCEK certificate: no productName extension "
				"(1.3.6.1.4.1.3704.1.2)");
	if ((e = ext_value(c, x, DER_IA5_STRING, "productName", &t, log)))
		return e;
	if (t.len >= sizeof ch->product_name)
		return vfy_fail(log, LLMK_EFORMAT, "VCEK certificate: productName longer than %zu bytes",
				sizeof ch->product_name - 1);
	memcpy(ch->product_name, t.v, t.len);
	ch->product_name[t.len] = 0;
	if (memchr(t.v, 0, t.len))
		return vfy_fail(log, LLMK_EFORMAT, "VCEK certificate: productName contains a NUL");

	if (!(x = x509_ext_find(c, OID_HWID, sizeof OID_HWID)))
		return vfy_fail(log, LLMK_EFORMAT, "VCEK certificate: no hwID extension (1.3.6.1.4.1.3704.1.4)");
	if (x->value.n != 64 && x->value.n != 8)
		return vfy_fail(log, LLMK_EFORMAT, "VCEK certificate: hwID is %zu bytes, not 64 or 8",
				x->value.n);
	memcpy(ch->hwid, x->value.p, x->value.n);
	ch->hwid_len = x->value.n;

	for (int n = 1; n <= 9; n++) {
		uint8_t oid[] = {AMD_ARC, 0x03, (uint8_t)n};
		char field[48];
		uint32_t v;
		ch->spl[n] = -1;
		if (!(x = x509_ext_find(c, oid, sizeof oid)))
			continue;
		snprintf(field, sizeof field, "TCB extension 1.3.6.1.4.1.3704.1.3.%d", n);
		struct der d;
		der_init(&d, x->value.p, x->value.n, c->what, log);
		d.base = c->der.p;
		if ((e = der_expect(&d, DER_INTEGER, &t, field)) || (e = der_end(&d, field)) ||
		    (e = der_small_uint(&d, &t, field, 255, &v)))
			return e;
		ch->spl[n] = (int)v;
	}
	/* bl, tee, snp, ucode always; fmc on Turin (57230 Table 8). */
	static const int needed[] = {1, 2, 3, 8, 9};
	for (int i = 0; i < (ch->product == SNP_TURIN ? 5 : 4); i++)
		if (ch->spl[needed[i]] < 0)
			return vfy_fail(log, LLMK_EFORMAT, "VCEK certificate: no TCB extension "
					"1.3.6.1.4.1.3704.1.3.%d", needed[i]);
	/* spl_4..spl_7 (.3.4-.3.7) name reserved TCB bytes; they must be zero. */
	for (int n = 4; n <= 7; n++)
		if (ch->spl[n] > 0)
			return vfy_fail(log, LLMK_EFORMAT, "VCEK certificate: reserved TCB extension "
					"1.3.6.1.4.1.3704.1.3.%d is %d, not 0", n, ch->spl[n]);
	if (ch->product != SNP_TURIN && ch->spl[9] > 0)
		return vfy_fail(log, LLMK_EFORMAT, "VCEK certificate: an FMC SVN (%d) on %s, which has no FMC",
				ch->spl[9], snp_product_name(ch->product));
	return 0;
}

int snp_chain_verify(struct snp_chain *ch, const uint8_t *vcek, size_t vcek_len,
		     const struct pem_cert *roots, int n_roots, struct vfy_log *log)
{
	return snp_chain_verify_opt(ch, vcek, vcek_len, roots, n_roots, 0, log);
}

/* A test root (the simulator's): its product from its subject "ARK-X". */
static const struct vfy_root *test_root(const struct x509_cert *ark, struct vfy_root *out,
					struct vfy_log *log)
{
	if (strncmp(ark->subject_cn, "ARK-", 4) || product_of(ark->subject_cn + 4) == SNP_PRODUCT_NONE) {
		vfy_fail(log, LLMK_EAUTH, "ARK certificate '%s': not one of AMD's ARK keys, and as a "
			 "test root its subject is not ARK-Milan, ARK-Genoa or ARK-Turin",
			 ark->subject_cn);
		return NULL;
	}
	memset(out, 0, sizeof *out);
	out->vendor = "AMD";
	out->cn = ark->subject_cn;
	out->product = ark->subject_cn + 4;
	return out;
}

int snp_chain_verify_opt(struct snp_chain *ch, const uint8_t *vcek, size_t vcek_len,
			 const struct pem_cert *roots, int n_roots, int allow_test_root,
			 struct vfy_log *log)
{
	struct vfy_root test;
	struct x509_cert a, b;
	const struct vfy_root *pin;
	char h[65], want[32];
	uint8_t d[32];
	int e;

	memset(ch, 0, sizeof *ch);
	if (n_roots != 2)
		return vfy_fail(log, LLMK_EINVAL, "AMD chain: %d certificates given, want the ASK and "
				"the ARK", n_roots);
	if ((e = x509_parse(&a, roots[0].der, roots[0].len, "ARK/ASK certificate 1", log)) ||
	    (e = x509_parse(&b, roots[1].der, roots[1].len, "ARK/ASK certificate 2", log)))
		return e;
	/* The ARK is the self-issued one; the ASK is issued by it. */
	if (x509_self_issued(&a) == x509_self_issued(&b))
		return vfy_fail(log, LLMK_EINVAL, "AMD chain: want one self-issued ARK and one ASK, got "
				"'%s' and '%s'", a.subject_cn, b.subject_cn);
	ch->ark = x509_self_issued(&a) ? a : b;
	ch->ask = x509_self_issued(&a) ? b : a;
	ch->ark.what = "ARK certificate";
	ch->ask.what = "ASK certificate";
	if ((e = x509_parse(&ch->vcek, vcek, vcek_len, "VCEK certificate", log)))
		return e;

	/* Trust starts at a pinned AMD key, not at whatever the file holds. */
	pin = vfy_root_find(&ch->ark);
	x509_spki_sha256(&ch->ark, d);
	if ((!pin || strcmp(pin->vendor, "AMD")) && !allow_test_root)
		return vfy_fail(log, LLMK_EAUTH, "ARK certificate '%s': its key (SPKI SHA-256 %s) is not "
				"one of AMD's ARK keys", ch->ark.subject_cn, vfy_hex(d, 32, h));
	if (!pin || strcmp(pin->vendor, "AMD")) {
		/* The caller allowed simulated evidence: the root is still the
		 * user's file, only the pin is waived, and the output says so. */
		if (!(pin = test_root(&ch->ark, &test, log)))
			return -LLMK_EAUTH;
		ch->test_root = 1;
		vfy_ok(log, "root: '%s' is a TEST root, not AMD's (SPKI SHA-256 %.16s... is not pinned): "
		       "accepted for simulated evidence only", ch->ark.subject_cn, vfy_hex(d, 32, h));
	} else {
		vfy_ok(log, "root: '%s' carries AMD's pinned %s key (SPKI SHA-256 %.16s...)",
		       ch->ark.subject_cn, pin->cn, vfy_hex(d, 32, h));
	}
	ch->product = product_of(pin->product);
	if ((e = x509_check_issued(&ch->ark, &ch->ark, 0, log)) ||
	    (e = x509_check_issued(&ch->ask, &ch->ark, 0, log)) ||
	    (e = x509_check_issued(&ch->vcek, &ch->ask, 0, log)))
		return e;

	/* One product throughout: ARK-X, SEV-X, a VCEK for X. */
	snprintf(want, sizeof want, "SEV-%s", pin->product);
	if (strcmp(ch->ask.subject_cn, want))
		return vfy_fail(log, LLMK_EAUTH, "ASK certificate: subject '%s', expected '%s' under %s",
				ch->ask.subject_cn, want, pin->cn);
	if (strcmp(ch->vcek.subject_cn, "SEV-VCEK"))
		return vfy_fail(log, LLMK_ENOTSUP, "VCEK certificate: subject '%s' is not 'SEV-VCEK'",
				ch->vcek.subject_cn);
	if (ch->vcek.key_type != X509_KEY_EC || ch->vcek.ec_curve != BR_EC_secp384r1)
		return vfy_fail(log, LLMK_EFORMAT, "VCEK certificate: the key is not EC P-384");
	if ((e = read_vcek_extensions(ch, log)))
		return e;
	size_t pl = strlen(pin->product);
	if (strncmp(ch->product_name, pin->product, pl) ||
	    (ch->product_name[pl] && ch->product_name[pl] != '-'))
		return vfy_fail(log, LLMK_EAUTH, "VCEK certificate: productName '%s' is not a %s part",
				ch->product_name, pin->product);
	vfy_ok(log, "product: %s (ARK '%s', ASK '%s', VCEK productName '%s')", pin->product,
	       ch->ark.subject_cn, ch->ask.subject_cn, ch->product_name);
	return 0;
}
