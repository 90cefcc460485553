/*
 * tests/unit/test_verify_bundle.c — SEV-SNP and TDX evidence bundles
 * (tools/verify/bundle.c, snp_evidence.c, tdx_evidence.c) and `verifier
 * wrap` on them.
 *
 * SNP bundles come from the host's firmware simulator, made as the guest's
 * `attest` makes them (evidence_begin, then snp_sim_provider_evidence): they
 * verify only with --allow-simulated and the simulator's own test root as
 * the user's chain, and each tampered variant is refused with its own
 * reason. The real SNP reports and the real TDX quote of
 * $LLMK_TESTDATA/attest go into bundles too: their report data was made for
 * other evidence, so every check passes up to the binding, which refuses
 * them. (A TDX bundle that verifies needs a TDX simulator: not here.)
 * `verifier wrap` runs as the command does, its output captured, and the
 * guest's private key, which this file holds, opens the blob it prints.
 */
#include "test.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../shell/keywrap.h"
#include "../../tools/host/snp_sim.h"
#include "../../tools/verify/verify.h"

#define CAP 32768

/* The guest's side: its inputs and its ephemeral key pair. */
struct guest {
	uint8_t priv[32];
	struct evidence_inputs in;
	uint8_t rd[64];
	uint8_t bundle[CAP];
	size_t len;
};

static void guest_init(struct guest *g, uint8_t seed)
{
	memset(g, 0, sizeof *g);
	for (int i = 0; i < 32; i++) {
		g->priv[i] = (uint8_t)(seed + 7 * i);
		g->in.model_digest[i] = (uint8_t)(0xa0 + i);
	}
	CHECK_EQ_INT(keywrap_public(g->priv, g->in.pubkey), 0);
	memcpy(g->in.nonce, "\x10\x20\x30\x40\x50\x60\x70\x80\x90", 9);
	g->in.nonce_len = 9;
	strcpy(g->in.build_id, "0123456789abcdef");
	evidence_config_digest("", 0, g->in.config_digest); /* no llmk.cfg */
}

/* One simulated launch for this file (the provider's state is per process). */
static void sim_launch(void)
{
	static bool done;
	if (done && snp_sim_provider_sim())
		return;
	setenv("LLMK_SNP_SIM", "1", 1);
	snp_sim_provider_reset();
	CHECK(snp_sim_provider_why_absent() == NULL);
	done = true;
}

/* The bundle `attest --provider snp` makes, from the simulator. */
static int sim_bundle(struct guest *g)
{
	sim_launch();
	g->len = 0;
	if (evidence_begin(g->bundle, CAP, &g->len, "snp", &g->in, g->rd) < 0)
		return -1;
	return snp_sim_provider_evidence(g->rd, g->bundle, CAP, &g->len);
}

/* The user's --chain: the simulator's ARK alone, or its ASK and ARK. */
static struct pem_cert user_chain[2];
static void expect_sim(const struct guest *g, struct snp_evidence_expect *x, int with_ask)
{
	const struct snp_sim_chain *c = snp_sim_provider_chain();
	memset(x, 0, sizeof *x);
	memcpy(x->b.nonce, g->in.nonce, g->in.nonce_len);
	x->b.nonce_len = g->in.nonce_len;
	x->b.allow_simulated = true;
	x->b.have_model = true;
	memcpy(x->b.model, g->in.model_digest, 32);
	user_chain[0] = (struct pem_cert){c->ark, c->ark_len};
	user_chain[1] = (struct pem_cert){c->ask, c->ask_len};
	x->chain = user_chain;
	x->n_chain = with_ask ? 2 : 1;
	x->report.measurement = snp_sim_provider_sim()->cfg.measurement;
}

static struct snp_evidence ev;
static struct vfy_log vlog;

static int snp_verify(const uint8_t *b, size_t n, const struct snp_evidence_expect *x)
{
	vfy_log_init(&vlog);
	return snp_evidence_verify(b, n, x, &ev, &vlog);
}

/* Refused, with one line of reason that contains want. */
static int refused_for(int e, const char *want)
{
	if (e < 0 && vlog.err[0] && !strchr(vlog.err, '\n') && strstr(vlog.err, want))
		return 1;
	fprintf(stderr, "  got %d \"%s\", want a refusal with \"%s\"\n", e, vlog.err, want);
	return 0;
}

static int log_has(const char *s)
{
	for (int i = 0; i < vlog.n; i++)
		if (strstr(vlog.line[i], s))
			return 1;
	return 0;
}

/* ---- rebuilding a bundle with records changed ---- */
struct edit {
	uint16_t type;       /* the record to change */
	const void *val;     /* its new value; NULL drops it */
	size_t len;
};

static size_t rebuild(const uint8_t *in, size_t n, const struct edit *e, int ne, uint8_t *out)
{
	struct evidence_rec r[64];
	char why[200];
	int nr = evidence_parse(in, n, r, 64, why, sizeof why);
	size_t len = EVIDENCE_MAGIC_LEN;
	memcpy(out, EVIDENCE_MAGIC, EVIDENCE_MAGIC_LEN);
	for (int i = 0; i < nr; i++) {
		const void *v = r[i].val;
		size_t l = r[i].len;
		int k = 0;
		while (k < ne && e[k].type != r[i].type)
			k++;
		if (k < ne && !e[k].val)
			continue;
		if (k < ne)
			v = e[k].val, l = e[k].len;
		CHECK_EQ_INT(attest_rec_put(out, CAP, &len, r[i].type, v, l), 0);
	}
	return len;
}

