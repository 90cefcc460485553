/*
 * tests/unit/test_engine_load.c — engine_load against hostile files (issue
 * 18): a valid synthetic model (tools/writer/mkmodel.h) rewritten with one
 * defect (gguf_edit.h) is refused with one error line naming the field and
 * its value, resident and streamed, and never crashes: each load (and, when
 * it succeeds, two greedy tokens) runs in a child process, so a SIGFPE or a
 * sanitizer's report fails the test instead of ending the runner.
 */
#define _GNU_SOURCE /* memmem */
#include "test.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gguf_edit.h"
#include "shell_fixture.h"
#include "../../llm/engine.h"
#include "../../llm/sha256.h"
#include "../../shell/shell.h"
#include "../../tools/host/host.h"
#include "../../tools/writer/mkmodel.h"

#define DIED (-1000) /* the child crashed or a sanitizer stopped it */

/* The default synthetic model (2 layers, dim 64, 512 tokens), tied or not,
 * rewritten with ed into path. */
static bool variant(const char *tag, bool tied, const struct gedit *ed, char *path, size_t n)
{
	char src[600], err[256];
	struct mkm_spec s;

	mkm_defaults(&s);
	s.tied = tied;
	snprintf(src, sizeof src, "%s/load-%s-src.gguf", test_tmpdir(), tag);
	snprintf(path, n, "%s/load-%s.gguf", test_tmpdir(), tag);
	if (mkm_write(&s, src, err, sizeof err)) {
		fprintf(stderr, "  mkmodel: %s\n", err);
		return false;
	}
	return gedit_rewrite(src, path, ed) == 0;
}

struct load_result {
	int r;
	char err[256];
};

/* engine_load of path as disk 0 (threads 1, the given weights mode and
 * budget) and, if it loads, two greedy tokens. */
static void load_once(const char *path, enum engine_weights mode, uint64_t budget,
		      struct load_result *res)
{
	struct engine *e = calloc(1, sizeof *e);

	host_remove_disks();
	if (!e || host_add_disk(path) != 0) {
		res->r = DIED;
		snprintf(res->err, sizeof res->err, "cannot attach %s", path);
		free(e);
		return;
	}
	engine_init(e);
	e->cfg.threads = 1;
	e->cfg.weights = mode;
	e->cfg.mem_budget = budget;
	res->r = engine_load(e, 0, false, res->err, sizeof res->err);
	if (res->r == 0) {
		struct engine_gen g;
		engine_gen_init(e, &g);
		g.samp.temp = 0;
		g.n_predict = 2;
		res->r = engine_infer(e, "Once upon a time", &g, res->err, sizeof res->err);
	}
	engine_unload(e);
	free(e);
	host_remove_disks();
}

/* load_once in a child, so a crash (SIGFPE, a sanitizer stop) fails the
 * test instead of the runner: the return code and the error line, or DIED
 * with how the child ended in err. qemu-user cannot fork a process that
 * has threads (its TCG asserts), and the aarch64 build runs under
 * qemu-aarch64 in `make test`: there the load runs in this process. */
