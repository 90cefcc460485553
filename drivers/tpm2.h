/*
 * drivers/tpm2.h — TPM 2.0 commands over a transport the caller gives.
 *
 * The TCG TPM 2.0 Library (rev 1.59): Part 2 fixes the structures, Part 3
 * the commands; everything is marshalled big-endian here and carried by a
 * transport callback that sends a command's bytes and returns the
 * response's: the kernel's CRB interface (drivers/tpm_crb.c) or swtpm's
 * socket on the host (tools/host/attest.c). Portable (platform.h only), so
 * host tests drive the code the kernel runs.
 *
 *   struct tpm2 t;                       caller-owned, ~8 KiB (two buffers)
 *   tpm2_init(&t, xfer, ctx);
 *   tpm2_create_primary(&t, TPM2_RH_ENDORSEMENT, tmpl, n, &ak);
 *   tpm2_quote(&t, ak.handle, qdata, 32, mask, ...);
 *   tpm2_flush(&t, ak.handle);
 *
 * Every call returns 0 or a negative LLMK_E* code; on failure t->err holds
 * one line naming the command and what went wrong, the TPM's response code
 * decoded ("TPM2_Quote: TPM_RC_VALUE (parameter 2)", t->rc keeps the raw
 * code). Every response is length-checked before a byte of it is used.
 * Authorizations are the empty password (TPM_RS_PW) or a policy session:
 * the hierarchies and keys used here have empty auth values.
 */
#ifndef LLMK_TPM2_H
#define LLMK_TPM2_H

#include "../kernel/platform.h"

#define TPM2_BUF 4096     /* largest command or response (swtpm, CRB: <= 4 KiB) */
#define TPM2_PUB_MAX 512  /* a TPMT_PUBLIC: RSA 2048 with a policy is ~310 bytes */
#define TPM2_NAME_MAX 34  /* TPM2B_NAME contents: nameAlg + SHA-256 */
#define TPM2_PCRS 24      /* PCRs of the PC Client profile */

/* Part 2 §6.5 TPM_RH / §7 TPM_HANDLE values this code uses. */
#define TPM2_RH_OWNER 0x40000001u
#define TPM2_RH_NULL 0x40000007u
#define TPM2_RS_PW 0x40000009u
#define TPM2_RH_ENDORSEMENT 0x4000000Bu
#define TPM2_RH_PLATFORM 0x4000000Cu
#define TPM2_HT_TRANSIENT 0x80000000u
#define TPM2_HT_PERSISTENT 0x81000000u
#define TPM2_HT_NV_INDEX 0x01000000u

/* Part 2 §6.3 TPM_ALG_ID */
enum {
	TPM2_ALG_RSA = 0x0001, TPM2_ALG_SHA1 = 0x0004, TPM2_ALG_HMAC = 0x0005,
	TPM2_ALG_AES = 0x0006, TPM2_ALG_KEYEDHASH = 0x0008, TPM2_ALG_SHA256 = 0x000B,
	TPM2_ALG_SHA384 = 0x000C, TPM2_ALG_SHA512 = 0x000D, TPM2_ALG_NULL = 0x0010,
	TPM2_ALG_RSASSA = 0x0014, TPM2_ALG_OAEP = 0x0017, TPM2_ALG_ECDSA = 0x0018,
	TPM2_ALG_ECDH = 0x0019, TPM2_ALG_ECC = 0x0023, TPM2_ALG_CFB = 0x0043,
};
#define TPM2_ECC_NIST_P256 0x0003 /* Part 2 §6.4 TPM_ECC_CURVE */

/* Part 2 §8.3 TPMA_OBJECT bits */
enum {
	TPM2_OA_FIXED_TPM = 1u << 1, TPM2_OA_FIXED_PARENT = 1u << 4,
	TPM2_OA_SENSITIVE_DATA_ORIGIN = 1u << 5, TPM2_OA_USER_WITH_AUTH = 1u << 6,
	TPM2_OA_ADMIN_WITH_POLICY = 1u << 7, TPM2_OA_NO_DA = 1u << 10,
	TPM2_OA_RESTRICTED = 1u << 16, TPM2_OA_DECRYPT = 1u << 17, TPM2_OA_SIGN = 1u << 18,
};