static const struct evidence_rec *rec_of(const uint8_t *b, size_t n, uint16_t t)
{
	static struct evidence_rec r[64];
	char why[200];
	int nr = evidence_parse(b, n, r, 64, why, sizeof why);
	return nr < 0 ? NULL : evidence_find(r, nr, t, NULL);
}

/* A certificate table as the GHCB spec lays it out (written here, not by the simulator). */
struct cert_entry {
	const char *guid; /* bundle.h's text form */
	const uint8_t *der;
	size_t len;
};
static size_t cert_table(uint8_t *out, const struct cert_entry *e, int n)
{
	size_t off = (size_t)(n + 1) * 24;
	memset(out, 0, off);
	for (int i = 0; i < n; i++) {
		const char *g = e[i].guid;
		for (int k = 0, j = 0; g[j]; j++) {
			if (g[j] == '-')
				continue;
			unsigned v;
			sscanf(g + j, "%2x", &v);
			out[24 * i + k++] = (uint8_t)v;
			j++;
		}
		for (int b = 0; b < 4; b++) {
			out[24 * i + 16 + b] = (uint8_t)(off >> (8 * b));
			out[24 * i + 20 + b] = (uint8_t)(e[i].len >> (8 * b));
		}
		memcpy(out + off, e[i].der, e[i].len);
		off += e[i].len;
	}
	return off;
}

/* ---- SEV-SNP, from the simulator ---- */

TEST(snp_bundle_from_the_simulator_verifies_with_allow_simulated_and_its_test_root)
{
	static struct guest g;
	struct snp_evidence_expect x;
	guest_init(&g, 1);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	for (int with_ask = 0; with_ask < 2; with_ask++) {
		expect_sim(&g, &x, with_ask);
		int e = snp_verify(g.bundle, g.len, &x);
		if (e)
			fprintf(stderr, "  %s\n", vlog.err);
		CHECK_EQ_INT(e, 0);
		CHECK(ev.b.simulated && ev.ch.test_root);
		CHECK(strstr(ev.b.simulated_by, "snp-sim") != NULL);
		CHECK(memcmp(ev.b.pubkey, g.in.pubkey, 32) == 0);
		CHECK(memcmp(ev.b.report_data, g.rd, 64) == 0);
		CHECK(log_has("SIMULATED evidence (snp-sim"));
		CHECK(log_has("is a TEST root, not AMD's"));
		CHECK(log_has(with_ask ? "ASK from --chain" : "ASK from the SNP_CERTS table"));
		CHECK(log_has("report data: the report's REPORT_DATA is the bundle's"));
		CHECK(log_has("model: a0a1"));
	}
}

TEST(snp_bundle_from_the_simulator_is_refused_without_allow_simulated)
{
	static struct guest g;
	struct snp_evidence_expect x;
	guest_init(&g, 2);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	expect_sim(&g, &x, 0);
	x.b.allow_simulated = false;
	CHECK(refused_for(snp_verify(g.bundle, g.len, &x), "simulated evidence (snp-sim"));
	CHECK(strstr(vlog.err, "not hardware") != NULL);
}

TEST(snp_sim_test_root_is_refused_by_the_pin_unless_the_evidence_says_simulated)
{
	static struct guest g;
	static uint8_t b2[CAP];
	struct snp_evidence_expect x;
	guest_init(&g, 3);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	/* the same evidence without its SIMULATED record: hardware, so the root must be AMD's */
	struct edit drop = {ATTEST_REC_SIMULATED, NULL, 0};
	size_t n = rebuild(g.bundle, g.len, &drop, 1, b2);
	expect_sim(&g, &x, 1);
	CHECK(refused_for(snp_verify(b2, n, &x), "is not one of AMD's ARK keys"));
	CHECK(!log_has("TEST root"));
	/* and the chain alone, as `verifier snp --report` checks it */
	const struct snp_sim_chain *c = snp_sim_provider_chain();
	static struct snp_chain ch;
	vfy_log_init(&vlog);
	CHECK(refused_for(snp_chain_verify(&ch, c->vcek, c->vcek_len, user_chain, 2, &vlog),
			  "is not one of AMD's ARK keys"));
}

TEST(snp_bundle_with_a_wrong_nonce_or_tampered_inputs_is_refused)
{
	static struct guest g;
	static uint8_t b2[CAP];
	struct snp_evidence_expect x;
	guest_init(&g, 4);
	CHECK_EQ_INT(sim_bundle(&g), 0);

	expect_sim(&g, &x, 0);
	x.b.nonce[8] ^= 1;
	CHECK(refused_for(snp_verify(g.bundle, g.len, &x), "nonce: the evidence was made for nonce "
			  "102030405060708090, not --nonce 102030405060708091"));

	/* one byte of each input record changed: REPORT_DATA no longer matches them */
	static const uint16_t types[] = {ATTEST_REC_REPORT_DATA, ATTEST_REC_NONCE,
					 ATTEST_REC_MODEL_DIGEST, ATTEST_REC_PUBKEY,
					 ATTEST_REC_BUILD_ID, ATTEST_REC_CONFIG_DIGEST};
	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
		const struct evidence_rec *r = rec_of(g.bundle, g.len, types[t]);
		uint8_t v[64];
		memcpy(v, r->val, r->len);
		v[r->len - 1] ^= types[t] == ATTEST_REC_BUILD_ID ? 0x01 : 0x80;
		struct edit ed = {types[t], v, r->len};
		size_t n = rebuild(g.bundle, g.len, &ed, 1, b2);
		expect_sim(&g, &x, 0);
		if (types[t] == ATTEST_REC_NONCE) /* the verifier's nonce follows, so only the binding fails */
			x.b.nonce[8] ^= 0x80;
		CHECK(refused_for(snp_verify(b2, n, &x), "report data: the REPORT_DATA record is not "
				  "SHA-512 of the bundle's nonce, model digest, public key, build id and "
				  "config digest"));
	}
}

