/*
 * tests/unit/test_verify_tdx.c — tools/verify/tdx_quote.c on the real TDX
 * quote in $LLMK_TESTDATA/attest/tdx: it verifies against Intel's root from
 * pck_chain.pem; a flipped bit in the header, every body field, the
 * signature, the attestation key, the QE report, its signature, the QE
 * authentication data, the certification data headers, the PEM chain and
 * the padding is refused with one reason; a root the caller did not give,
 * wrong expected values and truncation are refused.
 *
 * The flips are a deterministic sample; LLMK_VERIFY_EXHAUSTIVE=1 flips
 * every bit of the quote instead.
 */
#include "test.h"

#include <stdlib.h>

#include "../../tools/verify/tdx_quote.h"

struct tdx_ev {
	uint8_t *quote, *chain_text;
	size_t len, chain_len;
	uint8_t der[8192];
	struct pem_cert certs[4];
	int n;
};

static int load(struct tdx_ev *ev)
{
	char path[512];
	struct vfy_log log;
	memset(ev, 0, sizeof *ev);
	snprintf(path, sizeof path, "%s/attest/tdx/quote_v4.bin", testdata_dir());
	ev->quote = test_read_file(path, &ev->len);
	snprintf(path, sizeof path, "%s/attest/tdx/pck_chain.pem", testdata_dir());
	ev->chain_text = test_read_file(path, &ev->chain_len);
	if (!ev->quote || !ev->chain_text)
		return -1;
	vfy_log_init(&log);
	if (pem_certs(ev->chain_text, ev->chain_len, "pck_chain.pem", ev->der, sizeof ev->der, ev->certs,
		      4, &ev->n, &log)) {
		fprintf(stderr, "  %s\n", log.err);
		return -1;
	}
	return 0;
}

static void unload(struct tdx_ev *ev)
{
	free(ev->quote);
	free(ev->chain_text);
}

static int verify(const struct tdx_ev *ev, const uint8_t *q, size_t len, const struct tdx_expect *x,
		  struct tdx_quote *out, struct vfy_log *log)
{
	vfy_log_init(log);
	return tdx_quote_verify(q, len, ev->certs, ev->n, "pck_chain.pem", x, out, log);
}

static int refused_with_one_reason(int e, const struct vfy_log *log)
{
	return e < 0 && log->err[0] && !strchr(log->err, '\n');
}

#define NEED_TESTDATA()                                                         \
	do {                                                                    \
		if (!testdata_dir())                                            \
			SKIP("no LLMK_TESTDATA (attest/tdx)");                  \
	} while (0)

TEST(tdx_real_quote_verifies_against_intels_root)
{
	static struct tdx_ev ev;
	struct tdx_quote q;
	struct vfy_log log;
	NEED_TESTDATA();
	if (load(&ev)) {
		CHECK(0);
		return;
	}
	int e = verify(&ev, ev.quote, ev.len, NULL, &q, &log);
	if (e)
		fprintf(stderr, "  %s\n", log.err);
	CHECK_EQ_INT(e, 0);
	CHECK_EQ_INT(q.version, 4);
	CHECK_EQ_INT(q.qe_auth_len, 32);
	CHECK(q.end < ev.len); /* the file pads the quote with zeros */
	CHECK(log.n >= 9);
	/* Without its zero padding it verifies too. */
	CHECK_EQ_INT(verify(&ev, ev.quote, q.end, NULL, &q, &log), 0);
	unload(&ev);
}

struct flips {
	int n, refused;
};

static void flip_range(const struct tdx_ev *ev, size_t lo, size_t hi, size_t stride, struct flips *f)
{
	for (size_t off = lo; off < hi; off += stride) {
		struct tdx_quote q;
		struct vfy_log log;
		int bit = (int)((off * 7 + 3) % 8);
		ev->quote[off] ^= (uint8_t)(1 << bit);
		int e = verify(ev, ev->quote, ev->len, NULL, &q, &log);
		ev->quote[off] ^= (uint8_t)(1 << bit);
		f->n++;
		if (refused_with_one_reason(e, &log))
			f->refused++;
		else
			fprintf(stderr, "  bit %d of byte 0x%zx accepted (%d: %s)\n", bit, off, e, log.err);
	}
}

/* Both ends of each header and body field. */
static const struct {
	uint16_t off, len;
} fields[] = {
	{TDX_VERSION, 2}, {TDX_ATT_KEY_TYPE, 2}, {TDX_TEE_TYPE, 4}, {TDX_HDR_RESERVED, 4},
	{TDX_QE_VENDOR_ID, 16}, {TDX_USER_DATA, 20}, {TDX_TEE_TCB_SVN, 16}, {TDX_MRSEAM, 48},
	{TDX_MRSIGNERSEAM, 48}, {TDX_SEAM_ATTRIBUTES, 8}, {TDX_TD_ATTRIBUTES, 8}, {TDX_XFAM, 8},
	{TDX_MRTD, 48}, {TDX_MRCONFIGID, 48}, {TDX_MROWNER, 48}, {TDX_MROWNERCONFIG, 48},
	{TDX_RTMR0, 48}, {TDX_RTMR0 + 48, 48}, {TDX_RTMR0 + 96, 48}, {TDX_RTMR0 + 144, 48},
	{TDX_REPORT_DATA, 64}, {TDX_SIG_DATA_LEN, 4},
};

