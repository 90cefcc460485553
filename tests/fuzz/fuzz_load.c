/*
 * tests/fuzz/fuzz_load.c — libFuzzer target for loading a model and running
 * it: hyperparameters, the memory plan, the layer streamer and one decode
 * step (issue 18, "Fuzzing where the defects were").
 *
 * An input is not a GGUF file but an edit script over a valid one
 * (tests/fuzz/fuzz_load_model.h): byte 0 picks a seed model that
 * tools/writer's mkm_write made at start-up (llama F32 / Q8_0 / Q4_0 tied,
 * qwen2 F16 with biases, llama Q4_K); byte 1 and 2 pick how it runs; the
 * rest are ops (change a key's value or type, drop or duplicate a key or
 * tensor, change a tensor's dims, type or offset, resize the tokenizer's
 * arrays or the embedding rows, ...). The edited model is written back as
 * GGUF into a memfd that is attached as disk 0 through tools/host/plat_disk.c,
 * the disk seam the engine always reads through, and then
 *   - engine_load resident, no mem-budget, on a simulated machine (below);
 *   - engine_load streamed with a small mem-budget (slots, read-ahead);
 * each followed by a prompt and 8 greedy tokens (the streamed run's prompt
 * lookup drafts and takes drafts; its tokens must be the resident run's).
 *
 * Byte 0: the seed (low bits); bit 7 runs the engine even on a file the
 * parser refuses (else that is fuzz_gguf's ground, and skipped). Byte 1:
 * bits 0-1 runs (both, resident, streamed, both unpacked), bits 2-4 the
 * streamed run's mem-budget, bits 5-6 kv-type, bit 7 the machine. Byte 2:
 * bits 0-1 batch, bits 2-3 config ctx, bits 4-5 the prompt.
 *
 * The machine: plat_mem_stats and plat_alloc are wrapped (-Wl,--wrap) so
 * the engine's "no mem-budget" plan sees a small machine (48 MiB) and can
 * never take the real one's memory, or a machine that says it has 1 TiB
 * free but gives 64 MiB (allocation failures after a plan that fitted).
 *
 * Beyond ASan/UBSan, checked: errors are one line without control bytes;
 * every tensor's parsed size is its exact size; no allocation of 0 bytes
 * (an unchecked shape); no plan past 2^24 positions; the float
 * hyperparameters a load accepts are finite, not negative, not denormal;
 * the tokenizer covers the embedding's rows and every generated id
 * renders; untouched weights give finite logits; the streamed run
 * generates what the resident run did; the engine returns all its memory.
 *
 *   FUZZ_LOAD_SEEDS=DIR fuzz_load   writes the seed corpus (one input per
 *                                   edit class) into DIR and exits
 *   FUZZ_LOAD_TRACE=1 fuzz_load IN  prints the ops and what each run did
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../llm/engine.h"
#include "../../tools/host/host.h"
#include "../../tools/writer/mkmodel.h"
#include "fuzz_load_model.h"

/* `config ctx`'s limit (shell/cmd_model_cfg.c): no plan may go past it */
#define CTX_CAP (1u << 24)

#define MiB (1ull << 20)

/* ---- the simulated machine ---- */
static uint64_t machine_says, machine_gives, machine_held;

void *__real_plat_alloc(size_t size, size_t align);
void *__real_plat_alloc_sparse(size_t size, size_t align);
void __real_plat_free(void *p, size_t size);

static uint64_t pages(size_t n)
{
	return ((uint64_t)n + 4095) & ~(uint64_t)4095;
}

void __wrap_plat_mem_stats(struct plat_mem_stats *st)
{
	st->total = machine_says;
	st->free = machine_says > machine_held ? machine_says - machine_held : 0;
	st->used = st->used_peak = machine_held;
}

static void *machine_alloc(size_t size, size_t align, void *(*real)(size_t, size_t))
{
	void *p;

	if (pages(size) > machine_gives || machine_held > machine_gives - pages(size))
		return NULL;
	if ((p = real(size, align)))
		machine_held += pages(size);
	return p;
}

void *__wrap_plat_alloc(size_t size, size_t align)
{
	return machine_alloc(size, align, __real_plat_alloc);
}

/* (the KV cache: a machine that backs pages on first touch still counts
 * them all, as the budget does) */