/* Part 2 §6.13 TPM_PT: fixed properties */
enum {
	TPM2_PT_MANUFACTURER = 0x105, TPM2_PT_VENDOR_STRING_1 = 0x106,
	TPM2_PT_FIRMWARE_VERSION_1 = 0x10B, TPM2_PT_FIRMWARE_VERSION_2 = 0x10C,
	TPM2_PT_MAX_COMMAND_SIZE = 0x11E, TPM2_PT_MAX_RESPONSE_SIZE = 0x11F,
	TPM2_PT_NV_BUFFER_MAX = 0x12C,
};

/* TCG EK Credential Profile 2.0 §2.2.1.5: where the EK certificates live. */
#define TPM2_NV_EK_CERT_RSA 0x01c00002u /* RSA 2048, template L-1 */
#define TPM2_NV_EK_CERT_ECC 0x01c0000au /* ECC NIST P-256, template L-2 */

/* The credential file tpm2_makecredential writes and TPM2_ActivateCredential
 * takes apart (tpm2_attest.h, tools/verify/tpm_credential.h): this magic and
 * version (big-endian u32 each), TPM2B_ID_OBJECT, TPM2B_ENCRYPTED_SECRET. */
#define TPM2_CRED_MAGIC 0xBADCC0DEu
#define TPM2_CRED_VERSION 1u

/* Part 2 §6.6 TPM_RC values callers test for. */
#define TPM2_RC_SUCCESS 0x000u
#define TPM2_RC_INITIALIZE 0x100u
#define TPM2_RC_HANDLE 0x08Bu   /* format 1, without its number bits */
#define TPM2_RC_RETRY 0x922u

/*
 * The transport: send cmd[0..n) and receive the whole response into
 * rsp[0..cap), its length in *rlen. 0, or -LLMK_EIO / -LLMK_ERANGE with
 * one line in err (no "error:") saying what the interface saw.
 */
typedef int (*tpm2_xfer_fn)(void *ctx, const uint8_t *cmd, size_t n, uint8_t *rsp, size_t cap,
			    size_t *rlen, char *err, size_t errn);

struct tpm2 {
	tpm2_xfer_fn xfer;
	void *ctx;
	uint32_t rc;          /* response code of the last command (0: success) */
	char err[200];        /* the last failure, one line */
	uint8_t cmd[TPM2_BUF];
	uint8_t rsp[TPM2_BUF];
	size_t rsp_len;
};

void tpm2_init(struct tpm2 *t, tpm2_xfer_fn xfer, void *ctx);

/* "TPM_RC_VALUE (parameter 2)", "TPM_RC_INITIALIZE", "TPM_RC_0x1c4"... into
 * buf; returns buf. Part 2 §6.6: format 0 (bit 7 clear) and format 1. */
const char *tpm2_rc_str(uint32_t rc, char *buf, size_t n);

/* ---- Part 2 structures this code builds and reads ---- */

/* A TPMT_PUBLIC taken apart (pointers into the caller's bytes). */
struct tpm2_pub {
	uint16_t type, name_alg;
	uint32_t attrs;
	const uint8_t *policy;
	uint16_t policy_len;
	uint16_t sym_alg, sym_bits, sym_mode; /* TPMT_SYM_DEF_OBJECT (restricted decrypt keys) */
	uint16_t scheme, scheme_hash;         /* TPMT_*_SCHEME, hash NULL when none */
	uint16_t curve;                       /* ECC */
	const uint8_t *x, *y;
	uint16_t x_len, y_len;
	uint16_t rsa_bits;                    /* RSA */
	uint32_t exponent;                    /* 0 in the structure means 65537 */
	const uint8_t *n;
	uint16_t n_len;
};
/* Parse n bytes of TPMT_PUBLIC (Part 2 §12.2.4), RSA and ECC only; every
 * byte must be used. -LLMK_EFORMAT / -LLMK_ENOTSUP with the field in err. */
int tpm2_public_parse(const uint8_t *p, size_t n, struct tpm2_pub *out, char *err, size_t errn);

/* The fixed templates this project creates keys from (TPMT_PUBLIC). */
enum tpm2_key {
	/* The attestation key: restricted ECC P-256 signing, ECDSA SHA-256,
	 * fixedTPM, userWithAuth, noDA, empty unique: under the endorsement
	 * hierarchy the same TPM gives the same key every time. */
	TPM2_KEY_AK_ECC,
	/* TCG EK Credential Profile 2.0 §B.3.3 template L-1: RSA 2048, AES-128
	 * CFB, policy A (PolicySecret(TPM_RH_ENDORSEMENT)), unique 256 zeros. */
	TPM2_KEY_EK_RSA,
	/* §B.3.4 template L-2: ECC NIST P-256, the same policy and symmetric,
	 * unique two 32-byte zero coordinates. */
	TPM2_KEY_EK_ECC,
};
/* Write the template; returns its length, or -LLMK_ERANGE. */
int tpm2_template(enum tpm2_key key, uint8_t *out, size_t cap);

