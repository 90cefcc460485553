/*
 * tests/unit/test_release.c — a key released to vtpm evidence
 * (tools/verify/release.c, shell/keywrap.h, `unseal --wrapped`) against a
 * real TPM (swtpm), and the attack it answers: the host keeps a genuine
 * bundle's PCRs, logs and EK certificate and quotes its own nonce and
 * X25519 key with a software key made from the AK's template
 * (tools/writer/forge_vtpm.h). A quote alone cannot tell the two apart;
 * the credential that every release carries opens only in the TPM that
 * holds the AK, so the genuine guest opens its key and the forger opens
 * nothing.
 *
 * The host build's vtpm evidence has no firmware log (no firmware ran), so
 * `vtpm_verify` is not the step under test here: the bundle's EK and AK are
 * taken as the verifier keeps them once it verified (struct bundle);
 * test_verify_vtpm.c covers every check before that.
 */
#include "test.h"
#include "shell_fixture.h"
#include "vtpm.h"

#include <bearssl.h>
#include <stdlib.h>

#include "../../shell/evidence.h"
#include "../../shell/keywrap.h"
#include "../../tools/host/host.h"
#include "../../tools/verify/tpm_credential.h"
#include "../../tools/verify/verify.h"
#include "../../tools/writer/forge_vtpm.h"

static int lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* A release to b as `verifier wrap` makes it, in base64. */
static int wrap_b64(const struct bundle *b, const uint8_t key[32], char *out, size_t cap)
{
	static uint8_t cred[KEYWRAP_CRED_MAX], blob[KEYWRAP_MAX];
	uint8_t secret[RELEASE_SECRET], seed[32] = {0x5e, 0xed};
	size_t cn, sn, n;
	if (release_credential(b, cred, sizeof cred, &cn, secret, &sn) ||
	    keywrap_wrap(b->pubkey, b->report_data, key, seed, cred, cn, secret, sn, blob,
			 sizeof blob, &n) < 0)
		return -1;
	return b64_encode(blob, n, out, cap) < 0 ? -1 : 0;
}

TEST(the_tpm_signs_quotes_with_the_aks_qualified_name_the_verifier_expects)
{
	char why[240];
	const char *vt = test_vtpm_path(why, sizeof why);
	if (!vt)
		SKIP("no swtpm: %s", why);
	struct shell_fixture f;
	char *old = vtpm_env_set(vt);
	CHECK_EQ_INT(fixture_open(&f, (const char *[]){NULL}, NULL), 0);
	int st;
	const char *out = fixture_run(&f, "attest --nonce 0a0b", &st);
	CHECK_EQ_INT(st, 0);
	size_t n = 0;
	uint8_t *ev = test_decode_line(out, "evidence: ", &n);
	CHECK(ev != NULL);
	static struct evidence_rec r[64];
	int nr = ev ? evidence_parse(ev, n, r, 64, why, sizeof why) : -1;
	const struct evidence_rec *ak = nr > 0 ? evidence_find(r, nr, ATTEST_REC_TPM_AK_PUB, NULL) : 0,
				  *q = nr > 0 ? evidence_find(r, nr, ATTEST_REC_TPM_QUOTE, NULL) : 0;
	CHECK(ak && q);
	if (ak && q) {
		struct tpm2_quote tq;
		uint8_t name[34], in[38] = {0x40, 0, 0, 0x0b}, qn[34] = {0, 0x0b};
		CHECK_EQ_INT(tpm2_parse_quote(q->val, q->len, &tq, why, sizeof why), 0);
		CHECK_EQ_INT(tpm_credential_name(ak->val, ak->len, name), 0);
		memcpy(in + 4, name, 34);
		br_sha256_context c;
		br_sha256_init(&c);
		br_sha256_update(&c, in, sizeof in);
		br_sha256_out(&c, qn + 2);
		CHECK(tq.signer_len == 34 && memcmp(tq.signer, qn, 34) == 0);
	}
	free(ev);
	fixture_close(&f);
	host_attest_reset();
	vtpm_env_restore(old);
}