TEST(snp_bundle_whose_report_was_made_for_other_inputs_is_refused)
{
	static struct guest g, h;
	static uint8_t b2[CAP];
	struct snp_evidence_expect x;
	guest_init(&g, 5);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	/* a consistent bundle for another key (the attacker's), another model,
	 * another build, another configuration, carrying the guest's report and
	 * certificates */
	for (int what = 0; what < 4; what++) {
		guest_init(&h, 5);
		if (what == 0) {
			h.priv[0] ^= 0x40;
			keywrap_public(h.priv, h.in.pubkey);
		} else if (what == 1) {
			h.in.model_digest[5] ^= 1;
		} else if (what == 2) {
			h.in.build_id[0] = 'f';
		} else {
			evidence_config_digest("seed 42\n", 8, h.in.config_digest);
		}
		size_t n = 0;
		CHECK_EQ_INT(evidence_begin(b2, CAP, &n, "snp", &h.in, h.rd), 0);
		static const uint16_t hw[] = {ATTEST_REC_SNP_REPORT, ATTEST_REC_SNP_CERTS,
					      ATTEST_REC_SIMULATED};
		for (int k = 0; k < 3; k++) {
			const struct evidence_rec *r = rec_of(g.bundle, g.len, hw[k]);
			CHECK_EQ_INT(attest_rec_put(b2, CAP, &n, hw[k], r->val, r->len), 0);
		}
		expect_sim(&h, &x, 0);
		CHECK(refused_for(snp_verify(b2, n, &x), "report data: the report's REPORT_DATA"));
		CHECK(strstr(vlog.err, "the report was made for other evidence") != NULL);
		CHECK(log_has("signature: ECDSA P-384")); /* everything before the binding passed */
	}
}

/*
 * Issue 27 item 2: the host adds `seed 42` to llmk.cfg. The guest measures
 * it and binds it into the report data, so the evidence is genuine, and
 * the verifier refuses it unless its user names that configuration.
 */
TEST(snp_bundle_of_a_guest_told_a_config_is_refused_unless_expected)
{
	static struct guest g;
	struct snp_evidence_expect x;
	guest_init(&g, 9);
	evidence_config_digest("seed 42\n", 8, g.in.config_digest);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	expect_sim(&g, &x, 0);
	CHECK(refused_for(snp_verify(g.bundle, g.len, &x), "config: the guest was told "
			  "configuration fe5c79ec0b734b209980fbb3846bd7b76e1e1882597cd8c708bc43440f7e331d, "
			  "expected e3b0c442"));
	CHECK(log_has("signature: ECDSA P-384")); /* the evidence itself is sound */
	expect_sim(&g, &x, 0);
	x.b.have_config = true;
	evidence_config_digest("seed 42\n", 8, x.b.config);
	strcpy(x.b.told, "8 bytes of llmk.cfg: seed 42");
	CHECK_EQ_INT(snp_verify(g.bundle, g.len, &x), 0);
	CHECK(log_has("config: sha256 fe5c79ec0b734b209980fbb3846bd7b76e1e1882597cd8c708bc43440f7e331d "
		      "(8 bytes of llmk.cfg: seed 42)"));
	/* the guest told nothing: the default expectation holds */
	guest_init(&g, 9);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	expect_sim(&g, &x, 0);
	CHECK_EQ_INT(snp_verify(g.bundle, g.len, &x), 0);
	CHECK(log_has("(the empty configuration: the guest was told nothing)"));
}

TEST(snp_bundle_with_a_flipped_report_bit_is_refused)
{
	static struct guest g;
	static uint8_t b2[CAP];
	struct snp_evidence_expect x;
	static const uint16_t offs[] = {0x000, 0x004, 0x008, 0x030, 0x050, 0x08f, 0x090, 0x0c0,
					0x180, 0x188, 0x1a0, 0x1df, 0x1e8, 0x1f0, 0x1f8, 0x2a0,
					0x2cf, 0x2e8, 0x317, 0x330, 0x49f};
	guest_init(&g, 6);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	const struct evidence_rec *r = rec_of(g.bundle, g.len, ATTEST_REC_SNP_REPORT);
	for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
		uint8_t rep[SNP_REPORT_SIZE];
		memcpy(rep, r->val, sizeof rep);
		rep[offs[i]] ^= (uint8_t)(1u << (offs[i] % 8));
		struct edit ed = {ATTEST_REC_SNP_REPORT, rep, sizeof rep};
		size_t n = rebuild(g.bundle, g.len, &ed, 1, b2);
		expect_sim(&g, &x, 0);
		int e = snp_verify(b2, n, &x);
		CHECK(e < 0 && vlog.err[0] && !strchr(vlog.err, '\n'));
		if (e >= 0)
			fprintf(stderr, "  a flip at 0x%03x was accepted\n", offs[i]);
	}
}