static int load_child(const char *path, enum engine_weights mode, uint64_t budget, char *err,
		      size_t errlen)
{
	struct load_result res = {DIED, ""};
#if defined(__aarch64__)
	load_once(path, mode, budget, &res);
	snprintf(err, errlen, "%s", res.err);
	return res.r;
#else
	int fd[2], st = 0;
	ssize_t got;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if (pipe(fd))
		return DIED;
	if ((pid = fork()) == 0) {
		close(fd[0]);
		load_once(path, mode, budget, &res);
		if (write(fd[1], &res, sizeof res) != (ssize_t)sizeof res)
			_exit(4);
		_exit(0); /* no exit handlers: the parent's runner state is not ours */
	}
	close(fd[1]);
	got = read(fd[0], &res, sizeof res);
	close(fd[0]);
	waitpid(pid, &st, 0);
	if (got != (ssize_t)sizeof res || !WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(err, errlen, "child %s %d", WIFSIGNALED(st) ? "killed by signal" : "exited",
			 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return DIED;
	}
	snprintf(err, errlen, "%s", res.err);
	return res.r;
#endif
}

/* Loading path in mode is refused with code and an error holding each of
 * the strings want[] (NULL-terminated). */
static void refused(const char *path, enum engine_weights mode, uint64_t budget, int code,
		    const char *const *want)
{
	static const char *const mode_name[] = {"auto", "resident", "stream"};
	char err[256];
	int r = load_child(path, mode, budget, err, sizeof err);
	bool all = r == code;

	for (int i = 0; want[i]; i++)
		all = all && strstr(err, want[i]);
	if (!all) {
		fprintf(stderr, "  %s (%s, budget %llu): got %d \"%s\", want %d with", path,
			mode_name[mode], (unsigned long long)budget, r, err, code);
		for (int i = 0; want[i]; i++)
			fprintf(stderr, " \"%s\"", want[i]);
		fprintf(stderr, "\n");
		test_failed_checks++;
	}
}

/* Refused resident, streamed, and streamed under a budget (fewer slots). */
static void refused_every_way(const char *path, int code, const char *const *want)
{
	refused(path, ENGINE_WEIGHTS_RESIDENT, 0, code, want);
	refused(path, ENGINE_WEIGHTS_STREAM, 0, code, want);
	refused(path, ENGINE_WEIGHTS_STREAM, 5u << 20, code, want);
}

/* The unedited model loads every way and generates (the check above can
 * pass only through the refusal it looks for). */
TEST(engine_load_of_the_unedited_variant_succeeds_every_way)
{
	struct gedit ed = {0};
	char p[700], err[256];

	CHECK(variant("plain", true, &ed, p, sizeof p));
	CHECK_EQ_INT(load_child(p, ENGINE_WEIGHTS_RESIDENT, 0, err, sizeof err), 0);
	CHECK_EQ_INT(load_child(p, ENGINE_WEIGHTS_STREAM, 0, err, sizeof err), 0);
	CHECK_EQ_INT(load_child(p, ENGINE_WEIGHTS_STREAM, 5u << 20, err, sizeof err), 0);
	ed.alignment = 4;
	CHECK(variant("align4", false, &ed, p, sizeof p));
	CHECK_EQ_INT(load_child(p, ENGINE_WEIGHTS_STREAM, 0, err, sizeof err), 0);
	CHECK_EQ_INT(load_child(p, ENGINE_WEIGHTS_RESIDENT, 0, err, sizeof err), 0);
}

/* Issue 18 defect 1: token_embd.weight of [64, 0] and no output.weight
 * passed the layout check; streaming then divided by the 0 head rows
 * (SIGFPE in stream_measure) and resident loads said "allocating the
 * model's buffers: invalid argument". rope.dimension_count = 0 did the
 * latter. */
TEST(engine_load_refuses_a_vocabulary_of_zero_and_a_rope_dimension_of_zero)
{
	const struct gedit_tensor rows0[] = {{"token_embd.weight", 2, {64, 0}, 0, NULL}};
	const struct gedit_kv rope0[] = {{"llama.rope.dimension_count", GGUF_VT_UINT32, 0, 0, NULL}};
	struct gedit ed = {.t = rows0, .n_t = 1};
	char p[700];

	CHECK(variant("vocab0", true, &ed, p, sizeof p));
	refused_every_way(p, -LLMK_EFORMAT,
			  (const char *const[]){"'token_embd.weight' has 0 rows", NULL});
	ed = (struct gedit){.kv = rope0, .n_kv = 1};
	CHECK(variant("rope0", true, &ed, p, sizeof p));
	refused_every_way(p, -LLMK_EFORMAT,
			  (const char *const[]){"llama.rope.dimension_count = 0", NULL});
}

/* Issue 18 defect 6, the tensor side: llama3's rope_freqs.weight divides
 * each pair's frequency; a factor of 0, NaN, infinity or a negative one gave
 * NaN or infinite angles and then NaN logits, silently read as token 0.
 * Each frequency must come out positive, and finite at every position up to
 * the context limit. Factors from 1 to 8 (llama3's range) load. */
TEST(engine_load_refuses_rope_frequency_factors_that_are_not_positive_and_finite)
{
	const float bad[] = {0.0f, NAN, INFINITY, -1.0f, 1e-40f};
	const char *const want[] = {"= 0 gives", "= nan gives", "= inf gives", "= -1 gives",
				     "= 9.99995e-41 gives"};
	float f[8] = {1, 1, 1.5f, 2, 3, 4, 6, 8};
	const struct gedit_tensor add[] = {{"rope_freqs.weight", 1, {8}, GGML_TYPE_F32, f}};
	struct gedit ed = {.t = add, .n_t = 1};
	char p[700], err[256];

	CHECK(variant("freqs", true, &ed, p, sizeof p));
	CHECK_EQ_INT(load_child(p, ENGINE_WEIGHTS_RESIDENT, 0, err, sizeof err), 0);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		f[5] = bad[i];
		CHECK(variant("freqs", true, &ed, p, sizeof p));
		refused_every_way(p, -LLMK_EFORMAT, (const char *const[]){
			"rope_freqs.weight[5]", want[i], NULL});
	}
}

/* Issue 18 defect 7: the tokenizer's 512 tokens over 256 or 1024 embedding
 * rows loaded (and emitted ids it cannot render, or embedded ids past the
 * rows). llama.cpp requires the same count (its token_embd and output
 * shapes are {n_embd, n_vocab} with n_vocab the token count); so do we. */
TEST(engine_load_refuses_a_tokenizer_that_differs_from_the_embedding_rows)
{
	const struct gedit_tensor fewer[] = {{"token_embd.weight", 2, {64, 256}, 0, NULL}};
	const struct gedit_tensor more[] = {{"token_embd.weight", 2, {64, 1024}, 0, NULL}};
	const struct gedit_tensor both[] = {{"token_embd.weight", 2, {64, 1024}, 0, NULL},
					    {"output.weight", 2, {64, 1024}, 0, NULL}};
	const struct gedit_tensor head[] = {{"output.weight", 2, {64, 1024}, 0, NULL}};
	struct gedit ed = {.t = fewer, .n_t = 1};
	char p[700];

	CHECK(variant("rows256", true, &ed, p, sizeof p));
	refused_every_way(p, -LLMK_EFORMAT, (const char *const[]){
		"tokenizer has 512 tokens but 'token_embd.weight' has 256 rows", NULL});
	ed.t = more;
	CHECK(variant("rows1024", true, &ed, p, sizeof p));
	refused_every_way(p, -LLMK_EFORMAT, (const char *const[]){
		"tokenizer has 512 tokens but 'token_embd.weight' has 1024 rows", NULL});
	ed = (struct gedit){.t = both, .n_t = 2};
	CHECK(variant("both1024", false, &ed, p, sizeof p));
	refused_every_way(p, -LLMK_EFORMAT, (const char *const[]){
		"tokenizer has 512 tokens but 'token_embd.weight' has 1024 rows", NULL});
	/* the head alone: the layout check holds it to the embedding's rows */
	ed = (struct gedit){.t = head, .n_t = 1};
	CHECK(variant("head1024", false, &ed, p, sizeof p));
	refused_every_way(p, -LLMK_EFORMAT, (const char *const[]){
		"'output.weight' has shape [64, 1024, 1], expected [64, 512]", NULL});
}