TEST(tdx_flipped_bit_anywhere_in_the_quote_is_refused)
{
	static struct tdx_ev ev;
	struct tdx_quote q;
	struct vfy_log log;
	struct flips f = {0};
	const char *ex = getenv("LLMK_VERIFY_EXHAUSTIVE");
	NEED_TESTDATA();
	if (load(&ev) || verify(&ev, ev.quote, ev.len, NULL, &q, &log)) {
		CHECK(0);
		return;
	}
	if (ex && ex[0] == '1') {
		size_t end = q.end + 16; /* verify() rewrites q */
		for (int bit = 0; bit < 8; bit++)
			for (size_t off = 0; off < end; off++) {
				ev.quote[off] ^= (uint8_t)(1 << bit);
				int e = verify(&ev, ev.quote, ev.len, NULL, &q, &log);
				ev.quote[off] ^= (uint8_t)(1 << bit);
				f.n++;
				f.refused += refused_with_one_reason(e, &log);
			}
	} else {
		for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
			flip_range(&ev, fields[i].off, fields[i].off + 1u, 1, &f);
			flip_range(&ev, fields[i].off + fields[i].len - 1u, fields[i].off + fields[i].len, 1, &f);
		}
		flip_range(&ev, 0, TDX_HEADER_SIZE, 1, &f);             /* every header byte */
		flip_range(&ev, q.quote_sig, q.quote_sig + 64, 5, &f);   /* the AK's signature */
		flip_range(&ev, q.att_key, q.att_key + 64, 5, &f);       /* the AK */
		flip_range(&ev, q.cert_type_off, q.cert_type_off + 6, 1, &f);
		flip_range(&ev, q.qe_report, q.qe_report + TDX_QE_REPORT_SIZE, 3, &f);
		flip_range(&ev, q.qe_report_sig, q.qe_report_sig + 64, 5, &f);
		flip_range(&ev, q.qe_auth, q.qe_auth + 2 + q.qe_auth_len, 1, &f);
		flip_range(&ev, q.pck_type_off, q.pck_type_off + 6, 1, &f);
		flip_range(&ev, q.pck_pem, q.pck_pem + q.pck_pem_len, 13, &f); /* the certificates */
		flip_range(&ev, q.pck_pem + q.pck_pem_len - 30, q.pck_pem + q.pck_pem_len, 1, &f);
		flip_range(&ev, q.end, q.end + 2, 1, &f);               /* the padding */
		flip_range(&ev, ev.len - 1, ev.len, 1, &f);
	}
	CHECK(f.n > 400);
	CHECK_EQ_INT(f.refused, f.n);
	CHECK_EQ_INT(verify(&ev, ev.quote, ev.len, NULL, &q, &log), 0);
	unload(&ev);
}

TEST(tdx_root_must_come_from_the_callers_file)
{
	static struct tdx_ev ev;
	struct tdx_quote q;
	struct vfy_log log;
	NEED_TESTDATA();
	if (load(&ev)) {
		CHECK(0);
		return;
	}
	/* Only the root in the file: enough, the rest comes with the quote. */
	vfy_log_init(&log);
	CHECK_EQ_INT(tdx_quote_verify(ev.quote, ev.len, &ev.certs[2], 1, "root", NULL, &q, &log), 0);
	/* The PCK and its CA but no root: the quote's own root is not trusted. */
	vfy_log_init(&log);
	int e = tdx_quote_verify(ev.quote, ev.len, ev.certs, 2, "no-root.pem", NULL, &q, &log);
	CHECK_EQ_INT(e, -LLMK_EINVAL);
	CHECK(strstr(log.err, "no self-issued") != NULL);
	unload(&ev);
}

TEST(tdx_wrong_expected_values_are_refused_and_right_ones_pass)
{
	static struct tdx_ev ev;
	struct tdx_quote q;
	struct vfy_log log;
	uint8_t rd[64], mrtd[48];
	NEED_TESTDATA();
	if (load(&ev)) {
		CHECK(0);
		return;
	}
	memcpy(rd, ev.quote + TDX_REPORT_DATA, 64);
	memcpy(mrtd, ev.quote + TDX_MRTD, 48);
	struct tdx_expect x = {.report_data = rd, .mrtd = mrtd};
	CHECK_EQ_INT(verify(&ev, ev.quote, ev.len, &x, &q, &log), 0);
	rd[0] ^= 1;
	CHECK_EQ_INT(verify(&ev, ev.quote, ev.len, &x, &q, &log), -LLMK_EAUTH);
	CHECK(strstr(log.err, "report_data") != NULL);
	rd[0] ^= 1;
	mrtd[47] ^= 0x80;
	CHECK_EQ_INT(verify(&ev, ev.quote, ev.len, &x, &q, &log), -LLMK_EAUTH);
	CHECK(strstr(log.err, "MRTD") != NULL);
	unload(&ev);
}

TEST(tdx_truncated_quote_is_refused_at_every_boundary)
{
	static struct tdx_ev ev;
	struct tdx_quote q;
	struct vfy_log log;
	NEED_TESTDATA();
	if (load(&ev) || verify(&ev, ev.quote, ev.len, NULL, &q, &log)) {
		CHECK(0);
		return;
	}
	size_t cuts[] = {0, 47, TDX_SIG_DATA - 1, TDX_SIG_DATA, q.att_key, q.cert_type_off + 3,
			 q.qe_report + 100, q.qe_auth + 1, q.pck_type_off + 5, q.pck_pem + 1, q.end - 1};
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		int e = verify(&ev, ev.quote, cuts[i], NULL, &q, &log);
		if (!refused_with_one_reason(e, &log))
			fprintf(stderr, "  a quote cut at %zu bytes was accepted\n", cuts[i]);
		CHECK(refused_with_one_reason(e, &log));
	}
	unload(&ev);
}
