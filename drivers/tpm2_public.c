/*
 * drivers/tpm2_public.c — TPMT_PUBLIC (TPM 2.0 Part 2 §12.2.4): the fixed
 * templates this project creates keys from, and a parser for the public
 * areas a TPM returns (RSA and ECC keys).
 */
#include "tpm2.h"
#include "tpm2_marshal.h"

/* TCG EK Credential Profile 2.0 §B.6 policy A: the digest of
 * PolicySecret(TPM_RH_ENDORSEMENT), SHA-256. */
static const uint8_t ek_policy_a[32] = {
	0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc, 0x8d, 0x46, 0xa5, 0xd7, 0x24,
	0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52, 0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa,
};

static void w_sym_aes128_cfb(struct wr *w)
{
	w_u16(w, TPM2_ALG_AES);
	w_u16(w, 128);
	w_u16(w, TPM2_ALG_CFB);
}

int tpm2_template(enum tpm2_key key, uint8_t *out, size_t cap)
{
	static const uint8_t zeros[256];
	const uint32_t ek_attrs = TPM2_OA_FIXED_TPM | TPM2_OA_FIXED_PARENT |
				  TPM2_OA_SENSITIVE_DATA_ORIGIN | TPM2_OA_ADMIN_WITH_POLICY |
				  TPM2_OA_RESTRICTED | TPM2_OA_DECRYPT;
	struct wr w = {out, 0, cap, false};

	switch (key) {
	case TPM2_KEY_AK_ECC:
		w_u16(&w, TPM2_ALG_ECC);
		w_u16(&w, TPM2_ALG_SHA256);
		w_u32(&w, TPM2_OA_FIXED_TPM | TPM2_OA_FIXED_PARENT | TPM2_OA_SENSITIVE_DATA_ORIGIN |
			      TPM2_OA_USER_WITH_AUTH | TPM2_OA_NO_DA | TPM2_OA_RESTRICTED | TPM2_OA_SIGN);
		w_2b(&w, NULL, 0);        /* authPolicy */
		w_u16(&w, TPM2_ALG_NULL); /* symmetric: none for a signing key */
		w_u16(&w, TPM2_ALG_ECDSA);
		w_u16(&w, TPM2_ALG_SHA256);
		w_u16(&w, TPM2_ECC_NIST_P256);
		w_u16(&w, TPM2_ALG_NULL); /* kdf */
		w_2b(&w, NULL, 0);        /* unique.x */
		w_2b(&w, NULL, 0);        /* unique.y */
		break;
	case TPM2_KEY_EK_RSA:
		w_u16(&w, TPM2_ALG_RSA);
		w_u16(&w, TPM2_ALG_SHA256);
		w_u32(&w, ek_attrs);
		w_2b(&w, ek_policy_a, sizeof ek_policy_a);
		w_sym_aes128_cfb(&w);
		w_u16(&w, TPM2_ALG_NULL); /* scheme */
		w_u16(&w, 2048);
		w_u32(&w, 0);             /* exponent: the default 65537 */
		w_2b(&w, zeros, 256);
		break;
	case TPM2_KEY_EK_ECC:
		w_u16(&w, TPM2_ALG_ECC);
		w_u16(&w, TPM2_ALG_SHA256);
		w_u32(&w, ek_attrs);
		w_2b(&w, ek_policy_a, sizeof ek_policy_a);
		w_sym_aes128_cfb(&w);
		w_u16(&w, TPM2_ALG_NULL); /* scheme */
		w_u16(&w, TPM2_ECC_NIST_P256);
		w_u16(&w, TPM2_ALG_NULL); /* kdf */
		w_2b(&w, zeros, 32);
		w_2b(&w, zeros, 32);
		break;
	default:
		return -LLMK_EINVAL;
	}
	return w.over ? -LLMK_ERANGE : (int)w.n;
}

/* Part 2 §11.1.9 TPMT_SYM_DEF_OBJECT */
static void r_sym(struct rd *r, struct tpm2_pub *o)
{
	r->field = "symmetric";
	o->sym_alg = r_u16(r);
	if (o->sym_alg != TPM2_ALG_NULL) {
		o->sym_bits = r_u16(r);
		o->sym_mode = r_u16(r);
	}
}

/* Part 2 §11.2.3.2 / §11.2.5.6 schemes: a hash follows every scheme but
 * NULL and RSAES (empty details); ECDAA adds a count. */
static void r_scheme(struct rd *r, struct tpm2_pub *o)
{
	r->field = "scheme";
	o->scheme = r_u16(r);
	o->scheme_hash = TPM2_ALG_NULL;
	if (o->scheme != TPM2_ALG_NULL && o->scheme != 0x0015 /* RSAES */) {
		o->scheme_hash = r_u16(r);
		if (o->scheme == 0x001A) /* ECDAA */
			r_u16(r);
	}
}

int tpm2_public_parse(const uint8_t *p, size_t n, struct tpm2_pub *o, char *err, size_t errn)
{
	struct rd r = {p, n, 0, "type", NULL};

	memset(o, 0, sizeof *o);
	o->type = r_u16(&r);
	r.field = "nameAlg";
	o->name_alg = r_u16(&r);
	r.field = "objectAttributes";
	o->attrs = r_u32(&r);
	r.field = "authPolicy";
	o->policy = r_2b(&r, &o->policy_len);
	if (!r.failed && o->type == TPM2_ALG_RSA) {
		r_sym(&r, o);
		r_scheme(&r, o);
		r.field = "keyBits";
		o->rsa_bits = r_u16(&r);
		r.field = "exponent";
		o->exponent = r_u32(&r);
		r.field = "unique (RSA modulus)";
		o->n = r_2b(&r, &o->n_len);
	} else if (!r.failed && o->type == TPM2_ALG_ECC) {
		r_sym(&r, o);
		r_scheme(&r, o);
		r.field = "curveID";
		o->curve = r_u16(&r);
		r.field = "kdf";
		if (r_u16(&r) != TPM2_ALG_NULL)
			r_u16(&r);
		r.field = "unique.x";
		o->x = r_2b(&r, &o->x_len);
		r.field = "unique.y";
		o->y = r_2b(&r, &o->y_len);
	} else if (!r.failed) {
		plat_snprintf(err, errn, "TPMT_PUBLIC: type %#x (only RSA and ECC keys here)", o->type);
		return -LLMK_ENOTSUP;
	}
	if (r.failed) {
		plat_snprintf(err, errn, "TPMT_PUBLIC of %zu bytes ends inside %s", n, r.failed);
		return -LLMK_EFORMAT;
	}
	if (r.off != n) {
		plat_snprintf(err, errn, "TPMT_PUBLIC: %zu bytes after unique", n - r.off);
		return -LLMK_EFORMAT;
	}
	return 0;
}