/* Issue 18 defect 8: general.alignment 1 or 2 lets tensor data sit at
 * offsets that are not multiples of 4, and the kernels read F32 values
 * (rmsnorm's weights) in place: misaligned loads (UBSan) when the slot
 * buffer keeps the file's offsets (streaming) or the data section's
 * (resident). gguf.md asks for an alignment that is a multiple of 8; a
 * file whose tensors are all 4-aligned anyway still loads. */
/* Issue 29: a tensor of a type we do not compute was refused as "type ?
 * (16)". Q3_K and IQ3_S blocks are both 110 bytes for 256 elements, so a
 * Q3_K model with one tensor's type id changed to IQ3_S still parses and
 * is refused naming the type. */
TEST(engine_load_refuses_a_type_it_does_not_compute_by_name)
{
	static const char name[] = "blk.0.attn_q.weight";
	static const char *const want[] = {"'blk.0.attn_q.weight' type IQ3_S (21) is not supported",
					   NULL};
	char p[600], err[256];
	struct mkm_spec s;
	uint8_t *f, *at = NULL;
	size_t len;
	uint32_t n_dims, type;
	FILE *fp;

	mkm_defaults(&s);
	s.dim = 256;
	s.ffn = 512;
	s.type = GGML_TYPE_Q3_K;
	s.mix = MKM_MIX_PURE;
	snprintf(p, sizeof p, "%s/load-iq3s.gguf", test_tmpdir());
	CHECK_EQ_INT(mkm_write(&s, p, err, sizeof err), 0);
	f = test_read_file(p, &len);
	CHECK(f != NULL);
	if (!f)
		return;
	/* tensor info (gguf.md): name, u32 n_dims, u64 ne[n_dims], u32 type */
	for (size_t i = 0; i + sizeof name + 4 <= len && !at; i++)
		if (!memcmp(f + i, name, sizeof name - 1))
			at = f + i + sizeof name - 1;
	CHECK(at != NULL);
	if (at) {
		memcpy(&n_dims, at, 4);
		at += 4 + 8 * (size_t)n_dims;
		memcpy(&type, at, 4);
		CHECK_EQ_INT(type, GGML_TYPE_Q3_K);
		type = GGML_TYPE_IQ3_S;
		memcpy(at, &type, 4);
		CHECK((fp = fopen(p, "wb")) != NULL && fwrite(f, 1, len, fp) == len);
		if (fp)
			fclose(fp);
		refused(p, ENGINE_WEIGHTS_RESIDENT, 0, -LLMK_ENOTSUP, want);
	}
	free(f);
	remove(p);
}

/* Greedy ids of the model at path loaded in mode (in this process: the
 * aarch64 build runs it too); the count, or -LLMK_E* with err set. */
static int iq4_ids(const char *path, enum engine_weights mode, int32_t *ids, int cap, char *err,
		   size_t errlen)
{
	struct engine *e = calloc(1, sizeof *e);
	struct engine_gen g;
	int r;

	host_remove_disks();
	if (!e || host_add_disk(path) != 0) {
		free(e);
		return -LLMK_EIO;
	}
	engine_init(e);
	e->cfg.threads = 1;
	e->cfg.weights = mode;
	r = engine_load(e, 0, false, err, errlen);
	if (r == 0) {
		engine_gen_init(e, &g);
		g.samp.temp = 0;
		g.n_predict = (uint32_t)cap;
		g.out_ids = ids;
		g.out_cap = (uint32_t)cap;
		r = engine_infer(e, "Once upon a time", &g, err, errlen);
		r = r ? r : (int)g.n_out;
		CHECK(e->streaming == (mode == ENGINE_WEIGHTS_STREAM));
	}
	engine_unload(e);
	free(e);
	host_remove_disks();
	return r;
}

/* Issue 29: IQ4_NL and IQ4_XS models load and give the same greedy ids
 * resident and streamed, with this CPU's rows (every class runs this). */