TEST(a_key_released_to_a_forged_vtpm_quote_opens_nowhere_and_the_genuine_one_opens)
{
	char why[240];
	const char *vt = test_vtpm_path(why, sizeof why);
	if (!vt)
		SKIP("no swtpm: %s", why);
	static char b64[KEYWRAP_MAX * 2], line[KEYWRAP_MAX * 2 + 64];
	static uint8_t forged[EVIDENCE_MAX];
	const uint8_t key[32] = {0x6b, 0x65, 0x79};
	struct shell_fixture f;
	struct bundle b;
	char *old = vtpm_env_set(vt);
	CHECK_EQ_INT(fixture_open(&f, (const char *[]){NULL}, NULL), 0);
	int st;

	/* the genuine guest: its evidence, a release, and it opens */
	const char *out = fixture_run(&f, "attest --nonce 0102", &st);
	CHECK_EQ_INT(st, 0);
	size_t n = 0;
	uint8_t *ev = test_decode_line(out, "evidence: ", &n);
	CHECK(ev && test_vtpm_bundle(ev, n, &b) == 0);
	CHECK_EQ_INT(wrap_b64(&b, key, b64, sizeof b64), 0);
	snprintf(line, sizeof line, "unseal --wrapped %s", b64);
	out = fixture_run(&f, line, &st);
	CHECK_EQ_INT(st, 0);
	CHECK(strstr(out, "error") == NULL);
	out = fixture_run(&f, "unseal", &st);
	CHECK(strstr(out, "released against attestation (vtpm") != NULL);

	/* the host forges: a fresh genuine bundle (it crosses the line in
	 * clear), re-signed by a software AK over its own nonce and key */
	free(ev);
	out = fixture_run(&f, "attest --nonce 0304", &st);
	ev = test_decode_line(out, "evidence: ", &n);
	CHECK(ev != NULL);
	uint8_t apriv[32] = {0xa7, 0x7a, 0xc4}, apub[32];
	CHECK_EQ_INT(keywrap_public(apriv, apub), 0);
	size_t fn = 0;
	CHECK_EQ_INT(forge_vtpm(ev, n, (const uint8_t *)"\x05\x06", 2, apub, "attacker", 8, forged,
				sizeof forged, &fn, why, sizeof why), 0);
	struct bundle fb;
	CHECK_EQ_INT(test_vtpm_bundle(forged, fn, &fb), 0);
	CHECK(memcmp(fb.pubkey, apub, 32) == 0);
	CHECK(memcmp(fb.tpm_ek_pub, b.tpm_ek_pub, b.tpm_ek_pub_len) == 0); /* the genuine EK */
	CHECK(memcmp(fb.tpm_ak_name, b.tpm_ak_name, 34) != 0);             /* not its AK */
	/* what the owner's verifier releases to it */
	static uint8_t cred[KEYWRAP_CRED_MAX], blob[KEYWRAP_MAX];
	uint8_t secret[RELEASE_SECRET], seed[32] = {1}, rd[64], k2[32];
	size_t cn, sn, bn;
	CHECK_EQ_INT(release_credential(&fb, cred, sizeof cred, &cn, secret, &sn), 0);
	CHECK_EQ_INT(keywrap_wrap(fb.pubkey, fb.report_data, key, seed, cred, cn, secret, sn, blob,
				  sizeof blob, &bn), 0);
	/* the forger holds the X25519 key, not the secret: nothing opens */
	CHECK_EQ_INT(keywrap_unwrap(apriv, apub, blob, bn, NULL, 0, rd, k2), -LLMK_EAUTH);
	/* nor does the TPM give the secret: the credential names a key it does not hold */
	CHECK(b64_encode(cred, cn, b64, sizeof b64) > 0);
	snprintf(line, sizeof line, "attest --activate %s", b64);
	out = fixture_run(&f, line, &st);
	CHECK(st < 0 && lines(out) == 1 && strncmp(out, "error: attest: --activate:", 26) == 0);
	/* and the guest refuses the blob: made for report data it never produced */
	CHECK(b64_encode(blob, bn, b64, sizeof b64) > 0);
	snprintf(line, sizeof line, "unseal --wrapped %s", b64);
	out = fixture_run(&f, line, &st);
	CHECK(st < 0 && lines(out) == 1 && strstr(out, "error: unseal --wrapped: refused") == out);

	/* a vtpm release without a credential is refused by the guest itself */
	uint8_t b2[KEYWRAP_MAX];
	CHECK(test_vtpm_bundle(ev, n, &b) == 0);
	CHECK_EQ_INT(keywrap_wrap(b.pubkey, b.report_data, key, seed, NULL, 0, NULL, 0, b2,
				  sizeof b2, &bn), 0);
	CHECK(b64_encode(b2, bn, b64, sizeof b64) > 0);
	snprintf(line, sizeof line, "unseal --wrapped %s", b64);
	out = fixture_run(&f, line, &st);
	CHECK(st < 0 && lines(out) == 1 && strstr(out, "needs a TPM credential") != NULL);
	/* the same key with the credential opens: the refusals were not the pair's */
	CHECK_EQ_INT(wrap_b64(&b, key, b64, sizeof b64), 0);
	snprintf(line, sizeof line, "unseal --wrapped %s", b64);
	fixture_run(&f, line, &st);
	CHECK_EQ_INT(st, 0);

	free(ev);
	fixture_close(&f);
	host_attest_reset();
	vtpm_env_restore(old);
}