TEST(snp_bundle_with_a_wrong_measurement_or_model_is_refused)
{
	static struct guest g;
	struct snp_evidence_expect x;
	uint8_t m[48];
	guest_init(&g, 7);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	expect_sim(&g, &x, 0);
	memcpy(m, x.report.measurement, 48);
	m[47] ^= 1;
	x.report.measurement = m;
	CHECK(refused_for(snp_verify(g.bundle, g.len, &x), "measurement: the report has "));
	expect_sim(&g, &x, 0);
	x.b.model[0] ^= 1;
	CHECK(refused_for(snp_verify(g.bundle, g.len, &x), "model: the guest has model a0a1"));
	expect_sim(&g, &x, 0);
	x.report.check_policy = 1;
	x.report.policy = 0x30000 | (1ull << 20);
	CHECK(refused_for(snp_verify(g.bundle, g.len, &x), "policy: POLICY is 0x0000000000030000"));
}

TEST(snp_bundle_with_a_missing_or_wrong_vcek_in_its_cert_table_is_refused)
{
	static struct guest g;
	static uint8_t b2[CAP], tab[8192];
	static struct snp_sim other;
	static struct snp_sim_chain oc;
	struct snp_evidence_expect x;
	guest_init(&g, 8);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	const struct snp_sim_chain *c = snp_sim_provider_chain();

	/* no SNP_CERTS record at all, or a table without the VCEK */
	struct edit drop = {ATTEST_REC_SNP_CERTS, NULL, 0};
	size_t n = rebuild(g.bundle, g.len, &drop, 1, b2);
	expect_sim(&g, &x, 1);
	CHECK(refused_for(snp_verify(b2, n, &x), "no VCEK: --vcek was not given and the SNP_CERTS "
			  "table has no VCEK entry (GUID 63da758d-e664-4564-adc5-f4b93be8accd)"));
	struct cert_entry no_vcek[] = {{SNP_GUID_ARK, c->ark, c->ark_len},
				       {SNP_GUID_ASK, c->ask, c->ask_len}};
	struct edit ed = {ATTEST_REC_SNP_CERTS, tab, cert_table(tab, no_vcek, 2)};
	n = rebuild(g.bundle, g.len, &ed, 1, b2);
	CHECK(refused_for(snp_verify(b2, n, &x), "no VCEK"));
	/* ...and no ASK either, with only the ARK given */
	expect_sim(&g, &x, 0);
	struct cert_entry only_vcek[] = {{SNP_GUID_VCEK, c->vcek, c->vcek_len}};
	ed.len = cert_table(tab, only_vcek, 1);
	n = rebuild(g.bundle, g.len, &ed, 1, b2);
	CHECK(refused_for(snp_verify(b2, n, &x), "no ASK: --chain has none and the SNP_CERTS table "
			  "has no ASK entry"));

	/* another chip's VCEK, signed by the same test ASK: the hwID gives it away */
	struct snp_sim_config cfg = snp_sim_provider_sim()->cfg;
	cfg.chip_seed[0] ^= 1;
	CHECK_EQ_INT(snp_sim_init(&other, &cfg), 0);
	CHECK_EQ_INT(snp_sim_chain_make(&oc, &other, 2048), 0);
	struct cert_entry wrong[] = {{SNP_GUID_ARK, c->ark, c->ark_len},
				     {SNP_GUID_ASK, c->ask, c->ask_len},
				     {SNP_GUID_VCEK, oc.vcek, oc.vcek_len}};
	ed.len = cert_table(tab, wrong, 3);
	n = rebuild(g.bundle, g.len, &ed, 1, b2);
	expect_sim(&g, &x, 0);
	CHECK(refused_for(snp_verify(b2, n, &x), "report: CHIP_ID "));
	CHECK(strstr(vlog.err, "is not the VCEK's hwID") != NULL);
	/* the ASK filed under the VCEK's GUID */
	struct cert_entry swapped[] = {{SNP_GUID_ASK, c->ask, c->ask_len},
				       {SNP_GUID_VCEK, c->ask, c->ask_len}};
	ed.len = cert_table(tab, swapped, 2);
	n = rebuild(g.bundle, g.len, &ed, 1, b2);
	CHECK(refused_for(snp_verify(b2, n, &x), "VCEK certificate"));
	/* a VCEK given by the user wins over the table's */
	struct cert_entry good_ask[] = {{SNP_GUID_ASK, c->ask, c->ask_len},
					{SNP_GUID_VCEK, oc.vcek, oc.vcek_len}};
	ed.len = cert_table(tab, good_ask, 2);
	n = rebuild(g.bundle, g.len, &ed, 1, b2);
	x.vcek = c->vcek;
	x.vcek_len = c->vcek_len;
	CHECK_EQ_INT(snp_verify(b2, n, &x), 0);
	CHECK(log_has("VCEK from --vcek, ASK from the SNP_CERTS table, ARK from --chain"));
}