void *__wrap_plat_alloc_sparse(size_t size, size_t align)
{
	return machine_alloc(size, align, __real_plat_alloc_sparse);
}

void __wrap_plat_free(void *p, size_t size)
{
	if (p)
		machine_held -= pages(size);
	__real_plat_free(p, size);
}

/* ---- the seeds ---- */
static const struct {
	const char *arch;
	uint32_t type, dim, ffn;
	bool tied;
} seed_specs[] = {
	{"llama", GGML_TYPE_F32, 64, 128, false},
	{"llama", GGML_TYPE_Q8_0, 64, 128, false},
	{"llama", GGML_TYPE_Q4_0, 64, 128, true},
	{"qwen2", GGML_TYPE_F16, 64, 128, false},
	{"qwen3", GGML_TYPE_Q8_0, 64, 128, true},
	{"olmo2", GGML_TYPE_F32, 64, 128, false},
	{"qwen2moe", GGML_TYPE_Q8_0, 64, 128, false},
	{"llama", GGML_TYPE_Q4_K, 256, 256, false},
};
#define N_SEEDS (sizeof seed_specs / sizeof seed_specs[0])

static struct fl_model seeds[N_SEEDS];
static struct fl_arena seed_arena;
static int disk_fd = -1;
static char disk_path[64];
static struct fl_out out;
static bool trace;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_load: %s\n", what);
	exit(1);
}

static void make_seed(size_t i)
{
	struct mkm_spec s;
	struct stat st;
	char err[256];
	uint8_t *bytes;

	mkm_defaults(&s);
	s.arch = seed_specs[i].arch;
	s.type = seed_specs[i].type;
	s.tied = seed_specs[i].tied;
	s.n_layers = 2;
	s.dim = seed_specs[i].dim;
	s.ffn = seed_specs[i].ffn;
	s.heads = 4;
	s.kv_heads = 2;
	s.vocab = 300;
	s.ctx = 64;
	s.seed = 1 + i;
	if (model_arch_find(s.arch)->moe == MODEL_MOE_ALWAYS)
		mkm_set_experts(&s, 4, 2);
	if (mkm_write(&s, disk_path, err, sizeof err) < 0)
		die(err);
	if (fstat(disk_fd, &st) < 0 || !(bytes = malloc((size_t)st.st_size)) ||
	    pread(disk_fd, bytes, (size_t)st.st_size, 0) != st.st_size)
		die("cannot read a seed back");
	if (flm_from_gguf(&seeds[i], bytes, (uint64_t)st.st_size, &seed_arena) < 0)
		die("seed model");
}

static void write_seed_corpus(const char *dir);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *e;

	(void)argc;
	(void)argv;
	trace = (e = getenv("FUZZ_LOAD_TRACE")) && *e == '1';
	host_set_cpus(1);
	machine_says = machine_gives = 1ull << 40; /* unlimited while the seeds are made */
	if ((disk_fd = memfd_create("fuzz_load.gguf", 0)) < 0)
		die("memfd_create");
	snprintf(disk_path, sizeof disk_path, "/proc/self/fd/%d", disk_fd);
	for (size_t i = 0; i < N_SEEDS; i++)
		make_seed(i);
	if (!(out.buf = malloc(FLM_FILE_CAP)))
		die("out of memory");
	if ((e = getenv("FUZZ_LOAD_SEEDS"))) {
		write_seed_corpus(e);
		exit(0);
	}
	return 0;
}

/* ---- checks ---- */
__attribute__((format(printf, 1, 2), noreturn)) static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_load: invariant broken: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