/* A loaded object: its handle, public area (TPMT_PUBLIC contents) and name
 * (TPM2B_NAME contents: u16 nameAlg || H(public)) as the TPM reports them. */
struct tpm2_object {
	uint32_t handle;
	uint8_t pub[TPM2_PUB_MAX];
	uint16_t pub_len;
	uint8_t name[TPM2_NAME_MAX];
	uint16_t name_len;
};

struct tpm2_nv_public {
	uint32_t index;
	uint16_t name_alg;
	uint32_t attrs;
	uint16_t size;
};

/* ---- Part 3 commands ---- */
int tpm2_startup(struct tpm2 *t);                                   /* §9.3, SU_CLEAR */
/* §30.2 TPM_CAP_TPM_PROPERTIES: one property's value; -LLMK_ENOENT if the
 * TPM does not report it. */
int tpm2_get_property(struct tpm2 *t, uint32_t prop, uint32_t *val);
/* §30.2 TPM_CAP_HANDLES from first on: up to max handles in out, *n set. */
int tpm2_get_handles(struct tpm2 *t, uint32_t first, uint32_t *out, int max, int *n);
/* §22.4 the SHA-256 bank's PCRs whose bits are set in mask (bit i = PCR i),
 * into out[i]; a TPM answers at most 8 per command, so this loops. */
int tpm2_pcr_read(struct tpm2 *t, uint32_t mask, uint8_t out[TPM2_PCRS][32]);
int tpm2_pcr_extend(struct tpm2 *t, uint32_t pcr, const uint8_t digest[32]); /* §22.2, SHA-256 */
int tpm2_pcr_reset(struct tpm2 *t, uint32_t pcr);                   /* §22.8 */
/* §24.1 in hierarchy from the template; out->handle is transient: flush it. */
int tpm2_create_primary(struct tpm2 *t, uint32_t hierarchy, const uint8_t *tmpl, size_t n,
			struct tpm2_object *out);
int tpm2_read_public(struct tpm2 *t, uint32_t handle, struct tpm2_object *out); /* §12.4 */
/*
 * §18.4 quote the SHA-256 PCRs in mask with key, qualifying data qdata
 * (<= 64 bytes). attest gets the TPMS_ATTEST (TPM2B_ATTEST contents),
 * sig the TPMT_SIGNATURE, each with its length.
 */
int tpm2_quote(struct tpm2 *t, uint32_t key, const uint8_t *qdata, size_t qlen, uint32_t mask,
	       uint8_t *attest, size_t acap, size_t *alen, uint8_t *sig, size_t scap, size_t *slen);
int tpm2_nv_read_public(struct tpm2 *t, uint32_t index, struct tpm2_nv_public *out); /* §31.6 */
/* §31.13 the whole index (its NV_ReadPublic size) in chunks the TPM takes,
 * authorized by the index itself with the empty password. */
int tpm2_nv_read(struct tpm2 *t, uint32_t index, uint8_t *out, size_t cap, size_t *len);
int tpm2_flush(struct tpm2 *t, uint32_t handle);                    /* §28.4 */
/* §11.1 an unbound, unsalted policy session with SHA-256. */
int tpm2_start_policy_session(struct tpm2 *t, uint32_t *session);
/* §23.4 PolicySecret(auth) in session, auth with the empty password. */
int tpm2_policy_secret(struct tpm2 *t, uint32_t auth, uint32_t session);
/*
 * §12.5 ActivateCredential: the object activate (authorized with the empty
 * password) and the key key (the EK, authorized by the policy session,
 * which the command ends) open the credential: blob is the TPM2B_ID_OBJECT
 * contents, secret the TPM2B_ENCRYPTED_SECRET contents; the credential
 * (TPM2B_DIGEST contents) goes to out.
 */
int tpm2_activate_credential(struct tpm2 *t, uint32_t activate, uint32_t key, uint32_t session,
			     const uint8_t *blob, size_t blen, const uint8_t *secret, size_t slen,
			     uint8_t *out, size_t cap, size_t *olen);

#endif