TEST(snp_cert_table_entries_outside_twice_or_unterminated_are_refused)
{
	static uint8_t tab[4096];
	struct snp_cert_table t;
	static const uint8_t cert[100] = {0x30};
	struct cert_entry two[] = {{SNP_GUID_VCEK, cert, 100}, {SNP_GUID_VCEK, cert, 100}};
	size_t n = cert_table(tab, two, 2);
	vfy_log_init(&vlog);
	CHECK(refused_for(snp_cert_table_parse(tab, n, &t, &vlog), "SNP_CERTS: the VCEK GUID appears "
			  "twice"));
	/* an entry past the end, one inside the entry list */
	n = cert_table(tab, two, 1);
	tab[20] = 101; /* the length: one byte past the end */
	vfy_log_init(&vlog);
	CHECK(refused_for(snp_cert_table_parse(tab, n, &t, &vlog), "outside the"));
	n = cert_table(tab, two, 1);
	tab[16] = 8; /* the offset: inside the entry list */
	vfy_log_init(&vlog);
	CHECK(refused_for(snp_cert_table_parse(tab, n, &t, &vlog), "outside the"));
	/* no zero entry within the table */
	n = cert_table(tab, two, 1);
	vfy_log_init(&vlog);
	CHECK(refused_for(snp_cert_table_parse(tab, 24, &t, &vlog), "no zero entry"));
	/* unknown GUIDs are skipped, the known ones found */
	struct cert_entry mixed[] = {{"a8074bc2-a25a-483e-aae6-39c045a0b8a1", cert, 50},
				     {SNP_GUID_VCEK, cert + 1, 99}};
	n = cert_table(tab, mixed, 2);
	vfy_log_init(&vlog);
	CHECK_EQ_INT(snp_cert_table_parse(tab, n, &t, &vlog), 0);
	CHECK(t.entries == 2 && t.vcek.len == 99 && t.ask.der == NULL && t.ark.der == NULL);
}

TEST(bundle_provider_none_unknown_or_another_verifiers_is_refused)
{
	static struct guest g;
	static uint8_t b2[CAP];
	struct snp_evidence_expect x;
	static struct tdx_evidence tev;
	struct tdx_evidence_expect tx;
	guest_init(&g, 9);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	expect_sim(&g, &x, 0);
	struct edit ed = {ATTEST_REC_PROVIDER, "none", 4};
	size_t n = rebuild(g.bundle, g.len, &ed, 1, b2);
	CHECK(refused_for(snp_verify(b2, n, &x), "provider none: the guest had no attestation "
			  "device"));
	ed.val = "sgx";
	ed.len = 3;
	n = rebuild(g.bundle, g.len, &ed, 1, b2);
	CHECK(refused_for(snp_verify(b2, n, &x), "provider 'sgx': not one this verifier knows"));
	CHECK_EQ_INT(bundle_provider_kind(g.bundle, g.len), PLAT_ATTEST_SNP);
	memset(&tx, 0, sizeof tx);
	tx.b = x.b;
	vfy_log_init(&vlog);
	CHECK(refused_for(tdx_evidence_verify(g.bundle, g.len, &tx, &tev, &vlog),
			  "provider 'snp': this verifier checks tdx evidence"));
	/* a record twice */
	n = g.len;
	memcpy(b2, g.bundle, n);
	CHECK_EQ_INT(attest_rec_put(b2, CAP, &n, ATTEST_REC_PUBKEY, g.in.pubkey, 32), 0);
	CHECK(refused_for(snp_verify(b2, n, &x), "record PUBKEY (type 0x0005) appears more than once"));
	/* a build id with a NUL would spell the same report data twice */
	struct edit bid = {ATTEST_REC_BUILD_ID, "01234567\0abcdef", 16};
	n = rebuild(g.bundle, g.len, &bid, 1, b2);
	CHECK(refused_for(snp_verify(b2, n, &x), "BUILD_ID byte 8 is 0x00"));
}

TEST(snp_bundle_every_truncation_is_refused_without_crashing)
{
	static struct guest g;
	struct snp_evidence_expect x;
	guest_init(&g, 10);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	expect_sim(&g, &x, 0);
	for (size_t n = 0; n < g.len; n += 1 + n / 32)
		CHECK(snp_verify(g.bundle, n, &x) < 0 && vlog.err[0]);
}

/* ---- the real evidence of $LLMK_TESTDATA/attest, in bundles ---- */

#define NEED_TESTDATA()                                                         \
	do {                                                                    \
		if (!testdata_dir())                                            \
			SKIP("no LLMK_TESTDATA (attest)");                      \
	} while (0)

static void *read_attest(const char *rel, size_t *n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/attest/%s", testdata_dir(), rel);
	void *p = test_read_file(path, n);
	if (!p)
		fprintf(stderr, "  cannot read %s\n", path);
	return p;
}

/* The DER certificates of a PEM file, into der. */
static int pem_file(const char *rel, uint8_t *der, size_t cap, struct pem_cert *c, int max)
{
	size_t n;
	int got = 0;
	uint8_t *t = read_attest(rel, &n);
	struct vfy_log l;
	vfy_log_init(&l);
	if (!t || pem_certs(t, n, rel, der, cap, c, max, &got, &l))
		got = -1;
	free(t);
	return got;
}