/* One line, something said, no terminal control bytes from the file. */
static void check_err(const char *what, int rc, const char *err)
{
	if (rc >= 0)
		fail("%s failed with a non-negative code", what);
	if (!err[0])
		fail("%s failed without a message", what);
	const char *c;

	for (const char *p = err; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			fail("%s error carries a control byte: %s", what, err);
	/* an allocation asked for 0 bytes (or a size that wrapped): a shape
	 * no check refused reached the allocator */
	if (strstr(err, "allocating the model's buffers") &&
	    strstr(err, plat_strerror(-LLMK_EINVAL)))
		fail("%s: a zero or wrapped size reached the allocator: %s", what, err);
	/* the plan's context, where a failed load names it */
	if ((c = strstr(err, "(context ")) &&
	    strtoull(c + 9, NULL, 10) > CTX_CAP)
		fail("%s planned a context above 2^24 positions: %s", what, err);
}

static bool bad_float(float f)
{
	return isnan(f) || isinf(f) || f < 0 || fpclassify(f) == FP_SUBNORMAL;
}

/* What a parse of the written file says about the known defects. */
struct known {
	bool parsed, hparams;
};

/* arch.key as a float the way model_read_hparams reads it; absent: 0 */
static float get_f(const struct gguf_file *g, const char *arch, const char *key)
{
	char k[128];
	float f = 0;

	snprintf(k, sizeof k, "%.40s.%s", arch, key);
	gguf_get_f32(g, k, &f);
	return f;
}

/* Does the file carry a float hyperparameter that is NaN, infinite,
 * negative or denormal where the loader reads it, or a rope factor so
 * small the angles overflow (defect 6)? The rope
 * factor only when the scaling type is not "none", scale_linear only in
 * place of a factor of 0 (model.c read_rope_scaling). */
static bool bad_hparams(const struct gguf_file *g)
{
	const struct gguf_str *arch, *type;
	char k[128];
	uint32_t ctx = 0;
	float factor;

	if (gguf_get_str(g, "general.architecture", &arch) < 0)
		return false;
	if (bad_float(get_f(g, arch->s, "attention.layer_norm_rms_epsilon")) ||
	    bad_float(get_f(g, arch->s, "rope.freq_base")))
		return true;
	snprintf(k, sizeof k, "%.40s.rope.scaling.type", arch->s);
	if (gguf_get_str(g, k, &type) == 0 && strcmp(type->s, "none") == 0)
		return false;
	factor = get_f(g, arch->s, "rope.scaling.factor");
	if (factor == 0)
		factor = get_f(g, arch->s, "rope.scale_linear");
	/* a legal-looking factor so small that position / factor, the first
	 * RoPE angle, overflows to inf at some position the run may reach
	 * (the context, or the largest config ctx here): NaN rows, token 0 */
	snprintf(k, sizeof k, "%.40s.context_length", arch->s);
	gguf_get_u32(g, k, &ctx);
	return bad_float(factor) ||
	       (factor > 0 && (ctx > 1000 ? (double)ctx : 1000.0) / factor >= 0x1p128);
}

static void check_parse(const uint8_t *buf, uint64_t n, struct known *k)
{
	struct llm_reader r;
	struct llm_membuf mb;
	struct llm_mem mem;
	struct gguf_file g;
	const struct gguf_tensor *t;
	char err[256];

	memset(k, 0, sizeof *k);
	llm_mem_init(&mem, 0);
	llm_reader_mem(&r, &mb, buf, n);
	if (gguf_open(&g, &r, &mem, err, sizeof err) < 0) {
		check_err("gguf_open", -1, err);
		return;
	}
	k->parsed = true;
	for (uint64_t i = 0; i < g.n_tensors; i++) {
		unsigned __int128 bytes = 1;
		uint32_t blck, bsz;
		t = &g.tensors[i];
		if (gguf_type_geometry(t->type, &blck, &bsz) < 0)
			continue;
		for (uint32_t d = 0; d < t->n_dims; d++)
			bytes *= t->ne[d];
		bytes = bytes / blck * bsz;
		if (bytes != t->size)
			fail("tensor '%s': parsed size is not its exact byte size (%s)", t->name,
			     gguf_type_name(t->type));
	}
	k->hparams = bad_hparams(&g);
	gguf_close(&g);
	if (mem.used)
		fail("gguf_open did not return its memory");
}

/* ---- one run ---- */
/* tokens a run generates: enough for the streamed run's prompt lookup to
 * draft and take drafts (its reply must be the resident run's) */
#define FUZZ_TOKENS 8

struct result {
	bool loaded, ran;
	uint32_t n_out;
	int32_t ids[FUZZ_TOKENS];
};

static struct engine eng;

static const char *const prompts[] = {"Hello world", "a", "<s>Once upon a time", "\xff"};

static void run(bool stream, uint8_t h1, uint8_t h2, bool touched, const struct known *k,
		struct result *res)
{
	/* KiB; 0: the machine's (no mem-budget); the least is below what any
	 * seed needs to stream, the next ones cut slots and context */
	static const uint32_t budgets[8] = {0, 3584, 4096, 4352, 4608, 5120, 6144, 8192};
	static const uint32_t kv_types[4] = {GGML_TYPE_F16, GGML_TYPE_Q8_0, GGML_TYPE_F32,
					     GGML_TYPE_F16};
	static const uint32_t batches[4] = {128, 1, 3, 16}, ctxs[4] = {0, 16, 40, 1000};
	struct engine *e = &eng;
	struct engine_config cfg;
	struct engine_gen g;
	struct engine_plan plan;
	const struct model_hparams *hp;
	char err[512];
	int rc;

	memset(res, 0, sizeof *res);
	engine_init(e);
	engine_get_config(e, &cfg);
	cfg.threads = 1;
	cfg.weights = stream ? ENGINE_WEIGHTS_STREAM : ENGINE_WEIGHTS_RESIDENT;
	cfg.mem_budget = stream ? budgets[(h1 >> 2) & 7] * 1024ull : 0;
	cfg.kv_type = kv_types[(h1 >> 5) & 3];
	cfg.no_pack = (h1 & 3) == 3;
	cfg.n_batch = batches[h2 & 3];
	cfg.n_ctx = ctxs[(h2 >> 2) & 3];
	cfg.samp.temp = 0;
	cfg.samp.seed = 1;
	engine_set_config(e, &cfg);
	rc = engine_load(e, 0, false, err, sizeof err);
	if (trace)
		fprintf(stderr, "%s load (mem-budget %llu KiB): %s\n", stream ? "streamed" : "resident",
			(unsigned long long)(cfg.mem_budget / 1024), rc ? err : "ok");
	if (rc) {
		check_err("engine_load", rc, err);
		goto out;
	}
	res->loaded = true;
	hp = &e->model.hp;
	if (trace && engine_get_plan(e, &plan) == 0)
		fprintf(stderr, "  %s, ctx %u, slots %u of %llu, weights %llu, kv %llu, scratch %llu, "
			"used %llu\n", plan.weights_kind, plan.n_ctx, plan.n_slots,
			(unsigned long long)plan.slot_bytes, (unsigned long long)plan.weight_bytes,
			(unsigned long long)plan.kv_bytes, (unsigned long long)plan.scratch_bytes,
			(unsigned long long)plan.mem_used);
	if (e->n_ctx > CTX_CAP)
		fail("load planned a context of %u positions, above 2^24", e->n_ctx);
	if (k->hparams)
		fail("load accepted a float hyperparameter that is NaN, infinite, negative or "
		     "denormal (eps %g, rope base %g, rope scale %g)", (double)hp->norm_eps,
		     (double)hp->rope_base, (double)hp->rope_scale);
	if (e->tok.n_vocab < hp->n_vocab)
		fail("load accepted a tokenizer of %u tokens over %u embedding rows",
		     e->tok.n_vocab, hp->n_vocab);
	engine_gen_init(e, &g);
	g.n_predict = FUZZ_TOKENS;
	g.out_ids = res->ids;
	g.out_cap = FUZZ_TOKENS;
	rc = engine_infer(e, prompts[(h2 >> 4) & 3], &g, err, sizeof err);
	if (trace)
		fprintf(stderr, "  infer: %s (%u tokens: %d %d)\n", rc ? err : "ok", g.n_out,
			g.n_out > 0 ? res->ids[0] : -1, g.n_out > 1 ? res->ids[1] : -1);
	if (rc) {
		check_err("engine_infer", rc, err);
	} else {
		char piece[256];
		res->ran = true;
		res->n_out = g.n_out;
		for (uint32_t i = 0; i < g.n_out && i < FUZZ_TOKENS; i++)
			if ((uint32_t)res->ids[i] >= hp->n_vocab ||
			    tok_piece(&e->tok, res->ids[i], 0, piece, sizeof piece) == -LLMK_EINVAL)
				fail("generated id %d, which the model (%u rows, %u tokens) cannot render",
				     res->ids[i], hp->n_vocab, e->tok.n_vocab);
		for (uint32_t i = 0; !touched && i < hp->n_vocab; i++)
			if (!isfinite(e->s.logits[i]))
				fail("untouched weights gave logit %u = %g", i, (double)e->s.logits[i]);
	}
out:
	engine_unload(e);
	if (e->mem.used)
		fail("the engine did not return all its memory after unload");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fl_model m;
	struct fl_arena arena = {0};
	struct result res[2] = {0};
	struct known k;
	uint64_t held;
	uint8_t s = size > 0 ? data[0] : 0, h1 = size > 1 ? data[1] : 0, h2 = size > 2 ? data[2] : 0;
	bool both;

	flm_copy(&m, &seeds[s % N_SEEDS], &arena);
	m.trace = trace;
	flm_apply(&m, size > 3 ? data + 3 : data, size > 3 ? size - 3 : 0);
	flm_write(&m, &out);
	machine_says = machine_gives = 1ull << 40;
	check_parse(out.buf, out.len, &k);
	if (!k.parsed && !trace && (s & 0x80) == 0)
		goto done; /* the parser refused it: fuzz_gguf's ground, not worth two loads */
	if (ftruncate(disk_fd, 0) < 0 || pwrite(disk_fd, out.buf, out.len, 0) != (ssize_t)out.len ||
	    host_add_disk(disk_path) != 0)
		die("cannot attach the model as a disk");
	if (h1 & 0x80) { /* says 1 TiB, gives 64 MiB */
		machine_says = 1ull << 40;
		machine_gives = 64 * MiB;
	} else {
		machine_says = machine_gives = 48 * MiB;
	}
	held = machine_held;
	if ((h1 & 3) != 2)
		run(false, h1, h2, m.weights_touched, &k, &res[0]);
	if ((h1 & 3) != 1)
		run(true, h1, h2, m.weights_touched, &k, &res[1]);
	if (machine_held != held) /* what llm_mem does not see: plat_alloc itself */
		fail("%llu bytes of the platform's memory not returned",
		     (unsigned long long)(machine_held - held));
	both = (h1 & 3) == 0 || (h1 & 3) == 3;
	if (both && !m.weights_touched && res[0].ran && res[1].ran &&
	    (res[0].n_out != res[1].n_out ||
	     memcmp(res[0].ids, res[1].ids, sizeof res[0].ids) != 0))
		fail("the streamed run generated other tokens than the resident run");
	host_remove_disks();
done:
	fl_arena_free(&arena);
	return 0;
}

/* ---- the seed corpus: one input per class of edit ---- */
static void seed_file(const char *dir, const char *name, const uint8_t *b, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/seed-%s", dir, name);
	if (!(f = fopen(path, "wb")) || fwrite(b, 1, n, f) != n || fclose(f) != 0)
		die("cannot write a seed");
}

static int t_index(size_t s, const char *name)
{
	for (uint32_t i = 0; i < seeds[s].n_t; i++)
		if (strcmp(seeds[s].t[i].name.s, name) == 0)
			return (int)i;
	return -1;
}

static void write_seed_corpus(const char *dir)
{
	char name[64];

#define SEED(nm, ...) \
	do { \
		const uint8_t b_[] = {__VA_ARGS__}; \
		seed_file(dir, nm, b_, sizeof b_); \
	} while (0)
	for (size_t s = 0; s < N_SEEDS; s++) {
		int out_t = t_index(s, "output.weight");
		snprintf(name, sizeof name, "plain-%zu", s);
		SEED(name, (uint8_t)s, 0, 0);
		snprintf(name, sizeof name, "plain-stream-%zu", s);
		SEED(name, (uint8_t)s, 2 | 1 << 2, 1 << 4);
		/* defect 1: a vocabulary of 0, streamed (ropedim0 below: resident) */
		snprintf(name, sizeof name, "vocab0-%zu", s);
		if (out_t >= 0)
			SEED(name, (uint8_t)s, 2, 0, FLM_VOCAB, FI_0, FLM_T_DROP, (uint8_t)out_t);
		else
			SEED(name, (uint8_t)s, 2, 0, FLM_VOCAB, FI_0);
		/* defect 7: more embedding rows than tokens, and fewer */
		snprintf(name, sizeof name, "rows512-%zu", s);
		SEED(name, (uint8_t)s, 0, 0, FLM_VOCAB, FI_512);
		snprintf(name, sizeof name, "tok280-%zu", s);
		SEED(name, (uint8_t)s, 0, 0, FLM_TOK_N, FI_U16, 24, 1);
		/* defect 8: alignment 1 and 2 while streaming */
		snprintf(name, sizeof name, "align1-%zu", s);
		SEED(name, (uint8_t)s, 2, 0, FLM_KEY_SET, FK_ALIGN, FI_1);
		snprintf(name, sizeof name, "align2-%zu", s);
		SEED(name, (uint8_t)s, 2 | 2 << 2, 0, FLM_KEY_SET, FK_ALIGN, FI_2);
	}
	/* defect 1, the resident twin: rope.dimension_count 0 */
	SEED("ropedim0", 0, 0, 0, FLM_KEY_SET, FK_ROPE_DIM, FI_0);
	/* defect 4: context_length huge, on each machine */
	SEED("ctx-u32max", 0, 0, 0, FLM_KEY_SET, FK_CTX, FI_U32MAX);
	SEED("ctx-u32max-big", 0, 0x80, 0, FLM_KEY_SET, FK_CTX, FI_U32MAX);
	SEED("ctx-2p24", 1, 0, 0, FLM_KEY_SET, FK_CTX, FI_2P24);
	/* defect 5: a tensor of 2^62 F32 elements (2^64 bytes) */
	SEED("size-overflow", 0, 0, 0, FLM_T_ADD, 15, 7, 0, FF_1);
	/* defect 6: each float hyperparameter NaN / inf / denormal / negative */
	SEED("eps-nan", 0, 0, 0, FLM_KEY_SET, FK_EPS, FF_NAN);
	SEED("eps-denorm", 1, 0, 0, FLM_KEY_SET, FK_EPS, FF_DENORM);
	SEED("eps-neg", 3, 0, 0, FLM_KEY_SET, FK_EPS, FF_NEG_SMALL);
	SEED("base-inf", 0, 0, 0, FLM_KEY_SET, FK_ROPE_BASE, FF_INF);
	SEED("base-neg", 2, 0, 0, FLM_KEY_SET, FK_ROPE_BASE, FF_NEG1);
	SEED("factor-denorm", 0, 0, 0, FLM_KEY_SET, FK_ROPE_FACTOR, FF_DENORM);
	SEED("factor-inf", 1, 0, 0, FLM_KEY_SET, FK_ROPE_FACTOR, FF_INF);
	SEED("linear-nan", 0, 0, 0, FLM_KEY_SET, FK_ROPE_LINEAR, FF_NAN);
	SEED("linear-min", 3, 2 | 3 << 2, 0, FLM_KEY_SET, FK_ROPE_LINEAR, FF_MIN);
	/* the rest: each kind of op once */
	SEED("heads-kv-3", 0, 0, 0, FLM_KEY_SET, FK_HEADS_KV, FI_3);
	SEED("blocks-3", 1, 0, 0, FLM_KEY_SET, FK_BLOCKS, FI_3);
	SEED("blocks-1", 1, 2, 0, FLM_KEY_SET, FK_BLOCKS, FI_1);
	SEED("ff-half", 0, 0, 0, FLM_KEY_SET, FK_FF, FI_HALF);
	SEED("keylen-32", 0, 0, 0, FLM_KEY_SET, FK_KEY_LEN, FI_64);
	SEED("ctx-1", 0, 0, 0, FLM_KEY_SET, FK_CTX, FI_1);
	SEED("bos-300", 0, 0, 0, FLM_KEY_SET, FK_BOS, FI_300);
	SEED("eos-neg", 0, 0, 0, FLM_KEY_SET, FK_EOS, FI_NEG1);
	SEED("arch-esc", 0, 0, 0, FLM_KEY_SET, FK_ARCH, 7);
	SEED("tok-gpt2", 0, 0, 0, FLM_KEY_SET, FK_TOK_MODEL, 3);
	SEED("rope-yarn", 0, 0, 0, FLM_KEY_SET, FK_ROPE_TYPE, 6);
	SEED("rope-type-esc", 0, 0, 0, FLM_KEY_SET, FK_ROPE_TYPE, 7);
	SEED("template", 3, 0, 0, FLM_KEY_SET, FK_TEMPLATE, 13);
	SEED("align-64", 4, 0, 0, FLM_KEY_SET, FK_ALIGN, FI_64);
	SEED("kv-drop", 0, 0, 0, FLM_KV_DROP, 4);
	SEED("kv-dup", 0, 0, 0, FLM_KV_DUP, 2);
	SEED("kv-type-ctx-f32", 0, 0, 0, FLM_KV_TYPE, 4, 6);
	SEED("kv-type-blocks-arr", 0, 0, 0, FLM_KV_TYPE, 6, 9);
	SEED("arr-scores-nan", 0, 0, 0, FLM_ARR_ELEM, 16, FI_300, FF_NAN);
	SEED("arr-tokens-empty", 0, 0, 0, FLM_ARR_ELEM, 15, FI_3, 0);
	SEED("arr-types-len", 0, 0, 0, FLM_ARR_LEN, 17, FI_HALF);
	SEED("t-dim", 0, 0, 0, FLM_T_DIM, 1, 0, FI_TWICE);
	SEED("t-ndims3", 0, 0, 0, FLM_T_NDIMS, 2, 3);
	SEED("t-type-f16", 0, 0, 0, FLM_T_TYPE, 2, 1);
	SEED("t-type-q8", 1, 2, 0, FLM_T_TYPE, 5, 6);
	SEED("t-off-plus1", 0, 0, 0, FLM_KEY_SET, FK_ALIGN, FI_1, FLM_T_OFF, 3, 0);
	SEED("t-off-overlap", 0, 0, 0, FLM_T_OFF, 4, 11);
	SEED("t-drop-norm", 0, 0, 0, FLM_T_DROP, 1);
	SEED("t-dup", 0, 0, 0, FLM_T_DUP, 3);
	SEED("t-name-qkv", 0, 0, 0, FLM_T_NAME, 2, 6);
	SEED("t-add-rope-freqs", 0, 0, 0, FLM_T_ADD, 1, 0, 0, FF_0);
	SEED("t-add-bias", 0, 2, 0, FLM_T_ADD, 2, 2, 0, FF_1);
	SEED("t-fill-nan", 0, 0, 0, FLM_T_FILL, 1, FF_NAN, 1);
	SEED("t-swap", 0, 0, 0, FLM_T_SWAP, 0, 5);
	SEED("version2", 0, 0, 0, FLM_VERSION, 1);
	SEED("kv-q8-batch1", 0, 1 << 5, 1, 0);
	SEED("kv-f32-ctx16", 4, 2 << 5, 1 << 2);
	SEED("big-machine", 4, 0x80, 0);
	/* longer scripts (libFuzzer grows inputs from the longest seed):
	 * consistent multi-op edits that still load */
	SEED("combo-vocab-280", 1, 0, 0, FLM_TOK_N, FI_U16, 24, 1, FLM_VOCAB, FI_U16, 24, 1,
	     FLM_KEY_SET, FK_EOS, FI_257, FLM_KEY_SET, FK_NAME, 9, FLM_KEY_SET, FK_CTX, FI_512,
	     FLM_KEY_SET, FK_ROPE_BASE, FF_1E6, FLM_KEY_SET, FK_EPS, FF_1EM5);
	SEED("combo-one-layer", 0, 0x0c, 0x11, FLM_KEY_SET, FK_BLOCKS, FI_1, FLM_T_DROP, 10,
	     FLM_T_DROP, 10, FLM_T_DROP, 10, FLM_T_DROP, 10, FLM_T_DROP, 10, FLM_T_DROP, 10,
	     FLM_T_DROP, 10, FLM_T_DROP, 10, FLM_T_DROP, 10, FLM_KEY_SET, FK_ALIGN, FI_64);
	SEED("combo-types", 0, 0x23, 0x21, FLM_T_TYPE, 2, 2, FLM_T_TYPE, 3, 6, FLM_T_TYPE, 4, 1,
	     FLM_T_TYPE, 5, 3, FLM_T_TYPE, 7, 4, FLM_T_TYPE, 8, 5, FLM_T_TYPE, 9, 20,
	     FLM_T_TYPE, 0, 1, FLM_KEY_SET, FK_CTX, FI_256);
#undef SEED
}