TEST(engine_iq4_models_give_the_same_ids_resident_and_streamed)
{
	static const char *const types[] = {"IQ4_NL", "IQ4_XS"};
	char p[600], err[256];

	for (size_t i = 0; i < 2; i++) {
		int32_t a[16], b[16];
		struct mkm_spec s;
		enum mkm_mix mix;
		int na, nb;
		mkm_defaults(&s);
		s.dim = 256;
		s.ffn = 512;
		CHECK_EQ_INT(mkm_parse_type(types[i], &s.type, &mix), 0);
		snprintf(p, sizeof p, "%s/load-%s.gguf", test_tmpdir(), types[i]);
		CHECK_EQ_INT(mkm_write(&s, p, err, sizeof err), 0);
		na = iq4_ids(p, ENGINE_WEIGHTS_RESIDENT, a, 16, err, sizeof err);
		if (na != 16)
			fprintf(stderr, "  %s resident: %d %s\n", types[i], na, err);
		nb = iq4_ids(p, ENGINE_WEIGHTS_STREAM, b, 16, err, sizeof err);
		if (nb != 16)
			fprintf(stderr, "  %s streamed: %d %s\n", types[i], nb, err);
		CHECK(na == 16 && nb == 16 && memcmp(a, b, sizeof a) == 0);
		remove(p);
	}
}

TEST(engine_load_refuses_tensor_data_that_is_not_4_byte_aligned)
{
	char p[700], tag[32], err[256];
	int misaligned = 0;

	for (uint32_t a = 1; a <= 2; a++)
		for (uint32_t lead = 0; lead < 4; lead += a) {
			struct gedit ed = {.alignment = a, .lead = lead};
			struct llm_membuf mb;
			struct llm_reader rd;
			struct llm_mem mem;
			struct gguf_file g;
			size_t len;
			void *f;
			bool abs_ok, rel_ok;

			snprintf(tag, sizeof tag, "align%u-%u", a, lead);
			CHECK(variant(tag, false, &ed, p, sizeof p));
			f = test_read_file(p, &len);
			llm_mem_init(&mem, 0);
			llm_reader_mem(&rd, &mb, f, len);
			CHECK_EQ_INT(gguf_open(&g, &rd, &mem, err, sizeof err), 0);
			abs_ok = g.tensors[0].offset % 4 == 0;
			rel_ok = (g.tensors[0].offset - g.data_offset) % 4 == 0;
			gguf_close(&g);
			free(f);
			if (abs_ok && rel_ok) {
				CHECK_EQ_INT(load_child(p, ENGINE_WEIGHTS_STREAM, 0, err, sizeof err), 0);
				continue;
			}
			misaligned++;
			refused_every_way(p, -LLMK_EFORMAT, (const char *const[]){
				"is not 4-byte aligned", "general.alignment", NULL});
		}
	CHECK(misaligned >= 4);
}

/* ---- the context the file asks for ---- */
/* A shell over the default model (tied) whose llama.context_length is
 * ctx as disk 0, then `config threads 1`, the config line if any, and
 * `load 0`: their results ORed, 0 when every one succeeded. */
static int open_ctx(struct shell_fixture *f, const char *tag, uint32_t ctx, const char *config)
{
	const struct gedit_kv kv[] = {{"llama.context_length", GGUF_VT_UINT32, ctx, 0, NULL}};
	const struct gedit ed = {.kv = kv, .n_kv = 1};
	char p[700];
	int st;

	CHECK(variant(tag, true, &ed, p, sizeof p));
	CHECK_EQ_INT(fixture_open(f, (const char *[]){p, NULL}, NULL), 0);
	st = shell_exec_line(f->sh, "config threads 1");
	if (config)
		st |= shell_exec_line(f->sh, config);
	st |= shell_exec_line(f->sh, "load 0");
	return st;
}

/* Issue 18 defect 4: context_length 0xffffffff gave a context of what all
 * free memory holds (tens of GB when no budget is set) and `info` did not
 * say the file's value was not used. The context is capped at the `config
 * ctx` limit and at what the memory plan holds, and info says so. */
TEST(engine_caps_the_files_context_length_and_info_says_so)
{
	struct shell_fixture f;
	struct shell *sh;
	const char *out;
	int st;

	CHECK_EQ_INT(open_ctx(&f, "ctxhuge", 0xffffffffu, "config mem-budget 64M"), 0);
	sh = f.sh;
	out = fixture_run(&f, "info", &st);
	CHECK_EQ_INT(st, 0);
	if (!strstr(out, "(the file says 4294967295; capped")) {
		fprintf(stderr, "  info says:\n%s", out);
		test_failed_checks++;
	}
	CHECK(sh->engine && sh->engine->n_ctx >= 16 && sh->engine->n_ctx <= (1u << 24));
	CHECK(sh->engine && sh->engine->mem.peak <= 64u << 20);
	fixture_close(&f);
}