TEST(snp_real_report_in_a_bundle_passes_every_check_but_the_report_data_binding)
{
	static struct guest g;
	static uint8_t tab[8192], ark_der[4096], ask_der[4096];
	struct pem_cert ark, ask;
	struct snp_evidence_expect x;
	size_t rn, vn;
	NEED_TESTDATA();
	uint8_t *rep = read_attest("snp/genoa-v5/report.bin", &rn);
	uint8_t *vcek = read_attest("snp/genoa-v5/vcek.der", &vn);
	if (!rep || !vcek || pem_file("snp/roots/ark_genoa.pem", ark_der, sizeof ark_der, &ark, 1) != 1 ||
	    pem_file("snp/roots/ask_genoa.pem", ask_der, sizeof ask_der, &ask, 1) != 1) {
		CHECK(0);
		free(rep);
		free(vcek);
		return;
	}
	guest_init(&g, 11);
	CHECK_EQ_INT(evidence_begin(g.bundle, CAP, &g.len, "snp", &g.in, g.rd), 0);
	struct cert_entry e[] = {{SNP_GUID_VCEK, vcek, vn}, {SNP_GUID_ASK, ask.der, ask.len}};
	CHECK_EQ_INT(attest_rec_put(g.bundle, CAP, &g.len, ATTEST_REC_SNP_REPORT, rep, rn), 0);
	CHECK_EQ_INT(attest_rec_put(g.bundle, CAP, &g.len, ATTEST_REC_SNP_CERTS, tab,
				    cert_table(tab, e, 2)), 0);
	memset(&x, 0, sizeof x);
	memcpy(x.b.nonce, g.in.nonce, g.in.nonce_len);
	x.b.nonce_len = g.in.nonce_len;
	x.chain = &ark;
	x.n_chain = 1;
	CHECK(refused_for(snp_verify(g.bundle, g.len, &x), "report data: the report's REPORT_DATA"));
	CHECK(log_has("carries AMD's pinned ARK-Genoa key"));
	CHECK(log_has("signature: ECDSA P-384"));
	CHECK(!log_has("TEST root") && !ev.ch.test_root);
	/* --allow-simulated changes nothing for evidence that does not say it is simulated */
	x.b.allow_simulated = true;
	CHECK(refused_for(snp_verify(g.bundle, g.len, &x), "report data: the report's REPORT_DATA"));
	CHECK(!ev.b.simulated);
	free(rep);
	free(vcek);
}

struct tdx_files {
	uint8_t *quote;
	size_t qn;
	uint8_t der[8192];
	struct pem_cert certs[4];
	int n;
};

static int tdx_load(struct tdx_files *f)
{
	f->quote = read_attest("tdx/quote_v4.bin", &f->qn);
	f->n = pem_file("tdx/pck_chain.pem", f->der, sizeof f->der, f->certs, 4);
	return f->quote && f->n > 0 ? 0 : -1;
}

static void tdx_bundle(struct guest *g, const struct tdx_files *f, bool simulated)
{
	g->len = 0;
	CHECK_EQ_INT(evidence_begin(g->bundle, CAP, &g->len, "tdx", &g->in, g->rd), 0);
	CHECK_EQ_INT(attest_rec_put(g->bundle, CAP, &g->len, ATTEST_REC_TDX_QUOTE, f->quote, f->qn), 0);
	if (simulated)
		CHECK_EQ_INT(attest_rec_put(g->bundle, CAP, &g->len, ATTEST_REC_SIMULATED,
					    "tdx-test: not a simulator", 25), 0);
}

static void tdx_expect_for(const struct guest *g, const struct tdx_files *f,
			   struct tdx_evidence_expect *x)
{
	memset(x, 0, sizeof *x);
	memcpy(x->b.nonce, g->in.nonce, g->in.nonce_len);
	x->b.nonce_len = g->in.nonce_len;
	x->chain = f->certs;
	x->n_chain = f->n;
	x->chain_what = "pck_chain.pem";
}

static struct tdx_evidence tev;
static int tdx_verify(const struct guest *g, const struct tdx_evidence_expect *x)
{
	vfy_log_init(&vlog);
	return tdx_evidence_verify(g->bundle, g->len, x, &tev, &vlog);
}

TEST(tdx_real_quote_in_a_bundle_is_refused_only_at_the_report_data_binding)
{
	static struct tdx_files f;
	static struct guest g;
	struct tdx_evidence_expect x;
	NEED_TESTDATA();
	if (tdx_load(&f)) {
		CHECK(0);
		return;
	}
	guest_init(&g, 12);
	tdx_bundle(&g, &f, false);
	tdx_expect_for(&g, &f, &x);
	CHECK(refused_for(tdx_verify(&g, &x), "report data: the quote's REPORTDATA"));
	CHECK(strstr(vlog.err, "the quote was made for other evidence") != NULL);
	CHECK(log_has("carries Intel's pinned root key"));
	CHECK(log_has("QE report: signed by the PCK key"));
	CHECK(log_has("signature: ECDSA P-256 over header and TD quote body"));
	CHECK(log_has("nonce: 102030405060708090, as given"));
	/* a wrong nonce stops it before the quote */
	x.b.nonce[0] ^= 1;
	CHECK(refused_for(tdx_verify(&g, &x), "nonce: the evidence was made for nonce"));
	free(f.quote);
}

