/*
 * tests/unit/test_mem_poison.c — the sanitizer build's poisoning (llm/mem.h,
 * LLMK_POISON): AddressSanitizer sees one byte past an object in the
 * engine's page-backed memory (an llm_mem allocation, an arena object, a
 * piece of the scratch, a layer of the KV cache, a resident tensor).
 *
 * Each bad access runs in a child process (a death test): the child must die
 * with ASan's report (use-after-poison) and a non-zero status, and the same
 * access one byte earlier must leave it alive and silent, so a test that
 * passes shows the byte itself is what was caught. Then the forward pass of
 * models whose dimensions are no multiple of a SIMD width runs in process,
 * resident and streamed, with every redzone in place. Built in the ASan
 * flavor only: elsewhere there is nothing to catch the write.
 */
#include "test.h"
#include "../../llm/mem.h"

#if LLM_MEM_REDZONE
#include "../../llm/engine.h"
#include "../../llm/kv.h"
#include "../../llm/model.h"
#include "../../tools/host/host.h"
#include "../../tools/writer/mkmodel.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* fn(arg) in a child with its stderr in report[cap]: the child's exit
 * status, 128 + the signal that ended it, or -1 if it could not run. */
static int in_child(void (*fn)(void *), void *arg, char *report, size_t cap)
{
	int pfd[2], st;
	size_t got = 0;
	char sink[512];
	pid_t pid;

	report[0] = 0;
	if (pipe(pfd))
		return -1;
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		close(pfd[0]);
		dup2(pfd[1], 2);
		fn(arg);
		_exit(0); /* not caught: no atexit handlers, no leak check */
	}
	close(pfd[1]);
	for (;;) {
		bool room = got + 1 < cap;
		ssize_t k = read(pfd[0], room ? report + got : sink, room ? cap - 1 - got : sizeof sink);
		if (k <= 0)
			break;
		if (room)
			got += (size_t)k;
	}
	report[got] = 0;
	close(pfd[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct poke {
	volatile uint8_t *p; /* the byte written (or, if read, read) */
	bool read;
};

static void poke_run(void *arg)
{
	struct poke *k = arg;

	if (k->read) {
		uint8_t v = *k->p;
		__asm__ volatile("" : : "r"(v));
	} else {
		*k->p = 0x5a;
	}
}

/* The access to the last byte of an object passes; the access to the byte
 * after it (at bad) dies with ASan's report of a poisoned byte. */
static bool caught(const char *what, volatile uint8_t *good, volatile uint8_t *bad, bool read)
{
	struct poke ok = {good, read}, no = {bad, read};
	char report[8192];
	int st;

	st = in_child(poke_run, &ok, report, sizeof report);
	if (st != 0) {
		fprintf(stderr, "  %s: the access in bounds ended the child (%d):\n%.600s\n", what,
			st, report);
		return false;
	}
	st = in_child(poke_run, &no, report, sizeof report);
	if (st == 0 || !strstr(report, "ERROR: AddressSanitizer: use-after-poison")) {
		fprintf(stderr, "  %s: the access one byte past was not caught (status %d):\n%.600s\n",
			what, st, report);
		return false;
	}
	return true;
}

TEST(poison_catches_a_write_past_an_allocation)
{
	struct llm_mem m;
	uint8_t *a, *b;

	llm_mem_init(&m, 0);
	a = llm_mem_alloc(&m, 5000, NULL); /* the tail of its second page */
	b = llm_mem_alloc(&m, 8192, NULL); /* whole pages: the guard page after */
	CHECK(a && b);
	CHECK(caught("5000 bytes, byte 5000", a + 4999, a + 5000, false));
	CHECK(caught("8192 bytes, byte 8192", b + 8191, b + 8192, false));
	CHECK(caught("8192 bytes, byte -1", b, b - 1, false));
	CHECK(caught("8192 bytes, reading byte 8192", b + 8191, b + 8192, true));
	llm_mem_free(&m, a, 5000);
	llm_mem_free(&m, b, 8192);
	CHECK_EQ_INT(m.used, 0);
}

TEST(poison_catches_a_write_past_an_arena_object)
{
	struct llm_mem m;
	struct llm_arena a;
	uint8_t *x, *y, *big;
	char *s;

	llm_mem_init(&m, 0);
	llm_arena_init(&a, &m);
	x = llm_arena_alloc(&a, 24, 8);
	y = llm_arena_alloc(&a, 24, 8); /* the next object, right after x's redzone */
	s = llm_arena_strndup(&a, "hello world", 5);
	big = llm_arena_alloc(&a, 3 << 20, 64); /* a chunk of its own */
	CHECK(x && y && s && big);
	CHECK((size_t)(y - x) >= 24 + LLM_MEM_REDZONE);
	CHECK(caught("24-byte object, byte 24", x + 23, x + 24, false));
	CHECK(caught("24-byte object, byte 24 read", x + 23, x + 24, true));
	CHECK(caught("strndup of 5, byte 6", (uint8_t *)s + 5, (uint8_t *)s + 6, false));
	CHECK(caught("3 MiB object, the byte after", big + (3 << 20) - 1, big + (3 << 20), false));
	/* the next object stays usable, and so does a chunk's free tail */
	y[0] = 1;
	CHECK(llm_arena_alloc(&a, 100, 1) != NULL);
	llm_arena_free(&a);
	CHECK_EQ_INT(m.used, 0);
}

/* A small llama shape whose sizes are no multiple of 8 or 16 floats. */
static void odd_hparams(struct model_hparams *hp)
{
	memset(hp, 0, sizeof *hp);
	hp->n_layer = 2;
	hp->n_embd = 52;
	hp->n_head = 2;
	hp->n_head_kv = 1;
	hp->head_dim = 26;
	hp->n_ff = 100;
	hp->n_vocab = 301;
	hp->rope_dim = 26;
}

TEST(poison_catches_a_write_from_one_scratch_piece_into_the_next)
{
	struct model_hparams hp;
	struct model_scratch s;
	struct llm_mem m;
	uint32_t B = 3;

	odd_hparams(&hp);
	llm_mem_init(&m, 0);
	CHECK_EQ_INT(model_scratch_init(&s, &hp, B, 2, &m), 0);
	CHECK(caught("scratch x, float B * n_embd", (uint8_t *)(s.x + B * hp.n_embd) - 1,
		     (uint8_t *)(s.x + B * hp.n_embd), false));
	CHECK(caught("scratch k, float B * kv_dim", (uint8_t *)(s.k + B * 26) - 1,
		     (uint8_t *)(s.k + B * 26), false));
	CHECK(caught("scratch logits, float n_vocab", (uint8_t *)(s.logits + hp.n_vocab) - 1,
		     (uint8_t *)(s.logits + hp.n_vocab), false));
	/* every piece is writable whole, and the zeroize covers it all */
	memset(s.hb2, 0x11, B * hp.n_ff * sizeof(float));
	memset(s.logits, 0x11, hp.n_vocab * sizeof(float));
	model_scratch_zeroize(&s);
	CHECK(s.hb2[B * hp.n_ff - 1] == 0.0f && s.logits[0] == 0.0f);
	model_scratch_free(&s, &m);
	CHECK_EQ_INT(m.used, 0);
}

TEST(poison_catches_a_kv_position_past_the_context)
{
	struct kv_cache c;
	struct llm_mem m;
	float row[40];
	size_t rb;

	llm_mem_init(&m, 0);
	for (int i = 0; i < 40; i++)
		row[i] = (float)i;
	CHECK_EQ_INT(kv_init(&c, &m, GGML_TYPE_F16, 3, 5, 40), 0);
	rb = c.row_bytes;
	/* the byte after the last position of layers 0 and 2 (the last: past
	 * the allocation's own end) */
	CHECK(caught("kv layer 0, position n_ctx", c.k + 5 * rb - 1, c.k + 5 * rb, false));
	CHECK(caught("kv layer 2, position n_ctx", c.v + 2 * c.layer_bytes + 5 * rb - 1,
		     c.v + 2 * c.layer_bytes + 5 * rb, false));
	for (uint32_t l = 0; l < 3; l++)
		for (uint32_t p = 0; p < 5; p++)
			kv_store(&c, l, p, row, row);
	float out[40];
	kv_load_v(&c, 2, 4, out);
	CHECK(out[39] == 39.0f);
	kv_zeroize(&c);
	kv_load_k(&c, 1, 3, out);
	CHECK(out[7] == 0.0f);
	kv_free(&c);
	CHECK_EQ_INT(m.used, 0);
}

/* A model of odd_hparams' shape (in type) as a disk: 0, or -1. */
static int odd_model(const char *name, uint32_t type, char *path, size_t n)
{
	char err[256];
	struct mkm_spec s;

	mkm_defaults(&s);
	s.dim = 52;
	s.heads = 2;
	s.kv_heads = 1;
	s.ffn = 100;
	s.vocab = 301;
	s.type = type;
	snprintf(path, n, "%s/%s", test_tmpdir(), name);
	if (mkm_write(&s, path, err, sizeof err)) {
		fprintf(stderr, "  mkm_write: %s\n", err);
		return -1;
	}
	return 0;
}

TEST(poison_catches_a_read_past_a_resident_tensor)
{
	char path[600], err[256];
	struct engine *e = calloc(1, sizeof *e);
	struct wt_layer l0;

	CHECK(e && odd_model("poison_res.gguf", GGML_TYPE_F32, path, sizeof path) == 0);
	host_remove_disks();
	CHECK_EQ_INT(host_add_disk(path), 0);
	engine_init(e);
	e->cfg.threads = 1;
	e->cfg.weights = ENGINE_WEIGHTS_RESIDENT;
	CHECK_EQ_INT(engine_load(e, 0, false, err, sizeof err), 0);
	CHECK_EQ_INT(wt_layer_acquire(&e->model.w, 0, &l0), 0);
	/* 52 floats, 208 bytes: the file pads it to 224 for the next tensor */
	const uint8_t *norm = (const uint8_t *)l0.attn_norm;
	CHECK(caught("attn_norm, float 52", (volatile uint8_t *)norm + 207,
		     (volatile uint8_t *)norm + 208, true));
	wt_layer_release(&e->model.w, 0);
	engine_unload(e);
	free(e);
	host_remove_disks();
}

/* The forward pass with every redzone in place, on shapes that leave
 * remainders to every SIMD loop: prompt batches and decode, resident and
 * streamed, each KV type. An overflow ends the test run with ASan's report. */
TEST(poison_forward_pass_of_odd_shapes_stays_in_bounds)
{
	static const uint32_t types[] = {GGML_TYPE_F32, GGML_TYPE_F16};
	static const uint32_t kvs[] = {GGML_TYPE_F16, GGML_TYPE_F32};
	char path[600], err[256];

	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
		CHECK(odd_model("poison_fwd.gguf", types[t], path, sizeof path) == 0);
		host_remove_disks();
		CHECK_EQ_INT(host_add_disk(path), 0);
		for (int mode = 0; mode < 2; mode++) {
			struct engine *e = calloc(1, sizeof *e);
			struct engine_gen g;
			CHECK(e != NULL);
			engine_init(e);
			e->cfg.threads = 2;
			e->cfg.n_batch = 3;
			e->cfg.kv_type = kvs[mode];
			e->cfg.weights = mode ? ENGINE_WEIGHTS_STREAM : ENGINE_WEIGHTS_RESIDENT;
			CHECK_EQ_INT(engine_load(e, 0, false, err, sizeof err), 0);
			engine_gen_init(e, &g);
			g.samp.temp = 0;
			g.n_predict = 5;
			if (engine_infer(e, "Once upon a time, a small fox", &g, err, sizeof err))
				fprintf(stderr, "  infer: %s\n", err);
			CHECK_EQ_INT(e->run.n_gen, 5);
			engine_unload(e);
			free(e);
		}
	}
	host_remove_disks();
}
#endif