TEST(engine_takes_at_most_4096_positions_from_the_file_unless_asked)
{
	struct shell_fixture f;
	struct shell *sh;
	const char *out;
	int st;

	/* no mem-budget: free memory alone would hold 2^24 positions of this
	 * tiny model, gigabytes of cache for a claim in the file */
	CHECK_EQ_INT(open_ctx(&f, "ctxbig", 1u << 24, NULL), 0);
	sh = f.sh;
	out = fixture_run(&f, "info", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(out && strstr(out, "context        4096 (the file says 16777216; capped at "
				 "the default 4096") != NULL);
	CHECK(sh->engine && sh->engine->n_ctx == ENGINE_DEFAULT_CTX);
	/* asked for, it gets more */
	st = shell_exec_line(sh, "config ctx 5000");
	st |= shell_exec_line(sh, "load 0");
	CHECK_EQ_INT(st, 0);
	CHECK(sh->engine && sh->engine->n_ctx == 5000);
	fixture_close(&f);
}

/* Issue 28 defect 8: with no mem-budget, `load -c 16777216` of a small
 * model planned a cache of all the free memory, loaded slowly and its
 * unload did not end (docs/perf.md). A context asked for that free memory cannot hold is
 * refused at once, in one line that names the most that fits. */
TEST(engine_refuses_an_asked_context_free_memory_cannot_hold)
{
	struct shell_fixture f;
	const char *out;
	int st;

	CHECK_EQ_INT(open_ctx(&f, "ctxask", 256, NULL), 0);
	host_set_mem_free(1ull << 30);
	out = fixture_run(&f, "load -c 16777216 0", &st);
	CHECK(st != 0);
	CHECK_EQ_INT(fixture_count(out, "\n"), 1);
	CHECK(strstr(out, "error: load: ") == out);
	CHECK(strstr(out, "context 16777216") != NULL);
	CHECK(strstr(out, "at most ") != NULL);
	if (st == 0 || !strstr(out, "at most "))
		fprintf(stderr, "  load said: %s", out);
	CHECK(!f.sh->engine || !f.sh->engine->loaded);
	/* what fits loads */
	fixture_run(&f, "load -c 8192 0", &st);
	CHECK_EQ_INT(st, 0);
	CHECK(f.sh->engine && f.sh->engine->n_ctx == 8192);
	host_set_mem_free(0);
	fixture_close(&f);
}

/* Issue 28 defect 8: unload wiped the KV cache whole, faulting in every
 * page of it a short run never touched. It wipes the rows written. */
TEST(engine_unload_wipes_only_the_cache_rows_written)
{
	struct shell_fixture f;
	uint64_t kv, peak;
	int st;

	CHECK_EQ_INT(open_ctx(&f, "ctxwipe", 256, NULL), 0);
	fixture_run(&f, "load -c 262144 0", &st);
	CHECK_EQ_INT(st, 0);
	fixture_run(&f, "infer \"Once\" -n 4 --temp 0", &st);
	CHECK_EQ_INT(st, 0);
	kv = f.sh->engine->kv_bytes;
	peak = f.sh->engine->mem.peak;
	CHECK(kv >= 64u << 20);
	engine_unload(f.sh->engine);
	CHECK_EQ_INT(f.sh->engine->mem.used, 0);
	/* everything else wiped whole, of the cache a few rows */
	CHECK(f.sh->engine->mem.wiped <= peak - kv + (1u << 20));
	if (f.sh->engine->mem.wiped > peak - kv + (1u << 20))
		fprintf(stderr, "  wiped %llu of %llu (kv %llu)\n",
			(unsigned long long)f.sh->engine->mem.wiped, (unsigned long long)peak,
			(unsigned long long)kv);
	fixture_close(&f);
}

/* ---- the measurement of a plain model is of the bytes it computes with ---- */

/* A host that serves the bytes [at, at + len) (len 0: 1) as they are for
 * the first `honest` reads that touch them, and changed (xor flip) every
 * time after. */
struct turncoat {
	uint64_t at, len;
	uint8_t flip;
	int honest;
	int reads;
};

static void turncoat_read(void *ctx, int disk, uint64_t off, void *buf, size_t n)
{
	struct turncoat *t = ctx;
	uint64_t len = t->len ? t->len : 1;

	(void)disk;
	if (t->at >= off + n || t->at + len <= off)
		return;
	if (__atomic_fetch_add(&t->reads, 1, __ATOMIC_SEQ_CST) < t->honest)
		return;
	for (uint64_t i = t->at > off ? t->at : off; i < t->at + len && i < off + n; i++)
		((uint8_t *)buf)[i - off] ^= t->flip;
}

static void digest_of(const void *p, size_t n, uint8_t out[32])
{
	struct llm_sha256 c;

	llm_sha256_init(&c);
	llm_sha256_update(&c, p, n);
	llm_sha256_out(&c, out);
}

/* The default synthetic model (untied: in file order, so a streamed load
 * leaves the measurement to the first pass; tied: the head is the
 * embedding matrix, before layer 0, and the load measures it all) named
 * "measured model" at path, its bytes in *file (malloc'd, *n of them). */
static bool tied_or_not_model(char *path, size_t pn, uint8_t **file, size_t *n, bool tied,
			      uint32_t layers)
{
	struct mkm_spec s;
	char err[256];

	mkm_defaults(&s);
	s.tied = tied;
	if (layers)
		s.n_layers = layers;
	s.name = "measured model";
	snprintf(path, pn, "%s/measured.gguf", test_tmpdir());
	if (mkm_write(&s, path, err, sizeof err)) {
		fprintf(stderr, "  mkmodel: %s\n", err);
		return false;
	}
	*file = test_read_file(path, n);
	return *file != NULL;
}

static bool measured_model(char *path, size_t pn, uint8_t **file, size_t *n)
{
	return tied_or_not_model(path, pn, file, n, false, 0);
}

/* Load path as disk 0 (threads 1) with t serving it; the engine, loaded, or
 * NULL. */
static struct engine *load_served(const char *path, enum engine_weights mode, struct turncoat *t)
{
	struct engine *e = calloc(1, sizeof *e);
	char err[256];

	host_remove_disks();
	if (!e || host_add_disk(path) != 0) {
		free(e);
		return NULL;
	}
	engine_init(e);
	e->cfg.threads = 1;
	e->cfg.weights = mode;
	host_set_disk_hook(turncoat_read, t);
	int r = engine_load(e, 0, false, err, sizeof err);
	host_set_disk_hook(NULL, NULL);
	if (r) {
		fprintf(stderr, "  load: %s\n", err);
		free(e);
		return NULL;
	}
	return e;
}

/* load_served, and the engine's digest is of the file's bytes (as they
 * were before t changed any), or (a streamed model in file order) the
 * measurement stands before layer 0, for the first pass to complete. */
static struct engine *load_measured(const char *path, enum engine_weights mode, struct turncoat *t,
				    const uint8_t *file, size_t n)
{
	struct engine *e = load_served(path, mode, t);
	struct engine_info info;
	uint8_t want[32], zero[32] = {0};

	CHECK(e != NULL);
	if (!e)
		return NULL;
	CHECK_EQ_INT(engine_get_info(e, &info), 0);
	CHECK(info.digest_as_loaded);
	digest_of(file, n, want);
	if (info.measure_pending) {
		const struct gguf_tensor *emb = gguf_find_tensor(&e->g, "token_embd.weight");
		CHECK(e->streaming);
		CHECK(memcmp(info.plain_sha256, zero, 32) == 0);
		CHECK(info.measured_bytes >= emb->offset + emb->size && info.measured_bytes < n / 2);
	} else {
		CHECK(memcmp(info.plain_sha256, want, 32) == 0);
		CHECK(info.measured_bytes == n);
	}
	return e;
}

static void unload_served(struct engine *e)
{
	engine_unload(e);
	free(e);
	host_remove_disks();
}

/* Resident: the tensor data is read once and hashed as it is read, so a host
 * that serves other bytes to a later read (as the measurement's own read of
 * the disk was) cannot make the digest differ from what the model runs on. */
TEST(engine_measures_a_resident_model_by_the_tensor_bytes_it_read)
{
	char path[700];
	uint8_t *file, want[32], later[32];
	size_t n;

	CHECK(measured_model(path, sizeof path, &file, &n));
	if (!file)
		return;
	struct turncoat t = {.at = n / 2 + 3, .flip = 0x5a, .honest = 1};
	struct engine *e = load_measured(path, ENGINE_WEIGHTS_RESIDENT, &t, file, n);
	if (e) {
		CHECK_EQ_INT(t.reads, 1);
		digest_of(file, n, want);
		/* the disk read again now gives other bytes: a digest taken by a
		 * second read would have been of those */
		uint8_t *again = malloc(n);
		host_set_disk_hook(turncoat_read, &t);
		CHECK(again && plat_disk_read(0, 0, again, n) == 0);
		host_set_disk_hook(NULL, NULL);
		if (again) {
			digest_of(again, n, later);
			CHECK(memcmp(later, want, 32) != 0);
		}
		free(again);
		unload_served(e);
	}
	free(file);
}

/* The header is measured from the copy the engine parses: a host that
 * changes general.name between the first parse and the measurement's read
 * gets the changed name used and measured, never one measured and the other
 * used. */
TEST(engine_measures_the_header_it_parses)
{
	char path[700];
	uint8_t *file, want[32];
	size_t n;
	struct engine_info info;

	CHECK(measured_model(path, sizeof path, &file, &n));
	if (!file)
		return;
	uint8_t *at = memmem(file, n, "measured model", 14);
	CHECK(at != NULL);
	if (!at) {
		free(file);
		return;
	}
	/* how many reads of the name a load makes (the sealed-image probe, the
	 * parse, the measurement: the last); then a load where the last differs */
	struct turncoat count = {.at = (uint64_t)(at - file), .honest = 1 << 30};
	struct engine *e = load_served(path, ENGINE_WEIGHTS_RESIDENT, &count);
	CHECK(e && count.reads >= 2);
	if (e)
		unload_served(e);
	struct turncoat t = {.at = count.at, .flip = 0x01, .honest = count.reads - 1}; /* 'm' -> 'l' */
	e = load_served(path, ENGINE_WEIGHTS_RESIDENT, &t);
	CHECK(e != NULL);
	if (e) {
		CHECK_EQ_INT(t.reads, count.reads);
		CHECK_EQ_INT(engine_get_info(e, &info), 0);
		CHECK_STR(info.hp.name, "leasured model");
		CHECK(info.digest_as_loaded);
		*at ^= 0x01;
		digest_of(file, n, want);
		CHECK(memcmp(info.plain_sha256, want, 32) == 0);
		unload_served(e);
	}
	free(file);
}

static int infer2(struct engine *e, char *err, size_t n)
{
	struct engine_gen g;

	engine_gen_init(e, &g);
	g.samp.temp = 0;
	g.n_predict = 2;
	return engine_infer(e, "Once upon a time", &g, err, n);
}

/* Streaming reads the layers again every pass: every byte is measured once
 * (by the load, or the load and the first pass) with its blocks tagged,
 * and a pass checks each block it reads after. A host that serves a
 * layer's byte as measured, then changed, gets the run refused with one
 * line naming the bytes, every run after too, and the next load measures
 * afresh. So do embedding rows and small tensors. */
/* ... with tags of the kind impl names ("ghash_", "sha256"), on a model the
 * first pass finishes measuring (untied) or the load measures (tied). */
static void streams_only_as_measured(const char *impl, bool tied)
{
	char path[700], err[256];
	uint8_t *file, want[32];
	size_t n;

	CHECK(tied_or_not_model(path, sizeof path, &file, &n, tied, 0));
	if (!file)
		return;
	digest_of(file, n, want);
	/* the load and a run as the disk is; then every read of the byte
	 * changed (the load's read ahead may still be coming in: a hook
	 * installed at once would catch some of it) */
	struct turncoat t = {.at = n / 2 + 3};
	struct engine *e = load_measured(path, ENGINE_WEIGHTS_STREAM, &t, file, n);
	struct engine_info info;
	if (e) {
		CHECK(engine_get_info(e, &info) == 0 && info.bind_impl &&
		      strncmp(info.bind_impl, impl, strlen(impl)) == 0);
		CHECK(info.measure_pending == !tied);
		CHECK_EQ_INT(infer2(e, err, sizeof err), 0);
		CHECK(engine_get_info(e, &info) == 0 && !info.measure_pending);
		CHECK(memcmp(info.plain_sha256, want, 32) == 0);
		t.flip = 0x5a;
		host_set_disk_hook(turncoat_read, &t);
		for (int k = 0; k < 2; k++) {
			CHECK_EQ_INT(infer2(e, err, sizeof err), -LLMK_EAUTH);
			CHECK(strstr(err, "the disk changed under the model: bytes 0x") == err);
			CHECK(strstr(err, "differ from what was measured") != NULL);
			CHECK(strchr(err, '\n') == NULL);
		}
		host_set_disk_hook(NULL, NULL);
		/* the same disk as it was: still refused until a load */
		CHECK_EQ_INT(infer2(e, err, sizeof err), -LLMK_EAUTH);
		CHECK_EQ_INT(engine_load(e, 0, false, err, sizeof err), 0);
		CHECK_EQ_INT(infer2(e, err, sizeof err), 0);
		/* the reads outside the slots are checked too: the embedding
		 * table and the output norm */
		const struct gguf_tensor *emb = gguf_find_tensor(&e->g, "token_embd.weight");
		const struct gguf_tensor *on = gguf_find_tensor(&e->g, "output_norm.weight");
		struct turncoat norm = {.at = on->offset, .len = on->size, .flip = 0x01, .honest = 1};
		/* the table is held from the load on: a run reads no row (a
		 * tied head reads it as the head, checked as a layer is) */
		struct turncoat rows = {.at = emb->offset, .len = emb->size / 2, .flip = 0x01};
		host_set_disk_hook(turncoat_read, &rows);
		CHECK_EQ_INT(infer2(e, err, sizeof err), tied ? -LLMK_EAUTH : 0);
		host_set_disk_hook(NULL, NULL);
		CHECK(tied ? rows.reads > 0 : rows.reads == 0);
		/* a byte of it served as measured, then changed for the read
		 * that keeps it: the load fails */
		struct turncoat row = {.at = emb->offset + emb->size / 2, .flip = 0x01, .honest = 1};
		engine_unload(e); /* (emb and on are gone with it) */
		e->cfg.weights = ENGINE_WEIGHTS_STREAM;
		host_set_disk_hook(turncoat_read, &row);
		CHECK_EQ_INT(engine_load(e, 0, false, err, sizeof err), -LLMK_EAUTH);
		host_set_disk_hook(NULL, NULL);
		CHECK_EQ_INT(row.reads, 2);
		CHECK(strstr(err, "stream: the disk changed under the model: bytes 0x") == err);
		/* the output norm served as it is once, then changed; unloaded
		 * first, so no read ahead of the last load's is still coming in.
		 * Tied: the load measures it (read 1), then reads it for use: the
		 * load fails. Untied: the load reads it for use (read 1) and the
		 * first pass measures it: that run fails. */
		engine_unload(e);
		e->cfg.weights = ENGINE_WEIGHTS_STREAM;
		host_set_disk_hook(turncoat_read, &norm);
		int r = engine_load(e, 0, false, err, sizeof err);
		if (!tied) {
			CHECK_EQ_INT(r, 0);
			r = r ? r : infer2(e, err, sizeof err);
		}
		host_set_disk_hook(NULL, NULL);
		CHECK_EQ_INT(r, -LLMK_EAUTH);
		CHECK(strstr(err, tied ? "stream: the disk changed under the model: bytes 0x"
				       : "the disk changed under the model: bytes 0x") == err);
		if (!tied) { /* and never into the measurements */
			CHECK(engine_get_info(e, &info) == 0 && info.measure_pending);
			CHECK_EQ_INT(engine_measure(e, err, sizeof err), -LLMK_EAUTH);
			CHECK(strstr(err, "the disk changed under the model: bytes 0x") == err);
		}
		unload_served(e);
	}
	free(file);
}

/*
 * A streamed model in file order is measured by its first pass from the
 * bytes that pass computes with: a host that serves a changed layer byte
 * from the start gets it computed with and measured (the digest is of the
 * file as served), and a later pass served the original byte is refused.
 * engine_measure completes the measurement without a run (what `attest`
 * asks for before one).
 */
TEST(engine_measures_a_streamed_model_by_its_first_pass)
{
	char path[700], err[256];
	uint8_t *file, want[32];
	size_t n;
	struct engine_info info;

	/* 8 layers: the byte is in layer 6, which the read ahead after a pass
	 * (items 0-3: at most 4 slots) does not reach, so unhooking the host
	 * after a run races with no read of it */
	CHECK(tied_or_not_model(path, sizeof path, &file, &n, false, 8));
	if (!file)
		return;
	struct engine *e = load_served(path, ENGINE_WEIGHTS_STREAM, &(struct turncoat){.at = 0});
	CHECK(e != NULL);
	const struct gguf_tensor *l6 = e ? gguf_find_tensor(&e->g, "blk.6.ffn_down.weight") : NULL;
	CHECK(l6 != NULL);
	struct turncoat t = {.at = l6 ? l6->offset + 3 : 0, .flip = 0x20};
	if (e && l6) {
		CHECK(e->n_slots <= 4);
		CHECK(engine_get_info(e, &info) == 0 && info.measure_pending);
		host_set_disk_hook(turncoat_read, &t);
		CHECK_EQ_INT(infer2(e, err, sizeof err), 0);
		CHECK_EQ_INT(infer2(e, err, sizeof err), 0); /* served the same again */
		host_set_disk_hook(NULL, NULL);
		CHECK(t.reads >= 2);
		file[t.at] ^= t.flip;
		digest_of(file, n, want);
		file[t.at] ^= t.flip;
		CHECK(engine_get_info(e, &info) == 0 && !info.measure_pending);
		CHECK(memcmp(info.plain_sha256, want, 32) == 0);
		CHECK_EQ_INT(infer2(e, err, sizeof err), -LLMK_EAUTH);
		CHECK(strstr(err, "the disk changed under the model: bytes 0x") == err);
	}
	if (e)
		unload_served(e);
	/* engine_measure: nothing run yet */
	struct turncoat none = {.at = 0};
	e = load_measured(path, ENGINE_WEIGHTS_STREAM, &none, file, n);
	if (e) {
		CHECK(engine_get_info(e, &info) == 0 && info.measure_pending);
		CHECK_EQ_INT(engine_measure(e, err, sizeof err), 0);
		digest_of(file, n, want);
		CHECK(engine_get_info(e, &info) == 0 && !info.measure_pending);
		CHECK(info.measured_bytes == n);
		CHECK(memcmp(info.plain_sha256, want, 32) == 0);
		CHECK_EQ_INT(engine_measure(e, err, sizeof err), 0); /* done: nothing to do */
		CHECK_EQ_INT(infer2(e, err, sizeof err), 0);
		unload_served(e);
	}
	free(file);
}

/* What engine_config.on_measured was told (engine.h). */
struct told {
	int calls;
	struct engine_measurement m;
};

static void tell(void *ctx, const struct engine_measurement *m)
{
	struct told *t = ctx;

	t->calls++;
	t->m = *m;
}

/* The engine reports a model's measurement once, when it exists: a resident
 * model's at the end of a load that succeeded, a streamed one's when its
 * first pass (or engine_measure) completes it, never before the load is
 * done and never again. */
TEST(engine_reports_a_models_digest_once_when_it_is_complete)
{
	char path[700], err[256];
	uint8_t *file, want[32];
	size_t n;

	CHECK(measured_model(path, sizeof path, &file, &n));
	if (!file)
		return;
	digest_of(file, n, want);
	for (int stream = 0; stream < 2; stream++) {
		struct engine *e = calloc(1, sizeof *e);
		struct told t = {0};
		host_remove_disks();
		CHECK(e && host_add_disk(path) == 0);
		if (!e)
			break;
		engine_init(e);
		e->cfg.threads = 1;
		e->cfg.weights = stream ? ENGINE_WEIGHTS_STREAM : ENGINE_WEIGHTS_RESIDENT;
		e->cfg.on_measured = tell;
		e->cfg.on_measured_ctx = &t;
		CHECK_EQ_INT(engine_load(e, 0, false, err, sizeof err), 0);
		struct engine_info info;
		CHECK_EQ_INT(engine_get_info(e, &info), 0);
		CHECK_EQ_INT(t.calls, info.measure_pending ? 0 : 1);
		if (stream)
			CHECK(info.measure_pending);
		CHECK_EQ_INT(infer2(e, err, sizeof err), 0);
		CHECK_EQ_INT(infer2(e, err, sizeof err), 0);
		CHECK_EQ_INT(t.calls, 1);
		CHECK_EQ_INT(t.m.disk, 0);
		CHECK(!t.m.sealed);
		CHECK(t.m.extent == n);
		CHECK(memcmp(t.m.digest, want, 32) == 0);
		CHECK_EQ_INT(engine_measure(e, err, sizeof err), 0);
		CHECK_EQ_INT(t.calls, 1);
		unload_served(e);
	}
	free(file);
}

TEST(engine_streams_a_plain_model_only_as_measured)
{
	streams_only_as_measured("ghash_", false);
	streams_only_as_measured("ghash_", true);
}

/* With no entropy for a key (aarch64 without RNDR) the tags are each
 * block's SHA-256, and the checks hold the same. */
TEST(engine_streams_a_plain_model_only_as_measured_without_entropy)
{
	host_entropy_off(true);
	streams_only_as_measured("sha256", false);
	streams_only_as_measured("sha256", true);
	host_entropy_off(false);
}