TEST(tdx_bundle_simulated_is_refused_and_a_test_root_is_only_for_simulated_evidence)
{
	static struct tdx_files f;
	static struct guest g;
	struct tdx_evidence_expect x;
	NEED_TESTDATA();
	if (tdx_load(&f)) {
		CHECK(0);
		return;
	}
	guest_init(&g, 13);
	tdx_bundle(&g, &f, true);
	tdx_expect_for(&g, &f, &x);
	CHECK(refused_for(tdx_verify(&g, &x), "simulated evidence (tdx-test: not a simulator): not "
			  "hardware"));
	/* allowed, Intel's own root still verifies the chain up to the binding */
	x.b.allow_simulated = true;
	CHECK(refused_for(tdx_verify(&g, &x), "report data: the quote's REPORTDATA"));
	CHECK(log_has("carries Intel's pinned root key"));
	/* another root: for simulated evidence only the pin is waived, and the
	 * PCK chain does not chain to it */
	sim_launch();
	const struct snp_sim_chain *c = snp_sim_provider_chain();
	struct pem_cert other = {c->ark, c->ark_len};
	x.chain = &other;
	x.n_chain = 1;
	int e = tdx_verify(&g, &x);
	CHECK(e < 0 && log_has("is a TEST root, not Intel's"));
	CHECK(strstr(vlog.err, "not Intel's SGX Root CA key") == NULL);
	CHECK(!log_has("QE report"));
	/* for evidence that does not say it is simulated, the pin holds */
	tdx_bundle(&g, &f, false);
	CHECK(refused_for(tdx_verify(&g, &x), "is not Intel's SGX Root CA key"));
	free(f.quote);
}

TEST(tdx_bundle_without_a_quote_or_with_a_flipped_quote_bit_is_refused)
{
	static struct tdx_files f;
	static struct guest g;
	static uint8_t b2[CAP];
	struct tdx_evidence_expect x;
	NEED_TESTDATA();
	if (tdx_load(&f)) {
		CHECK(0);
		return;
	}
	guest_init(&g, 14);
	tdx_bundle(&g, &f, false);
	tdx_expect_for(&g, &f, &x);
	struct edit drop = {ATTEST_REC_TDX_QUOTE, NULL, 0};
	size_t n = rebuild(g.bundle, g.len, &drop, 1, b2);
	memcpy(g.bundle, b2, n);
	g.len = n;
	CHECK(refused_for(tdx_verify(&g, &x), "bundle: no TDX_QUOTE record (type 0x0301)"));
	static const size_t offs[] = {0x00, 0xb8, 0x238, 0x277, 0x27c, 0x2bc, 0x300, 0x500};
	for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
		f.quote[offs[i]] ^= 4;
		tdx_bundle(&g, &f, false);
		f.quote[offs[i]] ^= 4;
		int e = tdx_verify(&g, &x);
		CHECK(e < 0 && !strstr(vlog.err, "report data: the quote's REPORTDATA"));
		if (offs[i] == 0x238) /* REPORTDATA is signed: the signature goes first */
			CHECK(strstr(vlog.err, "signature") != NULL);
	}
	free(f.quote);
}

/* ---- `verifier wrap`, as the command runs ---- */

/* Run a subcommand with stdout and stderr captured into out / err. */
static int run_captured(int (*fn)(int, char **), char **argv, char *out, size_t on, char *err,
			size_t en)
{
	char po[600], pe[600];
	int argc = 0;
	while (argv[argc])
		argc++;
	snprintf(po, sizeof po, "%s/bundle_cmd.out", test_tmpdir());
	snprintf(pe, sizeof pe, "%s/bundle_cmd.err", test_tmpdir());
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fo, 1);
	dup2(fe, 2);
	close(fo);
	close(fe);
	int r = fn(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	size_t n;
	char *t = test_read_file(po, &n);
	snprintf(out, on, "%s", t ? t : "");
	free(t);
	t = test_read_file(pe, &n);
	snprintf(err, en, "%s", t ? t : "");
	free(t);
	return r;
}

static void put_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ_INT(fwrite(p, 1, n, f), n);
		fclose(f);
	}
}

struct wrap_files {
	char bundle[600], ark[600], key[600], nonce[2 * EVIDENCE_NONCE_MAX + 1], meas[97];
	char model[65];
	uint8_t model_key[32];
};

static void wrap_files(const struct guest *g, struct wrap_files *w)
{
	static char pem[4096];
	const struct snp_sim_chain *c = snp_sim_provider_chain();
	snprintf(w->bundle, sizeof w->bundle, "%s/bundle_snp.bin", test_tmpdir());
	snprintf(w->ark, sizeof w->ark, "%s/bundle_ark.pem", test_tmpdir());
	snprintf(w->key, sizeof w->key, "%s/bundle_model.key", test_tmpdir());
	put_file(w->bundle, g->bundle, g->len);
	long k = snp_sim_pem(c->ark, c->ark_len, pem, sizeof pem);
	CHECK(k > 0);
	put_file(w->ark, pem, (size_t)k);
	char hex[66];
	for (int i = 0; i < 32; i++)
		w->model_key[i] = (uint8_t)(0x5a ^ (i * 13));
	verify_hex(w->model_key, 32, hex);
	strcat(hex, "\n");
	put_file(w->key, hex, 65);
	verify_hex(g->in.nonce, g->in.nonce_len, w->nonce);
	verify_hex(snp_sim_provider_sim()->cfg.measurement, 48, w->meas);
	verify_hex(g->in.model_digest, 32, w->model);
}

TEST(verifier_wrap_on_snp_simulator_evidence_gives_a_blob_the_guests_key_opens)
{
	static struct guest g;
	static struct wrap_files w;
	static char out[65536], err[4096];
	guest_init(&g, 15);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	wrap_files(&g, &w);
	char *argv[] = {"wrap", "--evidence", w.bundle, "--nonce", w.nonce, "--chain", w.ark,
			"--expect-measurement", w.meas, "--key-file", w.key, "--allow-simulated",
			"--expect-model", w.model, NULL};
	int r = run_captured(verify_cmd_wrap, argv, out, sizeof out, err, sizeof err);
	if (r)
		fprintf(stderr, "  %s", err);
	CHECK_EQ_INT(r, 0);
	/* every line says SIMULATED */
	for (char *l = out; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		if (strncmp(l, "SIMULATED ", 10) != 0) {
			fprintf(stderr, "  a line without SIMULATED: %.80s\n", l);
			CHECK(0);
			break;
		}
	char *b = strstr(out, "wrapped: ");
	CHECK(b != NULL);
	if (!b)
		return;
	b += 9;
	uint8_t blob[KEYWRAP_MAX + 4], rd[64], key[32];
	long n = b64_decode(b, strcspn(b, "\n"), blob, sizeof blob);
	/* snp: the report is the hardware's signature; no TPM credential */
	CHECK_EQ_INT(n, KEYWRAP_MIN);
	CHECK_EQ_INT(keywrap_unwrap(g.priv, g.in.pubkey, blob, (size_t)n, NULL, 0, rd, key), 0);
	CHECK(memcmp(key, w.model_key, 32) == 0);
	CHECK(memcmp(rd, g.rd, 64) == 0);
	/* another guest's key pair does not open it */
	static struct guest h;
	guest_init(&h, 16);
	CHECK_EQ_INT(keywrap_unwrap(h.priv, h.in.pubkey, blob, (size_t)n, NULL, 0, rd, key),
		     -LLMK_EAUTH);
}

TEST(verifier_wrap_refuses_failing_snp_evidence_and_releases_nothing)
{
	static struct guest g;
	static struct wrap_files w;
	static char out[65536], err[4096];
	char bad_nonce[2 * EVIDENCE_NONCE_MAX + 1], bad_meas[97];
	guest_init(&g, 17);
	CHECK_EQ_INT(sim_bundle(&g), 0);
	wrap_files(&g, &w);
	strcpy(bad_nonce, w.nonce);
	bad_nonce[0] = bad_nonce[0] == '1' ? '2' : '1';
	strcpy(bad_meas, w.meas);
	bad_meas[95] = bad_meas[95] == '0' ? '1' : '0';
	struct {
		const char *nonce, *meas, *extra, *want;
	} cases[] = {
		{w.nonce, w.meas, NULL, "simulated evidence (snp-sim"},
		{bad_nonce, w.meas, "--allow-simulated", "nonce: the evidence was made for nonce"},
		{w.nonce, bad_meas, "--allow-simulated", "measurement: the report has"},
		{w.nonce, NULL, "--allow-simulated", "snp evidence needs --nonce, --expect-measurement "
		 "and --chain"},
		{w.nonce, w.meas, "--allow-debug", "a key is never released to a guest the host can "
		 "debug"},
		{w.nonce, w.meas, "--expect-pcr4", "'--expect-pcr4' is not an option for snp evidence"},
		/* no --expect-model: a key for whatever model the evidence names */
		{w.nonce, w.meas, "--no-model", "--expect-model SHA256 is required"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *argv[16];
		int a = 0;
		argv[a++] = "wrap";
		argv[a++] = "--evidence";
		argv[a++] = w.bundle;
		argv[a++] = "--nonce";
		argv[a++] = (char *)cases[i].nonce;
		argv[a++] = "--chain";
		argv[a++] = w.ark;
		argv[a++] = "--key-file";
		argv[a++] = w.key;
		if (cases[i].meas) {
			argv[a++] = "--expect-measurement";
			argv[a++] = (char *)cases[i].meas;
		}
		bool no_model = cases[i].extra && !strcmp(cases[i].extra, "--no-model");
		if (!no_model) {
			argv[a++] = "--expect-model";
			argv[a++] = w.model;
		}
		if (cases[i].extra && !no_model)
			argv[a++] = (char *)cases[i].extra;
		if (cases[i].extra && !strcmp(cases[i].extra, "--expect-pcr4"))
			argv[a++] = w.meas;
		if (no_model)
			argv[a++] = "--allow-simulated";
		argv[a] = NULL;
		int r = run_captured(verify_cmd_wrap, argv, out, sizeof out, err, sizeof err);
		CHECK_EQ_INT(r, 1);
		CHECK(strstr(out, "wrapped:") == NULL);
		if (!strstr(err, cases[i].want) || strncmp(err, "error: ", 7)) {
			fprintf(stderr, "  case %zu: got \"%.300s\", want \"%s\"\n", i, err, cases[i].want);
			CHECK(0);
		}
	}
}
